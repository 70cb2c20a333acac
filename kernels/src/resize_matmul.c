/* SPDX-License-Identifier: MIT */
/* TFLite resize (nearest, bilinear float and int8), batched matrix multiply (float, int8 TFLite) and
 * transposed convolution (float with dilation for ONNX ConvTranspose and TFLite TRANSPOSE_CONV, int8
 * TFLite); see mk_f32.h / mk_int8.h. The transposed convolutions gather: output (oy, ox) takes input
 * row iy where oy = iy * stride - pad + ky * dilation, exactly the taps TFLite's scatter visits. */
#include <string.h>

#include "mk/mk_f32.h"
#include "mk/mk_int8.h"

static int32_t floor_f(float x) {
    const int32_t t = (int32_t)x;
    return (float)t > x ? t - 1 : t;
}
static int32_t ceil_f(float x) {
    const int32_t t = (int32_t)x;
    return (float)t < x ? t + 1 : t;
}

static int32_t tfl_nearest(int32_t o, int32_t in, int32_t out, int align, int half) {
    const float scale = (align && out > 1) ? (float)(in - 1) / (float)(out - 1) : (float)in / (float)out;
    const float v = ((float)o + (half ? 0.5f : 0.0f)) * scale;
    int32_t i = align ? (int32_t)mk_round_away(v) : floor_f(v);
    i = i > in - 1 ? in - 1 : i;
    return half && i < 0 ? 0 : i;
}

void mk_resize_nearest_tfl(const void* in, mk_shape4 is, void* out, mk_shape4 os, int32_t elem, int align, int half) {
    const uint8_t* src = (const uint8_t*)in;
    uint8_t* dst = (uint8_t*)out;
    const int32_t row = is.c * elem;
    for (int32_t n = 0; n < os.n; ++n)
        for (int32_t oy = 0; oy < os.h; ++oy) {
            const int32_t iy = tfl_nearest(oy, is.h, os.h, align, half);
            for (int32_t ox = 0; ox < os.w; ++ox) {
                const int32_t ix = tfl_nearest(ox, is.w, os.w, align, half);
                memcpy(dst + ((n * os.h + oy) * os.w + ox) * row, src + ((n * is.h + iy) * is.w + ix) * row, (size_t)row);
            }
        }
}

static void bil_f(int32_t v, float scale, int half, int32_t size, float* s, int32_t* lo, int32_t* hi) {
    *s = half ? ((float)v + 0.5f) * scale - 0.5f : (float)v * scale;
    const int32_t f = floor_f(*s), c = ceil_f(*s);
    *lo = f > 0 ? f : 0;
    *hi = c < size - 1 ? c : size - 1;
}

void mk_resize_bilinear_tfl_f32(const float* in, mk_shape4 is, float* out, mk_shape4 os, int align, int half) {
    const float hs = (align && os.h > 1) ? (float)(is.h - 1) / (float)(os.h - 1) : (float)is.h / (float)os.h;
    const float ws = (align && os.w > 1) ? (float)(is.w - 1) / (float)(os.w - 1) : (float)is.w / (float)os.w;
    const int32_t C = is.c;
    for (int32_t n = 0; n < os.n; ++n)
        for (int32_t oy = 0; oy < os.h; ++oy) {
            float iy;
            int32_t y0, y1;
            bil_f(oy, hs, half, is.h, &iy, &y0, &y1);
            const float dy = iy - (float)y0;
            for (int32_t ox = 0; ox < os.w; ++ox) {
                float ix;
                int32_t x0, x1;
                bil_f(ox, ws, half, is.w, &ix, &x0, &x1);
                const float dx = ix - (float)x0;
                const float* a = in + ((n * is.h + y0) * is.w + x0) * C;
                const float* b = in + ((n * is.h + y1) * is.w + x0) * C;
                const float* c = in + ((n * is.h + y0) * is.w + x1) * C;
                const float* d = in + ((n * is.h + y1) * is.w + x1) * C;
                float* o = out + ((n * os.h + oy) * os.w + ox) * C;
                for (int32_t k = 0; k < C; ++k)
                    o[k] = a[k] * (1 - dy) * (1 - dx) + b[k] * dy * (1 - dx) + c[k] * (1 - dy) * dx + d[k] * dy * dx;
            }
        }
}

static void bil_q(int32_t v, int32_t scale, int half, int32_t size, int32_t* s, int32_t* lo, int32_t* hi) {
    *s = half ? v * scale + scale / 2 - (1 << 9) : v * scale;
    const int32_t f = *s / (1 << 10), c = (*s + (1 << 10) - 1) / (1 << 10); /* truncating divisions, as TFLite */
    *lo = f > 0 ? f : 0;
    *hi = c < size - 1 ? c : size - 1;
}

void mk_resize_bilinear_tfl_s8(const int8_t* in, mk_shape4 is, int8_t* out, mk_shape4 os, int align, int half) {
    const int32_t hs = (align && os.h > 1) ? ((1 << 10) * (is.h - 1) + (os.h - 1) / 2) / (os.h - 1) : ((1 << 10) * is.h + os.h / 2) / os.h;
    const int32_t ws = (align && os.w > 1) ? ((1 << 10) * (is.w - 1) + (os.w - 1) / 2) / (os.w - 1) : ((1 << 10) * is.w + os.w / 2) / os.w;
    const int32_t C = is.c;
    for (int32_t n = 0; n < os.n; ++n)
        for (int32_t oy = 0; oy < os.h; ++oy) {
            int32_t iy, y0, y1;
            bil_q(oy, hs, half, is.h, &iy, &y0, &y1);
            const int32_t wy1 = iy - (1 << 10) * y0, wy0 = (1 << 10) - wy1;
            for (int32_t ox = 0; ox < os.w; ++ox) {
                int32_t ix, x0, x1;
                bil_q(ox, ws, half, is.w, &ix, &x0, &x1);
                const int32_t wx1 = ix - (1 << 10) * x0, wx0 = (1 << 10) - wx1;
                const int8_t* a = in + ((n * is.h + y0) * is.w + x0) * C;
                const int8_t* b = in + ((n * is.h + y1) * is.w + x0) * C;
                const int8_t* c = in + ((n * is.h + y0) * is.w + x1) * C;
                const int8_t* d = in + ((n * is.h + y1) * is.w + x1) * C;
                int8_t* o = out + ((n * os.h + oy) * os.w + ox) * C;
                for (int32_t k = 0; k < C; ++k) {
                    /* |sum| < 2^30: 128 * 1280 * 1280 per term at most, so int32 is exact */
                    const int32_t s20 = a[k] * wy0 * wx0 + b[k] * wy1 * wx0 + c[k] * wy0 * wx1 + d[k] * wy1 * wx1;
                    o[k] = (int8_t)((s20 + (s20 > 0 ? (1 << 19) : -(1 << 19))) / (1 << 20));
                }
            }
        }
}

void mk_batch_matmul_f32(const float* x, const float* w, float* out, const mk_bmm_dims* d) {
    for (int32_t b = 0; b < d->batches; ++b) {
        const float* X = x + b * d->x_batch_stride;
        const float* W = w + b * d->w_batch_stride;
        float* O = out + b * d->m * d->n;
        for (int32_t i = 0; i < d->m; ++i)
            for (int32_t j = 0; j < d->n; ++j) {
                float acc = 0.0f;
                for (int32_t k = 0; k < d->k; ++k)
                    acc += X[d->adj_x ? k * d->m + i : i * d->k + k] * W[d->adj_y ? j * d->k + k : k * d->n + j];
                O[i * d->n + j] = acc;
            }
    }
}

void mk_batch_matmul_s8(const int8_t* x, const int8_t* w, int8_t* out, const mk_bmm_dims* d, int32_t x_zp, int32_t w_zp,
                        int32_t out_zp, int32_t mult, int32_t shift, int32_t act_min, int32_t act_max) {
    for (int32_t b = 0; b < d->batches; ++b) {
        const int8_t* X = x + b * d->x_batch_stride;
        const int8_t* W = w + b * d->w_batch_stride;
        int8_t* O = out + b * d->m * d->n;
        for (int32_t i = 0; i < d->m; ++i)
            for (int32_t j = 0; j < d->n; ++j) {
                int32_t acc = 0;
                for (int32_t k = 0; k < d->k; ++k)
                    acc += ((int32_t)X[d->adj_x ? k * d->m + i : i * d->k + k] - x_zp) *
                           ((int32_t)W[d->adj_y ? j * d->k + k : k * d->n + j] - w_zp);
                O[i * d->n + j] = (int8_t)mk_clamp_i32(mk_tfl_mbqm(acc, mult, shift) + out_zp, act_min, act_max);
            }
    }
}

/* The input index along one axis that output o reads through tap k (oy = iy * stride - pad + k * dil),
 * or -1 when no input row maps there. */
static int32_t tap_src(int32_t o, int32_t pad, int32_t stride, int32_t dil, int32_t k, int32_t in) {
    const int32_t t = o + pad - k * dil;
    if (t < 0 || t % stride != 0 || t / stride >= in) return -1;
    return t / stride;
}

MK_HOT void mk_transpose_conv_f32(const float* in, mk_shape4 is, const float* filter, int32_t kh, int32_t kw, const float* bias,
                                  float* out, mk_shape4 os, const mk_conv_f32_params* p) {
    const int32_t IC = is.c, OC = os.c;
    for (int32_t n = 0; n < os.n; ++n)
        for (int32_t oy = 0; oy < os.h; ++oy)
            for (int32_t ox = 0; ox < os.w; ++ox)
                for (int32_t oc = 0; oc < OC; ++oc) {
                    float acc = 0.0f;
                    for (int32_t ky = 0; ky < kh; ++ky) {
                        const int32_t iy = tap_src(oy, p->pad_top, p->stride_h, p->dil_h, ky, is.h);
                        if (iy < 0) continue;
                        for (int32_t kx = 0; kx < kw; ++kx) {
                            const int32_t ix = tap_src(ox, p->pad_left, p->stride_w, p->dil_w, kx, is.w);
                            if (ix < 0) continue;
                            const float* x = in + ((n * is.h + iy) * is.w + ix) * IC;
                            const float* f = filter + ((oc * kh + ky) * kw + kx) * IC;
                            for (int32_t ic = 0; ic < IC; ++ic) acc += x[ic] * f[ic];
                        }
                    }
                    acc += bias ? bias[oc] : 0.0f;
                    acc = acc < p->act_min ? p->act_min : (acc > p->act_max ? p->act_max : acc);
                    out[((n * os.h + oy) * os.w + ox) * OC + oc] = acc;
                }
}

MK_HOT void mk_transpose_conv_s8(const int8_t* in, mk_shape4 is, const int8_t* filter, int32_t kh, int32_t kw, const int32_t* bias,
                                 int8_t* out, mk_shape4 os, const mk_conv_s8_params* p) {
    const int32_t IC = is.c, OC = os.c;
    for (int32_t n = 0; n < os.n; ++n)
        for (int32_t oy = 0; oy < os.h; ++oy)
            for (int32_t ox = 0; ox < os.w; ++ox)
                for (int32_t oc = 0; oc < OC; ++oc) {
                    int32_t acc = 0;
                    for (int32_t ky = 0; ky < kh; ++ky) {
                        const int32_t iy = tap_src(oy, p->pad_top, p->stride_h, p->dil_h, ky, is.h);
                        if (iy < 0) continue;
                        for (int32_t kx = 0; kx < kw; ++kx) {
                            const int32_t ix = tap_src(ox, p->pad_left, p->stride_w, p->dil_w, kx, is.w);
                            if (ix < 0) continue;
                            const int8_t* x = in + ((n * is.h + iy) * is.w + ix) * IC;
                            const int8_t* f = filter + ((oc * kh + ky) * kw + kx) * IC;
                            for (int32_t ic = 0; ic < IC; ++ic) acc += ((int32_t)x[ic] - p->in_zp) * (int32_t)f[ic];
                        }
                    }
                    acc += bias ? bias[oc] : 0;
                    const int32_t v = mk_tfl_mbqm(acc, p->mult[oc], p->shift[oc]) + p->out_zp;
                    out[((n * os.h + oy) * os.w + ox) * OC + oc] = (int8_t)mk_clamp_i32(v, p->act_min, p->act_max);
                }
}
