/* SPDX-License-Identifier: MIT */
/* int8 pooling over NHWC. */
#include "mk/mk_int8.h"

/* Integer division rounding half to even (the float QLinearAveragePool result for equal in/out
 * quantization: exact quotients and ties resolve the same way). cnt > 0. */
static inline int32_t div_round_even(int32_t sum, int32_t cnt) {
    int32_t q = sum / cnt, r = sum - q * cnt;
    const int32_t r2 = 2 * (r < 0 ? -r : r);
    if (r2 > cnt || (r2 == cnt && (q & 1))) q += sum < 0 ? -1 : 1;
    return q;
}

#define POOL_WINDOW                                                                 \
    const int32_t iy0 = oy * p->stride_h - p->pad_top, ix0 = ox * p->stride_w - p->pad_left; \
    const int32_t y0 = iy0 < 0 ? 0 : iy0, x0 = ix0 < 0 ? 0 : ix0;                   \
    const int32_t y1 = iy0 + p->kh > is.h ? is.h : iy0 + p->kh;                      \
    const int32_t x1 = ix0 + p->kw > is.w ? is.w : ix0 + p->kw;

void mk_max_pool_s8(const int8_t* in, mk_shape4 is, int8_t* out, mk_shape4 os, const mk_pool_params* p) {
    const int32_t C = is.c;
    for (int32_t n = 0; n < os.n; ++n)
        for (int32_t oy = 0; oy < os.h; ++oy)
            for (int32_t ox = 0; ox < os.w; ++ox) {
                POOL_WINDOW
                int8_t* o = out + ((n * os.h + oy) * os.w + ox) * C;
                for (int32_t c = 0; c < C; ++c) o[c] = -128;
                for (int32_t y = y0; y < y1; ++y)
                    for (int32_t x = x0; x < x1; ++x) {
                        const int8_t* v = in + ((n * is.h + y) * is.w + x) * C;
                        for (int32_t c = 0; c < C; ++c) o[c] = v[c] > o[c] ? v[c] : o[c];
                    }
                for (int32_t c = 0; c < C; ++c) o[c] = (int8_t)mk_clamp_i32(o[c], p->act_min, p->act_max);
            }
}

void mk_avg_pool_s8(const int8_t* in, mk_shape4 is, int8_t* out, mk_shape4 os, const mk_pool_params* p) {
    const int32_t C = is.c;
    for (int32_t n = 0; n < os.n; ++n)
        for (int32_t oy = 0; oy < os.h; ++oy)
            for (int32_t ox = 0; ox < os.w; ++ox) {
                POOL_WINDOW
                const int32_t cnt = (y1 - y0) * (x1 - x0);
                int8_t* o = out + ((n * os.h + oy) * os.w + ox) * C;
                for (int32_t c = 0; c < C; ++c) {
                    int32_t sum = 0;
                    for (int32_t y = y0; y < y1; ++y)
                        for (int32_t x = x0; x < x1; ++x) sum += in[((n * is.h + y) * is.w + x) * C + c];
                    const int32_t v = cnt <= 0 ? 0
                                      : p->round_away ? (sum > 0 ? (sum + cnt / 2) / cnt : (sum - cnt / 2) / cnt)
                                                      : div_round_even(sum, cnt);
                    o[c] = (int8_t)mk_clamp_i32(v, p->act_min, p->act_max);
                }
            }
}

void mk_global_avg_pool_s8(const int8_t* in, mk_shape4 is, int8_t* out, int32_t in_zp, int32_t out_zp, mk_qscale s,
                           float fscale, int32_t tfl) {
    const int32_t C = is.c, hw = is.h * is.w;
    for (int32_t n = 0; n < is.n; ++n)
        for (int32_t c = 0; c < C; ++c) {
            int32_t sum = 0;
            const int8_t* v = in + n * hw * C + c;
            for (int32_t i = 0; i < hw; ++i) sum += v[i * C] - in_zp;
            const int32_t q = fscale > 0.0f ? mk_requant_float(sum, fscale, out_zp)
                              : tfl         ? mk_tfl_mbqm(sum, s.multiplier, s.shift) + out_zp
                                            : mk_requant(sum, s.multiplier, s.shift) + out_zp;
            out[n * C + c] = (int8_t)mk_clamp_i32(q, -128, 127);
        }
}

void mk_argmax_s8(const int8_t* in, int32_t rows, int32_t cols, int32_t* out) {
    for (int32_t r = 0; r < rows; ++r) {
        const int8_t* v = in + r * cols;
        int32_t best = 0;
        for (int32_t i = 1; i < cols; ++i)
            if (v[i] > v[best]) best = i;
        out[r] = best;
    }
}

void mk_argmin_s8(const int8_t* in, int32_t rows, int32_t cols, int32_t* out) {
    for (int32_t r = 0; r < rows; ++r) {
        const int8_t* v = in + r * cols;
        int32_t best = 0;
        for (int32_t i = 1; i < cols; ++i)
            if (v[i] < v[best]) best = i;
        out[r] = best;
    }
}

void mk_reduce_s8(int32_t op, const int8_t* in, int8_t* out, int32_t outer, int32_t axis, int32_t inner, int32_t in_zp,
                  int32_t out_zp, int32_t mult, int32_t shift) {
    for (int32_t o = 0; o < outer; ++o)
        for (int32_t i = 0; i < inner; ++i) {
            const int8_t* v = in + o * axis * inner + i;
            if (op == 2 || op == 3) { /* max / min of the codes */
                int32_t acc = v[0];
                for (int32_t a = 1; a < axis; ++a) {
                    const int32_t x = v[a * inner];
                    acc = op == 2 ? (x > acc ? x : acc) : (x < acc ? x : acc);
                }
                out[o * inner + i] = (int8_t)acc;
                continue;
            }
            int32_t sum = 0;
            for (int32_t a = 0; a < axis; ++a) sum += v[a * inner] - in_zp;
            out[o * inner + i] = (int8_t)mk_clamp_i32(mk_tfl_mbqm(sum, mult, shift) + out_zp, -128, 127);
        }
}
