// SPDX-License-Identifier: MIT
// Scale / zero-point arithmetic (scheme.h), following onnxruntime's quant_utils.py.
#include "compiler/quantize/scheme.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace drv::quant {

namespace {

/// Round half to even in double (numpy.round, which onnxruntime uses for zero points and biases).
double rne(double x) { return std::nearbyint(x); }  // default FE_TONEAREST: ties to even

int64_t element_count(const num::Tensor& t) { return static_cast<int64_t>(t.numel()); }

}  // namespace

int64_t IntGrid::qmin() const {
    if (!is_signed) return 0;
    const int64_t lo = -(int64_t{1} << (bits - 1));
    return symmetric ? lo + 1 : lo;
}

int64_t IntGrid::qmax() const { return is_signed ? (int64_t{1} << (bits - 1)) - 1 : (int64_t{1} << bits) - 1; }

std::string IntGrid::name() const {
    std::string s = symmetric ? "symmetric " : "asymmetric ";
    s += is_signed ? "int" : "uint";
    s += std::to_string(bits);
    if (bits != 8) s += is_signed ? " (in int8)" : " (in uint8)";
    return s;
}

std::string Scheme::name() const {
    const bool rknn8 = activations.bits == 8 && activations.is_signed && !activations.symmetric;
    const bool u8 = activations.bits == 8 && !activations.is_signed && !activations.symmetric;
    std::string s = rknn8 ? "asymmetric_quantized-8" : u8 ? "asymmetric_quantized-u8" : "custom";
    s += " (" + activations.name() + " activations per tensor, " + weights.name() + " weights " +
         (per_channel_weights ? "per channel" : "per tensor") + ", int32 bias)";
    return s;
}

bool parse_scheme(const std::string& name, Scheme& out) {
    Scheme s;
    if (name == "asymmetric_quantized-8") {
        s.activations = {8, true, false};
    } else if (name == "asymmetric_quantized-u8") {
        s.activations = {8, false, false};
    } else {
        return false;
    }
    out = s;
    return true;
}

std::string scheme_names() { return "asymmetric_quantized-8, asymmetric_quantized-u8"; }

ScaleZp scale_zp(double rmin, double rmax, const IntGrid& grid) {
    rmin = std::min(rmin, 0.0);
    rmax = std::max(rmax, 0.0);
    if (grid.symmetric) {
        const double a = std::max(std::fabs(rmin), std::fabs(rmax));
        rmin = -a;
        rmax = a;
    }
    const double qmin = static_cast<double>(grid.qmin()), qmax = static_cast<double>(grid.qmax());
    const double scale = (rmax - rmin) / (qmax - qmin);
    ScaleZp p;
    if (!(scale >= static_cast<double>(FLT_MIN))) return p;  // also NaN: scale 1, zero point 0
    if (grid.symmetric)
        p.zero_point = static_cast<int32_t>(rne((qmin + qmax) / 2.0));
    else
        p.zero_point = static_cast<int32_t>(std::clamp(rne(qmin - rmin / scale), qmin, qmax));
    p.scale = static_cast<float>(scale);
    return p;
}

void covered_range(const ScaleZp& p, const IntGrid& grid, double& lo, double& hi) {
    lo = static_cast<double>(p.scale) * static_cast<double>(grid.qmin() - p.zero_point);
    hi = static_cast<double>(p.scale) * static_cast<double>(grid.qmax() - p.zero_point);
}

int32_t quantize_value(float x, const ScaleZp& p, const IntGrid& grid) {
    const float r = std::nearbyint(x / p.scale);  // float division, ties to even (ONNX QuantizeLinear)
    const double q = static_cast<double>(r) + p.zero_point;
    return static_cast<int32_t>(std::clamp(q, static_cast<double>(grid.qmin()), static_cast<double>(grid.qmax())));
}

num::Tensor quantize_weight(const num::Tensor& w, const IntGrid& grid, bool per_channel, int axis,
                            std::vector<float>& scales, std::vector<int32_t>& zero_points) {
    if (w.dtype() != num::DType::F32) throw std::invalid_argument("quantize_weight: weights are not float32");
    if (per_channel && (axis < 0 || axis >= w.rank()))
        throw std::invalid_argument("quantize_weight: channel axis " + std::to_string(axis) + " outside rank " +
                                    std::to_string(w.rank()));
    const int64_t channels = per_channel ? w.dim(axis) : 1;
    int64_t inner = 1;
    if (per_channel)
        for (int d = axis + 1; d < w.rank(); ++d) inner *= w.dim(d);
    const float* x = w.data<float>();
    const int64_t n = element_count(w);
    auto channel_of = [&](int64_t i) { return per_channel ? (i / inner) % channels : 0; };
    std::vector<double> lo(static_cast<size_t>(channels), 0.0), hi(static_cast<size_t>(channels), 0.0);
    for (int64_t i = 0; i < n; ++i) {
        const size_t c = static_cast<size_t>(channel_of(i));
        lo[c] = std::min(lo[c], static_cast<double>(x[i]));
        hi[c] = std::max(hi[c], static_cast<double>(x[i]));
    }
    std::vector<ScaleZp> p(static_cast<size_t>(channels));
    scales.assign(static_cast<size_t>(channels), 1.0f);
    zero_points.assign(static_cast<size_t>(channels), 0);
    for (size_t c = 0; c < p.size(); ++c) {
        p[c] = scale_zp(lo[c], hi[c], grid);
        scales[c] = p[c].scale;
        zero_points[c] = p[c].zero_point;
    }
    num::Tensor q(grid.dtype(), w.shape());
    for (int64_t i = 0; i < n; ++i) {
        const int32_t v = quantize_value(x[i], p[static_cast<size_t>(channel_of(i))], grid);
        if (grid.is_signed)
            q.data<int8_t>()[i] = static_cast<int8_t>(v);
        else
            q.data<uint8_t>()[i] = static_cast<uint8_t>(v);
    }
    return q;
}

num::Tensor quantize_bias(const num::Tensor& b, float input_scale, const std::vector<float>& w_scales,
                          std::vector<float>& scales) {
    if (b.dtype() != num::DType::F32) throw std::invalid_argument("quantize_bias: bias is not float32");
    const int64_t n = element_count(b);
    if (w_scales.size() != 1 && static_cast<int64_t>(w_scales.size()) != n)
        throw std::invalid_argument("quantize_bias: " + std::to_string(w_scales.size()) +
                                    " weight scales for a bias of " + std::to_string(n));
    scales.resize(w_scales.size());
    for (size_t c = 0; c < w_scales.size(); ++c) scales[c] = input_scale * w_scales[c];  // float32 product
    num::Tensor q(num::DType::I32, b.shape());
    constexpr double kLo = std::numeric_limits<int32_t>::min(), kHi = std::numeric_limits<int32_t>::max();
    for (int64_t i = 0; i < n; ++i) {
        const double s = scales[scales.size() == 1 ? 0 : static_cast<size_t>(i)];
        const double v = rne(static_cast<double>(b.data<float>()[i]) / s);
        q.data<int32_t>()[i] = static_cast<int32_t>(std::clamp(std::isfinite(v) ? v : 0.0, kLo, kHi));
    }
    return q;
}

}  // namespace drv::quant
