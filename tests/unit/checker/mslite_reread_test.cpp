// SPDX-License-Identifier: MIT
// Seed-000 rules re-read against the seed text (issue 21; drivers/compiler/checker/tools/specgen/gen_mslite.py
// REREAD): each pair is a configuration the text allows and one it refuses, the limit quoted from
// 000_56048b4cdc8af632.txt.
#include "check_test_util.h"

namespace drv::check::testing {
namespace {

void pair(ir::Graph gi, ir::Graph go, const std::string& text) {
    NodeResult ri = check_node(gi, "ws63", "n"), ro = check_node(go, "ws63", "n");
    EXPECT_EQ(ri.verdict, Verdict::Target) << describe(ri);
    EXPECT_EQ(ro.verdict, Verdict::Unsupported) << describe(ro);
    EXPECT_TRUE(violates(ro, text)) << describe(ro);
}

ir::Graph convt(num::Attributes a, Ints out = {1, 2, 9, 9}) {
    G g;
    g.opset(13).in("x", {1, 3, 5, 5}).cst("W", {3, 2, 3, 3}).cst("B", {2}).val("y", out);
    g.node("ConvTranspose", "n", {"x", "W", "B"}, {"y"}, std::move(a)).out("y");
    return std::move(g.graph());
}
// line ~13479: "output_padding ... 每个元素小于对应维度的stride"; stride 2 with output_padding 1 is the
// PyTorch ConvTranspose2d(stride=2, output_padding=1) export and is allowed.
TEST(MsliteReread, ConvTransposeOutputPaddingBelowStride) {
    pair(convt(attrs({{"strides", Ints{2, 2}}, {"output_padding", Ints{1, 1}}}), {1, 2, 12, 12}),
         convt(attrs({{"strides", Ints{1, 1}}, {"output_padding", Ints{1, 1}}}), {1, 2, 8, 8}), "smaller than the stride");
}
// "步长 >= 1、膨胀 >= 1": every stride, dilation 2 included.
TEST(MsliteReread, ConvTransposeStridesAndDilations) {
    pair(convt(attrs({{"strides", Ints{3, 2}}, {"dilations", Ints{2, 1}}}), {1, 2, 17, 11}),
         convt(attrs({{"strides", Ints{0, 2}}})), "each >= 1");
}
// "output_shape ... 不支持，解析阶段直接报错"; "非NOTSET时不支持同时配置pads".
TEST(MsliteReread, ConvTransposeOutputShapeAndPads) {
    pair(convt(attrs({{"pads", Ints{1, 1, 1, 1}}}), {1, 2, 5, 5}), convt(attrs({{"output_shape", Ints{9, 9}}})), "output_shape");
    pair(convt(attrs({{"auto_pad", std::string("SAME_UPPER")}}), {1, 2, 5, 5}),
         convt(attrs({{"auto_pad", std::string("SAME_UPPER")}, {"pads", Ints{1, 1, 1, 1}}}), {1, 2, 5, 5}), "pads not allowed");
}

// ONNX Conv group (line ~5697) read with the entry's FP32 training row: the depthwise-equivalent
// convolution (group = in = out channels, W [C, 1, kH, kW]) runs; a channel multiplier does not.
ir::Graph dwconv(Ints w) {
    G g;
    g.opset(13).in("x", {1, 8, 8, 8}).cst("W", w).cst("B", {w[0]}).val("y", {1, w[0], 6, 6});
    g.node("Conv", "n", {"x", "W", "B"}, {"y"}, attrs({{"group", int64_t(8)}})).out("y");
    return std::move(g.graph());
}
TEST(MsliteReread, OnnxConvDepthwiseEquivalent) { pair(dwconv({8, 1, 3, 3}), dwconv({16, 1, 3, 3}), "depthwise-equivalent"); }

// TFLite TRANSPOSE_CONV (line ~5593): inputs output_shape, filter, input, bias - the rules apply to
// the input (in2), not to output_shape (in0); "输出尺寸: SAME o = i*s; VALID o = (i-1)*s + k".
ir::Graph tconv(const char* pad, int64_t oh, num::DType dt = num::DType::F32) {
    G g;
    g.opset(13).cst("os", {4}, num::DType::I32, {1, double(oh), double(oh), 4}).cst("w", {4, 3, 3, 2}, dt).in("x", {1, 5, 5, 2}, dt).val("y", {1, oh, oh, 4}, dt);
    g.graph().set_opset("tflite", 3);
    g.node("TRANSPOSE_CONV", "n", {"os", "w", "x"}, {"y"}, attrs({{"padding", std::string(pad)}, {"stride_h", int64_t(2)}, {"stride_w", int64_t(2)}}), "tflite")
        .out("y");
    return std::move(g.graph());
}
TEST(MsliteReread, TfliteTransposeConvOutputSize) {
    pair(tconv("SAME", 10), tconv("SAME", 9), "output size");
    pair(tconv("VALID", 11), tconv("VALID", 10), "output size");
}

// TFLite SPLIT: inputs axis, value - the data type rule reads the value (in1).
TEST(MsliteReread, TfliteSplitChecksTheValueNotTheAxis) {
    G g;
    g.opset(13).cst("axis", {}, num::DType::I32, {1}).in("x", {1, 6, 4}).val("a", {1, 3, 4}).val("b", {1, 3, 4});
    g.graph().set_opset("tflite", 3);
    g.node("SPLIT", "n", {"axis", "x"}, {"a", "b"}, attrs({{"num_splits", int64_t(2)}}), "tflite").out("a").out("b");
    NodeResult r = check_node(g.graph(), "ws63", "n");
    EXPECT_EQ(r.verdict, Verdict::Target) << describe(r);
}

ir::Graph rnn(const std::string& op, int gates, num::Attributes a, bool lens = false, bool peep = false) {
    G g;
    const int64_t H = 4, D = a.get_string("direction", "forward") == "bidirectional" ? 2 : 1;
    g.opset(14).in("x", {6, 1, 3}).cst("W", {D, gates * H, 3}).cst("R", {D, gates * H, H}).cst("B", {D, 2 * gates * H});
    g.cst("lens", {1}, num::DType::I32, {6}).cst("P", {D, 3 * H}).val("y", {6, D, 1, H}).val("yh", {D, 1, H});
    std::vector<std::string> ins{"x", "W", "R", "B", lens ? "lens" : ""};
    if (peep) ins.insert(ins.end(), {"", "", "P"});
    g.node(op, "n", ins, {"y", "yh"}, std::move(a)).out("y").out("yh");
    return std::move(g.graph());
}
// line ~7275 LSTM: "sequence_lens和P不支持"; "activations, clip, direction (仅forward), input_forget, layout 不可配置".
TEST(MsliteReread, LstmSeedLimits) {
    pair(rnn("LSTM", 4, attrs({{"hidden_size", int64_t(4)}})), rnn("LSTM", 4, attrs({{"hidden_size", int64_t(4)}}), false, true), "peephole");
    pair(rnn("LSTM", 4, attrs({{"hidden_size", int64_t(4)}})), rnn("LSTM", 4, attrs({{"hidden_size", int64_t(4)}}), true), "sequence_lens");
    pair(rnn("LSTM", 4, attrs({{"hidden_size", int64_t(4)}})), rnn("LSTM", 4, attrs({{"hidden_size", int64_t(4)}, {"clip", 1.0f}})), "not configurable");
    pair(rnn("LSTM", 4, attrs({{"hidden_size", int64_t(4)}})),
         rnn("LSTM", 4, attrs({{"hidden_size", int64_t(4)}, {"direction", std::string("reverse")}})), "not configurable");
}
// line ~11205 GRU: directions forward/reverse/bidirectional allowed; activations not configurable.
TEST(MsliteReread, GruSeedLimits) {
    pair(rnn("GRU", 3, attrs({{"hidden_size", int64_t(4)}, {"direction", std::string("bidirectional")}, {"linear_before_reset", int64_t(1)}})),
         rnn("GRU", 3, attrs({{"hidden_size", int64_t(4)}, {"activations", std::vector<std::string>{"Relu", "Tanh"}}})), "not configurable");
    pair(rnn("GRU", 3, attrs({{"hidden_size", int64_t(4)}, {"direction", std::string("reverse")}})), rnn("GRU", 3, attrs({{"hidden_size", int64_t(4)}}), true),
         "sequence_lens");
}
// line ~13621 RNN: activations one per direction from the eleven listed; layout 0 only.
TEST(MsliteReread, RnnSeedLimits) {
    pair(rnn("RNN", 1, attrs({{"hidden_size", int64_t(4)}, {"activations", std::vector<std::string>{"Softplus"}}}), true),
         rnn("RNN", 1, attrs({{"hidden_size", int64_t(4)}, {"activations", std::vector<std::string>{"Gelu"}}})), "activations");
    pair(rnn("RNN", 1, attrs({{"hidden_size", int64_t(4)}, {"direction", std::string("bidirectional")}, {"activations", std::vector<std::string>{"Relu", "Tanh"}}})),
         rnn("RNN", 1, attrs({{"hidden_size", int64_t(4)}, {"layout", int64_t(1)}})), "layout");
}

}  // namespace
}  // namespace drv::check::testing
