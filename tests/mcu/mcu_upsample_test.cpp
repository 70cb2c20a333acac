// SPDX-License-Identifier: MIT
// TFLite RESIZE_NEAREST_NEIGHBOR / RESIZE_BILINEAR, BATCH_MATMUL, TRANSPOSE_CONV and ONNX ConvTranspose /
// runtime MatMul (issue 21: operators the seed-000 checker accepts get MCU kernels).
//  1. The reference executor's TFLite forms against independent expectations: float against the ONNX
//     operator of the same meaning (Resize, MatMul, ConvTranspose - those are checked against
//     onnxruntime in tests/oracle), int8 within 1 LSB of that float result on the dequantized codes,
//     and TFLite's own resize_bilinear test vector ({3, 6} -> {3, 5, 6}, tensorflow/lite/kernels/
//     resize_bilinear_test.cc HorizontalResize).
//  2. The MCU converter and the host build of the firmware runtime against the reference executor,
//     int8 bit-exact, float32 within 1e-5 (mcu_op_test_util.h).
#include "mcu_op_test_util.h"

namespace {

using namespace mcut;

num::Tensor tf(Ints s, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
    num::Tensor t(num::DType::F32, s);
    uint64_t st = seed * 2654435761u + 1;
    for (size_t i = 0; i < t.numel(); ++i) {
        st = st * 6364136223846793005ull + 1442695040888963407ull;
        t.data<float>()[i] = lo + (hi - lo) * float((st >> 40) & 0xffff) / 65535.0f;
    }
    return t;
}

num::Tensor nhwc_to_nchw(const num::Tensor& x) {
    const int64_t N = x.dim(0), H = x.dim(1), W = x.dim(2), C = x.dim(3);
    num::Tensor y(x.dtype(), {N, C, H, W});
    for (int64_t n = 0; n < N; ++n)
        for (int64_t h = 0; h < H; ++h)
            for (int64_t w = 0; w < W; ++w)
                for (int64_t c = 0; c < C; ++c) y.data<float>()[((n * C + c) * H + h) * W + w] = x.data<float>()[((n * H + h) * W + w) * C + c];
    return y;
}

num::Tensor i64t(std::vector<int64_t> v) {
    num::Tensor t(num::DType::I64, {int64_t(v.size())});
    std::memcpy(t.raw(), v.data(), v.size() * 8);
    return t;
}
num::Tensor i32t(std::vector<int32_t> v) {
    num::Tensor t(num::DType::I32, {int64_t(v.size())});
    std::memcpy(t.raw(), v.data(), v.size() * 4);
    return t;
}

double max_diff(const num::Tensor& a, const num::Tensor& b) {
    EXPECT_EQ(a.numel(), b.numel());
    double m = 0;
    for (size_t i = 0; i < a.numel() && i < b.numel(); ++i) m = std::max(m, double(std::fabs(a.data<float>()[i] - b.data<float>()[i])));
    return m;
}

// TFLite float resize == ONNX Resize with the equivalent coordinate mode (bilinear: half_pixel /
// align_corners / asymmetric; nearest: tf_half_pixel_for_nearest + floor, align_corners +
// round_prefer_ceil, asymmetric + floor), sizes with exact scales.
TEST(TfliteReference, ResizeFloatEqualsOnnxResize) {
    const num::Tensor x = tf({1, 4, 6, 3}, 1);
    const num::Tensor xo = nhwc_to_nchw(x);
    struct C {
        bool bilinear, align, half;
        const char *ctm, *nearest;
    };
    for (const C c : {C{true, false, true, "half_pixel", ""}, C{true, true, false, "align_corners", ""}, C{true, false, false, "asymmetric", ""},
                      C{false, false, true, "tf_half_pixel_for_nearest", "floor"}, C{false, true, false, "align_corners", "round_prefer_ceil"},
                      C{false, false, false, "asymmetric", "floor"}})
        for (auto [oh, ow] : {std::pair<int32_t, int32_t>{8, 12}, {2, 3}, {7, 11}}) {
            num::Attributes a;
            a.set("align_corners", int64_t(c.align));
            a.set("half_pixel_centers", int64_t(c.half));
            const num::Tensor size = i32t({oh, ow});
            const num::Tensor y = num::run_op(c.bilinear ? "RESIZE_BILINEAR" : "RESIZE_NEAREST_NEIGHBOR", a, {&x, &size}, "tflite").at(0);
            num::Attributes o;
            o.set("mode", std::string(c.bilinear ? "linear" : "nearest"));
            o.set("coordinate_transformation_mode", std::string(c.ctm));
            if (!c.bilinear) o.set("nearest_mode", std::string(c.nearest));
            const num::Tensor sizes = i64t({1, 3, oh, ow});
            const num::Tensor r = num::run_op("Resize", o, {&xo, nullptr, nullptr, &sizes}).at(0);
            // 7x11 is not an exact scale: the two coordinate formulas round differently in float.
            const double tol = (oh == 7) ? 1e-5 : 1e-6;
            EXPECT_LE(max_diff(nhwc_to_nchw(y), r), tol) << c.ctm << " " << oh << "x" << ow << (c.bilinear ? " bilinear" : " nearest");
        }
}

TEST(TfliteReference, ResizeBilinearInt8) {
    // tensorflow/lite/kernels/resize_bilinear_test.cc, HorizontalResize: {3, 6} -> {3, 5, 6}.
    num::Tensor x(num::DType::I8, {1, 1, 2, 1});
    x.data<int8_t>()[0] = 3, x.data<int8_t>()[1] = 6;
    x.quant.scale = {1.0f}, x.quant.zero_point = {0};
    num::Attributes a;
    a.set("_output_dtype", std::string("int8"));
    a.set("_output_scale", std::vector<float>{1.0f});
    a.set("_output_zero_point", Ints{0});
    const num::Tensor size = i32t({1, 3});
    const num::Tensor y = num::run_op("RESIZE_BILINEAR", a, {&x, &size}, "tflite").at(0);
    EXPECT_EQ(int(y.data<int8_t>()[0]), 3);
    EXPECT_EQ(int(y.data<int8_t>()[1]), 5);
    EXPECT_EQ(int(y.data<int8_t>()[2]), 6);
    // Every mode: within 1 LSB of the float kernel on the codes.
    num::Tensor q(num::DType::I8, {1, 5, 4, 3}), qf(num::DType::F32, {1, 5, 4, 3});
    for (size_t i = 0; i < q.numel(); ++i) qf.data<float>()[i] = q.data<int8_t>()[i] = int8_t(int(next() % 255) - 127);
    q.quant = x.quant;
    for (int mode = 0; mode < 3; ++mode)
        for (auto [oh, ow] : {std::pair<int32_t, int32_t>{9, 7}, {3, 2}, {10, 8}}) {
            a.set("align_corners", int64_t(mode == 1));
            a.set("half_pixel_centers", int64_t(mode == 2));
            const num::Tensor sz = i32t({oh, ow});
            const num::Tensor yi = num::run_op("RESIZE_BILINEAR", a, {&q, &sz}, "tflite").at(0);
            num::Attributes af = a;
            af.set("_output_dtype", std::string("float32"));
            const num::Tensor yf = num::run_op("RESIZE_BILINEAR", af, {&qf, &sz}, "tflite").at(0);
            for (size_t i = 0; i < yi.numel(); ++i)
                EXPECT_LE(std::fabs(float(yi.data<int8_t>()[i]) - yf.data<float>()[i]), 1.0f) << mode << " " << i;
        }
}

TEST(TfliteReference, BatchMatmulEqualsOnnxMatMul) {
    for (int adj = 0; adj < 4; ++adj) {
        const bool ax = adj & 1, ay = adj & 2;
        const int64_t B = 2, M = 3, K = 5, N = 4;
        const num::Tensor x = tf(ax ? Ints{B, K, M} : Ints{B, M, K}, 2), w = tf(ay ? Ints{B, N, K} : Ints{B, K, N}, 3);
        num::Attributes a;
        a.set("adj_x", int64_t(ax));
        a.set("adj_y", int64_t(ay));
        const num::Tensor y = num::run_op("BATCH_MATMUL", a, {&x, &w}, "tflite").at(0);
        num::Attributes tp;
        tp.set("perm", Ints{0, 2, 1});
        const num::Tensor xt = ax ? num::run_op("Transpose", tp, {&x}).at(0) : x, wt = ay ? num::run_op("Transpose", tp, {&w}).at(0) : w;
        const num::Tensor r = num::run_op("MatMul", {}, {&xt, &wt}).at(0);
        EXPECT_LE(max_diff(y, r), 1e-6) << adj;
    }
}

TEST(TfliteReference, TransposeConvEqualsOnnxConvTranspose) {
    for (const char* pad : {"SAME", "VALID"})
        for (int64_t s : {1, 2, 3})
            for (int64_t k : {2, 3}) {
                const int64_t H = 4, W = 5, IC = 3, OC = 2;
                const int64_t OH = std::string(pad) == "SAME" ? H * s : (H - 1) * s + k, OW = std::string(pad) == "SAME" ? W * s : (W - 1) * s + k;
                const num::Tensor x = tf({1, H, W, IC}, 4), w = tf({OC, k, k, IC}, 5), b = tf({OC}, 6);
                const num::Tensor os = i32t({1, int32_t(OH), int32_t(OW), int32_t(OC)});
                num::Attributes a;
                a.set("padding", std::string(pad));
                a.set("stride_h", s);
                a.set("stride_w", s);
                const num::Tensor y = num::run_op("TRANSPOSE_CONV", a, {&os, &w, &x, &b}, "tflite").at(0);
                // ONNX: W [IC, OC, k, k]; TFLite's padding is the forward conv's over the output size,
                // all at the top/left when even, the odd one at the bottom/right.
                num::Tensor wo(num::DType::F32, {IC, OC, k, k});
                for (int64_t o = 0; o < OC; ++o)
                    for (int64_t ky = 0; ky < k; ++ky)
                        for (int64_t kx = 0; kx < k; ++kx)
                            for (int64_t i = 0; i < IC; ++i) wo.data<float>()[((i * OC + o) * k + ky) * k + kx] = w.data<float>()[((o * k + ky) * k + kx) * IC + i];
                const int64_t total = std::string(pad) == "SAME" ? std::max<int64_t>(k - s, 0) : 0, pb = total - total / 2;
                num::Attributes o;
                o.set("strides", Ints{s, s});
                Ints pads{total / 2, total / 2, pb, pb}, outpad{0, 0};
                if (std::string(pad) == "SAME" && k < s) outpad = {s - k, s - k};
                o.set("pads", pads);
                o.set("output_padding", outpad);
                const num::Tensor xo = nhwc_to_nchw(x);
                const num::Tensor r = num::run_op("ConvTranspose", o, {&xo, &wo, &b}).at(0);
                EXPECT_LE(max_diff(nhwc_to_nchw(y), r), 2e-6) << pad << " s" << s << " k" << k;
            }
}

class Upsample : public ::testing::TestWithParam<bool> {};

TEST_P(Upsample, Resize) {
    for (bool bil : {false, true})
        for (int mode = 0; mode < 3; ++mode)
            for (auto [oh, ow] : {std::pair<int64_t, int64_t>{12, 10}, {3, 2}, {7, 9}}) {
                T t(GetParam());
                t.in("x", {1, 6, 5, 4}, 0.05f, 3).ints("size", {2}, {int32_t(oh), int32_t(ow)}).out("y", {1, oh, ow, 4}, 0.05f, 3);
                t.op(bil ? "RESIZE_BILINEAR" : "RESIZE_NEAREST_NEIGHBOR", {"x", "size"},
                     {{"align_corners", int64_t(mode == 1)}, {"half_pixel_centers", int64_t(mode == 2)}});
                EXPECT_EQ(run(t), "") << bil << " mode " << mode << " " << oh << "x" << ow;
            }
}

TEST_P(Upsample, BatchMatmul) {
    for (int adj = 0; adj < 4; ++adj)
        for (int shape = 0; shape < 3; ++shape) {
            const bool ax = adj & 1, ay = adj & 2;
            const int64_t M = 3, K = 6, N = 5;
            Ints lead = shape == 0 ? Ints{} : shape == 1 ? Ints{2} : Ints{2, 2};
            auto dims = [&](Ints lastd) {
                Ints d = lead;
                d.insert(d.end(), lastd.begin(), lastd.end());
                return d;
            };
            T t(GetParam());
            t.in("x", dims(ax ? Ints{K, M} : Ints{M, K}), 0.04f, -2).in("w", dims(ay ? Ints{N, K} : Ints{K, N}), 0.03f, 5).out("y", dims({M, N}), 0.09f, 1);
            t.op("BATCH_MATMUL", {"x", "w"}, {{"adj_x", int64_t(ax)}, {"adj_y", int64_t(ay)}});
            EXPECT_EQ(run(t), "") << "adj " << adj << " shape " << shape;
        }
    T t(GetParam());  // a constant rank-2 y shared by every batch
    t.in("x", {3, 4, 6}).weight("w", {6, 5}, 0, false).out("y", {3, 4, 5}, 0.1f, 0);
    t.op("BATCH_MATMUL", {"x", "w"});
    EXPECT_EQ(run(t), "") << "shared rhs";
}

TEST_P(Upsample, TransposeConv) {
    for (const char* pad : {"SAME", "VALID"})
        for (int64_t s : {1, 2})
            for (int64_t k : {1, 3, 4})
                for (bool bias : {false, true}) {
                    const int64_t H = 5, W = 4, IC = 3, OC = 4;
                    const int64_t OH = std::string(pad) == "SAME" ? H * s : (H - 1) * s + k, OW = std::string(pad) == "SAME" ? W * s : (W - 1) * s + k;
                    T t(GetParam());
                    t.ints("os", {4}, {1, int32_t(OH), int32_t(OW), int32_t(OC)}).weight("w", {OC, k, k, IC}).in("x", {1, H, W, IC});
                    if (bias) t.bias("b", OC);
                    t.out("y", {1, OH, OW, OC}, 0.2f, -3);
                    t.op("TRANSPOSE_CONV", {"os", "w", "x", bias ? "b" : ""}, {{"padding", S(pad)}, {"stride_h", s}, {"stride_w", s}});
                    EXPECT_EQ(run(t), "") << pad << " s" << s << " k" << k << " bias " << bias;
                }
}

INSTANTIATE_TEST_SUITE_P(Int8AndFloat, Upsample, ::testing::Values(true, false),
                         [](const ::testing::TestParamInfo<bool>& i) { return i.param ? "int8" : "fp32"; });

TEST(OnnxUpsample, ConvTranspose) {
    struct C {
        Ints strides, pads, dil, outpad;
        const char* auto_pad;
        int64_t k;
    };
    for (const C& c : {C{{2, 2}, {1, 1, 1, 1}, {1, 1}, {1, 1}, "NOTSET", 3}, C{{1, 1}, {0, 0, 0, 0}, {2, 2}, {0, 0}, "NOTSET", 3},
                       C{{2, 3}, {0, 1, 2, 0}, {1, 1}, {0, 2}, "NOTSET", 4}, C{{2, 2}, {}, {1, 1}, {0, 0}, "SAME_UPPER", 3},
                       C{{2, 2}, {}, {1, 1}, {1, 1}, "SAME_LOWER", 4}, C{{3, 2}, {}, {1, 2}, {0, 0}, "VALID", 2}}) {
        const int64_t H = 4, W = 5, IC = 3, OC = 2;
        int64_t out[2];
        for (int i = 0; i < 2; ++i) {
            const int64_t in = i ? W : H, full = c.strides[size_t(i)] * (in - 1) + c.outpad[size_t(i)] + (c.k - 1) * c.dil[size_t(i)] + 1;
            out[i] = std::string(c.auto_pad) == "NOTSET" ? full - c.pads[size_t(i)] - c.pads[size_t(i) + 2]
                     : std::string(c.auto_pad) == "VALID" ? full : in * c.strides[size_t(i)];
        }
        T t(false, false);
        t.in("x", {1, IC, H, W}).weight("w", {IC, OC, c.k, c.k}).weight("b", {OC}).out("y", {1, OC, out[0], out[1]});
        A a{{"strides", c.strides}, {"dilations", c.dil}, {"output_padding", c.outpad}, {"auto_pad", S(c.auto_pad)}};
        if (!c.pads.empty()) a.push_back({"pads", c.pads});
        t.op("ConvTranspose", {"x", "w", "b"}, a);
        EXPECT_EQ(run(t), "") << c.auto_pad << " k" << c.k;
    }
}

TEST(OnnxUpsample, MatMulOfRuntimeTensors) {
    for (Ints xs : {Ints{4, 6}, Ints{3, 4, 6}})
        for (bool shared : {false, true}) {
            if (xs.size() == 2 && !shared) continue;
            Ints ws = shared ? Ints{6, 5} : Ints{3, 6, 5}, ys = xs;
            ys.back() = 5;
            T t(false, false);
            t.in("a", xs).in("b", ws).out("y", ys);
            t.op("MatMul", {"a", "b"});
            EXPECT_EQ(run(t), "") << xs.size() << " shared " << shared;
        }
}

}  // namespace
