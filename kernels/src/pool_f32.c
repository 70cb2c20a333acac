/* SPDX-License-Identifier: MIT */
/* fp32 pooling over NHWC (padding excluded from max and from the average count). */
#include "mk/mk_f32.h"

void mk_max_pool_f32(const float* in, mk_shape4 is, float* out, mk_shape4 os, const mk_pool_params* p) {
    const int32_t C = is.c;
    for (int32_t n = 0; n < os.n; ++n)
        for (int32_t oy = 0; oy < os.h; ++oy)
            for (int32_t ox = 0; ox < os.w; ++ox) {
                const int32_t iy0 = oy * p->stride_h - p->pad_top, ix0 = ox * p->stride_w - p->pad_left;
                const int32_t y0 = iy0 < 0 ? 0 : iy0, x0 = ix0 < 0 ? 0 : ix0;
                const int32_t y1 = iy0 + p->kh > is.h ? is.h : iy0 + p->kh, x1 = ix0 + p->kw > is.w ? is.w : ix0 + p->kw;
                float* o = out + ((n * os.h + oy) * os.w + ox) * C;
                for (int32_t c = 0; c < C; ++c) {
                    float m = -3.40282347e38f;
                    for (int32_t y = y0; y < y1; ++y)
                        for (int32_t x = x0; x < x1; ++x) {
                            const float v = in[((n * is.h + y) * is.w + x) * C + c];
                            m = v > m ? v : m;
                        }
                    o[c] = m;
                }
            }
}

void mk_avg_pool_f32(const float* in, mk_shape4 is, float* out, mk_shape4 os, const mk_pool_params* p) {
    const int32_t C = is.c;
    for (int32_t n = 0; n < os.n; ++n)
        for (int32_t oy = 0; oy < os.h; ++oy)
            for (int32_t ox = 0; ox < os.w; ++ox) {
                const int32_t iy0 = oy * p->stride_h - p->pad_top, ix0 = ox * p->stride_w - p->pad_left;
                const int32_t y0 = iy0 < 0 ? 0 : iy0, x0 = ix0 < 0 ? 0 : ix0;
                const int32_t y1 = iy0 + p->kh > is.h ? is.h : iy0 + p->kh, x1 = ix0 + p->kw > is.w ? is.w : ix0 + p->kw;
                const int32_t cnt = (y1 - y0) * (x1 - x0);
                float* o = out + ((n * os.h + oy) * os.w + ox) * C;
                for (int32_t c = 0; c < C; ++c) {
                    float s = 0.0f;
                    for (int32_t y = y0; y < y1; ++y)
                        for (int32_t x = x0; x < x1; ++x) s += in[((n * is.h + y) * is.w + x) * C + c];
                    o[c] = cnt > 0 ? s / (float)cnt : 0.0f;
                }
            }
}
