// SPDX-License-Identifier: MIT
// Issue 21 acceptance 1, the cross-check: each TFLite test model (gen_tflite_models.py, flatc from
// the repository's schema) and its ONNX twin (the same graph and weights in ONNX's NCHW convention,
// QDQ as onnxruntime's quantizer writes it for the int8 ones) run through the reference executor on
// the same input. Float models agree to float rounding; int8 models differ only by the two
// arithmetics' roundings (TFLite's fixed-point MultiplyByQuantizedMultiplier and round-half-away
// vs onnxruntime's float requantization with round-half-to-even), a few output LSB at most.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "compiler/model_loader.h"
#include "compiler/ref/reference.h"

namespace {

std::string dir() {
    const char* d = std::getenv("MCU_TFLITE_MODELS_DIR");
    return d ? d : "";
}

/// NHWC -> NCHW of a rank-4 tensor (other ranks unchanged).
num::Tensor to_nchw(const num::Tensor& t) {
    if (t.rank() != 4) return t;
    const int64_t N = t.dim(0), H = t.dim(1), W = t.dim(2), C = t.dim(3);
    num::Tensor o(t.dtype(), {N, C, H, W});
    const size_t e = num::dtype_size(t.dtype());
    for (int64_t n = 0; n < N; ++n)
        for (int64_t y = 0; y < H; ++y)
            for (int64_t x = 0; x < W; ++x)
                for (int64_t c = 0; c < C; ++c)
                    std::memcpy(o.raw() + size_t(((n * C + c) * H + y) * W + x) * e, t.raw() + size_t(((n * H + y) * W + x) * C + c) * e, e);
    return o;
}

struct Diff {
    double max_abs = 0.0;
    size_t n = 0;
};

Diff compare(const num::Tensor& a, const num::Tensor& b) {
    Diff d;
    EXPECT_EQ(a.numel(), b.numel());
    EXPECT_EQ(a.dtype(), b.dtype());
    d.n = std::min(a.numel(), b.numel());
    for (size_t i = 0; i < d.n; ++i) {
        const double x = a.dtype() == num::DType::F32 ? a.data<float>()[i] : a.data<int8_t>()[i];
        const double y = b.dtype() == num::DType::F32 ? b.data<float>()[i] : b.data<int8_t>()[i];
        d.max_abs = std::max(d.max_abs, std::fabs(x - y));
    }
    return d;
}

/// Runs model and twin on the same seeded input; returns the per-output max |difference| (in output
/// units: LSB for int8 outputs, the value for float ones).
std::vector<Diff> run_pair(const std::string& base) {
    const auto g = drv::importer::load_model(dir() + "/" + base + ".tflite");
    const auto t = drv::importer::load_model(dir() + "/" + base + "_twin.onnx");
    EXPECT_EQ(g.inputs().size(), 1u);
    EXPECT_EQ(t.inputs().size(), 1u);
    const num::Tensor x = drv::ref::random_input(g.value(g.inputs()[0]), 7, 0);
    num::Tensor xt = to_nchw(x);
    xt.quant = {};
    const auto a = drv::ref::execute(g, {{g.inputs()[0], x}});
    const auto b = drv::ref::execute(t, {{t.inputs()[0], xt}});
    std::vector<Diff> out;
    for (size_t k = 0; k < g.outputs().size(); ++k) out.push_back(compare(a.at(g.outputs()[k]), b.at(t.outputs()[k])));
    return out;
}

class TfliteTwin : public ::testing::TestWithParam<const char*> {};

TEST_P(TfliteTwin, ReferenceAgreesWithOnnxTwin) {
    if (dir().empty()) GTEST_SKIP() << "MCU_TFLITE_MODELS_DIR not set";
    const std::string base = GetParam();
    const bool int8 = base.find("int8") != std::string::npos;
    const auto diffs = run_pair(base);
    ASSERT_FALSE(diffs.empty());
    for (const Diff& d : diffs) {
        // Float: float32 sums in a different order (TFLite-style direct loops vs im2col GEMM).
        // int8 outputs in LSB, dequantized ones (scale 1/256 for the softmaxes): 4 LSB = 4/256.
        const double tol = !int8 ? 1e-4 : (base == "tfl_kws_int8" ? 4.0 : 4.0 / 256.0);
        EXPECT_LE(d.max_abs, tol) << base << ": " << d.n << " values";
        std::printf("%s: %zu values, max |tflite - onnx twin| = %g\n", base.c_str(), d.n, d.max_abs);
    }
}

INSTANTIATE_TEST_SUITE_P(Models, TfliteTwin,
                         ::testing::Values("tfl_cnn_f32", "tfl_cnn_int8", "tfl_kws_f32", "tfl_kws_int8", "tfl_mobilenet_f32",
                                           "tfl_mobilenet_int8", "tfl_facedet_f32", "tfl_upsample_f32", "tfl_upsample_int8"),
                         [](const ::testing::TestParamInfo<const char*>& i) { return std::string(i.param); });

}  // namespace
