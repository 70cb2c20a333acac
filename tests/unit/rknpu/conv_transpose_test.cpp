// SPDX-License-Identifier: MIT
// Issue 15, block level: ConvTranspose as stride phases (lower_conv_phase.cpp, assumption A-CONVT):
// s_h x s_w stride-1 convolutions of flipped sub-kernels (CNA/CORE/DPU with the conv lowering's
// requantization and fused activation), interleaved by DPU copies (and a PPU window copy when the
// width is not a multiple of the stride). QDQ graphs as onnxruntime's quantize_static writes them
// (uint8 activations, int8 weights per channel along axis 1 of [Cin, Cout/g, kh, kw], an int32 bias
// DQ at x_scale * w_scale), compiled for RK3588 (16-channel atoms) and RK3566 (8-channel atoms),
// tiling verified, run by the direct executor in isolated mode against the reference operator
// library (num::run_op on the layer's own imported nodes: float ConvTranspose of the dequantized
// values, then QuantizeLinear). Expectation: within 1 LSB; the cause is the DPU's fixed-point
// requantization of the exact integer sum (round half up, multiplier error 2^-(shift+1)) against the
// reference's float sum rounded half to even: counted and bounded, not zero by construction.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
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
constexpr int32_t kI8 = ::onnx::TensorProto::INT8;
constexpr int32_t kI32 = ::onnx::TensorProto::INT32;
constexpr int32_t kF32 = ::onnx::TensorProto::FLOAT;

using test_onnx::ramp;

struct Case {
    std::string name;
    int cout, k, stride, group;
    std::vector<int64_t> pads, output_padding;
    std::string act;  ///< "", Relu, LeakyRelu (fused into the Q), Sigmoid (a table after a Q/DQ)
    int stride_w = 0;  ///< 0: `stride`
};

const int kC = 12;  // input channels (not a whole RK3588 atom)

std::vector<Case> cases() {
    return {
        {"ct_k2", 12, 2, 2, 1, {0, 0, 0, 0}, {0, 0}, ""},
        {"ct_k2_p", 20, 2, 2, 1, {0, 0, 1, 1}, {0, 0}, "Relu"},
        {"ct_k3_op", 16, 3, 2, 1, {1, 1, 1, 1}, {1, 1}, "LeakyRelu"},
        {"ct_k3", 8, 3, 2, 1, {1, 1, 1, 1}, {0, 0}, "Sigmoid"},       // odd output: the interleave scratch
        {"ct_k4", 24, 4, 2, 1, {1, 1, 1, 1}, {0, 0}, ""},
        {"ct_dw", kC, 4, 2, kC, {1, 1, 1, 1}, {0, 0}, "Relu"},         // depthwise deconv (group = C)
        {"ct_g3", 6, 3, 2, 3, {0, 0, 0, 0}, {1, 1}, ""},               // groups as block-diagonal weights
        {"ct_k2_s4", 8, 2, 4, 1, {0, 0, 0, 0}, {0, 0}, ""},            // kernel < stride: bias-only phases
        {"ct_s21", 16, 3, 2, 1, {1, 0, 1, 0}, {1, 0}, "Relu", 1},      // stride (2, 1): phases write the output rows
    };
}

drv::ir::Graph graph(int H, int W) {
    test_onnx::ModelBuilder b(13);
    b.input("x", kF32, {1, kC, H, W});
    auto q = [&](const std::string& in, const std::string& out, float s, int z) {
        b.init_f32(out + "_s", {}, {s});
        b.init_int(out + "_z", kU8, {}, {z});
        b.node("QuantizeLinear", {in, out + "_s", out + "_z"}, {out});
    };
    q("x", "xq", 0.02f, 120);
    int k = 0;
    for (const Case& c : cases()) {
        const int cg = c.cout / c.group;
        const std::string w = c.name + "_w";
        b.init_int(w, kI8, {kC, cg, c.k, c.k}, ramp(static_cast<size_t>(kC) * cg * c.k * c.k, -100, 100, 7u + k));
        std::vector<float> ws(static_cast<size_t>(cg)), bs(static_cast<size_t>(c.cout));
        for (int j = 0; j < cg; ++j) ws[static_cast<size_t>(j)] = 0.003f + 0.0004f * static_cast<float>(j % 5);
        for (int o = 0; o < c.cout; ++o) bs[static_cast<size_t>(o)] = 0.02f * ws[static_cast<size_t>(o % cg)];
        b.init_f32(w + "_s", {cg}, ws);
        b.init_int(w + "_z", kI8, {cg}, std::vector<int32_t>(static_cast<size_t>(cg), 0));
        auto& wdq = b.node("DequantizeLinear", {w, w + "_s", w + "_z"}, {w + "f"});
        test_onnx::ModelBuilder::attr_int(wdq, "axis", 1);
        const std::string bias = c.name + "_b";
        b.init_int(bias, kI32, {c.cout}, ramp(static_cast<size_t>(c.cout), -3000, 3000, 11u + k));
        b.init_f32(bias + "_s", {c.cout}, bs);
        b.init_int(bias + "_z", kI32, {c.cout}, std::vector<int32_t>(static_cast<size_t>(c.cout), 0));
        auto& bdq = b.node("DequantizeLinear", {bias, bias + "_s", bias + "_z"}, {bias + "f"});
        test_onnx::ModelBuilder::attr_int(bdq, "axis", 0);
        const std::string xf = "xf" + std::to_string(k++);
        b.node("DequantizeLinear", {"xq", "xq_s", "xq_z"}, {xf});
        auto& n = b.node("ConvTranspose", {xf, w + "f", bias + "f"}, {c.name + "_f"}, c.name);
        test_onnx::ModelBuilder::attr_ints(n, "strides", {c.stride, c.stride_w ? c.stride_w : c.stride});
        test_onnx::ModelBuilder::attr_ints(n, "kernel_shape", {c.k, c.k});
        test_onnx::ModelBuilder::attr_ints(n, "pads", c.pads);
        test_onnx::ModelBuilder::attr_ints(n, "output_padding", c.output_padding);
        if (c.group > 1) test_onnx::ModelBuilder::attr_int(n, "group", c.group);
        std::string y = c.name + "_f";
        if (c.act == "Relu") {
            b.node("Relu", {y}, {c.name + "_r"}, c.name + "_relu");
            y = c.name + "_r";
        } else if (c.act == "LeakyRelu") {
            auto& l = b.node("LeakyRelu", {y}, {c.name + "_r"}, c.name + "_leaky");
            auto* a = l.add_attribute();
            a->set_name("alpha");
            a->set_type(::onnx::AttributeProto::FLOAT);
            a->set_f(0.1f);
            y = c.name + "_r";
        } else if (c.act == "Sigmoid") {
            q(y, c.name + "_pre", 0.06f, 128);
            b.node("DequantizeLinear", {c.name + "_pre", c.name + "_pre_s", c.name + "_pre_z"}, {c.name + "_pref"});
            b.node("Sigmoid", {c.name + "_pref"}, {c.name + "_r"}, c.name + "_sigmoid");
            y = c.name + "_r";
        }
        q(y, c.name + "_q", c.act == "Sigmoid" ? 1.f / 256 : 0.05f, c.act == "Sigmoid" ? 0 : (c.act.empty() ? 128 : 0));
        b.node("DequantizeLinear", {c.name + "_q", c.name + "_q_s", c.name + "_q_z"}, {"y_" + c.name});
        b.output("y_" + c.name);
    }
    drv::importer::ImportOptions o;
    o.qdq = drv::importer::QdqMode::Rewrite;
    const std::string s = b.bytes();
    return drv::importer::import_onnx_bytes(s.data(), s.size(), o, "conv_transpose.onnx");
}

void check_soc(const char* soc_name, int H, int W) {
    const hw::SocProfile soc = hw::load_named_profile(soc_name);
    const drv::ir::Graph g = graph(H, W);
    CompileOptions opts;
    opts.consult_checker = false;  // the lowering on every shape; the vendor rules: ConvTranspose.VendorRules
    const CompiledModel m = compile_model(g, soc, opts);
    for (const auto& problem : verify_tiling(m, soc)) ADD_FAILURE() << soc_name << ": " << problem;
    std::map<std::string, const Layer*> by_name;
    for (const auto& L : m.layers) {
        by_name[L.name] = &L;
        std::cout << "[convtranspose " << soc_name << "] " << L.name << " " << L.op << " "
                  << (L.unit == Unit::Npu ? "NPU" : L.unit == Unit::Cpu ? "CPU" : "view") << " tasks "
                  << L.tasks.size() << (L.note.empty() ? "" : ": " + L.note) << "\n";
    }
    for (const Case& c : cases()) {
        ASSERT_TRUE(by_name.count(c.name)) << c.name;
        const Layer& L = *by_name.at(c.name);
        EXPECT_EQ(L.unit, Unit::Npu) << soc_name << " " << c.name << ": " << L.note;
        EXPECT_GE(L.tasks.size(), static_cast<size_t>(c.stride * (c.stride_w ? c.stride_w : c.stride))) << c.name;
        const std::string want_op = c.act == "Sigmoid" ? "ConvTransposeSigmoid"
                                    : c.act == "LeakyRelu" ? "ConvTransposeLeakyRelu"
                                                           : "ConvTranspose";
        EXPECT_EQ(L.op, want_op) << c.name;
    }
    std::map<std::string, num::Tensor> in;
    in["x"] = drv::ref::random_input(g.value("x"), 5, 0);
    const auto ref = sim::reference_values(g, in);
    sim::DirectOptions d;
    d.isolated_reference = &ref;
    const sim::DirectResult r = sim::run_direct(m, soc, in, d);
    size_t checked = 0;
    for (const auto& c : r.layers) {
        const Layer& L = m.layers[c.layer];
        if (L.name.rfind("ct_", 0) != 0) continue;
        std::cout << "[convtranspose " << soc_name << "] isolated " << L.name << " (" << L.op << "): " << c.diff.str()
                  << "\n";
        EXPECT_GT(c.diff.values, 0u) << L.name;
        // Rounding ties and the multiplier's 2^-(shift+1) error only: a small share of the values.
        EXPECT_LE((c.diff.off_by_one + c.diff.worse) * 20, c.diff.values) << soc_name << " " << L.name << ": " << c.diff.str();
        if (L.op == "ConvTransposeSigmoid") {
            // The table maps the phase conv's code exactly, so a conv tie (1 LSB of the 0.06 pre-scale)
            // moves the output by the table's step there: at most sigmoid's slope 1/4 x 0.06 x 256 < 4.
            EXPECT_LE(c.diff.max_diff, 4) << soc_name << " " << L.name << ": " << c.diff.str();
            EXPECT_LE(c.diff.worse, 2u) << soc_name << " " << L.name << ": " << c.diff.str();
        } else {
            EXPECT_LE(c.diff.max_diff, 1) << soc_name << " " << L.name << ": " << c.diff.str();
        }
        ++checked;
    }
    EXPECT_EQ(checked, cases().size()) << soc_name;
}

TEST(ConvTranspose, StridePhasesRk3588) { check_soc("rk3588", 9, 11); }

/// A decoder-sized upsampler (64 -> 32 channels, kernel 4, stride 2, pads 1: 88 x 88 -> 176 x 176):
/// the phase convolutions are tiled into row bands (a 484 KiB input), each band's DPU output rows
/// two apart in the phase-column scratch; the width copies split at the 13-bit cube height
/// (176 x 88 one-atom rows).
TEST(ConvTranspose, LargeUpsamplerRowBands) {
    test_onnx::ModelBuilder b(13);
    const int C = 64, K = 32, H = 88, W = 88;
    b.input("x", kF32, {1, C, H, W});
    b.qdq("x", "xq", "xf", "x", 0.02f, kU8, 120);
    b.dq_weight("w", {C, K, 4, 4}, ramp(static_cast<size_t>(K) * C * 16, -60, 60, 5), 0.002f, "wf");
    auto& n = b.node("ConvTranspose", {"xf", "wf"}, {"cf"}, "up");
    test_onnx::ModelBuilder::attr_ints(n, "strides", {2, 2});
    test_onnx::ModelBuilder::attr_ints(n, "pads", {1, 1, 1, 1});
    b.qdq("cf", "cq", "y", "c", 0.05f, kU8, 128);
    b.output("y");
    drv::importer::ImportOptions io;
    io.qdq = drv::importer::QdqMode::Rewrite;
    const std::string bytes = b.bytes();
    const drv::ir::Graph g = drv::importer::import_onnx_bytes(bytes.data(), bytes.size(), io, "up.onnx");
    for (const char* soc_name : {"rk3566", "rk3588"}) {
        const hw::SocProfile soc = hw::load_named_profile(soc_name);
        CompileOptions opts;
        opts.consult_checker = false;  // pads 1 of kernel 4: the seed's pad formula sends it to the CPU
        const CompiledModel m = compile_model(g, soc, opts);
        for (const auto& problem : verify_tiling(m, soc)) ADD_FAILURE() << soc_name << ": " << problem;
        const Layer* L = nullptr;
        for (const auto& l : m.layers)
            if (l.name == "up") L = &l;
        ASSERT_NE(L, nullptr);
        ASSERT_EQ(L->unit, Unit::Npu) << soc_name << ": " << L->note;
        std::cout << "[convtranspose " << soc_name << "] up: " << L->tasks.size() << " tasks\n";
        EXPECT_GT(L->tasks.size(), 6u) << soc_name;  // banded: more than 4 phase convs and 2 width copies
        std::map<std::string, num::Tensor> in;
        in["x"] = drv::ref::random_input(g.value("x"), 4, 0);
        const auto ref = sim::reference_values(g, in);
        sim::DirectOptions d;
        d.isolated_reference = &ref;
        const sim::DirectResult r = sim::run_direct(m, soc, in, d);
        bool seen = false;
        for (const auto& c : r.layers) {
            if (m.layers[c.layer].name != "up") continue;
            seen = true;
            std::cout << "[convtranspose " << soc_name << "] isolated up: " << c.diff.str() << "\n";
            EXPECT_EQ(c.diff.values, static_cast<size_t>(K) * 176 * 176);
            EXPECT_LE(c.diff.max_diff, 1) << soc_name << ": " << c.diff.str();
            EXPECT_LE(c.diff.off_by_one * 100, c.diff.values) << soc_name << ": " << c.diff.str();
        }
        EXPECT_TRUE(seen) << soc_name;
    }
}

TEST(ConvTranspose, StridePhasesRk3566) { check_soc("rk3566", 7, 10); }

/// With the vendor rules (seed 001 §3.2.20): kernel 2, stride 2, pads (0, 0, 1, 1) passes every rule
/// and runs on the NPU; pads 1 of a kernel 4 break "stride_h*(height-1) - pads_top + 1 >= output_h"
/// (CPU, vendor rule); a group of 3 is neither 1 nor depthwise (CPU, vendor rule).
TEST(ConvTranspose, VendorRules) {
    const hw::SocProfile soc = hw::load_named_profile("rk3588");
    const drv::ir::Graph g = graph(6, 8);
    const CompiledModel m = compile_model(g, soc);
    for (const auto& problem : verify_tiling(m, soc)) ADD_FAILURE() << problem;
    std::map<std::string, const Layer*> by_name;
    for (const auto& L : m.layers) by_name[L.name] = &L;
    ASSERT_TRUE(by_name.count("ct_k2_p") && by_name.count("ct_k4") && by_name.count("ct_g3"));
    EXPECT_EQ(by_name.at("ct_k2_p")->unit, Unit::Npu) << by_name.at("ct_k2_p")->note;
    EXPECT_EQ(by_name.at("ct_k4")->unit, Unit::Cpu);
    EXPECT_EQ(by_name.at("ct_k4")->cpu_reason, CpuReason::VendorRule) << by_name.at("ct_k4")->note;
    EXPECT_EQ(by_name.at("ct_g3")->unit, Unit::Cpu);
    EXPECT_EQ(by_name.at("ct_g3")->cpu_reason, CpuReason::VendorRule) << by_name.at("ct_g3")->note;
}

}  // namespace

namespace {

/// The fp16 path (CompileOptions::fp16, a float model): the same stride phases with fp16 tensors
/// and weights, fp32 accumulation; each layer in isolation within drv::rknpu::kFp16LayerRtol (2^-7)
/// x max |reference| of its output (the fp16 roundings of the weights, inputs and output).
TEST(ConvTranspose, Fp16StridePhases) {
    const int C = 12, H = 9, W = 11;
    test_onnx::ModelBuilder b(13);
    b.input("x", kF32, {1, C, H, W});
    struct F {
        std::string name;
        int cout, k, group;
        std::vector<int64_t> pads, opad;
        std::string act;
    };
    const std::vector<F> fs = {{"f_k4", 16, 4, 1, {1, 1, 1, 1}, {0, 0}, "Relu"},
                               {"f_k3", 8, 3, 1, {1, 1, 1, 1}, {1, 1}, "Sigmoid"},
                               {"f_dw", C, 2, C, {0, 0, 1, 1}, {0, 0}, ""}};
    uint32_t seed = 3;
    for (const F& f : fs) {
        const int cg = f.cout / f.group;
        std::vector<float> w(static_cast<size_t>(C) * cg * f.k * f.k), bias(static_cast<size_t>(f.cout));
        const auto rw = ramp(w.size(), -100, 100, seed++), rb = ramp(bias.size(), -100, 100, seed++);
        for (size_t k = 0; k < w.size(); ++k) w[k] = 0.004f * static_cast<float>(rw[k]);
        for (size_t k = 0; k < bias.size(); ++k) bias[k] = 0.002f * static_cast<float>(rb[k]);
        b.init_f32(f.name + "_w", {C, cg, f.k, f.k}, w);
        b.init_f32(f.name + "_b", {f.cout}, bias);
        auto& n = b.node("ConvTranspose", {"x", f.name + "_w", f.name + "_b"}, {f.name + "_y"}, f.name);
        test_onnx::ModelBuilder::attr_ints(n, "strides", {2, 2});
        test_onnx::ModelBuilder::attr_ints(n, "pads", f.pads);
        test_onnx::ModelBuilder::attr_ints(n, "output_padding", f.opad);
        if (f.group > 1) test_onnx::ModelBuilder::attr_int(n, "group", f.group);
        std::string y = f.name + "_y";
        if (!f.act.empty()) {
            b.node(f.act, {y}, {f.name + "_a"}, f.name + "_act");
            y = f.name + "_a";
        }
        b.output(y);
    }
    drv::importer::ImportOptions io;
    const std::string bytes = b.bytes();
    const drv::ir::Graph g = drv::importer::import_onnx_bytes(bytes.data(), bytes.size(), io, "ct_fp16.onnx");
    for (const char* soc_name : {"rk3588", "rk3566"}) {
        const hw::SocProfile soc = hw::load_named_profile(soc_name);
        CompileOptions opts;
        opts.fp16 = true;
        opts.consult_checker = false;  // the lowering on every shape
        const CompiledModel m = compile_model(g, soc, opts);
        for (const auto& problem : verify_tiling(m, soc)) ADD_FAILURE() << soc_name << ": " << problem;
        std::map<std::string, const Layer*> by_name;
        for (const auto& L : m.layers) {
            by_name[L.name] = &L;
            std::cout << "[convtranspose fp16 " << soc_name << "] " << L.name << " " << L.op << " "
                      << (L.unit == Unit::Npu ? "NPU" : "CPU") << " tasks " << L.tasks.size() << ": " << L.note << "\n";
        }
        for (const F& f : fs) {
            ASSERT_TRUE(by_name.count(f.name)) << f.name;
            EXPECT_EQ(by_name.at(f.name)->unit, Unit::Npu) << soc_name << " " << f.name << ": " << by_name.at(f.name)->note;
        }
        EXPECT_EQ(by_name.at("f_k3")->op, "ConvTransposeSigmoid");
        std::map<std::string, num::Tensor> in;
        in["x"] = drv::ref::random_input(g.value("x"), 6, 0);
        const auto ref = sim::reference_values(g, in);
        sim::DirectOptions d;
        d.isolated_reference = &ref;
        const sim::DirectResult r = sim::run_direct(m, soc, in, d);
        size_t checked = 0;
        for (const auto& c : r.layers) {
            const Layer& L = m.layers[c.layer];
            if (L.name.rfind("f_", 0) != 0) continue;
            const num::Tensor& want = ref.at(L.outputs.at(0));
            double peak = 0;
            for (size_t k = 0; k < want.numel(); ++k) peak = std::max(peak, std::fabs(double{want.data<float>()[k]}));
            std::cout << "[convtranspose fp16 " << soc_name << "] isolated " << L.name << ": " << c.diff.values
                      << " values, max |diff| " << c.diff.max_abs << " of max |ref| " << peak << "\n";
            EXPECT_GT(c.diff.values, 0u);
            EXPECT_GT(peak, 0.0);
            EXPECT_LE(c.diff.max_abs, kFp16LayerRtol * peak) << soc_name << " " << L.name;
            ++checked;
        }
        EXPECT_EQ(checked, fs.size()) << soc_name;
    }
}

}  // namespace
