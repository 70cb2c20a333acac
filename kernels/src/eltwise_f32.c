/* SPDX-License-Identifier: MIT */
/* fp32 element-wise kernels: broadcasting binary ops, activations, PReLU. */
#include "mk/mk_f32.h"

static inline float binop(mk_binop op, float a, float b) {
    switch (op) {
        case MK_BIN_ADD: return a + b;
        case MK_BIN_SUB: return a - b;
        case MK_BIN_MUL: return a * b;
        case MK_BIN_DIV: return a / b;
        case MK_BIN_MAX: return a > b ? a : b;
        case MK_BIN_MIN: return a < b ? a : b;
    }
    return 0.0f;
}

void mk_binary_f32(mk_binop op, const float* a, const float* b, float* out, const mk_bcast4* bc) {
    const mk_shape4 s = bc->out;
    int32_t oi = 0;
    for (int32_t i0 = 0; i0 < s.n; ++i0)
        for (int32_t i1 = 0; i1 < s.h; ++i1)
            for (int32_t i2 = 0; i2 < s.w; ++i2) {
                const float* pa = a + i0 * bc->a_stride[0] + i1 * bc->a_stride[1] + i2 * bc->a_stride[2];
                const float* pb = b + i0 * bc->b_stride[0] + i1 * bc->b_stride[1] + i2 * bc->b_stride[2];
                for (int32_t i3 = 0; i3 < s.c; ++i3, ++oi)
                    out[oi] = binop(op, pa[i3 * bc->a_stride[3]], pb[i3 * bc->b_stride[3]]);
            }
}

static inline float unop(mk_unop op, float x, float alpha, float beta) {
    switch (op) {
        case MK_UN_RELU: return x > 0.0f ? x : 0.0f;
        case MK_UN_RELU6: return x < 0.0f ? 0.0f : (x > 6.0f ? 6.0f : x);
        case MK_UN_LEAKY_RELU: return x >= 0.0f ? x : alpha * x;
        case MK_UN_HARD_SWISH: { /* x * HardSigmoid(1/6, 0.5) */
            float h = x * (1.0f / 6.0f) + 0.5f;
            h = h < 0.0f ? 0.0f : (h > 1.0f ? 1.0f : h);
            return x * h;
        }
        case MK_UN_SIGMOID: return mk_sigmoidf(x);
        case MK_UN_TANH: return mk_tanhf(x);
        case MK_UN_ELU: return x >= 0.0f ? x : alpha * (mk_expf(x) - 1.0f);
        case MK_UN_ABS: return x < 0.0f ? -x : x;
        case MK_UN_NEG: return -x;
        case MK_UN_HARD_SIGMOID: {
            const float h = alpha * x + beta;
            return h < 0.0f ? 0.0f : (h > 1.0f ? 1.0f : h);
        }
        case MK_UN_EXP: return mk_expf(x);
        case MK_UN_CLIP: return x < alpha ? alpha : (x > beta ? beta : x);
        case MK_UN_SQRT: return __builtin_sqrtf(x);
        case MK_UN_RSQRT: return 1.0f / __builtin_sqrtf(x);
        case MK_UN_SQUARE: return x * x;
        case MK_UN_FLOOR:
        case MK_UN_CEIL: {
            if (!(x < 8388608.0f && x > -8388608.0f)) return x; /* integral already, or NaN */
            const float t = (float)(int32_t)x;                 /* toward zero */
            if (op == MK_UN_FLOOR) return t > x ? t - 1.0f : t;
            return t < x ? t + 1.0f : t;
        }
        case MK_UN_ROUND: return mk_round_half_even(x);
        case MK_UN_LOG: return mk_logf(x);
        case MK_UN_AFFINE: return alpha * x + beta;
        case MK_UN_THRESHOLDED_RELU: return x > alpha ? x : 0.0f;
        case MK_UN_SCALED_TANH: return alpha * mk_tanhf(beta * x);
        case MK_UN_SOFTSIGN: return x / (1.0f + (x < 0.0f ? -x : x));
        case MK_UN_SOFTPLUS: /* log(1 + e^x) without overflow: x + log(1 + e^-x) for large x */
            return x > 15.0f ? x + mk_logf(1.0f + mk_expf(-x)) : mk_logf(1.0f + mk_expf(x));
        case MK_UN_SIN: return mk_sinf(x);
        case MK_UN_COS: return mk_cosf(x);
        case MK_UN_GELU: return 0.5f * x * (1.0f + mk_erff(x * 0.70710678f));
        case MK_UN_GELU_TANH: return 0.5f * x * (1.0f + mk_tanhf(0.7978845608f * (x + 0.044715f * x * x * x)));
    }
    return 0.0f;
}

float mk_unary1_f32(mk_unop op, float x, float alpha, float beta) { return unop(op, x, alpha, beta); }

void mk_unary_f32(mk_unop op, const float* in, float* out, int32_t count, float alpha, float beta) {
    for (int32_t i = 0; i < count; ++i) out[i] = unop(op, in[i], alpha, beta);
}

void mk_prelu_f32(const float* in, float* out, int32_t count, int32_t channels, const float* slope,
                  int32_t slope_count) {
    for (int32_t i = 0; i < count; ++i) {
        const float s = slope_count == 1 ? slope[0] : slope[i % channels];
        out[i] = in[i] >= 0.0f ? in[i] : s * in[i];
    }
}
