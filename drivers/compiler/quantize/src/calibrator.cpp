// SPDX-License-Identifier: MIT
// Activation statistics over the calibration set and the three range-selection methods
// (calibration.h). Histograms are laid out as onnxruntime's HistogramCollector.collect_value does;
// the entropy method is TensorRT's (pytorch-quantization calib/histogram.py) on the |x| view of
// them; MMSE is RKNN-Toolkit2's description (minimum mean squared error between the float values
// and their quantize-dequantize image), searched on the same histogram.
#include <algorithm>
#include <cmath>
#include <limits>

#include "compiler/quantize/calibration.h"
#include "compiler/ref/reference.h"

namespace drv::quant {

namespace {

bool is_float(const num::Tensor& t) { return t.dtype() == num::DType::F32; }

void update_minmax(TensorStats& s, const num::Tensor& t) {
    const float* x = t.data<float>();
    float lo = std::numeric_limits<float>::infinity(), hi = -lo;
    for (size_t i = 0; i < t.numel(); ++i) {
        if (std::isnan(x[i])) continue;  // nanmin / nanmax, as onnxruntime's collectors
        lo = std::min(lo, x[i]);
        hi = std::max(hi, x[i]);
    }
    if (lo > hi) lo = hi = 0;  // empty or all NaN
    s.min = s.count ? std::min(s.min, static_cast<double>(lo)) : lo;
    s.max = s.count ? std::max(s.max, static_cast<double>(hi)) : hi;
    s.count += t.numel();
}

void setup_histogram(TensorStats& s) {
    s.hist.assign(kHistogramBins, 0);
    if (s.min >= 0) {
        s.hist_lo = 0;
        s.hist_hi = s.max;
    } else {
        const double t = std::max(std::fabs(s.min), std::fabs(s.max));
        s.hist_lo = -t;
        s.hist_hi = t;
    }
}

void add_to_histogram(TensorStats& s, const num::Tensor& t) {
    const double w = (s.hist_hi - s.hist_lo) / kHistogramBins;
    const float* x = t.data<float>();
    if (!(w > 0)) {  // every value equal (zero range): one bin
        s.hist[0] += t.numel();
        return;
    }
    const double inv = 1.0 / w;
    for (size_t i = 0; i < t.numel(); ++i) {
        if (std::isnan(x[i])) continue;
        const double b = std::floor((static_cast<double>(x[i]) - s.hist_lo) * inv);
        s.hist[static_cast<size_t>(std::clamp(b, 0.0, static_cast<double>(kHistogramBins - 1)))] += 1;
    }
}

/// KL(P || Q) of normalised counts; +inf when Q is zero where P is not.
double kl_divergence(const std::vector<double>& p, const std::vector<double>& q, size_t n) {
    double sp = 0, sq = 0;
    for (size_t i = 0; i < n; ++i) sp += p[i], sq += q[i];
    if (!(sp > 0) || !(sq > 0)) return std::numeric_limits<double>::infinity();
    double d = 0;
    for (size_t i = 0; i < n; ++i) {
        if (p[i] <= 0) continue;
        if (q[i] <= 0) return std::numeric_limits<double>::infinity();
        const double a = p[i] / sp, b = q[i] / sq;
        d += a * std::log(a / b);
    }
    return d;
}

/// TensorRT's entropy calibration on a histogram of |x| (NVIDIA pytorch-quantization
/// calib/histogram.py, _compute_amax_entropy): the first bin is set to the second's count (a ReLU's
/// exact zeros would otherwise dominate), and for every candidate end bin i from kKlStartBin the
/// reference P = bins[0, i) with the counts beyond folded into its last bin is compared with Q =
/// bins[0, i) merged into `levels` equal-width levels, each level's count spread over its non-empty
/// bins. Returns the number of bins of the window with the smallest KL(P || Q) (the last of equal ones).
size_t entropy_bins(std::vector<double> bins, size_t levels) {
    constexpr size_t kKlStartBin = 128;
    const size_t n = bins.size();
    if (n < 2) return n;
    bins[0] = bins[1];
    std::vector<double> suffix(n + 1, 0.0);
    for (size_t i = n; i-- > 0;) suffix[i] = suffix[i + 1] + bins[i];
    std::vector<double> p(n), q(n), sums(levels), counts(levels);
    size_t best_i = n;
    double best = std::numeric_limits<double>::infinity();
    for (size_t i = std::min(kKlStartBin, n); i <= n; ++i) {
        std::fill(sums.begin(), sums.end(), 0.0);
        std::fill(counts.begin(), counts.end(), 0.0);
        for (size_t k = 0; k < i; ++k) {
            if (bins[k] == 0) continue;
            const size_t level = k * levels / i;  // np.digitize on linspace(0, i, levels + 1)
            sums[level] += bins[k];
            counts[level] += 1;
        }
        for (size_t k = 0; k < i; ++k) {
            p[k] = bins[k];
            q[k] = bins[k] == 0 ? 0.0 : sums[k * levels / i] / counts[k * levels / i];
        }
        p[i - 1] += suffix[i];
        const double d = kl_divergence(p, q, i);
        if (d <= best) best = d, best_i = i;
    }
    return best_i;
}

void kl_range(const TensorStats& s, const IntGrid& grid, double& lo, double& hi) {
    lo = s.min, hi = s.max;
    const size_t nb = s.hist.size();
    const double w = (s.hist_hi - s.hist_lo) / static_cast<double>(nb);
    if (!(w > 0)) return;
    if (s.hist_lo >= 0) {
        // Non-negative tensor: the histogram is already one of |x|; unsigned levels (2^bits).
        const size_t levels = size_t{1} << grid.bits;
        const size_t i = entropy_bins(std::vector<double>(s.hist.begin(), s.hist.end()), levels);
        hi = std::min(s.max, w * static_cast<double>(i));
        lo = 0;
        return;
    }
    // Signed: fold the [-t, t] histogram into |x| (bin k = [k w, (k + 1) w)), 2^(bits-1) levels per
    // side, amax -> [-amax, amax] clamped to the observed range.
    const size_t half = nb / 2;
    std::vector<double> mag(half);
    for (size_t k = 0; k < half; ++k)
        mag[k] = static_cast<double>(s.hist[half + k]) + static_cast<double>(s.hist[half - 1 - k]);
    const size_t levels = size_t{1} << (grid.bits - 1);
    const double amax = w * static_cast<double>(entropy_bins(mag, levels));
    lo = std::max(s.min, -amax);
    hi = std::min(s.max, amax);
}

void mmse_range(const TensorStats& s, const IntGrid& grid, double& lo, double& hi) {
    lo = s.min, hi = s.max;
    if (!(s.hist_hi > s.hist_lo)) return;
    constexpr int kSteps = 160;  // factors 1, 0.995, ..., 0.2
    auto factor = [](int k) { return 1.0 - 0.005 * k; };
    double best = histogram_mse(s, lo, hi, grid);
    double best_lo = lo, best_hi = hi;
    for (int k = 1; k <= kSteps; ++k) {  // both ends shrink together
        const double l = s.min * factor(k), h = s.max * factor(k);
        const double e = histogram_mse(s, l, h, grid);
        if (e < best) best = e, best_lo = l, best_hi = h;
    }
    if (s.min < 0 && s.max > 0) {  // signed: refine each end with the other fixed, twice
        for (int round = 0; round < 2; ++round) {
            for (int side = 0; side < 2; ++side) {
                const double base = side == 0 ? s.min : s.max;
                for (int k = 0; k <= kSteps; ++k) {
                    const double l = side == 0 ? base * factor(k) : best_lo;
                    const double h = side == 1 ? base * factor(k) : best_hi;
                    const double e = histogram_mse(s, l, h, grid);
                    if (e < best) best = e, best_lo = l, best_hi = h;
                }
            }
        }
    }
    lo = best_lo, hi = best_hi;
}

}  // namespace

double histogram_mse(const TensorStats& s, double lo, double hi, const IntGrid& grid) {
    const ScaleZp p = scale_zp(lo, hi, grid);
    const double w = (s.hist_hi - s.hist_lo) / static_cast<double>(s.hist.size());
    double err = 0, n = 0;
    for (size_t j = 0; j < s.hist.size(); ++j) {
        if (!s.hist[j]) continue;
        const float c = static_cast<float>(s.hist_lo + w * (static_cast<double>(j) + 0.5));
        const double dq = static_cast<double>(quantize_value(c, p, grid) - p.zero_point) * p.scale;
        const double d = dq - static_cast<double>(c);
        err += d * d * static_cast<double>(s.hist[j]);
        n += static_cast<double>(s.hist[j]);
    }
    return n > 0 ? err / n : 0.0;
}

void choose_range(const TensorStats& s, CalibrationMethod m, const IntGrid& grid, double& lo, double& hi) {
    lo = s.min, hi = s.max;
    if (m == CalibrationMethod::MinMax || s.hist.empty()) return;
    if (m == CalibrationMethod::Kl)
        kl_range(s, grid, lo, hi);
    else
        mmse_range(s, grid, lo, hi);
}

std::map<std::string, TensorStats> collect_stats(const ir::Graph& g, const CalibrationSet& cal,
                                                 const std::set<std::string>& tensors, bool histograms) {
    std::map<std::string, TensorStats> stats;
    for (const auto& sample : cal.samples)
        ref::execute(g, sample, [&](const std::string& name, const num::Tensor& t) {
            if (is_float(t) && tensors.count(name)) update_minmax(stats[name], t);
        });
    if (!histograms) return stats;
    for (auto& [name, s] : stats) setup_histogram(s);
    for (const auto& sample : cal.samples)
        ref::execute(g, sample, [&](const std::string& name, const num::Tensor& t) {
            auto it = stats.find(name);
            if (it != stats.end() && is_float(t)) add_to_histogram(it->second, t);
        });
    return stats;
}

}  // namespace drv::quant
