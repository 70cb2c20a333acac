/* SPDX-License-Identifier: MIT */
/* Kernel self-test cases (see mk_selftest.h). Shapes are small so the pool fits the 3066H's 64 KB. */
#include "mk_selftest.h"

#include <string.h>

#include "mk/mk_f32.h"
#include "mk/mk_int8.h"
#include "mk/mk_layout.h"

typedef struct {
    uint8_t* base;
    uint32_t used;
    uint32_t state;
    uint32_t high_water;
} arena;

static void* take(arena* a, uint32_t bytes) {
    void* p = a->base + a->used;
    a->used += (bytes + 7u) & ~7u;
    if (a->used > a->high_water) a->high_water = a->used;
    return p;
}
static uint32_t rnd(arena* a) {
    uint32_t x = a->state;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    a->state = x;
    return x;
}
static int8_t* rand_s8(arena* a, int32_t n) {
    int8_t* p = (int8_t*)take(a, (uint32_t)n);
    for (int32_t i = 0; i < n; ++i) p[i] = (int8_t)(rnd(a) >> 24);
    return p;
}
/* Uniform in [-range, range) with 2^-16 granularity (exact in float). */
static float* rand_f32(arena* a, int32_t n, float range) {
    float* p = (float*)take(a, (uint32_t)n * 4u);
    for (int32_t i = 0; i < n; ++i) p[i] = ((float)(int32_t)(rnd(a) >> 16) - 32768.0f) * (range / 32768.0f);
    return p;
}
static int32_t* rand_s32(arena* a, int32_t n, int32_t range) {
    int32_t* p = (int32_t*)take(a, (uint32_t)n * 4u);
    for (int32_t i = 0; i < n; ++i) p[i] = (int32_t)(rnd(a) % (uint32_t)(2 * range)) - range;
    return p;
}
static uint32_t fnv(const void* data, uint32_t n) {
    const uint8_t* b = (const uint8_t*)data;
    uint32_t h = 2166136261u;
    for (uint32_t i = 0; i < n; ++i) h = (h ^ b[i]) * 16777619u;
    return h;
}

typedef struct {
    mk_selftest_emit emit;
    void* ctx;
    int count;
} sink;
static void report(sink* s, const char* name, const void* data, uint32_t bytes) {
    s->emit(s->ctx, name, fnv(data, bytes), bytes);
    ++s->count;
}

static void conv_case(arena* a, sink* s, const char* name, int dw, int32_t h, int32_t w, int32_t cin, int32_t cout,
                      int32_t k, int32_t stride, int32_t pad) {
    const int32_t oh = (h + 2 * pad - k) / stride + 1, ow = (w + 2 * pad - k) / stride + 1;
    const int8_t* x = rand_s8(a, h * w * cin);
    const int8_t* f = rand_s8(a, dw ? k * k * cout : cout * k * k * cin);
    const int32_t* bias = rand_s32(a, cout, 2000);
    int32_t* mult = (int32_t*)take(a, (uint32_t)cout * 4u);
    int32_t* shift = (int32_t*)take(a, (uint32_t)cout * 4u);
    for (int32_t o = 0; o < cout; ++o) {
        const mk_qscale q = mk_quantize_scale(0.0005 + 0.0001 * (double)o);
        mult[o] = q.multiplier;
        shift[o] = q.shift;
    }
    mk_conv_s8_params p = {stride, stride, 1, 1, pad, pad, 7, -3, -128, 127, mult, shift, 0, 0};
    int8_t* out = (int8_t*)take(a, (uint32_t)(oh * ow * cout));
    const mk_shape4 is = {1, h, w, cin}, os = {1, oh, ow, cout};
    if (dw) mk_depthwise_conv2d_s8(x, is, f, k, k, bias, out, os, &p);
    else mk_conv2d_s8(x, is, f, k, k, bias, out, os, &p);
    report(s, name, out, (uint32_t)(oh * ow * cout));
    { /* float requantization (onnxruntime-exact) on the same accumulators */
        float* fs = (float*)take(a, (uint32_t)cout * 4u);
        for (int32_t o = 0; o < cout; ++o) fs[o] = 0.0005f + 0.0001f * (float)o;
        p.fscale = fs;
        if (dw) mk_depthwise_conv2d_s8(x, is, f, k, k, bias, out, os, &p);
        else mk_conv2d_s8(x, is, f, k, k, bias, out, os, &p);
        report(s, dw ? "dwconv_s8_floatrq" : "conv_s8_floatrq", out, (uint32_t)(oh * ow * cout));
    }

    /* fp32 twin of the same geometry */
    const float* xf = rand_f32(a, h * w * cin, 1.0f);
    const float* ff = rand_f32(a, dw ? k * k * cout : cout * k * k * cin, 0.5f);
    const float* bf = rand_f32(a, cout, 0.1f);
    mk_conv_f32_params pf = {stride, stride, 1, 1, pad, pad, -3.0e38f, 3.0e38f};
    float* of = (float*)take(a, (uint32_t)(oh * ow * cout) * 4u);
    if (dw) mk_depthwise_conv2d_f32(xf, is, ff, k, k, bf, of, os, &pf);
    else mk_conv2d_f32(xf, is, ff, k, k, bf, of, os, &pf);
    report(s, dw ? "dwconv_f32" : "conv_f32", of, (uint32_t)(oh * ow * cout) * 4u);
}

static void int8_cases(arena* a, sink* s) {
    conv_case(a, s, "conv_s8_3x3", 0, 8, 8, 3, 8, 3, 1, 1);
    a->used = 0;
    conv_case(a, s, "conv_s8_5x5_s2_odd", 0, 9, 9, 2, 6, 5, 2, 2);
    a->used = 0;
    conv_case(a, s, "dwconv_s8_3x3", 1, 8, 8, 12, 12, 3, 1, 1);
    a->used = 0;
    conv_case(a, s, "dwconv_s8_s2_odd", 1, 7, 9, 5, 5, 3, 2, 1);
    a->used = 0;
    {
        const int32_t m = 2, k = 40, n = 11;
        const int8_t* x = rand_s8(a, m * k);
        const int8_t* w = rand_s8(a, n * k);
        const int32_t* b = rand_s32(a, n, 3000);
        const mk_qscale q = mk_quantize_scale(0.0013);
        int32_t mult[11], shift[11];
        for (int i = 0; i < n; ++i) { mult[i] = q.multiplier; shift[i] = q.shift; }
        int8_t* out = (int8_t*)take(a, (uint32_t)(m * n));
        mk_fully_connected_s8(x, m, k, w, n, b, out, -5, 9, mult, shift, 0, -128, 127, 0);
        report(s, "fc_s8", out, (uint32_t)(m * n));
        float fs[11];
        for (int i = 0; i < n; ++i) fs[i] = 0.0013f + 0.0001f * (float)i;
        mk_fully_connected_s8(x, m, k, w, n, b, out, -5, 9, 0, 0, fs, -128, 127, 0);
        report(s, "fc_s8_floatrq", out, (uint32_t)(m * n));
        const float* xf = rand_f32(a, m * k, 1.0f);
        const float* wf = rand_f32(a, n * k, 1.0f);
        float* of = (float*)take(a, (uint32_t)(m * n) * 4u);
        mk_fully_connected_f32(xf, m, k, wf, n, 0, of, 0.0f, 3.0e38f);
        report(s, "fc_f32", of, (uint32_t)(m * n) * 4u);
    }
    {
        const mk_shape4 os = {1, 3, 4, 8};
        mk_bcast4 bc = {os, {96, 32, 8, 1}, {0, 0, 0, 1}};
        const int8_t* x = rand_s8(a, 96);
        const int8_t* y = rand_s8(a, 8);
        int8_t* out = (int8_t*)take(a, 96);
        mk_eltwise_s8_params p;
        mk_add_s8_prepare(0.05f, 3, 0.11f, -7, 0.09f, 2, 1, &p);
        mk_add_s8(x, y, out, &bc, &p);
        report(s, "add_s8", out, 96);
        p.out = mk_quantize_scale(0.05 * 0.11 / 0.09);
        mk_mul_s8(x, y, out, &bc, &p);
        report(s, "mul_s8", out, 96);
        mk_pool_params pp = {3, 3, 2, 2, 1, 1, -128, 127, 0};
        const int8_t* px = rand_s8(a, 9 * 9 * 4);
        int8_t* po = (int8_t*)take(a, 5 * 5 * 4);
        const mk_shape4 pis = {1, 9, 9, 4}, pos = {1, 5, 5, 4};
        mk_max_pool_s8(px, pis, po, pos, &pp);
        report(s, "maxpool_s8", po, 100);
        mk_avg_pool_s8(px, pis, po, pos, &pp);
        report(s, "avgpool_s8", po, 100);
        mk_global_avg_pool_s8(px, pis, po, 3, -2, mk_quantize_scale(1.0 / 81.0), 0.0f, 0);
        report(s, "gap_s8", po, 4);
        mk_clamp_s8(px, po, 100, -10, 60);
        report(s, "relu6_s8", po, 100);
        int8_t lut[256];
        for (int i = 0; i < 256; ++i) lut[i] = (int8_t)((i * 37) & 0xff);
        mk_lut_s8(px, po, 100, lut);
        report(s, "lut_s8", po, 100);
        mk_requant_s8(px, po, 100, 4, -4, mk_quantize_scale(0.7));
        report(s, "requant_s8", po, 100);
        mk_requant_s8(px, po, 100, 4, -4, mk_quantize_scale(0.3)); /* 31 + shift == 32 path */
        report(s, "requant_s8_rs32", po, 100);
        mk_requant_s8(px, po, 100, 4, -4, mk_quantize_scale(0.01)); /* 31 + shift > 32 path */
        report(s, "requant_s8_small", po, 100);
        float* scratch = (float*)take(a, 81 * 4);
        mk_softmax_s8(px, po, 4, 20, 0.1f, 3, 1.0f / 256.0f, -128, 0, scratch);
        report(s, "softmax_s8", po, 80);
        mk_softmax_s8(px, po, 4, 20, 0.1f, 3, 0.1f, 127, 1, scratch);
        report(s, "logsoftmax_s8", po, 80);
        int32_t am[9];
        mk_argmax_s8(px, 9, 36, am);
        report(s, "argmax_s8", am, sizeof am);
        mk_argmin_s8(px, 9, 36, am);
        report(s, "argmin_s8", am, sizeof am);
        static const char* const red_names[] = {"reduce_mean_s8", "reduce_sum_s8", "reduce_max_s8", "reduce_min_s8"};
        for (int op = 0; op < 4; ++op) { /* [9][9][4] over the middle axis; TFLite pairs 0.707 * 2^-3 and 0.6 * 2^1 */
            mk_reduce_s8(op, px, po, 9, 9, 4, 3, -2, op == 0 ? 1518500250 : 1288490189, op == 0 ? -3 : 1);
            report(s, red_names[op], po, 36);
        }
        mk_minmax_s8(x, y, out, &bc, 1, -100, 127);
        report(s, "maximum_s8", out, 96);
        mk_minmax_s8(x, y, out, &bc, 0, -128, 100);
        report(s, "minimum_s8", out, 96);
        const float* fx = rand_f32(a, 64, 6.0f);
        mk_quantize_f32_s8(fx, po, 64, 0.05f, 3);
        report(s, "quantize", po, 64);
        mk_dequantize_s8_f32(po, scratch, 64, 0.05f, 3);
        report(s, "dequantize", scratch, 256);
    }
}

static void f32_cases(arena* a, sink* s) {
    const int32_t n = 120;
    const float* x = rand_f32(a, n, 8.0f);
    const float* y = rand_f32(a, 20, 2.0f);
    float* out = (float*)take(a, n * 4u);
    static const char* const bin_names[] = {"add_f32", "sub_f32", "mul_f32", "div_f32", "max_f32", "min_f32"};
    mk_bcast4 bc = {{1, 6, 1, 20}, {120, 20, 20, 1}, {0, 0, 0, 1}};
    for (int op = 0; op < 6; ++op) {
        mk_binary_f32((mk_binop)op, x, y, out, &bc);
        report(s, bin_names[op], out, n * 4u);
    }
    static const char* const un_names[] = {"relu_f32", "relu6_f32", "leaky_f32", "hswish_f32", "sigmoid_f32", "tanh_f32",
                                           "elu_f32", "abs_f32", "neg_f32", "hsigmoid_f32", "exp_f32"};
    for (int op = 0; op <= MK_UN_EXP; ++op) {
        mk_unary_f32((mk_unop)op, x, out, n, 0.2f, 0.5f);
        report(s, un_names[op], out, n * 4u);
    }
    static const char* const un2_names[] = {"sin_f32", "cos_f32", "gelu_f32", "gelu_tanh_f32"};
    for (int op = MK_UN_SIN; op <= MK_UN_GELU_TANH; ++op) {
        mk_unary_f32((mk_unop)op, x, out, n, 0.0f, 0.0f);
        report(s, un2_names[op - MK_UN_SIN], out, n * 4u);
    }
    float large[4] = {1.0e6f, -3.3e7f, 2.0e9f, 777.7f}; /* the double-precision reduction on the target */
    for (int k = 0; k < 4; ++k) large[k] = mk_sinf(large[k]) + mk_cosf(large[k]);
    report(s, "sincos_large_f32", large, sizeof large);
    mk_prelu_f32(x, out, n, 20, y, 20);
    report(s, "prelu_f32", out, n * 4u);
    mk_softmax_f32(x, out, 6, 20, 0);
    report(s, "softmax_f32", out, n * 4u);
    mk_softmax_f32(x, out, 6, 20, 1);
    report(s, "logsoftmax_f32", out, n * 4u);
    mk_reduce_f32(MK_RED_MEAN, x, out, 2, 6, 10);
    report(s, "reduce_mean_f32", out, 80);
    mk_reduce_f32(MK_RED_MAX, x, out, 2, 6, 10);
    report(s, "reduce_max_f32", out, 80);
    int32_t am[20];
    mk_argmax_f32(x, am, 2, 6, 10);
    report(s, "argmax_f32", am, 80);
    mk_argmin_f32(x, am, 2, 6, 10);
    report(s, "argmin_f32", am, 80);
    mk_pool_params pp = {2, 2, 2, 2, 0, 0, 0, 0, 0};
    const mk_shape4 pis = {1, 4, 6, 5}, pos = {1, 2, 3, 5};
    mk_max_pool_f32(x, pis, out, pos, &pp);
    report(s, "maxpool_f32", out, 120);
    mk_avg_pool_f32(x, pis, out, pos, &pp);
    report(s, "avgpool_f32", out, 120);
    float* big = (float*)take(a, 8 * 12 * 5 * 4u);
    const mk_shape4 ros = {1, 8, 12, 5};
    mk_resize_f32(x, pis, big, ros, 0, 0);
    report(s, "resize_nearest_f32", big, 8 * 12 * 5 * 4u);
    mk_resize_f32(x, pis, big, ros, 1, 0);
    report(s, "resize_bilinear_f32", big, 8 * 12 * 5 * 4u);
    const float* w = rand_f32(a, 3 * 8 * 10, 0.5f);
    const float* r = rand_f32(a, 3 * 8 * 8, 0.5f);
    const float* b = rand_f32(a, 6 * 8, 0.2f);
    float h[8] = {0}, c[8] = {0};
    float* scratch = (float*)take(a, 56 * 4u);
    const mk_rnn_dims rd = {12, 10, 8, 10, 8, 1, 0};
    mk_gru_f32(x, &rd, w, r, b, 1, h, out, scratch);
    report(s, "gru_f32", out, 96 * 4u);
    const mk_rnn_dims rv = {12, 10, 8, 10, 8, 1, 1};
    mk_gru_f32(x, &rv, w, r, b, 0, h, out, scratch);
    report(s, "gru_f32_lbr0_reverse", out, 96 * 4u);
    const float* w4 = rand_f32(a, 4 * 8 * 10, 0.5f);
    const float* r4 = rand_f32(a, 4 * 8 * 8, 0.5f);
    mk_lstm_f32(x, &rd, w4, r4, 0, h, c, out, scratch);
    report(s, "lstm_f32", out, 96 * 4u);
    mk_rnn_f32(x, &rd, w, r, b, MK_UN_SCALED_TANH, 0.9f, 1.1f, 0.8f, h, out, scratch);
    report(s, "rnn_f32", out, 96 * 4u);
}

static void layout_cases(arena* a, sink* s) {
    const int8_t* x = rand_s8(a, 2 * 3 * 4 * 5);
    int8_t* out = (int8_t*)take(a, 512);
    const int32_t dims[4] = {2, 3, 4, 5}, perm[4] = {0, 2, 3, 1};
    mk_transpose4(x, dims, perm, 1, out);
    report(s, "transpose", out, 120);
    const int32_t before[4] = {0, 1, 2, 0}, after[4] = {1, 0, 1, 2};
    const int8_t v = -5;
    mk_pad4(x, dims, before, after, &v, 1, out);
    report(s, "pad", out, 3 * 4 * 7 * 7);
    const int32_t begin[4] = {1, 0, 3, 1}, step[4] = {1, 2, -1, 2}, od[4] = {1, 2, 3, 2};
    mk_slice4(x, dims, begin, step, od, 1, out);
    report(s, "slice", out, 12);
    const void* ins[2] = {x, x + 24};
    const int32_t sizes[2] = {3, 2};
    mk_concat(ins, sizes, 2, 2, 4, 1, out);
    report(s, "concat", out, 40);
    const int32_t idx[5] = {3, 0, 3, 1, 2};
    mk_gather(x, 6, 4, 5, idx, 5, 1, out);
    report(s, "gather", out, 150);
    const int32_t tdims[4] = {1, 3, 4, 5}, mult[4] = {2, 1, 2, 2};
    mk_tile4(x, tdims, mult, 1, out);
    report(s, "tile", out, 480);
}

/* TFLite resize, batched matmul and transposed convolution (float and int8). */
static void upsample_cases(arena* a, sink* s) {
    const mk_shape4 is = {1, 4, 5, 3}, os = {1, 7, 9, 3};
    const int8_t* q = rand_s8(a, 60);
    const float* f = rand_f32(a, 60, 2.0f);
    int8_t* qo = (int8_t*)take(a, 7 * 9 * 3);
    float* fo = (float*)take(a, 7 * 9 * 3 * 4u);
    for (int mode = 0; mode < 3; ++mode) {
        mk_resize_bilinear_tfl_s8(q, is, qo, os, mode == 1, mode == 2);
        report(s, mode == 0 ? "resize_bilinear_tfl_s8" : mode == 1 ? "resize_bilinear_tfl_s8_align" : "resize_bilinear_tfl_s8_half", qo, 189);
        mk_resize_bilinear_tfl_f32(f, is, fo, os, mode == 1, mode == 2);
        report(s, mode == 0 ? "resize_bilinear_tfl_f32" : mode == 1 ? "resize_bilinear_tfl_f32_align" : "resize_bilinear_tfl_f32_half", fo, 756);
        mk_resize_nearest_tfl(q, is, qo, os, 1, mode == 1, mode == 2);
        report(s, mode == 0 ? "resize_nearest_tfl" : mode == 1 ? "resize_nearest_tfl_align" : "resize_nearest_tfl_half", qo, 189);
    }
    const mk_bmm_dims d = {2, 3, 5, 4, 1, 0, 15, 20};
    const int8_t* qw = rand_s8(a, 40);
    const float* fw = rand_f32(a, 40, 1.0f);
    mk_batch_matmul_s8(q, qw, qo, &d, 3, -2, 1, 1518500250, -6, -128, 127);
    report(s, "batch_matmul_s8", qo, 24);
    mk_batch_matmul_f32(f, fw, fo, &d);
    report(s, "batch_matmul_f32", fo, 96);
    const mk_shape4 ti = {1, 3, 3, 2}, to = {1, 6, 6, 4};
    const mk_conv_f32_params fp = {2, 2, 1, 1, 1, 1, -3.4e38f, 3.4e38f};
    const float* ff = rand_f32(a, 4 * 3 * 3 * 2, 0.5f);
    mk_transpose_conv_f32(f, ti, ff, 3, 3, 0, fo, to, &fp);
    report(s, "transpose_conv_f32", fo, 144 * 4u);
    static const int32_t mult[4] = {1518500250, 1300000000, 1100000000, 2000000000}, shift[4] = {-7, -6, -8, -7};
    const mk_conv_s8_params qp = {2, 2, 1, 1, 1, 1, 4, -3, -128, 127, mult, shift, 0, 1};
    const int8_t* qf = rand_s8(a, 4 * 3 * 3 * 2);
    mk_transpose_conv_s8(q, ti, qf, 3, 3, 0, qo, to, &qp);
    report(s, "transpose_conv_s8", qo, 144);
}

int mk_selftest_run(uint8_t* pool, mk_selftest_emit emit, void* ctx) {
    arena a = {pool, 0, 0x12345678u, 0};
    sink s = {emit, ctx, 0};
    int8_cases(&a, &s);
    a.used = 0;
    f32_cases(&a, &s);
    a.used = 0;
    layout_cases(&a, &s);
    a.used = 0;
    upsample_cases(&a, &s);
    /* The pool bound is part of the test: a case that outgrew it has scribbled past the pool. */
    if (a.high_water > MK_SELFTEST_POOL_BYTES) emit(ctx, "POOL_OVERFLOW", a.high_water, 0);
    return s.count;
}
