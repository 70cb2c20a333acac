// SPDX-License-Identifier: MIT
// Graph IR: topological order, structural validation (cycles, dangling inputs, duplicate
// producers), dead-node removal and deterministic dumps.
#include <gtest/gtest.h>

#include "compiler/ir/graph.h"
#include "compiler/ir/shape_inference.h"

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
