/* SPDX-License-Identifier: MIT */
/* QAS INT8 training loop (mk_train_blob.h, MK_TRAIN_MAGIC_QAS; called by mk_tr_run). SRAM:
 *   master codes | their gradients | int8 weight codes | int32 bias codes | the codes of every tensor |
 *   the real-valued gradient of every tensor | scratch (largest tensor) | requantization scales
 * Forward: the inference kernels on codes (float requantization x_scale * w_scale / y_scale). Loss:
 * softmax cross-entropy of the dequantized logits. Backward on real values: the straight-through
 * estimator of each output's rounding (no gradient where the code saturated at its activation range),
 * then the QAS backward kernels (input gradient real, code gradients scaled by s^-2). Update: SGD on
 * the master codes, rounded to the int8 / int32 codes for the next forward pass. */
#include <string.h>

#include "mk/mk_f32.h"
#include "mk/mk_int8.h"
#include "mk/mk_layout.h"
#include "mk/mk_train.h"
#include "mk_trainer.h"

static const mk_train_header* hdr(const uint8_t* b) { return (const mk_train_header*)(const void*)b; }
static const mk_train_qlayer* qlay(const uint8_t* b) { return (const mk_train_qlayer*)(const void*)(b + sizeof(mk_train_header)); }
static uint32_t onum(const mk_train_qlayer* l) { return (uint32_t)(l->out_h * l->out_w * l->out_c); }
static uint32_t inum(const mk_train_qlayer* l) { return (uint32_t)(l->in_h * l->in_w * l->in_c); }
static uint32_t up4(uint32_t n) { return (n + 3u) & ~3u; }

static uint32_t max_oc(const uint8_t* blob) {
    uint32_t m = 1;
    for (uint32_t i = 0; i < hdr(blob)->n_layers && i < MK_TRAIN_MAX_LAYERS; ++i)
        m = (uint32_t)qlay(blob)[i].out_c > m ? (uint32_t)qlay(blob)[i].out_c : m;
    return m;
}

uint32_t mk_tr_qas_sram_bytes(const uint8_t* blob) {
    const mk_train_header* h = hdr(blob);
    uint32_t bytes = 8u * h->params_floats + up4(h->wq_bytes) + 4u * h->bq_words;
    for (uint32_t i = 0; i < h->n_layers && i < MK_TRAIN_MAX_LAYERS; ++i) bytes += up4(onum(&qlay(blob)[i])) + 4u * onum(&qlay(blob)[i]);
    return bytes + 4u * (h->act_floats + max_oc(blob) + h->classes);
}

static uint32_t wcount(const mk_train_qlayer* l) {
    return l->op == MK_TQ_CONV ? (uint32_t)(l->out_c * l->p[0] * l->p[1] * l->in_c) : (uint32_t)(l->out_c * l->in_c);
}

static int check_qas(const uint8_t* blob, uint32_t bytes) {
    const mk_train_header* h = hdr(blob);
    if (h->n_layers == 0 || h->n_layers > MK_TRAIN_MAX_LAYERS || sizeof(*h) + h->n_layers * sizeof(mk_train_qlayer) > h->total_bytes ||
        h->total_bytes > bytes)
        return 1;
    if (h->params_off + h->params_floats * 4u > h->total_bytes || h->qscales_off + h->qscales_floats * 4u > h->total_bytes ||
        h->x_off + h->n_samples * h->in_floats * 4u > h->total_bytes || h->y_off + h->n_samples * 4u > h->total_bytes)
        return 1;
    const mk_train_qlayer* L = qlay(blob);
    if (onum(&L[h->n_layers - 1]) != h->classes || L[0].op != MK_TQ_QUANTIZE || L[0].in0 != 0 || inum(&L[0]) != h->in_floats) return 1;
    for (uint32_t i = 0; i < h->n_layers; ++i) {
        const mk_train_qlayer* l = &L[i];
        if (l->in0 > i || (i > 0 && l->in0 == 0) || onum(l) > h->act_floats || inum(l) > h->act_floats || onum(l) == 0) return 1;
        if (l->in0 > 0 && inum(l) != onum(&L[l->in0 - 1])) return 1;
        if (l->op < MK_TQ_QUANTIZE || l->op > MK_TQ_TRANSPOSE || !(l->x_scale > 0.0f) || !(l->y_scale > 0.0f)) return 1;
        if (l->op == MK_TQ_CONV || l->op == MK_TQ_FC) {
            if (l->op == MK_TQ_CONV && (l->p[0] <= 0 || l->p[1] <= 0 || l->p[2] <= 0 || l->p[3] <= 0)) return 1;
            if (l->w_param + wcount(l) > h->params_floats || l->wq_off + wcount(l) > h->wq_bytes ||
                l->ws_off + (uint32_t)l->out_c > h->qscales_floats)
                return 1;
            if (l->b_param != ~0u && (l->b_param + (uint32_t)l->out_c > h->params_floats || l->bq_off + (uint32_t)l->out_c > h->bq_words))
                return 1;
        }
        if (l->op == MK_TQ_MAXPOOL && (l->p[0] <= 0 || l->p[1] <= 0 || l->out_c != l->in_c || (l->out_h - 1) * l->p[1] + l->p[0] > l->in_h ||
                                       (l->out_w - 1) * l->p[1] + l->p[0] > l->in_w))
            return 1; /* the backward pass reads every window unchecked */
        if ((l->op == MK_TQ_RELU || l->op == MK_TQ_COPY || l->op == MK_TQ_QUANTIZE) && onum(l) != inum(l)) return 1;
        if (l->op == MK_TQ_FC && (inum(l) != (uint32_t)l->in_c || l->out_h != 1 || l->out_w != 1)) return 1;
        if (l->op == MK_TQ_TRANSPOSE) {
            const int32_t d[4] = {1, l->in_h, l->in_w, l->in_c}, o[4] = {1, l->out_h, l->out_w, l->out_c};
            int32_t seen = 0;
            for (int k = 0; k < 4; ++k) {
                if (l->p[k] < 0 || l->p[k] > 3 || (seen & (1 << l->p[k])) || o[k] != d[l->p[k]]) return 1;
                seen |= 1 << l->p[k];
            }
        }
    }
    return 0;
}

/* The int8 / int32 codes the forward pass uses, from the float master codes (round half to even). */
static void materialize(const uint8_t* blob, const float* params, int8_t* wq, int32_t* bq) {
    const mk_train_header* h = hdr(blob);
    for (uint32_t i = 0; i < h->n_layers; ++i) {
        const mk_train_qlayer* l = &qlay(blob)[i];
        if (l->op != MK_TQ_CONV && l->op != MK_TQ_FC) continue;
        for (uint32_t k = 0; k < wcount(l); ++k) {
            float v = mk_round_half_even(params[l->w_param + k]);
            v = v < -127.0f ? -127.0f : (v > 127.0f ? 127.0f : v); /* symmetric int8 weights */
            wq[l->wq_off + k] = (int8_t)v;
        }
        if (l->b_param != ~0u)
            for (int32_t c = 0; c < l->out_c; ++c) {
                float v = mk_round_half_even(params[l->b_param + (uint32_t)c]);
                v = v < -2147483520.0f ? -2147483520.0f : (v > 2147483520.0f ? 2147483520.0f : v);
                bq[l->bq_off + (uint32_t)c] = (int32_t)v;
            }
    }
}

int mk_tr_qas_run(const uint8_t* blob, uint32_t blob_bytes, uint8_t* arena, uint32_t arena_bytes, const mk_tr_hooks* hooks) {
    if (check_qas(blob, blob_bytes)) return MK_TR_BAD_BLOB;
    if (mk_tr_qas_sram_bytes(blob) > arena_bytes) return MK_TR_NO_MEMORY;
    const mk_train_header* h = hdr(blob);
    const mk_train_qlayer* L = qlay(blob);
    const float* ws = (const float*)(const void*)(blob + h->qscales_off);
    float* params = (float*)(void*)arena;
    float* grads = params + h->params_floats;
    int8_t* wq = (int8_t*)(void*)(grads + h->params_floats);
    int32_t* bq = (int32_t*)(void*)(wq + up4(h->wq_bytes));
    uint8_t* next = (uint8_t*)(void*)(bq + h->bq_words);
    int8_t* code[MK_TRAIN_MAX_LAYERS + 1];
    float* gact[MK_TRAIN_MAX_LAYERS + 1];
    code[0] = 0, gact[0] = 0; /* the float sample: read from flash, no gradient */
    for (uint32_t i = 0; i < h->n_layers; ++i) {
        code[i + 1] = (int8_t*)(void*)next;
        next += up4(onum(&L[i]));
    }
    for (uint32_t i = 0; i < h->n_layers; ++i) {
        gact[i + 1] = (float*)(void*)next;
        next += 4u * onum(&L[i]);
    }
    float* scratch = (float*)(void*)next;
    float* fscale = scratch + h->act_floats;
    float* logits = fscale + max_oc(blob);
    memcpy(params, blob + h->params_off, h->params_floats * 4u);
    memset(grads, 0, h->params_floats * 4u);
    materialize(blob, params, wq, bq);
    const float* xs = (const float*)(const void*)(blob + h->x_off);
    const int32_t* ys = (const int32_t*)(const void*)(blob + h->y_off);
    for (uint32_t ep = 0; ep < h->epochs; ++ep) {
        const uint64_t c0 = hooks && hooks->cycles ? hooks->cycles() : 0;
        float loss_sum = 0.0f;
        uint32_t correct = 0;
        for (uint32_t s = 0; s < h->n_samples; ++s) {
            for (uint32_t i = 0; i < h->n_layers; ++i) { /* forward on codes */
                const mk_train_qlayer* l = &L[i];
                const int8_t* x = code[l->in0];
                int8_t* y = code[i + 1];
                const mk_shape4 is = {1, l->in_h, l->in_w, l->in_c}, os = {1, l->out_h, l->out_w, l->out_c};
                switch (l->op) {
                    case MK_TQ_QUANTIZE: mk_quantize_f32_s8(xs + s * h->in_floats, y, (int32_t)onum(l), l->y_scale, l->y_zp); break;
                    case MK_TQ_CONV: {
                        for (int32_t c = 0; c < l->out_c; ++c) fscale[c] = l->x_scale * ws[l->ws_off + (uint32_t)c] / l->y_scale;
                        mk_conv_s8_params cp;
                        memset(&cp, 0, sizeof cp);
                        cp.stride_h = l->p[2], cp.stride_w = l->p[3], cp.dil_h = 1, cp.dil_w = 1, cp.pad_top = l->p[4], cp.pad_left = l->p[5];
                        cp.in_zp = l->x_zp, cp.out_zp = l->y_zp, cp.act_min = l->act_min, cp.act_max = l->act_max, cp.fscale = fscale;
                        mk_conv2d_s8(x, is, wq + l->wq_off, l->p[0], l->p[1], l->b_param == ~0u ? 0 : bq + l->bq_off, y, os, &cp);
                        break;
                    }
                    case MK_TQ_FC:
                        for (int32_t c = 0; c < l->out_c; ++c) fscale[c] = l->x_scale * ws[l->ws_off + (uint32_t)c] / l->y_scale;
                        mk_fully_connected_s8(x, 1, l->in_c, wq + l->wq_off, l->out_c, l->b_param == ~0u ? 0 : bq + l->bq_off, y, l->x_zp,
                                              l->y_zp, 0, 0, fscale, l->act_min, l->act_max, 0);
                        break;
                    case MK_TQ_MAXPOOL: {
                        const mk_pool_params pp = {l->p[0], l->p[0], l->p[1], l->p[1], 0, 0, -128, 127, 0};
                        mk_max_pool_s8(x, is, y, os, &pp);
                        break;
                    }
                    case MK_TQ_RELU: mk_clamp_s8(x, y, (int32_t)onum(l), l->x_zp, 127); break;
                    case MK_TQ_TRANSPOSE: {
                        const int32_t dims[4] = {1, l->in_h, l->in_w, l->in_c};
                        mk_transpose4(x, dims, l->p, 1, y);
                        break;
                    }
                    default: memcpy(y, x, onum(l)); break; /* COPY */
                }
            }
            const mk_train_qlayer* last = &L[h->n_layers - 1];
            const int8_t* lq = code[h->n_layers];
            for (uint32_t k = 0; k < h->classes; ++k) logits[k] = last->y_scale * (float)((int32_t)lq[k] - last->y_zp);
            uint32_t best = 0;
            for (uint32_t k = 1; k < h->classes; ++k) best = logits[k] > logits[best] ? k : best;
            correct += best == (uint32_t)ys[s];
            for (uint32_t i = 0; i < h->n_layers; ++i) memset(gact[i + 1], 0, onum(&L[i]) * 4u);
            loss_sum += mk_train_softmax_xent(logits, (int32_t)h->classes, ys[s], gact[h->n_layers]);
            for (uint32_t i = h->n_layers; i-- > 0;) { /* backward on real values */
                const mk_train_qlayer* l = &L[i];
                if (l->in0 == 0) continue; /* the QUANTIZE of the sample: nothing to propagate */
                float* g = gact[i + 1];
                const int8_t* x = code[l->in0];
                const uint32_t nx = inum(l);
                /* the gradient of the quantized sample is of no use: a layer reading it skips its dx */
                float* dx = L[l->in0 - 1].op == MK_TQ_QUANTIZE && (l->op == MK_TQ_CONV || l->op == MK_TQ_FC) ? 0 : scratch;
                const mk_shape4 is = {1, l->in_h, l->in_w, l->in_c}, os = {1, l->out_h, l->out_w, l->out_c};
                switch (l->op) {
                    case MK_TQ_CONV:
                        mk_train_qclip_mask(code[i + 1], l->act_min, l->act_max, g, (int32_t)onum(l));
                        mk_train_qconv_bwd(x, is, l->x_scale, l->x_zp, wq + l->wq_off, ws + l->ws_off, l->p[0], l->p[1], l->p[2], l->p[3],
                                           l->p[4], l->p[5], g, os, dx, grads + l->w_param, l->b_param == ~0u ? 0 : grads + l->b_param);
                        break;
                    case MK_TQ_FC:
                        mk_train_qclip_mask(code[i + 1], l->act_min, l->act_max, g, (int32_t)onum(l));
                        mk_train_qfc_bwd(x, l->in_c, l->x_scale, l->x_zp, wq + l->wq_off, ws + l->ws_off, l->out_c, g, dx,
                                         grads + l->w_param, l->b_param == ~0u ? 0 : grads + l->b_param);
                        break;
                    case MK_TQ_MAXPOOL: mk_train_qmaxpool_bwd(x, is, l->p[0], l->p[1], g, os, scratch); break;
                    case MK_TQ_RELU: mk_train_qrelu_bwd(x, l->x_zp, g, scratch, (int32_t)nx); break;
                    case MK_TQ_TRANSPOSE: {
                        const int32_t dims[4] = {1, l->in_h, l->in_w, l->in_c};
                        mk_train_transpose4_bwd(dims, l->p, g, scratch);
                        break;
                    }
                    default: memcpy(scratch, g, nx * 4u); break; /* COPY */
                }
                if (!dx) continue;
                float* ga = gact[l->in0];
                for (uint32_t k = 0; k < nx; ++k) ga[k] += scratch[k];
            }
            mk_train_sgd(params, grads, (int32_t)h->params_floats, h->lr); /* on the master codes (QAS-scaled gradients) */
            materialize(blob, params, wq, bq);
        }
        const uint64_t c1 = hooks && hooks->cycles ? hooks->cycles() : 0;
        if (hooks && hooks->on_epoch) hooks->on_epoch(hooks->ctx, ep, loss_sum / (float)h->n_samples, correct, c1 - c0);
    }
    return MK_TR_OK;
}
