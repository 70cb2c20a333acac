// SPDX-License-Identifier: MIT
// Output requantization shared by the 8-bit ops, matching onnxruntime's CPU kernels (MLAS
// "requantize output"): the int32 accumulator plus bias is converted to float, multiplied by the
// float scale (computed in float as in_scale * w_scale / out_scale), clamped to the output range
// relative to the zero point, rounded half to even, then the zero point is added.
#pragma once
#include <algorithm>
#include <cstdint>
#include <limits>

#include "op_common.h"

namespace num::ops {

/// Round half to even for |v| < 2^22 in the default FP environment (adding 1.5*2^23 leaves no
/// fraction bits, so the FPU's round-to-nearest-even does the rounding).
inline float rne_small(float v) {
    constexpr float kMagic = 12582912.0f;  // 1.5 * 2^23
    volatile float t = v + kMagic;         // volatile: keep the two-step rounding under -ffast-math
    return t - kMagic;
}

template <typename T>
inline T requant_one(int32_t acc, float scale, int32_t zp) {
    const float lo = static_cast<float>(std::numeric_limits<T>::min() - zp);
    const float hi = static_cast<float>(std::numeric_limits<T>::max() - zp);
    float v = static_cast<float>(acc) * scale;
    v = std::min(std::max(v, lo), hi);
    return static_cast<T>(static_cast<int32_t>(rne_small(v)) + zp);
}

/// out[i] = requant(acc[i] + bias, scale, zp) for a row of n values.
template <typename T>
inline __attribute__((always_inline)) void requant_row(const int32_t* acc, int64_t n, int32_t bias, float scale, int32_t zp, T* out) {
    const float lo = static_cast<float>(std::numeric_limits<T>::min() - zp);
    const float hi = static_cast<float>(std::numeric_limits<T>::max() - zp);
    constexpr float kMagic = 12582912.0f;
    for (int64_t i = 0; i < n; ++i) {
        float v = static_cast<float>(acc[i] + bias) * scale;
        v = v < lo ? lo : v;  // compare-select form: vectorises to max/min
        v = v > hi ? hi : v;
        out[i] = static_cast<T>(static_cast<int32_t>((v + kMagic) - kMagic) + zp);
    }
}

/// Quantize a float to T the onnxruntime QuantizeLinear way: x / scale (float), RNE, + zp, saturate.
template <typename T>
inline T quantize_one(float x, float scale, int32_t zp) {
    const float lo = static_cast<float>(std::numeric_limits<T>::min() - zp);
    const float hi = static_cast<float>(std::numeric_limits<T>::max() - zp);
    float v = x / scale;
    if (v != v) v = 0.0f;  // NaN -> zero point
    v = std::min(std::max(v, lo), hi);
    return static_cast<T>(static_cast<int32_t>(rne_small(v)) + zp);
}

/// The integer grid of quantized data: the container's range, narrowed by the optional `_qbits`
/// attribute (numerics README: 4-bit data in an 8-bit container, 12/14-bit data in a 16-bit one,
/// as the tnpuv2 toolchain quantizes them; seed 003).
struct QRange {
    int32_t lo = 0, hi = 0;
};
template <typename T>
inline QRange qrange(int64_t qbits) {
    constexpr int cbits = static_cast<int>(sizeof(T) * 8);
    const int b = qbits > 0 && qbits < cbits ? static_cast<int>(qbits) : cbits;
    if (std::numeric_limits<T>::is_signed) return {-(int32_t{1} << (b - 1)), (int32_t{1} << (b - 1)) - 1};
    return {0, static_cast<int32_t>((int64_t{1} << b) - 1)};
}
/// The `_qbits` attribute (0 = the container's full width); OpError unless it is in [2, 16].
int64_t qbits_attr(const Attributes& a, const std::string& op);

/// quantize_one / requant_one saturating to the grid `r` instead of T's full range.
template <typename T>
inline T quantize_in(float x, float scale, int32_t zp, QRange r) {
    const float lo = static_cast<float>(r.lo - zp);
    const float hi = static_cast<float>(r.hi - zp);
    float v = x / scale;
    if (v != v) v = 0.0f;
    v = std::min(std::max(v, lo), hi);
    return static_cast<T>(static_cast<int32_t>(rne_small(v)) + zp);
}
/// quantize_in over a row with one scale and zero point, in the compare-select form that
/// vectorises (as requant_row): the same result element for element (NaN -> 0 before the clamp,
/// the clamp before the RNE, whose magic-constant pair needs |v| < 2^22, which the clamp ensures).
template <typename T>
inline void quantize_row(const float* x, size_t n, float scale, int32_t zp, QRange r, T* y) {
    const float lo = static_cast<float>(r.lo - zp);
    const float hi = static_cast<float>(r.hi - zp);
    constexpr float kMagic = 12582912.0f;
    for (size_t i = 0; i < n; ++i) {
        float v = x[i] / scale;
        v = v == v ? v : 0.0f;
        v = v < lo ? lo : v;
        v = v > hi ? hi : v;
        y[i] = static_cast<T>(static_cast<int32_t>((v + kMagic) - kMagic) + zp);
    }
}
template <typename T>
inline T requant_in(int32_t acc, float scale, int32_t zp, QRange r) {
    const float lo = static_cast<float>(r.lo - zp);
    const float hi = static_cast<float>(r.hi - zp);
    float v = static_cast<float>(acc) * scale;
    v = std::min(std::max(v, lo), hi);
    return static_cast<T>(static_cast<int32_t>(rne_small(v)) + zp);
}

/// Calls f.template operator()<T>() with T = int8_t, uint8_t, int16_t or uint16_t per d.
template <typename F>
auto dispatch_q16(DType d, const std::string& op, F&& f) {
    if (d == DType::I8) return f(int8_t{});
    if (d == DType::U8) return f(uint8_t{});
    if (d == DType::I16) return f(int16_t{});
    if (d == DType::U16) return f(uint16_t{});
    fail(op, std::string("expected int8/uint8/int16/uint16 data, got ") + dtype_name(d));
}

/// Calls f.template operator()<T>() with T = int8_t or uint8_t per d.
template <typename F>
auto dispatch_q8(DType d, const std::string& op, F&& f) {
    if (d == DType::I8) return f(int8_t{});
    if (d == DType::U8) return f(uint8_t{});
    fail(op, std::string("expected int8/uint8 data, got ") + dtype_name(d));
}

}  // namespace num::ops

namespace num::ops {

/// DynamicQuantizeLinear parameters for uint8 (onnxruntime): range widened to include 0,
/// scale = (max - min) / 255, zero point = saturate(RNE(0 - min / scale)).
void dynamic_quant_params(const float* x, size_t n, float& scale, uint8_t& zp);

}  // namespace num::ops
