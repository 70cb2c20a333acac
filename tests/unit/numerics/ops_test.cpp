// SPDX-License-Identifier: MIT
// run_op on small hand-computed cases: broadcasting, padding modes, conv auto_pad, pooling shapes,
// quantize/dequantize per axis, QLinearConv requantization, resize, split, error reporting.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "test_util.h"

using namespace numtest;
using num::Attributes;
using num::DType;
using num::Tensor;

TEST(Broadcast, AddColumnPlusRow) {
    // [2,1] + [1,3] -> [2,3]: a[i] + b[j].
    const Tensor a = f32({2, 1}, {10, 20}), b = f32({1, 3}, {1, 2, 3});
    const auto y = run("Add", {}, {&a, &b});
    ASSERT_EQ(y[0].shape(), (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(values<float>(y[0]), (std::vector<float>{11, 12, 13, 21, 22, 23}));
}

TEST(Broadcast, RankExtensionAndMismatchError) {
    const Tensor a = f32({2, 3}, {1, 2, 3, 4, 5, 6}), b = f32({3}, {10, 20, 30}), c = f32({2}, {1, 2});
    EXPECT_EQ(values<float>(run("Mul", {}, {&a, &b})[0]), (std::vector<float>{10, 40, 90, 40, 100, 180}));
    EXPECT_THROW(run("Add", {}, {&a, &c}), num::OpError);
}

TEST(Pad, ReflectEdgeWrapConstantOnOneDim) {
    const Tensor x = f32({3}, {1, 2, 3});
    const Tensor pads = i64({2, 2});
    auto pad = [&](const char* mode) {
        Attributes a;
        a.set("mode", std::string(mode));
        return values<float>(run("Pad", a, {&x, &pads})[0]);
    };
    // reflect mirrors without repeating the edge; edge repeats it; wrap is periodic.
    EXPECT_EQ(pad("reflect"), (std::vector<float>{3, 2, 1, 2, 3, 2, 1}));
    EXPECT_EQ(pad("edge"), (std::vector<float>{1, 1, 1, 2, 3, 3, 3}));
    EXPECT_EQ(pad("wrap"), (std::vector<float>{2, 3, 1, 2, 3, 1, 2}));
    EXPECT_EQ(pad("constant"), (std::vector<float>{0, 0, 1, 2, 3, 0, 0}));
}

TEST(Pad, NegativePadsCrop) {
    const Tensor x = f32({4}, {1, 2, 3, 4});
    const Tensor pads = i64({-1, 1});
    EXPECT_EQ(values<float>(run("Pad", {}, {&x, &pads})[0]), (std::vector<float>{2, 3, 4, 0}));
}

TEST(Conv, SameLowerPutsExtraPaddingFirst) {
    // 3x3 input 1..9, 2x2 kernel of ones, SAME_LOWER: total pad 1 per dim, all of it at the
    // start, so y[i][j] = sum of x over rows i-1..i, cols j-1..j (clipped).
    const Tensor x = f32({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
    const Tensor w = f32({1, 1, 2, 2}, {1, 1, 1, 1});
    Attributes a;
    a.set("auto_pad", std::string("SAME_LOWER"));
    const auto y = run("Conv", a, {&x, &w});
    EXPECT_EQ(values<float>(y[0]), (std::vector<float>{1, 3, 5, 5, 12, 16, 11, 24, 28}));
    a.set("auto_pad", std::string("SAME_UPPER"));  // pad at the end instead
    EXPECT_EQ(values<float>(run("Conv", a, {&x, &w})[0]), (std::vector<float>{12, 16, 9, 24, 28, 15, 15, 17, 9}));
}

TEST(Conv, BadGroupIsAnOpError) {
    const Tensor x = f32({1, 3, 4, 4}, {}), w = f32({2, 1, 1, 1}, {});
    Attributes a;
    a.set("group", int64_t{2});
    EXPECT_THROW(run("Conv", a, {&x, &w}), num::OpError);
}

TEST(MaxPool, CeilModeDropsWindowStartingInPadding) {
    // in 4, k 2, s 2, pad end 1: ceil((4+1-2)/2)+1 = 3 windows, but the third would start at 4
    // (>= in + pad_begin) so ONNX keeps 2... with pads [0,1] it starts at 4 -> dropped.
    const Tensor x = f32({1, 1, 4}, {1, 5, 2, 7});
    Attributes a;
    a.set("kernel_shape", std::vector<int64_t>{2});
    a.set("strides", std::vector<int64_t>{2});
    a.set("pads", std::vector<int64_t>{0, 1});
    a.set("ceil_mode", int64_t{1});
    EXPECT_EQ(run("MaxPool", a, {&x})[0].shape(), (std::vector<int64_t>{1, 1, 2}));
    const Tensor x5 = f32({1, 1, 5}, {1, 5, 2, 7, 3});  // third window starts at 4 < 5: kept
    EXPECT_EQ(values<float>(run("MaxPool", a, {&x5})[0]), (std::vector<float>{5, 7, 3}));
}

TEST(AveragePool, CountIncludePadDivisor) {
    // 1-D [2, 4], k 3, pads 1/1: window 0 covers (pad, 2, 4): sum 6; /3 with pads, /2 without.
    const Tensor x = f32({1, 1, 2}, {2, 4});
    Attributes a;
    a.set("kernel_shape", std::vector<int64_t>{3});
    a.set("pads", std::vector<int64_t>{1, 1});
    EXPECT_EQ(values<float>(run("AveragePool", a, {&x})[0]), (std::vector<float>{3, 3}));
    a.set("count_include_pad", int64_t{1});
    EXPECT_EQ(values<float>(run("AveragePool", a, {&x})[0]), (std::vector<float>{2, 2}));
}

TEST(QuantizeLinear, PerAxisInt8TiesAndSaturation) {
    // Channel 0: scale 0.5, zp 0 -> 0.25/0.5 = 0.5 -> 0, 0.75 -> 1.5 -> 2.
    // Channel 1: scale 1, zp 100 -> 27.5 -> 28 + 100 = 128 -> 127; -0.5 -> 0 + 100.
    const Tensor x = f32({2, 2}, {0.25f, 0.75f, 27.5f, -0.5f});
    const Tensor s = f32({2}, {0.5f, 1.0f});
    const Tensor z = make<int8_t>(DType::I8, {2}, {0, 100});
    Attributes a;
    a.set("axis", int64_t{0});
    const auto y = run("QuantizeLinear", a, {&x, &s, &z});
    ASSERT_EQ(y[0].dtype(), DType::I8);
    EXPECT_EQ(values<int8_t>(y[0]), (std::vector<int8_t>{0, 2, 127, 100}));
    const auto back = run("DequantizeLinear", a, {&y[0], &s, &z});
    EXPECT_EQ(values<float>(back[0]), (std::vector<float>{0.0f, 1.0f, 27.0f, 0.0f}));
}

TEST(QuantizeLinear, PerTensorRowMatchesTheOnnxDefinition) {
    // The per-tensor path (a vectorising row loop) against the ONNX definition written out with
    // std::nearbyint (RNE in the default rounding mode): saturate(round(x / s) + zp), NaN -> zp
    // (onnxruntime). Values: ties both ways, -0, NaN, infinities, huge and tiny magnitudes, and a
    // pseudo-random sweep over the int8 range and past it; 67 elements (not a multiple of a vector).
    std::vector<float> xs{0.125f, 0.375f, -0.125f, -0.375f, 0.625f, -0.625f, -0.0f, NAN, INFINITY, -INFINITY,
                          1e30f, -1e30f, 1e-30f, 3.0e7f, -3.0e7f, 63.75f, -64.25f};
    uint32_t seed = 12345;
    while (xs.size() < 67) {
        seed = seed * 1664525u + 1013904223u;
        xs.push_back((static_cast<float>(seed >> 8) / 16777216.0f - 0.5f) * 80.0f);
    }
    const float scale = 0.25f;
    for (const int zp : {0, -3, 100}) {
        const Tensor x = f32({static_cast<int64_t>(xs.size())}, xs), s = f32({}, {scale});
        const Tensor z = make<int8_t>(DType::I8, {}, {static_cast<int8_t>(zp)});
        const auto y = values<int8_t>(run("QuantizeLinear", {}, {&x, &s, &z})[0]);
        ASSERT_EQ(y.size(), xs.size());
        for (size_t i = 0; i < xs.size(); ++i) {
            const float v = xs[i] / scale;
            const double q = v != v ? zp : std::min(127.0, std::max(-128.0, std::nearbyint(static_cast<double>(v)) + zp));
            EXPECT_EQ(y[i], static_cast<int8_t>(q)) << "x = " << xs[i] << ", zp = " << zp;
        }
    }
    // uint8 outputs (the AVX-512 path narrows both signednesses the same way).
    for (const int zp : {0, 128, 200}) {
        const Tensor x = f32({static_cast<int64_t>(xs.size())}, xs), s = f32({}, {scale});
        const Tensor z = make<uint8_t>(DType::U8, {}, {static_cast<uint8_t>(zp)});
        const auto y = values<uint8_t>(run("QuantizeLinear", {}, {&x, &s, &z})[0]);
        ASSERT_EQ(y.size(), xs.size());
        for (size_t i = 0; i < xs.size(); ++i) {
            const float v = xs[i] / scale;
            const double q = v != v ? zp : std::min(255.0, std::max(0.0, std::nearbyint(static_cast<double>(v)) + zp));
            EXPECT_EQ(y[i], static_cast<uint8_t>(q)) << "x = " << xs[i] << ", zp = " << zp;
        }
    }
}

TEST(QLinearConv, RequantizesWithBiasAndZeroPoints) {
    // 1x1 conv, one input channel: acc = (x - 128) * (w - 0) + bias.
    // x = 138, w = 3, bias = 5: acc = 35; scale = 0.5 * 0.25 / 0.5 = 0.25 -> 8.75 -> 9, + zp 100.
    // x = 130: acc = 6 + 5 = 11 -> 2.75 -> 3 -> 103. x = 0: acc = -379 -> -94.75 -> -95 -> 5.
    const Tensor x = make<uint8_t>(DType::U8, {1, 1, 1, 3}, {138, 130, 0});
    const Tensor xs = f32({}, {0.5f}), ws = f32({}, {0.25f}), ys = f32({}, {0.5f});
    const Tensor xz = make<uint8_t>(DType::U8, {}, {128}), yz = make<uint8_t>(DType::U8, {}, {100});
    const Tensor w = make<int8_t>(DType::I8, {1, 1, 1, 1}, {3}), wz = make<int8_t>(DType::I8, {}, {0});
    const Tensor b = make<int32_t>(DType::I32, {1}, {5});
    const auto y = run("QLinearConv", {}, {&x, &xs, &xz, &w, &ws, &wz, &ys, &yz, &b});
    EXPECT_EQ(values<uint8_t>(y[0]), (std::vector<uint8_t>{109, 103, 5}));
}

TEST(Resize, NearestAsymmetricFloorDoublesEachPixel) {
    const Tensor x = f32({1, 1, 1, 2}, {1, 2});
    const Tensor scales = f32({4}, {1, 1, 2, 2});
    Attributes a;
    a.set("coordinate_transformation_mode", std::string("asymmetric"));
    a.set("nearest_mode", std::string("floor"));
    const auto y = run("Resize", a, {&x, nullptr, &scales});
    EXPECT_EQ(values<float>(y[0]), (std::vector<float>{1, 1, 2, 2, 1, 1, 2, 2}));
}

TEST(Split, NumOutputsLastPartSmaller) {
    // ONNX-18: ceil(5 / 3) = 2 -> parts 2, 2, 1.
    const Tensor x = f32({5}, {1, 2, 3, 4, 5});
    Attributes a;
    a.set("num_outputs", int64_t{3});
    const auto y = run("Split", a, {&x});
    ASSERT_EQ(y.size(), 3u);
    EXPECT_EQ(values<float>(y[2]), (std::vector<float>{5}));
}

TEST(Slice, NegativeStepReverses) {
    const Tensor x = f32({5}, {1, 2, 3, 4, 5});
    const Tensor st = i64({-1}), en = i64({-100}), ax = i64({0}), sp = i64({-2});
    EXPECT_EQ(values<float>(run("Slice", {}, {&x, &st, &en, &ax, &sp})[0]), (std::vector<float>{5, 3, 1}));
}

TEST(Registry, UnknownOpAndDomainFallback) {
    EXPECT_THROW(run("NoSuchOp", {}, {}), num::OpError);
    EXPECT_TRUE(num::op_supported("QLinearConv", "com.microsoft"));
    EXPECT_TRUE(num::op_supported("QuantizeLinear", "com.microsoft"));
    const auto ops = num::supported_ops();
    EXPECT_TRUE(std::is_sorted(ops.begin(), ops.end()));
    EXPECT_NE(std::find(ops.begin(), ops.end(), "com.microsoft:QGemm"), ops.end());
}

TEST(Errors, MissingInputNamesTheOp) {
    const Tensor x = f32({2}, {1, 2});
    try {
        run("Add", {}, {&x});
        FAIL() << "expected OpError";
    } catch (const num::OpError& e) {
        EXPECT_NE(std::string(e.what()).find("Add"), std::string::npos);
    }
}
