// SPDX-License-Identifier: MIT
// Graph IR: topological order, structural validation (cycles, dangling inputs, duplicate
// producers), dead-node removal, deterministic dumps, auto_pad as explicit pads.
#include <gtest/gtest.h>

#include "compiler/ir/graph.h"
#include "compiler/ir/shape_inference.h"
#include "numerics/ops.h"

using drv::ir::Graph;
using drv::ir::GraphError;
using drv::ir::Node;
using drv::ir::Value;

namespace {

Node make(const std::string& name, const std::string& op, std::vector<std::string> in, std::vector<std::string> out) {
    Node n;
    n.name = name;
    n.op_type = op;
    n.inputs = std::move(in);
    n.outputs = std::move(out);
    return n;
}

Graph chain() {
    Graph g;
    Value x;
    x.name = "x";
    x.shape = {1, 4};
    x.shape_known = true;
    g.add_value(x);
    g.inputs().push_back("x");
    // Deliberately out of order: b consumes a's output.
    g.add_node(make("b", "Relu", {"t"}, {"y"}));
    g.add_node(make("a", "Relu", {"x"}, {"t"}));
    g.outputs().push_back("y");
    return g;
}

}  // namespace

TEST(GraphIr, TopologicalOrderPutsProducersFirst) {
    Graph g = chain();
    auto order = g.topological_order();
    ASSERT_EQ(order.size(), 2u);
    EXPECT_EQ(order[0], 1u);  // "a"
    g.sort_topologically();
    EXPECT_EQ(g.nodes()[0].name, "a");
    EXPECT_NO_THROW(g.validate());
}

TEST(GraphIr, CycleIsReportedWithNodeName) {
    Graph g = chain();
    g.nodes()[1].inputs = {"y"};  // a reads b's output, b reads a's output
    try {
        g.validate();
        FAIL() << "no error";
    } catch (const GraphError& e) {
        EXPECT_NE(std::string(e.what()).find("cycle"), std::string::npos) << e.what();
    }
}

TEST(GraphIr, DanglingInputIsReported) {
    Graph g = chain();
    g.nodes()[1].inputs = {"nowhere"};
    try {
        g.validate();
        FAIL() << "no error";
    } catch (const GraphError& e) {
        EXPECT_NE(std::string(e.what()).find("'nowhere'"), std::string::npos) << e.what();
    }
}

TEST(GraphIr, DuplicateProducerIsReported) {
    Graph g = chain();
    g.add_node(make("c", "Relu", {"x"}, {"t"}));
    EXPECT_THROW(g.validate(), GraphError);
}

TEST(GraphIr, DeadNodesAreRemoved) {
    Graph g = chain();
    g.add_node(make("dead", "Relu", {"x"}, {"unused"}));
    g.get_or_add_value("unused");
    g.remove_dead_nodes();
    EXPECT_EQ(g.nodes().size(), 2u);
    EXPECT_EQ(g.find_value("unused"), nullptr);
}

TEST(GraphIr, ShapeInferenceAndDumpAreDeterministic) {
    Graph g = chain();
    drv::ir::infer_shapes(g);
    EXPECT_EQ(g.value("y").shape, (std::vector<int64_t>{1, 4}));
    Graph h = chain();
    drv::ir::infer_shapes(h);
    EXPECT_EQ(g.dump(), h.dump());
}

TEST(GraphIr, BroadcastRejectsIncompatibleShapes) {
    EXPECT_EQ(drv::ir::broadcast_shapes({2, 1, 3}, {4, 1}, "t"), (std::vector<int64_t>{2, 4, 3}));
    EXPECT_THROW(drv::ir::broadcast_shapes({2, 3}, {4}, "t"), GraphError);
}

// ONNX auto_pad as explicit pads (the ONNX operator docs' definition: SAME pads to out =
// ceil(in / stride), total = max(0, (out - 1) stride + (k - 1) d + 1 - in), SAME_UPPER puts the odd
// one at the end, SAME_LOWER at the beginning), hand-computed here; then the reference operator
// library gives the same output for both forms of each node.
TEST(GraphIr, AutoPadWrittenAsExplicitPads) {
    struct Case {
        const char* op;
        const char* mode;
        int64_t in_h, in_w, k, stride, dilation;
        std::vector<int64_t> pads;  ///< hand-computed [top, left, bottom, right]
    };
    const std::vector<Case> cases = {
        {"Conv", "SAME_UPPER", 8, 8, 3, 2, 1, {0, 0, 1, 1}},   // out 4: total (3*2 + 3 - 8) = 1
        {"Conv", "SAME_LOWER", 8, 8, 3, 2, 1, {1, 1, 0, 0}},
        {"Conv", "SAME_UPPER", 7, 9, 3, 1, 2, {2, 2, 2, 2}},   // span 5, stride 1: total 4
        {"Conv", "SAME_UPPER", 9, 9, 1, 2, 1, {0, 0, 0, 0}},   // 1x1 stride 2: total max(0, 8 + 1 - 9) = 0
        {"Conv", "VALID", 8, 8, 3, 2, 1, {0, 0, 0, 0}},
        {"MaxPool", "SAME_UPPER", 7, 7, 3, 2, 1, {1, 1, 1, 1}},  // out 4: total 6 + 3 - 7 = 2
        {"AveragePool", "SAME_LOWER", 6, 6, 2, 2, 1, {0, 0, 0, 0}},
        {"AveragePool", "SAME_LOWER", 5, 6, 2, 2, 1, {1, 0, 0, 0}},  // H: out 3, total 4 + 2 - 5 = 1
    };
    for (const Case& k : cases) {
        Graph g;
        Value x;
        x.name = "x";
        x.shape = {1, 2, k.in_h, k.in_w};
        x.shape_known = true;
        g.add_value(x);
        g.inputs().push_back("x");
        Node n = make("n", k.op, {"x"}, {"y"});
        n.attrs.set("auto_pad", std::string(k.mode));
        n.attrs.set("strides", std::vector<int64_t>{k.stride, k.stride});
        if (std::string(k.op) == "Conv") {
            Value w;
            w.name = "w";
            w.shape = {3, 2, k.k, k.k};
            w.shape_known = true;
            num::Tensor wt(num::DType::F32, w.shape);
            for (size_t i = 0; i < wt.numel(); ++i) wt.data<float>()[i] = 0.1f * static_cast<float>(i % 7) - 0.3f;
            w.data = wt;
            g.add_value(w);
            n.inputs.push_back("w");
            n.attrs.set("dilations", std::vector<int64_t>{k.dilation, k.dilation});
        } else {
            n.attrs.set("kernel_shape", std::vector<int64_t>{k.k, k.k});
        }
        g.add_node(n);
        g.outputs().push_back("y");
        drv::ir::infer_shapes(g);
        Node e = g.nodes()[0];
        ASSERT_TRUE(drv::ir::make_pads_explicit(g, e)) << k.op << " " << k.mode;
        EXPECT_EQ(drv::ir::attr_ints(e.attrs, "pads", {}), k.pads) << k.op << " " << k.mode << " " << k.in_h;
        EXPECT_EQ(drv::ir::attr_string(e.attrs, "auto_pad", ""), "NOTSET");
        EXPECT_FALSE(drv::ir::make_pads_explicit(g, e)) << "a second call finds nothing to do";
        // The reference operator library: the same values for the two forms.
        num::Tensor xt(num::DType::F32, x.shape);
        for (size_t i = 0; i < xt.numel(); ++i) xt.data<float>()[i] = static_cast<float>((i * 37) % 11) - 5.f;
        std::vector<const num::Tensor*> ins{&xt};
        if (std::string(k.op) == "Conv") ins.push_back(&*g.value("w").data);
        const num::Tensor a = num::run_op(k.op, g.nodes()[0].attrs, ins)[0], b = num::run_op(k.op, e.attrs, ins)[0];
        ASSERT_EQ(a.shape(), b.shape()) << k.op << " " << k.mode;
        EXPECT_EQ(a.shape(), g.value("y").shape);
        for (size_t i = 0; i < a.numel(); ++i) ASSERT_EQ(a.data<float>()[i], b.data<float>()[i]) << k.op << " " << i;
    }
}
