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
    MK_TR_REDUCE = 9   /* p: mean outer axis inner (sum or mean over the middle axis) */
};

typedef struct {
    uint32_t magic, total_bytes, n_layers, n_samples, epochs, classes;
    float lr;
    uint32_t params_off, params_floats; /* initial parameter values, copied to SRAM */
    uint32_t x_off, y_off, in_floats;   /* samples [n][in_floats] (NHWC), labels int32 [n] */
    uint32_t act_floats;                /* largest tensor */
} mk_train_header;

typedef struct {
    uint32_t op;
    uint32_t in0, in1;                               /* tensor numbers (in1 = ~0u: one input) */
    int32_t in_h, in_w, in_c, out_h, out_w, out_c;   /* NHWC of in0 and of the output, batch 1 */
    int32_t p[4];
    uint32_t w_param, b_param;                       /* float offsets into the parameters (~0u none) */
} mk_train_layer;

#endif
