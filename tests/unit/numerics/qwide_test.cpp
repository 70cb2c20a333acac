// SPDX-License-Identifier: MIT
// Widths beyond 8 bits and narrowed grids (`_qbits`) in the reference operators: each result is
// checked against a naive computation written here from the ONNX formulas (QuantizeLinear:
// saturate(RNE(x / scale) + zp) with the grid of the bit width; QLinearConv: exact sum of
// (x - xz)(w - wz) + bias, times x_scale * w_scale / y_scale, RNE, + zp, saturate), so an error in
// the library's generalisation shows up as a difference.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "numerics/requant.h"
#include "test_util.h"

using namespace numtest;
using num::DType;
using num::Tensor;

namespace {

Tensor scalar_f(float v) { return make(DType::F32, {}, std::vector<float>{v}); }
template <typename T>
Tensor scalar_of(DType d, T v) {
    return make(d, {}, std::vector<T>{v});
}

// The rounding the ONNX formula asks for, written independently of the library.
int64_t rne(double v) {
    const double f = std::floor(v);
    const double d = v - f;
    if (d > 0.5) return static_cast<int64_t>(f) + 1;
    if (d < 0.5) return static_cast<int64_t>(f);
    return (static_cast<int64_t>(f) % 2 == 0) ? static_cast<int64_t>(f) : static_cast<int64_t>(f) + 1;
}

}  // namespace

TEST(QWide, QuantizeLinearInt16AndNarrowedGrids) {
    const Tensor x = f32({6}, {-1000.f, -3.3f, -0.25f, 0.75f, 2.5f, 1000.f});
    const Tensor s = scalar_f(0.5f);
    const Tensor z16 = scalar_of<int16_t>(DType::I16, 3);
    num::Attributes a;
    auto y16 = run("QuantizeLinear", a, {&x, &s, &z16})[0];
    ASSERT_EQ(y16.dtype(), DType::I16);
    // RNE(x / 0.5) + 3: -2000+3, RNE(-6.6)=-7 -> -4, RNE(-0.5)=0 -> 3, RNE(1.5)=2 -> 5, 5+3, 2000+3.
    EXPECT_EQ(values<int16_t>(y16), (std::vector<int16_t>{-1997, -4, 3, 5, 8, 2003}));
    a.set("_qbits", int64_t{12});  // 12-bit data in the 16-bit container: [-2048, 2047]
    auto y12 = run("QuantizeLinear", a, {&x, &s, &z16})[0];
    EXPECT_EQ(values<int16_t>(y12), (std::vector<int16_t>{-1997, -4, 3, 5, 8, 2003}));
    const Tensor big = f32({2}, {-5000.f, 5000.f});
    EXPECT_EQ(values<int16_t>(run("QuantizeLinear", a, {&big, &s, &z16})[0]), (std::vector<int16_t>{-2048, 2047}));
    num::Attributes a4;
    a4.set("_qbits", int64_t{4});  // 4-bit data in an int8 container: [-8, 7]
    const Tensor z8 = scalar_of<int8_t>(DType::I8, 0);
    EXPECT_EQ(values<int8_t>(run("QuantizeLinear", a4, {&x, &s, &z8})[0]), (std::vector<int8_t>{-8, -7, 0, 2, 5, 7}));
    const Tensor zu = scalar_of<uint8_t>(DType::U8, 8);  // uint4: [0, 15]
    EXPECT_EQ(values<uint8_t>(run("QuantizeLinear", a4, {&x, &s, &zu})[0]),
              (std::vector<uint8_t>{0, 1, 8, 10, 13, 15}));
    num::Attributes bad;
    bad.set("_qbits", int64_t{17});
    EXPECT_THROW(run("QuantizeLinear", bad, {&x, &s, &z16}), num::OpError);
}

TEST(QWide, DequantizeLinearUint16) {
    const Tensor q = make(DType::U16, {3}, std::vector<uint16_t>{0, 32768, 65535});
    const Tensor s = scalar_f(0.25f);
    const Tensor z = scalar_of<uint16_t>(DType::U16, 32768);
    EXPECT_EQ(values<float>(run("DequantizeLinear", {}, {&q, &s, &z})[0]),
              (std::vector<float>{-8192.f, 0.f, 8191.75f}));
}

// 16-bit activations x 8-bit weights (and 20-bit weights in int32) against the naive formula.
TEST(QWide, QLinearConvMixedWidthsMatchNaiveFormula) {
    std::mt19937 rng(7);
    for (int wbits : {8, 16, 20}) {
        const int64_t C = 3, H = 5, W = 6, M = 4, K = 3;
        const DType wd = wbits == 8 ? DType::I8 : (wbits == 16 ? DType::I16 : DType::I32);
        Tensor x(DType::I16, {1, C, H, W}), w(wd, {M, C, K, K}), b(DType::I32, {M});
        std::uniform_int_distribution<int> xv(-32768, 32767);
        const int64_t wmax = (int64_t{1} << (wbits - 1)) - 1;
        std::uniform_int_distribution<int64_t> wv(-wmax, wmax);
        for (size_t i = 0; i < x.numel(); ++i) x.data<int16_t>()[i] = static_cast<int16_t>(xv(rng));
        for (size_t i = 0; i < w.numel(); ++i) {
            const int64_t v = wv(rng);
            if (wd == DType::I8)
                w.data<int8_t>()[i] = static_cast<int8_t>(v);
            else if (wd == DType::I16)
                w.data<int16_t>()[i] = static_cast<int16_t>(v);
            else
                w.data<int32_t>()[i] = static_cast<int32_t>(v);
        }
        for (int64_t m = 0; m < M; ++m) b.data<int32_t>()[m] = static_cast<int32_t>(1000 * m - 1500);
        const float xs = 0.01f, ys = wbits == 20 ? 3000.0f : (wbits == 16 ? 10.0f : 0.05f);
        const Tensor xst = scalar_f(xs), yst = scalar_f(ys);
        const Tensor xz = scalar_of<int16_t>(DType::I16, 5), yz = scalar_of<int16_t>(DType::I16, -7);
        Tensor wst = f32({M}, {0.002f, 0.003f, 0.0017f, 0.004f});
        Tensor wz(wd, {M});
        num::Attributes a;
        a.set("pads", std::vector<int64_t>{1, 1, 1, 1});
        const auto y = run("QLinearConv", a, {&x, &xst, &xz, &w, &wst, &wz, &yst, &yz, &b})[0];
        ASSERT_EQ(y.dtype(), DType::I16);
        ASSERT_EQ(y.shape(), (std::vector<int64_t>{1, M, H, W}));
        auto wat = [&](size_t i) -> int64_t {
            if (wd == DType::I8) return w.data<int8_t>()[i];
            if (wd == DType::I16) return w.data<int16_t>()[i];
            return w.data<int32_t>()[i];
        };
        int saturated = 0;
        for (int64_t m = 0; m < M; ++m)
            for (int64_t oy = 0; oy < H; ++oy)
                for (int64_t ox = 0; ox < W; ++ox) {
                    int64_t acc = b.data<int32_t>()[m];
                    for (int64_t c = 0; c < C; ++c)
                        for (int64_t ky = 0; ky < K; ++ky)
                            for (int64_t kx = 0; kx < K; ++kx) {
                                const int64_t iy = oy + ky - 1, ix = ox + kx - 1;
                                if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                                acc += (x.data<int16_t>()[(c * H + iy) * W + ix] - 5) *
                                       wat(static_cast<size_t>(((m * C + c) * K + ky) * K + kx));
                            }
                    const float s = xs * wst.data<float>()[m] / ys;
                    int64_t q = rne(static_cast<double>(acc) * s) - 7;
                    if (q < -32768 || q > 32767) ++saturated;
                    q = std::min<int64_t>(32767, std::max<int64_t>(-32768, q));
                    EXPECT_EQ(y.data<int16_t>()[(m * H + oy) * W + ox], q) << "wbits " << wbits << " m " << m;
                }
        EXPECT_LT(saturated, static_cast<int>(y.numel())) << "scales chosen so that most outputs are in range";
    }
}

TEST(QWide, QLinearAddAndMulInt16WithNarrowedGrid) {
    const Tensor a = make(DType::I16, {4}, std::vector<int16_t>{-30000, -10, 100, 30000});
    const Tensor b = make(DType::I16, {4}, std::vector<int16_t>{-30000, 20, -50, 30000});
    const Tensor sa = scalar_f(0.5f), sb = scalar_f(0.25f), sc = scalar_f(1.0f);
    const Tensor z = scalar_of<int16_t>(DType::I16, 0);
    num::Attributes at;
    // (0.5 a + 0.25 b) / 1: -22500, 0, 37.5 -> 38 (RNE of .5 to even), 22500
    EXPECT_EQ(values<int16_t>(run("QLinearAdd", at, {&a, &sa, &z, &b, &sb, &z, &sc, &z}, "com.microsoft")[0]),
              (std::vector<int16_t>{-22500, 0, 38, 22500}));
    at.set("_qbits", int64_t{14});  // [-8192, 8191]
    EXPECT_EQ(values<int16_t>(run("QLinearAdd", at, {&a, &sa, &z, &b, &sb, &z, &sc, &z}, "com.microsoft")[0]),
              (std::vector<int16_t>{-8192, 0, 38, 8191}));
    const Tensor sm = scalar_f(1000.0f);
    // a*b*0.125/1000: 112500 -> 8191, -0.025 -> 0, -0.625 -> -1, 112500 -> 8191
    EXPECT_EQ(values<int16_t>(run("QLinearMul", at, {&a, &sa, &z, &b, &sb, &z, &sm, &z}, "com.microsoft")[0]),
              (std::vector<int16_t>{8191, 0, -1, 8191}));
}

TEST(QWide, LookupOpsAndPoolsOnInt16) {
    const Tensor x = make(DType::I16, {1, 1, 2, 2}, std::vector<int16_t>{-4000, -1, 0, 4000});
    const Tensor xs = scalar_f(0.001f), ys = scalar_f(1.0f / 32768.0f);
    const Tensor xz = scalar_of<int16_t>(DType::I16, 0), yz = scalar_of<int16_t>(DType::I16, -32768);
    const auto y = run("QLinearSigmoid", {}, {&x, &xs, &xz, &ys, &yz}, "com.microsoft")[0];
    for (size_t i = 0; i < 4; ++i) {
        const float r = static_cast<float>(x.data<int16_t>()[i]) * 0.001f;
        const float sig = 1.0f / (1.0f + std::exp(-r));
        const int64_t want = std::min<int64_t>(32767, rne(static_cast<double>(sig / (1.0f / 32768.0f))) - 32768);
        EXPECT_EQ(y.data<int16_t>()[i], want) << i;
    }
    const Tensor gs = scalar_f(0.5f);
    const auto g = run("QLinearGlobalAveragePool", {}, {&x, &xs, &xz, &gs, &xz}, "com.microsoft")[0];
    // mean = -0.25 codes -> * 0.001 / 0.5 = -0.0005 -> 0
    EXPECT_EQ(values<int16_t>(g), (std::vector<int16_t>{0}));
    num::Attributes mp;
    mp.set("kernel_shape", std::vector<int64_t>{2, 2});
    EXPECT_EQ(values<int16_t>(run("MaxPool", mp, {&x})[0]), (std::vector<int16_t>{4000}));
}

TEST(QWide, MulShiftWideProductIsExact) {
    // 2^50 * (2^30 + 1) >> 40 = 2^40 + 2^10: needs more than 64 bits in the product.
    const int64_t x = int64_t{1} << 50;
    EXPECT_EQ(num::mul_shift(x, (1 << 30) + 1, 40, num::Rounding::HalfToEven), (int64_t{1} << 40) + 1024);
    EXPECT_EQ(num::mul_shift(-3, 1, 1, num::Rounding::HalfToEven), -2);  // -1.5 -> -2 (even)
    EXPECT_EQ(num::mul_shift(-5, 1, 1, num::Rounding::HalfToEven), -2);  // -2.5 -> -2
    EXPECT_EQ(num::int_range(12, true).lo, -2048);
    EXPECT_EQ(num::int_range(20, true).hi, 524287);
    EXPECT_EQ(num::int_range(4, false).hi, 15);
}
