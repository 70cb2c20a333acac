/* SPDX-License-Identifier: MIT */
/* int8 element-wise Add/Sub/Mul with NHWC broadcasting, and the per-element int8 kernels. */
#include "mk/mk_int8.h"

/* Add/Sub keep everything in 32 bits: |a - za| <= 255 and |ratio * 2^left| < 2^22, so the sum of
 * both products stays below 2^31. `left` is the largest shift (<= 30) that satisfies this. */
void mk_add_s8_prepare(float sa, int32_t za, float sb, int32_t zb, float so, int32_t zo, int sign,
                       mk_eltwise_s8_params* p) {
    const double ra = (double)sa / (double)so, rb = (double)sb / (double)so;
    const double rmax = ra > rb ? ra : rb;
    int left = 0;
    while (left < 30 && rmax * (double)(1 << (left + 1)) < 4194304.0) ++left;
    const double scale = (double)(1 << left);
    p->a_zp = za;
    p->b_zp = zb;
    p->out_zp = zo;
    p->a_mult = (int32_t)(ra * scale + 0.5);
    p->b_mult = (int32_t)(rb * scale + 0.5) * (sign < 0 ? -1 : 1);
    p->left = left;
    p->out.multiplier = 0;
    p->out.shift = 0;
    p->act_min = -128;
    p->act_max = 127;
    p->tfl = 0; /* onnxruntime-style parameters (the TFLite ones are set by the converter) */
    p->sub = 0;
    p->ta.multiplier = p->ta.shift = p->tb.multiplier = p->tb.shift = 0;
}

static inline int32_t add_one(int32_t a, int32_t b, const mk_eltwise_s8_params* p) {
    if (p->tfl) {
        const int32_t s1 = mk_tfl_mbqm((a - p->a_zp) * (1 << 20), p->ta.multiplier, p->ta.shift);
        const int32_t s2 = mk_tfl_mbqm((b - p->b_zp) * (1 << 20), p->tb.multiplier, p->tb.shift);
        const int32_t r = mk_tfl_mbqm(p->sub ? s1 - s2 : s1 + s2, p->out.multiplier, p->out.shift);
        return mk_clamp_i32(r + p->out_zp, p->act_min, p->act_max);
    }
    const int32_t s = (a - p->a_zp) * p->a_mult + (b - p->b_zp) * p->b_mult;
    const int32_t r = p->left > 0 ? ((s + (1 << (p->left - 1))) >> p->left) : s;
    return mk_clamp_i32(r + p->out_zp, p->act_min, p->act_max);
}

static inline int32_t mul_one(int32_t a, int32_t b, const mk_eltwise_s8_params* p) {
    const int32_t prod = (a - p->a_zp) * (b - p->b_zp);
    const int32_t r = p->tfl ? mk_tfl_mbqm(prod, p->out.multiplier, p->out.shift) : mk_requant(prod, p->out.multiplier, p->out.shift);
    return mk_clamp_i32(r + p->out_zp, p->act_min, p->act_max);
}

#define MK_BCAST_LOOP(EXPR)                                                                   \
    do {                                                                                      \
        const mk_shape4 s = bc->out;                                                          \
        int32_t oi = 0;                                                                       \
        for (int32_t i0 = 0; i0 < s.n; ++i0)                                                  \
            for (int32_t i1 = 0; i1 < s.h; ++i1)                                              \
                for (int32_t i2 = 0; i2 < s.w; ++i2) {                                        \
                    const int32_t ab = i0 * bc->a_stride[0] + i1 * bc->a_stride[1] + i2 * bc->a_stride[2]; \
                    const int32_t bb = i0 * bc->b_stride[0] + i1 * bc->b_stride[1] + i2 * bc->b_stride[2]; \
                    const int32_t as = bc->a_stride[3], bs = bc->b_stride[3];                 \
                    for (int32_t i3 = 0; i3 < s.c; ++i3, ++oi) {                              \
                        const int32_t ia = ab + i3 * as, ib = bb + i3 * bs;                   \
                        out[oi] = EXPR;                                                       \
                    }                                                                         \
                }                                                                             \
    } while (0)

void mk_add_s8(const int8_t* a, const int8_t* b, int8_t* out, const mk_bcast4* bc, const mk_eltwise_s8_params* p) {
    MK_BCAST_LOOP((int8_t)add_one(a[ia], b[ib], p));
}

void mk_mul_s8(const int8_t* a, const int8_t* b, int8_t* out, const mk_bcast4* bc, const mk_eltwise_s8_params* p) {
    MK_BCAST_LOOP((int8_t)mul_one(a[ia], b[ib], p));
}

void mk_clamp_s8(const int8_t* in, int8_t* out, int32_t count, int32_t lo, int32_t hi) {
    for (int32_t i = 0; i < count; ++i) out[i] = (int8_t)mk_clamp_i32(in[i], lo, hi);
}

void mk_lut_s8(const int8_t* in, int8_t* out, int32_t count, const int8_t lut[256]) {
    for (int32_t i = 0; i < count; ++i) out[i] = lut[in[i] + 128];
}

void mk_requant_s8(const int8_t* in, int8_t* out, int32_t count, int32_t in_zp, int32_t out_zp, mk_qscale s) {
    for (int32_t i = 0; i < count; ++i)
        out[i] = (int8_t)mk_clamp_i32(mk_requant(in[i] - in_zp, s.multiplier, s.shift) + out_zp, -128, 127);
}

void mk_quantize_f32_s8(const float* in, int8_t* out, int32_t count, float scale, int32_t zp) {
    for (int32_t i = 0; i < count; ++i) {
        float q = mk_round_half_even(in[i] / scale) + (float)zp;
        q = q < -128.0f ? -128.0f : (q > 127.0f ? 127.0f : q);
        out[i] = (int8_t)(int32_t)q;
    }
}

void mk_dequantize_s8_f32(const int8_t* in, float* out, int32_t count, float scale, int32_t zp) {
    for (int32_t i = 0; i < count; ++i) out[i] = (float)(in[i] - zp) * scale;
}

void mk_quantize_f32_s8_away(const float* in, int8_t* out, int32_t count, float scale, int32_t zp) {
    /* Same float operations as num::tfl QUANTIZE: r = round_away(x / scale), saturated before + zp. */
    const float hi = (float)(127 - zp), lo = (float)(-128 - zp);
    for (int32_t i = 0; i < count; ++i) {
        const float r = mk_round_away(in[i] / scale);
        out[i] = (int8_t)(r >= hi ? 127 : (r <= lo ? -128 : (int32_t)r + zp));
    }
}

void mk_softmax_s8_lut(const int8_t* in, int8_t* out, int32_t rows, int32_t cols, const float table[256],
                       float out_scale, int32_t out_zp) {
    for (int32_t r = 0; r < rows; ++r) {
        const int8_t* x = in + r * cols;
        int8_t* o = out + r * cols;
        int32_t mx = x[0];
        for (int32_t c = 1; c < cols; ++c) mx = x[c] > mx ? x[c] : mx;
        const float* t = table + 255 - mx; /* t[x] = table[255 + x - max] */
        float sum = 0.0f;
        for (int32_t c = 0; c < cols; ++c) sum += t[x[c]];
        const float inv = 1.0f / (sum * out_scale);
        for (int32_t c = 0; c < cols; ++c) {
            const float v = mk_round_away(t[x[c]] * inv);
            o[c] = (int8_t)mk_clamp_i32((int32_t)v + out_zp, -128, 127);
        }
    }
}

void mk_minmax_s8(const int8_t* a, const int8_t* b, int8_t* out, const mk_bcast4* bc, int32_t is_max, int32_t act_min,
                  int32_t act_max) {
    const mk_shape4 s = bc->out;
    int32_t oi = 0;
    for (int32_t i0 = 0; i0 < s.n; ++i0)
        for (int32_t i1 = 0; i1 < s.h; ++i1)
            for (int32_t i2 = 0; i2 < s.w; ++i2) {
                const int8_t* pa = a + i0 * bc->a_stride[0] + i1 * bc->a_stride[1] + i2 * bc->a_stride[2];
                const int8_t* pb = b + i0 * bc->b_stride[0] + i1 * bc->b_stride[1] + i2 * bc->b_stride[2];
                for (int32_t i3 = 0; i3 < s.c; ++i3, ++oi) {
                    const int32_t x = pa[i3 * bc->a_stride[3]], y = pb[i3 * bc->b_stride[3]];
                    out[oi] = (int8_t)mk_clamp_i32(is_max ? (x > y ? x : y) : (x < y ? x : y), act_min, act_max);
                }
            }
}
