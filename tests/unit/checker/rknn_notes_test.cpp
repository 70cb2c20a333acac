// SPDX-License-Identifier: MIT
// Seed 001 support notes that are now checked rules (issue 13), as boundary pairs on RK3588 (one
// case on RK3566): a value the note allows (NPU) and one it does not (CPU fallback naming the
// rule). The limits are quoted from the seed text (RK3588 section 3.2), independent of the DB.
#include "check_test_util.h"

namespace drv::check::testing {
namespace {

using num::DType;

/// Resize of a [1,c,h,w] float input to [1,c,oh,ow] with the given attributes.
ir::Graph resize(Ints in, Ints out, num::Attributes a = {}) {
    G g;
    g.opset(13).in("x", in).cst("roi", {0}).cst("scales", {4}).val("y", out);
    g.node("Resize", "resize", {"x", "roi", "scales"}, {"y"}, std::move(a)).out("y");
    return std::move(g.graph());
}

void pair(ir::Graph in, ir::Graph out, const std::string& node, const std::string& rule_text,
          const std::string& pid = "RK3588") {
    const NodeResult ri = check_node(in, pid, node), ro = check_node(out, pid, node);
    EXPECT_TRUE(passes(ri)) << describe(ri);
    EXPECT_EQ(ro.verdict, Verdict::CpuFallback) << describe(ro);
    EXPECT_TRUE(violates(ro, rule_text)) << describe(ro);
}

// §3.2.54: "目前仅支持宽高方向的整数倍缩放,且缩放倍数为2-8的整数倍" (integer H/W factors 2..8).
TEST(RknnNotes, ResizeFactor8vs9) {
    pair(resize({1, 4, 8, 8}, {1, 4, 64, 64}), resize({1, 4, 8, 8}, {1, 4, 72, 72}), "resize", "integer scaling");
    pair(resize({1, 4, 8, 8}, {1, 4, 16, 16}), resize({1, 4, 8, 8}, {1, 4, 12, 12}), "resize", "integer scaling");
    pair(resize({1, 4, 8, 8}, {1, 4, 16, 16}), resize({1, 4, 8, 8}, {1, 4, 4, 4}), "resize", "integer scaling");
}

// §3.2.54: "如果是(1,c,1,1)则支持放大到(1,c,h,w)": a 1x1 input may take any output size.
TEST(RknnNotes, ResizeOneByOneToAnySize) {
    pair(resize({1, 4, 1, 1}, {1, 4, 13, 50}), resize({1, 4, 2, 1}, {1, 4, 26, 50}), "resize", "integer scaling");
}

// §3.2.54: nearest_mode "目前不支持设置" (cannot be set): only its default round_prefer_floor.
TEST(RknnNotes, ResizeNearestModeCannotBeSet) {
    pair(resize({1, 4, 8, 8}, {1, 4, 16, 16}, attrs({{"nearest_mode", std::string("round_prefer_floor")}})),
         resize({1, 4, 8, 8}, {1, 4, 16, 16}, attrs({{"nearest_mode", std::string("floor")}})), "resize",
         "nearest_mode");
}

// §3.2.54: roi "目前暂不支持".
TEST(RknnNotes, ResizeRoiNotSupported) {
    G g;
    g.opset(13).in("x", {1, 4, 8, 8}).cst("roi", {8}).cst("scales", {4}).val("y", {1, 4, 16, 16});
    g.node("Resize", "resize", {"x", "roi", "scales"}, {"y"}).out("y");
    pair(resize({1, 4, 8, 8}, {1, 4, 16, 16}), std::move(g.graph()), "resize", "roi");
}

/// Slice of [1,c,h,w] with steps on axis 1.
ir::Graph slice(Ints in, int64_t step) {
    const int64_t c = in[1];
    G g;
    g.opset(13).in("x", in).cst("st", {1}, DType::I64, {0}).cst("en", {1}, DType::I64, {static_cast<double>(c)});
    g.cst("ax", {1}, DType::I64, {1}).cst("sp", {1}, DType::I64, {static_cast<double>(step)});
    g.val("y", {in[0], (c + step - 1) / step, in[2], in[3]});
    g.node("Slice", "slice", {"x", "st", "en", "ax", "sp"}, {"y"}).out("y");
    return std::move(g.graph());
}

// §3.2.55: steps may differ from 1 only when height*width == 1, else steps == [1,1,1,1].
TEST(RknnNotes, SliceStepsOnlyWhenSpatial1x1) {
    pair(slice({1, 16, 1, 1}, 2), slice({1, 16, 2, 1}, 2), "slice", "steps");
    pair(slice({1, 16, 4, 4}, 1), slice({1, 16, 4, 4}, 2), "slice", "steps");
}

/// Pad of a [1,c,h,w] input with the given mode.
ir::Graph pad(Ints in, const std::string& mode, int64_t pads = 8) {
    G g;
    g.opset(13).in("x", in).cst("p", {pads}, DType::I64);
    Ints out = in;
    g.val("y", out).node("Pad", "pad", {"x", "p"}, {"y"}, attrs({{"mode", mode}})).out("y");
    return std::move(g.graph());
}

// §3.2.43: "reflect channel∈(0,8192],height∈(0,8192],width∈(0,8176]"; pads has 8 values.
TEST(RknnNotes, PadReflectWidth8176vs8177) {
    pair(pad({1, 2, 4, 8176}, "reflect"), pad({1, 2, 4, 8177}, "reflect"), "pad", "width");
    pair(pad({1, 2, 4, 8177}, "constant"), pad({1, 2, 4, 8177}, "constant", 6), "pad", "8 values");
}

/// PRelu of [1,c,h,w] with a slope of the given shape.
ir::Graph prelu(Ints slope) {
    G g;
    g.opset(13).in("x", {1, 8, 4, 4}).cst("s", slope).val("y", {1, 8, 4, 4});
    g.node("PRelu", "prelu", {"x", "s"}, {"y"}).out("y");
    return std::move(g.graph());
}

// §3.2.51: slope "仅支持单个标量或C维度系数" (a single scalar or per-C coefficients only).
TEST(RknnNotes, PReluSlopeScalarOrPerChannel) {
    pair(prelu({1}), prelu({8, 4, 4}), "prelu", "slope");
    pair(prelu({8, 1, 1}), prelu({1, 1, 1, 4}), "prelu", "slope");
    pair(prelu({1, 8, 1, 1}), prelu({1, 8, 4, 1}), "prelu", "slope");
}

/// Gather along axis 1 of [1,8,4,4] with an index tensor of the given shape.
ir::Graph gather(Ints idx) {
    G g;
    g.opset(13).in("x", {1, 8, 4, 4}).cst("i", idx, DType::I64);
    Ints out{1};
    out.insert(out.end(), idx.begin(), idx.end());
    out.insert(out.end(), {4, 4});
    g.val("y", out).node("Gather", "gather", {"x", "i"}, {"y"}, attrs({{"axis", int64_t{1}}})).out("y");
    return std::move(g.graph());
}

// §3.2.36: Indices "秩rank =1".
TEST(RknnNotes, GatherIndicesRank1) { pair(gather({3}), gather({3, 2}), "gather", "rank of input 1"); }

/// Clip of a [1,c,h,w] input to [lo, hi] (opset 13 inputs).
ir::Graph clip(double lo, double hi) {
    G g;
    g.opset(13).in("x", {1, 8, 4, 4}).cst("lo", {}, DType::F32, {lo}).cst("hi", {}, DType::F32, {hi});
    g.val("y", {1, 8, 4, 4}).node("Clip", "clip", {"x", "lo", "hi"}, {"y"}).out("y");
    return std::move(g.graph());
}

// §3.2.50 Clip/ReLU6: "将输入张量的值裁剪到[0,6]范围内" (clips to [0,6]).
TEST(RknnNotes, ClipIsRelu6) {
    pair(clip(0, 6), clip(0, 5), "clip", "clip to [0,6]");
    pair(clip(0, 6), clip(-1, 6), "clip", "clip to [0,6]");
}

// §3.2.66 HardSigmoid: y = max(0, min(1, x/6 + 0.5)), i.e. alpha 1/6 (ONNX default is 0.2).
TEST(RknnNotes, HardSigmoidAlphaOneSixth) {
    auto hs = [](num::Attributes a) {
        G g;
        g.opset(13).in("x", {1, 8, 4, 4}).val("y", {1, 8, 4, 4});
        g.node("HardSigmoid", "hs", {"x"}, {"y"}, std::move(a)).out("y");
        return std::move(g.graph());
    };
    pair(hs(attrs({{"alpha", 1.0f / 6.0f}})), hs({}), "hs", "alpha");
}

// §3.2.1 Add: B is T1 (int8/float16) unless it is a float constant tensor (T2).
TEST(RknnNotes, AddSecondInputT1UnlessConstant) {
    auto add = [](bool constant, DType dt) {
        G g;
        g.opset(13).in("a", {1, 8, 4, 4}, DType::I8);
        if (constant) g.cst("b", {1, 8, 4, 4}, dt);
        else g.in("b", {1, 8, 4, 4}, dt);
        g.val("y", {1, 8, 4, 4}, DType::I8).node("Add", "add", {"a", "b"}, {"y"}).out("y");
        return std::move(g.graph());
    };
    pair(add(true, DType::F32), add(false, DType::I32), "add", "input 1");
}

/// Where(mask, x, y) on [1,8,4,4]: a constant mask of dtype `mask`, x and y graph inputs of dtype `xy`.
ir::Graph where(DType mask, DType xy) {
    G g;
    g.opset(13).cst("m", {1, 8, 4, 4}, mask).in("x", {1, 8, 4, 4}, xy).in("y", {1, 8, 4, 4}, xy);
    g.val("o", {1, 8, 4, 4}, xy).node("Where", "where", {"m", "x", "y"}, {"o"}).out("o");
    return std::move(g.graph());
}

// §3.2.74 / §3.1.70 Where: "mask_tensor:T1", "x_tensor:T2", "T1:bool(Tensor)", "T2:int8(Tensor),float16(Tensor)":
// the bool mask is not held to the int8/float16 of the data (every Where used to fall back on the mask's dtype).
TEST(RknnNotes, WhereBoolMaskInt8OrFloat16Data) {
    for (const char* pid : {"RK3588", "RK3566_RK3568"}) {
        pair(where(DType::Bool, DType::F32), where(DType::F32, DType::F32), "where", "allowed {bool}", pid);
        pair(where(DType::Bool, DType::I8), where(DType::Bool, DType::I32), "where", "input 1 'x'", pid);
    }
}

// §3.1 RK3566/RK3568 Resize has the same note.
TEST(RknnNotes, Rk3566ResizeFactor) {
    pair(resize({1, 4, 8, 8}, {1, 4, 24, 24}), resize({1, 4, 8, 8}, {1, 4, 80, 80}), "resize", "integer scaling",
         "RK3566_RK3568");
}

}  // namespace
}  // namespace drv::check::testing
