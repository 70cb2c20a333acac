// SPDX-License-Identifier: MIT
// int8 Conv2D / DepthwiseConv2D / FullyConnected against the reference operator library:
//  - exact: ConvInteger / MatMulInteger (exact int32 sums) + bias + num::mul_shift(HalfUp) with the
//    kernel's multiplier/shift - the integer pipeline the MCU runs, so outputs must match bit for bit;
//  - onnxruntime semantics: QLinearConv / QLinearMatMul (float scale, round half to even) - our
//    fixed-point Q31 multiplier differs on exact ties and where float's 24-bit product rounds
//    differently, so we assert <= 1 LSB and print the measured fraction of differing outputs.
#include <cstdio>

#include "kernel_test_util.h"
#include "mk/mk_int8.h"
#include "numerics/requant.h"

namespace {
using namespace mkt;

struct ConvCase {
    const char* name;
    int h, w, cin, cout, k, stride, pad, dil;
    bool depthwise;
    mk_act act;
};

const ConvCase kCases[] = {
    {"c3x3_s1_p1", 8, 8, 3, 8, 3, 1, 1, 1, false, MK_ACT_NONE},
    {"c3x3_s2_odd_cout", 7, 9, 5, 6, 3, 2, 1, 1, false, MK_ACT_RELU},
    {"c5x5_dil2", 10, 10, 4, 4, 5, 1, 2, 2, false, MK_ACT_NONE},
    {"lenet_c1", 28, 28, 1, 6, 5, 1, 0, 1, false, MK_ACT_RELU},
    {"c1x1", 6, 6, 8, 16, 1, 1, 0, 1, false, MK_ACT_RELU6},
    {"dw3x3_s1", 9, 9, 8, 8, 3, 1, 1, 1, true, MK_ACT_NONE},
    {"dw3x3_s2_c10", 10, 7, 10, 10, 3, 2, 1, 1, true, MK_ACT_RELU},
    {"dw_mult2", 6, 6, 3, 6, 3, 1, 1, 1, true, MK_ACT_NONE},
    {"dw5x5_dil2", 11, 11, 4, 4, 5, 1, 4, 2, true, MK_ACT_RELU6},
};

class ConvS8 : public ::testing::TestWithParam<ConvCase> {};

TEST_P(ConvS8, MatchesReference) {
    const ConvCase& c = GetParam();
    std::mt19937 g(1234u + static_cast<unsigned>(c.h * 131 + c.cout));
    const int oh = (c.h + 2 * c.pad - c.dil * (c.k - 1) - 1) / c.stride + 1;
    const int ow = (c.w + 2 * c.pad - c.dil * (c.k - 1) - 1) / c.stride + 1;
    const int wcin = c.depthwise ? 1 : c.cin;
    const float sx = 0.02f, sy = 0.05f + 0.01f * float(c.cout);
    const int zx = std::uniform_int_distribution<int>(-20, 20)(g), zy = std::uniform_int_distribution<int>(-10, 10)(g);
    auto x = rand_i8(g, size_t(c.h * c.w * c.cin));               // NHWC
    auto w_onnx = rand_i8(g, size_t(c.cout * wcin * c.k * c.k));  // [Cout][Cin/g][kh][kw]
    auto bias = rand_i32(g, size_t(c.cout), -3000, 3000);
    std::vector<float> sw(size_t(c.cout));
    for (auto& s : sw) s = std::uniform_real_distribution<float>(0.002f, 0.02f)(g);

    // Kernel layouts: OHWI for Conv2D, [kh][kw][Cout] for depthwise.
    std::vector<int8_t> wk(w_onnx.size());
    for (int o = 0; o < c.cout; ++o)
        for (int i = 0; i < wcin; ++i)
            for (int ky = 0; ky < c.k; ++ky)
                for (int kx = 0; kx < c.k; ++kx) {
                    const int8_t v = w_onnx[size_t(((o * wcin + i) * c.k + ky) * c.k + kx)];
                    if (c.depthwise) wk[size_t((ky * c.k + kx) * c.cout + o)] = v;
                    else wk[size_t(((o * c.k + ky) * c.k + kx) * wcin + i)] = v;
                }
    std::vector<int32_t> mult(size_t(c.cout)), shift(size_t(c.cout));
    for (int o = 0; o < c.cout; ++o) {
        const mk_qscale q = mk_quantize_scale(double(sx) * double(sw[size_t(o)]) / double(sy));
        mult[size_t(o)] = q.multiplier;
        shift[size_t(o)] = q.shift;
    }
    mk_conv_s8_params p{};
    p.stride_h = p.stride_w = c.stride;
    p.dil_h = p.dil_w = c.dil;
    p.pad_top = p.pad_left = c.pad;
    p.in_zp = zx;
    p.out_zp = zy;
    mk_act_range_s8(c.act, sy, zy, &p.act_min, &p.act_max);
    p.mult = mult.data();
    p.shift = shift.data();
    std::vector<int8_t> got(size_t(oh * ow * c.cout));
    const mk_shape4 is{1, c.h, c.w, c.cin}, os{1, oh, ow, c.cout};
    if (c.depthwise) mk_depthwise_conv2d_s8(x.data(), is, wk.data(), c.k, c.k, bias.data(), got.data(), os, &p);
    else mk_conv2d_s8(x.data(), is, wk.data(), c.k, c.k, bias.data(), got.data(), os, &p);

    num::Attributes a;
    a.set("kernel_shape", std::vector<int64_t>{c.k, c.k});
    a.set("strides", std::vector<int64_t>{c.stride, c.stride});
    a.set("dilations", std::vector<int64_t>{c.dil, c.dil});
    a.set("pads", std::vector<int64_t>{c.pad, c.pad, c.pad, c.pad});
    a.set("group", int64_t{c.depthwise ? c.cin : 1});
    const num::Tensor X = i8({1, c.cin, c.h, c.w}, nhwc_to_nchw(x, 1, c.h, c.w, c.cin));
    const num::Tensor W = i8({c.cout, wcin, c.k, c.k}, w_onnx);
    const num::Tensor XZ = scalar_i8(zx), WZ = scalar_i8(0);

    // Exact integer pipeline.
    const auto acc = values<int32_t>(run1("ConvInteger", a, {&X, &W, &XZ, &WZ}));
    std::vector<int8_t> exact(acc.size());
    for (int o = 0; o < c.cout; ++o)
        for (int i = 0; i < oh * ow; ++i) {
            const size_t idx = size_t(o * oh * ow + i);
            const int64_t v = num::mul_shift(int64_t(acc[idx]) + bias[size_t(o)], mult[size_t(o)], 31 + shift[size_t(o)],
                                             num::Rounding::HalfUp) + zy;
            exact[idx] = static_cast<int8_t>(num::saturate(v, p.act_min, p.act_max));
        }
    EXPECT_EQ(got, nchw_to_nhwc(exact, 1, c.cout, oh, ow)) << c.name;

    // onnxruntime QLinearConv (no fused activation there: apply the clamp on its output).
    const num::Tensor SX = scalar_f(sx), SW = f32({c.cout}, sw), SY = scalar_f(sy), YZ = scalar_i8(zy);
    const num::Tensor B = i32({c.cout}, bias);
    auto ort = values<int8_t>(run1("QLinearConv", a, {&X, &SX, &XZ, &W, &SW, &WZ, &SY, &YZ, &B}));
    for (auto& v : ort) v = static_cast<int8_t>(num::saturate(v, p.act_min, p.act_max));
    const double frac = expect_close_i8(got, nchw_to_nhwc(ort, 1, c.cout, oh, ow), 1, c.name);
    std::printf("[ info ] %s: %.4f of outputs differ by 1 LSB from QLinearConv\n", c.name, frac);
}

INSTANTIATE_TEST_SUITE_P(Kernels, ConvS8, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<ConvCase>& i) { return std::string(i.param.name); });

TEST(FullyConnectedS8, MatchesReference) {
    for (int n : {10, 16, 7}) {
        std::mt19937 g(77u + unsigned(n));
        const int m = 3, k = 50;
        const float sx = 0.03f, sw = 0.01f, sy = 0.2f;
        const int zx = 5, zy = -3;
        auto x = rand_i8(g, size_t(m * k));
        auto w = rand_i8(g, size_t(n * k));  // [N][K]
        std::vector<int32_t> bias(size_t(n), 0);
        const mk_qscale q = mk_quantize_scale(double(sx) * double(sw) / double(sy));
        std::vector<int32_t> mult(size_t(n), q.multiplier), shift(size_t(n), q.shift);
        std::vector<int8_t> got(size_t(m * n));
        mk_fully_connected_s8(x.data(), m, k, w.data(), n, bias.data(), got.data(), zx, zy, mult.data(), shift.data(),
                              nullptr, -128, 127, 0);
        std::vector<int8_t> wt(w.size());  // [K][N] for MatMul
        for (int j = 0; j < n; ++j)
            for (int i = 0; i < k; ++i) wt[size_t(i * n + j)] = w[size_t(j * k + i)];
        const num::Tensor X = i8({m, k}, x), W = i8({k, n}, wt), XZ = scalar_i8(zx), WZ = scalar_i8(0);
        const auto acc = values<int32_t>(run1("MatMulInteger", {}, {&X, &W, &XZ, &WZ}));
        std::vector<int8_t> exact(acc.size());
        for (size_t i = 0; i < acc.size(); ++i)
            exact[i] = num::saturate_i8(num::mul_shift(acc[i], q.multiplier, 31 + q.shift, num::Rounding::HalfUp) + zy);
        EXPECT_EQ(got, exact);
        const num::Tensor SX = scalar_f(sx), SW = scalar_f(sw), SY = scalar_f(sy), YZ = scalar_i8(zy);
        const auto ort = values<int8_t>(run1("QLinearMatMul", {}, {&X, &SX, &XZ, &W, &SW, &WZ, &SY, &YZ}));
        const double frac = expect_close_i8(got, ort, 1, "fc");
        std::printf("[ info ] fc n=%d: %.4f of outputs differ by 1 LSB from QLinearMatMul\n", n, frac);
    }
}

TEST(Requant, QuantizeScaleRepresentsTheScale) {
    for (double s : {1e-6, 0.000123, 0.0049, 0.25, 0.5, 0.999999, 1.0, 3.7, 1000.0}) {
        const mk_qscale q = mk_quantize_scale(s);
        ASSERT_GE(q.multiplier, 1 << 30) << s;
        const double v = double(q.multiplier) * std::ldexp(1.0, -(31 + q.shift));
        EXPECT_NEAR(v / s, 1.0, 1e-9) << s;
    }
    EXPECT_EQ(mk_quantize_scale(0.0).multiplier, 0);
    // Rounding is half toward +inf: 3 * 0.5 = 1.5 -> 2, -3 * 0.5 = -1.5 -> -1.
    const mk_qscale half = mk_quantize_scale(0.5);
    EXPECT_EQ(mk_requant(3, half.multiplier, half.shift), 2);
    EXPECT_EQ(mk_requant(-3, half.multiplier, half.shift), -1);
}

}  // namespace

namespace {
using namespace mkt;

// Float requantization mode: bit-exact with onnxruntime's QLinearConv / QLinearMatMul when the
// converter computes the float scale with the reference's expression (x_scale * w_scale / y_scale).
TEST(ConvS8FloatRequant, BitExactWithQLinearConvAndMatMul) {
    for (const ConvCase& c : kCases) {
        std::mt19937 g(99u + static_cast<unsigned>(c.h * 7 + c.cout));
        const int oh = (c.h + 2 * c.pad - c.dil * (c.k - 1) - 1) / c.stride + 1;
        const int ow = (c.w + 2 * c.pad - c.dil * (c.k - 1) - 1) / c.stride + 1;
        const int wcin = c.depthwise ? 1 : c.cin;
        const float sx = 0.017f, sy = 0.04f + 0.013f * float(c.cout);
        const int zx = std::uniform_int_distribution<int>(-20, 20)(g), zy = std::uniform_int_distribution<int>(-10, 10)(g);
        auto x = rand_i8(g, size_t(c.h * c.w * c.cin));
        auto w_onnx = rand_i8(g, size_t(c.cout * wcin * c.k * c.k));
        auto bias = rand_i32(g, size_t(c.cout), -3000, 3000);
        std::vector<float> sw(size_t(c.cout)), fs(size_t(c.cout));
        for (int o = 0; o < c.cout; ++o) {
            sw[size_t(o)] = std::uniform_real_distribution<float>(0.002f, 0.02f)(g);
            fs[size_t(o)] = sx * sw[size_t(o)] / sy;
        }
        std::vector<int8_t> wk(w_onnx.size());
        for (int o = 0; o < c.cout; ++o)
            for (int i = 0; i < wcin; ++i)
                for (int ky = 0; ky < c.k; ++ky)
                    for (int kx = 0; kx < c.k; ++kx) {
                        const int8_t v = w_onnx[size_t(((o * wcin + i) * c.k + ky) * c.k + kx)];
                        if (c.depthwise) wk[size_t((ky * c.k + kx) * c.cout + o)] = v;
                        else wk[size_t(((o * c.k + ky) * c.k + kx) * wcin + i)] = v;
                    }
        mk_conv_s8_params p{};
        p.stride_h = p.stride_w = c.stride;
        p.dil_h = p.dil_w = c.dil;
        p.pad_top = p.pad_left = c.pad;
        p.in_zp = zx;
        p.out_zp = zy;
        p.act_min = -128;
        p.act_max = 127;
        p.fscale = fs.data();
        std::vector<int8_t> got(size_t(oh * ow * c.cout));
        const mk_shape4 is{1, c.h, c.w, c.cin}, os{1, oh, ow, c.cout};
        if (c.depthwise) mk_depthwise_conv2d_s8(x.data(), is, wk.data(), c.k, c.k, bias.data(), got.data(), os, &p);
        else mk_conv2d_s8(x.data(), is, wk.data(), c.k, c.k, bias.data(), got.data(), os, &p);
        num::Attributes a;
        a.set("kernel_shape", std::vector<int64_t>{c.k, c.k});
        a.set("strides", std::vector<int64_t>{c.stride, c.stride});
        a.set("dilations", std::vector<int64_t>{c.dil, c.dil});
        a.set("pads", std::vector<int64_t>{c.pad, c.pad, c.pad, c.pad});
        a.set("group", int64_t{c.depthwise ? c.cin : 1});
        const num::Tensor X = i8({1, c.cin, c.h, c.w}, nhwc_to_nchw(x, 1, c.h, c.w, c.cin));
        const num::Tensor W = i8({c.cout, wcin, c.k, c.k}, w_onnx);
        const num::Tensor XZ = scalar_i8(zx), WZ = scalar_i8(0), SX = scalar_f(sx), SW = f32({c.cout}, sw),
                          SY = scalar_f(sy), YZ = scalar_i8(zy), B = i32({c.cout}, bias);
        const auto ort = values<int8_t>(run1("QLinearConv", a, {&X, &SX, &XZ, &W, &SW, &WZ, &SY, &YZ, &B}));
        EXPECT_EQ(got, nchw_to_nhwc(ort, 1, c.cout, oh, ow)) << c.name;
    }
    std::mt19937 g(5);
    const int m = 3, k = 64, n = 13;
    const float sx = 0.031f, sw = 0.0077f, sy = 0.11f;
    auto x = rand_i8(g, size_t(m * k)), w = rand_i8(g, size_t(n * k));
    std::vector<float> fs(size_t(n), sx * sw / sy);
    std::vector<int8_t> got(size_t(m * n));
    mk_fully_connected_s8(x.data(), m, k, w.data(), n, nullptr, got.data(), -3, 4, nullptr, nullptr, fs.data(), -128, 127, 0);
    std::vector<int8_t> wt(w.size());
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < k; ++i) wt[size_t(i * n + j)] = w[size_t(j * k + i)];
    const num::Tensor X = i8({m, k}, x), W = i8({k, n}, wt), XZ = scalar_i8(-3), WZ = scalar_i8(0), SX = scalar_f(sx),
                      SW = scalar_f(sw), SY = scalar_f(sy), YZ = scalar_i8(4);
    EXPECT_EQ(got, values<int8_t>(run1("QLinearMatMul", {}, {&X, &SX, &XZ, &W, &SW, &WZ, &SY, &YZ})));
}

}  // namespace

namespace {

// mk_requant's three instruction paths (31+shift > 32, == 32, < 32) against num::mul_shift(HalfUp),
// the contract's formula, over scales from 1e-6 to 200 and accumulators over the int32 range used.
TEST(Requant, AllShiftPathsMatchTheContract) {
    std::mt19937 g(31);
    std::uniform_int_distribution<int32_t> acc_d(-(1 << 24), 1 << 24);
    int paths[3] = {0, 0, 0};
    for (double s = 1e-6; s < 200.0; s *= 1.37) {
        const mk_qscale q = mk_quantize_scale(s);
        const int rs = 31 + q.shift;
        ++paths[rs > 32 ? 0 : rs == 32 ? 1 : 2];
        for (int i = 0; i < 200; ++i) {
            int32_t acc = acc_d(g);
            if (s > 1.0) acc /= 256;  // keep the product inside int32 like real layers
            const int64_t want = num::mul_shift(acc, q.multiplier, rs, num::Rounding::HalfUp);
            ASSERT_EQ(mk_requant(acc, q.multiplier, q.shift), want) << "scale " << s << " acc " << acc;
        }
    }
    EXPECT_GT(paths[0], 0);
    EXPECT_GT(paths[1], 0);
    EXPECT_GT(paths[2], 0);
}

}  // namespace
