// SPDX-License-Identifier: MIT
// TFLite's integer arithmetic (the TFLite quantization specification and its reference kernels,
// tensorflow/tensorflow tensorflow/lite/kernels/internal/common.h and quantization_util.cc): a real
// multiplier as a Q31 value and a power-of-two exponent, applied with two roundings
// (SaturatingRoundingDoublingHighMul, then RoundingDivideByPOT, both round half away from zero).
// It differs from onnxruntime's float requantization (round half to even in float); the reference
// executor picks one or the other by the model's origin (domain "tflite" vs ONNX). The MCU kernels
// (kernels/include/mk/mk_common.h, mk_tfl_mbqm) implement the same functions in C.
#pragma once
#include <algorithm>
#include <cmath>
#include <string>
#include <cstdint>
#include <limits>

namespace num::tfl {

/// A real multiplier as TFLite stores it: real = multiplier * 2^(shift - 31), multiplier in
/// [2^30, 2^31) (0 for real == 0), shift an exponent (positive = left shift).
struct QuantizedMultiplier {
    int32_t multiplier = 0;
    int shift = 0;
};

/// TFLite QuantizeMultiplier: frexp, Q31 rounding half away from zero, the 2^31 carry, and
/// flushing exponents below -31 to zero. Shifts above 30 are clamped with the saturated multiplier.
inline QuantizedMultiplier quantize_multiplier(double real) {
    QuantizedMultiplier q;
    if (real == 0.0 || !std::isfinite(real)) return q;
    int e = 0;
    const double f = std::frexp(real, &e);
    int64_t m = static_cast<int64_t>(std::round(f * static_cast<double>(int64_t{1} << 31)));
    if (m == (int64_t{1} << 31)) {
        m /= 2;
        ++e;
    }
    if (e < -31) return q;
    if (e > 30) {
        e = 30;
        m = (int64_t{1} << 31) - 1;
    }
    q.multiplier = static_cast<int32_t>(m);
    q.shift = e;
    return q;
}

/// gemmlowp SaturatingRoundingDoublingHighMul: (a * b * 2 + 2^31 rounded half away) >> 32.
inline int32_t srdhm(int32_t a, int32_t b) {
    if (a == b && a == std::numeric_limits<int32_t>::min()) return std::numeric_limits<int32_t>::max();
    const int64_t ab = static_cast<int64_t>(a) * static_cast<int64_t>(b);
    const int64_t nudge = ab >= 0 ? (int64_t{1} << 30) : (1 - (int64_t{1} << 30));
    return static_cast<int32_t>((ab + nudge) / (int64_t{1} << 31));  // C++ division truncates toward 0
}

/// gemmlowp RoundingDivideByPOT: x / 2^exponent rounded half away from zero.
inline int32_t rounding_divide_by_pot(int32_t x, int exponent) {
    const int32_t mask = static_cast<int32_t>((int64_t{1} << exponent) - 1);
    const int32_t remainder = x & mask;
    const int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
    return (x >> exponent) + (remainder > threshold ? 1 : 0);
}

/// TFLite MultiplyByQuantizedMultiplier (double rounding, the default build).
inline int32_t multiply_by_quantized_multiplier(int32_t x, QuantizedMultiplier q) {
    const int left = q.shift > 0 ? q.shift : 0, right = q.shift > 0 ? 0 : -q.shift;
    const int64_t shifted = static_cast<int64_t>(x) * (int64_t{1} << left);
    const int32_t xs = static_cast<int32_t>(
        shifted > INT32_MAX ? INT32_MAX : (shifted < INT32_MIN ? INT32_MIN : shifted));
    return rounding_divide_by_pot(srdhm(xs, q.multiplier), right);
}

/// TfLiteRound: std::round (half away from zero).
inline int32_t round_away(float x) { return static_cast<int32_t>(std::round(x)); }

/// CalculateActivationRangeQuantized: the code range [lo, hi] (the type's range on entry) narrowed
/// by a fused activation ("NONE", "RELU", "RELU6", "RELU_N1_TO_1") as zero_point + TfLiteRound(bound
/// / scale). Returns false for an activation TFLite cannot fuse into integer kernels (TANH, ...).
inline bool activation_range(const std::string& act, float scale, int32_t zp, int32_t& lo, int32_t& hi) {
    auto q = [&](float f) { return zp + round_away(f / scale); };
    if (act == "NONE") return true;
    if (act == "RELU") lo = std::max(lo, q(0.0f));
    else if (act == "RELU6") lo = std::max(lo, q(0.0f)), hi = std::min(hi, q(6.0f));
    else if (act == "RELU_N1_TO_1") lo = std::max(lo, q(-1.0f)), hi = std::min(hi, q(1.0f));
    else return false;
    return true;
}

/// TFLite ComputePaddingHeightWidth for one axis (SAME: out = ceil(in / stride), the total padding
/// split with the odd element at the end; VALID: no padding). False for other padding names or
/// non-positive sizes.
inline bool padding_1d(const std::string& padding, int64_t in, int64_t k, int64_t stride, int64_t dil, int64_t& out,
                       int64_t& before) {
    if (stride < 1 || dil < 1 || k < 1 || in < 0) return false;
    const int64_t eff = (k - 1) * dil + 1;
    if (padding == "SAME") out = (in + stride - 1) / stride;
    else if (padding == "VALID") out = in >= eff ? (in - eff + stride) / stride : 0;
    else return false;
    const int64_t total = std::max<int64_t>((out - 1) * stride + eff - in, 0);
    before = padding == "SAME" ? total / 2 : 0;
    return true;
}

}  // namespace num::tfl
