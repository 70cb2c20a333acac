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
/** sin / cos: the argument reduced by the nearest multiple of pi/2 in double precision (fdlibm's two-part
 * pi/2, correctly rounded double operations on RV32 soft-float and on the host alike), then single
 * polynomials on [-pi/4, pi/4]; within 1e-6 of the correctly rounded result for |x| < 2^31. */
float mk_sinf(float x);
float mk_cosf(float x);
/** erf, Abramowitz and Stegun 7.1.26 (formula error <= 1.5e-7; <= 5e-7 absolute in float) with mk_expf. */
float mk_erff(float x);

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
    MK_UN_CLIP, MK_UN_SQRT, MK_UN_RSQRT, MK_UN_SQUARE, MK_UN_FLOOR, MK_UN_CEIL, MK_UN_ROUND, MK_UN_LOG,
    MK_UN_AFFINE, MK_UN_THRESHOLDED_RELU, MK_UN_SCALED_TANH, MK_UN_SOFTSIGN, MK_UN_SOFTPLUS,
    MK_UN_SIN, MK_UN_COS, MK_UN_GELU, MK_UN_GELU_TANH
} mk_unop;
/** `alpha`/`beta`: LeakyReLU/Elu/ThresholdedRelu alpha, HardSigmoid/Affine/ScaledTanh alpha and beta
 * (ONNX: alpha x + beta, alpha tanh(beta x)), Clip min/max. Sqrt is IEEE (correctly rounded on every
 * FPU), Round is half to even, Log is mk_logf, Softplus log(1 + e^x), Gelu 0.5 x (1 + erf(x / sqrt 2)),
 * GeluTanh 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))) (TFLite GELU approximate / ONNX Gelu tanh). */
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
/** ArgMin over the middle axis of [outer][axis][inner] (first minimum). */
void mk_argmin_f32(const float* in, int32_t* out, int32_t outer, int32_t axis, int32_t inner);

/** ONNX Resize of NHWC H/W. mode 0 = nearest round_prefer_floor, 1 = bilinear, 2 = nearest
 * round_prefer_ceil, 3 = nearest floor; coord 0 = half_pixel, 1 = align_corners, 2 = asymmetric. */
void mk_resize_f32(const float* in, mk_shape4 in_shape, float* out, mk_shape4 out_shape, int mode, int coord);

/** TFLite RESIZE_NEAREST_NEIGHBOR (any element size: codes are copied) and RESIZE_BILINEAR (float; int8
 * in mk_int8.h) of NHWC H/W with TFLite's align_corners / half_pixel_centers. */
void mk_resize_nearest_tfl(const void* in, mk_shape4 in_shape, void* out, mk_shape4 out_shape, int32_t elem_bytes, int align,
                           int half_pixel);
void mk_resize_bilinear_tfl_f32(const float* in, mk_shape4 in_shape, float* out, mk_shape4 out_shape, int align, int half_pixel);

/** Batched matrix multiply (mk_bmm_dims in mk_int8.h). */
void mk_batch_matmul_f32(const float* x, const float* w, float* out, const mk_bmm_dims* d);

/** Transposed convolution, NHWC, filter [OC][KH][KW][IC] (TFLite's layout; ONNX W is re-laid out),
 * group 1: out[oy][ox][oc] = sum over iy*stride - pad + ky*dil = oy (and x) of in * filter + bias,
 * clamped to the activation range. Output dims (and so the bottom/right padding) from out_shape. */
void mk_transpose_conv_f32(const float* in, mk_shape4 in_shape, const float* filter, int32_t kh, int32_t kw, const float* bias,
                           float* out, mk_shape4 out_shape, const mk_conv_f32_params* p);

/** One direction of an ONNX recurrent layer over one batch entry (seed 000 RNN / GRU / LSTM, float):
 * step t reads x + t * x_stride (input_size floats) and writes hidden unit j of its output at
 * y + t * y_stride + j * y_hstride (y may be NULL); `reverse` runs t = steps - 1 down to 0. h (and c)
 * hold the initial state on entry and the final state on exit. W [G*H][I], R [G*H][H], bias Wb[G*H]
 * then Rb[G*H] (may be NULL), G = 1 (RNN), 3 (GRU: z, r, h) or 4 (LSTM: i, o, f, c). */
typedef struct {
    int32_t steps, input_size, hidden;
    int32_t x_stride, y_stride, y_hstride;
    int32_t reverse;
} mk_rnn_dims;

/** RNN: h = act(clip(W x + R h + Wb + Rb)), act any mk_unop with its alpha/beta; clip <= 0: none.
 * scratch: H floats. */
void mk_rnn_f32(const float* x, const mk_rnn_dims* d, const float* w, const float* r, const float* bias, mk_unop act,
                float alpha, float beta, float clip, float* h, float* y, float* scratch);
/** GRU with the default activations (sigmoid, tanh) and linear_before_reset 0 or 1. scratch: 7H floats. */
void mk_gru_f32(const float* x, const mk_rnn_dims* d, const float* w, const float* r, const float* bias,
                int linear_before_reset, float* h, float* y, float* scratch);
/** LSTM with the default activations (sigmoid, tanh, tanh), no peepholes. scratch: 4H floats. */
void mk_lstm_f32(const float* x, const mk_rnn_dims* d, const float* w, const float* r, const float* bias, float* h,
                 float* c, float* y, float* scratch);
/** One element of mk_unary_f32. */
float mk_unary1_f32(mk_unop op, float x, float alpha, float beta);

#ifdef __cplusplus
}
#endif
#endif
