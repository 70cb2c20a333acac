// SPDX-License-Identifier: MIT
// Host cost inputs of CPU-fallback nodes (sim/app/model_run.h host_node_cost) on t_qlinear, against
// hand-counted work: QuantizeLinear 1x2x6x6, QLinearConv 2->4 channels 3x3 on 6x6, QLinearAdd,
// DequantizeLinear 1x4x6x6.
#include <filesystem>

#include <gtest/gtest.h>

#include "app/model_run.h"
#include "compiler/model_loader.h"

namespace {

TEST(ModelRunHostCost, HandCountedWork) {
    const std::string path = std::string(NPUSIM_TEST_ZOO_DIR) + "/t_qlinear.onnx";
    if (!std::filesystem::exists(path)) GTEST_SKIP() << "zoo not generated (" << path << ")";
    const drv::ir::Graph g = drv::importer::load_model(path);
    ASSERT_EQ(g.nodes().size(), 4u);
    auto cost = [&](const std::string& op) {
        for (const auto& n : g.nodes())
            if (n.op_type == op) return sim::host_node_cost(g, n);
        ADD_FAILURE() << "no " << op;
        return sim::HostCost{};
    };
    // QuantizeLinear: 72 floats in (288 B), 72 int8 out; multiply + round per element.
    const sim::HostCost q = cost("QuantizeLinear");
    EXPECT_EQ(q.bytes, 72u * 4 + 72u);
    EXPECT_EQ(q.flops, 2u * 72);
    EXPECT_EQ(q.macs, 0u);
    // QLinearConv: 144 outputs x (2 channels x 3 x 3) int8 MACs; 72 B in, 144 B out.
    const sim::HostCost c = cost("QLinearConv");
    EXPECT_EQ(c.macs, 144u * 18);
    EXPECT_EQ(c.inner_products, 2592u);  // the importer's MAC count for the model
    EXPECT_EQ(c.flops, 0u);
    EXPECT_EQ(c.bytes, 72u + 144u);
    // QLinearAdd with the same tensor twice: 2 x 144 B in, 144 B out, no inner products.
    const sim::HostCost a = cost("QLinearAdd");
    EXPECT_EQ(a.bytes, 3u * 144);
    EXPECT_EQ(a.macs + a.inner_products, 0u);
    // DequantizeLinear: 144 int8 in, 144 floats out.
    const sim::HostCost d = cost("DequantizeLinear");
    EXPECT_EQ(d.bytes, 144u + 144u * 4);
    EXPECT_EQ(d.flops, 2u * 144);
}

}  // namespace
