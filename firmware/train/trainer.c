/* SPDX-License-Identifier: MIT */
/* Training loop (see mk_trainer.h). SRAM: params | grads | one activation buffer per layer output
 * (plus the input) | two gradient buffers of act_floats, ping-ponged backwards. */
#include "mk_trainer.h"

#include <string.h>

#include "mk/mk_train.h"

static const mk_train_header* hdr(const uint8_t* b) { return (const mk_train_header*)(const void*)b; }
static const mk_train_layer* lay(const uint8_t* b) { return (const mk_train_layer*)(const void*)(b + sizeof(mk_train_header)); }
static uint32_t out_floats(const mk_train_layer* l) { return (uint32_t)(l->out_h * l->out_w * l->out_c); }

uint32_t mk_tr_sram_bytes(const uint8_t* blob) {
    const mk_train_header* h = hdr(blob);
    uint32_t floats = 2u * h->params_floats + h->in_floats + 2u * h->act_floats + h->classes;
    for (uint32_t i = 0; i < h->n_layers; ++i) floats += out_floats(&lay(blob)[i]);
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
        const uint32_t in = (uint32_t)(L[i].in_h * L[i].in_w * L[i].in_c);
        if (out_floats(&L[i]) > h->act_floats || in > h->act_floats) return 1;
        if (L[i].op == MK_TR_DWCONV || L[i].op == MK_TR_FC) {
            const uint32_t wn = L[i].op == MK_TR_FC ? (uint32_t)(L[i].in_c * L[i].out_c) : (uint32_t)(L[i].kh * L[i].kw * L[i].in_c);
            if (L[i].w_param + wn > h->params_floats) return 1;
            if (L[i].b_param != ~0u && L[i].b_param + (uint32_t)L[i].out_c > h->params_floats) return 1;
        }
    }
    return 0;
}

int mk_tr_run(const uint8_t* blob, uint32_t blob_bytes, uint8_t* arena, uint32_t arena_bytes, const mk_tr_hooks* hooks) {
    if (check(blob, blob_bytes)) return MK_TR_BAD_BLOB;
    const mk_train_header* h = hdr(blob);
    const mk_train_layer* L = lay(blob);
    if (mk_tr_sram_bytes(blob) > arena_bytes) return MK_TR_NO_MEMORY;
    float* params = (float*)(void*)arena;
    float* grads = params + h->params_floats;
    float* acts[MK_TRAIN_MAX_LAYERS + 1];
    acts[0] = grads + h->params_floats;
    float* next = acts[0] + h->in_floats;
    for (uint32_t i = 0; i < h->n_layers; ++i) {
        acts[i + 1] = next;
        next += out_floats(&L[i]);
    }
    float* g0 = next;
    float* g1 = g0 + h->act_floats;
    memcpy(params, blob + h->params_off, h->params_floats * 4u);
    memset(grads, 0, h->params_floats * 4u);
    const float* xs = (const float*)(const void*)(blob + h->x_off);
    const int32_t* ys = (const int32_t*)(const void*)(blob + h->y_off);
    for (uint32_t ep = 0; ep < h->epochs; ++ep) {
        const uint64_t c0 = hooks && hooks->cycles ? hooks->cycles() : 0;
        float loss_sum = 0.0f;
        uint32_t correct = 0;
        for (uint32_t s = 0; s < h->n_samples; ++s) {
            memcpy(acts[0], xs + s * h->in_floats, h->in_floats * 4u);
            for (uint32_t i = 0; i < h->n_layers; ++i) { /* forward, keeping every output */
                const mk_train_layer* l = &L[i];
                const mk_shape4 is = {1, l->in_h, l->in_w, l->in_c}, os = {1, l->out_h, l->out_w, l->out_c};
                if (l->op == MK_TR_DWCONV) mk_train_dwconv_fwd(acts[i], is, params + l->w_param, l->kh, l->kw, l->pad_t, l->pad_l, acts[i + 1], os);
                else if (l->op == MK_TR_RELU)
                    for (uint32_t k = 0; k < out_floats(l); ++k) acts[i + 1][k] = acts[i][k] > 0.0f ? acts[i][k] : 0.0f;
                else if (l->op == MK_TR_FC)
                    mk_train_fc_fwd(acts[i], l->in_c, params + l->w_param, l->b_param == ~0u ? 0 : params + l->b_param, l->out_c, acts[i + 1]);
                else memcpy(acts[i + 1], acts[i], out_floats(l) * 4u);
            }
            const float* logits = acts[h->n_layers];
            uint32_t best = 0;
            for (uint32_t k = 1; k < h->classes; ++k) best = logits[k] > logits[best] ? k : best;
            correct += best == (uint32_t)ys[s];
            loss_sum += mk_train_softmax_xent(logits, (int32_t)h->classes, ys[s], g0);
            for (uint32_t i = h->n_layers; i-- > 0;) { /* backward: g0 = dL/d(output of layer i) */
                const mk_train_layer* l = &L[i];
                const mk_shape4 is = {1, l->in_h, l->in_w, l->in_c}, os = {1, l->out_h, l->out_w, l->out_c};
                if (l->op == MK_TR_DWCONV)
                    mk_train_dwconv_bwd(acts[i], is, params + l->w_param, l->kh, l->kw, l->pad_t, l->pad_l, g0, os, g1, grads + l->w_param);
                else if (l->op == MK_TR_RELU) mk_train_relu_bwd(acts[i + 1], g0, g1, (int32_t)out_floats(l));
                else if (l->op == MK_TR_FC)
                    mk_train_fc_bwd(acts[i], l->in_c, params + l->w_param, l->out_c, g0, i > 0 ? g1 : 0, grads + l->w_param,
                                    l->b_param == ~0u ? 0 : grads + l->b_param);
                else memcpy(g1, g0, out_floats(l) * 4u);
                float* t = g0;
                g0 = g1;
                g1 = t;
            }
            mk_train_sgd(params, grads, (int32_t)h->params_floats, h->lr); /* batch 1 (seed 000 FP32 conv: batch 1) */
        }
        const uint64_t c1 = hooks && hooks->cycles ? hooks->cycles() : 0;
        if (hooks && hooks->on_epoch) hooks->on_epoch(hooks->ctx, ep, loss_sum / (float)h->n_samples, correct, c1 - c0);
    }
    return MK_TR_OK;
}
