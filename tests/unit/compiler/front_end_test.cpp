// SPDX-License-Identifier: MIT
// Exporter patterns the importer folds (issue 13): Shape/Gather/Concat -> Reshape chains (PaddleOCR,
// BlazeFace), ConstantOfShape / Range / Expand masks, an If whose condition is constant once the input
// shapes are fixed (Silero VAD, PaddleOCR) and the refusal of a data-dependent If; and the bad inputs of
// issue 23 met in import, shape inference and folding (overflowing shapes, INT64_MIN / -1, extreme
// Slice steps, Clip with min > max). Graphs are written the way torch.onnx / paddle2onnx write them.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "compiler/onnx/onnx_importer.h"
#include "compiler/ref/reference.h"
#include "onnx_builder.h"

using drv::importer::ImportError;
using test_onnx::ModelBuilder;

namespace {

constexpr int32_t kF32 = 1, kI64 = 7, kBool = 9;

drv::ir::Graph import(const ModelBuilder& b, const drv::importer::ImportOptions& o = {}) {
    std::string s = b.bytes();
    return drv::importer::import_onnx_bytes(s.data(), s.size(), o, "test.onnx");
}

std::string import_error(const ModelBuilder& b, const drv::importer::ImportOptions& o = {}) {
    try {
        import(b, o);
    } catch (const ImportError& e) {
        return e.what();
    }
    return "";
}

num::Tensor iota_f32(const std::vector<int64_t>& shape) {
    num::Tensor t(num::DType::F32, shape);
    for (size_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = static_cast<float>(i) - 3.0f;
    return t;
}

std::map<std::string, num::Tensor> run(const drv::ir::Graph& g, const std::string& in, num::Tensor x) {
    std::map<std::string, num::Tensor> feeds;
    feeds[in] = std::move(x);
    return drv::ref::execute(g, feeds);
}

bool has_op(const drv::ir::Graph& g, const std::string& op) {
    for (const auto& n : g.nodes())
        if (n.op_type == op) return true;
    return false;
}

/// A branch graph computing `op(x)` on the outer value x (captured by name, as ONNX allows).
::onnx::GraphProto branch(const std::string& op, const std::string& out) {
    ModelBuilder b;
    b.node(op, {"x"}, {out}, op + "_in_branch");
    b.output(out);
    return b.graph();
}

/// y = If(cond, then: Relu(x), else: Neg(x)); cond from `cond_nodes` (added by the caller).
ModelBuilder if_model(const std::vector<int64_t>& in_shape) {
    ModelBuilder b(13);
    b.input("x", kF32, in_shape);
    auto& n = b.node("If", {"cond"}, {"y"}, "shape_if");
    ModelBuilder::attr_graph(n, "then_branch", branch("Relu", "t_out"));
    ModelBuilder::attr_graph(n, "else_branch", branch("Neg", "e_out"));
    b.output("y");
    return b;
}

}  // namespace

// paddle2onnx flattens with Shape -> Slice -> Concat(-1) -> Reshape; BlazeFace reshapes its
// regressors with Shape -> Gather(0) -> Unsqueeze -> Concat([n, -1, 16]).
TEST(FrontEnd, ShapeChainsFoldIntoReshapeTargets) {
    ModelBuilder b(13);
    b.input("x", kF32, {1, 4, 3, 2});
    b.node("Shape", {"x"}, {"s"});
    b.init_i64("st", {1}, {0});
    b.init_i64("en", {1}, {2});
    b.node("Slice", {"s", "st", "en"}, {"nc"});
    b.init_i64("m1", {1}, {-1});
    auto& cc = b.node("Concat", {"nc", "m1"}, {"target"});
    ModelBuilder::attr_int(cc, "axis", 0);
    b.node("Reshape", {"x", "target"}, {"y"});
    b.output("y");
    auto g = import(b);
    EXPECT_TRUE(g.value("target").is_constant());
    EXPECT_EQ(g.value("y").shape, (std::vector<int64_t>{1, 4, 6}));
    EXPECT_FALSE(has_op(g, "Shape"));
    EXPECT_FALSE(has_op(g, "Concat"));
    auto out = run(g, "x", iota_f32({1, 4, 3, 2}));
    EXPECT_EQ(out.at("y").data<float>()[23], 20.0f);  // element 23 of the input, moved unchanged
}

// ConstantOfShape(Shape(x)) -> Range/Expand, as attention-mask and anchor code exports it.
TEST(FrontEnd, ConstantOfShapeRangeExpandFold) {
    ModelBuilder b(13);
    b.input("x", kF32, {1, 3, 4});
    b.node("Shape", {"x"}, {"s"});
    auto& cos = b.node("ConstantOfShape", {"s"}, {"ones"});
    {
        auto* a = cos.add_attribute();
        a->set_name("value");
        a->set_type(::onnx::AttributeProto::TENSOR);
        auto* t = a->mutable_t();
        t->set_data_type(kF32);
        t->add_dims(1);
        t->add_float_data(2.0f);
    }
    b.init_i64("r0", {}, {0});
    b.init_i64("r1", {}, {4});
    b.init_i64("r2", {}, {1});
    b.node("Range", {"r0", "r1", "r2"}, {"idx"});  // [0 1 2 3]
    b.node("Cast", {"idx"}, {"idxf"});
    ModelBuilder::attr_int(b.graph().mutable_node(b.graph().node_size() - 1)[0], "to", kF32);
    b.node("Expand", {"idxf", "s"}, {"grid"});  // [1,3,4], each row 0..3
    b.node("Mul", {"ones", "grid"}, {"k"});
    b.node("Add", {"x", "k"}, {"y"});
    b.output("y");
    auto g = import(b);
    ASSERT_TRUE(g.value("k").is_constant());
    const num::Tensor& k = *g.value("k").data;
    EXPECT_EQ(k.shape(), (std::vector<int64_t>{1, 3, 4}));
    for (size_t i = 0; i < k.numel(); ++i) EXPECT_EQ(k.data<float>()[i], 2.0f * static_cast<float>(i % 4));
    EXPECT_EQ(g.nodes().size(), 1u);  // only x + k is left
}

TEST(FrontEnd, IfWithShapeConditionIsInlined) {
    for (int64_t batch : {1, 2}) {
        ModelBuilder b = if_model({batch, 4});
        b.node("Shape", {"x"}, {"s"});
        b.init_i64("zero", {}, {0});
        auto& ga = b.node("Gather", {"s", "zero"}, {"n"});
        ModelBuilder::attr_int(ga, "axis", 0);
        b.init_i64("one", {}, {1});
        b.node("Equal", {"n", "one"}, {"cond"});
        // The If reads cond, produced after it in the file: the importer orders nodes itself.
        std::swap(*b.graph().mutable_node(0), *b.graph().mutable_node(b.graph().node_size() - 1));
        auto g = import(b);
        EXPECT_FALSE(has_op(g, "If"));
        EXPECT_EQ(has_op(g, "Relu"), batch == 1);
        EXPECT_EQ(has_op(g, "Neg"), batch != 1);
        for (const auto& n : g.nodes()) EXPECT_EQ(n.name.rfind(batch == 1 ? "shape_if/then/" : "shape_if/else/", 0), 0u);
        auto out = run(g, "x", iota_f32({batch, 4}));
        const float x0 = -3.0f;  // iota_f32 element 0
        EXPECT_EQ(out.at("y").data<float>()[0], batch == 1 ? 0.0f : -x0);
    }
}

TEST(FrontEnd, IfOnValuesIsRefusedNamingTheNode) {
    ModelBuilder b = if_model({1, 4});
    b.node("ReduceSum", {"x"}, {"sum"});
    b.init_f32("zero", {}, {0.0f});
    b.node("Greater", {"sum", "zero"}, {"cond"});
    const std::string e = import_error(b);
    EXPECT_NE(e.find("If 'shape_if'"), std::string::npos) << e;
    EXPECT_NE(e.find("not a constant"), std::string::npos) << e;
}

TEST(FrontEnd, LoopIsRefusedClearly) {
    ModelBuilder b(13);
    b.input("x", kF32, {1, 4});
    b.init_i64("trip", {}, {2});
    b.init_f32("c", {}, {1.0f});
    auto& n = b.node("Loop", {"trip", "", "x"}, {"y"}, "loop1");
    ModelBuilder::attr_graph(n, "body", branch("Relu", "o"));
    b.output("y");
    const std::string e = import_error(b);
    EXPECT_NE(e.find("Loop 'loop1'"), std::string::npos) << e;
    EXPECT_NE(e.find("not supported"), std::string::npos) << e;
}

// Issue 23: a shape whose element count overflows is an error, never a small buffer.
TEST(FrontEnd, OverflowingShapesAreRefused) {
    ModelBuilder b(13);
    b.input("x", kF32, {3037000500, 3037000500});
    b.node("Relu", {"x"}, {"y"});
    b.output("y");
    EXPECT_NE(import_error(b).find("more than 2^31 elements"), std::string::npos);
    drv::importer::ImportOptions o;
    drv::importer::parse_input_shape("x=4611686018427387905x1", o);  // 2^62 + 1
    EXPECT_NE(import_error(b, o).find("more than 2^31 elements"), std::string::npos);
    // An Expand to a huge constant shape fails in shape inference, before anything is allocated.
    ModelBuilder e(13);
    e.input("x", kF32, {1, 1});
    e.init_i64("s", {2}, {int64_t{1} << 40, int64_t{1} << 40});
    e.node("Expand", {"x", "s"}, {"y"});
    e.output("y");
    EXPECT_NE(import_error(e).find("more than 2^31 elements"), std::string::npos);
}

// Issue 23: folding INT64_MIN / -1 is a clean error (was SIGFPE).
TEST(FrontEnd, IntegerQuotientOverflowIsAnError) {
    ModelBuilder b(13);
    b.input("x", kF32, {1, 4});
    b.init_i64("a", {1}, {std::numeric_limits<int64_t>::min()});
    b.init_i64("m", {1}, {-1});
    b.node("Div", {"a", "m"}, {"q"});
    b.node("Reshape", {"x", "q"}, {"y"});
    b.output("y");
    const std::string e = import_error(b);
    EXPECT_NE(e.find("overflows"), std::string::npos) << e;
}

// Issue 23: Slice with steps of INT64_MAX / INT64_MIN takes one element (ONNX: ceil(len / |step|)),
// in shape inference, in folding and in the executor (was 0 elements).
TEST(FrontEnd, SliceWithExtremeStepsTakesOneElement) {
    for (bool negative : {false, true}) {
        ModelBuilder b(13);
        b.input("x", kF32, {1, 4});
        const int64_t step = negative ? std::numeric_limits<int64_t>::min() : std::numeric_limits<int64_t>::max();
        b.init_i64("st", {1}, {negative ? -1 : 0});
        b.init_i64("en", {1}, {negative ? std::numeric_limits<int64_t>::min() : std::numeric_limits<int64_t>::max()});
        b.init_i64("ax", {1}, {1});
        b.init_i64("sp", {1}, {step});
        b.node("Slice", {"x", "st", "en", "ax", "sp"}, {"y"});
        b.init_f32("k", {1, 4}, {10, 11, 12, 13});
        b.node("Slice", {"k", "st", "en", "ax", "sp"}, {"kf"});
        b.node("Add", {"x", "kf"}, {"z"});
        b.output("y");
        b.output("z");
        auto g = import(b);
        EXPECT_EQ(g.value("y").shape, (std::vector<int64_t>{1, 1}));
        ASSERT_TRUE(g.value("kf").is_constant());
        ASSERT_EQ(g.value("kf").data->numel(), 1u);
        EXPECT_EQ(g.value("kf").data->data<float>()[0], negative ? 13.0f : 10.0f);
        auto out = run(g, "x", iota_f32({1, 4}));
        ASSERT_EQ(out.at("y").numel(), 1u);
        EXPECT_EQ(out.at("y").data<float>()[0], negative ? 0.0f : -3.0f);  // x[3] = 0, x[0] = -3
    }
}

// Issue 23: Clip with min > max sets every value to max (ONNX Clip-11), folded or run.
TEST(FrontEnd, ClipWithMinAboveMaxGivesMax) {
    ModelBuilder b(13);
    b.input("x", kF32, {1, 4});
    b.init_f32("lo", {}, {5.0f});
    b.init_f32("hi", {}, {1.0f});
    b.node("Clip", {"x", "lo", "hi"}, {"y"});
    b.init_f32("k", {1, 4}, {-7.0f, 9.0f, 1.0f, 3.0f});
    b.node("Clip", {"k", "lo", "hi"}, {"kc"});
    b.node("Add", {"x", "kc"}, {"z"});
    b.output("y");
    b.output("z");
    auto g = import(b);
    auto out = run(g, "x", iota_f32({1, 4}));
    for (size_t i = 0; i < 4; ++i) EXPECT_EQ(out.at("y").data<float>()[i], 1.0f);
    ASSERT_TRUE(g.value("kc").is_constant());
    for (size_t i = 0; i < 4; ++i) EXPECT_EQ(g.value("kc").data->data<float>()[i], 1.0f);
}
