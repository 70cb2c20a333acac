/* SPDX-License-Identifier: MIT */
/* Common types of the MCU kernel library (C99, RV32IMFC-friendly, host-buildable): NHWC shapes,
 * fixed-point requantization and the activation clamp shared by the int8 kernels.
 *
 * Requantization contract (documented once, tested in tests/unit/kernels/requant_test.cpp):
 *   real scale s  ==  multiplier * 2^-(31 + shift),  multiplier in [2^30, 2^31), shift in [-31, 30]
 *   requant(acc)  ==  (acc * multiplier + 2^(30 + shift)) >> (31 + shift)   (64-bit product,
 *                     arithmetic shift: rounding half toward +infinity, "half up")
 * onnxruntime's QLinearConv/QLinearMatMul instead round acc * float(s) half-to-even in float; the two
 * differ by at most 1 LSB (ties, and float's 24-bit mantissa vs our 31-bit multiplier). */
#ifndef MK_COMMON_H
#define MK_COMMON_H
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Hot kernels execute from SRAM on MCUs whose code runs from flash through wait states (ws63 XIP):
 * the firmware build for such a board defines MK_HOT_IN_RAM, which places these functions in .data,
 * copied from flash to SRAM by the C start-up code like any initialised data. */
#if defined(MK_HOT_IN_RAM)
#define MK_HOT __attribute__((section(".data.mk_hot")))
#else
#define MK_HOT
#endif

/** An NHWC activation shape (rank < 4 tensors use leading 1s). */
typedef struct {
    int32_t n, h, w, c;
} mk_shape4;

static inline int32_t mk_shape4_numel(mk_shape4 s) { return s.n * s.h * s.w * s.c; }

/** A Q31 multiplier and right shift (see the contract above). */
typedef struct {
    int32_t multiplier;
    int32_t shift;
} mk_qscale;

/** Converts a positive real scale to multiplier/shift; a scale <= 0 or too small gives {0, 0}
 * (requant then returns 0). Host/converter side; needs no libm. */
mk_qscale mk_quantize_scale(double real_scale);

/** Fixed-point requantization of an int32 accumulator (no zero point, no saturation). For the usual
 * case 31 + shift >= 32 (scale < 1) only the high word of the 64-bit product is shifted: on RV32
 * that is `mul` + `mulh` + a few ALU ops instead of a generic variable 64-bit shift. The result is
 * identical to the contract's formula (the rounding constant has a zero low word, and the low word
 * of the product cannot carry into the floor of the quotient). */
static inline int32_t mk_requant(int32_t acc, int32_t multiplier, int32_t shift) {
    const int rs = 31 + shift;
    const int64_t prod = (int64_t)acc * (int64_t)multiplier;
    if (rs > 32) {
        const int32_t hi = (int32_t)(prod >> 32) + (int32_t)(1u << (rs - 33));
        return hi >> (rs - 32);
    }
    if (rs == 32) {
        const uint32_t lo = (uint32_t)prod, sum = lo + 0x80000000u;
        return (int32_t)(prod >> 32) + (sum < lo ? 1 : 0);
    }
    return (int32_t)((prod + ((int64_t)1 << (rs - 1))) >> rs);
}

static inline int32_t mk_clamp_i32(int32_t v, int32_t lo, int32_t hi) { return v < lo ? lo : (v > hi ? hi : v); }

/** Float requantization, bit-identical to onnxruntime's QLinearConv/QGemm/QLinearMatMul on any
 * IEEE-754 single FPU (RV32F, SSE): v = float(acc) * scale, clamped to the int8 range less the zero
 * point, rounded half to even by the 1.5 * 2^23 trick, plus the zero point. `scale` must be computed
 * by the converter with the same float expression as the reference (e.g. x_scale * w_scale / y_scale).
 * Needs -ffp-contract=off (no fused multiply-add). */
static inline int32_t mk_requant_float(int32_t acc, float scale, int32_t zp) {
    const float lo = (float)(-128 - zp), hi = (float)(127 - zp);
    float v = (float)acc * scale;
    v = v < lo ? lo : v;
    v = v > hi ? hi : v;
    return (int32_t)((v + 12582912.0f) - 12582912.0f) + zp;
}

/** TFLite MultiplyByQuantizedMultiplier (numerics/tflite_quant.h, the TFLite quantization spec):
 * real = multiplier * 2^(shift - 31) with shift an exponent (> 0: left shift first, saturating),
 * then gemmlowp SaturatingRoundingDoublingHighMul and RoundingDivideByPOT, both rounding half away
 * from zero. Used for models that come from TFLite; the other paths above are onnxruntime's. */
static inline int32_t mk_tfl_mbqm(int32_t x, int32_t multiplier, int32_t shift) {
    const int32_t left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
    int64_t xs = (int64_t)x * ((int64_t)1 << left);
    xs = xs > 2147483647 ? 2147483647 : (xs < -2147483647 - 1 ? -2147483647 - 1 : xs);
    int32_t hi;
    if (xs == -2147483647 - 1 && multiplier == -2147483647 - 1) {
        hi = 2147483647;
    } else {
        const int64_t ab = xs * (int64_t)multiplier;
        const int64_t nudge = ab >= 0 ? ((int64_t)1 << 30) : (1 - ((int64_t)1 << 30));
        /* (ab + nudge) / 2^31 truncating toward zero, as shifts (a 64-bit division is a libgcc call on RV32) */
        const int64_t v = ab + nudge;
        hi = (int32_t)(v >= 0 ? (v >> 31) : -((-v) >> 31));
    }
    const int32_t mask = (int32_t)(((int64_t)1 << right) - 1);
    const int32_t rem = hi & mask, threshold = (mask >> 1) + (hi < 0 ? 1 : 0);
    return (hi >> right) + (rem > threshold ? 1 : 0);
}

/** Round half away from zero of a float (TfLiteRound, std::round); no libm. */
static inline float mk_round_away(float x) {
    if (!(x < 8388608.0f && x > -8388608.0f)) return x; /* integral already, or NaN */
    const float t = (float)(int32_t)x;                 /* truncation toward zero */
    const float d = x - t;                             /* exact for |x| < 2^23 */
    return d >= 0.5f ? t + 1.0f : (d <= -0.5f ? t - 1.0f : t);
}

/** Fused activation in the quantized domain: the clamp [act_min, act_max] of the output. */
typedef enum { MK_ACT_NONE = 0, MK_ACT_RELU = 1, MK_ACT_RELU6 = 2 } mk_act;

/** int8 output range for a fused activation given the output scale and zero point. */
void mk_act_range_s8(mk_act act, float out_scale, int32_t out_zp, int32_t* act_min, int32_t* act_max);

/** Round half to even of a float (ONNX QuantizeLinear rounding); no libm. */
static inline float mk_round_half_even(float x) {
    const float two23 = 8388608.0f;
    if (!(x < two23 && x > -two23)) return x; /* already integral, or NaN */
    float r = x >= 0.0f ? (x + two23) - two23 : (x - two23) + two23; /* IEEE round-to-nearest-even */
    return r;
}

#ifdef __cplusplus
}
#endif
#endif
