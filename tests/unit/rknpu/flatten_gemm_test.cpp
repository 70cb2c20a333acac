// SPDX-License-Identifier: MIT
// Flatten of a feature map read by a fully connected layer (issue 13: the RKNN converter runs a
// Gemm as a convolution; VGG / AlexNet / CNN keyword-spotting heads flatten a [1,C,H,W] map with
// H W > 1). The model is written as onnxruntime's quantize_static writes it: the activations
// uint8 Q -> DQ, Flatten between a DQ and a Q of the input's parameters (a "move" op), the Gemm's
// B per-tensor int8 with a DequantizeLinear, its bias int32 with scale x_scale * w_scale. The
// compiler must run Flatten + Gemm as one H x W convolution on the NPU (the flat index c H W +
// h W + w is the kernel's (c, h, w)), within 1 LSB of the reference in isolation and end to end,
// on rk3588 and rk3566; a Flatten with a second reader is not absorbed.
#ifdef NPUSIM_TEST_HAS_ONNX_BUILDER
#include <gtest/gtest.h>

#include <iostream>

#include "compiler/onnx/onnx_importer.h"
#include "compiler/ref/reference.h"
#include "direct/direct_exec.h"
#include "compiler/rknpu/model.h"
#include "hw/profile.h"
#include "onnx_builder.h"

namespace {

using namespace drv::rknpu;

constexpr int32_t kU8 = ::onnx::TensorProto::UINT8;
constexpr int32_t kF32 = ::onnx::TensorProto::FLOAT;
constexpr int C = 24, H = 5, W = 3, N = 40;

std::vector<int32_t> ramp(size_t n, int lo, int hi, int step) {
    std::vector<int32_t> v(n);
    int x = lo;
    for (auto& e : v) {
        e = x;
        x += step;
        if (x > hi) x = lo + (x - hi - 1);
    }
    return v;
}

/// x [1,C,H,W] -> QDQ -> Flatten -> QDQ (same parameters) -> Gemm(B^T, bias) -> QDQ -> y [1,N];
/// `second_reader`: the flat tensor is also a graph output.
drv::ir::Graph flatten_gemm_graph(bool second_reader) {
    test_onnx::ModelBuilder b(13);
    b.input("x", kF32, {1, C, H, W});
    b.qdq("x", "xq", "xf", "xq", 0.03f, kU8, 128);
    b.node("Flatten", {"xf"}, {"flat_f"}, "flatten");
    // The input's parameters (onnxruntime: Flatten is a move op), the same initializers.
    b.node("QuantizeLinear", {"flat_f", "xq_s", "xq_z"}, {"fq"});
    b.node("DequantizeLinear", {"fq", "xq_s", "xq_z"}, {"flat"});
    const int K = C * H * W;
    b.dq_weight("w", {N, K}, ramp(static_cast<size_t>(N) * K, -90, 90, 7), 0.004f, "wf");
    b.init_int("bias", ::onnx::TensorProto::INT32, {N}, ramp(N, -400, 400, 37));
    b.init_f32("bias_s", {}, {0.03f * 0.004f});
    b.init_int("bias_z", ::onnx::TensorProto::INT32, {}, {0});
    b.node("DequantizeLinear", {"bias", "bias_s", "bias_z"}, {"bias_f"});
    auto& g = b.node("Gemm", {"flat", "wf", "bias_f"}, {"gf"}, "fc");
    test_onnx::ModelBuilder::attr_int(g, "transB", 1);
    b.qdq("gf", "yq", "y", "y", 0.25f, kU8, 120);
    b.output("y");
    if (second_reader) b.output("flat");
    drv::importer::ImportOptions o;
    o.qdq = drv::importer::QdqMode::Rewrite;
    const std::string s = b.bytes();
    return drv::importer::import_onnx_bytes(s.data(), s.size(), o, "flatten_gemm.onnx");
}

TEST(FlattenGemm, OneHxWConvolutionOnTheNpu) {
    const drv::ir::Graph g = flatten_gemm_graph(false);
    std::map<std::string, num::Tensor> in;
    in["x"] = drv::ref::random_input(g.value("x"), 7, 0);
    for (size_t i = 0; i < in["x"].numel(); ++i) in["x"].data<float>()[i] *= 3.5f;
    const auto ref = sim::reference_values(g, in);
    const auto want = drv::ref::execute(g, in);
    for (const char* socn : {"rk3588", "rk3566"}) {
        const hw::SocProfile soc = hw::load_named_profile(socn);
        const CompiledModel m = compile_model(g, soc);
        for (const auto& p : verify_tiling(m, soc)) ADD_FAILURE() << socn << ": " << p;
        const Layer* fc = nullptr;
        for (const auto& L : m.layers) {
            std::cout << "[flatten_gemm " << socn << "] " << L.name << " " << L.op << " "
                      << (L.unit == Unit::Npu ? "NPU" : L.unit == Unit::Cpu ? "CPU" : "view") << ": " << L.note << "\n";
            EXPECT_NE(L.op, "Flatten") << socn << ": the Flatten is part of the conv layer";
            if (L.name == "fc") fc = &L;
        }
        ASSERT_NE(fc, nullptr) << socn;
        ASSERT_EQ(fc->unit, Unit::Npu) << socn << ": " << fc->note;
        EXPECT_EQ(fc->in_shape, "1x24x5x3") << socn;
        EXPECT_EQ(fc->macs, static_cast<uint64_t>(C) * H * W * N) << socn;
        sim::DirectOptions o;
        o.isolated_reference = &ref;
        const sim::DirectResult r = sim::run_direct(m, soc, in, o);
        bool seen = false;
        for (const auto& c : r.layers)
            if (m.layers[c.layer].name == "fc") {
                seen = true;
                // The same integer sum as onnxruntime's QGemm; the requantization's rounding tie.
                EXPECT_LE(c.diff.max_diff, 1) << socn << ": " << c.diff.str();
                std::cout << "[flatten_gemm " << socn << "] isolated: " << c.diff.str() << "\n";
            }
        EXPECT_TRUE(seen) << socn;
        const sim::DirectResult e = sim::run_direct(m, soc, in);
        const sim::TensorDiff d = sim::compare_tensors(e.outputs.at("y"), want.at("y"));
        EXPECT_LE(d.max_abs, 0.25 + 1e-6) << socn << ": " << d.str();
    }
}

TEST(FlattenGemm, FlattenWithASecondReaderStaysItsOwnLayer) {
    const drv::ir::Graph g = flatten_gemm_graph(true);
    const hw::SocProfile soc = hw::load_named_profile("rk3588");
    const CompiledModel m = compile_model(g, soc);
    bool flatten = false;
    for (const auto& L : m.layers) {
        if (L.op == "Flatten") flatten = true;
        if (L.name == "fc") {
            EXPECT_EQ(L.in_shape, "1x360") << L.note;
        }
    }
    EXPECT_TRUE(flatten);
}

}  // namespace
#endif
