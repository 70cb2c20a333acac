/* SPDX-License-Identifier: MIT */
/* Model blob: the binary the host converter writes (drivers/mcu) and the firmware runtime executes
 * (firmware/runtime/runtime.c). Everything is little-endian, every record 4-byte aligned, offsets are
 * from the start of the blob. The blob sits in flash (executed/read in place); activations live in
 * one SRAM arena whose tensor offsets the converter planned.
 *
 *   mk_blob_header | mk_blob_tensor[n_tensors] | mk_blob_layer[n_layers] | io indices | data...
 *
 * A const tensor's bytes are in the blob (weights, bias, multipliers, LUTs, the input payload);
 * an arena tensor has an arena offset. Model inputs are arena tensors that the runtime fills from
 * their `init` payload before the first layer; outputs are printed after the last layer. */
#ifndef MCU_BLOB_H
#define MCU_BLOB_H
#include <stdint.h>

#define MK_BLOB_MAGIC 0x31424b4du /* "MKB1" */
#define MK_BLOB_VERSION 2u
#define MK_BLOB_MAX_IN 4
#define MK_BLOB_PARAMS 20

typedef struct {
    uint32_t magic, version, total_bytes;
    uint32_t n_tensors, n_layers, n_inputs, n_outputs;
    uint32_t tensors_off, layers_off, io_off; /* io: n_inputs then n_outputs uint32 tensor indices */
    uint32_t arena_bytes;                     /* SRAM the activations need */
    uint32_t reserved[5];
} mk_blob_header;

enum { MK_DT_F32 = 0, MK_DT_S8 = 1, MK_DT_S32 = 2 };
enum { MK_ST_CONST = 0, MK_ST_ARENA = 1 };

typedef struct {
    uint32_t dtype, storage;
    uint32_t offset;      /* blob offset (const) or arena offset (arena) */
    uint32_t bytes;
    int32_t dims[4];      /* NHWC, leading 1s for lower ranks */
    float scale;          /* int8 quantization (per tensor) */
    int32_t zero_point;
    uint32_t init_off;    /* arena input tensors: blob offset of the initial bytes, else 0 */
    uint32_t reserved;
} mk_blob_tensor;

/* Layer opcodes and the meaning of p[] (ints; floats stored as their bits). */
enum {
    MK_OP_CONV2D_S8 = 1,   /* in: x, w, bias, mult|fscale; p: sh sw dh dw pt pl kh kw act_min act_max shift_idx
                              requant (p[11]: 0 Q31 mult/shift, 1 float scales in in[3] (no shift tensor),
                              2 TFLite multiplier/exponent pairs) */
    MK_OP_DWCONV_S8 = 2,   /* same as CONV2D_S8 */
    MK_OP_FC_S8 = 3,       /* in: x, w[N][K], bias, mult|fscale; p: act_min act_max shift_idx requant (as conv p[11]) */
    MK_OP_ADD_S8 = 4,      /* in: a, b; p: a_mult b_mult left act_min act_max (b broadcast via strides p[5..12]);
                              p[13] = 1 TFLite add, 2 TFLite sub, with p[14..19] = the three TFLite multipliers */
    MK_OP_MUL_S8 = 5,      /* in: a, b; p: mult shift act_min act_max, p[5..12] strides; p[13] = 1: TFLite pair */
    MK_OP_MAXPOOL_S8 = 6,  /* p: kh kw sh sw pt pl act_min act_max round_away(avg) */
    MK_OP_AVGPOOL_S8 = 7,  /* same */
    MK_OP_CLAMP_S8 = 8,    /* p: lo hi */
    MK_OP_LUT_S8 = 9,      /* in: x, lut[256] */
    MK_OP_SOFTMAX_S8 = 10, /* p: log_softmax */
    MK_OP_GAP_S8 = 11,     /* p: mult shift fscale_f (> 0: float requantization) tfl (1: TFLite pair) */
    MK_OP_QUANTIZE = 12,   /* f32 -> s8 with the output tensor's quantization; p[0] = 1: round half away */
    MK_OP_DEQUANTIZE = 13, /* s8 -> f32 with the input tensor's quantization */
    MK_OP_COPY = 14,       /* Reshape/Flatten/Squeeze: byte copy; p: source byte offset */
    MK_OP_TRANSPOSE = 16,  /* p: perm[4] elem_bytes (input dims = the input tensor's) */
    MK_OP_CONCAT = 15,     /* in: up to 4; p: outer inner elem_bytes, axis sizes p[3..6] */
    MK_OP_CONV2D_F32 = 20, /* in: x, w, bias; p: sh sw dh dw pt pl kh kw act_min_f act_max_f */
    MK_OP_DWCONV_F32 = 21,
    MK_OP_FC_F32 = 22,     /* in: x, w, bias; p: act_min_f act_max_f */
    MK_OP_BINARY_F32 = 23, /* p: binop, strides p[5..12] */
    MK_OP_UNARY_F32 = 24,  /* p: unop alpha_f beta_f */
    MK_OP_MAXPOOL_F32 = 25,
    MK_OP_AVGPOOL_F32 = 26,
    MK_OP_SOFTMAX_F32 = 27, /* p: log_softmax */
    MK_OP_GRU_F32 = 28,     /* recurrent layers (GRU, LSTM 35, RNN 37), every direction and batch entry:
                               in: x [T][B][I], params (W | R | B of all directions), then the optional
                               initial_h / initial_c (LSTM) or sequence_lens int32 (RNN) at the slots p[14],
                               p[15]; out: Y stored [T][B][H][D]; p: H D mode(0 fwd, 1 rev, 2 bidir) T B I
                               scratch(9H floats) Y_h Y_c (tensor or -1) has_bias, p[10] GRU
                               linear_before_reset / RNN activation (mk_unop) with alpha beta clip at
                               p[11..13], p[16..18] the reverse direction's RNN activation alpha beta */
    MK_OP_ARGMAX = 29,      /* in: s8 or f32 [rows][cols]; out: s32 [rows] */
    MK_OP_PAD = 30,         /* in: x, value (one element); p: before[4] after[4] elem_bytes (stored axes) */
    MK_OP_SLICE = 31,       /* p: begin[4] step[4] (stored axes; output dims from the output tensor) */
    MK_OP_RESIZE_F32 = 32,  /* p: mode (0 nearest, 1 bilinear) coord (0 half_pixel, 1 align_corners, 2 asymmetric) */
    MK_OP_REDUCE_F32 = 33,  /* p: mk_reduce outer axis inner */
    MK_OP_SOFTMAX_LUT_S8 = 34, /* in: x, table (256 floats): TFLite's look-up-table softmax over the last axis */
    MK_OP_LSTM_F32 = 35,     /* as GRU_F32 */
    MK_OP_PRELU_F32 = 36,    /* in: x, slope (1 or C values, C = the innermost dim) */
    MK_OP_RNN_F32 = 37,      /* as GRU_F32 */
    MK_OP_RESIZE_TFL = 38,   /* TFLite resize (any dtype nearest, f32/s8 bilinear); p: bilinear align half_pixel */
    MK_OP_BATCH_MATMUL = 39, /* in: x, w; p: batches m k n adj_x adj_y x_bstride w_bstride, int8: x_zp w_zp
                                out_zp mult shift act_min act_max (p[8..14], TFLite pair) */
    MK_OP_TCONV_F32 = 40,    /* in: x, filter [OC][KH][KW][IC], bias; p as CONV2D_F32 */
    MK_OP_TCONV_S8 = 41,     /* in: x, filter, bias int32, mult; p as CONV2D_S8 with p[11] = 2 (TFLite pairs) */
    MK_OP_REDUCE_S8 = 42,    /* p: mk_reduce outer axis inner mult shift (TFLite pair; max/min: codes) */
    MK_OP_MINMAX_S8 = 43,    /* in: a, b (shared quantization); p: is_max act_min act_max, strides p[5..12] */
    MK_OP_ARGMIN = 44,       /* as ARGMAX (first minimum) */
    MK_OP_GATHER = 45,       /* in: x, indices (s32); p: outer n inner count elem_bytes */
    MK_OP_TILE = 46          /* p: multiples[4] elem_bytes (input dims = the input tensor's) */
};

typedef struct {
    uint32_t op, n_in, n_out;
    uint32_t in[MK_BLOB_MAX_IN];
    uint32_t out;
    int32_t p[MK_BLOB_PARAMS];
    char name[24]; /* the source graph node, NUL-terminated (truncated) */
} mk_blob_layer;

#endif
