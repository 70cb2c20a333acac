// SPDX-License-Identifier: MIT
// fp32 kernels against run_op (ONNX semantics, NCHW): within 1e-5 (relative above magnitude 1).
#include <cstdio>

#include "kernel_test_util.h"
#include "mk/mk_f32.h"
#include "mk/mk_layout.h"

namespace {
using namespace mkt;
constexpr float kTol = 1e-5f;
constexpr float kInf = 3.4e38f;

TEST(MathF32, ExpLogTanhSigmoid) {
    for (float x = -80.0f; x <= 80.0f; x += 0.173f) {
        EXPECT_NEAR(mk_expf(x) / std::exp(x), 1.0f, 3e-7f) << x;
        EXPECT_NEAR(mk_tanhf(x), std::tanh(x), 3e-7f) << x;
        EXPECT_NEAR(mk_sigmoidf(x), 1.0f / (1.0f + std::exp(-x)), 3e-7f) << x;
    }
    for (float x = 1e-30f; x < 1e30f; x *= 1.37f) EXPECT_NEAR(mk_logf(x), std::log(x), 2e-6f * std::max(1.0f, std::fabs(std::log(x)))) << x;
    EXPECT_EQ(mk_expf(-200.0f), 0.0f);
    EXPECT_TRUE(std::isinf(mk_expf(100.0f)));
}

struct ConvF {
    int h, w, cin, cout, k, stride, pad, dil;
    bool dw;
};

// sin / cos against the host libm in double (the correctly rounded value to within 1e-6): small
// arguments, every quadrant, and large ones up to 2^31 where the double-precision reduction matters.
TEST(MathF32, SinCosErf) {
    double worst = 0.0;
    auto check = [&](float x) {
        const double es = std::fabs(double(mk_sinf(x)) - std::sin(double(x))), ec = std::fabs(double(mk_cosf(x)) - std::cos(double(x)));
        worst = std::max(worst, std::max(es, ec));
        EXPECT_LE(es, 1e-6) << "sin " << x;
        EXPECT_LE(ec, 1e-6) << "cos " << x;
    };
    for (float x = -20.0f; x <= 20.0f; x += 0.0137f) check(x);
    for (float x = 1.0f; x < 2.1e9f; x *= 1.21f) check(x), check(-x);
    for (float x : {0.0f, -0.0f, 1e-30f, 0.78539816f, 1.5707964f, 3.1415927f, 4.712389f, 1e6f, 123456.789f}) check(x);
    EXPECT_TRUE(std::isnan(mk_sinf(INFINITY)) && std::isnan(mk_cosf(-INFINITY)) && std::isnan(mk_sinf(NAN)));
    for (float x = -7.0f; x <= 7.0f; x += 0.0093f) EXPECT_NEAR(mk_erff(x), std::erf(x), 5e-7f) << x;  // A&S 1.5e-7 + the float cancellation in 1 - p e^-x^2
    std::printf("[ info ] sin/cos worst |error| %.2e\n", worst);
}

TEST(ConvF32, ConvAndDepthwise) {
    const ConvF cases[] = {{8, 8, 3, 5, 3, 1, 1, 1, false}, {9, 7, 4, 6, 3, 2, 1, 2, false},
                           {8, 8, 6, 6, 3, 1, 1, 1, true}, {7, 7, 3, 6, 3, 2, 1, 1, true}};
    for (const ConvF& c : cases) {
        std::mt19937 g(unsigned(c.h * 10 + c.cout));
        const int oh = (c.h + 2 * c.pad - c.dil * (c.k - 1) - 1) / c.stride + 1;
        const int ow = (c.w + 2 * c.pad - c.dil * (c.k - 1) - 1) / c.stride + 1;
        const int wcin = c.dw ? 1 : c.cin;
        auto x = rand_f32(g, size_t(c.h * c.w * c.cin));
        auto w = rand_f32(g, size_t(c.cout * wcin * c.k * c.k));
        auto b = rand_f32(g, size_t(c.cout));
        std::vector<float> wk(w.size());
        for (int o = 0; o < c.cout; ++o)
            for (int i = 0; i < wcin; ++i)
                for (int ky = 0; ky < c.k; ++ky)
                    for (int kx = 0; kx < c.k; ++kx) {
                        const float v = w[size_t(((o * wcin + i) * c.k + ky) * c.k + kx)];
                        if (c.dw) wk[size_t((ky * c.k + kx) * c.cout + o)] = v;
                        else wk[size_t(((o * c.k + ky) * c.k + kx) * wcin + i)] = v;
                    }
        mk_conv_f32_params p{c.stride, c.stride, c.dil, c.dil, c.pad, c.pad, -kInf, kInf};
        std::vector<float> got(size_t(oh * ow * c.cout));
        const mk_shape4 is{1, c.h, c.w, c.cin}, os{1, oh, ow, c.cout};
        if (c.dw) mk_depthwise_conv2d_f32(x.data(), is, wk.data(), c.k, c.k, b.data(), got.data(), os, &p);
        else mk_conv2d_f32(x.data(), is, wk.data(), c.k, c.k, b.data(), got.data(), os, &p);
        num::Attributes a;
        a.set("kernel_shape", std::vector<int64_t>{c.k, c.k});
        a.set("strides", std::vector<int64_t>{c.stride, c.stride});
        a.set("dilations", std::vector<int64_t>{c.dil, c.dil});
        a.set("pads", std::vector<int64_t>{c.pad, c.pad, c.pad, c.pad});
        a.set("group", int64_t{c.dw ? c.cin : 1});
        const num::Tensor X = f32({1, c.cin, c.h, c.w}, nhwc_to_nchw(x, 1, c.h, c.w, c.cin));
        const num::Tensor W = f32({c.cout, wcin, c.k, c.k}, w), B = f32({c.cout}, b);
        expect_close_f32(got, nchw_to_nhwc(values<float>(run1("Conv", a, {&X, &W, &B})), 1, c.cout, oh, ow), kTol,
                         c.dw ? "dw" : "conv");
    }
}

TEST(FullyConnectedF32, Gemm) {
    std::mt19937 g(3);
    const int m = 2, k = 40, n = 9;
    auto x = rand_f32(g, size_t(m * k)), w = rand_f32(g, size_t(n * k)), b = rand_f32(g, size_t(n));
    std::vector<float> got(size_t(m * n));
    mk_fully_connected_f32(x.data(), m, k, w.data(), n, b.data(), got.data(), 0.0f, kInf);  // fused ReLU
    num::Attributes a;
    a.set("transB", int64_t{1});
    const num::Tensor X = f32({m, k}, x), W = f32({n, k}, w), B = f32({n}, b);
    auto ref = values<float>(run1("Gemm", a, {&X, &W, &B}));
    for (auto& v : ref) v = std::max(v, 0.0f);
    expect_close_f32(got, ref, kTol, "gemm");
}

TEST(BinaryF32, BroadcastOps) {
    std::mt19937 g(4);
    auto a = rand_f32(g, 2 * 3 * 4 * 5), b = rand_f32(g, 3 * 1 * 5, 0.5f, 2.0f);
    mk_bcast4 bc{};
    bc.out = {2, 3, 4, 5};
    const int32_t as[4] = {60, 20, 5, 1}, bs[4] = {0, 5, 0, 1};
    for (int i = 0; i < 4; ++i) { bc.a_stride[i] = as[i]; bc.b_stride[i] = bs[i]; }
    const num::Tensor A = f32({2, 3, 4, 5}, a), B = f32({3, 1, 5}, b);
    const std::pair<mk_binop, const char*> ops[] = {{MK_BIN_ADD, "Add"}, {MK_BIN_SUB, "Sub"}, {MK_BIN_MUL, "Mul"},
                                                    {MK_BIN_DIV, "Div"}, {MK_BIN_MAX, "Max"}, {MK_BIN_MIN, "Min"}};
    for (const auto& op : ops) {
        std::vector<float> got(a.size());
        mk_binary_f32(op.first, a.data(), b.data(), got.data(), &bc);
        expect_close_f32(got, values<float>(run1(op.second, {}, {&A, &B})), kTol, op.second);
    }
}

TEST(UnaryF32, Activations) {
    std::mt19937 g(6);
    auto x = rand_f32(g, 400, -8.0f, 8.0f);
    const num::Tensor X = f32({400}, x);
    auto check = [&](mk_unop op, const num::Tensor& ref, float alpha, float beta, const char* name) {
        std::vector<float> got(x.size());
        mk_unary_f32(op, x.data(), got.data(), 400, alpha, beta);
        expect_close_f32(got, values<float>(ref), kTol, name);
    };
    num::Attributes leaky, elu, hs;
    leaky.set("alpha", 0.1f);
    elu.set("alpha", 0.7f);
    hs.set("alpha", 1.0f / 6.0f);
    hs.set("beta", 0.5f);
    const num::Tensor lo = scalar_f(0.0f), hi = scalar_f(6.0f);
    check(MK_UN_RELU, run1("Relu", {}, {&X}), 0, 0, "relu");
    check(MK_UN_RELU6, run1("Clip", {}, {&X, &lo, &hi}), 0, 0, "relu6");
    check(MK_UN_LEAKY_RELU, run1("LeakyRelu", leaky, {&X}), 0.1f, 0, "leaky");
    check(MK_UN_SIGMOID, run1("Sigmoid", {}, {&X}), 0, 0, "sigmoid");
    check(MK_UN_TANH, run1("Tanh", {}, {&X}), 0, 0, "tanh");
    check(MK_UN_ELU, run1("Elu", elu, {&X}), 0.7f, 0, "elu");
    check(MK_UN_ABS, run1("Abs", {}, {&X}), 0, 0, "abs");
    check(MK_UN_EXP, run1("Exp", {}, {&X}), 0, 0, "exp");
    check(MK_UN_HARD_SIGMOID, run1("HardSigmoid", hs, {&X}), 1.0f / 6.0f, 0.5f, "hardsigmoid");
    const num::Tensor HS = run1("HardSigmoid", hs, {&X});  // HardSwish = x * HardSigmoid(1/6, 0.5)
    check(MK_UN_HARD_SWISH, run1("Mul", {}, {&X, &HS}), 0, 0, "hardswish");
    // PReLU with per-channel slope over NHWC [1,4,5,4] == ONNX NCHW slope [C,1,1].
    auto px = rand_f32(g, 80), slope = rand_f32(g, 4);
    std::vector<float> got(80);
    mk_prelu_f32(px.data(), got.data(), 80, 4, slope.data(), 4);
    const num::Tensor PX = f32({1, 4, 4, 5}, nhwc_to_nchw(px, 1, 4, 5, 4)), SL = f32({4, 1, 1}, slope);
    expect_close_f32(got, nchw_to_nhwc(values<float>(run1("PRelu", {}, {&PX, &SL})), 1, 4, 4, 5), kTol, "prelu");
}

TEST(PoolF32, MaxAvgSoftmaxReduceArgMax) {
    std::mt19937 g(8);
    const int h = 7, w = 6, c = 3, k = 3, s = 2, pad = 1;
    const int oh = (h + 2 * pad - k) / s + 1, ow = (w + 2 * pad - k) / s + 1;
    auto x = rand_f32(g, size_t(h * w * c));
    mk_pool_params p{k, k, s, s, pad, pad, 0, 0, 0};
    std::vector<float> mx(size_t(oh * ow * c)), av(mx.size());
    mk_max_pool_f32(x.data(), {1, h, w, c}, mx.data(), {1, oh, ow, c}, &p);
    mk_avg_pool_f32(x.data(), {1, h, w, c}, av.data(), {1, oh, ow, c}, &p);
    num::Attributes a;
    a.set("kernel_shape", std::vector<int64_t>{k, k});
    a.set("strides", std::vector<int64_t>{s, s});
    a.set("pads", std::vector<int64_t>{pad, pad, pad, pad});
    const num::Tensor X = f32({1, c, h, w}, nhwc_to_nchw(x, 1, h, w, c));
    expect_close_f32(mx, nchw_to_nhwc(values<float>(run1("MaxPool", a, {&X})), 1, c, oh, ow), kTol, "maxpool");
    expect_close_f32(av, nchw_to_nhwc(values<float>(run1("AveragePool", a, {&X})), 1, c, oh, ow), kTol, "avgpool");

    auto sx = rand_f32(g, 5 * 17, -5.0f, 5.0f);
    const num::Tensor SX = f32({5, 17}, sx);
    num::Attributes ax;
    ax.set("axis", int64_t{-1});
    for (int lg = 0; lg < 2; ++lg) {
        std::vector<float> got(sx.size());
        mk_softmax_f32(sx.data(), got.data(), 5, 17, lg);
        expect_close_f32(got, values<float>(run1(lg ? "LogSoftmax" : "Softmax", ax, {&SX})), kTol, "softmax");
    }
    // Reductions over the middle axis of [2][3][4] (ONNX axes {1}), keepdims 0.
    auto rx = rand_f32(g, 24);
    const num::Tensor RX = f32({2, 3, 4}, rx), AXES = i64({1}, {1});
    num::Attributes rk;
    rk.set("keepdims", int64_t{0});
    const std::pair<mk_reduce, const char*> reds[] = {
        {MK_RED_MEAN, "ReduceMean"}, {MK_RED_SUM, "ReduceSum"}, {MK_RED_MAX, "ReduceMax"}, {MK_RED_MIN, "ReduceMin"}};
    for (const auto& r : reds) {
        std::vector<float> got(8);
        mk_reduce_f32(r.first, rx.data(), got.data(), 2, 3, 4);
        num::Attributes ra = rk;
        ra.set("axes", std::vector<int64_t>{1});
        std::vector<num::Tensor> out;
        // opset 18 takes axes as an input; older ops as an attribute - run_op accepts either form.
        const num::Tensor ref = run1(r.second, ra, {&RX});
        expect_close_f32(got, values<float>(ref), kTol, r.second);
    }
    std::vector<int32_t> am(8);
    mk_argmax_f32(rx.data(), am.data(), 2, 3, 4);
    num::Attributes aa;
    aa.set("axis", int64_t{1});
    aa.set("keepdims", int64_t{0});
    const auto ref = values<int64_t>(run1("ArgMax", aa, {&RX}));
    for (size_t i = 0; i < 8; ++i) EXPECT_EQ(am[i], ref[i]);
}

TEST(ResizeF32, NearestAndBilinear) {
    std::mt19937 g(10);
    const int h = 4, w = 5, c = 2, oh = 8, ow = 7;
    auto x = rand_f32(g, size_t(h * w * c));
    const num::Tensor X = f32({1, c, h, w}, nhwc_to_nchw(x, 1, h, w, c));
    const num::Tensor SIZES = i64({4}, {1, c, oh, ow});
    const char* modes[] = {"nearest", "linear", "nearest", "nearest"};
    const char* nearest[] = {"round_prefer_floor", "", "round_prefer_ceil", "floor"};  // seed 000's three
    const char* coords[] = {"half_pixel", "align_corners", "asymmetric"};
    for (int m = 0; m < 4; ++m)
        for (int co = 0; co < 3; ++co) {
            std::vector<float> got(size_t(oh * ow * c));
            mk_resize_f32(x.data(), {1, h, w, c}, got.data(), {1, oh, ow, c}, m, co);
            num::Attributes a;
            a.set("mode", std::string(modes[m]));
            if (m != 1) a.set("nearest_mode", std::string(nearest[m]));
            a.set("coordinate_transformation_mode", std::string(coords[co]));
            const auto ref = values<float>(run1("Resize", a, {&X, nullptr, nullptr, &SIZES}));
            expect_close_f32(got, nchw_to_nhwc(ref, 1, c, oh, ow), kTol, std::string(modes[m]) + "/" + coords[co]);
        }
}

TEST(LayoutKernels, ConcatTransposePadSlice) {
    std::mt19937 g(14);
    auto a = rand_f32(g, 2 * 3 * 4), b = rand_f32(g, 2 * 5 * 4);
    std::vector<float> cat(2 * 8 * 4);
    const void* ins[2] = {a.data(), b.data()};
    const int32_t sizes[2] = {3, 5};
    mk_concat(ins, sizes, 2, 2, 4, sizeof(float), cat.data());
    num::Attributes ca;
    ca.set("axis", int64_t{1});
    const num::Tensor A = f32({2, 3, 4}, a), B = f32({2, 5, 4}, b);
    EXPECT_EQ(cat, values<float>(run1("Concat", ca, {&A, &B})));

    auto x = rand_i8(g, 2 * 3 * 4 * 5);
    const int32_t dims[4] = {2, 3, 4, 5}, perm[4] = {0, 2, 3, 1};
    std::vector<int8_t> tr(x.size());
    mk_transpose4(x.data(), dims, perm, 1, tr.data());
    num::Attributes ta;
    ta.set("perm", std::vector<int64_t>{0, 2, 3, 1});
    const num::Tensor X = i8({2, 3, 4, 5}, x);
    EXPECT_EQ(tr, values<int8_t>(run1("Transpose", ta, {&X})));

    const int32_t before[4] = {0, 1, 2, 0}, after[4] = {1, 0, 1, 2};
    const int8_t padv = -5;
    std::vector<int8_t> pd(size_t(3 * 4 * 7 * 7));
    mk_pad4(x.data(), dims, before, after, &padv, 1, pd.data());
    const num::Tensor PADS = i64({8}, {0, 1, 2, 0, 1, 0, 1, 2}), PV = scalar_i8(padv);
    EXPECT_EQ(pd, values<int8_t>(run1("Pad", {}, {&X, &PADS, &PV})));

    const int32_t begin[4] = {1, 0, 3, 1}, step[4] = {1, 2, -1, 2}, od[4] = {1, 2, 3, 2};
    std::vector<int8_t> sl(12);
    mk_slice4(x.data(), dims, begin, step, od, 1, sl.data());
    const num::Tensor ST = i64({4}, {1, 0, 3, 1}), EN = i64({4}, {2, 3, 0, 5}), AX = i64({4}, {0, 1, 2, 3}),
                      SP = i64({4}, {1, 2, -1, 2});
    EXPECT_EQ(sl, values<int8_t>(run1("Slice", {}, {&X, &ST, &EN, &AX, &SP})));
}

}  // namespace
