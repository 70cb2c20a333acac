// SPDX-License-Identifier: MIT
// Activation statistics over the calibration set and the three range-selection methods
// (calibration.h). The entropy method follows onnxruntime's HistogramCalibrater
// (calibrate.py: collect_value, get_entropy_threshold, smooth_distribution) with TensorRT's
// 2048-bin resolution; MMSE is RKNN-Toolkit2's description (minimum mean squared error between
// the float values and their quantize-dequantize image), searched on the same histogram.
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

/// onnxruntime's smooth_distribution (eps 1e-4): zero bins get eps, the mass is taken back evenly
/// from the non-zero bins. Returns false when every bin is zero.
bool smooth(std::vector<double>& p) {
    constexpr double kEps = 1e-4;
    size_t zeros = 0;
    for (double v : p) zeros += v == 0;
    if (zeros == p.size()) return false;
    const double eps1 = kEps * static_cast<double>(zeros) / static_cast<double>(p.size() - zeros);
    for (double& v : p) v = v == 0 ? kEps : v - eps1;
    return true;
}

/// scipy.stats.entropy(p, q): both normalised, sum p log(p / q).
double kl_divergence(const std::vector<double>& p, const std::vector<double>& q) {
    double sp = 0, sq = 0;
    for (size_t i = 0; i < p.size(); ++i) sp += p[i], sq += q[i];
    double d = 0;
    for (size_t i = 0; i < p.size(); ++i) {
        const double a = p[i] / sp, b = q[i] / sq;
        if (a > 0) d += a * std::log(a / b);
    }
    return d;
}

/// KL(P || Q) of the histogram window [start, end) quantized into `levels` bins: P is the window
/// with the counts outside it folded into its edge bins; Q merges the window (without them) into
/// `levels` bins (the last one also takes the remainder of len / levels) and spreads each merged
/// count evenly over the bins where P is non-zero.
double window_divergence(const std::vector<uint64_t>& hist, size_t start, size_t end, size_t levels) {
    const size_t len = end - start;
    std::vector<double> p(len), q(len, 0.0);
    for (size_t i = 0; i < len; ++i) p[i] = static_cast<double>(hist[start + i]);
    const std::vector<double> sliced = p;
    for (size_t i = 0; i < start; ++i) p.front() += static_cast<double>(hist[i]);
    for (size_t i = end; i < hist.size(); ++i) p.back() += static_cast<double>(hist[i]);
    const size_t merged = len / levels;
    for (size_t j = 0; j < levels; ++j) {
        const size_t b0 = j * merged, b1 = j + 1 == levels ? len : b0 + merged;
        double sum = 0;
        size_t nonzero = 0;
        for (size_t i = b0; i < b1; ++i) sum += sliced[i], nonzero += p[i] != 0;
        if (nonzero)
            for (size_t i = b0; i < b1; ++i) q[i] = p[i] != 0 ? sum / static_cast<double>(nonzero) : 0.0;
    }
    if (!smooth(p) || !smooth(q)) return std::numeric_limits<double>::infinity();
    return kl_divergence(p, q);
}

void kl_range(const TensorStats& s, const IntGrid& grid, double& lo, double& hi) {
    const size_t levels = static_cast<size_t>(grid.qmax() - grid.qmin() + 1);
    const size_t nb = s.hist.size();
    const double w = (s.hist_hi - s.hist_lo) / static_cast<double>(nb);
    auto edge = [&](size_t i) { return s.hist_lo + w * static_cast<double>(i); };
    lo = s.min, hi = s.max;
    if (!(w > 0) || levels >= nb) return;
    double best = std::numeric_limits<double>::infinity();
    if (s.hist_lo >= 0) {
        // One-sided windows [0, edge(i)) (TensorRT: histogram of |x| for a non-negative tensor).
        for (size_t i = levels; i <= nb; ++i) {
            const double d = window_divergence(s.hist, 0, i, levels);
            if (d < best) best = d, lo = 0, hi = edge(i);
        }
    } else {
        // Windows symmetric about the zero bin (onnxruntime get_entropy_threshold).
        const size_t zero = nb / 2, half = levels / 2;
        for (size_t i = half; i <= zero; ++i) {
            const size_t start = zero - i, end = std::min(zero + i + 1, nb);
            const double d = window_divergence(s.hist, start, end, levels);
            if (d < best) best = d, lo = edge(start), hi = edge(end);
        }
    }
    lo = std::max(lo, s.min);
    hi = std::min(hi, s.max);
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
