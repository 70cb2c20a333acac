// SPDX-License-Identifier: MIT
#include "numerics/requant.h"

#include <cfenv>
#include <cmath>
#include <cstdint>
#include <stdexcept>

namespace num {

double FixedScale::value() const { return std::ldexp(static_cast<double>(multiplier), -shift); }

FixedScale quantize_scale(double real, int bits, int max_shift) {
    if (!(real > 0.0) || !std::isfinite(real)) throw std::invalid_argument("quantize_scale: scale must be > 0");
    if (bits < 2 || bits > 31) throw std::invalid_argument("quantize_scale: bits must be in [2, 31]");
    // real = m * 2^e with m in [0.5, 1): multiplier = round(m * 2^bits), shift = bits - e.
    int e = 0;
    double m = std::frexp(real, &e);
    int64_t mult = std::llround(std::ldexp(m, bits));
    int shift = bits - e;
    if (mult == (int64_t{1} << bits)) {  // rounding carried into the next power of two
        mult >>= 1;
        --shift;
    }
    // Out-of-range shifts: trade multiplier precision for shift range.
    while (shift > max_shift && mult > 0) {
        mult = (mult + 1) >> 1;
        --shift;
    }
    while (shift < 0) {
        if (mult > (int64_t{1} << 30)) throw std::invalid_argument("quantize_scale: scale too large");
        mult <<= 1;
        ++shift;
    }
    if (mult >= (int64_t{1} << bits)) throw std::invalid_argument("quantize_scale: scale too large for multiplier width");
    return FixedScale{static_cast<int32_t>(mult), shift};
}

int64_t mul_shift(int64_t x, int32_t multiplier, int shift, Rounding r) { return mul_shift_wide(x, multiplier, shift, r); }

int64_t mul_shift_wide(int64_t x, int64_t multiplier, int shift, Rounding r) {
    // 128-bit product: wide accumulators (16-bit data x 20-bit weights, ~2^52) times a 31-bit
    // multiplier need up to 84 bits. The result is saturated to int64 (callers saturate further).
    __extension__ typedef __int128 i128;  // GCC/Clang builtin; -Wpedantic wants the marker
    const i128 p = static_cast<i128>(x) * static_cast<i128>(multiplier);
    auto clamp64 = [](i128 v) {
        const i128 hi = static_cast<i128>(INT64_MAX), lo = static_cast<i128>(INT64_MIN);
        return static_cast<int64_t>(v > hi ? hi : (v < lo ? lo : v));
    };
    if (shift <= 0) return clamp64(p * (static_cast<i128>(1) << (-shift)));
    const i128 one = 1;
    const i128 floor_q = p >> shift;  // arithmetic shift: floor division
    const i128 rem = p - floor_q * (one << shift);  // in [0, 2^shift)
    const i128 half = one << (shift - 1);
    switch (r) {
        case Rounding::Truncate: return clamp64(floor_q);
        case Rounding::HalfUp: return clamp64(floor_q + (rem >= half ? 1 : 0));
        case Rounding::HalfAwayFromZero:
            if (rem > half) return clamp64(floor_q + 1);
            if (rem < half) return clamp64(floor_q);
            return clamp64(p >= 0 ? floor_q + 1 : floor_q);
        case Rounding::HalfToEven:
            if (rem > half) return clamp64(floor_q + 1);
            if (rem < half) return clamp64(floor_q);
            return clamp64((floor_q & 1) ? floor_q + 1 : floor_q);
    }
    return clamp64(floor_q);
}

int64_t round_half_even(double x) {
    // std::nearbyint honours the current rounding mode; force the default one locally.
    const int old = std::fegetround();
    std::fesetround(FE_TONEAREST);
    const double r = std::nearbyint(x);
    std::fesetround(old);
    return static_cast<int64_t>(r);
}

int8_t quantize_real_i8(double x_over_scale, int32_t zero_point) {
    if (std::isnan(x_over_scale)) return saturate_i8(zero_point);
    const double clamped = x_over_scale > 1e6 ? 1e6 : (x_over_scale < -1e6 ? -1e6 : x_over_scale);
    return saturate_i8(round_half_even(clamped) + zero_point);
}

int8_t quantize_linear_i8(float x, float scale, int32_t zero_point) {
    // onnxruntime computes x / scale in float.
    return quantize_real_i8(static_cast<double>(x / scale), zero_point);
}

}  // namespace num
