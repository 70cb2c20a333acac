/* SPDX-License-Identifier: MIT */
/* int8 kernels (MindSpore-Lite-Micro full-quant semantics, seed 000 s1.4 rule 8): activations per
 * tensor with zero point, weights symmetric (zero point 0) per tensor or per output channel,
 * int32 bias with scale = in_scale * w_scale, fixed-point requantization (mk_common.h).
 * Layouts: activations NHWC; Conv2D filter OHWI [Cout][KH][KW][Cin]; depthwise filter
 * [KH][KW][Cout] with Cout = Cin * depth_multiplier; FullyConnected weights [N][K].
 * Every kernel is reentrant, allocates nothing and uses no libc beyond string.h. */
#ifndef MK_INT8_H
#define MK_INT8_H
#include "mk/mk_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Geometry and quantization of Conv2D / DepthwiseConv2D. Padding bottom/right follow from the
 * output shape. `mult`/`shift` have one entry per output channel (per-tensor: repeat the value). */
typedef struct {
    int32_t stride_h, stride_w, dil_h, dil_w, pad_top, pad_left;
    int32_t in_zp, out_zp, act_min, act_max;
    const int32_t* mult;
    const int32_t* shift;
    const float* fscale; /* non-NULL: float requantization (mk_requant_float) instead of mult/shift */
    int32_t tfl;         /* nonzero: mult/shift are TFLite multiplier/exponent pairs (mk_tfl_mbqm) */
} mk_conv_s8_params;

void mk_conv2d_s8(const int8_t* in, mk_shape4 in_shape, const int8_t* filter, int32_t kh, int32_t kw,
                  const int32_t* bias, int8_t* out, mk_shape4 out_shape, const mk_conv_s8_params* p);

void mk_depthwise_conv2d_s8(const int8_t* in, mk_shape4 in_shape, const int8_t* filter, int32_t kh, int32_t kw,
                            const int32_t* bias, int8_t* out, mk_shape4 out_shape, const mk_conv_s8_params* p);

/** out[m][n] = requant(sum_k (in[m][k] - in_zp) * w[n][k] + bias[n]) + out_zp, clamped; `fscale`
 * non-NULL selects float requantization (per output feature) instead of mult/shift; `tfl` nonzero: mult/shift
 * are TFLite multiplier/exponent pairs (mk_tfl_mbqm). */
void mk_fully_connected_s8(const int8_t* in, int32_t m, int32_t k, const int8_t* weights, int32_t n,
                           const int32_t* bias, int8_t* out, int32_t in_zp, int32_t out_zp, const int32_t* mult,
                           const int32_t* shift, const float* fscale, int32_t act_min, int32_t act_max, int32_t tfl);

/** Element-wise binary op parameters. Add/Sub: out = zo + round((a-za)*ma' + (b-zb)*mb') with
 * ma' = sa/so, mb' = +-sb/so as Q(31-`left`) integers; Mul: out = zo + requant((a-za)*(b-zb)). */
typedef struct {
    int32_t a_zp, b_zp, out_zp, act_min, act_max;
    int32_t a_mult, b_mult, left; /* Add/Sub: integer ratios and their common shift */
    mk_qscale out;                /* Mul: sa*sb/so */
    /* tfl nonzero: TFLite arithmetic with TFLite multiplier/exponent pairs. Add/Sub: left shift 20,
     * ta = sa / (2 max(sa, sb)), tb likewise, out = 2 max(sa, sb) / (2^20 so), sub: a - b;
     * Mul: out = sa sb / so. */
    int32_t tfl, sub;
    mk_qscale ta, tb;
} mk_eltwise_s8_params;

/** Builds Add (sign=+1) / Sub (sign=-1) parameters from the real scales. */
void mk_add_s8_prepare(float sa, int32_t za, float sb, int32_t zb, float so, int32_t zo, int sign,
                       mk_eltwise_s8_params* p);

/** Broadcasting strides (in elements, 0 on broadcast axes) of b over an NHWC output. */
typedef struct {
    mk_shape4 out;
    int32_t a_stride[4], b_stride[4];
} mk_bcast4;

void mk_add_s8(const int8_t* a, const int8_t* b, int8_t* out, const mk_bcast4* bc, const mk_eltwise_s8_params* p);
void mk_mul_s8(const int8_t* a, const int8_t* b, int8_t* out, const mk_bcast4* bc, const mk_eltwise_s8_params* p);

/** Pooling over NHWC (padding positions are excluded from the average: count_include_pad = 0;
 * the max ignores them). The average is the integer mean rounded half to even; in/out share
 * the quantization (as the MSLite converter arranges it). */
typedef struct {
    int32_t kh, kw, stride_h, stride_w, pad_top, pad_left, act_min, act_max;
    int32_t round_away; /* int8 average: nonzero rounds half away from zero (TFLite), else half to even */
} mk_pool_params;
void mk_max_pool_s8(const int8_t* in, mk_shape4 in_shape, int8_t* out, mk_shape4 out_shape, const mk_pool_params* p);
void mk_avg_pool_s8(const int8_t* in, mk_shape4 in_shape, int8_t* out, mk_shape4 out_shape, const mk_pool_params* p);

/** Clamp (ReLU / ReLU6 / Clip with in/out sharing quantization). */
void mk_clamp_s8(const int8_t* in, int8_t* out, int32_t count, int32_t lo, int32_t hi);

/** Any unary int8 function (Sigmoid, Tanh, HardSwish, LeakyReLU, PReLU with scalar slope, Elu,
 * requantizing ReLU, ...) as a 256-entry table built at conversion time: out = lut[in + 128]. */
void mk_lut_s8(const int8_t* in, int8_t* out, int32_t count, const int8_t lut[256]);

/** Requantize between two int8 quantizations (per tensor): out = zo + requant(in - zi). */
void mk_requant_s8(const int8_t* in, int8_t* out, int32_t count, int32_t in_zp, int32_t out_zp, mk_qscale s);

/** QuantizeLinear: saturate(round_half_even(x / scale) + zp). */
void mk_quantize_f32_s8(const float* in, int8_t* out, int32_t count, float scale, int32_t zp);
/** DequantizeLinear: (q - zp) * scale. */
void mk_dequantize_s8_f32(const int8_t* in, float* out, int32_t count, float scale, int32_t zp);

/** Softmax / LogSoftmax over the last axis of [rows][cols]: dequantize, float math with the
 * library's own exp/log (bit-identical on host and target), quantize. `scratch` holds cols floats. */
void mk_softmax_s8(const int8_t* in, int8_t* out, int32_t rows, int32_t cols, float in_scale, int32_t in_zp,
                   float out_scale, int32_t out_zp, int log_softmax, float* scratch);

/** Mean over H and W (GlobalAveragePool / ReduceMean axes {1,2} in NHWC) with requantization:
 * out = zo + requant(sum(in - zi)) where s = si / (so * H * W); `fscale` > 0 selects float
 * requantization with that scale (onnxruntime QLinearGlobalAveragePool: si / (so * float(H * W))). */
void mk_global_avg_pool_s8(const int8_t* in, mk_shape4 in_shape, int8_t* out, int32_t in_zp, int32_t out_zp,
                           mk_qscale s, float fscale, int32_t tfl);

/** TFLite's look-up-table softmax over the last axis of [rows][cols] (int8): `table[255 + d]` =
 * exp(beta * in_scale * d) for d = x - max in [-255, 0] (built by the converter); per row the float sum
 * of the entries, inv = 1 / (sum * out_scale), out = round_away(entry * inv) + out_zp, clamped. */
void mk_softmax_s8_lut(const int8_t* in, int8_t* out, int32_t rows, int32_t cols, const float table[256],
                       float out_scale, int32_t out_zp);

/** TFLite QUANTIZE: saturate(round_away(x / scale) + zp). */
void mk_quantize_f32_s8_away(const float* in, int8_t* out, int32_t count, float scale, int32_t zp);

/** TFLite RESIZE_BILINEAR int8 (ResizeBilinearInteger: 10-bit coordinates, four products, rounded half
 * away from zero by 2^20); input and output share the quantization. */
void mk_resize_bilinear_tfl_s8(const int8_t* in, mk_shape4 in_shape, int8_t* out, mk_shape4 out_shape, int align, int half_pixel);

/** Batched matrix multiply out[b] = op(x[b]) op(w[b]) ([m][n] per batch, contiguous); op transposes when
 * adj is set (x stored [k][m], w stored [n][k]); a batch stride 0 shares that operand. */
typedef struct {
    int32_t batches, m, k, n, adj_x, adj_y;
    int32_t x_batch_stride, w_batch_stride; /* elements */
} mk_bmm_dims;

/** TFLite BATCH_MATMUL int8: exact sum of (x - x_zp)(w - w_zp), TFLite
 * multiplier/exponent (mk_tfl_mbqm), + out_zp, clamped. */
void mk_batch_matmul_s8(const int8_t* x, const int8_t* w, int8_t* out, const mk_bmm_dims* d, int32_t x_zp, int32_t w_zp,
                        int32_t out_zp, int32_t mult, int32_t shift, int32_t act_min, int32_t act_max);

/** TFLite TRANSPOSE_CONV int8: like mk_transpose_conv_f32 with the exact int32 sum of (x - in_zp) * w,
 * + bias, per-channel TFLite requantization (p->mult/p->shift as multiplier/exponent pairs), + out_zp,
 * clamped; p->dil_h/dil_w are 1 for TFLite. */
void mk_transpose_conv_s8(const int8_t* in, mk_shape4 in_shape, const int8_t* filter, int32_t kh, int32_t kw, const int32_t* bias,
                          int8_t* out, mk_shape4 out_shape, const mk_conv_s8_params* p);

/** ArgMax over the last axis of [rows][cols] (first index of the maximum). */
void mk_argmax_s8(const int8_t* in, int32_t rows, int32_t cols, int32_t* out);
/** ArgMin over the last axis of [rows][cols] (first index of the minimum, TFLite ARG_MIN / ONNX ArgMin). */
void mk_argmin_s8(const int8_t* in, int32_t rows, int32_t cols, int32_t* out);

/** TFLite int8 SUM / MEAN / REDUCE_MAX / REDUCE_MIN over the middle axis of [outer][axis][inner]; `op` is an
 * mk_reduce value (mk_f32.h: 0 mean, 1 sum, 2 max, 3 min). Max/min: the codes (input and output share the
 * quantization). Sum/mean: the exact sum of (x - in_zp), TFLite multiplier/exponent (mk_tfl_mbqm, the
 * converter folds the count of a mean into it), + out_zp, clamped. */
void mk_reduce_s8(int32_t op, const int8_t* in, int8_t* out, int32_t outer, int32_t axis, int32_t inner, int32_t in_zp,
                  int32_t out_zp, int32_t mult, int32_t shift);

/** TFLite int8 MAXIMUM / MINIMUM (inputs and output share the quantization): the larger / smaller code,
 * broadcast as mk_add_s8, clamped to [act_min, act_max]. */
void mk_minmax_s8(const int8_t* a, const int8_t* b, int8_t* out, const mk_bcast4* bc, int32_t is_max, int32_t act_min,
                  int32_t act_max);

#ifdef __cplusplus
}
#endif
#endif
