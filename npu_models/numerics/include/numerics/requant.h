// SPDX-License-Identifier: MIT
// Integer requantization exactly as hardware and MCU kernels do it, and the QuantizeLinear
// semantics of onnxruntime (seed 002: round half to even, saturate) they are judged against.
#pragma once
#include <cstdint>

namespace num {

/// A real scale in (0, 2^15) expressed as multiplier * 2^-shift with a `bits`-bit unsigned
/// multiplier (hardware OUT_CVT_SCALE is 16 bits; MCU kernels use 31-bit Q31 multipliers).
struct FixedScale {
    int32_t multiplier = 0;
    int shift = 0;  ///< right shift, >= 0
    double value() const;
};

/// Best multiplier/shift pair for `real` with a `bits`-bit multiplier (normalised so the top
/// bit of the multiplier is set) and shift clamped to [0, max_shift].
FixedScale quantize_scale(double real, int bits, int max_shift);

/// Rounding of an arithmetic right shift.
enum class Rounding { HalfUp, HalfAwayFromZero, HalfToEven, Truncate };

/// (x * multiplier) >> shift with the given rounding, in 64-bit, no saturation.
int64_t mul_shift(int64_t x, int32_t multiplier, int shift, Rounding r);

/// Round half to even (ONNX QuantizeLinear, std::nearbyint under FE_TONEAREST).
int64_t round_half_even(double x);

/// Saturate to [lo, hi].
inline int64_t saturate(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : (v > hi ? hi : v); }
inline int8_t saturate_i8(int64_t v) { return static_cast<int8_t>(saturate(v, -128, 127)); }
inline uint8_t saturate_u8(int64_t v) { return static_cast<uint8_t>(saturate(v, 0, 255)); }

/// ONNX QuantizeLinear to int8: saturate(round_half_even(x / scale) + zero_point).
int8_t quantize_linear_i8(float x, float scale, int32_t zero_point);
/// Same, with x already divided: the value the integer pipeline approximates.
int8_t quantize_real_i8(double x_over_scale, int32_t zero_point);

}  // namespace num
