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

/// (x * multiplier) >> shift with the given rounding; the product is formed in 128 bits, the
/// result saturated to int64.
int64_t mul_shift(int64_t x, int32_t multiplier, int shift, Rounding r);
/// Same with a multiplier of up to 62 bits (wide requantization).
int64_t mul_shift_wide(int64_t x, int64_t multiplier, int shift, Rounding r);

/// The integer grid of `bits`-bit data: [-2^(bits-1), 2^(bits-1) - 1] signed, [0, 2^bits - 1]
/// unsigned (4-bit data in an 8-bit container, 12/14-bit in a 16-bit one, 20-bit weights).
struct IntRange {
    int64_t lo = 0, hi = 0;
};
inline IntRange int_range(int bits, bool is_signed) {
    if (is_signed) return {-(int64_t{1} << (bits - 1)), (int64_t{1} << (bits - 1)) - 1};
    return {0, (int64_t{1} << bits) - 1};
}

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
