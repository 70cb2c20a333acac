/* SPDX-License-Identifier: MIT */
/* Blob interpreter (see mk_runtime.h / mcu_blob.h). */
#include "mk_runtime.h"

#include <string.h>

#include "mk/mk_f32.h"
#include "mk/mk_int8.h"
#include "mk/mk_layout.h"

static const mk_blob_header* header(const uint8_t* blob) { return (const mk_blob_header*)(const void*)blob; }
static const mk_blob_tensor* tensors(const uint8_t* blob) {
    return (const mk_blob_tensor*)(const void*)(blob + header(blob)->tensors_off);
}
static const mk_blob_layer* layers(const uint8_t* blob) {
    return (const mk_blob_layer*)(const void*)(blob + header(blob)->layers_off);
}
static const uint32_t* io(const uint8_t* blob) { return (const uint32_t*)(const void*)(blob + header(blob)->io_off); }

void* mk_rt_tensor(const uint8_t* blob, uint8_t* arena, uint32_t idx) {
    const mk_blob_tensor* t = &tensors(blob)[idx];
    return t->storage == MK_ST_CONST ? (void*)(uintptr_t)(blob + t->offset) : (void*)(arena + t->offset);
}

int mk_rt_check(const uint8_t* blob, uint32_t blob_bytes, uint32_t arena_bytes) {
    if (blob_bytes < sizeof(mk_blob_header)) return MK_RT_BAD_BLOB;
    const mk_blob_header* h = header(blob);
    if (h->magic != MK_BLOB_MAGIC || h->version != MK_BLOB_VERSION || h->total_bytes > blob_bytes) return MK_RT_BAD_BLOB;
    if (h->tensors_off + h->n_tensors * sizeof(mk_blob_tensor) > h->total_bytes ||
        h->layers_off + h->n_layers * sizeof(mk_blob_layer) > h->total_bytes ||
        h->io_off + (h->n_inputs + h->n_outputs) * 4u > h->total_bytes)
        return MK_RT_BAD_BLOB;
    if (h->arena_bytes > arena_bytes) return MK_RT_ARENA_TOO_SMALL;
    for (uint32_t i = 0; i < h->n_tensors; ++i) {
        const mk_blob_tensor* t = &tensors(blob)[i];
        const uint32_t limit = t->storage == MK_ST_CONST ? h->total_bytes : h->arena_bytes;
        if (t->offset > limit || t->bytes > limit - t->offset || (t->offset & 3u) != 0) return MK_RT_BAD_BLOB;
    }
    for (uint32_t i = 0; i < h->n_layers; ++i) {
        const mk_blob_layer* l = &layers(blob)[i];
        if (l->n_in > MK_BLOB_MAX_IN || l->out >= h->n_tensors) return MK_RT_BAD_BLOB;
        for (uint32_t k = 0; k < l->n_in; ++k)
            if (l->in[k] >= h->n_tensors) return MK_RT_BAD_BLOB;
    }
    for (uint32_t i = 0; i < h->n_inputs + h->n_outputs; ++i)
        if (io(blob)[i] >= h->n_tensors) return MK_RT_BAD_BLOB;
    return MK_RT_OK;
}

static int32_t mk_elem_bytes(uint32_t dtype) { return dtype == MK_DT_S8 ? 1 : 4; }

static float as_f(int32_t bits) {
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static mk_shape4 shape_of(const mk_blob_tensor* t) {
    mk_shape4 s = {t->dims[0], t->dims[1], t->dims[2], t->dims[3]};
    return s;
}

static mk_bcast4 bcast_of(const mk_blob_layer* l, mk_shape4 out) {
    mk_bcast4 bc;
    bc.out = out;
    for (int i = 0; i < 4; ++i) {
        bc.a_stride[i] = l->p[5 + i];
        bc.b_stride[i] = l->p[9 + i];
    }
    return bc;
}

/* RNN / GRU / LSTM over every direction and batch entry (mcu_blob.h MK_OP_GRU_F32). The tensors the
 * parameters name are checked here (their sizes follow from the dims), as mk_rt_check checks in[]. */
static int recurrent(const uint8_t* blob, uint8_t* arena, const mk_blob_layer* l, const void* const* in, float* y) {
    const mk_blob_tensor* T = tensors(blob);
    const uint32_t nt = header(blob)->n_tensors;
    const int32_t* p = l->p;
    const int32_t H = p[0], D = p[1], mode = p[2], steps = p[3], B = p[4], I = p[5];
    const int32_t G = l->op == MK_OP_RNN_F32 ? 1 : l->op == MK_OP_GRU_F32 ? 3 : 4;
    if (H <= 0 || (D != 1 && D != 2) || mode < 0 || mode > 2 || steps <= 0 || B <= 0 || I <= 0 || l->n_in < 2) return 1;
    const uint32_t need_prm = (uint32_t)(D * G * H * (I + H) + (p[9] ? D * 2 * G * H : 0)) * 4u;
    if (T[l->in[0]].bytes < (uint32_t)(steps * B * I) * 4u || T[l->in[1]].bytes < need_prm ||
        T[l->out].bytes < (uint32_t)(steps * B * H * D) * 4u)
        return 1;
    if (p[6] < 0 || (uint32_t)p[6] >= nt || T[p[6]].bytes < (uint32_t)(9 * H) * 4u) return 1;
    for (int k = 7; k <= 8; ++k)
        if (p[k] != -1 && (p[k] < 0 || (uint32_t)p[k] >= nt || T[p[k]].bytes < (uint32_t)(D * B * H) * 4u)) return 1;
    for (int k = 14; k <= 15; ++k)
        if (p[k] != -1 && (p[k] < 2 || (uint32_t)p[k] >= l->n_in)) return 1;
    const float* prm = (const float*)in[1];
    const float* W = prm;
    const float* R = W + D * G * H * I;
    const float* bias = p[9] ? R + D * G * H * H : 0;
    const float* h0 = p[14] >= 0 ? (const float*)in[p[14]] : 0;
    if (h0 && T[l->in[p[14]]].bytes < (uint32_t)(D * B * H) * 4u) return 1;
    const float* c0 = G == 4 && p[15] >= 0 ? (const float*)in[p[15]] : 0;
    if (c0 && T[l->in[p[15]]].bytes < (uint32_t)(D * B * H) * 4u) return 1;
    const int32_t* lens = G == 1 && p[15] >= 0 ? (const int32_t*)in[p[15]] : 0;
    if (lens && T[l->in[p[15]]].bytes < (uint32_t)B * 4u) return 1;
    float* st = (float*)mk_rt_tensor(blob, arena, (uint32_t)p[6]); /* h (H), c (H), kernel scratch (7H) */
    float* yh = p[7] >= 0 ? (float*)mk_rt_tensor(blob, arena, (uint32_t)p[7]) : 0;
    float* yc = p[8] >= 0 ? (float*)mk_rt_tensor(blob, arena, (uint32_t)p[8]) : 0;
    for (int32_t i = 0; i < steps * B * H * D; ++i) y[i] = 0.0f; /* steps past a sequence's end */
    for (int32_t d = 0; d < D; ++d)
        for (int32_t b = 0; b < B; ++b) {
            const int32_t len = lens ? lens[b] : steps;
            if (len < 0 || len > steps) return 1;
            float *h = st, *c = st + H;
            for (int32_t j = 0; j < H; ++j) {
                h[j] = h0 ? h0[(d * B + b) * H + j] : 0.0f;
                c[j] = c0 ? c0[(d * B + b) * H + j] : 0.0f;
            }
            const mk_rnn_dims dims = {len, I, H, B * I, B * H * D, D, mode == 1 || d == 1};
            const float* x = (const float*)in[0] + b * I;
            float* yb = y + b * H * D + d;
            const float* w = W + d * G * H * I;
            const float* r = R + d * G * H * H;
            const float* bb = bias ? bias + d * 2 * G * H : 0;
            if (G == 1) {
                const mk_unop act = (mk_unop)(d == 0 ? p[10] : p[16]);
                if ((int32_t)act < 0 || act > MK_UN_SOFTPLUS) return 1;
                mk_rnn_f32(x, &dims, w, r, bb, act, as_f(d == 0 ? p[11] : p[17]), as_f(d == 0 ? p[12] : p[18]), as_f(p[13]), h, yb,
                           st + 2 * H);
            } else if (G == 3) {
                mk_gru_f32(x, &dims, w, r, bb, p[10], h, yb, st + 2 * H);
            } else {
                mk_lstm_f32(x, &dims, w, r, bb, h, c, yb, st + 2 * H);
            }
            for (int32_t j = 0; j < H; ++j) { /* no step ran: Y_h and Y_c are 0 (as the reference) */
                if (yh) yh[(d * B + b) * H + j] = len > 0 ? h[j] : 0.0f;
                if (yc) yc[(d * B + b) * H + j] = len > 0 ? c[j] : 0.0f;
            }
        }
    return 0;
}

/* Runs one layer; returns 0 on success. */
static int run_layer(const uint8_t* blob, uint8_t* arena, const mk_blob_layer* l) {
    const mk_blob_tensor* T = tensors(blob);
    const mk_blob_tensor* to = &T[l->out];
    const mk_blob_tensor* t0 = &T[l->in[0]];
    void* out = mk_rt_tensor(blob, arena, l->out);
    const void* in[MK_BLOB_MAX_IN] = {0, 0, 0, 0};
    for (uint32_t k = 0; k < l->n_in; ++k) in[k] = mk_rt_tensor(blob, arena, l->in[k]);
    const int32_t* p = l->p;
    const mk_shape4 is = shape_of(t0), os = shape_of(to);
    const int32_t count = mk_shape4_numel(os);
    switch (l->op) {
        case MK_OP_CONV2D_S8:
        case MK_OP_DWCONV_S8: {
            mk_conv_s8_params cp;
            cp.stride_h = p[0]; cp.stride_w = p[1]; cp.dil_h = p[2]; cp.dil_w = p[3];
            cp.pad_top = p[4]; cp.pad_left = p[5];
            cp.in_zp = t0->zero_point; cp.out_zp = to->zero_point;
            cp.act_min = p[8]; cp.act_max = p[9];
            /* p[11] = 1: float requantization, in[3] holds the float scales; else Q31 mult + shift. */
            cp.mult = (const int32_t*)in[3];
            cp.shift = p[11] ? 0 : (const int32_t*)mk_rt_tensor(blob, arena, (uint32_t)p[10]);
            cp.fscale = p[11] == 1 ? (const float*)in[3] : 0;
            cp.tfl = p[11] == 2; /* TFLite multiplier/exponent pairs */
            if (cp.tfl) cp.shift = (const int32_t*)mk_rt_tensor(blob, arena, (uint32_t)p[10]);
            if (l->op == MK_OP_CONV2D_S8)
                mk_conv2d_s8((const int8_t*)in[0], is, (const int8_t*)in[1], p[6], p[7], (const int32_t*)in[2],
                             (int8_t*)out, os, &cp);
            else
                mk_depthwise_conv2d_s8((const int8_t*)in[0], is, (const int8_t*)in[1], p[6], p[7],
                                       (const int32_t*)in[2], (int8_t*)out, os, &cp);
            return 0;
        }
        case MK_OP_FC_S8: {
            const int32_t n = os.c, m = count / n, k = mk_shape4_numel(is) / m;
            mk_fully_connected_s8((const int8_t*)in[0], m, k, (const int8_t*)in[1], n, (const int32_t*)in[2],
                                  (int8_t*)out, t0->zero_point, to->zero_point, (const int32_t*)in[3],
                                  p[3] == 1 ? 0 : (const int32_t*)mk_rt_tensor(blob, arena, (uint32_t)p[2]),
                                  p[3] == 1 ? (const float*)in[3] : 0, p[0], p[1], p[3] == 2);
            return 0;
        }
        case MK_OP_ADD_S8:
        case MK_OP_MUL_S8: {
            mk_eltwise_s8_params ep;
            memset(&ep, 0, sizeof ep);
            const mk_bcast4 bc = bcast_of(l, os);
            ep.a_zp = t0->zero_point; ep.b_zp = T[l->in[1]].zero_point; ep.out_zp = to->zero_point;
            if (l->op == MK_OP_ADD_S8 && p[13]) { /* TFLite: p[14..19] = ta, tb, out (multiplier, exponent) */
                ep.tfl = 1; ep.sub = p[13] == 2; ep.act_min = p[3]; ep.act_max = p[4];
                ep.ta.multiplier = p[14]; ep.ta.shift = p[15]; ep.tb.multiplier = p[16]; ep.tb.shift = p[17];
                ep.out.multiplier = p[18]; ep.out.shift = p[19];
                mk_add_s8((const int8_t*)in[0], (const int8_t*)in[1], (int8_t*)out, &bc, &ep);
            } else if (l->op == MK_OP_ADD_S8) {
                ep.a_mult = p[0]; ep.b_mult = p[1]; ep.left = p[2]; ep.act_min = p[3]; ep.act_max = p[4];
                mk_add_s8((const int8_t*)in[0], (const int8_t*)in[1], (int8_t*)out, &bc, &ep);
            } else {
                ep.out.multiplier = p[0]; ep.out.shift = p[1]; ep.act_min = p[2]; ep.act_max = p[3];
                ep.tfl = p[13] != 0;
                mk_mul_s8((const int8_t*)in[0], (const int8_t*)in[1], (int8_t*)out, &bc, &ep);
            }
            return 0;
        }
        case MK_OP_MAXPOOL_S8:
        case MK_OP_AVGPOOL_S8:
        case MK_OP_MAXPOOL_F32:
        case MK_OP_AVGPOOL_F32: {
            const mk_pool_params pp = {p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8]};
            if (l->op == MK_OP_MAXPOOL_S8) mk_max_pool_s8((const int8_t*)in[0], is, (int8_t*)out, os, &pp);
            else if (l->op == MK_OP_AVGPOOL_S8) mk_avg_pool_s8((const int8_t*)in[0], is, (int8_t*)out, os, &pp);
            else if (l->op == MK_OP_MAXPOOL_F32) mk_max_pool_f32((const float*)in[0], is, (float*)out, os, &pp);
            else mk_avg_pool_f32((const float*)in[0], is, (float*)out, os, &pp);
            return 0;
        }
        case MK_OP_CLAMP_S8: mk_clamp_s8((const int8_t*)in[0], (int8_t*)out, count, p[0], p[1]); return 0;
        case MK_OP_LUT_S8: mk_lut_s8((const int8_t*)in[0], (int8_t*)out, count, (const int8_t*)in[1]); return 0;
        case MK_OP_SOFTMAX_S8:
            mk_softmax_s8((const int8_t*)in[0], (int8_t*)out, count / os.c, os.c, t0->scale, t0->zero_point, to->scale,
                          to->zero_point, p[0], (float*)mk_rt_tensor(blob, arena, (uint32_t)p[1]));
            return 0;
        case MK_OP_GAP_S8: {
            const mk_qscale s = {p[0], p[1]};
            mk_global_avg_pool_s8((const int8_t*)in[0], is, (int8_t*)out, t0->zero_point, to->zero_point, s, as_f(p[2]), p[3]);
            return 0;
        }
        case MK_OP_QUANTIZE: /* p[0] = 1: TFLite rounding (half away from zero) */
            if (p[0]) mk_quantize_f32_s8_away((const float*)in[0], (int8_t*)out, count, to->scale, to->zero_point);
            else mk_quantize_f32_s8((const float*)in[0], (int8_t*)out, count, to->scale, to->zero_point);
            return 0;
        case MK_OP_SOFTMAX_LUT_S8:
            mk_softmax_s8_lut((const int8_t*)in[0], (int8_t*)out, count / os.c, os.c, (const float*)in[1], to->scale,
                              to->zero_point);
            return 0;
        case MK_OP_DEQUANTIZE:
            mk_dequantize_s8_f32((const int8_t*)in[0], (float*)out, count, t0->scale, t0->zero_point);
            return 0;
        case MK_OP_COPY: /* p[0]: byte offset into the input (GRU Y_h = last step of Y) */
            if (out != in[0]) memmove(out, (const uint8_t*)in[0] + p[0], to->bytes);
            return 0;
        case MK_OP_TRANSPOSE: {
            const int32_t perm[4] = {p[0], p[1], p[2], p[3]};
            mk_transpose4(in[0], t0->dims, perm, (size_t)p[4], out);
            return 0;
        }
        case MK_OP_PAD: {
            const int32_t before[4] = {p[0], p[1], p[2], p[3]}, after[4] = {p[4], p[5], p[6], p[7]};
            mk_pad4(in[0], t0->dims, before, after, in[1], (size_t)p[8], out);
            return 0;
        }
        case MK_OP_SLICE: {
            const int32_t begin[4] = {p[0], p[1], p[2], p[3]}, step[4] = {p[4], p[5], p[6], p[7]};
            mk_slice4(in[0], t0->dims, begin, step, to->dims, (size_t)mk_elem_bytes(t0->dtype), out);
            return 0;
        }
        case MK_OP_RESIZE_F32: mk_resize_f32((const float*)in[0], is, (float*)out, os, p[0], p[1]); return 0;
        case MK_OP_REDUCE_F32: mk_reduce_f32((mk_reduce)p[0], (const float*)in[0], (float*)out, p[1], p[2], p[3]); return 0;
        case MK_OP_CONCAT: {
            int32_t sizes[MK_BLOB_MAX_IN];
            for (uint32_t k = 0; k < l->n_in; ++k) sizes[k] = p[3 + k];
            mk_concat(in, sizes, (int32_t)l->n_in, p[0], p[1], (size_t)p[2], out);
            return 0;
        }
        case MK_OP_CONV2D_F32:
        case MK_OP_DWCONV_F32: {
            mk_conv_f32_params cp;
            cp.stride_h = p[0]; cp.stride_w = p[1]; cp.dil_h = p[2]; cp.dil_w = p[3];
            cp.pad_top = p[4]; cp.pad_left = p[5];
            cp.act_min = as_f(p[8]); cp.act_max = as_f(p[9]);
            if (l->op == MK_OP_CONV2D_F32)
                mk_conv2d_f32((const float*)in[0], is, (const float*)in[1], p[6], p[7], (const float*)in[2],
                              (float*)out, os, &cp);
            else
                mk_depthwise_conv2d_f32((const float*)in[0], is, (const float*)in[1], p[6], p[7], (const float*)in[2],
                                        (float*)out, os, &cp);
            return 0;
        }
        case MK_OP_FC_F32: {
            const int32_t n = os.c, m = count / n, k = mk_shape4_numel(is) / m;
            mk_fully_connected_f32((const float*)in[0], m, k, (const float*)in[1], n,
                                   l->n_in > 2 ? (const float*)in[2] : 0, (float*)out, as_f(p[0]), as_f(p[1]));
            return 0;
        }
        case MK_OP_BINARY_F32: {
            const mk_bcast4 bc = bcast_of(l, os);
            mk_binary_f32((mk_binop)p[0], (const float*)in[0], (const float*)in[1], (float*)out, &bc);
            return 0;
        }
        case MK_OP_UNARY_F32:
            mk_unary_f32((mk_unop)p[0], (const float*)in[0], (float*)out, count, as_f(p[1]), as_f(p[2]));
            return 0;
        case MK_OP_SOFTMAX_F32: mk_softmax_f32((const float*)in[0], (float*)out, count / os.c, os.c, p[0]); return 0;
        case MK_OP_GRU_F32:
        case MK_OP_LSTM_F32:
        case MK_OP_RNN_F32: return recurrent(blob, arena, l, in, (float*)out);
        case MK_OP_PRELU_F32:
            mk_prelu_f32((const float*)in[0], (float*)out, count, os.c, (const float*)in[1], (int32_t)(T[l->in[1]].bytes / 4));
            return 0;
        case MK_OP_RESIZE_TFL:
            if (p[0] == 0) mk_resize_nearest_tfl(in[0], is, out, os, mk_elem_bytes(t0->dtype), p[1], p[2]);
            else if (t0->dtype == MK_DT_S8) mk_resize_bilinear_tfl_s8((const int8_t*)in[0], is, (int8_t*)out, os, p[1], p[2]);
            else mk_resize_bilinear_tfl_f32((const float*)in[0], is, (float*)out, os, p[1], p[2]);
            return 0;
        case MK_OP_BATCH_MATMUL: {
            const mk_bmm_dims d = {p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]};
            if (d.batches <= 0 || d.m <= 0 || d.k <= 0 || d.n <= 0 || d.x_batch_stride < 0 || d.w_batch_stride < 0) return 1;
            const uint32_t el = (uint32_t)mk_elem_bytes(t0->dtype);
            if (to->bytes < (uint32_t)(d.batches * d.m * d.n) * el ||
                t0->bytes < (uint32_t)((d.batches - 1) * d.x_batch_stride + d.m * d.k) * el ||
                T[l->in[1]].bytes < (uint32_t)((d.batches - 1) * d.w_batch_stride + d.k * d.n) * el)
                return 1;
            if (t0->dtype == MK_DT_S8)
                mk_batch_matmul_s8((const int8_t*)in[0], (const int8_t*)in[1], (int8_t*)out, &d, p[8], p[9], p[10], p[11], p[12], p[13], p[14]);
            else
                mk_batch_matmul_f32((const float*)in[0], (const float*)in[1], (float*)out, &d);
            return 0;
        }
        case MK_OP_TCONV_F32: {
            mk_conv_f32_params cp;
            cp.stride_h = p[0]; cp.stride_w = p[1]; cp.dil_h = p[2]; cp.dil_w = p[3];
            cp.pad_top = p[4]; cp.pad_left = p[5];
            cp.act_min = as_f(p[8]); cp.act_max = as_f(p[9]);
            if (cp.stride_h <= 0 || cp.stride_w <= 0 || cp.dil_h <= 0 || cp.dil_w <= 0 || l->n_in < 3 || p[6] <= 0 || p[7] <= 0 ||
                T[l->in[1]].bytes < (uint32_t)(os.c * p[6] * p[7] * is.c) * 4u || T[l->in[2]].bytes < (uint32_t)os.c * 4u)
                return 1;
            mk_transpose_conv_f32((const float*)in[0], is, (const float*)in[1], p[6], p[7], (const float*)in[2], (float*)out, os, &cp);
            return 0;
        }
        case MK_OP_TCONV_S8: {
            mk_conv_s8_params cp;
            memset(&cp, 0, sizeof cp);
            cp.stride_h = p[0]; cp.stride_w = p[1]; cp.dil_h = p[2]; cp.dil_w = p[3];
            cp.pad_top = p[4]; cp.pad_left = p[5];
            cp.in_zp = t0->zero_point; cp.out_zp = to->zero_point;
            cp.act_min = p[8]; cp.act_max = p[9];
            if (cp.stride_h <= 0 || cp.stride_w <= 0 || cp.dil_h <= 0 || cp.dil_w <= 0 || p[10] < 0 || l->n_in < 4 || p[6] <= 0 ||
                p[7] <= 0 || T[l->in[1]].bytes < (uint32_t)(os.c * p[6] * p[7] * is.c) || T[l->in[2]].bytes < (uint32_t)os.c * 4u ||
                (uint32_t)p[10] >= header(blob)->n_tensors || T[p[10]].bytes < (uint32_t)os.c * 4u || T[l->in[3]].bytes < (uint32_t)os.c * 4u)
                return 1;
            cp.mult = (const int32_t*)in[3];
            cp.shift = (const int32_t*)mk_rt_tensor(blob, arena, (uint32_t)p[10]);
            cp.tfl = 1;
            mk_transpose_conv_s8((const int8_t*)in[0], is, (const int8_t*)in[1], p[6], p[7], (const int32_t*)in[2], (int8_t*)out, os, &cp);
            return 0;
        }
        case MK_OP_ARGMAX:
        case MK_OP_ARGMIN: {
            const int mn = l->op == MK_OP_ARGMIN;
            const int32_t cols = is.c, rows = mk_shape4_numel(is) / cols;
            if (t0->dtype == MK_DT_S8) (mn ? mk_argmin_s8 : mk_argmax_s8)((const int8_t*)in[0], rows, cols, (int32_t*)out);
            else (mn ? mk_argmin_f32 : mk_argmax_f32)((const float*)in[0], (int32_t*)out, rows, cols, 1);
            return 0;
        }
        case MK_OP_REDUCE_S8: /* the sizes the loops read and write, from p */
            if (p[0] < MK_RED_MEAN || p[0] > MK_RED_MIN || p[1] <= 0 || p[2] <= 0 || p[3] <= 0 ||
                (uint64_t)p[1] * (uint64_t)p[2] * (uint64_t)p[3] > t0->bytes || (uint64_t)p[1] * (uint64_t)p[3] > to->bytes)
                return 1;
            mk_reduce_s8(p[0], (const int8_t*)in[0], (int8_t*)out, p[1], p[2], p[3], t0->zero_point, to->zero_point, p[4], p[5]);
            return 0;
        case MK_OP_GATHER: { /* sizes from p and every index checked: a corrupt blob must not read past x */
            const uint64_t row = (uint64_t)(p[2] > 0 ? p[2] : 0) * (uint64_t)(p[4] > 0 ? p[4] : 0);
            if (p[0] <= 0 || p[1] <= 0 || p[2] <= 0 || p[3] <= 0 || (p[4] != 1 && p[4] != 4) || l->n_in < 2 ||
                (uint64_t)p[0] * (uint64_t)p[1] * row > t0->bytes || (uint64_t)p[0] * (uint64_t)p[3] * row > to->bytes ||
                T[l->in[1]].bytes < (uint32_t)p[3] * 4u)
                return 1;
            const int32_t* idx = (const int32_t*)in[1];
            for (int32_t k = 0; k < p[3]; ++k)
                if (idx[k] < 0 || idx[k] >= p[1]) return 1;
            mk_gather(in[0], p[0], p[1], p[2], idx, p[3], (size_t)p[4], out);
            return 0;
        }
        case MK_OP_TILE: {
            const int32_t mult[4] = {p[0], p[1], p[2], p[3]};
            for (int k = 0; k < 4; ++k)
                if (mult[k] <= 0 || t0->dims[k] <= 0 || (int64_t)t0->dims[k] * mult[k] != (int64_t)to->dims[k]) return 1;
            if ((p[4] != 1 && p[4] != 4) || (uint64_t)mk_shape4_numel(os) * (uint64_t)p[4] > to->bytes ||
                (uint64_t)mk_shape4_numel(is) * (uint64_t)p[4] > t0->bytes)
                return 1;
            mk_tile4(in[0], t0->dims, mult, (size_t)p[4], out);
            return 0;
        }
        case MK_OP_MINMAX_S8: {
            const mk_bcast4 bc = bcast_of(l, os);
            mk_minmax_s8((const int8_t*)in[0], (const int8_t*)in[1], (int8_t*)out, &bc, p[0], p[1], p[2]);
            return 0;
        }
        default: return 1;
    }
}

int mk_rt_run(const uint8_t* blob, uint8_t* arena, uint32_t arena_bytes, const mk_rt_hooks* hooks,
              uint32_t* bad_layer) {
    (void)arena_bytes;
    const mk_blob_header* h = header(blob);
    const mk_blob_tensor* T = tensors(blob);
    for (uint32_t i = 0; i < h->n_inputs; ++i) {
        const mk_blob_tensor* t = &T[io(blob)[i]];
        if (t->storage == MK_ST_ARENA && t->init_off != 0) memcpy(arena + t->offset, blob + t->init_off, t->bytes);
    }
    for (uint32_t i = 0; i < h->n_layers; ++i) {
        const mk_blob_layer* l = &layers(blob)[i];
        const uint64_t c0 = hooks && hooks->cycles ? hooks->cycles() : 0;
        const uint64_t i0 = hooks && hooks->instret ? hooks->instret() : 0;
        if (run_layer(blob, arena, l) != 0) {
            if (bad_layer) *bad_layer = i;
            return MK_RT_BAD_LAYER;
        }
        const uint64_t c1 = hooks && hooks->cycles ? hooks->cycles() : 0;
        const uint64_t i1 = hooks && hooks->instret ? hooks->instret() : 0;
        if (hooks && hooks->on_layer) hooks->on_layer(hooks->ctx, i, l, c1 - c0, i1 - i0);
    }
    return MK_RT_OK;
}
