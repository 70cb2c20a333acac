/* SPDX-License-Identifier: MIT */
/* Recurrent layers (see mk_f32.h): ONNX RNN, GRU and LSTM, one direction and batch entry per call.
 * Sums run in float, bias first, then the input, then the recurrent products (one fixed order, so host
 * and RISC-V give the same bits). */
#include "mk/mk_f32.h"

static float dot(const float* a, const float* b, int32_t n, float acc) {
    for (int32_t i = 0; i < n; ++i) acc += a[i] * b[i];
    return acc;
}

static float clipf(float v, float c) { return c > 0.0f ? (v < -c ? -c : (v > c ? c : v)) : v; }

MK_HOT void mk_rnn_f32(const float* x, const mk_rnn_dims* d, const float* w, const float* r, const float* bias, mk_unop act,
                       float alpha, float beta, float clip, float* h, float* y, float* scratch) {
    const int32_t H = d->hidden, I = d->input_size;
    for (int32_t k = 0; k < d->steps; ++k) {
        const int32_t t = d->reverse ? d->steps - 1 - k : k;
        const float* xt = x + t * d->x_stride;
        for (int32_t j = 0; j < H; ++j) {
            float a = dot(w + j * I, xt, I, bias ? bias[j] + bias[H + j] : 0.0f);
            scratch[j] = dot(r + j * H, h, H, a);
        }
        for (int32_t j = 0; j < H; ++j) {
            h[j] = mk_unary1_f32(act, clipf(scratch[j], clip), alpha, beta);
            if (y) y[t * d->y_stride + j * d->y_hstride] = h[j];
        }
    }
}

MK_HOT void mk_gru_f32(const float* x, const mk_rnn_dims* d, const float* w, const float* r, const float* bias,
                       int linear_before_reset, float* h, float* y, float* scratch) {
    const int32_t H = d->hidden, I = d->input_size;
    float* gx = scratch;         /* W x + Wb, 3H */
    float* gh = scratch + 3 * H; /* R h + Rb for z and r (and h when linear before reset), 3H */
    float* rh = scratch + 6 * H; /* r (.) h, H */
    for (int32_t k = 0; k < d->steps; ++k) {
        const int32_t t = d->reverse ? d->steps - 1 - k : k;
        const float* xt = x + t * d->x_stride;
        for (int32_t g = 0; g < 3 * H; ++g) {
            gx[g] = dot(w + g * I, xt, I, bias ? bias[g] : 0.0f);
            if (g < 2 * H || linear_before_reset) gh[g] = dot(r + g * H, h, H, bias ? bias[3 * H + g] : 0.0f);
        }
        for (int32_t j = 0; j < H; ++j) rh[j] = mk_sigmoidf(gx[H + j] + gh[H + j]) * h[j];
        if (!linear_before_reset)
            for (int32_t j = 0; j < H; ++j) gh[2 * H + j] = dot(r + (2 * H + j) * H, rh, H, bias ? bias[5 * H + j] : 0.0f);
        for (int32_t j = 0; j < H; ++j) {
            const float z = mk_sigmoidf(gx[j] + gh[j]);
            const float rr = mk_sigmoidf(gx[H + j] + gh[H + j]);
            const float hh = mk_tanhf(gx[2 * H + j] + (linear_before_reset ? rr * gh[2 * H + j] : gh[2 * H + j]));
            gx[j] = (1.0f - z) * hh + z * h[j]; /* the new state, kept apart until every unit has its gates */
        }
        for (int32_t j = 0; j < H; ++j) {
            h[j] = gx[j];
            if (y) y[t * d->y_stride + j * d->y_hstride] = h[j];
        }
    }
}

MK_HOT void mk_lstm_f32(const float* x, const mk_rnn_dims* d, const float* w, const float* r, const float* bias, float* h,
                        float* c, float* y, float* scratch) {
    const int32_t H = d->hidden, I = d->input_size;
    for (int32_t k = 0; k < d->steps; ++k) {
        const int32_t t = d->reverse ? d->steps - 1 - k : k;
        const float* xt = x + t * d->x_stride;
        for (int32_t g = 0; g < 4 * H; ++g) { /* W x + R h + Wb + Rb, the four gates i, o, f, c */
            const float a = dot(w + g * I, xt, I, bias ? bias[g] + bias[4 * H + g] : 0.0f);
            scratch[g] = dot(r + g * H, h, H, a);
        }
        for (int32_t j = 0; j < H; ++j) {
            const float ig = mk_sigmoidf(scratch[j]), og = mk_sigmoidf(scratch[H + j]);
            const float fg = mk_sigmoidf(scratch[2 * H + j]), cg = mk_tanhf(scratch[3 * H + j]);
            c[j] = fg * c[j] + ig * cg;
            h[j] = og * mk_tanhf(c[j]);
            if (y) y[t * d->y_stride + j * d->y_hstride] = h[j];
        }
    }
}
