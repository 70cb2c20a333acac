/* SPDX-License-Identifier: MIT */
/* Training blob (ws63 on-device training, FP32): what the host writes (drivers/mcu/src/train.cpp) and
 * the trainer runs (firmware/train/trainer.c). Little-endian, 4-byte aligned, offsets from the blob
 * start; the blob sits in flash, the trainable parameters are copied to SRAM at start.
 *   mk_train_header | mk_train_layer[n_layers] | initial parameters | samples | labels */
#ifndef MK_TRAIN_BLOB_H
#define MK_TRAIN_BLOB_H
#include <stdint.h>

#define MK_TRAIN_MAGIC 0x31544b4du /* "MKT1" */
#define MK_TRAIN_MAX_LAYERS 16

enum { MK_TR_DWCONV = 1, MK_TR_RELU = 2, MK_TR_FC = 3, MK_TR_FLATTEN = 4 };

typedef struct {
    uint32_t magic, total_bytes, n_layers, n_samples, epochs, classes;
    float lr;
    uint32_t params_off, params_floats; /* initial parameter values, copied to SRAM */
    uint32_t x_off, y_off, in_floats;   /* samples [n][in_floats] (NHWC), labels int32 [n] */
    uint32_t act_floats;                /* largest activation (per layer buffers are planned by the trainer) */
} mk_train_header;

typedef struct {
    uint32_t op;
    int32_t in_h, in_w, in_c, out_h, out_w, out_c; /* NHWC, batch 1 (FC: in_c = K, out_c = N) */
    int32_t kh, kw, pad_t, pad_l;
    uint32_t w_param, b_param;                     /* float offsets into the parameters (b: ~0u none) */
} mk_train_layer;

#endif
