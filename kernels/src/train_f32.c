/* SPDX-License-Identifier: MIT */
/* fp32 training kernels (see mk_train.h). */
#include "mk/mk_train.h"

#include "mk/mk_f32.h"

void mk_train_dwconv_fwd(const float* x, mk_shape4 xs, const float* w, int32_t kh, int32_t kw, int32_t pad_t,
                         int32_t pad_l, float* y, mk_shape4 ys) {
    const int32_t C = xs.c;
    for (int32_t oy = 0; oy < ys.h; ++oy)
        for (int32_t ox = 0; ox < ys.w; ++ox)
            for (int32_t c = 0; c < C; ++c) {
                float acc = 0.0f;
                for (int32_t ky = 0; ky < kh; ++ky) {
                    const int32_t iy = oy + ky - pad_t;
                    if (iy < 0 || iy >= xs.h) continue;
                    for (int32_t kx = 0; kx < kw; ++kx) {
                        const int32_t ix = ox + kx - pad_l;
                        if (ix < 0 || ix >= xs.w) continue;
                        acc += x[(iy * xs.w + ix) * C + c] * w[(ky * kw + kx) * C + c];
                    }
                }
                y[(oy * ys.w + ox) * C + c] = acc;
            }
}

void mk_train_dwconv_bwd(const float* x, mk_shape4 xs, const float* w, int32_t kh, int32_t kw, int32_t pad_t,
                         int32_t pad_l, const float* dy, mk_shape4 ys, float* dx, float* dw) {
    const int32_t C = xs.c;
    for (int32_t i = 0; i < xs.h * xs.w * C; ++i) dx[i] = 0.0f;
    for (int32_t oy = 0; oy < ys.h; ++oy)
        for (int32_t ox = 0; ox < ys.w; ++ox)
            for (int32_t c = 0; c < C; ++c) {
                const float g = dy[(oy * ys.w + ox) * C + c];
                for (int32_t ky = 0; ky < kh; ++ky) {
                    const int32_t iy = oy + ky - pad_t;
                    if (iy < 0 || iy >= xs.h) continue;
                    for (int32_t kx = 0; kx < kw; ++kx) {
                        const int32_t ix = ox + kx - pad_l;
                        if (ix < 0 || ix >= xs.w) continue;
                        const int32_t xi = (iy * xs.w + ix) * C + c, wi = (ky * kw + kx) * C + c;
                        dw[wi] += g * x[xi];
                        dx[xi] += g * w[wi];
                    }
                }
            }
}

void mk_train_relu_bwd(const float* y, const float* dy, float* dx, int32_t count) {
    for (int32_t i = 0; i < count; ++i) dx[i] = y[i] > 0.0f ? dy[i] : 0.0f;
}

void mk_train_fc_fwd(const float* x, int32_t k, const float* w, const float* b, int32_t n, float* y) {
    for (int32_t j = 0; j < n; ++j) {
        float acc = 0.0f;
        for (int32_t i = 0; i < k; ++i) acc += x[i] * w[j * k + i];
        y[j] = acc + (b ? b[j] : 0.0f);
    }
}

void mk_train_fc_bwd(const float* x, int32_t k, const float* w, int32_t n, const float* dy, float* dx, float* dw,
                     float* db) {
    if (dx)
        for (int32_t i = 0; i < k; ++i) dx[i] = 0.0f;
    for (int32_t j = 0; j < n; ++j) {
        const float g = dy[j];
        if (db) db[j] += g;
        for (int32_t i = 0; i < k; ++i) {
            dw[j * k + i] += g * x[i];
            if (dx) dx[i] += g * w[j * k + i];
        }
    }
}

float mk_train_softmax_xent(const float* logits, int32_t n, int32_t label, float* dlogits) {
    float mx = logits[0];
    for (int32_t i = 1; i < n; ++i) mx = logits[i] > mx ? logits[i] : mx;
    float sum = 0.0f;
    for (int32_t i = 0; i < n; ++i) {
        dlogits[i] = mk_expf(logits[i] - mx);
        sum += dlogits[i];
    }
    const float inv = 1.0f / sum;
    for (int32_t i = 0; i < n; ++i) dlogits[i] *= inv;
    const float loss = -mk_logf(dlogits[label] > 1e-30f ? dlogits[label] : 1e-30f);
    dlogits[label] -= 1.0f;
    return loss;
}

void mk_train_sgd(float* w, float* g, int32_t count, float lr) {
    for (int32_t i = 0; i < count; ++i) {
        w[i] -= lr * g[i];
        g[i] = 0.0f;
    }
}
