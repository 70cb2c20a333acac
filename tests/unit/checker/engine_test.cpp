// SPDX-License-Identifier: MIT
// Rule-engine behaviour on synthetic specs: target restrictions, fused chains, broadcast masks,
// dynamic-shape errors, deterministic output.
#include "check_test_util.h"

namespace drv::check::testing {
namespace {

PlatformSpec synthetic(const std::string& ops_json, const std::string& top = "") {
    return SpecDb::parse(R"({"schema_version": 1, "platform": "S", "toolchain": "T", "seed": "000_x.txt",)" + top +
                             R"( "ops": )" + ops_json + "}",
                         "synthetic.json");
}

ir::Graph relu_graph(Ints shape) {
    G g;
    g.opset(13).in("x", shape).val("y", shape).node("Relu", "n", {"x"}, {"y"}).out("y");
    return std::move(g.graph());
}

TEST(Engine, TargetRestriction) {
    std::string ops = R"([{"name": "Relu", "heading": "h", "match": [{"op_type": "Relu"}],
        "rules": [{"kind": "target", "targets": ["riscv_micro"], "message": "RISCV Micro only"}]}])";
    PlatformSpec x86 = synthetic(ops, R"( "targets": ["x86"],)");
    PlatformSpec rv = synthetic(ops, R"( "targets": ["riscv_micro"],)");
    ir::Graph g = relu_graph({1, 4});
    EXPECT_EQ(check_graph(g, rv).nodes[0].verdict, Verdict::Target);
    CheckResult r = check_graph(g, x86);
    EXPECT_EQ(r.nodes[0].verdict, Verdict::Unsupported);
    EXPECT_NE(r.nodes[0].violations.at(0).text.find("only on targets {riscv_micro}"), std::string::npos);
}

TEST(Engine, DynamicShapeIsAClearError) {
    ir::Graph g = relu_graph({1, ir::kUnknownDim, 4, 4});
    try {
        check_graph(g, platform("RK3588"));
        FAIL() << "expected CheckError";
    } catch (const CheckError& e) {
        std::string m = e.what();
        EXPECT_NE(m.find("tensor 'x' has a dynamic shape"), std::string::npos) << m;
        EXPECT_NE(m.find("needs static shapes"), std::string::npos) << m;
    }
}

TEST(Engine, FusedChainOnlyWhenSoleConsumer) {
    // Conv -> Relu, and the conv output also feeds a graph output: no fusion (Relu checked alone).
    G g;
    g.opset(13).in("x", {1, 4, 8, 8}).cst("W", {4, 4, 3, 3}).val("y", {1, 4, 6, 6}).val("z", {1, 4, 6, 6});
    g.node("Conv", "conv", {"x", "W"}, {"y"}).node("Relu", "relu", {"y"}, {"z"}).out("y").out("z");
    CheckResult r = check_graph(g.graph(), platform("RK3588"));
    EXPECT_EQ(r.nodes[0].spec_op, "Convolution");
    EXPECT_EQ(r.nodes[1].verdict, Verdict::Target);
    EXPECT_EQ(r.nodes[1].spec_op, "Relu");
}

TEST(Engine, BroadcastScalarAndNone) {
    std::string ops = R"([{"name": "Add", "heading": "h", "match": [{"op_type": "Add"}],
        "rules": [{"kind": "broadcast", "tensor": "in*", "patterns": ["scalar"], "message": "scalar only"}]}])";
    PlatformSpec p = synthetic(ops);
    auto mk = [](Ints b) {
        G g;
        g.opset(13).in("a", {1, 4, 2, 2}).in("b", b).val("y", {1, 4, 2, 2}).node("Add", "n", {"a", "b"}, {"y"}).out("y");
        return std::move(g.graph());
    };
    ir::Graph same = mk({1, 4, 2, 2}), scalar = mk({1}), chan = mk({1, 4, 1, 1});
    EXPECT_EQ(check_graph(same, p).nodes[0].verdict, Verdict::Target);
    EXPECT_EQ(check_graph(scalar, p).nodes[0].verdict, Verdict::Target);
    CheckResult r = check_graph(chan, p);
    EXPECT_EQ(r.nodes[0].verdict, Verdict::Unsupported);
    EXPECT_NE(r.nodes[0].violations.at(0).text.find("as 'bc11'"), std::string::npos);
}

TEST(Engine, DeterministicAcrossRuns) {
    G g;
    g.opset(13).in("x", {1, 4, 8, 8}).cst("W", {4, 4, 33, 33}).val("y", {1, 4, 1, 1});
    g.node("Conv", "conv", {"x", "W"}, {"y"}, attrs({{"pads", Ints{13, 13, 13, 13}}})).out("y");
    CheckResult a = check_graph(g.graph(), platform("RK3588")), b = check_graph(g.graph(), platform("RK3588"));
    ASSERT_EQ(a.nodes[0].violations.size(), b.nodes[0].violations.size());
    for (size_t i = 0; i < a.nodes[0].violations.size(); ++i)
        EXPECT_EQ(a.nodes[0].violations[i].text, b.nodes[0].violations[i].text);
}

}  // namespace
}  // namespace drv::check::testing
