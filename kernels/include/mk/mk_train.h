/* SPDX-License-Identifier: MIT */
/* fp32 on-device training kernels for ws63 (seed 000 training tables, FP32 rows): the backward passes
 * of the depthwise-equivalent convolution (group = in = out channels, batch 1, no bias, stride 1,
 * dilation 1, weights [KH][KW][C] = OHWI with I = 1), ReLU and FullyConnected (rank 2, bias = output
 * channels), the softmax cross-entropy loss and the SGD update. NHWC, batch 1, gradients accumulate
 * (+=) into dw/db so a caller may sum over a mini-batch; dx is overwritten. Host-buildable; checked
 * against finite differences in tests/unit/kernels/train_f32_test.cpp. */
#ifndef MK_TRAIN_H
#define MK_TRAIN_H
#include "mk/mk_common.h"
#include "mk/mk_int8.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Depthwise conv forward (no bias): y[oy][ox][c] = sum_k x[oy+ky-pad][ox+kx-pad][c] * w[ky][kx][c]. */
void mk_train_dwconv_fwd(const float* x, mk_shape4 xs, const float* w, int32_t kh, int32_t kw, int32_t pad_t,
                         int32_t pad_l, float* y, mk_shape4 ys);
/** Its backward: dx (overwritten) and dw (accumulated) from dy. */
void mk_train_dwconv_bwd(const float* x, mk_shape4 xs, const float* w, int32_t kh, int32_t kw, int32_t pad_t,
                         int32_t pad_l, const float* dy, mk_shape4 ys, float* dx, float* dw);
/** ReLU backward from the forward output y: dx = y > 0 ? dy : 0 (dx may alias dy). */
void mk_train_relu_bwd(const float* y, const float* dy, float* dx, int32_t count);
/** FC forward y[n] = sum_k x[k] w[n][k] + b[n], and backward: dx (overwritten; may be NULL), dw and db
 * (accumulated). */
void mk_train_fc_fwd(const float* x, int32_t k, const float* w, const float* b, int32_t n, float* y);
void mk_train_fc_bwd(const float* x, int32_t k, const float* w, int32_t n, const float* dy, float* dx, float* dw,
                     float* db);
/** Softmax cross-entropy of logits[n] against class `label`: returns the loss (-log p[label]) and
 * writes dlogits = p - onehot(label). Uses mk_expf/mk_logf (bit-identical on host and target). */
float mk_train_softmax_xent(const float* logits, int32_t n, int32_t label, float* dlogits);
/** w -= lr * g; g is cleared for the next step. */
void mk_train_sgd(float* w, float* g, int32_t count, float lr);

/* The other FP32 rows of the training tables (element-wise without broadcast, Abs, Concat of two,
 * Slice, Transpose, constant Pad, ReduceSum/ReduceMean): backward passes. Gradients of inputs are
 * overwritten. */
typedef enum { MK_TR_EW_ADD = 0, MK_TR_EW_SUB, MK_TR_EW_MUL, MK_TR_EW_DIV } mk_tr_ew;
/** y = a op b (same shapes): da, db (either may be NULL). */
void mk_train_eltwise_bwd(mk_tr_ew op, const float* a, const float* b, const float* dy, int32_t count, float* da, float* db);
/** The same with numpy broadcasting over 4-D NHWC strides (mk_bcast4: 0 on broadcast axes; seed 000
 * TP-DIV: Div is broadcast-compatible): y = a op b forward, and da, db accumulated (+=, the sum over the
 * broadcast axes). */
void mk_train_binary_bcast_fwd(mk_tr_ew op, const float* a, const float* b, const mk_bcast4* bc, float* y);
void mk_train_binary_bcast_bwd(mk_tr_ew op, const float* a, const float* b, const float* dy, const mk_bcast4* bc, float* da,
                               float* db);
/** y = |x|: dx = sign(x) dy (0 at 0). */
void mk_train_abs_bwd(const float* x, const float* dy, float* dx, int32_t count);
/** y = concat(a, b) over the middle axis of [outer][na|nb][inner]: da, db. */
void mk_train_concat2_bwd(const float* dy, int32_t outer, int32_t na, int32_t nb, int32_t inner, float* da, float* db);
/** 4-D strided slice y = x[begin + i * step] (step > 0) and constant pad y = pad(x): the gradient goes
 * back to the read positions; every other dx is 0. Dims NHWC-style [d0][d1][d2][d3]. */
void mk_train_slice4_bwd(const int32_t xdims[4], const int32_t begin[4], const int32_t step[4], const int32_t ydims[4],
                         const float* dy, float* dx);
void mk_train_pad4_bwd(const int32_t xdims[4], const int32_t before[4], const int32_t ydims[4], const float* dy, float* dx);
/** y = transpose(x, perm) of a 4-D tensor: dx = transpose(dy, perm^-1). */
void mk_train_transpose4_bwd(const int32_t xdims[4], const int32_t perm[4], const float* dy, float* dx);
/** y = sum (mean: / axis) over the middle axis of [outer][axis][inner]: dx broadcasts dy back. */
void mk_train_reduce_bwd(int mean, const float* dy, int32_t outer, int32_t axis, int32_t inner, float* dx);

/* QAS INT8 rows (TP-CONV 3x3 group 1, TP-FC with B transposed, TP-POOL MaxPool, TP-ACT ReLU): the
 * forward pass is the int8 inference kernel; the backward pass works on the real values the codes
 * stand for (x = s_x (q - z_x), W = s_w[c] W_q) and returns the gradient of the input as a real tensor
 * and that of the int8 weight codes with quantization-aware scaling (QAS, Lin et al. 2022, "On-Device
 * Training Under 256KB Memory"): g(W_q) = s_w g(W), scaled by s_w^-2, i.e. dwq = g(W) / s_w per output
 * channel (the bias code likewise with s_b = s_x s_w). dx may be NULL (a layer reading the sample). */
void mk_train_qconv_bwd(const int8_t* x, mk_shape4 xs, float x_scale, int32_t x_zp, const int8_t* w, const float* w_scale,
                        int32_t kh, int32_t kw, int32_t stride_h, int32_t stride_w, int32_t pad_t, int32_t pad_l, const float* dy,
                        mk_shape4 ys, float* dx, float* dwq, float* dbq);
void mk_train_qfc_bwd(const int8_t* x, int32_t k, float x_scale, int32_t x_zp, const int8_t* w, const float* w_scale, int32_t n,
                      const float* dy, float* dx, float* dwq, float* dbq);
/** Straight-through estimator of the output rounding: the gradient passes where the int8 output did
 * not saturate at its activation range [lo, hi] (a fused ReLU is the range starting at the zero point),
 * and is 0 where it did: g[i] = 0 if y[i] <= lo or y[i] >= hi. */
void mk_train_qclip_mask(const int8_t* y, int32_t lo, int32_t hi, float* g, int32_t count);
/** ReLU on codes: dx = q > z ? dy : 0. */
void mk_train_qrelu_bwd(const int8_t* x, int32_t zp, const float* dy, float* dx, int32_t count);
/** MaxPool (VALID, no padding) on codes: dy goes to the first maximum of each window. */
void mk_train_qmaxpool_bwd(const int8_t* x, mk_shape4 xs, int32_t k, int32_t stride, const float* dy, mk_shape4 ys, float* dx);

#ifdef __cplusplus
}
#endif
#endif
