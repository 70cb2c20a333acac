/* SPDX-License-Identifier: MIT */
/* Training blob (ws63 on-device training, FP32): what the host writes (drivers/mcu/src/train.cpp) and
 * the trainer runs (firmware/train/trainer.c). Little-endian, 4-byte aligned, offsets from the blob
 * start; the blob sits in flash, the trainable parameters are copied to SRAM at start.
 *   mk_train_header | mk_train_layer[n_layers] | initial parameters | samples | labels
 * Tensors are numbered: 0 = the sample, k + 1 = the output of layer k; a layer reads one or two
 * earlier tensors (a DAG: residual Add, Concat). */
#ifndef MK_TRAIN_BLOB_H
#define MK_TRAIN_BLOB_H
#include <stdint.h>

#define MK_TRAIN_MAGIC 0x32544b4du /* "MKT2" */
#define MK_TRAIN_MAX_LAYERS 32

enum {
    MK_TR_DWCONV = 1,  /* depthwise-equivalent conv, no bias; p: kh kw pad_t pad_l */
    MK_TR_RELU = 2,
    MK_TR_FC = 3,      /* in_c = K, out_c = N */
    MK_TR_FLATTEN = 4, /* a byte copy (reshape) */
    MK_TR_EW = 5,      /* p[0] = mk_tr_ew (add, sub, mul, div), same shapes */
    MK_TR_ABS = 6,
    MK_TR_CONCAT = 7,  /* two inputs over the middle axis of [outer][na|nb][inner]; p: outer na nb inner */
    MK_TR_PAD = 8,     /* constant 0 pad of a [h][w][c] tensor; p: top left (the output dims give the rest) */
    MK_TR_REDUCE = 9,  /* p: mean outer axis inner (sum or mean over the middle axis) */
    MK_TR_SLICE = 10,  /* q: begin[4] step[4] (step > 0) of the stored dims [1][h][w][c]; output from out_* */
    MK_TR_TRANSPOSE = 11, /* p: perm[4] of the stored dims [1][h][w][c] */
    MK_TR_EWB = 12     /* element-wise with broadcasting (TP-DIV); p[0] = mk_tr_ew, q: a_stride[4] b_stride[4] */
};

typedef struct {
    uint32_t magic, total_bytes, n_layers, n_samples, epochs, classes;
    float lr;
    uint32_t params_off, params_floats; /* initial parameter values, copied to SRAM */
    uint32_t x_off, y_off, in_floats;   /* samples [n][in_floats] (NHWC), labels int32 [n] */
    uint32_t act_floats;                /* largest tensor */
    /* QAS INT8 only (0 in FP32 blobs): per-output-channel weight scales, and the sizes of the int8
     * weight / int32 bias code areas the forward pass reads (rounded from the float master codes). */
    uint32_t qscales_off, qscales_floats, wq_bytes, bq_words;
} mk_train_header;

typedef struct {
    uint32_t op;
    uint32_t in0, in1;                               /* tensor numbers (in1 = ~0u: one input) */
    int32_t in_h, in_w, in_c, out_h, out_w, out_c;   /* NHWC of in0 and of the output, batch 1 */
    int32_t p[4];
    uint32_t w_param, b_param;                       /* float offsets into the parameters (~0u none) */
    int32_t q[8];                                    /* SLICE / EWB parameters */
} mk_train_layer;

/* QAS INT8 training (seed 000 training tables, QAS INT8 rows): the int8 model's forward pass through the
 * inference kernels on codes, the backward pass on real values with quantization-aware scaling of the
 * code gradients (kernels/include/mk/mk_train.h), SGD on float master copies of the weight and bias
 * codes, which are rounded to int8 / int32 codes again after every step. Blob:
 *   mk_train_header (magic MK_TRAIN_MAGIC_QAS) | mk_train_qlayer[n_layers] | master codes (float) |
 *   weight scales (float) | samples (float, NHWC) | labels
 * Tensor 0 is the float sample, tensor k + 1 the int8 output of layer k (codes). */
#define MK_TRAIN_MAGIC_QAS 0x51544b4du /* "MKTQ" */

enum {
    MK_TQ_QUANTIZE = 1,  /* float sample -> codes (round half to even, the output quantization) */
    MK_TQ_CONV = 2,      /* OHWI conv, group 1; p: kh kw stride_h stride_w pad_t pad_l */
    MK_TQ_FC = 3,        /* [N][K] weights (B transposed), in_c = K, out_c = N */
    MK_TQ_MAXPOOL = 4,   /* VALID, square; p: k stride (input and output share the quantization) */
    MK_TQ_RELU = 5,      /* clamp at the zero point (input and output share the quantization) */
    MK_TQ_COPY = 6,      /* reshape / flatten: the codes as they are */
    MK_TQ_TRANSPOSE = 7  /* p: perm[4] of the stored 4-D dims [1][h][w][c] */
};

typedef struct {
    uint32_t op, in0;
    int32_t in_h, in_w, in_c, out_h, out_w, out_c;
    int32_t p[6];
    float x_scale, y_scale; /* input / output quantization */
    int32_t x_zp, y_zp, act_min, act_max;
    uint32_t w_param, b_param; /* float offsets of the master codes (~0u none) */
    uint32_t wq_off, bq_off;   /* byte offset (weights) and int32 index (biases) of the current codes */
    uint32_t ws_off;           /* float offset of the per-output-channel weight scales */
} mk_train_qlayer;

#endif
