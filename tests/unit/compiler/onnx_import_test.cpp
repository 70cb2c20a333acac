// SPDX-License-Identifier: MIT
// ONNX import: initializers (raw and typed), attributes, Constant nodes, shape inference through
// conv/pool/gemm/reshape chains, constant folding of Shape arithmetic, --input-shape overrides.
#include <gtest/gtest.h>

#include <cstring>
#include <iterator>

#include "compiler/onnx/onnx_importer.h"
#include "onnx_builder.h"

using drv::importer::ImportError;
using drv::importer::ImportOptions;
using test_onnx::ModelBuilder;

namespace {

drv::ir::Graph import(const ModelBuilder& b, const ImportOptions& o = {}) {
    std::string s = b.bytes();
    return drv::importer::import_onnx_bytes(s.data(), s.size(), o, "test.onnx");
}

ModelBuilder small_cnn(int64_t batch = 1) {
    ModelBuilder b(13);
    b.input("x", 1, {batch, 3, 8, 8});
    b.init_f32("w", {4, 3, 3, 3}, std::vector<float>(4 * 3 * 3 * 3, 0.5f));
    b.init_f32("bias", {4}, {0, 1, 2, 3});
    auto& conv = b.node("Conv", {"x", "w", "bias"}, {"c"}, "conv1");
    ModelBuilder::attr_ints(conv, "pads", {1, 1, 1, 1});
    ModelBuilder::attr_ints(conv, "strides", {2, 2});
    b.node("Relu", {"c"}, {"r"});
    auto& mp = b.node("MaxPool", {"r"}, {"p"});
    ModelBuilder::attr_ints(mp, "kernel_shape", {2, 2});
    ModelBuilder::attr_ints(mp, "strides", {2, 2});
    // Shape -> Gather -> Unsqueeze -> Concat -> Reshape, as exporters write flatten.
    b.node("Shape", {"p"}, {"shp"});
    b.init_i64("zero", {}, {0});
    auto& ga = b.node("Gather", {"shp", "zero"}, {"n"});
    ModelBuilder::attr_int(ga, "axis", 0);
    b.init_i64("ax0", {1}, {0});
    b.node("Unsqueeze", {"n", "ax0"}, {"n1"});
    b.init_i64("minus1", {1}, {-1});
    auto& cc = b.node("Concat", {"n1", "minus1"}, {"target"});
    ModelBuilder::attr_int(cc, "axis", 0);
    b.node("Reshape", {"p", "target"}, {"flat"});
    b.init_f32("fc_w", {5, 16}, std::vector<float>(80, 0.1f));
    auto& gemm = b.node("Gemm", {"flat", "fc_w"}, {"y"});
    ModelBuilder::attr_int(gemm, "transB", 1);
    b.output("y");
    return b;
}

}  // namespace

TEST(OnnxImport, SmallCnnShapesAndFolding) {
    auto g = import(small_cnn());
    // conv: (8 + 2 - 3) / 2 + 1 = 4; maxpool 2/2: 2; flatten 4*2*2 = 16; gemm -> 5.
    EXPECT_EQ(g.value("c").shape, (std::vector<int64_t>{1, 4, 4, 4}));
    EXPECT_EQ(g.value("p").shape, (std::vector<int64_t>{1, 4, 2, 2}));
    EXPECT_TRUE(g.value("target").is_constant());
    EXPECT_EQ(g.value("flat").shape, (std::vector<int64_t>{1, 16}));
    EXPECT_EQ(g.value("y").shape, (std::vector<int64_t>{1, 5}));
    // The folded shape chain leaves Conv, Relu, MaxPool, Reshape, Gemm.
    ASSERT_EQ(g.nodes().size(), 5u);
    EXPECT_EQ(g.nodes()[0].op_type, "Conv");
    EXPECT_EQ(drv::ir::attr_ints(g.nodes()[0].attrs, "strides", {}), (std::vector<int64_t>{2, 2}));
    EXPECT_EQ(g.opset(""), 13);
}

TEST(OnnxImport, DynamicBatchNeedsInputShape) {
    try {
        import(small_cnn(-1));
        FAIL() << "no error";
    } catch (const ImportError& e) {
        std::string m = e.what();
        EXPECT_NE(m.find("dynamic ('N')"), std::string::npos) << m;
        EXPECT_NE(m.find("--input-shape"), std::string::npos) << m;
    }
    ImportOptions o;
    drv::importer::parse_input_shape("x=2x3x8x8", o);
    auto g = import(small_cnn(-1), o);
    EXPECT_EQ(g.value("y").shape, (std::vector<int64_t>{2, 5}));
}

TEST(OnnxImport, InputShapeErrors) {
    ImportOptions o;
    EXPECT_THROW(drv::importer::parse_input_shape("x=1xAx3", o), ImportError);
    EXPECT_THROW(drv::importer::parse_input_shape("x=", o), ImportError);
    drv::importer::parse_input_shape("nope=1x3x8x8", o);
    EXPECT_THROW(import(small_cnn(), o), ImportError);  // not a graph input
    ImportOptions r;
    drv::importer::parse_input_shape("x=1x3x8", r);
    EXPECT_THROW(import(small_cnn(-1), r), ImportError);  // rank differs
}

TEST(OnnxImport, TypedInitializersAndConstantNodes) {
    ModelBuilder b(11);
    b.input("x", 1, {2, 3});
    auto& t = *b.graph().add_initializer();
    t.set_name("k");
    t.set_data_type(::onnx::TensorProto::FLOAT);
    t.add_dims(3);
    for (float f : {1.f, 2.f, 3.f}) t.add_float_data(f);
    auto& cn = b.node("Constant", {}, {"c"});
    auto* a = cn.add_attribute();
    a->set_name("value_floats");
    a->set_type(::onnx::AttributeProto::FLOATS);
    a->add_floats(4.f);
    b.node("Add", {"x", "k"}, {"s"});
    b.node("Mul", {"s", "c"}, {"y"});
    b.output("y");
    auto g = import(b);
    ASSERT_TRUE(g.value("k").is_constant());
    EXPECT_EQ(g.value("k").data->data<float>()[2], 3.f);
    EXPECT_TRUE(g.value("c").is_constant());
    EXPECT_EQ(g.value("y").shape, (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(g.nodes().size(), 2u);
}

TEST(OnnxImport, OpsetOutsideRangeIsRejected) {
    ModelBuilder b(6);
    b.input("x", 1, {1});
    b.node("Relu", {"x"}, {"y"});
    b.output("y");
    try {
        import(b);
        FAIL();
    } catch (const ImportError& e) {
        EXPECT_NE(std::string(e.what()).find("opset 6"), std::string::npos) << e.what();
    }
}

TEST(OnnxImport, UnsupportedOperatorNamesTheNode) {
    ModelBuilder b(13);
    b.input("x", 1, {1});
    b.node("FancyOp", {"x"}, {"y"}, "my_fancy_node");
    b.output("y");
    try {
        import(b);
        FAIL();
    } catch (const ImportError& e) {
        EXPECT_NE(std::string(e.what()).find("my_fancy_node"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("not supported"), std::string::npos) << e.what();
    }
}

TEST(OnnxImport, ShapeMismatchNamesTheNode) {
    ModelBuilder b(13);
    b.input("x", 1, {1, 3, 8, 8});
    b.init_f32("w", {4, 2, 3, 3}, std::vector<float>(72, 0.f));
    b.node("Conv", {"x", "w"}, {"y"}, "bad_conv");
    b.output("y");
    try {
        import(b);
        FAIL();
    } catch (const ImportError& e) {
        EXPECT_NE(std::string(e.what()).find("bad_conv"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("input channels"), std::string::npos) << e.what();
    }
}

TEST(OnnxImport, OlderOpsetAttributesForSqueezeAndSlice) {
    ModelBuilder b(9);
    b.input("x", 1, {1, 6, 1});
    auto& sq = b.node("Squeeze", {"x"}, {"s"});
    ModelBuilder::attr_ints(sq, "axes", {2});
    auto& sl = b.node("Slice", {"s"}, {"y"});
    ModelBuilder::attr_ints(sl, "starts", {1});
    ModelBuilder::attr_ints(sl, "ends", {100});
    ModelBuilder::attr_ints(sl, "axes", {1});
    b.output("y");
    auto g = import(b);
    EXPECT_EQ(g.value("y").shape, (std::vector<int64_t>{1, 5}));
}

namespace {

void put_varint(std::string& s, uint64_t v) {
    while (v >= 0x80) s += static_cast<char>((v & 0x7f) | 0x80), v >>= 7;
    s += static_cast<char>(v);
}
void put_len_field(std::string& s, uint32_t number, const std::string& payload) {
    put_varint(s, (uint64_t{number} << 3) | 2);
    put_varint(s, payload.size());
    s += payload;
}
std::string f32_bytes(std::initializer_list<float> v) {
    std::string s(v.size() * 4, '\0');
    std::memcpy(s.data(), std::data(v), s.size());
    return s;
}

}  // namespace

// The importer keeps initializer raw_data in the file buffer (split parse) instead of copying it
// into the protobuf message. The ordinary parse (forced here by an unknown group field, which
// the split parse leaves to it) must give the same graph, including protobuf's merge rules: a
// second `graph` field merges into the first, a repeated raw_data field keeps the last value.
TEST(OnnxImport, SplitParseMatchesOrdinaryParse) {
    ModelBuilder b(13);
    b.input("x", 1, {3});
    b.init_f32("w", {3}, {0.5f, -1.f, 2.f});
    auto& t = *b.graph().add_initializer();  // typed data, no raw_data
    t.set_name("k");
    t.set_data_type(::onnx::TensorProto::FLOAT);
    t.add_dims(3);
    for (float f : {7.f, 8.f, 9.f}) t.add_float_data(f);
    b.node("Add", {"x", "w"}, {"a"});
    b.node("Mul", {"a", "k"}, {"m"});
    b.node("Sub", {"m", "extra"}, {"y"});
    b.output("y");
    // "extra" comes in a second graph field, with raw_data given twice (the last one counts).
    ::onnx::TensorProto e;
    e.set_name("extra");
    e.set_data_type(::onnx::TensorProto::FLOAT);
    e.add_dims(3);
    e.set_raw_data(f32_bytes({9.f, 9.f, 9.f}));
    std::string tensor = e.SerializeAsString();
    put_len_field(tensor, 9, f32_bytes({1.f, 2.f, 3.f}));
    std::string graph;
    put_len_field(graph, 5, tensor);
    std::string bytes = b.bytes();
    put_len_field(bytes, 7, graph);
    std::string ordinary = bytes + std::string("\xa3\x06\xa4\x06", 4);  // field 100: empty group
    const auto split_g = drv::importer::import_onnx_bytes(bytes.data(), bytes.size(), {}, "split.onnx");
    const auto ord_g = drv::importer::import_onnx_bytes(ordinary.data(), ordinary.size(), {}, "ordinary.onnx");
    EXPECT_EQ(split_g.dump(), ord_g.dump());
    for (const char* name : {"w", "k", "extra"}) {
        ASSERT_TRUE(split_g.value(name).is_constant()) << name;
        ASSERT_TRUE(ord_g.value(name).is_constant()) << name;
        const num::Tensor &s = *split_g.value(name).data, &o = *ord_g.value(name).data;
        ASSERT_EQ(s.nbytes(), 12u) << name;
        EXPECT_EQ(std::memcmp(s.raw(), o.raw(), 12), 0) << name;
    }
    EXPECT_EQ(split_g.value("w").data->data<float>()[1], -1.f);
    EXPECT_EQ(split_g.value("extra").data->data<float>()[2], 3.f);
    // raw_data of the wrong size is still reported with the tensor's name on the split path.
    std::string bad_t = e.SerializeAsString();
    put_len_field(bad_t, 9, f32_bytes({1.f, 2.f}));
    std::string bad_g, bad = b.bytes();
    put_len_field(bad_g, 5, bad_t);
    put_len_field(bad, 7, bad_g);
    try {
        drv::importer::import_onnx_bytes(bad.data(), bad.size(), {}, "bad.onnx");
        ADD_FAILURE() << "no error";
    } catch (const ImportError& err) {
        EXPECT_NE(std::string(err.what()).find("'extra' raw_data has 8 bytes"), std::string::npos) << err.what();
    }
}

// Timing-only import (ImportOptions::skip_data_from_bytes): the same graph (values, shapes,
// dtypes, nodes) with large initializers' contents left out; smaller ones keep theirs.
TEST(OnnxImport, SkipDataFromBytesKeepsTheGraph) {
    ModelBuilder b(13);
    b.input("x", 1, {1, 64, 8, 8});
    std::vector<float> big(64 * 64 * 3 * 3);
    for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<float>(i % 7) - 3.f;
    b.init_f32("w", {64, 64, 3, 3}, big);  // 147456 bytes
    b.init_f32("bias", {64}, std::vector<float>(64, 0.25f));
    auto& conv = b.node("Conv", {"x", "w", "bias"}, {"y"}, "conv1");
    ModelBuilder::attr_ints(conv, "pads", {1, 1, 1, 1});
    b.output("y");
    ImportOptions all, skip;
    skip.skip_data_from_bytes = 64 * 1024;
    const auto ga = import(b, all), gs = import(b, skip);
    EXPECT_EQ(ga.dump(), gs.dump());
    const num::Tensor &wa = *ga.value("w").data, &ws = *gs.value("w").data;
    EXPECT_EQ(ws.dtype(), wa.dtype());
    EXPECT_EQ(ws.shape(), wa.shape());
    EXPECT_EQ(ws.nbytes(), 147456u);
    EXPECT_EQ(wa.data<float>()[10], 0.f);  // 10 % 7 - 3
    const num::Tensor& bs = *gs.value("bias").data;
    EXPECT_EQ(bs.data<float>()[63], 0.25f);
    // The size check still applies to a skipped tensor.
    ModelBuilder bad(13);
    bad.input("x", 1, {1, 64, 8, 8});
    bad.init_f32("w", {64, 64, 3, 3}, big);
    bad.graph().mutable_initializer(0)->add_dims(2);  // dims now need twice the bytes
    bad.node("Identity", {"x"}, {"y"});
    bad.output("y");
    EXPECT_THROW(import(bad, skip), ImportError);
}
