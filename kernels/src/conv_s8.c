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

static inline int8_t finish(int32_t acc, const mk_conv_s8_params* p, int32_t oc) {
    const int32_t v = p->fscale ? mk_requant_float(acc, p->fscale[oc], p->out_zp)
                                : mk_requant(acc, p->mult[oc], p->shift[oc]) + p->out_zp;
    return (int8_t)mk_clamp_i32(v, p->act_min, p->act_max);
}

/* Dot products of one input run (len elements) with the same run of four filters. */
static inline void dot4(const int8_t* x, const int8_t* w0, int32_t wstride, int32_t len, int32_t in_off,
                        int32_t acc[4]) {
    const int8_t* w1 = w0 + wstride;
    const int8_t* w2 = w1 + wstride;
    const int8_t* w3 = w2 + wstride;
    int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
    for (int32_t i = 0; i < len; ++i) {
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

void mk_conv2d_s8(const int8_t* in, mk_shape4 is, const int8_t* filter, int32_t kh, int32_t kw, const int32_t* bias,
                  int8_t* out, mk_shape4 os, const mk_conv_s8_params* p) {
    const int32_t cin = is.c, cout = os.c, in_off = -p->in_zp;
    const int32_t wstride = kh * kw * cin;
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
                    for (int32_t j = 0; j < 4; ++j) o[oc + j] = finish(acc[j] + (bias ? bias[oc + j] : 0), p, oc + j);
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
                    o[oc] = finish(acc, p, oc);
                }
            }
        }
    }
}

void mk_depthwise_conv2d_s8(const int8_t* in, mk_shape4 is, const int8_t* filter, int32_t kh, int32_t kw,
                            const int32_t* bias, int8_t* out, mk_shape4 os, const mk_conv_s8_params* p) {
    const int32_t cin = is.c, cout = os.c, mult = cout / cin, in_off = -p->in_zp;
    for (int32_t n = 0; n < os.n; ++n) {
        for (int32_t oy = 0; oy < os.h; ++oy) {
            const int32_t iy0 = oy * p->stride_h - p->pad_top;
            int32_t ky_lo, ky_hi;
            tap_range(iy0, p->dil_h, kh, is.h, &ky_lo, &ky_hi);
            for (int32_t ox = 0; ox < os.w; ++ox) {
                const int32_t ix0 = ox * p->stride_w - p->pad_left;
                int32_t kx_lo, kx_hi;
                tap_range(ix0, p->dil_w, kw, is.w, &kx_lo, &kx_hi);
                int8_t* o = out + ((n * os.h + oy) * os.w + ox) * cout;
                int32_t c = 0;
                if (mult == 1) {
                    for (; c + 4 <= cout; c += 4) {
                        int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
                        for (int32_t ky = ky_lo; ky < ky_hi; ++ky) {
                            const int32_t iy = iy0 + ky * p->dil_h;
                            const int8_t* x = in + ((n * is.h + iy) * is.w + ix0 + kx_lo * p->dil_w) * cin + c;
                            const int8_t* w = filter + (ky * kw + kx_lo) * cout + c;
                            const int32_t xstep = p->dil_w * cin;
                            for (int32_t kx = kx_lo; kx < kx_hi; ++kx, x += xstep, w += cout) {
                                a0 += (x[0] + in_off) * w[0];
                                a1 += (x[1] + in_off) * w[1];
                                a2 += (x[2] + in_off) * w[2];
                                a3 += (x[3] + in_off) * w[3];
                            }
                        }
                        if (bias) { a0 += bias[c]; a1 += bias[c + 1]; a2 += bias[c + 2]; a3 += bias[c + 3]; }
                        o[c] = finish(a0, p, c);
                        o[c + 1] = finish(a1, p, c + 1);
                        o[c + 2] = finish(a2, p, c + 2);
                        o[c + 3] = finish(a3, p, c + 3);
                    }
                }
                for (; c < cout; ++c) {
                    const int32_t ci = c / mult;
                    int32_t acc = bias ? bias[c] : 0;
                    for (int32_t ky = ky_lo; ky < ky_hi; ++ky) {
                        const int32_t iy = iy0 + ky * p->dil_h;
                        for (int32_t kx = kx_lo; kx < kx_hi; ++kx) {
                            const int32_t ix = ix0 + kx * p->dil_w;
                            acc += (in[((n * is.h + iy) * is.w + ix) * cin + ci] + in_off) * filter[(ky * kw + kx) * cout + c];
                        }
                    }
                    o[c] = finish(acc, p, c);
                }
            }
        }
    }
}
