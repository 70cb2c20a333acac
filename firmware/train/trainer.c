/* SPDX-License-Identifier: MIT */
/* Training loop (see mk_trainer.h). SRAM: params | grads | every tensor (sample and layer outputs) |
 * the gradient of every tensor | one scratch tensor. Backward walks the layers in reverse and
 * accumulates each input's gradient (a tensor read by two layers gets both contributions). */
#include "mk_trainer.h"

#include <string.h>

#include "mk/mk_layout.h"
#include "mk/mk_train.h"

static const mk_train_header* hdr(const uint8_t* b) { return (const mk_train_header*)(const void*)b; }
static const mk_train_layer* lay(const uint8_t* b) { return (const mk_train_layer*)(const void*)(b + sizeof(mk_train_header)); }
static uint32_t out_floats(const mk_train_layer* l) { return (uint32_t)(l->out_h * l->out_w * l->out_c); }
static uint32_t in_floats(const mk_train_layer* l) { return (uint32_t)(l->in_h * l->in_w * l->in_c); }

uint32_t mk_tr_sram_bytes(const uint8_t* blob) {
    const mk_train_header* h = hdr(blob);
    if (h->magic == MK_TRAIN_MAGIC_QAS) return mk_tr_qas_sram_bytes(blob);
    uint32_t floats = 2u * h->params_floats + 2u * h->in_floats + 2u * h->act_floats; /* + 2 x every output below */
    for (uint32_t i = 0; i < h->n_layers && i < MK_TRAIN_MAX_LAYERS; ++i) floats += 2u * out_floats(&lay(blob)[i]);
    return floats * 4u;
}

static int check(const uint8_t* blob, uint32_t bytes) {
    const mk_train_header* h = hdr(blob);
    if (bytes < sizeof(*h) || h->magic != MK_TRAIN_MAGIC || h->total_bytes > bytes || h->n_layers == 0 ||
        h->n_layers > MK_TRAIN_MAX_LAYERS || sizeof(*h) + h->n_layers * sizeof(mk_train_layer) > h->total_bytes)
        return 1;
    if (h->params_off + h->params_floats * 4u > h->total_bytes || h->x_off + h->n_samples * h->in_floats * 4u > h->total_bytes ||
        h->y_off + h->n_samples * 4u > h->total_bytes)
        return 1;
    const mk_train_layer* L = lay(blob);
    if (out_floats(&L[h->n_layers - 1]) != h->classes) return 1;
    for (uint32_t i = 0; i < h->n_layers; ++i) {
        const mk_train_layer* l = &L[i];
        if (l->in0 > i || (l->in1 != ~0u && l->in1 > i)) return 1; /* inputs must be earlier tensors */
        if (out_floats(l) > h->act_floats || in_floats(l) > h->act_floats) return 1;
        if (l->op == MK_TR_SLICE || l->op == MK_TR_TRANSPOSE || l->op == MK_TR_EWB) {
            const int32_t od[4] = {1, l->out_h, l->out_w, l->out_c}, id[4] = {1, l->in_h, l->in_w, l->in_c};
            int32_t seen = 0;
            for (int k = 0; k < 4; ++k) {
                if (l->op == MK_TR_SLICE && (l->q[k] < 0 || l->q[4 + k] <= 0 || l->q[k] + (od[k] - 1) * l->q[4 + k] >= id[k])) return 1;
                if (l->op == MK_TR_TRANSPOSE && (l->p[k] < 0 || l->p[k] > 3 || od[k] != id[l->p[k]] || (seen & (1 << l->p[k])))) return 1;
                if (l->op == MK_TR_TRANSPOSE) seen |= 1 << l->p[k];
            }
            if (l->op == MK_TR_EWB) {
                uint32_t ma = 0, mb = 0;
                if (l->in1 == ~0u) return 1;
                for (int k = 0; k < 4; ++k) {
                    if (l->q[k] < 0 || l->q[4 + k] < 0) return 1;
                    ma += (uint32_t)((od[k] - 1) * l->q[k]);
                    mb += (uint32_t)((od[k] - 1) * l->q[4 + k]);
                }
                const uint32_t sa = l->in0 == 0 ? h->in_floats : out_floats(&L[l->in0 - 1]);
                const uint32_t sb = l->in1 == 0 ? h->in_floats : out_floats(&L[l->in1 - 1]);
                if (ma >= sa || mb >= sb) return 1;
            }
        }
        if (l->op == MK_TR_DWCONV || l->op == MK_TR_FC) {
            const uint32_t wn = l->op == MK_TR_FC ? (uint32_t)(l->in_c * l->out_c) : (uint32_t)(l->p[0] * l->p[1] * l->in_c);
            if (l->w_param + wn > h->params_floats) return 1;
            if (l->b_param != ~0u && l->b_param + (uint32_t)l->out_c > h->params_floats) return 1;
        }
    }
    return 0;
}

static void add_into(float* dst, const float* src, uint32_t n) {
    for (uint32_t i = 0; i < n; ++i) dst[i] += src[i];
}

int mk_tr_run(const uint8_t* blob, uint32_t blob_bytes, uint8_t* arena, uint32_t arena_bytes, const mk_tr_hooks* hooks) {
    if (blob_bytes >= sizeof(mk_train_header) && hdr(blob)->magic == MK_TRAIN_MAGIC_QAS)
        return mk_tr_qas_run(blob, blob_bytes, arena, arena_bytes, hooks);
    if (check(blob, blob_bytes)) return MK_TR_BAD_BLOB;
    const mk_train_header* h = hdr(blob);
    const mk_train_layer* L = lay(blob);
    if (mk_tr_sram_bytes(blob) > arena_bytes) return MK_TR_NO_MEMORY;
    const uint32_t nt = h->n_layers + 1;
    float* params = (float*)(void*)arena;
    float* grads = params + h->params_floats;
    float* act[MK_TRAIN_MAX_LAYERS + 1];
    float* gact[MK_TRAIN_MAX_LAYERS + 1];
    uint32_t size[MK_TRAIN_MAX_LAYERS + 1];
    float* next = grads + h->params_floats;
    size[0] = h->in_floats;
    for (uint32_t i = 0; i < h->n_layers; ++i) size[i + 1] = out_floats(&L[i]);
    for (uint32_t t = 0; t < nt; ++t) { act[t] = next; next += size[t]; }
    for (uint32_t t = 0; t < nt; ++t) { gact[t] = next; next += size[t]; }
    float* scratch = next;
    memcpy(params, blob + h->params_off, h->params_floats * 4u);
    memset(grads, 0, h->params_floats * 4u);
    const float* xs = (const float*)(const void*)(blob + h->x_off);
    const int32_t* ys = (const int32_t*)(const void*)(blob + h->y_off);
    for (uint32_t ep = 0; ep < h->epochs; ++ep) {
        const uint64_t c0 = hooks && hooks->cycles ? hooks->cycles() : 0;
        float loss_sum = 0.0f;
        uint32_t correct = 0;
        for (uint32_t s = 0; s < h->n_samples; ++s) {
            memcpy(act[0], xs + s * h->in_floats, h->in_floats * 4u);
            for (uint32_t i = 0; i < h->n_layers; ++i) { /* forward, keeping every tensor */
                const mk_train_layer* l = &L[i];
                const float* a = act[l->in0];
                const float* b = l->in1 != ~0u ? act[l->in1] : 0;
                float* y = act[i + 1];
                const uint32_t n = out_floats(l);
                const mk_shape4 is = {1, l->in_h, l->in_w, l->in_c}, os = {1, l->out_h, l->out_w, l->out_c};
                switch (l->op) {
                    case MK_TR_DWCONV: mk_train_dwconv_fwd(a, is, params + l->w_param, l->p[0], l->p[1], l->p[2], l->p[3], y, os); break;
                    case MK_TR_RELU: for (uint32_t k = 0; k < n; ++k) y[k] = a[k] > 0.0f ? a[k] : 0.0f; break;
                    case MK_TR_FC: mk_train_fc_fwd(a, l->in_c, params + l->w_param, l->b_param == ~0u ? 0 : params + l->b_param, l->out_c, y); break;
                    case MK_TR_EW:
                        for (uint32_t k = 0; k < n; ++k)
                            y[k] = l->p[0] == MK_TR_EW_ADD ? a[k] + b[k] : l->p[0] == MK_TR_EW_SUB ? a[k] - b[k] : l->p[0] == MK_TR_EW_MUL ? a[k] * b[k] : a[k] / b[k];
                        break;
                    case MK_TR_ABS: for (uint32_t k = 0; k < n; ++k) y[k] = a[k] < 0.0f ? -a[k] : a[k]; break;
                    case MK_TR_CONCAT:
                        for (int32_t o = 0; o < l->p[0]; ++o) {
                            memcpy(y + o * (l->p[1] + l->p[2]) * l->p[3], a + o * l->p[1] * l->p[3], (uint32_t)(l->p[1] * l->p[3]) * 4u);
                            memcpy(y + (o * (l->p[1] + l->p[2]) + l->p[1]) * l->p[3], b + o * l->p[2] * l->p[3], (uint32_t)(l->p[2] * l->p[3]) * 4u);
                        }
                        break;
                    case MK_TR_PAD:
                        for (uint32_t k = 0; k < n; ++k) y[k] = 0.0f;
                        for (int32_t yy = 0; yy < l->in_h; ++yy)
                            memcpy(y + ((yy + l->p[0]) * l->out_w + l->p[1]) * l->out_c, a + yy * l->in_w * l->in_c, (uint32_t)(l->in_w * l->in_c) * 4u);
                        break;
                    case MK_TR_REDUCE:
                        for (int32_t o = 0; o < l->p[1]; ++o)
                            for (int32_t k = 0; k < l->p[3]; ++k) {
                                float acc = 0.0f;
                                for (int32_t r = 0; r < l->p[2]; ++r) acc += a[(o * l->p[2] + r) * l->p[3] + k];
                                y[o * l->p[3] + k] = l->p[0] ? acc / (float)l->p[2] : acc;
                            }
                        break;
                    case MK_TR_SLICE: {
                        const int32_t xd[4] = {1, l->in_h, l->in_w, l->in_c}, yd[4] = {1, l->out_h, l->out_w, l->out_c};
                        mk_slice4(a, xd, l->q, l->q + 4, yd, 4, y);
                        break;
                    }
                    case MK_TR_TRANSPOSE: {
                        const int32_t xd[4] = {1, l->in_h, l->in_w, l->in_c};
                        mk_transpose4(a, xd, l->p, 4, y);
                        break;
                    }
                    case MK_TR_EWB: {
                        mk_bcast4 bc;
                        bc.out = os;
                        for (int k = 0; k < 4; ++k) bc.a_stride[k] = l->q[k], bc.b_stride[k] = l->q[4 + k];
                        mk_train_binary_bcast_fwd((mk_tr_ew)l->p[0], a, b, &bc, y);
                        break;
                    }
                    default: memcpy(y, a, n * 4u); break; /* FLATTEN */
                }
            }
            const float* logits = act[h->n_layers];
            uint32_t best = 0;
            for (uint32_t k = 1; k < h->classes; ++k) best = logits[k] > logits[best] ? k : best;
            correct += best == (uint32_t)ys[s];
            for (uint32_t t = 0; t < nt; ++t) memset(gact[t], 0, size[t] * 4u);
            loss_sum += mk_train_softmax_xent(logits, (int32_t)h->classes, ys[s], gact[h->n_layers]);
            for (uint32_t i = h->n_layers; i-- > 0;) { /* backward: accumulate into the inputs' gradients */
                const mk_train_layer* l = &L[i];
                const float* g = gact[i + 1];
                const uint32_t na = in_floats(l);
                const mk_shape4 is = {1, l->in_h, l->in_w, l->in_c}, os = {1, l->out_h, l->out_w, l->out_c};
                float* ga = gact[l->in0];
                switch (l->op) {
                    case MK_TR_DWCONV:
                        mk_train_dwconv_bwd(act[l->in0], is, params + l->w_param, l->p[0], l->p[1], l->p[2], l->p[3], g, os, scratch, grads + l->w_param);
                        add_into(ga, scratch, na);
                        break;
                    case MK_TR_RELU: mk_train_relu_bwd(act[i + 1], g, scratch, (int32_t)na); add_into(ga, scratch, na); break;
                    case MK_TR_FC:
                        mk_train_fc_bwd(act[l->in0], l->in_c, params + l->w_param, l->out_c, g, scratch, grads + l->w_param,
                                        l->b_param == ~0u ? 0 : grads + l->b_param);
                        add_into(ga, scratch, na);
                        break;
                    case MK_TR_EW: {
                        float* gb = gact[l->in1];
                        float* sb = scratch + na;
                        mk_train_eltwise_bwd((mk_tr_ew)l->p[0], act[l->in0], act[l->in1], g, (int32_t)na, scratch, sb);
                        add_into(ga, scratch, na);
                        add_into(gb, sb, na);
                        break;
                    }
                    case MK_TR_ABS: mk_train_abs_bwd(act[l->in0], g, scratch, (int32_t)na); add_into(ga, scratch, na); break;
                    case MK_TR_CONCAT: {
                        float* gb = gact[l->in1];
                        const uint32_t nb = (uint32_t)(l->p[0] * l->p[2] * l->p[3]);
                        mk_train_concat2_bwd(g, l->p[0], l->p[1], l->p[2], l->p[3], scratch, scratch + na);
                        add_into(ga, scratch, na);
                        add_into(gb, scratch + na, nb);
                        break;
                    }
                    case MK_TR_PAD: {
                        const int32_t xd[4] = {1, l->in_h, l->in_w, l->in_c}, yd[4] = {1, l->out_h, l->out_w, l->out_c};
                        const int32_t before[4] = {0, l->p[0], l->p[1], 0};
                        mk_train_pad4_bwd(xd, before, yd, g, scratch);
                        add_into(ga, scratch, na);
                        break;
                    }
                    case MK_TR_REDUCE: mk_train_reduce_bwd(l->p[0], g, l->p[1], l->p[2], l->p[3], scratch); add_into(ga, scratch, na); break;
                    case MK_TR_SLICE: {
                        const int32_t xd[4] = {1, l->in_h, l->in_w, l->in_c}, yd[4] = {1, l->out_h, l->out_w, l->out_c};
                        mk_train_slice4_bwd(xd, l->q, l->q + 4, yd, g, scratch);
                        add_into(ga, scratch, na);
                        break;
                    }
                    case MK_TR_TRANSPOSE: {
                        const int32_t xd[4] = {1, l->in_h, l->in_w, l->in_c};
                        mk_train_transpose4_bwd(xd, l->p, g, scratch);
                        add_into(ga, scratch, na);
                        break;
                    }
                    case MK_TR_EWB: { /* accumulates straight into both inputs' gradients (sums over broadcast axes) */
                        mk_bcast4 bc;
                        bc.out = os;
                        for (int k = 0; k < 4; ++k) bc.a_stride[k] = l->q[k], bc.b_stride[k] = l->q[4 + k];
                        mk_train_binary_bcast_bwd((mk_tr_ew)l->p[0], act[l->in0], act[l->in1], g, &bc, ga, gact[l->in1]);
                        break;
                    }
                    default: add_into(ga, g, na); break; /* FLATTEN */
                }
            }
            mk_train_sgd(params, grads, (int32_t)h->params_floats, h->lr); /* batch 1 (seed 000 FP32 conv: batch 1) */
        }
        const uint64_t c1 = hooks && hooks->cycles ? hooks->cycles() : 0;
        if (hooks && hooks->on_epoch) hooks->on_epoch(hooks->ctx, ep, loss_sum / (float)h->n_samples, correct, c1 - c0);
    }
    return MK_TR_OK;
}
