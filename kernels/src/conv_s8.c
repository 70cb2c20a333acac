/* SPDX-License-Identifier: MIT */
/* int8 Conv2D and DepthwiseConv2D, NHWC. Hot loops keep four int32 accumulators in registers (four
 * output channels for Conv2D, four channels for depthwise) and use only 32-bit multiplies
 * (RV32IM `mul`); the 64-bit product happens once per output in mk_requant. */
#include "mk/mk_int8.h"

/* Valid kernel-tap range [*lo, *hi) so that 0 <= origin + k * dil < size. */
static void tap_range(int32_t origin, int32_t dil, int32_t ksize, int32_t size, int32_t* lo, int32_t* hi) {
    int32_t a = 0, b = ksize;
    while (a < b && origin + a * dil < 0) ++a;
    while (b > a && origin + (b - 1) * dil >= size) --b;
    *lo = a;
    *hi = b;
}

/* Requantization parameters copied out of mk_conv_s8_params: int8 stores may alias anything, so
 * fields read through a pointer would be reloaded after every output byte. */
typedef struct {
    const int32_t* mult;
    const int32_t* shift;
    const float* fscale;
    int32_t out_zp, act_min, act_max, tfl;
} rq_t;

static inline int8_t finish(int32_t acc, const rq_t* q, int32_t oc) {
    const int32_t v = q->fscale ? mk_requant_float(acc, q->fscale[oc], q->out_zp)
                      : q->tfl  ? mk_tfl_mbqm(acc, q->mult[oc], q->shift[oc]) + q->out_zp
                                : mk_requant(acc, q->mult[oc], q->shift[oc]) + q->out_zp;
    return (int8_t)mk_clamp_i32(v, q->act_min, q->act_max);
}

/* Dot products of one input run (len elements) with the same run of four filters; unrolled by two
 * so the loads use immediate offsets and the pointer updates are shared by eight MACs. */
static inline void dot4(const int8_t* x, const int8_t* w0, int32_t wstride, int32_t len, int32_t in_off,
                        int32_t acc[4]) {
    const int8_t* w1 = w0 + wstride;
    const int8_t* w2 = w1 + wstride;
    const int8_t* w3 = w2 + wstride;
    int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
    int32_t i = 0;
    for (; i + 2 <= len; i += 2) {
        const int32_t xa = x[i] + in_off, xb = x[i + 1] + in_off;
        a0 += xa * w0[i];
        a1 += xa * w1[i];
        a2 += xa * w2[i];
        a3 += xa * w3[i];
        a0 += xb * w0[i + 1];
        a1 += xb * w1[i + 1];
        a2 += xb * w2[i + 1];
        a3 += xb * w3[i + 1];
    }
    if (i < len) {
        const int32_t xv = x[i] + in_off;
        a0 += xv * w0[i];
        a1 += xv * w1[i];
        a2 += xv * w2[i];
        a3 += xv * w3[i];
    }
    acc[0] = a0; acc[1] = a1; acc[2] = a2; acc[3] = a3;
}

static inline int32_t dot1(const int8_t* x, const int8_t* w, int32_t len, int32_t in_off) {
    int32_t a = 0;
    for (int32_t i = 0; i < len; ++i) a += (x[i] + in_off) * w[i];
    return a;
}

MK_HOT void mk_conv2d_s8(const int8_t* in, mk_shape4 is, const int8_t* filter, int32_t kh, int32_t kw, const int32_t* bias,
                  int8_t* out, mk_shape4 os, const mk_conv_s8_params* p) {
    const int32_t cin = is.c, cout = os.c, in_off = -p->in_zp;
    const int32_t wstride = kh * kw * cin;
    const rq_t q = {p->mult, p->shift, p->fscale, p->out_zp, p->act_min, p->act_max, p->tfl};
    for (int32_t n = 0; n < os.n; ++n) {
        for (int32_t oy = 0; oy < os.h; ++oy) {
            const int32_t iy0 = oy * p->stride_h - p->pad_top;
            int32_t ky_lo, ky_hi;
            tap_range(iy0, p->dil_h, kh, is.h, &ky_lo, &ky_hi);
            for (int32_t ox = 0; ox < os.w; ++ox) {
                const int32_t ix0 = ox * p->stride_w - p->pad_left;
                int32_t kx_lo, kx_hi;
                tap_range(ix0, p->dil_w, kw, is.w, &kx_lo, &kx_hi);
                /* With dil_w == 1 the valid taps of one kernel row are one contiguous run. */
                const int32_t run = p->dil_w == 1 ? (kx_hi - kx_lo) * cin : cin;
                const int32_t kx_step = p->dil_w == 1 ? kw : 1;
                int8_t* o = out + ((n * os.h + oy) * os.w + ox) * cout;
                int32_t oc = 0;
                for (; oc + 4 <= cout; oc += 4) {
                    int32_t acc[4] = {0, 0, 0, 0};
                    for (int32_t ky = ky_lo; ky < ky_hi; ++ky) {
                        const int32_t iy = iy0 + ky * p->dil_h;
                        for (int32_t kx = kx_lo; kx < kx_hi; kx += kx_step) {
                            const int32_t ix = ix0 + kx * p->dil_w;
                            const int8_t* x = in + ((n * is.h + iy) * is.w + ix) * cin;
                            const int8_t* w = filter + ((oc * kh + ky) * kw + kx) * cin;
                            dot4(x, w, wstride, run, in_off, acc);
                        }
                    }
                    for (int32_t j = 0; j < 4; ++j) o[oc + j] = finish(acc[j] + (bias ? bias[oc + j] : 0), &q, oc + j);
                }
                for (; oc < cout; ++oc) {
                    int32_t acc = bias ? bias[oc] : 0;
                    for (int32_t ky = ky_lo; ky < ky_hi; ++ky) {
                        const int32_t iy = iy0 + ky * p->dil_h;
                        for (int32_t kx = kx_lo; kx < kx_hi; kx += kx_step) {
                            const int32_t ix = ix0 + kx * p->dil_w;
                            acc += dot1(in + ((n * is.h + iy) * is.w + ix) * cin,
                                        filter + ((oc * kh + ky) * kw + kx) * cin, run, in_off);
                        }
                    }
                    o[oc] = finish(acc, &q, oc);
                }
            }
        }
    }
}

/* Depthwise, depth multiplier 1: four channels per pass over the valid taps, pointers stepped. */
static void dw4(const int8_t* restrict x, const int8_t* restrict w, int32_t taps_y, int32_t taps_x, int32_t x_row,
                int32_t x_col, int32_t w_row, int32_t cout, int32_t in_off, int32_t acc[4]) {
    int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
    for (int32_t ky = 0; ky < taps_y; ++ky, x += x_row, w += w_row) {
        const int8_t* xp = x;
        const int8_t* wp = w;
        for (int32_t kx = 0; kx < taps_x; ++kx, xp += x_col, wp += cout) {
            a0 += (xp[0] + in_off) * wp[0];
            a1 += (xp[1] + in_off) * wp[1];
            a2 += (xp[2] + in_off) * wp[2];
            a3 += (xp[3] + in_off) * wp[3];
        }
    }
    acc[0] = a0; acc[1] = a1; acc[2] = a2; acc[3] = a3;
}

MK_HOT void mk_depthwise_conv2d_s8(const int8_t* in, mk_shape4 is, const int8_t* filter, int32_t kh, int32_t kw,
                            const int32_t* bias, int8_t* out, mk_shape4 os, const mk_conv_s8_params* p) {
    const int32_t cin = is.c, cout = os.c, mult = cout / cin, in_off = -p->in_zp;
    const int32_t sh = p->stride_h, sw = p->stride_w, dh = p->dil_h, dw = p->dil_w, pt = p->pad_top, pl = p->pad_left;
    const rq_t q = {p->mult, p->shift, p->fscale, p->out_zp, p->act_min, p->act_max, p->tfl};
    for (int32_t n = 0; n < os.n; ++n) {
        for (int32_t oy = 0; oy < os.h; ++oy) {
            const int32_t iy0 = oy * sh - pt;
            int32_t ky_lo, ky_hi;
            tap_range(iy0, dh, kh, is.h, &ky_lo, &ky_hi);
            for (int32_t ox = 0; ox < os.w; ++ox) {
                const int32_t ix0 = ox * sw - pl;
                int32_t kx_lo, kx_hi;
                tap_range(ix0, dw, kw, is.w, &kx_lo, &kx_hi);
                int8_t* o = out + ((n * os.h + oy) * os.w + ox) * cout;
                int32_t c = 0;
                if (mult == 1 && ky_hi > ky_lo && kx_hi > kx_lo) {
                    const int8_t* x0 = in + ((n * is.h + iy0 + ky_lo * dh) * is.w + ix0 + kx_lo * dw) * cin;
                    const int8_t* w0 = filter + (ky_lo * kw + kx_lo) * cout;
                    for (; c + 4 <= cout; c += 4) {
                        int32_t acc[4] = {0, 0, 0, 0};
                        if (bias) { acc[0] = bias[c]; acc[1] = bias[c + 1]; acc[2] = bias[c + 2]; acc[3] = bias[c + 3]; }
                        dw4(x0 + c, w0 + c, ky_hi - ky_lo, kx_hi - kx_lo, dh * is.w * cin, dw * cin, kw * cout, cout,
                            in_off, acc);
                        o[c] = finish(acc[0], &q, c);
                        o[c + 1] = finish(acc[1], &q, c + 1);
                        o[c + 2] = finish(acc[2], &q, c + 2);
                        o[c + 3] = finish(acc[3], &q, c + 3);
                    }
                }
                for (; c < cout; ++c) {
                    const int32_t ci = c / mult;
                    int32_t acc = bias ? bias[c] : 0;
                    for (int32_t ky = ky_lo; ky < ky_hi; ++ky) {
                        const int32_t iy = iy0 + ky * dh;
                        for (int32_t kx = kx_lo; kx < kx_hi; ++kx) {
                            const int32_t ix = ix0 + kx * dw;
                            acc += (in[((n * is.h + iy) * is.w + ix) * cin + ci] + in_off) * filter[(ky * kw + kx) * cout + c];
                        }
                    }
                    o[c] = finish(acc, &q, c);
                }
            }
        }
    }
}
