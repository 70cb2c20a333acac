// SPDX-License-Identifier: MIT
// Issue 15, the RetinaFace-style blocks, model level: ONNX graphs as onnxruntime's QDQ quantizer
// writes them, imported with the QDQ rewrite, compiled for rk3588 and rk3566 with the vendor rules
// consulted, tiling verified, and every NPU layer run in isolation by the direct executor against
// the reference executor's values (num::run_op: onnxruntime's operator definitions).
//  - LeakyRelu / PRelu fused into the convolution with no quantization between (DQ -> Conv ->
//    LeakyRelu -> Q: onnxruntime quantizes the activation's output only): the slope in the DPU EW
//    stage's PReLU multiply (conv_prelu.cpp).
//  - A detection head's Conv -> Transpose(0, 2, 3, 1) -> Reshape(1, -1, k): the Transpose as a DPU
//    copy writing channel-last (TP_EN), the Reshape the same bytes (model_compiler_layout.cpp).
#ifdef NPUSIM_TEST_HAS_ONNX_BUILDER
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <functional>
#include <iostream>

#include "compiler/onnx/onnx_importer.h"
#include "compiler/ref/reference.h"
#include "direct/direct_exec.h"
#include "compiler/rknpu/model.h"
#include "hw/profile.h"
#include "onnx_builder.h"

namespace {

using namespace drv::rknpu;
using MB = test_onnx::ModelBuilder;

constexpr int32_t kU8 = ::onnx::TensorProto::UINT8;
constexpr int32_t kF32 = ::onnx::TensorProto::FLOAT;

/// Q -> DQ of `in` as `out` (uint8, scale s, zero point z): what the quantizer puts between ops.
void requant(MB& b, const std::string& in, const std::string& out, float s, int z) {
    b.init_f32(out + "_s", {}, {s});
    b.init_int(out + "_z", kU8, {}, {z});
    b.node("QuantizeLinear", {in, out + "_s", out + "_z"}, {out + "_q"});
    b.node("DequantizeLinear", {out + "_q", out + "_s", out + "_z"}, {out});
}

/// DQ of seeded int8 weights [K, C, k, k] (per-channel scales) and Conv of "xf" into `y`.
void conv(MB& b, const std::string& y, int C, int K, int k, bool depthwise, uint32_t seed) {
    std::vector<int32_t> w(static_cast<size_t>(K) * (depthwise ? 1 : C) * k * k);
    uint32_t s = seed;
    for (auto& v : w) v = static_cast<int>((s = s * 1664525u + 1013904223u) >> 25) - 64;
    b.init_int(y + "_w", ::onnx::TensorProto::INT8, {K, depthwise ? 1 : C, k, k}, w);
    std::vector<float> ws(static_cast<size_t>(K));
    for (int j = 0; j < K; ++j) ws[static_cast<size_t>(j)] = 0.002f + 0.0001f * static_cast<float>(j);
    b.init_f32(y + "_ws", {K}, ws);
    b.init_int(y + "_wz", ::onnx::TensorProto::INT8, {K}, std::vector<int32_t>(static_cast<size_t>(K), 0));
    MB::attr_int(b.node("DequantizeLinear", {y + "_w", y + "_ws", y + "_wz"}, {y + "_wf"}), "axis", 0);
    auto& cv = b.node("Conv", {"xf", y + "_wf"}, {y}, y);
    MB::attr_ints(cv, "pads", std::vector<int64_t>(4, k / 2));
    if (depthwise) MB::attr_int(cv, "group", C);
}

drv::ir::Graph import(MB& b, const char* name) {
    drv::importer::ImportOptions o;
    o.qdq = drv::importer::QdqMode::Rewrite;
    const std::string s = b.bytes();
    return drv::importer::import_onnx_bytes(s.data(), s.size(), o, name);
}

std::map<std::string, num::Tensor> inputs(const drv::ir::Graph& g, float spread) {
    std::map<std::string, num::Tensor> in;
    in["x"] = drv::ref::random_input(g.value("x"), 5, 0);
    for (size_t i = 0; i < in["x"].numel(); ++i) in["x"].data<float>()[i] *= spread;
    return in;
}

TEST(LayoutOps, LeakyReluAndPReluFusedIntoTheConvWithoutAnIntermediateQ) {
    struct PCase {
        std::string label, op;
        bool depthwise;
        std::function<void(MB&)> act;  // "c" -> "af"
    };
    const int C = 20;
    const std::vector<PCase> cs = {
        {"Conv -> LeakyRelu 0.1", "ConvolutionLeakyRelu", false,
         [](MB& b) { MB::attr_float(b.node("LeakyRelu", {"c"}, {"af"}, "lrelu"), "alpha", 0.1f); }},
        {"DepthwiseConv -> LeakyRelu 0.01", "DepthwiseConvolutionLeakyRelu", true,
         [](MB& b) { MB::attr_float(b.node("LeakyRelu", {"c"}, {"af"}, "lrelu"), "alpha", 0.01f); }},
        {"Conv -> PRelu scalar 0.25", "ConvolutionLeakyRelu", false,
         [](MB& b) {
             b.init_f32("slope", {1}, {0.25f});
             b.node("PRelu", {"c", "slope"}, {"af"}, "prelu");
         }},
        // Per channel: negative, zero, above 1 and small slopes (PyTorch nn.PReLU(num_parameters=K)
        // exports [K, 1, 1]).
        {"Conv -> PRelu per channel [32,1,1]", "ConvolutionPRelu", false,
         [](MB& b) {
             std::vector<float> s(32);
             for (size_t j = 0; j < s.size(); ++j) s[j] = -0.3f + 0.05f * static_cast<float>(j);
             b.init_f32("slope", {32, 1, 1}, s);
             b.node("PRelu", {"c", "slope"}, {"af"}, "prelu");
         }},
        {"DepthwiseConv -> PRelu per channel [1,20,1,1]", "DepthwiseConvolutionPRelu", true,
         [](MB& b) {
             std::vector<float> s(20);
             for (size_t j = 0; j < s.size(); ++j) s[j] = 0.02f * static_cast<float>(j + 1);
             b.init_f32("slope", {1, 20, 1, 1}, s);
             b.node("PRelu", {"c", "slope"}, {"af"}, "prelu");
         }},
    };
    for (const PCase& k : cs) {
        MB b(13);
        b.input("x", kF32, {1, C, 9, 11});
        requant(b, "x", "xf", 0.03f, 128);
        conv(b, "c", C, k.depthwise ? C : 32, 3, k.depthwise, 7);
        k.act(b);
        requant(b, "af", "y", 0.02f, 100);
        b.output("y");
        const drv::ir::Graph g = import(b, "conv_prelu.onnx");
        const auto in = inputs(g, 4.f);
        const auto ref = sim::reference_values(g, in);
        for (const char* socn : {"rk3588", "rk3566"}) {
            const hw::SocProfile soc = hw::load_named_profile(socn);
            for (const char* mask : {"auto", "0_1_2"}) {
                if (std::string(mask) != "auto" && soc.npu.core_count.value < 3) continue;
                CompileOptions co;
                co.core_mask = mask;
                const CompiledModel m = compile_model(g, soc, co);
                for (const auto& p : verify_tiling(m, soc)) ADD_FAILURE() << k.label << " " << socn << ": " << p;
                const Layer* fused = nullptr;
                size_t npu = 0;
                for (const auto& L : m.layers) {
                    npu += L.unit == Unit::Npu;
                    if (L.op == k.op) fused = &L;
                    EXPECT_NE(L.op, "LeakyRelu") << k.label << ": the activation stays in the conv's layer";
                    EXPECT_NE(L.op, "PRelu") << k.label;
                }
                ASSERT_NE(fused, nullptr) << k.label << " " << socn;
                EXPECT_EQ(npu, 1u) << k.label;
                sim::DirectOptions o;
                o.isolated_reference = &ref;
                const sim::DirectResult r = sim::run_direct(m, soc, in, o);
                ASSERT_EQ(r.layers.size(), 1u);
                const sim::TensorDiff& d = r.layers[0].diff;
                // The reference computes Conv and the activation in float and rounds once (half to
                // even); the DPU scales in fixed point (relative error ~2^-26) and applies the slope
                // as M / 2^T (~2^-19), then rounds half up: a value off by one only at rounding ties.
                EXPECT_LE(d.max_diff, 1) << k.label << " " << socn << ": " << d.str();
                EXPECT_LE(static_cast<double>(d.off_by_one), 0.01 * static_cast<double>(d.values)) << k.label;
                std::cout << fmt::format("[prelu] {:<46} {} {:<5} {} tasks {}: {}\n", k.label, socn, mask, fused->op,
                                         fused->tasks.size(), d.str());
            }
        }
    }
}

TEST(LayoutOps, DetectionHeadTransposeToChannelLastAndReshapeView) {
    // RetinaFace's class head: Conv 1x1 (20 -> 6) -> Q -> DQ -> Transpose(0,2,3,1) -> Q -> DQ ->
    // Reshape(1, -1, 3) -> Q -> DQ (data movement keeps the quantization, as the quantizer writes it).
    // 8 x 10: the RK3588 table's Transpose rule wants h * w % 8 == 0 (seed §3.2.62).
    MB b(13);
    b.input("x", kF32, {1, 20, 8, 10});
    requant(b, "x", "xf", 0.03f, 128);
    conv(b, "c", 20, 6, 1, false, 11);
    requant(b, "c", "cf", 0.05f, 120);
    MB::attr_ints(b.node("Transpose", {"cf"}, {"t"}, "transpose"), "perm", {0, 2, 3, 1});
    requant(b, "t", "tf", 0.05f, 120);
    b.init_i64("shape", {3}, {1, -1, 3});
    b.node("Reshape", {"tf", "shape"}, {"r"}, "reshape");
    requant(b, "r", "y", 0.05f, 120);
    b.output("y");
    const drv::ir::Graph g = import(b, "head.onnx");
    const auto in = inputs(g, 3.f);
    const auto ref = sim::reference_values(g, in);
    for (const char* socn : {"rk3588", "rk3566"}) {
        const hw::SocProfile soc = hw::load_named_profile(socn);
        const CompiledModel m = compile_model(g, soc);
        for (const auto& p : verify_tiling(m, soc)) ADD_FAILURE() << socn << ": " << p;
        const Layer *tp = nullptr, *rs = nullptr;
        for (const auto& L : m.layers) {
            if (L.op == "Transpose") tp = &L;
            if (L.op == "Reshape") rs = &L;
        }
        ASSERT_TRUE(tp) << socn;
        if (std::string(socn) == "rk3566") {
            // RK3566_RK3568 table (seed §3.1.58) allows other permutations only: the vendor runs it
            // on the CPU, and the Reshape of a host tensor with it.
            EXPECT_EQ(tp->unit, Unit::Cpu);
            EXPECT_EQ(tp->cpu_reason, CpuReason::VendorRule) << tp->note;
            EXPECT_NE(tp->note.find("3.1.58"), std::string::npos) << tp->note;
            ASSERT_TRUE(rs);
            EXPECT_EQ(rs->unit, Unit::Cpu) << "the Reshape of a host tensor";
            std::cout << fmt::format("[head] {} Transpose CPU: {}\n", socn, tp->note);
            continue;
        }
        ASSERT_EQ(tp->unit, Unit::Npu) << socn << ": " << tp->note;
        // The Reshape that alone reads the transposed tensor joins the layer: its output is the
        // channel-last bytes the DPU writes (a row-major [1, 160, 3] tensor: 8 x 10 pixels x 6 channels).
        EXPECT_EQ(rs, nullptr) << "Reshape layer " << (rs ? rs->note : "");
        ASSERT_EQ(tp->outputs.size(), 1u);
        ASSERT_TRUE(m.tensors.count(tp->outputs[0]));
        const DeviceTensor& flat = m.tensors.at(tp->outputs[0]);
        EXPECT_TRUE(flat.row_major);
        EXPECT_EQ(flat.ir_shape, (std::vector<int64_t>{1, 160, 3}));
        EXPECT_EQ(flat.w, 480);
        sim::DirectOptions o;
        o.isolated_reference = &ref;
        const sim::DirectResult r = sim::run_direct(m, soc, in, o);
        bool seen = false;
        for (const auto& lc : r.layers) {
            const sim::TensorDiff& d = lc.diff;
            if (m.layers[lc.layer].op == "Transpose") {
                // A copy: every value equals the reference's Transpose of the same codes.
                EXPECT_TRUE(d.exact()) << socn << ": " << d.str();
                seen = true;
            } else {
                EXPECT_LE(d.max_diff, 1) << m.layers[lc.layer].name << ": " << d.str();
            }
            std::cout << fmt::format("[head] {} {:<10} {}: {}\n", socn, m.layers[lc.layer].op,
                                     m.layers[lc.layer].name, d.str());
        }
        EXPECT_TRUE(seen);
        // End to end the output (a view of the channel-last bytes) is the reference's reshape of
        // the conv output, within the conv's 1 LSB.
        const sim::DirectResult e = sim::run_direct(m, soc, in, {});
        const sim::TensorDiff d = sim::compare_tensors(e.outputs.at("y"), ref.at("y"));
        EXPECT_TRUE(d.same_shape);
        EXPECT_LE(d.max_diff, 1) << d.str();
    }
}

TEST(LayoutOps, StandalonePReluPerChannelOnTheDpu) {
    // DQ -> PRelu (slope [1,20,1,1]: negative, zero, small and > 1 values) -> Q, 9 x 11 pixels: on
    // RK3566 (8-byte atoms) the odd surface needs one task per C1 surface or flat views.
    MB b(13);
    b.input("x", kF32, {1, 20, 9, 11});
    requant(b, "x", "xf", 0.03f, 128);
    std::vector<float> sl(20);
    for (size_t j = 0; j < sl.size(); ++j) sl[j] = -0.5f + 0.09f * static_cast<float>(j);
    b.init_f32("slope", {1, 20, 1, 1}, sl);
    b.node("PRelu", {"xf", "slope"}, {"af"}, "prelu");
    requant(b, "af", "y", 0.025f, 110);
    b.output("y");
    const drv::ir::Graph g = import(b, "prelu.onnx");
    const auto in = inputs(g, 4.f);
    const auto ref = sim::reference_values(g, in);
    for (const char* socn : {"rk3588", "rk3566"}) {
        const hw::SocProfile soc = hw::load_named_profile(socn);
        const CompiledModel m = compile_model(g, soc);
        for (const auto& p : verify_tiling(m, soc)) ADD_FAILURE() << socn << ": " << p;
        const Layer* pr = nullptr;
        for (const auto& L : m.layers)
            if (L.op == "PRelu") pr = &L;
        ASSERT_NE(pr, nullptr) << socn;
        ASSERT_EQ(pr->unit, Unit::Npu) << socn << ": " << pr->note;
        sim::DirectOptions o;
        o.isolated_reference = &ref;
        const sim::DirectResult r = sim::run_direct(m, soc, in, o);
        ASSERT_EQ(r.layers.size(), 1u);
        const sim::TensorDiff& d = r.layers[0].diff;
        // (x - zx) * M >> T with a 16-bit M (relative error <= 2^-15) and the slope as the fused
        // form's M / 2^T (<= 2^-19), rounded half up against onnxruntime's float rounded half to
        // even: off by one only within ~0.01 LSB of a half.
        EXPECT_LE(d.max_diff, 1) << socn << ": " << d.str();
        EXPECT_LE(static_cast<double>(d.off_by_one), 0.01 * static_cast<double>(d.values)) << d.str();
        std::cout << fmt::format("[prelu] standalone per channel {} tasks {}: {}\n", socn, pr->tasks.size(), d.str());
    }
}

TEST(LayoutOps, RequantizationBetweenScalesOnTheDpu) {
    // RetinaFace's SSH output: DQ -> Relu -> Q to a uint8 scale of zero point 0, where the QDQ import
    // drops the Relu (the Q's range implies it) and leaves DQ -> Q: a requantization.
    MB b(13);
    b.input("x", kF32, {1, 20, 9, 11});
    requant(b, "x", "xf", 0.03f, 128);
    b.node("Relu", {"xf"}, {"r"}, "relu");
    requant(b, "r", "y", 0.0137f, 0);
    b.output("y");
    const drv::ir::Graph g = import(b, "requant.onnx");
    const auto in = inputs(g, 4.f);
    const auto ref = sim::reference_values(g, in);
    for (const char* socn : {"rk3588", "rk3566"}) {
        const hw::SocProfile soc = hw::load_named_profile(socn);
        const CompiledModel m = compile_model(g, soc);
        for (const auto& p : verify_tiling(m, soc)) ADD_FAILURE() << socn << ": " << p;
        const Layer* rq = nullptr;
        for (const auto& L : m.layers)
            if (L.unit == Unit::Npu) rq = &L;
        ASSERT_NE(rq, nullptr) << socn;
        sim::DirectOptions o;
        o.isolated_reference = &ref;
        const sim::DirectResult r = sim::run_direct(m, soc, in, o);
        ASSERT_EQ(r.layers.size(), 1u);
        const sim::TensorDiff& d = r.layers[0].diff;
        // (x - zx) * xs / ys with the 16-bit multiplier M = round(xs / ys * 2^T) (T = 13 here: relative
        // error <= 2^-15, <= 0.008 LSB at |x - zx| = 128), rounded half up, against onnxruntime's float
        // rounded half to even: off by one only where the exact value lies within 0.008 LSB of a half.
        EXPECT_LE(d.max_diff, 1) << socn << ": " << d.str();
        EXPECT_LE(static_cast<double>(d.off_by_one), 0.01 * static_cast<double>(d.values)) << d.str();
        std::cout << fmt::format("[requant] {} {} {}: {}\n", socn, rq->op, rq->note, d.str());
    }
}

}  // namespace
#endif
