/* SPDX-License-Identifier: MIT */
/* fp32 Conv2D / DepthwiseConv2D / FullyConnected, NHWC. Summation order is fixed (bias, then taps
 * in ky, kx, ci order) so host and target agree bit for bit. */
#include "mk/mk_f32.h"

static void tap_range(int32_t origin, int32_t dil, int32_t ksize, int32_t size, int32_t* lo, int32_t* hi) {
    int32_t a = 0, b = ksize;
    while (a < b && origin + a * dil < 0) ++a;
    while (b > a && origin + (b - 1) * dil >= size) --b;
    *lo = a;
    *hi = b;
}

static inline float clampf(float v, float lo, float hi) { return v < lo ? lo : (v > hi ? hi : v); }

MK_HOT void mk_conv2d_f32(const float* in, mk_shape4 is, const float* filter, int32_t kh, int32_t kw, const float* bias,
                   float* out, mk_shape4 os, const mk_conv_f32_params* p) {
    const int32_t cin = is.c, cout = os.c;
    for (int32_t n = 0; n < os.n; ++n)
        for (int32_t oy = 0; oy < os.h; ++oy) {
            const int32_t iy0 = oy * p->stride_h - p->pad_top;
            int32_t ky_lo, ky_hi;
            tap_range(iy0, p->dil_h, kh, is.h, &ky_lo, &ky_hi);
            for (int32_t ox = 0; ox < os.w; ++ox) {
                const int32_t ix0 = ox * p->stride_w - p->pad_left;
                int32_t kx_lo, kx_hi;
                tap_range(ix0, p->dil_w, kw, is.w, &kx_lo, &kx_hi);
                float* o = out + ((n * os.h + oy) * os.w + ox) * cout;
                for (int32_t oc = 0; oc < cout; ++oc) {
                    float acc = bias ? bias[oc] : 0.0f;
                    for (int32_t ky = ky_lo; ky < ky_hi; ++ky) {
                        const int32_t iy = iy0 + ky * p->dil_h;
                        for (int32_t kx = kx_lo; kx < kx_hi; ++kx) {
                            const float* x = in + ((n * is.h + iy) * is.w + ix0 + kx * p->dil_w) * cin;
                            const float* w = filter + ((oc * kh + ky) * kw + kx) * cin;
                            for (int32_t ci = 0; ci < cin; ++ci) acc += x[ci] * w[ci];
                        }
                    }
                    o[oc] = clampf(acc, p->act_min, p->act_max);
                }
            }
        }
}

MK_HOT void mk_depthwise_conv2d_f32(const float* in, mk_shape4 is, const float* filter, int32_t kh, int32_t kw,
                             const float* bias, float* out, mk_shape4 os, const mk_conv_f32_params* p) {
    const int32_t cin = is.c, cout = os.c, mult = cout / cin;
    for (int32_t n = 0; n < os.n; ++n)
        for (int32_t oy = 0; oy < os.h; ++oy) {
            const int32_t iy0 = oy * p->stride_h - p->pad_top;
            int32_t ky_lo, ky_hi;
            tap_range(iy0, p->dil_h, kh, is.h, &ky_lo, &ky_hi);
            for (int32_t ox = 0; ox < os.w; ++ox) {
                const int32_t ix0 = ox * p->stride_w - p->pad_left;
                int32_t kx_lo, kx_hi;
                tap_range(ix0, p->dil_w, kw, is.w, &kx_lo, &kx_hi);
                float* o = out + ((n * os.h + oy) * os.w + ox) * cout;
                for (int32_t c = 0; c < cout; ++c) {
                    const int32_t ci = c / mult;
                    float acc = bias ? bias[c] : 0.0f;
                    for (int32_t ky = ky_lo; ky < ky_hi; ++ky)
                        for (int32_t kx = kx_lo; kx < kx_hi; ++kx) {
                            const int32_t iy = iy0 + ky * p->dil_h, ix = ix0 + kx * p->dil_w;
                            acc += in[((n * is.h + iy) * is.w + ix) * cin + ci] * filter[(ky * kw + kx) * cout + c];
                        }
                    o[c] = clampf(acc, p->act_min, p->act_max);
                }
            }
        }
}

MK_HOT void mk_fully_connected_f32(const float* in, int32_t m, int32_t k, const float* weights, int32_t n, const float* bias,
                            float* out, float act_min, float act_max) {
    for (int32_t r = 0; r < m; ++r)
        for (int32_t j = 0; j < n; ++j) {
            const float* x = in + r * k;
            const float* w = weights + j * k;
            float acc = bias ? bias[j] : 0.0f;
            for (int32_t i = 0; i < k; ++i) acc += x[i] * w[i];
            out[r * n + j] = clampf(acc, act_min, act_max);
        }
}
