// SPDX-License-Identifier: MIT
// Activations and scalar element-wise ops on the NPU (issue 15, lower_act.cpp), model level: one
// ONNX graph per operator as onnxruntime's QDQ quantizer writes it (x -> Q -> DQ -> op -> Q -> DQ;
// SiLU as Sigmoid and Mul each quantized, the YOLOv5/v8 export; a constant operand as a quantized
// initializer), imported with the QDQ rewrite (QLinearSigmoid / QLinearLeakyRelu / QLinearAdd /
// QLinearMul where onnxruntime forms them), compiled for rk3588 and rk3566 with the vendor rules
// consulted, tiling verified, and every NPU layer run in isolation by the direct executor against
// the reference executor's values (ref: num::run_op, onnxruntime's definitions).
#ifdef NPUSIM_TEST_HAS_ONNX_BUILDER
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
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

constexpr int32_t kU8 = ::onnx::TensorProto::UINT8;
constexpr int32_t kF32 = ::onnx::TensorProto::FLOAT;

using Body = std::function<void(test_onnx::ModelBuilder&)>;  // "xf" (float view of x) -> "af"

/// x [1,20,9,11] -> Q(0.045, 128) -> DQ -> body -> Q(ys, yz) -> DQ -> y.
drv::ir::Graph act_graph(int64_t opset, const Body& body, float ys, int yz) {
    test_onnx::ModelBuilder b(opset);
    b.input("x", kF32, {1, 20, 9, 11});
    b.qdq("x", "xq", "xf", "xq", 0.045f, kU8, 128);
    body(b);
    b.qdq("af", "yq", "y", "y", ys, kU8, yz);
    b.output("y");
    drv::importer::ImportOptions o;
    o.qdq = drv::importer::QdqMode::Rewrite;
    const std::string s = b.bytes();
    return drv::importer::import_onnx_bytes(s.data(), s.size(), o, "act.onnx");
}

/// A quantized copy of "name" (Q -> DQ), as the quantizer puts between two quantized ops.
void requant(test_onnx::ModelBuilder& b, const std::string& in, const std::string& out, float s, int z) {
    b.init_f32(out + "_s", {}, {s});
    b.init_int(out + "_z", kU8, {}, {z});
    b.node("QuantizeLinear", {in, out + "_s", out + "_z"}, {out + "_q"});
    b.node("DequantizeLinear", {out + "_q", out + "_s", out + "_z"}, {out});
}

/// A quantized scalar initializer (uint8 code, scale s, zero point z) and its DQ "name".
void qconst(test_onnx::ModelBuilder& b, const std::string& name, int code, float s, int z) {
    b.init_int(name + "_c", kU8, {}, {code});
    b.init_f32(name + "_s", {}, {s});
    b.init_int(name + "_z", kU8, {}, {z});
    b.node("DequantizeLinear", {name + "_c", name + "_s", name + "_z"}, {name});
}

struct Case {
    std::string label;
    int64_t opset;
    Body body;
    float ys;
    int yz;
    std::string layer_op;  ///< the NPU layer expected ("" = the vendor rule keeps it on the CPU)
};

std::vector<Case> cases() {
    auto unary = [](const std::string& op, std::function<void(::onnx::NodeProto&)> attrs = nullptr) {
        return [op, attrs](test_onnx::ModelBuilder& b) {
            auto& n = b.node(op, {"xf"}, {"af"}, "act");
            if (attrs) attrs(n);
        };
    };
    using MB = test_onnx::ModelBuilder;
    std::vector<Case> v;
    v.push_back({"Sigmoid", 13, unary("Sigmoid"), 1.f / 256, 0, "Sigmoid"});
    v.push_back({"Tanh", 13, unary("Tanh"), 1.f / 128, 128, "Tanh"});
    v.push_back({"HardSigmoid", 13, unary("HardSigmoid", [](auto& n) {
                     MB::attr_float(n, "alpha", 1.f / 6), MB::attr_float(n, "beta", 0.5f);
                 }), 1.f / 256, 0, "HardSigmoid"});
    v.push_back({"HardSwish", 14, unary("HardSwish"), 0.03f, 20, "HardSwish"});
    v.push_back({"Elu", 13, unary("Elu"), 0.035f, 40, "Elu"});
    v.push_back({"Softplus", 13, unary("Softplus"), 0.03f, 0, "Softplus"});
    // Mish as exporters write it below opset 18 (the importer reads opsets 7-17).
    v.push_back({"Mish (x * tanh(softplus(x)))", 13,
                 [](MB& b) {
                     b.node("Softplus", {"xf"}, {"m0"}, "mish_softplus");
                     b.node("Tanh", {"m0"}, {"m1"}, "mish_tanh");
                     b.node("Mul", {"xf", "m1"}, {"af"}, "mish_mul");
                 },
                 0.03f, 20, "Mish"});
    v.push_back({"LeakyRelu", 13, unary("LeakyRelu", [](auto& n) { MB::attr_float(n, "alpha", 0.1f); }), 0.03f, 30,
                 "LeakyRelu"});
    v.push_back({"PRelu scalar slope", 13,
                 [](MB& b) {
                     b.init_f32("slope", {1}, {0.25f});
                     b.node("PRelu", {"xf", "slope"}, {"af"}, "act");
                 },
                 0.03f, 40, "PRelu"});
    v.push_back({"Relu6 (Clip 0..6)", 13,
                 [](MB& b) {
                     b.init_f32("lo", {}, {0.f});
                     b.init_f32("hi", {}, {6.f});
                     b.node("Clip", {"xf", "lo", "hi"}, {"af"}, "act");
                 },
                 0.05f, 10, "Clip"});  // an output range wider than [0, 6]: the Clip is not redundant
    v.push_back({"Relu", 13, unary("Relu"), 0.025f, 30, "Relu"});
    // YOLOv5/v8 SiLU as onnxruntime quantizes it: Sigmoid and Mul each in their own QDQ unit.
    v.push_back({"SiLU (QDQ Sigmoid, Mul)", 13,
                 [](MB& b) {
                     b.node("Sigmoid", {"xf"}, {"sf0"}, "sig");
                     requant(b, "sf0", "sf", 1.f / 256, 0);
                     b.node("Mul", {"xf", "sf"}, {"af"}, "mul");
                 },
                 0.03f, 20, "Swish"});
    // SiLU / GELU / Mish / HardSwish decomposed in float inside one DQ ... Q unit.
    v.push_back({"SiLU (float x * sigmoid(x))", 13,
                 [](MB& b) {
                     b.node("Sigmoid", {"xf"}, {"sf"}, "sig");
                     b.node("Mul", {"xf", "sf"}, {"af"}, "mul");
                 },
                 0.03f, 20, "Swish"});
    v.push_back({"GELU (erf form)", 13,
                 [](MB& b) {
                     b.init_f32("sqrt2", {}, {1.4142135f});
                     b.init_f32("one", {}, {1.f});
                     b.init_f32("half", {}, {0.5f});
                     b.node("Div", {"xf", "sqrt2"}, {"g0"}, "gelu_div");
                     b.node("Erf", {"g0"}, {"g1"}, "gelu_erf");
                     b.node("Add", {"g1", "one"}, {"g2"}, "gelu_add");
                     b.node("Mul", {"xf", "g2"}, {"g3"}, "gelu_mul");
                     b.node("Mul", {"g3", "half"}, {"af"}, "gelu_half");
                 },
                 0.03f, 20, "Gelu"});
    v.push_back({"HardSwish (x * clip(x + 3, 0, 6) / 6)", 13,
                 [](MB& b) {
                     b.init_f32("three", {}, {3.f});
                     b.init_f32("zero", {}, {0.f});
                     b.init_f32("six", {}, {6.f});
                     b.node("Add", {"xf", "three"}, {"h0"}, "hs_add");
                     b.node("Clip", {"h0", "zero", "six"}, {"h1"}, "hs_clip");
                     b.node("Mul", {"xf", "h1"}, {"h2"}, "hs_mul");
                     b.node("Div", {"h2", "six"}, {"af"}, "hs_div");
                 },
                 0.03f, 20, "HardSwish"});
    // Scalar constant operands (quantized initializers, onnxruntime's QDQ form).
    v.push_back({"Add scalar", 13,
                 [](MB& b) {
                     qconst(b, "k", 200, 0.01f, 0);
                     b.node("Add", {"xf", "k"}, {"af"}, "act");
                 },
                 0.05f, 100, "Add"});
    v.push_back({"Mul scalar", 13,
                 [](MB& b) {
                     qconst(b, "k", 180, 0.005f, 0);
                     b.node("Mul", {"xf", "k"}, {"af"}, "act");
                 },
                 0.04f, 128, "Mul"});
    v.push_back({"Sub scalar", 13,
                 [](MB& b) {
                     qconst(b, "k", 150, 0.01f, 0);
                     b.node("Sub", {"xf", "k"}, {"af"}, "act");
                 },
                 0.05f, 150, "Sub"});
    v.push_back({"Max scalar", 13,
                 [](MB& b) {
                     qconst(b, "k", 140, 0.01f, 128);
                     b.node("Max", {"xf", "k"}, {"af"}, "act");
                 },
                 0.03f, 60, ""});  // seed: Max needs 4-D inputs, no scalar broadcast
    v.push_back({"Min scalar", 13,
                 [](MB& b) {
                     qconst(b, "k", 100, 0.01f, 128);
                     b.node("Min", {"xf", "k"}, {"af"}, "act");
                 },
                 0.03f, 200, ""});  // seed: as Max
    v.push_back({"Max [1,1,1,1] constant", 13,
                 [](MB& b) {
                     b.init_int("k4_c", kU8, {1, 1, 1, 1}, {140});
                     b.init_f32("k4_s", {}, {0.01f});
                     b.init_int("k4_z", kU8, {}, {128});
                     b.node("DequantizeLinear", {"k4_c", "k4_s", "k4_z"}, {"k4"});
                     b.node("Max", {"xf", "k4"}, {"af"}, "act");
                 },
                 0.03f, 60, ""});  // seed: [1,1,1,1] is the scalar pattern too
    // Seed: Div is float16 only, but the vendor compiler rewrites Div by a constant as Mul (the
    // checker's rewrite), which is allowed.
    v.push_back({"Div scalar (as Mul by 1/3)", 13,
                 [](MB& b) {
                     b.init_f32("d", {}, {3.f});
                     b.node("Div", {"xf", "d"}, {"af"}, "act");
                 },
                 0.02f, 128, "Div"});
    v.push_back({"Pow 2", 13,
                 [](MB& b) {
                     b.init_f32("two", {}, {2.f});
                     b.node("Pow", {"xf", "two"}, {"af"}, "act");
                 },
                 0.11f, 0, "Pow"});
    // Outside the seed's rules: the checker keeps them on the CPU and cites the rule.
    v.push_back({"HardSigmoid alpha 0.2 (seed: alpha = 1/6)", 13, unary("HardSigmoid"), 1.f / 256, 0, ""});
    v.push_back({"Elu alpha 0.5 (seed: alpha = 1)", 13, unary("Elu", [](auto& n) { MB::attr_float(n, "alpha", 0.5f); }),
                 0.03f, 40, ""});
    v.push_back({"Pow 1.5 (seed: exponents 0,1,2,3,0.5,-0.5)", 13,
                 [](MB& b) {
                     b.init_f32("e", {}, {1.5f});
                     b.node("Pow", {"xf", "e"}, {"af"}, "act");
                 },
                 0.05f, 0, ""});
    return v;
}

TEST(ActModel, ActivationsAndScalarEltwiseOnTheDpuLut) {
    size_t npu_cases = 0;
    for (const Case& k : cases()) {
        const drv::ir::Graph g = act_graph(k.opset, k.body, k.ys, k.yz);
        std::map<std::string, num::Tensor> in;
        in["x"] = drv::ref::random_input(g.value("x"), 21, 0);
        // Spread over the input's range and beyond (saturation): random_input gives [-1, 1).
        for (size_t i = 0; i < in["x"].numel(); ++i) in["x"].data<float>()[i] *= 6.5f;
        const auto ref = sim::reference_values(g, in);
        for (const char* socn : {"rk3588", "rk3566"}) {
            const hw::SocProfile soc = hw::load_named_profile(socn);
            const CompiledModel m = compile_model(g, soc);
            for (const auto& p : verify_tiling(m, soc)) ADD_FAILURE() << k.label << " " << socn << ": " << p;
            const Layer* act = nullptr;
            for (const auto& L : m.layers)
                if (L.op != "QuantizeLinear" && L.op != "DequantizeLinear") act = &L;
            ASSERT_NE(act, nullptr) << k.label;
            if (std::getenv("NPUSIM_TEST_VERBOSE"))
                for (const auto& L : m.layers) std::cout << "  " << L.name << " " << L.op << ": " << L.note << "\n";
            if (k.layer_op.empty()) {
                EXPECT_EQ(act->unit, Unit::Cpu) << k.label;
                EXPECT_EQ(act->cpu_reason, CpuReason::VendorRule) << k.label << ": " << act->note;
                std::cout << fmt::format("[act] {:<44} {} CPU: {}\n", k.label, socn, act->note);
                continue;
            }
            ASSERT_EQ(act->unit, Unit::Npu) << k.label << " " << socn << ": " << act->op << " " << act->note;
            EXPECT_EQ(act->op, k.layer_op) << k.label;
            sim::DirectOptions o;
            o.isolated_reference = &ref;
            const sim::DirectResult r = sim::run_direct(m, soc, in, o);
            ASSERT_EQ(r.layers.size(), 1u) << k.label;
            const sim::TensorDiff& d = r.layers[0].diff;
            // One entry per int8 code: the table is the reference itself, so every value agrees.
            EXPECT_TRUE(d.exact()) << k.label << " " << socn << ": " << d.str();
            std::cout << fmt::format("[act] {:<44} {} NPU {:<11} tasks {}: {}\n", k.label, socn, act->op,
                                     act->tasks.size(), d.str());
            npu_cases += 1;
        }
    }
    EXPECT_GT(npu_cases, 0u);
}

// Element-wise ops by a per-channel constant (model_compiler_affine.cpp). onnxruntime's
// quantize_static with its default types (uint8 activations, int8 weights) writes the constant as
// an int8 initializer with its DequantizeLinear; its QDQ binary-op rule needs one type for both
// inputs and the output, so onnxruntime runs these units in float and a LayerNorm's gamma / beta,
// a layer scale or an input normalisation stayed on the CPU. A uint8 constant with uint8
// activations is the QLinearMul onnxruntime forms, with the constant as its B. Each runs as the
// DPU per-channel affine task, within 1 LSB of the float reference (one rounding on the DPU, half
// up, where onnxruntime rounds its float32 result half to even: scales of no decimal pattern keep
// exact ties rare).
TEST(ActModel, PerChannelConstantEltwiseAsTheDpuAffineTask) {
    using MB = test_onnx::ModelBuilder;
    constexpr int32_t kS8 = ::onnx::TensorProto::INT8;
    auto qconst_c = [](MB& b, const std::string& name, int32_t type, std::vector<int64_t> shape, int zp, float s,
                       uint32_t seed) {
        std::vector<int32_t> codes(20);
        for (auto& c : codes) c = static_cast<int>((seed = seed * 1664525u + 1013904223u) >> 25) - (type == kU8 ? 0 : 64);
        b.init_int(name + "_c", type, shape, codes);
        b.init_f32(name + "_s", {}, {s});
        b.init_int(name + "_z", type, {}, {zp});
        b.node("DequantizeLinear", {name + "_c", name + "_s", name + "_z"}, {name});
    };
    struct PCase {
        std::string label;
        Body body;
        float ys;
        int yz;
        std::string layer_op;
    };
    const std::vector<PCase> cs = {
        {"Mul by [1,C,1,1] int8 (layer scale, LayerNorm gamma)",
         [&](MB& b) {
             qconst_c(b, "g", kS8, {1, 20, 1, 1}, 0, 0.0213f, 3);
             b.node("Mul", {"xf", "g"}, {"af"}, "act");
         },
         0.0513f, 120, "Mul"},
        {"Add [1,C,1,1] int8 (LayerNorm beta)",
         [&](MB& b) {
             qconst_c(b, "k", kS8, {1, 20, 1, 1}, 0, 0.0283f, 5);
             b.node("Add", {"k", "xf"}, {"af"}, "act");
         },
         0.0531f, 128, "Add"},
        // The seed's Add takes 4-D inputs: a [C,1,1] constant is a vendor-rule CPU op.
        {"Add [C,1,1] int8 (seed: rank 4)",
         [&](MB& b) {
             qconst_c(b, "k", kS8, {20, 1, 1}, 0, 0.03f, 5);
             b.node("Add", {"xf", "k"}, {"af"}, "act");
         },
         0.05f, 128, ""},
        {"Sub [1,C,1,1] int8 minus x",
         [&](MB& b) {
             qconst_c(b, "k", kS8, {1, 20, 1, 1}, 0, 0.0291f, 7);
             b.node("Sub", {"k", "xf"}, {"af"}, "act");
         },
         0.0527f, 128, "Sub"},
        {"Mul by [1,C,1,1] int8 -> Relu",
         [&](MB& b) {
             qconst_c(b, "g", kS8, {1, 20, 1, 1}, 0, 0.0197f, 9);
             b.node("Mul", {"xf", "g"}, {"m"}, "act");
             b.node("Relu", {"m"}, {"af"}, "relu");
         },
         0.0307f, 0, "Mul"},
        {"Div by a float [1,C,1,1] (input normalisation)",
         [&](MB& b) {
             std::vector<float> d(20);
             for (size_t k = 0; k < d.size(); ++k) d[k] = 0.213f + 0.0517f * static_cast<float>(k);
             b.init_f32("d", {1, 20, 1, 1}, d);
             b.node("Div", {"xf", "d"}, {"af"}, "act");
         },
         0.1037f, 128, "Div"},
        {"Mul by [1,C,1,1] uint8 (QLinearMul with a constant B)",
         [&](MB& b) {
             qconst_c(b, "g", kU8, {1, 20, 1, 1}, 128, 0.0221f, 11);
             b.node("Mul", {"xf", "g"}, {"af"}, "act");
         },
         0.0509f, 120, "Mul"},
    };
    for (const PCase& k : cs) {
        const drv::ir::Graph g = act_graph(13, k.body, k.ys, k.yz);
        std::map<std::string, num::Tensor> in;
        in["x"] = drv::ref::random_input(g.value("x"), 23, 0);
        for (size_t i = 0; i < in["x"].numel(); ++i) in["x"].data<float>()[i] *= 6.5f;
        const auto ref = sim::reference_values(g, in);
        for (const char* socn : {"rk3588", "rk3566"}) {
            const hw::SocProfile soc = hw::load_named_profile(socn);
            const CompiledModel m = compile_model(g, soc);
            for (const auto& p : verify_tiling(m, soc)) ADD_FAILURE() << k.label << " " << socn << ": " << p;
            std::vector<const Layer*> compute;
            for (const auto& L : m.layers)
                if (L.op != "QuantizeLinear" && L.op != "DequantizeLinear") compute.push_back(&L);
            ASSERT_EQ(compute.size(), 1u) << k.label << " " << socn << ": one layer, the constant's DQ folded into it";
            const Layer& act = *compute[0];
            if (k.layer_op.empty()) {
                EXPECT_EQ(act.unit, Unit::Cpu) << k.label;
                EXPECT_EQ(act.cpu_reason, CpuReason::VendorRule) << k.label << ": " << act.note;
                std::cout << fmt::format("[affine] {:<52} {} CPU: {}\n", k.label, socn, act.note);
                continue;
            }
            ASSERT_EQ(act.unit, Unit::Npu) << k.label << " " << socn << ": " << act.op << " " << act.note;
            EXPECT_EQ(act.op, k.layer_op) << k.label;
            sim::DirectOptions o;
            o.isolated_reference = &ref;
            const sim::DirectResult r = sim::run_direct(m, soc, in, o);
            ASSERT_EQ(r.layers.size(), 1u) << k.label;
            const sim::TensorDiff& d = r.layers[0].diff;
            EXPECT_EQ(d.values, 20u * 9 * 11) << k.label;
            EXPECT_LE(d.max_diff, 1) << k.label << " " << socn << ": " << d.str();
            EXPECT_LE(d.off_by_one * 50, d.values) << k.label << " " << socn << ": " << d.str();  // ties only: < 2 %
            std::cout << fmt::format("[affine] {:<52} {} NPU {:<4} tasks {}: {}\n", k.label, socn, act.op,
                                     act.tasks.size(), d.str());
        }
    }
}

// auto_pad as TensorFlow-style exports write it (tf2onnx / keras2onnx: Conv and MaxPool with
// auto_pad SAME_UPPER, stride 2 on an even input: the extra pad row and column at the end). Seed
// 001 puts no constraint on a Convolution's auto_pad, so the RKNPU compiler's unit graph reads
// explicit pads (ir::make_pads_explicit) and the conv goes to the NPU (it was an "auto_pad is not
// lowered" CPU layer), within 1 LSB of the reference node that keeps auto_pad; MaxPool accepts only
// NOTSET (RK3588 3.2.44, RK3566 3.1.43), so it stays a vendor-rule CPU layer.
TEST(ActModel, AutoPadConvOnTheNpuMaxPoolByTheVendorRule) {
    using MB = test_onnx::ModelBuilder;
    for (const char* mode : {"SAME_UPPER", "SAME_LOWER", "VALID"}) {
        MB b(13);
        // Conv outputs 6 columns wide (SAME: ceil(12 / 2); VALID: (13 - 3) / 2 + 1): RK3566's 8-byte
        // atoms then keep the MaxPool's rows 16-byte aligned (PPU strides are in 16-byte units).
        const int C = 16, K = 24, W = std::string(mode) == "VALID" ? 13 : 12;
        b.input("x", kF32, {1, C, 10, W});
        requant(b, "x", "xf", 0.03f, 128);
        std::vector<int32_t> w(static_cast<size_t>(K) * C * 9);
        uint32_t seed = 5;
        for (auto& v : w) v = static_cast<int>((seed = seed * 1664525u + 1013904223u) >> 25) - 64;
        b.init_int("w", ::onnx::TensorProto::INT8, {K, C, 3, 3}, w);
        b.init_f32("w_s", {}, {0.0031f});
        b.init_int("w_z", ::onnx::TensorProto::INT8, {}, {0});
        b.node("DequantizeLinear", {"w", "w_s", "w_z"}, {"wf"});
        auto& cv = b.node("Conv", {"xf", "wf"}, {"c"}, "conv");
        MB::attr_string(cv, "auto_pad", mode);
        MB::attr_ints(cv, "strides", {2, 2});
        requant(b, "c", "cf", 0.043f, 121);
        auto& mp = b.node("MaxPool", {"cf"}, {"m"}, "pool");
        MB::attr_string(mp, "auto_pad", mode);
        MB::attr_ints(mp, "kernel_shape", {3, 3});
        MB::attr_ints(mp, "strides", {2, 2});
        requant(b, "m", "y", 0.043f, 121);
        b.output("y");
        drv::importer::ImportOptions io;
        io.qdq = drv::importer::QdqMode::Rewrite;
        const std::string bytes = b.bytes();
        const drv::ir::Graph g = drv::importer::import_onnx_bytes(bytes.data(), bytes.size(), io, "auto_pad.onnx");
        std::map<std::string, num::Tensor> in;
        in["x"] = drv::ref::random_input(g.value("x"), 9, 0);
        for (size_t i = 0; i < in["x"].numel(); ++i) in["x"].data<float>()[i] *= 3.5f;
        const auto ref = sim::reference_values(g, in);
        for (const char* socn : {"rk3588", "rk3566"}) {
            const hw::SocProfile soc = hw::load_named_profile(socn);
            const CompiledModel m = compile_model(g, soc);
            for (const auto& p : verify_tiling(m, soc)) ADD_FAILURE() << mode << " " << socn << ": " << p;
            size_t npu = 0, pool_cpu = 0;
            for (const auto& L : m.layers) {
                if (L.op == "QuantizeLinear" || L.op == "DequantizeLinear") continue;
                if (L.op == "MaxPool") {
                    EXPECT_EQ(L.unit, Unit::Cpu) << mode << " " << socn;
                    EXPECT_EQ(L.cpu_reason, CpuReason::VendorRule) << mode << " " << socn << ": " << L.note;
                    EXPECT_NE(L.note.find("auto_pad"), std::string::npos) << L.note;
                    pool_cpu += 1;
                    continue;
                }
                EXPECT_EQ(L.unit, Unit::Npu) << mode << " " << socn << ": " << L.op << " " << L.note;
                npu += L.unit == Unit::Npu;
            }
            EXPECT_EQ(npu, 1u) << mode << " " << socn;
            EXPECT_EQ(pool_cpu, 1u) << mode << " " << socn;
            sim::DirectOptions o;
            o.isolated_reference = &ref;
            const sim::DirectResult r = sim::run_direct(m, soc, in, o);
            ASSERT_EQ(r.layers.size(), 1u) << mode;
            for (const auto& lc : r.layers) {
                EXPECT_LE(lc.diff.max_diff, 1) << mode << " " << socn << ": " << lc.diff.str();
                EXPECT_TRUE(lc.diff.same_shape) << mode;
                std::cout << fmt::format("[auto_pad] {:<10} {} {:<12} {}\n", mode, socn, m.layers[lc.layer].op,
                                         lc.diff.str());
            }
        }
    }
}

/// x [1,20,9,11] -> Q -> DQ -> Conv 3x3 (20 -> 32, or depthwise 20 -> 20) -> Q -> DQ -> act -> Q -> DQ -> y,
/// the act written by `body` from "cf" (the conv output's float view) to "af".
drv::ir::Graph conv_act_graph(bool depthwise, const std::function<void(test_onnx::ModelBuilder&)>& body) {
    test_onnx::ModelBuilder b(14);
    const int C = 20, K = depthwise ? 20 : 32;
    b.input("x", kF32, {1, C, 9, 11});
    requant(b, "x", "xf", 0.03f, 128);
    std::vector<int32_t> w(static_cast<size_t>(K) * (depthwise ? 1 : C) * 9);
    uint32_t s = 7;
    for (auto& v : w) v = static_cast<int>((s = s * 1664525u + 1013904223u) >> 25) - 64;
    b.init_int("w", ::onnx::TensorProto::INT8, {K, depthwise ? 1 : C, 3, 3}, w);
    std::vector<float> ws(static_cast<size_t>(K));
    for (int k = 0; k < K; ++k) ws[static_cast<size_t>(k)] = 0.002f + 0.0001f * static_cast<float>(k);
    b.init_f32("w_s", {K}, ws);
    b.init_int("w_z", ::onnx::TensorProto::INT8, {K}, std::vector<int32_t>(static_cast<size_t>(K), 0));
    auto& dw = b.node("DequantizeLinear", {"w", "w_s", "w_z"}, {"wf"});
    test_onnx::ModelBuilder::attr_int(dw, "axis", 0);
    auto& cv = b.node("Conv", {"xf", "wf"}, {"c"}, "conv");
    test_onnx::ModelBuilder::attr_ints(cv, "pads", {1, 1, 1, 1});
    if (depthwise) test_onnx::ModelBuilder::attr_int(cv, "group", C);
    requant(b, "c", "cf", 0.04f, 120);
    body(b);
    requant(b, "af", "y", 0.03f, 40);
    b.output("y");
    drv::importer::ImportOptions o;
    o.qdq = drv::importer::QdqMode::Rewrite;
    const std::string str = b.bytes();
    return drv::importer::import_onnx_bytes(str.data(), str.size(), o, "conv_act.onnx");
}

TEST(ActModel, ActivationFusedIntoTheProducingConv) {
    using MB = test_onnx::ModelBuilder;
    struct FCase {
        std::string label, op;
        bool depthwise;
        std::function<void(MB&)> body;
    };
    const std::vector<FCase> cs = {
        {"Conv -> SiLU (QDQ Sigmoid, Mul: YOLOv5/v8)", "ConvolutionSwish", false,
         [](MB& b) {
             b.node("Sigmoid", {"cf"}, {"s0"}, "sig");
             requant(b, "s0", "sf", 1.f / 256, 0);
             b.node("Mul", {"cf", "sf"}, {"af"}, "mul");
         }},
        {"Conv -> Sigmoid", "ConvolutionSigmoid", false, [](MB& b) { b.node("Sigmoid", {"cf"}, {"af"}, "sig"); }},
        {"Conv -> LeakyRelu", "ConvolutionLeakyRelu", false,
         [](MB& b) { MB::attr_float(b.node("LeakyRelu", {"cf"}, {"af"}, "lrelu"), "alpha", 0.1f); }},
        {"Conv -> HardSwish", "ConvolutionHardSwish", false, [](MB& b) { b.node("HardSwish", {"cf"}, {"af"}, "hs"); }},
        {"DepthwiseConv -> Tanh", "DepthwiseConvolutionTanh", true, [](MB& b) { b.node("Tanh", {"cf"}, {"af"}, "tanh"); }},
    };
    for (const FCase& k : cs) {
        const drv::ir::Graph g = conv_act_graph(k.depthwise, k.body);
        std::map<std::string, num::Tensor> in;
        in["x"] = drv::ref::random_input(g.value("x"), 3, 0);
        for (size_t i = 0; i < in["x"].numel(); ++i) in["x"].data<float>()[i] *= 4.f;
        const auto ref = sim::reference_values(g, in);
        for (const char* socn : {"rk3588", "rk3566"}) {
            const hw::SocProfile soc = hw::load_named_profile(socn);
            for (const char* mask : {"auto", "0_1_2"}) {
                if (std::string(mask) != "auto" && soc.npu.core_count.value < 3) continue;
                CompileOptions co;
                co.core_mask = mask;
                const CompiledModel m = compile_model(g, soc, co);
                for (const auto& p : verify_tiling(m, soc)) ADD_FAILURE() << k.label << " " << socn << ": " << p;
                size_t npu = 0;
                const Layer* fused = nullptr;
                for (const auto& L : m.layers) {
                    npu += L.unit == Unit::Npu;
                    if (L.op == k.op) fused = &L;
                }
                ASSERT_NE(fused, nullptr) << k.label << " " << socn;
                EXPECT_EQ(npu, 1u) << k.label << ": one NPU layer, the activation in the conv's EW stage";
                sim::DirectOptions o;
                o.isolated_reference = &ref;
                const sim::DirectResult r = sim::run_direct(m, soc, in, o);
                ASSERT_EQ(r.layers.size(), 1u);
                const sim::TensorDiff& d = r.layers[0].diff;
                // The reference is the unfused quantized chain. The table maps the conv's own output
                // code exactly; the conv's requantization rounds half up where onnxruntime rounds
                // half to even, so a tie moves the code by one and the output by the table's step
                // there (<= 1 LSB at these scales).
                EXPECT_LE(d.max_diff, 1) << k.label << " " << socn << ": " << d.str();
                EXPECT_LE(static_cast<double>(d.off_by_one), 0.01 * static_cast<double>(d.values)) << k.label;
                std::cout << fmt::format("[act] {:<44} {} {:<5} {} tasks {}: {}\n", k.label, socn, mask, fused->op,
                                         fused->tasks.size(), d.str());
            }
        }
    }
}

/// x [1,20,9,11] and s (shape `sshape`) each quantized, op(x, s) or op(s, x) quantized: the
/// squeeze-excite broadcast as onnxruntime's QDQ form writes it.
drv::ir::Graph bcast_graph(const std::string& op, const std::vector<int64_t>& sshape, bool swap) {
    test_onnx::ModelBuilder b(13);
    b.input("x", kF32, {1, 20, 9, 11});
    b.input("s", kF32, sshape);
    requant(b, "x", "xf", 0.03f, 128);
    requant(b, "s", "sf", 1.f / 256, 0);
    b.node(op, swap ? std::vector<std::string>{"sf", "xf"} : std::vector<std::string>{"xf", "sf"}, {"af"}, "act");
    requant(b, "af", "y", op == "Mul" ? 0.02f : 0.035f, op == "Mul" ? 128 : 100);
    b.output("y");
    drv::importer::ImportOptions o;
    o.qdq = drv::importer::QdqMode::Rewrite;
    const std::string str = b.bytes();
    return drv::importer::import_onnx_bytes(str.data(), str.size(), o, "bcast.onnx");
}

TEST(ActModel, PerChannelBroadcastAddMulOnTheEwOperand) {
    struct BCase {
        std::string op;
        std::vector<int64_t> s;
        bool swap;
        int expect;  ///< 0 NPU, 1 vendor rule, 2 no lowering
    };
    const std::vector<BCase> cs = {
        {"Mul", {1, 20, 1, 1}, false, 0}, {"Mul", {1, 20, 1, 1}, true, 0}, {"Add", {1, 20, 1, 1}, false, 0},
        {"Add", {1, 20, 1, 1}, true, 0},  {"Mul", {1, 1, 9, 11}, false, 1},  // seed: [b,1,h,w] is not a pattern
        {"Mul", {1, 20, 1, 11}, false, 0},  // [b,c,1,w]: tiled to x's shape first (broadcast_test.cpp)
    };
    for (const BCase& k : cs) {
        const std::string label = fmt::format("{} x {}{}", k.op, drv::ir::shape_to_string(k.s), k.swap ? " (swapped)" : "");
        const drv::ir::Graph g = bcast_graph(k.op, k.s, k.swap);
        std::map<std::string, num::Tensor> in;
        in["x"] = drv::ref::random_input(g.value("x"), 5, 0);
        for (size_t i = 0; i < in["x"].numel(); ++i) in["x"].data<float>()[i] *= 4.f;
        in["s"] = drv::ref::random_input(g.value("s"), 5, 1);
        for (size_t i = 0; i < in["s"].numel(); ++i) in["s"].data<float>()[i] = 0.5f + 0.5f * in["s"].data<float>()[i];
        const auto ref = sim::reference_values(g, in);
        for (const char* socn : {"rk3588", "rk3566"}) {
            const hw::SocProfile soc = hw::load_named_profile(socn);
            for (const char* mask : {"auto", "0_1_2"}) {
                if (std::string(mask) != "auto" && soc.npu.core_count.value < 3) continue;
                CompileOptions co;
                co.core_mask = mask;
                const CompiledModel m = compile_model(g, soc, co);
                for (const auto& p : verify_tiling(m, soc)) ADD_FAILURE() << label << " " << socn << ": " << p;
                const Layer* L = nullptr;
                for (const auto& l : m.layers)
                    if (l.name == "act") L = &l;
                ASSERT_NE(L, nullptr) << label;
                if (k.expect == 1) {
                    EXPECT_EQ(L->cpu_reason, CpuReason::VendorRule) << label << ": " << L->note;
                    EXPECT_NE(L->note.find("[RKNN Compiler"), std::string::npos) << L->note;
                } else if (k.expect == 2) {
                    EXPECT_EQ(L->cpu_reason, CpuReason::NoLowering) << label << ": " << L->note;
                    EXPECT_NE(L->note.find("no NPU lowering yet"), std::string::npos) << L->note;
                }
                if (k.expect != 0) {
                    std::cout << fmt::format("[act] {:<28} {} CPU: {}\n", label, socn, L->note);
                    continue;
                }
                ASSERT_EQ(L->unit, Unit::Npu) << label << " " << socn << ": " << L->note;
                sim::DirectOptions o;
                o.isolated_reference = &ref;
                const sim::DirectResult r = sim::run_direct(m, soc, in, o);
                ASSERT_EQ(r.layers.size(), 1u);
                const sim::TensorDiff& d = r.layers[0].diff;
                // Fixed-point requantization (16-bit multipliers, half-up shifts) against onnxruntime's
                // float one: differences only at rounding ties.
                EXPECT_LE(d.max_diff, 1) << label << " " << socn << ": " << d.str();
                EXPECT_LE(static_cast<double>(d.off_by_one), 0.01 * static_cast<double>(d.values)) << label;
                // rk3566: 9 x 11 pixels of 8-byte atoms leave surfaces of 792 bytes in 800 (a notch the
                // 16-byte MRDMA units cannot express); the per-channel operand does not depend on the
                // pixels, so the input and output are read as flat surfaces: one task, not one per surface.
                if (k.s == std::vector<int64_t>{1, 20, 1, 1} && std::string(socn) == "rk3566") {
                    EXPECT_EQ(L->tasks.size(), 1u) << label;
                }
                std::cout << fmt::format("[act] {:<28} {} {:<5} NPU {} tasks {}: {}\n", label, socn, mask, L->op,
                                         L->tasks.size(), d.str());
            }
        }
    }
}

}  // namespace
#endif
