// SPDX-License-Identifier: MIT
// int8 element-wise, pooling, activation, quantization and softmax kernels against run_op.
#include <algorithm>
#include <cstdio>

#include "kernel_test_util.h"
#include "mk/mk_f32.h"
#include "mk/mk_int8.h"
#include "numerics/requant.h"

namespace {
using namespace mkt;

mk_bcast4 bcast(mk_shape4 out, mk_shape4 a, mk_shape4 b) {
    mk_bcast4 bc{};
    bc.out = out;
    const int32_t ad[4] = {a.n, a.h, a.w, a.c}, bd[4] = {b.n, b.h, b.w, b.c};
    int32_t sa = 1, sb = 1;
    for (int i = 3; i >= 0; --i) {
        bc.a_stride[i] = ad[i] == 1 ? 0 : sa;
        bc.b_stride[i] = bd[i] == 1 ? 0 : sb;
        sa *= ad[i];
        sb *= bd[i];
    }
    return bc;
}

// QLinearAdd / QLinearMul (com.microsoft, float arithmetic in onnxruntime) vs our integer Add/Mul:
// <= 1 LSB (our Add ratios are Q22 integers, one rounding half up; Mul uses a Q31 multiplier).
TEST(EltwiseS8, AddSubMulBroadcast) {
    std::mt19937 g(5);
    const mk_shape4 out{1, 4, 5, 6}, bs{1, 1, 1, 6};
    auto a = rand_i8(g, 120), b = rand_i8(g, 6);
    const float sa = 0.05f, sb = 0.11f, so = 0.09f;
    const int za = 3, zb = -7, zo = 2;
    const mk_bcast4 bc = bcast(out, out, bs);
    const num::Tensor A = i8({1, 4, 5, 6}, a), B = i8({1, 1, 1, 6}, b);
    const num::Tensor SA = scalar_f(sa), ZA = scalar_i8(za), SB = scalar_f(sb), ZB = scalar_i8(zb), SO = scalar_f(so),
                      ZO = scalar_i8(zo);
    for (int op = 0; op < 2; ++op) {
        mk_eltwise_s8_params p{};
        std::vector<int8_t> got(120);
        if (op == 0) {
            mk_add_s8_prepare(sa, za, sb, zb, so, zo, +1, &p);
            mk_add_s8(a.data(), b.data(), got.data(), &bc, &p);
        } else {
            p.a_zp = za; p.b_zp = zb; p.out_zp = zo; p.act_min = -128; p.act_max = 127;
            p.out = mk_quantize_scale(double(sa) * double(sb) / double(so));
            mk_mul_s8(a.data(), b.data(), got.data(), &bc, &p);
        }
        const char* name = op == 0 ? "QLinearAdd" : "QLinearMul";
        const auto ref = values<int8_t>(run1(name, {}, {&A, &SA, &ZA, &B, &SB, &ZB, &SO, &ZO}, "com.microsoft"));
        const double frac = expect_close_i8(got, ref, 1, name);
        std::printf("[ info ] %s: %.4f of outputs differ by 1 LSB\n", name, frac);
    }
    // Sub = Add with the negated B ratio: check against the real-valued definition.
    mk_eltwise_s8_params p{};
    mk_add_s8_prepare(sa, za, sb, zb, so, zo, -1, &p);
    std::vector<int8_t> got(120);
    mk_add_s8(a.data(), b.data(), got.data(), &bc, &p);
    for (int i = 0; i < 120; ++i) {
        const double real = (a[size_t(i)] - za) * double(sa) - (b[size_t(i % 6)] - zb) * double(sb);
        const double q = std::max(-128.0, std::min(127.0, std::nearbyint(real / so) + zo));
        EXPECT_LE(std::fabs(got[size_t(i)] - q), 1.0) << i;
    }
}

TEST(PoolS8, MaxAndAverage) {
    std::mt19937 g(9);
    const int h = 9, w = 8, c = 5, k = 3, s = 2, pad = 1;
    const int oh = (h + 2 * pad - k) / s + 1, ow = (w + 2 * pad - k) / s + 1;
    auto x = rand_i8(g, size_t(h * w * c));
    mk_pool_params p{k, k, s, s, pad, pad, -128, 127, 0};
    std::vector<int8_t> mx(size_t(oh * ow * c)), av(mx.size());
    mk_max_pool_s8(x.data(), {1, h, w, c}, mx.data(), {1, oh, ow, c}, &p);
    mk_avg_pool_s8(x.data(), {1, h, w, c}, av.data(), {1, oh, ow, c}, &p);
    num::Attributes a;
    a.set("kernel_shape", std::vector<int64_t>{k, k});
    a.set("strides", std::vector<int64_t>{s, s});
    a.set("pads", std::vector<int64_t>{pad, pad, pad, pad});
    const num::Tensor X = i8({1, c, h, w}, nhwc_to_nchw(x, 1, h, w, c));
    EXPECT_EQ(mx, nchw_to_nhwc(values<int8_t>(run1("MaxPool", a, {&X})), 1, c, oh, ow));
    // QLinearAveragePool with equal in/out quantization, count_include_pad = 0. onnxruntime averages
    // dequantized floats (0.1f * (q - z) is inexact), so exact .5 ties of the integer mean land on
    // either side; our integer mean rounds ties to even: <= 1 LSB, only on ties.
    const num::Tensor S = scalar_f(0.1f), Z = scalar_i8(4);
    const auto ref = values<int8_t>(run1("QLinearAveragePool", a, {&X, &S, &Z, &S, &Z}, "com.microsoft"));
    const double frac = expect_close_i8(av, nchw_to_nhwc(ref, 1, c, oh, ow), 1, "avgpool");
    std::printf("[ info ] AveragePool: %.4f of outputs differ by 1 LSB (ties)\n", frac);
}

TEST(ActivationS8, ClampAndLut) {
    std::mt19937 g(11);
    auto x = rand_i8(g, 300);
    const float s = 0.05f;
    const int z = -10;
    // ReLU / ReLU6 with shared quantization: Relu(Dequantize) re-quantized is exactly the clamp.
    for (mk_act act : {MK_ACT_RELU, MK_ACT_RELU6}) {
        int32_t lo, hi;
        mk_act_range_s8(act, s, z, &lo, &hi);
        std::vector<int8_t> got(x.size());
        mk_clamp_s8(x.data(), got.data(), int32_t(x.size()), lo, hi);
        const num::Tensor X = i8({300}, x), S = scalar_f(s), Z = scalar_i8(z);
        const num::Tensor D = run1("DequantizeLinear", {}, {&X, &S, &Z});
        num::Attributes ca;
        const num::Tensor lo_t = scalar_f(0.0f), hi_t = scalar_f(act == MK_ACT_RELU6 ? 6.0f : 1e30f);
        const num::Tensor R = run1("Clip", ca, {&D, &lo_t, &hi_t});
        const auto ref = values<int8_t>(run1("QuantizeLinear", {}, {&R, &S, &Z}));
        EXPECT_EQ(got, ref) << int(act);
    }
    // Sigmoid through a 256-entry table generated at conversion time from the reference operator.
    std::vector<int8_t> all(256);
    for (int i = 0; i < 256; ++i) all[size_t(i)] = static_cast<int8_t>(i - 128);
    const num::Tensor ALL = i8({256}, all), S = scalar_f(s), Z = scalar_i8(z), SO = scalar_f(1.0f / 256), ZO = scalar_i8(-128);
    const auto lut = values<int8_t>(run1("QLinearSigmoid", {}, {&ALL, &S, &Z, &SO, &ZO}, "com.microsoft"));
    std::vector<int8_t> got(x.size());
    mk_lut_s8(x.data(), got.data(), int32_t(x.size()), lut.data());
    const num::Tensor X = i8({300}, x);
    EXPECT_EQ(got, values<int8_t>(run1("QLinearSigmoid", {}, {&X, &S, &Z, &SO, &ZO}, "com.microsoft")));
}

TEST(QuantS8, QuantizeDequantizeExact) {
    std::mt19937 g(13);
    auto f = rand_f32(g, 500, -8.0f, 8.0f);
    f.push_back(0.025f * 3.5f);  // a tie: round half to even
    f.push_back(-0.025f * 2.5f);
    const float s = 0.025f;
    const int z = 7;
    std::vector<int8_t> q(f.size());
    mk_quantize_f32_s8(f.data(), q.data(), int32_t(f.size()), s, z);
    const num::Tensor F = f32({int64_t(f.size())}, f), S = scalar_f(s), Z = scalar_i8(z);
    const num::Tensor Q = run1("QuantizeLinear", {}, {&F, &S, &Z});
    EXPECT_EQ(q, values<int8_t>(Q));
    std::vector<float> d(q.size());
    mk_dequantize_s8_f32(q.data(), d.data(), int32_t(q.size()), s, z);
    EXPECT_EQ(d, values<float>(run1("DequantizeLinear", {}, {&Q, &S, &Z})));
}

TEST(SoftmaxS8, SoftmaxAndLogSoftmax) {
    std::mt19937 g(17);
    const int rows = 4, cols = 12;
    auto x = rand_i8(g, size_t(rows * cols));
    const float si = 0.1f;
    const int zi = 3;
    for (int lg = 0; lg < 2; ++lg) {
        const float so = lg ? 0.1f : 1.0f / 256;
        const int zo = lg ? 127 : -128;
        std::vector<int8_t> got(x.size());
        std::vector<float> scratch(static_cast<size_t>(cols));
        mk_softmax_s8(x.data(), got.data(), rows, cols, si, zi, so, zo, lg, scratch.data());
        const num::Tensor X = i8({rows, cols}, x), S = scalar_f(si), Z = scalar_i8(zi), SO = scalar_f(so), ZO = scalar_i8(zo);
        const num::Tensor D = run1("DequantizeLinear", {}, {&X, &S, &Z});
        num::Attributes a;
        a.set("axis", int64_t{-1});
        const num::Tensor Y = run1(lg ? "LogSoftmax" : "Softmax", a, {&D});
        const auto ref = values<int8_t>(run1("QuantizeLinear", {}, {&Y, &SO, &ZO}));
        // <= 1 LSB: our exp/log differ from libm's in the last float bits, which can move a value
        // across a rounding boundary of QuantizeLinear.
        const double frac = expect_close_i8(got, ref, 1, lg ? "logsoftmax" : "softmax");
        std::printf("[ info ] %s: %.4f of outputs differ by 1 LSB\n", lg ? "LogSoftmax" : "Softmax", frac);
    }
}

TEST(ReduceS8, GlobalAveragePoolAndArgMax) {
    std::mt19937 g(19);
    const int h = 5, w = 7, c = 6;
    auto x = rand_i8(g, size_t(h * w * c));
    const float si = 0.04f, so = 0.02f;
    const int zi = -4, zo = 6;
    std::vector<int8_t> got(static_cast<size_t>(c));
    mk_global_avg_pool_s8(x.data(), {1, h, w, c}, got.data(), zi, zo, mk_quantize_scale(double(si) / (double(so) * h * w)),
                          0.0f, 0);
    const num::Tensor X = i8({1, c, h, w}, nhwc_to_nchw(x, 1, h, w, c)), S = scalar_f(si), Z = scalar_i8(zi),
                      SO = scalar_f(so), ZO = scalar_i8(zo);
    num::Attributes a;
    a.set("channels_last", int64_t{0});
    const auto ref = values<int8_t>(run1("QLinearGlobalAveragePool", a, {&X, &S, &Z, &SO, &ZO}, "com.microsoft"));
    const double frac = expect_close_i8(got, ref, 1, "gap");
    std::printf("[ info ] GlobalAveragePool: %.4f of outputs differ by 1 LSB\n", frac);

    std::vector<int32_t> am(size_t(h * w));
    mk_argmax_s8(x.data(), h * w, c, am.data());
    std::vector<float> xf(x.begin(), x.end());
    const num::Tensor XF = f32({h * w, c}, xf);
    num::Attributes aa;
    aa.set("axis", int64_t{1});
    aa.set("keepdims", int64_t{0});
    const auto ref_am = values<int64_t>(run1("ArgMax", aa, {&XF}));
    ASSERT_EQ(ref_am.size(), am.size());
    for (size_t i = 0; i < am.size(); ++i) EXPECT_EQ(am[i], ref_am[i]) << i;

    // ArgMin on codes from {-2..2}: every row has tied minima, which go to the first index (ONNX
    // select_last_index = 0, TFLite ARG_MIN) - int8 and float kernels against the reference's ArgMin.
    std::vector<int8_t> t(size_t(h * w * c));
    for (size_t i = 0; i < t.size(); ++i) t[i] = int8_t(int((i * 7 + i / 5) % 5) - 2);
    std::vector<float> tf(t.begin(), t.end());
    std::vector<int32_t> mn8(size_t(h * w)), mnf(size_t(h * w));
    mk_argmin_s8(t.data(), h * w, c, mn8.data());
    mk_argmin_f32(tf.data(), mnf.data(), h * w, c, 1);
    const num::Tensor TF = f32({h * w, c}, tf);
    const auto ref_mn = values<int64_t>(run1("ArgMin", aa, {&TF}));
    ASSERT_EQ(ref_mn.size(), mn8.size());
    int tied = 0;
    for (size_t i = 0; i < mn8.size(); ++i) {
        EXPECT_EQ(mn8[i], ref_mn[i]) << i;
        EXPECT_EQ(mnf[i], ref_mn[i]) << i;
        tied += std::count(t.begin() + long(i) * c, t.begin() + long(i + 1) * c, t[i * size_t(c) + size_t(ref_mn[i])]) > 1;
    }
    EXPECT_GE(tied, 10);  // the ties this case is about (14 of the 35 rows)
}

}  // namespace

namespace {
using namespace mkt;

// Requantize between two int8 quantizations: exact against the contract (num::mul_shift, HalfUp)
// and <= 1 LSB against DequantizeLinear -> QuantizeLinear (float, ties to even).
TEST(QuantS8, RequantizeBetweenScales) {
    std::mt19937 g(23);
    auto x = rand_i8(g, 256);
    const float si = 0.05f, so = 0.08f;
    const int zi = 3, zo = -6;
    const mk_qscale q = mk_quantize_scale(double(si) / double(so));
    std::vector<int8_t> got(x.size());
    mk_requant_s8(x.data(), got.data(), int32_t(x.size()), zi, zo, q);
    for (size_t i = 0; i < x.size(); ++i)
        EXPECT_EQ(got[i], num::saturate_i8(num::mul_shift(x[i] - zi, q.multiplier, 31 + q.shift, num::Rounding::HalfUp) + zo));
    const num::Tensor X = i8({256}, x), SI = scalar_f(si), ZI = scalar_i8(zi), SO = scalar_f(so), ZO = scalar_i8(zo);
    const num::Tensor D = run1("DequantizeLinear", {}, {&X, &SI, &ZI});
    const double frac = expect_close_i8(got, values<int8_t>(run1("QuantizeLinear", {}, {&D, &SO, &ZO})), 1, "requant");
    std::printf("[ info ] requantize: %.4f of outputs differ by 1 LSB (ties)\n", frac);
}

}  // namespace
