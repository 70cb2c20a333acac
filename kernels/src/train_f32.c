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

void mk_train_eltwise_bwd(mk_tr_ew op, const float* a, const float* b, const float* dy, int32_t count, float* da, float* db) {
    for (int32_t i = 0; i < count; ++i) {
        const float g = dy[i];
        switch (op) {
            case MK_TR_EW_ADD: if (da) da[i] = g; if (db) db[i] = g; break;
            case MK_TR_EW_SUB: if (da) da[i] = g; if (db) db[i] = -g; break;
            case MK_TR_EW_MUL: if (da) da[i] = g * b[i]; if (db) db[i] = g * a[i]; break;
            case MK_TR_EW_DIV: {
                const float inv = 1.0f / b[i];
                if (da) da[i] = g * inv;
                if (db) db[i] = -g * a[i] * inv * inv;
                break;
            }
        }
    }
}

void mk_train_abs_bwd(const float* x, const float* dy, float* dx, int32_t count) {
    for (int32_t i = 0; i < count; ++i) dx[i] = x[i] > 0.0f ? dy[i] : (x[i] < 0.0f ? -dy[i] : 0.0f);
}

void mk_train_concat2_bwd(const float* dy, int32_t outer, int32_t na, int32_t nb, int32_t inner, float* da, float* db) {
    for (int32_t o = 0; o < outer; ++o) {
        const float* src = dy + o * (na + nb) * inner;
        for (int32_t i = 0; i < na * inner; ++i) da[o * na * inner + i] = src[i];
        for (int32_t i = 0; i < nb * inner; ++i) db[o * nb * inner + i] = src[na * inner + i];
    }
}

static int32_t numel4(const int32_t d[4]) { return d[0] * d[1] * d[2] * d[3]; }

void mk_train_slice4_bwd(const int32_t xd[4], const int32_t begin[4], const int32_t step[4], const int32_t yd[4],
                         const float* dy, float* dx) {
    for (int32_t i = 0; i < numel4(xd); ++i) dx[i] = 0.0f;
    int32_t o = 0;
    for (int32_t a = 0; a < yd[0]; ++a)
        for (int32_t b = 0; b < yd[1]; ++b)
            for (int32_t c = 0; c < yd[2]; ++c)
                for (int32_t d = 0; d < yd[3]; ++d, ++o) {
                    const int32_t i0 = begin[0] + a * step[0], i1 = begin[1] + b * step[1];
                    const int32_t i2 = begin[2] + c * step[2], i3 = begin[3] + d * step[3];
                    dx[((i0 * xd[1] + i1) * xd[2] + i2) * xd[3] + i3] += dy[o];
                }
}

void mk_train_pad4_bwd(const int32_t xd[4], const int32_t before[4], const int32_t yd[4], const float* dy, float* dx) {
    int32_t o = 0;
    for (int32_t a = 0; a < xd[0]; ++a)
        for (int32_t b = 0; b < xd[1]; ++b)
            for (int32_t c = 0; c < xd[2]; ++c)
                for (int32_t d = 0; d < xd[3]; ++d, ++o)
                    dx[o] = dy[(((a + before[0]) * yd[1] + b + before[1]) * yd[2] + c + before[2]) * yd[3] + d + before[3]];
}

void mk_train_transpose4_bwd(const int32_t xd[4], const int32_t perm[4], const float* dy, float* dx) {
    int32_t yd[4], xs[4];
    for (int32_t j = 0; j < 4; ++j) yd[j] = xd[perm[j]];
    xs[3] = 1;
    for (int32_t j = 2; j >= 0; --j) xs[j] = xs[j + 1] * xd[j + 1];
    int32_t o = 0;
    for (int32_t a = 0; a < yd[0]; ++a)
        for (int32_t b = 0; b < yd[1]; ++b)
            for (int32_t c = 0; c < yd[2]; ++c)
                for (int32_t d = 0; d < yd[3]; ++d, ++o)
                    dx[a * xs[perm[0]] + b * xs[perm[1]] + c * xs[perm[2]] + d * xs[perm[3]]] = dy[o];
}

void mk_train_reduce_bwd(int mean, const float* dy, int32_t outer, int32_t axis, int32_t inner, float* dx) {
    const float s = mean ? 1.0f / (float)axis : 1.0f;
    for (int32_t o = 0; o < outer; ++o)
        for (int32_t a = 0; a < axis; ++a)
            for (int32_t i = 0; i < inner; ++i) dx[(o * axis + a) * inner + i] = dy[o * inner + i] * s;
}

void mk_train_qconv_bwd(const int8_t* x, mk_shape4 xs, float x_scale, int32_t x_zp, const int8_t* w, const float* w_scale,
                        int32_t kh, int32_t kw, int32_t stride_h, int32_t stride_w, int32_t pad_t, int32_t pad_l, const float* dy,
                        mk_shape4 ys, float* dx, float* dwq, float* dbq) {
    const int32_t IC = xs.c, OC = ys.c;
    if (dx)
        for (int32_t i = 0; i < xs.h * xs.w * IC; ++i) dx[i] = 0.0f;
    for (int32_t oy = 0; oy < ys.h; ++oy)
        for (int32_t ox = 0; ox < ys.w; ++ox)
            for (int32_t oc = 0; oc < OC; ++oc) {
                const float g = dy[(oy * ys.w + ox) * OC + oc], sw = w_scale[oc];
                if (g == 0.0f) continue; /* saturated outputs (straight-through estimator) and ReLU zeros */
                if (dbq) dbq[oc] += g / (x_scale * sw); /* bias code: real b = s_x s_w b_q, QAS-scaled */
                const float gw = g * x_scale / sw;      /* g(W) / s_w per unit of (x - z_x) */
                const float gx = g * sw;                /* W = s_w W_q */
                for (int32_t ky = 0; ky < kh; ++ky) {
                    const int32_t iy = oy * stride_h + ky - pad_t;
                    if (iy < 0 || iy >= xs.h) continue;
                    for (int32_t kx = 0; kx < kw; ++kx) {
                        const int32_t ix = ox * stride_w + kx - pad_l;
                        if (ix < 0 || ix >= xs.w) continue;
                        const int8_t* xp = x + (iy * xs.w + ix) * IC;
                        const int8_t* wp = w + ((oc * kh + ky) * kw + kx) * IC;
                        float* dwp = dwq + ((oc * kh + ky) * kw + kx) * IC;
                        for (int32_t ic = 0; ic < IC; ++ic) dwp[ic] += gw * (float)(xp[ic] - x_zp);
                        if (dx) {
                            float* dxp = dx + (iy * xs.w + ix) * IC;
                            for (int32_t ic = 0; ic < IC; ++ic) dxp[ic] += gx * (float)wp[ic];
                        }
                    }
                }
            }
}

void mk_train_qfc_bwd(const int8_t* x, int32_t k, float x_scale, int32_t x_zp, const int8_t* w, const float* w_scale, int32_t n,
                      const float* dy, float* dx, float* dwq, float* dbq) {
    if (dx)
        for (int32_t i = 0; i < k; ++i) dx[i] = 0.0f;
    for (int32_t j = 0; j < n; ++j) {
        const float g = dy[j], sw = w_scale[j];
        if (g == 0.0f) continue;
        if (dbq) dbq[j] += g / (x_scale * sw);
        const float gw = g * x_scale / sw, gx = g * sw;
        for (int32_t i = 0; i < k; ++i) {
            dwq[j * k + i] += gw * (float)(x[i] - x_zp);
            if (dx) dx[i] += gx * (float)w[j * k + i];
        }
    }
}

void mk_train_qrelu_bwd(const int8_t* x, int32_t zp, const float* dy, float* dx, int32_t count) {
    for (int32_t i = 0; i < count; ++i) dx[i] = x[i] > zp ? dy[i] : 0.0f;
}

void mk_train_qmaxpool_bwd(const int8_t* x, mk_shape4 xs, int32_t k, int32_t stride, const float* dy, mk_shape4 ys, float* dx) {
    const int32_t C = xs.c;
    for (int32_t i = 0; i < xs.h * xs.w * C; ++i) dx[i] = 0.0f;
    for (int32_t oy = 0; oy < ys.h; ++oy)
        for (int32_t ox = 0; ox < ys.w; ++ox)
            for (int32_t c = 0; c < C; ++c) {
                int32_t best = -1;
                for (int32_t ky = 0; ky < k; ++ky)
                    for (int32_t kx = 0; kx < k; ++kx) {
                        const int32_t i = ((oy * stride + ky) * xs.w + ox * stride + kx) * C + c;
                        if (best < 0 || x[i] > x[best]) best = i;
                    }
                dx[best] += dy[(oy * ys.w + ox) * C + c];
            }
}

void mk_train_binary_bcast_bwd(mk_tr_ew op, const float* a, const float* b, const float* dy, const mk_bcast4* bc, float* da,
                               float* db) {
    const mk_shape4 o = bc->out;
    int32_t i = 0;
    for (int32_t i0 = 0; i0 < o.n; ++i0)
        for (int32_t i1 = 0; i1 < o.h; ++i1)
            for (int32_t i2 = 0; i2 < o.w; ++i2)
                for (int32_t i3 = 0; i3 < o.c; ++i3, ++i) {
                    const int32_t ia = i0 * bc->a_stride[0] + i1 * bc->a_stride[1] + i2 * bc->a_stride[2] + i3 * bc->a_stride[3];
                    const int32_t ib = i0 * bc->b_stride[0] + i1 * bc->b_stride[1] + i2 * bc->b_stride[2] + i3 * bc->b_stride[3];
                    const float g = dy[i], va = a[ia], vb = b[ib];
                    switch (op) {
                        case MK_TR_EW_ADD: da[ia] += g; db[ib] += g; break;
                        case MK_TR_EW_SUB: da[ia] += g; db[ib] -= g; break;
                        case MK_TR_EW_MUL: da[ia] += g * vb; db[ib] += g * va; break;
                        case MK_TR_EW_DIV: {
                            const float inv = 1.0f / vb;
                            da[ia] += g * inv;
                            db[ib] -= g * va * inv * inv;
                            break;
                        }
                    }
                }
}

void mk_train_binary_bcast_fwd(mk_tr_ew op, const float* a, const float* b, const mk_bcast4* bc, float* y) {
    const mk_shape4 o = bc->out;
    int32_t i = 0;
    for (int32_t i0 = 0; i0 < o.n; ++i0)
        for (int32_t i1 = 0; i1 < o.h; ++i1)
            for (int32_t i2 = 0; i2 < o.w; ++i2)
                for (int32_t i3 = 0; i3 < o.c; ++i3, ++i) {
                    const float va = a[i0 * bc->a_stride[0] + i1 * bc->a_stride[1] + i2 * bc->a_stride[2] + i3 * bc->a_stride[3]];
                    const float vb = b[i0 * bc->b_stride[0] + i1 * bc->b_stride[1] + i2 * bc->b_stride[2] + i3 * bc->b_stride[3]];
                    y[i] = op == MK_TR_EW_ADD ? va + vb : op == MK_TR_EW_SUB ? va - vb : op == MK_TR_EW_MUL ? va * vb : va / vb;
                }
}

void mk_train_qclip_mask(const int8_t* y, int32_t lo, int32_t hi, float* g, int32_t count) {
    for (int32_t i = 0; i < count; ++i)
        if (y[i] <= lo || y[i] >= hi) g[i] = 0.0f;
}
