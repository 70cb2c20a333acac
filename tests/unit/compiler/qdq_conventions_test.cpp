// SPDX-License-Identifier: MIT
// QDQ conventions other producers write (issue 13), folded as onnxruntime's CPU execution provider
// folds them (core/optimizer/qdq_transformer, checked end to end against onnxruntime-node by the
// compiler_e2e_*_vs_ort tests): float biases (PyTorch FX/QAT, TensorRT, NNCF) quantized to int32 with
// scale x_scale * w_scale and round-half-even; fake-quantized float weights (QuantizeLinear of an
// initializer) folded; a DequantizeLinear shared by several consumers duplicated; DQ propagated
// through Reshape; int8 activations on x86-64 (Q -> DQ pairs with one consumer turned uint8, the
// other int8 Conv units left in float); QOperator-format tensors annotated.
#include <gtest/gtest.h>

#include "compiler/onnx/onnx_importer.h"
#include "onnx_builder.h"

using drv::importer::ImportOptions;
using drv::importer::OrtCpu;
using test_onnx::ModelBuilder;

namespace {

constexpr int32_t kF32 = ::onnx::TensorProto::FLOAT, kU8 = ::onnx::TensorProto::UINT8,
                  kI8 = ::onnx::TensorProto::INT8;

drv::ir::Graph import(const ModelBuilder& b, OrtCpu cpu = OrtCpu::X86_64) {
    ImportOptions o;
    o.ort_cpu = cpu;
    std::string s = b.bytes();
    return drv::importer::import_onnx_bytes(s.data(), s.size(), o, "conv.onnx");
}

int count(const drv::ir::Graph& g, const std::string& op) {
    int k = 0;
    for (const auto& n : g.nodes()) k += n.op_type == op;
    return k;
}

const drv::ir::Node& node(const drv::ir::Graph& g, const std::string& op) {
    for (const auto& n : g.nodes())
        if (n.op_type == op) return n;
    throw std::runtime_error("no " + op + " in\n" + g.dump());
}

/// input x (1x1x2x2) -> Q/DQ (scale 1, zp 128) -> Conv 1x1 (4 channels, DQ int8 weights 1, scale 1)
/// with float bias `bias` -> [act] -> Q/DQ (scale 0.1, zp `yz`): the PyTorch-export form.
ModelBuilder float_bias_conv(const std::vector<float>& bias, const std::string& act = "", int yz = 128) {
    ModelBuilder b(13);
    b.input("x", kF32, {1, 1, 2, 2});
    b.init_f32("xs", {}, {1.0f});
    b.init_int("xz", kU8, {}, {128});
    b.node("QuantizeLinear", {"x", "xs", "xz"}, {"xq"});
    b.node("DequantizeLinear", {"xq", "xs", "xz"}, {"xd"});
    b.init_int("wq", kI8, {4, 1, 1, 1}, {1, 1, 1, 1});
    b.init_f32("ws", {4}, {1.0f, 1.0f, 1.0f, 1.0f});
    b.init_int("wz", kI8, {4}, {0, 0, 0, 0});
    ModelBuilder::attr_int(b.node("DequantizeLinear", {"wq", "ws", "wz"}, {"wd"}), "axis", 0);
    b.init_f32("b", {4}, bias);
    b.node("Conv", {"xd", "wd", "b"}, {"c"}, "conv");
    std::string last = "c";
    if (!act.empty()) {
        b.node(act, {"c"}, {"a"}, "act");
        last = "a";
    }
    b.init_f32("ys", {}, {0.1f});
    b.init_int("yz", kU8, {}, {yz});
    b.node("QuantizeLinear", {last, "ys", "yz"}, {"yq"});
    b.node("DequantizeLinear", {"yq", "ys", "yz"}, {"y"});
    b.output("y");
    return b;
}

std::vector<int32_t> ints(const drv::ir::Graph& g, const std::string& v) {
    const num::Tensor& t = *g.value(v).data;
    return std::vector<int32_t>(t.data<int32_t>(), t.data<int32_t>() + t.numel());
}

}  // namespace

// onnxruntime WeightBiasQuantization: bias / (x_scale * w_scale) rounded half to even. With both
// scales 1: 0.37 -> 0, 2.5 -> 2, 3.5 -> 4, -2.5 -> -2 (the float path would keep 0.37).
TEST(QdqConventions, FloatBiasQuantizedAsOnnxruntime) {
    auto g = import(float_bias_conv({0.37f, 2.5f, 3.5f, -2.5f}));
    const auto& c = node(g, "QLinearConv");
    EXPECT_EQ(count(g, "Conv"), 0) << g.dump();
    EXPECT_EQ(ints(g, c.input(8)), (std::vector<int32_t>{0, 2, 4, -2}));
}

// A Relu/Clip between the op and its Q does not stop the bias quantization; a Relu the Q does not
// make redundant (zero point 128 > 0) keeps the unit in float, with the quantized bias.
TEST(QdqConventions, NonRedundantReluKeepsFloatConvWithQuantizedBias) {
    auto g = import(float_bias_conv({0.37f, 2.5f, 3.5f, -2.5f}, "Relu", 128));
    const auto& c = node(g, "Conv");
    EXPECT_EQ(count(g, "QLinearConv"), 0);
    EXPECT_EQ(count(g, "Relu"), 1);
    const auto& bdq = g.nodes()[static_cast<size_t>(g.producer(c.input(2)))];
    EXPECT_EQ(bdq.op_type, "DequantizeLinear");
    EXPECT_EQ(ints(g, bdq.input(0)), (std::vector<int32_t>{0, 2, 4, -2}));
    // Zero point 0 = qmin: the Relu is redundant (onnxruntime ReluQuantFusion) and the unit fuses.
    auto f = import(float_bias_conv({0.37f, 2.5f, 3.5f, -2.5f}, "Relu", 0));
    EXPECT_EQ(count(f, "QLinearConv"), 1);
    EXPECT_EQ(count(f, "Relu"), 0);
}

// Sigmoid between Conv and Q: no path of Relu/Clip to a Q, so onnxruntime leaves the bias float.
TEST(QdqConventions, SigmoidBetweenOpAndQKeepsFloatBias) {
    auto g = import(float_bias_conv({0.37f, 2.5f, 3.5f, -2.5f}, "Sigmoid"));
    const auto& c = node(g, "Conv");
    EXPECT_TRUE(g.value(c.input(2)).is_constant());
    EXPECT_EQ(g.value(c.input(2)).dtype, num::DType::F32);
}

// Fake-quantized weights (float initializer -> QuantizeLinear -> DequantizeLinear, as torch.onnx and
// pytorch-quantization export them) fold to the int8 initializer onnxruntime's constant folding makes.
TEST(QdqConventions, FakeQuantizedWeightsFold) {
    ModelBuilder b = float_bias_conv({0.f, 0.f, 0.f, 0.f});
    auto* g = b.graph().mutable_node();
    for (auto& n : *g)
        if (n.output(0) == "wd") n.set_input(0, "wq_f");
    // Q(w / 1) rounds half to even: 1.5 -> 2, -0.5 -> 0, 2.5 -> 2, 126.7 -> 127.
    b.init_f32("wq_f", {4, 1, 1, 1}, {1.5f, -0.5f, 2.5f, 126.7f});
    ModelBuilder::attr_int(b.node("QuantizeLinear", {"wq_f", "ws", "wz"}, {"wq_q"}), "axis", 0);
    for (auto& n : *g)
        if (n.output(0) == "wd") n.set_input(0, "wq_q");
    auto ir = import(b);
    const auto& c = node(ir, "QLinearConv");
    const num::Tensor& w = *ir.value(c.input(3)).data;
    EXPECT_EQ(std::vector<int8_t>(w.data<int8_t>(), w.data<int8_t>() + 4), (std::vector<int8_t>{2, 0, 2, 127}));
}

// One DequantizeLinear read by two Convs (ORT quantize_static shares it) is duplicated, so both
// units fuse (EnsureUniqueDQForNodeUnit).
TEST(QdqConventions, SharedDqFeedsTwoFusedConvs) {
    ModelBuilder b = float_bias_conv({0.f, 0.f, 0.f, 0.f});
    b.node("Conv", {"xd", "wd", "b"}, {"c2"}, "conv2");
    b.node("QuantizeLinear", {"c2", "ys", "yz"}, {"y2q"});
    b.node("DequantizeLinear", {"y2q", "ys", "yz"}, {"y2"});
    b.output("y2");
    auto g = import(b);
    EXPECT_EQ(count(g, "QLinearConv"), 2) << g.dump();
    EXPECT_EQ(count(g, "Conv"), 0);
}

// x86-64: an int8 Q whose output feeds two DQs stays int8 and both Convs run in float; the same with
// one consumer becomes a uint8 pair (zero point + 128) and fuses. On ARM64 both fuse as int8.
TEST(QdqConventions, Int8ActivationsOnX86) {
    auto build = [](bool two) {
        ModelBuilder b(13);
        b.input("x", kF32, {1, 1, 2, 2});
        b.init_f32("xs", {}, {0.5f});
        b.init_int("xz", kI8, {}, {-3});
        b.node("QuantizeLinear", {"x", "xs", "xz"}, {"xq"});
        b.node("DequantizeLinear", {"xq", "xs", "xz"}, {"xd"});
        if (two) b.node("DequantizeLinear", {"xq", "xs", "xz"}, {"xd2"});
        b.init_int("wq", kI8, {1, 1, 1, 1}, {3});
        b.init_f32("ws", {}, {0.25f});
        b.init_int("wz", kI8, {}, {0});
        b.node("DequantizeLinear", {"wq", "ws", "wz"}, {"wd"});
        b.init_f32("ys", {}, {0.1f});
        b.init_int("yz", kI8, {}, {0});
        for (int k = 0; k < (two ? 2 : 1); ++k) {
            const std::string s = std::to_string(k);
            b.node("Conv", {k ? "xd2" : "xd", "wd"}, {"c" + s});
            b.node("QuantizeLinear", {"c" + s, "ys", "yz"}, {"q" + s});
            b.node("DequantizeLinear", {"q" + s, "ys", "yz"}, {"y" + s});
            b.output("y" + s);
        }
        return b;
    };
    auto two = import(build(true));
    EXPECT_EQ(count(two, "Conv"), 2) << two.dump();
    EXPECT_EQ(two.value("xq").dtype, num::DType::I8);
    auto one = import(build(false));
    EXPECT_EQ(count(one, "QLinearConv"), 1) << one.dump();
    const auto& c = node(one, "QLinearConv");
    EXPECT_EQ(one.value(c.input(0)).dtype, num::DType::U8);
    EXPECT_EQ(one.value(c.input(2)).data->data<uint8_t>()[0], 125);  // -3 + 128
    auto arm = import(build(true), OrtCpu::Arm64);
    EXPECT_EQ(count(arm, "QLinearConv"), 2);
}

// Q -> DQ -> Reshape -> Gemm(DQ weights) -> Q: the DQ is propagated through the Reshape (a Q/DQ pair
// with its parameters inserted after it), so the Reshape runs on the uint8 tensor and the Gemm fuses.
TEST(QdqConventions, DqPropagatesThroughReshapeToFuseGemm) {
    ModelBuilder b(13);
    b.input("x", kF32, {1, 4, 1, 1});
    b.init_f32("xs", {}, {0.02f});
    b.init_int("xz", kU8, {}, {128});
    b.node("QuantizeLinear", {"x", "xs", "xz"}, {"xq"});
    b.node("DequantizeLinear", {"xq", "xs", "xz"}, {"xd"});
    b.init_i64("shape", {2}, {1, 4});
    b.node("Reshape", {"xd", "shape"}, {"r"}, "reshape");
    b.init_int("wq", kI8, {3, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
    b.init_f32("ws", {}, {0.1f});
    b.init_int("wz", kI8, {}, {0});
    b.node("DequantizeLinear", {"wq", "ws", "wz"}, {"wd"});
    ModelBuilder::attr_int(b.node("Gemm", {"r", "wd"}, {"g"}, "fc"), "transB", 1);
    b.init_f32("ys", {}, {0.05f});
    b.init_int("yz", kU8, {}, {128});
    b.node("QuantizeLinear", {"g", "ys", "yz"}, {"yq"});
    b.node("DequantizeLinear", {"yq", "ys", "yz"}, {"y"});
    b.output("y");
    auto g = import(b);
    EXPECT_EQ(count(g, "QGemm"), 1) << g.dump();
    const auto& r = node(g, "Reshape");
    EXPECT_EQ(g.value(r.input(0)).dtype, num::DType::U8);
    EXPECT_EQ(g.value(r.outputs[0]).quant.scale, (std::vector<float>{0.02f}));
}

// QOperator format: MaxPool on the uint8 output of a QLinearConv carries the conv's output
// quantization, as the QOperator quantizer leaves it (no Q/DQ node says so).
TEST(QdqConventions, QOperatorTensorsAreAnnotated) {
    ModelBuilder b(13);
    b.input("x", kF32, {1, 1, 4, 4});
    b.init_f32("xs", {}, {0.02f});
    b.init_int("xz", kU8, {}, {128});
    b.node("QuantizeLinear", {"x", "xs", "xz"}, {"xq"});
    b.init_int("wq", kI8, {2, 1, 1, 1}, {5, -7});
    b.init_f32("ws", {2}, {0.01f, 0.03f});
    b.init_int("wz", kI8, {2}, {0, 0});
    b.init_f32("ys", {}, {0.04f});
    b.init_int("yz", kU8, {}, {0});
    b.node("QLinearConv", {"xq", "xs", "xz", "wq", "ws", "wz", "ys", "yz"}, {"c"});
    auto& mp = b.node("MaxPool", {"c"}, {"p"});
    ModelBuilder::attr_ints(mp, "kernel_shape", {2, 2});
    ModelBuilder::attr_ints(mp, "strides", {2, 2});
    b.node("DequantizeLinear", {"p", "ys", "yz"}, {"y"});
    b.output("y");
    auto g = import(b);
    EXPECT_EQ(g.value("c").quant.scale, (std::vector<float>{0.04f}));
    EXPECT_EQ(g.value("p").quant.scale, (std::vector<float>{0.04f}));
    EXPECT_EQ(g.value("p").quant.zero_point, (std::vector<int32_t>{0}));
    EXPECT_EQ(g.value("wq").quant.axis, 0);
}
