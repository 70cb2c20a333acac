// SPDX-License-Identifier: MIT
// The vendor compiler's rewrites before its operator checks (check::check_model, issue 13): each
// rewrite named on the nodes it touches and the verdict of the rewritten graph, on RK3588. Graphs are
// written as exporters write them (torch.onnx SiLU = Sigmoid * Mul, HardSwish = x * Clip(x+3,0,6)/6,
// GELU = 0.5 * x * (1 + Erf(x / sqrt 2)), nn.Linear = Gemm(transB=1), torch.flatten = Flatten).
#include "check_test_util.h"

namespace drv::check::testing {
namespace {

using num::DType;

const NodeResult& node(const CheckResult& r, const std::string& name) {
    for (const auto& n : r.nodes)
        if (n.node == name) return n;
    throw std::runtime_error("test: no node " + name);
}

bool rewritten(const NodeResult& n, const std::string& what) {
    for (const auto& w : n.rewrites)
        if (w.find(what) != std::string::npos) return true;
    return false;
}

CheckResult check(G& g) { return check_model(g.graph(), platform("RK3588")); }

// RKNN runs a fully connected layer as a 1x1 convolution: Gemm is not in the RK3588 table, the
// rewritten Conv is. A Gemm whose B is not constant stays a Gemm (CPU).
TEST(VendorView, GemmWithConstantBIsA1x1Conv) {
    G g;
    g.opset(13).in("x", {1, 64}).cst("w", {10, 64}).cst("b", {10}).val("y", {1, 10});
    g.node("Gemm", "fc", {"x", "w", "b"}, {"y"}, attrs({{"transB", int64_t{1}}})).out("y");
    const CheckResult res = check(g);
    const NodeResult& r = node(res, "fc");
    EXPECT_EQ(r.verdict, Verdict::Target) << describe(r);
    EXPECT_EQ(r.spec_op, "Convolution");
    EXPECT_TRUE(rewritten(r, "Gemm with constant B -> 1x1 Conv"));
    G h;
    h.opset(13).in("x", {1, 64}).in("w", {10, 64}).val("y", {1, 10});
    h.node("Gemm", "fc", {"x", "w"}, {"y"}, attrs({{"transB", int64_t{1}}})).out("y");
    EXPECT_EQ(node(check(h), "fc").verdict, Verdict::CpuFallback);
}

// nn.Linear -> ReLU / Hardswish -> nn.Linear (a classifier head, torchvision MobileNetV3's): the
// activation reads the converted conv's [1, M, 1, 1] output, so a Relu fuses (ConvolutionRelu) and a
// HardSwish is checked on 4-D, not refused by the rank-4 rule on the [1, M] tensor of the ONNX graph.
TEST(VendorView, ActivationAfterGemmReadsTheConvOutput) {
    G g;
    g.opset(14).in("x", {1, 64}).cst("w1", {32, 64}).cst("b1", {32}).val("h", {1, 32}).val("r", {1, 32});
    g.cst("w2", {16, 32}).cst("b2", {16}).val("k", {1, 16}).val("y", {1, 16});
    g.node("Gemm", "fc1", {"x", "w1", "b1"}, {"h"}, attrs({{"transB", int64_t{1}}}));
    g.node("Relu", "relu", {"h"}, {"r"});
    g.node("Gemm", "fc2", {"r", "w2", "b2"}, {"k"}, attrs({{"transB", int64_t{1}}}));
    g.node("HardSwish", "hswish", {"k"}, {"y"}).out("y");
    const CheckResult r = check(g);
    EXPECT_EQ(node(r, "fc1").spec_op, "ConvolutionRelu") << describe(node(r, "fc1"));
    EXPECT_EQ(node(r, "relu").verdict, Verdict::Fused) << describe(node(r, "relu"));
    EXPECT_NE(node(r, "hswish").verdict, Verdict::CpuFallback) << describe(node(r, "hswish"));
}

// Flatten is checked as the Reshape RKNN turns it into; Identity disappears.
TEST(VendorView, FlattenAsReshapeIdentityRemoved) {
    G g;
    g.opset(13).in("x", {1, 8, 2, 2}).val("i", {1, 8, 2, 2}).val("y", {1, 32});
    g.node("Identity", "id", {"x"}, {"i"}).node("Flatten", "flat", {"i"}, {"y"}).out("y");
    const CheckResult r = check(g);
    EXPECT_EQ(node(r, "flat").spec_op, "Reshape");
    EXPECT_EQ(node(r, "flat").verdict, Verdict::Target) << describe(node(r, "flat"));
    EXPECT_TRUE(rewritten(node(r, "flat"), "Flatten -> Reshape"));
    EXPECT_EQ(node(r, "id").verdict, Verdict::Fused);
    EXPECT_TRUE(rewritten(node(r, "id"), "Identity removed"));
}

// torch.onnx exports SiLU as Sigmoid and Mul; after a Conv the pair is RKNN's ConvolutionSwish.
TEST(VendorView, SiluAfterConvIsConvolutionSwish) {
    G g;
    g.opset(13).in("x", {1, 8, 8, 8}).cst("w", {8, 8, 3, 3}).val("c", {1, 8, 8, 8}).val("s", {1, 8, 8, 8});
    g.val("y", {1, 8, 8, 8});
    g.node("Conv", "conv", {"x", "w"}, {"c"}, attrs({{"pads", Ints{1, 1, 1, 1}}, {"kernel_shape", Ints{3, 3}}}));
    g.node("Sigmoid", "sig", {"c"}, {"s"}).node("Mul", "mul", {"c", "s"}, {"y"}).out("y");
    const CheckResult r = check(g);
    EXPECT_EQ(node(r, "conv").spec_op, "ConvolutionSwish") << describe(node(r, "conv"));
    EXPECT_EQ(node(r, "mul").verdict, Verdict::Fused);
    EXPECT_TRUE(rewritten(node(r, "sig"), "exSwish"));
    EXPECT_TRUE(rewritten(node(r, "mul"), "exSwish"));
}

// x * Clip(x + 3, 0, 6) / 6 is HardSwish (torchvision MobileNetV3 before opset 14).
TEST(VendorView, DecomposedHardSwish) {
    G g;
    g.opset(13).in("x", {1, 8, 4, 4}).cst("three", {}, DType::F32, {3}).cst("zero", {}, DType::F32, {0});
    g.cst("six", {}, DType::F32, {6}).val("a", {1, 8, 4, 4}).val("c", {1, 8, 4, 4}).val("m", {1, 8, 4, 4});
    g.val("y", {1, 8, 4, 4});
    g.node("Add", "add3", {"x", "three"}, {"a"}).node("Clip", "relu6", {"a", "zero", "six"}, {"c"});
    g.node("Mul", "mul", {"x", "c"}, {"m"}).node("Div", "div6", {"m", "six"}, {"y"}).out("y");
    const CheckResult r = check(g);
    EXPECT_EQ(node(r, "div6").spec_op, "HardSwish") << describe(node(r, "div6"));
    EXPECT_EQ(node(r, "div6").verdict, Verdict::Target);
    for (const char* n : {"add3", "relu6", "mul"}) {
        EXPECT_EQ(node(r, n).verdict, Verdict::Fused) << n;
        EXPECT_TRUE(rewritten(node(r, n), "HardSwish")) << n;
    }
}

// nn.GELU() exported: Div(x, 1.4142) -> Erf -> Add 1 -> Mul x -> Mul 0.5 is exGelu.
TEST(VendorView, DecomposedGelu) {
    G g;
    g.opset(13).in("x", {1, 8, 4, 4}).cst("r2", {}, DType::F32, {1.4142135}).cst("one", {}, DType::F32, {1});
    g.cst("half", {}, DType::F32, {0.5});
    for (const char* v : {"d", "e", "a", "m", "y"}) g.val(v, {1, 8, 4, 4});
    g.node("Div", "div", {"x", "r2"}, {"d"}).node("Erf", "erf", {"d"}, {"e"}).node("Add", "add", {"e", "one"}, {"a"});
    g.node("Mul", "mul", {"x", "a"}, {"m"}).node("Mul", "half", {"m", "half"}, {"y"}).out("y");
    const CheckResult r = check(g);
    EXPECT_EQ(node(r, "half").spec_op, "exGelu") << describe(node(r, "half"));
    EXPECT_EQ(node(r, "erf").verdict, Verdict::Fused);
}

// BatchNormalization right after a Conv is folded into it; a Div by a constant is a Mul; a scalar
// Add after a Conv folds into its bias, one after anything else runs as a per-tensor affine.
TEST(VendorView, BatchNormDivAndScalarFolds) {
    G g;
    g.opset(13).in("x", {1, 8, 4, 4}).cst("w", {8, 8, 1, 1});
    for (const char* p : {"s", "b", "m", "v"}) g.cst(p, {8});
    g.cst("two", {}, DType::F32, {2}).cst("k", {}, DType::F32, {0.5});
    for (const char* v : {"c", "n", "d", "e", "f", "y"}) g.val(v, {1, 8, 4, 4});
    g.node("Conv", "conv", {"x", "w"}, {"c"}, attrs({{"kernel_shape", Ints{1, 1}}}));
    g.node("BatchNormalization", "bn", {"c", "s", "b", "m", "v"}, {"n"});
    g.node("Div", "div", {"n", "two"}, {"d"}).node("Relu", "relu", {"d"}, {"e"});
    g.node("Add", "addk", {"e", "k"}, {"y"}).out("y");
    const CheckResult r = check(g);
    EXPECT_EQ(node(r, "bn").verdict, Verdict::Fused);
    EXPECT_TRUE(rewritten(node(r, "bn"), "BatchNormalization folded into Conv"));
    EXPECT_TRUE(rewritten(node(r, "div"), "Div by a constant -> Mul"));
    EXPECT_EQ(node(r, "div").verdict, Verdict::Fused);  // scalar Mul after the Conv: folded into it
    EXPECT_TRUE(rewritten(node(r, "div"), "folded into Conv"));
    EXPECT_EQ(node(r, "addk").spec_op, "BatchNormalization") << describe(node(r, "addk"));
    EXPECT_EQ(node(r, "addk").verdict, Verdict::Target);
}

// uint8 QDQ activations: the NPU stores them as int8 (zero point - 128), so the int8 rules pass
// (check_graph on the raw graph says "uint8 not in {int8, float16}").
TEST(VendorView, Uint8QdqActivationsAreInt8ForRknn) {
    G g;
    g.opset(13).in("x", {1, 8, 8, 8}, DType::U8).quant("x", 1).cst("w", {8, 8, 3, 3}, DType::I8).quant("w", 8);
    g.val("y", {1, 8, 8, 8}, DType::U8).quant("y", 1);
    g.cst("xs", {}, DType::F32, {0.1}).cst("xz", {}, DType::I8, {0}).cst("ws", {8}).cst("wz", {8}, DType::I8);
    g.cst("ys", {}, DType::F32, {0.1}).cst("yz", {}, DType::I8, {0});
    g.node("QLinearConv", "conv", {"x", "xs", "xz", "w", "ws", "wz", "ys", "yz"}, {"y"},
           attrs({{"pads", Ints{1, 1, 1, 1}}, {"kernel_shape", Ints{3, 3}}}))
        .out("y");
    EXPECT_EQ(node(check(g), "conv").verdict, Verdict::Target) << describe(node(check(g), "conv"));
    EXPECT_EQ(check_graph(g.graph(), platform("RK3588")).nodes[0].verdict, Verdict::CpuFallback);
}

}  // namespace
}  // namespace drv::check::testing
