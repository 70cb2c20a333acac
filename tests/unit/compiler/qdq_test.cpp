// SPDX-License-Identifier: MIT
// QDQ handling: quant params folded onto int8 tensors (per-tensor and per-channel), DQ->Conv->Q
// rewritten to QLinearConv, DQ->Add->Q to com.microsoft QLinearAdd, Relu/Clip removed before a Q
// that already clamps (onnxruntime ReluQuantFusion/ClipQuantFusion), DQ->Softmax->Q to QLinearSoftmax.
#include <gtest/gtest.h>

#include "compiler/onnx/onnx_importer.h"
#include "compiler/ref/reference.h"
#include "onnx_builder.h"

using drv::importer::ImportOptions;
using drv::importer::QdqMode;
using test_onnx::ModelBuilder;

namespace {

constexpr int32_t kI8 = ::onnx::TensorProto::INT8;
constexpr int32_t kI32 = ::onnx::TensorProto::INT32;

/// x -> Q -> DQ -> Conv(DQ(w per-channel), DQ(b)) -> Clip(0,6) -> Q -> DQ -> Add(DQ branch) -> Q -> DQ -> y
ModelBuilder qdq_block() {
    ModelBuilder b(13);
    b.input("x", 1, {1, 2, 4, 4});
    b.init_f32("xs", {}, {0.02f});
    b.init_int("xz", kI8, {}, {0});
    b.node("QuantizeLinear", {"x", "xs", "xz"}, {"xq"});
    b.node("DequantizeLinear", {"xq", "xs", "xz"}, {"xf"});
    b.init_int("wq", kI8, {2, 2, 1, 1}, {10, -3, 4, 127});
    b.init_f32("ws", {2}, {0.01f, 0.02f});
    b.init_int("wz", kI8, {2}, {0, 0});
    auto& dqw = b.node("DequantizeLinear", {"wq", "ws", "wz"}, {"wf"});
    ModelBuilder::attr_int(dqw, "axis", 0);
    b.init_int("bq", kI32, {2}, {100, -50});
    b.init_f32("bs", {2}, {0.0002f, 0.0004f});
    b.init_int("bz", kI32, {2}, {0, 0});
    auto& dqb = b.node("DequantizeLinear", {"bq", "bs", "bz"}, {"bf"});
    ModelBuilder::attr_int(dqb, "axis", 0);
    b.node("Conv", {"xf", "wf", "bf"}, {"c"}, "conv");
    b.init_f32("lo", {}, {0.f});
    b.init_f32("hi", {}, {6.f});
    b.node("Clip", {"c", "lo", "hi"}, {"cr"}, "relu6");
    b.init_f32("cs", {}, {6.f / 255.f});
    b.init_int("cz", kI8, {}, {-128});
    b.node("QuantizeLinear", {"cr", "cs", "cz"}, {"cq"});
    b.node("DequantizeLinear", {"cq", "cs", "cz"}, {"cf"});
    b.node("Add", {"cf", "xf"}, {"s"}, "add");
    b.init_f32("ss", {}, {0.05f});
    b.init_int("sz", kI8, {}, {3});
    b.node("QuantizeLinear", {"s", "ss", "sz"}, {"sq"});
    b.node("DequantizeLinear", {"sq", "ss", "sz"}, {"y"});
    b.output("y");
    return b;
}

drv::ir::Graph import(const ModelBuilder& b, QdqMode m) {
    ImportOptions o;
    o.qdq = m;
    std::string s = b.bytes();
    return drv::importer::import_onnx_bytes(s.data(), s.size(), o, "qdq.onnx");
}

std::string ops(const drv::ir::Graph& g) {
    std::string s;
    for (const auto& n : g.nodes()) s += (s.empty() ? "" : ",") + n.op_type;
    return s;
}

}  // namespace

TEST(Qdq, FoldRecordsPerChannelAndPerTensorParams) {
    auto g = import(qdq_block(), QdqMode::Fold);
    const auto& w = g.value("wq");
    ASSERT_TRUE(w.is_quantized());
    EXPECT_EQ(w.quant.axis, 0);
    EXPECT_EQ(w.quant.scale, (std::vector<float>{0.01f, 0.02f}));
    EXPECT_EQ(w.data->quant.scale.size(), 2u);
    const auto& c = g.value("cq");
    ASSERT_TRUE(c.is_quantized());
    EXPECT_EQ(c.quant.zero_point, (std::vector<int32_t>{-128}));
    EXPECT_EQ(c.dtype, num::DType::I8);
    EXPECT_EQ(ops(g).find("QLinear"), std::string::npos);  // Fold keeps the nodes
}

TEST(Qdq, RewriteProducesOnnxruntimeFusedOps) {
    auto g = import(qdq_block(), QdqMode::Rewrite);
    // Clip(0,6) goes (Q range [0, 6] with scale 6/255, zp -128); Conv and Add become integer ops.
    EXPECT_EQ(ops(g), "QuantizeLinear,QLinearConv,QLinearAdd,DequantizeLinear") << g.dump();
    const auto& conv = g.nodes()[1];
    EXPECT_EQ(conv.inputs.size(), 9u);
    EXPECT_EQ(conv.input(8), "bq");
    EXPECT_EQ(g.nodes()[2].domain, "com.microsoft");
    EXPECT_EQ(g.value("sq").dtype, num::DType::I8);
}

TEST(Qdq, ClipWiderThanQuantRangeIsKept) {
    ModelBuilder b = qdq_block();
    // Q range now [0, 12]: Clip(0, 6) really clamps, so the Conv unit cannot fuse.
    for (auto& t : *b.graph().mutable_initializer())
        if (t.name() == "cs") {
            float v = 12.f / 255.f;
            t.set_raw_data(std::string(reinterpret_cast<const char*>(&v), 4));
        }
    auto g = import(b, QdqMode::Rewrite);
    EXPECT_NE(ops(g).find("Clip"), std::string::npos) << g.dump();
}

namespace {

/// uint8 x [1,2,1,1] -> DQ -> Softmax(axis 1) -> Q (y_scale 1/255, zp 0) -> y.
ModelBuilder qdq_softmax(int64_t opset) {
    ModelBuilder b(opset);
    b.input("x", ::onnx::TensorProto::UINT8, {1, 2, 1, 1});
    b.init_f32("xs", {}, {0.05f});
    b.init_int("xz", ::onnx::TensorProto::UINT8, {}, {3});
    b.node("DequantizeLinear", {"x", "xs", "xz"}, {"xf"});
    auto& sm = b.node("Softmax", {"xf"}, {"p"}, "softmax");
    ModelBuilder::attr_int(sm, "axis", 1);
    b.init_f32("ys", {}, {1.0f / 255.0f});
    b.init_int("yz", ::onnx::TensorProto::UINT8, {}, {0});
    b.node("QuantizeLinear", {"p", "ys", "yz"}, {"y"});
    b.output("y", ::onnx::TensorProto::UINT8);
    return b;
}

}  // namespace

// onnxruntime fuses DQ -> Softmax -> Q into com.microsoft QLinearSoftmax (UnaryOpQDQRules) with
// attribute opset = the Softmax's since-version; its kernel scales by floor(1 / y_scale) = 254 for
// y_scale 1/255: codes {255, 3} (12.6 nats apart, p = 0.9999966) give 254 and 0, where float
// Softmax + QuantizeLinear gives RNE(0.9999966 / float(1/255)) = 255.
TEST(Qdq, SoftmaxBecomesQLinearSoftmaxWithOnnxruntimesKernel) {
    for (const int64_t opset : {13, 12}) {
        auto g = import(qdq_softmax(opset), QdqMode::Rewrite);
        ASSERT_EQ(ops(g), "QLinearSoftmax") << g.dump();
        const auto& n = g.nodes()[0];
        EXPECT_EQ(n.domain, "com.microsoft");
        EXPECT_EQ(drv::ir::attr_int(n.attrs, "opset", 0), opset == 13 ? 13 : 11);
        EXPECT_EQ(drv::ir::attr_int(n.attrs, "axis", 0), 1);
        num::Tensor x(num::DType::U8, {1, 2, 1, 1});
        x.data<uint8_t>()[0] = 255;
        x.data<uint8_t>()[1] = 3;
        const num::Tensor y = drv::ref::execute(g, {{"x", x}}).at("y");
        EXPECT_EQ(int(y.data<uint8_t>()[0]), 254);
        EXPECT_EQ(int(y.data<uint8_t>()[1]), 0);
    }
    // The unfused float path gives the other value: the difference the fusion models.
    auto f = import(qdq_softmax(13), QdqMode::Fold);
    num::Tensor x(num::DType::U8, {1, 2, 1, 1});
    x.data<uint8_t>()[0] = 255;
    x.data<uint8_t>()[1] = 3;
    EXPECT_EQ(int(drv::ref::execute(f, {{"x", x}}).at("y").data<uint8_t>()[0]), 255);
}
