/* SPDX-License-Identifier: MIT */
/* fp32 kernels (NHWC, same filter layouts as mk_int8.h). The transcendental functions come from
 * mk_math (our own exp/log), never libm, so host and RISC-V builds give identical bits; the
 * library is compiled with -ffp-contract=off for the same reason (no fused multiply-add). */
#ifndef MK_F32_H
#define MK_F32_H
#include "mk/mk_common.h"
#include "mk/mk_int8.h"

#ifdef __cplusplus
extern "C" {
#endif

/** exp / log / tanh / sigmoid accurate to a few ulp over the float range. */
float mk_expf(float x);
float mk_logf(float x);
float mk_tanhf(float x);
float mk_sigmoidf(float x);

typedef struct {
    int32_t stride_h, stride_w, dil_h, dil_w, pad_top, pad_left;
    float act_min, act_max; /* fused activation clamp (-inf/+inf for none) */
} mk_conv_f32_params;

void mk_conv2d_f32(const float* in, mk_shape4 in_shape, const float* filter, int32_t kh, int32_t kw,
                   const float* bias, float* out, mk_shape4 out_shape, const mk_conv_f32_params* p);
void mk_depthwise_conv2d_f32(const float* in, mk_shape4 in_shape, const float* filter, int32_t kh, int32_t kw,
                             const float* bias, float* out, mk_shape4 out_shape, const mk_conv_f32_params* p);
/** out[m][n] = sum_k in[m][k] * w[n][k] + bias[n] (bias may be NULL), clamped. */
void mk_fully_connected_f32(const float* in, int32_t m, int32_t k, const float* weights, int32_t n, const float* bias,
                            float* out, float act_min, float act_max);

typedef enum { MK_BIN_ADD = 0, MK_BIN_SUB, MK_BIN_MUL, MK_BIN_DIV, MK_BIN_MAX, MK_BIN_MIN } mk_binop;
void mk_binary_f32(mk_binop op, const float* a, const float* b, float* out, const mk_bcast4* bc);

typedef enum {
    MK_UN_RELU = 0, MK_UN_RELU6, MK_UN_LEAKY_RELU, MK_UN_HARD_SWISH, MK_UN_SIGMOID, MK_UN_TANH, MK_UN_ELU,
    MK_UN_ABS, MK_UN_NEG, MK_UN_HARD_SIGMOID, MK_UN_EXP,
    MK_UN_CLIP, MK_UN_SQRT, MK_UN_RSQRT, MK_UN_SQUARE, MK_UN_FLOOR, MK_UN_CEIL, MK_UN_ROUND, MK_UN_LOG
} mk_unop;
/** `alpha`/`beta`: LeakyReLU/Elu alpha, HardSigmoid alpha/beta, Clip min/max. Sqrt is IEEE (correctly
 * rounded on every FPU), Round is half to even, Log is mk_logf. */
void mk_unary_f32(mk_unop op, const float* in, float* out, int32_t count, float alpha, float beta);

/** PReLU over NHWC with one slope per channel (or a single slope when `slope_count` is 1). */
void mk_prelu_f32(const float* in, float* out, int32_t count, int32_t channels, const float* slope,
                  int32_t slope_count);

void mk_max_pool_f32(const float* in, mk_shape4 in_shape, float* out, mk_shape4 out_shape, const mk_pool_params* p);
/** count_include_pad = 0. */
void mk_avg_pool_f32(const float* in, mk_shape4 in_shape, float* out, mk_shape4 out_shape, const mk_pool_params* p);

void mk_softmax_f32(const float* in, float* out, int32_t rows, int32_t cols, int log_softmax);

typedef enum { MK_RED_MEAN = 0, MK_RED_SUM, MK_RED_MAX, MK_RED_MIN } mk_reduce;
/** Reduction over the middle axis of [outer][axis][inner]. */
void mk_reduce_f32(mk_reduce op, const float* in, float* out, int32_t outer, int32_t axis, int32_t inner);
/** ArgMax over the middle axis of [outer][axis][inner] (first maximum). */
void mk_argmax_f32(const float* in, int32_t* out, int32_t outer, int32_t axis, int32_t inner);

/** Resize of NHWC H/W. mode 0 = nearest (round_prefer_floor), 1 = bilinear; coord 0 = half_pixel,
 * 1 = align_corners, 2 = asymmetric. */
void mk_resize_f32(const float* in, mk_shape4 in_shape, float* out, mk_shape4 out_shape, int mode, int coord);

/** One GRU layer (ONNX gate order z, r, h; linear_before_reset = 1; forward), batch 1.
 * x [T][I], W [3H][I], R [3H][H], bias Wb[3H] then Rb[3H] (6H), h0/h [H], y [T][H];
 * scratch holds 6H floats. */
void mk_gru_f32(const float* x, int32_t steps, int32_t input_size, int32_t hidden, const float* w, const float* r,
                const float* bias, float* h, float* y, float* scratch);

/** One LSTM layer (ONNX gate order i, o, f, c; default activations sigmoid/tanh/tanh; no peepholes;
 * forward), batch 1. x [T][I], W [4H][I], R [4H][H], bias Wb[4H] then Rb[4H] (8H, may be NULL),
 * h/c [H] (initial state in, final state out), y [T][H] (may be NULL); scratch holds 4H floats. */
void mk_lstm_f32(const float* x, int32_t steps, int32_t input_size, int32_t hidden, const float* w, const float* r,
                 const float* bias, float* h, float* c, float* y, float* scratch);

#ifdef __cplusplus
}
#endif
#endif
