// SPDX-License-Identifier: MIT
// MindSpore Lite Enterprise Micro v106 boundary pairs (seed 000, HiSpark ws63/3066H). There is no
// NPU: a supported node runs as a Micro CPU kernel ("MCU"); anything else is unsupported. Limits are
// quoted from the seed text (line numbers of 000_56048b4cdc8af632.txt).
#include "check_test_util.h"

namespace drv::check::testing {
namespace {

void pair(const std::string& pid, ir::Graph gi, ir::Graph go, const std::string& text) {
    NodeResult ri = check_node(gi, pid, "n"), ro = check_node(go, pid, "n");
    EXPECT_TRUE(passes(ri)) << describe(ri);
    EXPECT_EQ(ri.verdict, Verdict::Target) << describe(ri);
    EXPECT_EQ(ro.verdict, Verdict::Unsupported) << describe(ro);
    if (!text.empty()) {
        EXPECT_TRUE(violates(ro, text)) << describe(ro);
    }
}
void pair(ir::Graph gi, ir::Graph go, const std::string& text) { pair("ws63", std::move(gi), std::move(go), text); }

ir::Graph unary(const std::string& op, Ints in, Ints out, num::Attributes a = {}, int64_t opset = 13,
                const std::string& domain = "") {
    G g;
    g.opset(opset).in("x", in).val("y", out).node(op, "n", {"x"}, {"y"}, std::move(a), domain).out("y");
    return std::move(g.graph());
}

ir::Graph conv(int64_t group, bool w_const = true, const char* auto_pad = "NOTSET") {
    G g;
    g.opset(13).in("x", {1, 8, 8, 8});
    if (w_const) g.cst("W", {8, 8 / group, 3, 3});
    else g.in("W", {8, 8 / group, 3, 3});
    g.cst("B", {8}).val("y", {1, 8, 6, 6});
    g.node("Conv", "n", {"x", "W", "B"}, {"y"}, attrs({{"group", group}, {"auto_pad", std::string(auto_pad)}})).out("y");
    return std::move(g.graph());
}
// line 5697 ONNX Conv, group: "规格约束：仅支持输入为1的情况", re-read with the entry's FP32 training row
// (depthwise-equivalent, group = in = out channels, is trained and so must run): group 2 of 8 channels
// is neither (issue 21; the depthwise pair is in mslite_reread_test.cpp).
TEST(MsliteBoundary, OnnxConvGroup1vs2) { pair(conv(1), conv(2), "depthwise-equivalent"); }
// line 5697 ONNX Conv, auto_pad: "规格约束：仅支持NOTSET"
TEST(MsliteBoundary, OnnxConvAutoPadNotset) { pair(conv(1), conv(1, true, "SAME_UPPER"), "auto_pad = SAME_UPPER"); }
// line 5697 ONNX Conv, W: "规格约束：权重为离线常量"
TEST(MsliteBoundary, OnnxConvWeightsOffline) { pair(conv(1), conv(1, false), "input 1 'W' is not an offline constant"); }
// same on 3066H (no training, same inference tables)
TEST(MsliteBoundary, OnnxConvGroupOn3066H) { pair("3066H", conv(1), conv(4), "depthwise-equivalent"); }

ir::Graph gemm(float alpha, float beta, Ints a = {2, 16}) {
    G g;
    Ints out = a;
    out.back() = 4;
    g.opset(13).in("a", a).cst("b", {16, 4}).cst("c", {4}).val("y", out);
    g.node("Gemm", "n", {"a", "b", "c"}, {"y"}, attrs({{"alpha", alpha}, {"beta", beta}})).out("y");
    return std::move(g.graph());
}
// line 6139 ONNX Gemm, alpha: "规格约束：仅支持1.0"
TEST(MsliteBoundary, OnnxGemmAlpha) { pair(gemm(1.0f, 0.0f), gemm(0.5f, 0.0f), "alpha = 0.5 not in {1}"); }
// line 6139 ONNX Gemm, beta: "规格约束：仅支持0.0", yet C is documented as the 1-D bias and the FP32
// training row needs "bias count = output channels": read as beta 1 with a bias, 0 without (issue 21).
TEST(MsliteBoundary, OnnxGemmBeta) {
    pair(gemm(1.0f, 1.0f), gemm(1.0f, 0.5f), "beta = 0.5 not in {0, 1}");
    pair(gemm(1.0f, 0.0f), gemm(1.0f, 2.0f), "beta = 2 not in {0, 1}");
}
// line 6139 ONNX Gemm, A: "维度为2D"
TEST(MsliteBoundary, OnnxGemmRank2vs3) { pair(gemm(1.0f, 0.0f), gemm(1.0f, 0.0f, {1, 2, 16}), "rank of input 0 'a' = 3"); }

ir::Graph maxpool(int64_t storage, int64_t dil) {
    return unary("MaxPool", {1, 4, 8, 8}, {1, 4, 7, 7},
                 attrs({{"kernel_shape", Ints{2, 2}}, {"storage_order", storage}, {"dilations", Ints{dil, dil}}}));
}
// line 6007 ONNX MaxPool: storage_order "规格约束：仅支持0"
TEST(MsliteBoundary, OnnxMaxPoolStorageOrder) { pair(maxpool(0, 1), maxpool(1, 1), "storage_order = 1 not in {0}"); }
// line 6007 ONNX MaxPool: dilations "规格约束：仅支持1"
TEST(MsliteBoundary, OnnxMaxPoolDilations) { pair(maxpool(0, 1), maxpool(0, 2), "dilations[0] = 2 not in {1}"); }
// line 6597 ONNX Reshape, allowzero: "仅支持0"
TEST(MsliteBoundary, OnnxReshapeAllowzero) {
    auto mk = [](int64_t az) {
        G g;
        g.opset(14).in("x", {2, 8}).cst("s", {2}, num::DType::I64, {4, 4}).val("y", {4, 4});
        g.node("Reshape", "n", {"x", "s"}, {"y"}, attrs({{"allowzero", az}})).out("y");
        return std::move(g.graph());
    };
    pair(mk(0), mk(1), "allowzero = 1 not in {0}");
}
// line 6383 ONNX Relu: "输入张量，维度为2D/3D/4D"
TEST(MsliteBoundary, OnnxReluRank4vs5) {
    pair(unary("Relu", {1, 2, 3, 4}, {1, 2, 3, 4}), unary("Relu", {1, 2, 3, 4, 5}, {1, 2, 3, 4, 5}), "rank of input 0 'x' = 5");
}
// line 6383 ONNX Relu: 2D is the lower end, 1D is outside
TEST(MsliteBoundary, OnnxReluRank2vs1) { pair(unary("Relu", {2, 3}, {2, 3}), unary("Relu", {6}, {6}), "rank of input 0 'x' = 1"); }
// line 7203 ONNX InstanceNormalization: "输入张量，维度为3D，格式为NCW"
TEST(MsliteBoundary, OnnxInstanceNormRank3vs4) {
    auto mk = [](Ints s) {
        G g;
        g.opset(13).in("x", s).cst("sc", {s[1]}).cst("b", {s[1]}).val("y", s);
        g.node("InstanceNormalization", "n", {"x", "sc", "b"}, {"y"}).out("y");
        return std::move(g.graph());
    };
    pair(mk({1, 4, 8}), mk({1, 4, 8, 8}), "rank of input 0 'x' = 4");
}
// line 7537 ONNX Pad: mode in {constant, reflect, edge}
TEST(MsliteBoundary, OnnxPadReflectVsWrap) {
    auto mk = [](const char* mode) {
        G g;
        g.opset(19).in("x", {1, 2, 4, 4}).cst("p", {8}, num::DType::I64, {0, 0, 1, 1, 0, 0, 1, 1}).val("y", {1, 2, 6, 6});
        g.node("Pad", "n", {"x", "p"}, {"y"}, attrs({{"mode", std::string(mode)}})).out("y");
        return std::move(g.graph());
    };
    pair(mk("reflect"), mk("wrap"), "mode = wrap not in");
}
// line 8567 ONNX LpNormalization, p: "规格约束：只支持取值1或2"
TEST(MsliteBoundary, OnnxLpNormP2vs3) {
    pair(unary("LpNormalization", {2, 8}, {2, 8}, attrs({{"p", int64_t{2}}})),
         unary("LpNormalization", {2, 8}, {2, 8}, attrs({{"p", int64_t{3}}})), "p = 3 not in {1, 2}");
}
// line 9807 ONNX Cast, to: "规格约束：取值仅支持FLOAT、UINT8、INT8、INT32" (INT8 = 3, FLOAT16 = 10)
TEST(MsliteBoundary, OnnxCastToInt8vsFloat16) {
    pair(unary("Cast", {2, 8}, {2, 8}, attrs({{"to", int64_t{3}}})), unary("Cast", {2, 8}, {2, 8}, attrs({{"to", int64_t{10}}})),
         "to = 10 not in");
}

ir::Graph binop(const std::string& op, int64_t opset, Ints a = {2, 8}, Ints b = {2, 8}, Ints y = {2, 8},
                num::DType dt = num::DType::F32) {
    G g;
    g.opset(opset).in("a", a, dt).in("b", b, dt).val("y", y, dt).node(op, "n", {"a", "b"}, {"y"}).out("y");
    return std::move(g.graph());
}
// line 9153 ONNX BitShift: ONNX opset >= 18 (seed-000 extraction, reading aid §1.4 item 10)
TEST(MsliteBoundary, OnnxBitShiftOpset18vs17) { pair(binop("BitShift", 18, {2, 8}, {2, 8}, {2, 8}, num::DType::U8),
                                                          binop("BitShift", 17, {2, 8}, {2, 8}, {2, 8}, num::DType::U8), "opset = 17"); }
// line 9505 ONNX ReduceSumSquare: ONNX opset >= 18
TEST(MsliteBoundary, OnnxReduceSumSquareOpset18vs17) {
    pair(unary("ReduceSumSquare", {2, 8}, {2, 1}, {}, 18), unary("ReduceSumSquare", {2, 8}, {2, 1}, {}, 17), "opset = 17");
}
// line 10213 ONNX Swish: "在ONNX Opset24以上才支持构造Swish算子"
TEST(MsliteBoundary, OnnxSwishOpset24vs23) {
    pair(unary("Swish", {1, 2, 4, 4}, {1, 2, 4, 4}, {}, 24), unary("Swish", {1, 2, 4, 4}, {1, 2, 4, 4}, {}, 23), "opset = 23");
}

ir::Graph scatter(const std::string& op, int64_t opset, const char* reduction = nullptr) {
    G g;
    g.opset(opset).in("x", {4, 4}).cst("i", {1, 4}, num::DType::I64).in("u", {1, 4}).val("y", {4, 4});
    num::Attributes a;
    if (reduction) a.set("reduction", std::string(reduction));
    g.node(op, "n", {"x", "i", "u"}, {"y"}, a).out("y");
    return std::move(g.graph());
}
// line 11841 ONNX Scatter: "适用于ONNX Opset 9和10；ONNX从Opset 11起已废弃Scatter"
TEST(MsliteBoundary, OnnxScatterOpset10vs11) { pair(scatter("Scatter", 10), scatter("Scatter", 11), "opset = 11"); }
// line 11915 ONNX ScatterElements: "支持ONNX Opset 11及以上版本"
TEST(MsliteBoundary, OnnxScatterElementsOpset11vs10) {
    pair(scatter("ScatterElements", 11), scatter("ScatterElements", 10), "opset = 10");
}
// line 11915 ONNX ScatterElements, reduction: "仅支持none；不支持add、mul、max和min"
TEST(MsliteBoundary, OnnxScatterElementsReduction) {
    pair(scatter("ScatterElements", 16, "none"), scatter("ScatterElements", 16, "add"), "reduction = add");
}
// line 11095 ONNX DepthToSpace: "规格约束：blocksize>=2"
TEST(MsliteBoundary, OnnxDepthToSpaceBlock2vs1) {
    pair(unary("DepthToSpace", {1, 8, 2, 2}, {1, 2, 4, 4}, attrs({{"blocksize", int64_t{2}}})),
         unary("DepthToSpace", {1, 8, 2, 2}, {1, 8, 2, 2}, attrs({{"blocksize", int64_t{1}}})), "blocksize = 1 outside [2, inf)");
}
// line 11095 ONNX DepthToSpace: mode in {DCR, CRD}
TEST(MsliteBoundary, OnnxDepthToSpaceMode) {
    pair(unary("DepthToSpace", {1, 8, 2, 2}, {1, 2, 4, 4}, attrs({{"blocksize", int64_t{2}}, {"mode", std::string("CRD")}})),
         unary("DepthToSpace", {1, 8, 2, 2}, {1, 2, 4, 4}, attrs({{"blocksize", int64_t{2}}, {"mode", std::string("XYZ")}})),
         "mode = XYZ");
}
// line 9577 ONNX ReduceMean, axes: "规格约束：离线常量 ... 不支持axis为空list"
TEST(MsliteBoundary, OnnxReduceMeanAxesOffline) {
    auto mk = [](bool cst) {
        G g;
        g.opset(18).in("x", {1, 4, 4, 4});
        if (cst) g.cst("ax", {1}, num::DType::I64, {1});
        else g.in("ax", {1}, num::DType::I64);
        g.val("y", {1, 1, 4, 4}).node("ReduceMean", "n", {"x", "ax"}, {"y"}).out("y");
        return std::move(g.graph());
    };
    pair(mk(true), mk(false), "input 1 'ax' is not an offline constant");
}
// line 9577 ONNX ReduceMean: "不支持axis为空list"
TEST(MsliteBoundary, OnnxReduceMeanEmptyAxes) {
    pair(unary("ReduceMean", {1, 4, 4, 4}, {1, 1, 4, 4}, attrs({{"axes", Ints{1}}})),
         unary("ReduceMean", {1, 4, 4, 4}, {1, 1, 1, 1}, attrs({{"axes", Ints{}}})), "empty axes list not supported");
}
// line 6259 ONNX Matmul: "说明： Matmul不支持广播场景。"
TEST(MsliteBoundary, OnnxMatMulNoBroadcast) {
    pair(binop("MatMul", 13, {2, 4, 8}, {2, 8, 4}, {2, 4, 4}), binop("MatMul", 13, {2, 4, 8}, {1, 8, 4}, {2, 4, 4}),
         "leading dims of A and B identical");
}
// line 13429 ONNX LogSoftmax: "输入张量，维度为1D～5D"
TEST(MsliteBoundary, OnnxLogSoftmaxRank5vs6) {
    pair(unary("LogSoftmax", {1, 2, 2, 2, 2}, {1, 2, 2, 2, 2}), unary("LogSoftmax", {1, 2, 2, 2, 2, 2}, {1, 2, 2, 2, 2, 2}),
         "rank of input 0 'x' = 6");
}
// line 13207 ONNX ThresholdedRelu: "维度为1D/2D/3D/4D"
TEST(MsliteBoundary, OnnxThresholdedReluRank4vs5) {
    pair(unary("ThresholdedRelu", {1, 2, 2, 2}, {1, 2, 2, 2}), unary("ThresholdedRelu", {1, 2, 2, 2, 2}, {1, 2, 2, 2, 2}),
         "rank of input 0 'x' = 5");
}
// line 10723 ONNX Dropout: "维度为 0D / 1D / 2D / 3D / 4D"
TEST(MsliteBoundary, OnnxDropoutRank4vs5) {
    pair(unary("Dropout", {1, 2, 2, 2}, {1, 2, 2, 2}), unary("Dropout", {1, 2, 2, 2, 2}, {1, 2, 2, 2, 2}), "rank of input 0 'x' = 5");
}
// line 53 TFLite Conv2D: fused_activation_function in {NONE, RELU}
TEST(MsliteBoundary, TfliteConv2DFusedReluVsRelu6) {
    auto mk = [](const char* act) {
        G g;
        g.in("x", {1, 8, 8, 4}).cst("w", {4, 3, 3, 4}).cst("b", {4}).val("y", {1, 6, 6, 4});
        g.node("Conv2D", "n", {"x", "w", "b"}, {"y"},
               attrs({{"fused_activation_function", std::string(act)}, {"padding", std::string("VALID")}}), "tflite");
        g.out("y");
        return std::move(g.graph());
    };
    pair(mk("RELU"), mk("RELU6"), "fused activation = RELU6 not in {NONE, RELU}");
}
// line 2551 TFLite L2Normalization: fused_activation_function in {NONE, RELU, RELU6}
TEST(MsliteBoundary, TfliteL2NormFusedRelu6VsTanh) {
    auto mk = [](const char* act) {
        return unary("L2Normalization", {1, 8}, {1, 8}, attrs({{"fused_activation_function", std::string(act)}}), 0,
                     "tflite");
    };
    pair(mk("RELU6"), mk("TANH"), "fused activation = TANH");
}
// Operators outside the seed 000 tables have no path on the MCU
TEST(MsliteBoundary, OpOutsideTableUnsupported) {
    ir::Graph g = unary("NonMaxSuppression", {1, 4, 4}, {1, 3});
    NodeResult r = check_node(g, "ws63", "n");
    EXPECT_EQ(r.verdict, Verdict::Unsupported) << describe(r);
}
// seed 000 preface: "当前端侧训练仅在ws63支持，3066H暂不支持端侧在线训练"
TEST(MsliteBoundary, TrainingTablesOnlyOnWs63) {
    const OpSpec* w = nullptr;
    const OpSpec* h = nullptr;
    for (const auto& o : platform("ws63").ops)
        if (o.name == "Conv" && o.framework == "onnx") w = &o;
    for (const auto& o : platform("3066H").ops)
        if (o.name == "Conv" && o.framework == "onnx") h = &o;
    ASSERT_TRUE(w && h);
    EXPECT_EQ(w->training.size(), 2u);  // QAS INT8 and FP32 rows
    EXPECT_TRUE(h->training.empty());
}

}  // namespace
}  // namespace drv::check::testing
