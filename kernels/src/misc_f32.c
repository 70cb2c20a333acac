/* SPDX-License-Identifier: MIT */
/* fp32 Softmax/LogSoftmax, reductions, ArgMax, Resize, GRU, and the int8 softmax built on them. */
#include "mk/mk_f32.h"

static void softmax_row(const float* x, float* y, int32_t cols, int log_softmax) {
    float mx = x[0];
    for (int32_t i = 1; i < cols; ++i) mx = x[i] > mx ? x[i] : mx;
    float sum = 0.0f;
    for (int32_t i = 0; i < cols; ++i) sum += mk_expf(x[i] - mx);
    if (log_softmax) {
        const float ls = mk_logf(sum);
        for (int32_t i = 0; i < cols; ++i) y[i] = (x[i] - mx) - ls;
    } else {
        for (int32_t i = 0; i < cols; ++i) y[i] = mk_expf(x[i] - mx) / sum;
    }
}

MK_HOT void mk_softmax_f32(const float* in, float* out, int32_t rows, int32_t cols, int log_softmax) {
    for (int32_t r = 0; r < rows; ++r) softmax_row(in + r * cols, out + r * cols, cols, log_softmax);
}

void mk_softmax_s8(const int8_t* in, int8_t* out, int32_t rows, int32_t cols, float in_scale, int32_t in_zp,
                   float out_scale, int32_t out_zp, int log_softmax, float* scratch) {
    for (int32_t r = 0; r < rows; ++r) {
        mk_dequantize_s8_f32(in + r * cols, scratch, cols, in_scale, in_zp);
        softmax_row(scratch, scratch, cols, log_softmax);
        mk_quantize_f32_s8(scratch, out + r * cols, cols, out_scale, out_zp);
    }
}

void mk_reduce_f32(mk_reduce op, const float* in, float* out, int32_t outer, int32_t axis, int32_t inner) {
    for (int32_t o = 0; o < outer; ++o)
        for (int32_t i = 0; i < inner; ++i) {
            const float* v = in + o * axis * inner + i;
            float acc = v[0];
            for (int32_t a = 1; a < axis; ++a) {
                const float x = v[a * inner];
                if (op == MK_RED_MAX) acc = x > acc ? x : acc;
                else if (op == MK_RED_MIN) acc = x < acc ? x : acc;
                else acc += x;
            }
            if (op == MK_RED_MEAN) acc /= (float)axis;
            out[o * inner + i] = acc;
        }
}

void mk_argmax_f32(const float* in, int32_t* out, int32_t outer, int32_t axis, int32_t inner) {
    for (int32_t o = 0; o < outer; ++o)
        for (int32_t i = 0; i < inner; ++i) {
            const float* v = in + o * axis * inner + i;
            int32_t best = 0;
            for (int32_t a = 1; a < axis; ++a)
                if (v[a * inner] > v[best * inner]) best = a;
            out[o * inner + i] = best;
        }
}

void mk_argmin_f32(const float* in, int32_t* out, int32_t outer, int32_t axis, int32_t inner) {
    for (int32_t o = 0; o < outer; ++o)
        for (int32_t i = 0; i < inner; ++i) {
            const float* v = in + o * axis * inner + i;
            int32_t best = 0;
            for (int32_t a = 1; a < axis; ++a)
                if (v[a * inner] < v[best * inner]) best = a;
            out[o * inner + i] = best;
        }
}

/* Source coordinate of output index `o` (ONNX Resize coordinate_transformation_mode). */
static float src_coord(int32_t o, int32_t in_size, int32_t out_size, int coord) {
    const float scale = (float)out_size / (float)in_size;
    if (coord == 1) return out_size > 1 ? (float)o * (float)(in_size - 1) / (float)(out_size - 1) : 0.0f;
    if (coord == 2) return (float)o / scale;
    return ((float)o + 0.5f) / scale - 0.5f;
}

static int32_t floor_i(float x) {
    const int32_t t = (int32_t)x;
    return (float)t > x ? t - 1 : t;
}

/* ONNX nearest_mode: 0 round_prefer_floor (ties down), 2 round_prefer_ceil (ties up), 3 floor. */
static int32_t nearest_idx(float x, int32_t size, int mode) {
    int32_t i = floor_i(x);
    const float d = x - (float)i;
    if (mode != 3 && (d > 0.5f || (mode == 2 && d == 0.5f))) ++i;
    return i < 0 ? 0 : (i >= size ? size - 1 : i);
}

void mk_resize_f32(const float* in, mk_shape4 is, float* out, mk_shape4 os, int mode, int coord) {
    const int32_t C = is.c;
    for (int32_t n = 0; n < os.n; ++n)
        for (int32_t oy = 0; oy < os.h; ++oy) {
            float fy = src_coord(oy, is.h, os.h, coord);
            for (int32_t ox = 0; ox < os.w; ++ox) {
                float fx = src_coord(ox, is.w, os.w, coord);
                float* o = out + ((n * os.h + oy) * os.w + ox) * C;
                if (mode != 1) {
                    const float* v = in + ((n * is.h + nearest_idx(fy, is.h, mode)) * is.w + nearest_idx(fx, is.w, mode)) * C;
                    for (int32_t c = 0; c < C; ++c) o[c] = v[c];
                    continue;
                }
                const float cy = fy < 0.0f ? 0.0f : (fy > (float)(is.h - 1) ? (float)(is.h - 1) : fy);
                const float cx = fx < 0.0f ? 0.0f : (fx > (float)(is.w - 1) ? (float)(is.w - 1) : fx);
                const int32_t y0 = floor_i(cy), x0 = floor_i(cx);
                const int32_t y1 = y0 + 1 < is.h ? y0 + 1 : y0, x1 = x0 + 1 < is.w ? x0 + 1 : x0;
                const float dy = cy - (float)y0, dx = cx - (float)x0;
                const float* r0 = in + (n * is.h + y0) * is.w * C;
                const float* r1 = in + (n * is.h + y1) * is.w * C;
                for (int32_t c = 0; c < C; ++c) {
                    const float top = r0[x0 * C + c] * (1.0f - dx) + r0[x1 * C + c] * dx;
                    const float bot = r1[x0 * C + c] * (1.0f - dx) + r1[x1 * C + c] * dx;
                    o[c] = top * (1.0f - dy) + bot * dy;
                }
            }
        }
}
