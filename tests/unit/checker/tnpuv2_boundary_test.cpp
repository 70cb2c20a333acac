// SPDX-License-Identifier: MIT
// uranus-tnpuv2 boundary pairs (seed 003 operator support page). tnpuv2 has no CPU path: outside a
// limit the node is unsupported. The seed writes shapes as [N,H,W,C] with axis 3 = C; graphs here
// are NCHW (ONNX), so the seed's C is IR dim 1. Limits are quoted from the seed text.
#include "check_test_util.h"

namespace drv::check::testing {
namespace {

const char* const kP = "tnpuv2";

void pair(ir::Graph gi, ir::Graph go, const std::string& text, const CheckOptions& oi = {},
          const CheckOptions& oo = {}) {
    NodeResult ri = check_node(gi, kP, "n", oi), ro = check_node(go, kP, "n", oo);
    EXPECT_TRUE(passes(ri)) << describe(ri);
    EXPECT_EQ(ro.verdict, Verdict::Unsupported) << describe(ro);
    if (!text.empty()) {
        EXPECT_TRUE(violates(ro, text)) << describe(ro);
    }
}

CheckOptions bits(int64_t b) {
    CheckOptions o;
    o.quant_bits = b;
    return o;
}
// --weight-bits: the width of the constant (weight) tensors; --bits is the data width only.
CheckOptions wbits(int64_t b) {
    CheckOptions o;
    o.weight_bits = b;
    return o;
}

struct Conv {
    int64_t c = 16, oc = 16, h = 32, w = 32, kh = 3, kw = 3, s = 1, d = 1, group = 1;
};

ir::Graph conv(const Conv& p) {
    int64_t ek = (p.kh - 1) * p.d + 1, ekw = (p.kw - 1) * p.d + 1;
    int64_t oh = (p.h - ek) / p.s + 1, ow = (p.w - ekw) / p.s + 1;
    G g;
    g.opset(13).in("x", {1, p.c, p.h, p.w}, num::DType::I8).cst("W", {p.oc, p.c / p.group, p.kh, p.kw}, num::DType::I8);
    g.val("y", {1, p.oc, oh, ow}, num::DType::I8);
    g.node("Conv", "n", {"x", "W"}, {"y"},
           attrs({{"strides", Ints{p.s, p.s}}, {"dilations", Ints{p.d, p.d}}, {"group", p.group},
                  {"pads", Ints{0, 0, 0, 0}}}))
        .out("y");
    return std::move(g.graph());
}
Conv mk(void (*f)(Conv&)) {
    Conv c;
    f(c);
    return c;
}

// Conv2D: "普通小核卷积 ... 公开支持 stride_h、stride_w 为 1、2 或 4"
TEST(Tnpuv2Boundary, ConvSmallKernelStride4vs3) {
    pair(conv(mk([](Conv& c) { c.s = 4; })), conv(mk([](Conv& c) { c.s = 3; })), "stride_h = 3 not in {1, 2, 4}");
}
// Conv2D: "普通大核卷积支持卷积核高度或宽度大于 7 的配置,但仅支持 dilation = 1,步长仅支持 1 或 2"
TEST(Tnpuv2Boundary, ConvLargeKernelStride2vs4) {
    pair(conv(mk([](Conv& c) { c.kh = c.kw = 9; c.s = 2; })), conv(mk([](Conv& c) { c.kh = c.kw = 9; c.s = 4; })),
         "only dilation = 1 and stride 1 or 2");
}
// Conv2D: large kernel "仅支持 dilation = 1" (and dilated conv needs kernel <= 7x7)
TEST(Tnpuv2Boundary, ConvLargeKernelDilation1vs2) {
    pair(conv(mk([](Conv& c) { c.kh = c.kw = 9; c.d = 1; c.h = c.w = 40; })),
         conv(mk([](Conv& c) { c.kh = c.kw = 9; c.d = 2; c.h = c.w = 40; })), "dilation");
}
// Conv2D: "使用 dilation > 1 时,必须仍满足卷积核不大于 7×7、groups 为 1、步长为 1 或 2"
TEST(Tnpuv2Boundary, ConvDilatedStride2vs4) {
    pair(conv(mk([](Conv& c) { c.d = 2; c.s = 2; })), conv(mk([](Conv& c) { c.d = 2; c.s = 4; })),
         "dilation > 1 requires kernel <= 7x7, groups = 1, stride 1 or 2");
}
// Conv2D 组卷积: "每组输出通道数必须为 8 的倍数"
TEST(Tnpuv2Boundary, GroupConvOutPerGroup8vs4) {
    pair(conv(mk([](Conv& c) { c.c = 32; c.oc = 32; c.group = 4; })),
         conv(mk([](Conv& c) { c.c = 32; c.oc = 16; c.group = 4; })), "output channels per group = 4 is not a multiple of 8");
}
// Conv2D 组卷积: "公开支持的组卷积卷积核高度和宽度均在 1~7 范围内"
TEST(Tnpuv2Boundary, GroupConvKernel7vs8) {
    pair(conv(mk([](Conv& c) { c.c = 32; c.oc = 32; c.group = 4; c.kh = 7; })),
         conv(mk([](Conv& c) { c.c = 32; c.oc = 32; c.group = 4; c.kh = 8; })), "kernel_h = 8 outside [1, 7]");
}
// Conv2D 组卷积: "输入通道数必须能被 groups 整除"
TEST(Tnpuv2Boundary, GroupConvInChannelsDivisible) {
    pair(conv(mk([](Conv& c) { c.c = 32; c.oc = 32; c.group = 4; })),
         conv(mk([](Conv& c) { c.c = 30; c.oc = 32; c.group = 4; })), "divisible by groups");
}
// Conv2D 深度卷积: "卷积核 ... 不大于 7"
TEST(Tnpuv2Boundary, DepthwiseKernel7vs8) {
    pair(conv(mk([](Conv& c) { c.group = 16; c.kw = 7; })), conv(mk([](Conv& c) { c.group = 16; c.kw = 8; })),
         "kernel_w = 8 outside [1, 7]");
}
// Conv2D 深度卷积: "不支持膨胀卷积"
TEST(Tnpuv2Boundary, DepthwiseDilation1vs2) {
    pair(conv(mk([](Conv& c) { c.group = 16; })), conv(mk([](Conv& c) { c.group = 16; c.d = 2; })),
         "dilation = 1 only");
}
// Conv2D: "深度卷积的量化权重仅支持 8 bit"; "普通卷积和组卷积的量化权重支持 4、8、16 和 20 bit"
TEST(Tnpuv2Boundary, ConvWeightBits20vs12) {
    pair(conv(Conv{}), conv(Conv{}), "normal/group conv weight bit width = 12", wbits(20), wbits(12));
}
TEST(Tnpuv2Boundary, DepthwiseWeightBits8vs4) {
    pair(conv(mk([](Conv& c) { c.group = 16; })), conv(mk([](Conv& c) { c.group = 16; })),
         "depthwise conv weight bit width = 4", wbits(8), wbits(4));
}
// Seed 003 lists data and weight widths separately: 16-bit data keeps the int8 depthwise weights 8-bit.
TEST(Tnpuv2Boundary, DepthwiseInt8WeightsWith16BitData) {
    ir::Graph g = conv(mk([](Conv& c) { c.group = 16; }));
    const NodeResult r = check_node(g, kP, "n", bits(16));
    EXPECT_TRUE(passes(r)) << describe(r);
}

ir::Graph unary(const std::string& op, Ints in, Ints out, num::Attributes a = {}, num::DType dt = num::DType::I8) {
    G g;
    g.opset(13).in("x", in, dt).val("y", out, dt).node(op, "n", {"x"}, {"y"}, std::move(a)).out("y");
    return std::move(g.graph());
}

// AveragePool: "高度步长和宽度步长均为 1、2 或 4; 或宽度步长为 3、高度步长为 1、2 或 3"
ir::Graph avgpool(int64_t sh, int64_t sw) {
    return unary("AveragePool", {1, 8, 24, 24}, {1, 8, (24 - 3) / sh + 1, (24 - 3) / sw + 1},
                 attrs({{"kernel_shape", Ints{3, 3}}, {"strides", Ints{sh, sw}}}));
}
TEST(Tnpuv2Boundary, AveragePoolStrideW3H3vsH4) { pair(avgpool(3, 3), avgpool(4, 3), "covered strides"); }
TEST(Tnpuv2Boundary, AveragePoolStride4vs5) { pair(avgpool(4, 4), avgpool(5, 5), "covered strides"); }
// AveragePool: "支持 4、8、12、16 bit 量化数据"
TEST(Tnpuv2Boundary, AveragePoolBits12vs14) {
    pair(avgpool(1, 1), avgpool(1, 1), "bit width = 14", bits(12), bits(14));
}

ir::Graph concat(int64_t axis) {
    Ints o = {1, 8, 8, 8};
    o[static_cast<size_t>(axis < 0 ? axis + 4 : axis)] *= 2;
    G g;
    g.opset(13).in("a", {1, 8, 8, 8}, num::DType::I8).in("b", {1, 8, 8, 8}, num::DType::I8).val("y", o, num::DType::I8);
    g.node("Concat", "n", {"a", "b"}, {"y"}, attrs({{"axis", axis}})).out("y");
    return std::move(g.graph());
}
// Concat: "4D 特征张量仅支持沿高度、宽度或通道维拼接;不支持沿批次维拼接"
TEST(Tnpuv2Boundary, ConcatChannelVsBatch) { pair(concat(1), concat(0), "not along the batch dimension"); }
TEST(Tnpuv2Boundary, ConcatNegativeAxisVsBatch) { pair(concat(-1), concat(-4), "got axis_raw=0"); }
// Concat: "支持 8 bit 和 16 bit 量化输入和输出"
TEST(Tnpuv2Boundary, ConcatBits16vs12) { pair(concat(1), concat(1), "bit width = 12", bits(16), bits(12)); }

ir::Graph binary(const std::string& op, Ints b) {
    G g;
    g.opset(13).in("a", {2, 8, 4, 4}, num::DType::I8).in("b", b, num::DType::I8).val("y", {2, 8, 4, 4}, num::DType::I8);
    g.node(op, "n", {"a", "b"}, {"y"}).out("y");
    return std::move(g.graph());
}
// Add: "支持逐元素、标量常量、通道常量广播和空间广播;不支持批次维广播"
TEST(Tnpuv2Boundary, AddChannelConstVsBatchBroadcast) {
    pair(binary("Add", {2, 8, 1, 1}), binary("Add", {1, 8, 4, 4}), "broadcasts");
}
// Add: "Add 不支持单独沿宽度维广播" ([N,H,1,C] in NHWC = NCHW [N,C,H,1])
TEST(Tnpuv2Boundary, AddSpatialVsWidthOnly) {
    pair(binary("Add", {2, 1, 4, 4}), binary("Add", {2, 8, 4, 1}), "as 'nch1'");
}
// Add: "当前版本支持 8 bit 和 16 bit 量化输入和输出"
TEST(Tnpuv2Boundary, AddBits16vs4) { pair(binary("Add", {2, 8, 4, 4}), binary("Add", {2, 8, 4, 4}), "= 4", bits(16), bits(4)); }
// Mul: "宽度广播:被广播输入 W = 1" allowed; "不支持向批次维广播"
TEST(Tnpuv2Boundary, MulWidthVsBatchBroadcast) {
    pair(binary("Mul", {2, 8, 4, 1}), binary("Mul", {1, 8, 4, 4}), "broadcasts");
}
// Mul: "支持 8、12、14、16 bit 量化输入和输出"
TEST(Tnpuv2Boundary, MulBits14vs4) { pair(binary("Mul", {2, 8, 4, 4}), binary("Mul", {2, 8, 4, 4}), "= 4", bits(14), bits(4)); }

// Softmax: "只支持沿最后一维,即通道维 C 计算;axis 必须为 3" (NCHW axis 1)
TEST(Tnpuv2Boundary, SoftmaxChannelVsWidth) {
    pair(unary("Softmax", {1, 8, 4, 4}, {1, 8, 4, 4}, attrs({{"axis", int64_t{1}}})),
         unary("Softmax", {1, 8, 4, 4}, {1, 8, 4, 4}, attrs({{"axis", int64_t{3}}})), "only along the channel dim C");
}
// SpaceToDepth: "输入高度和宽度必须分别能被 block_size 整除"
TEST(Tnpuv2Boundary, SpaceToDepthDivisible) {
    pair(unary("SpaceToDepth", {1, 4, 8, 8}, {1, 16, 4, 4}, attrs({{"blocksize", int64_t{2}}})),
         unary("SpaceToDepth", {1, 4, 9, 9}, {1, 16, 4, 4}, attrs({{"blocksize", int64_t{2}}})), "divisible by block_size");
}
// DepthToSpace: "block_size > 1"
TEST(Tnpuv2Boundary, DepthToSpaceBlock2vs1) {
    pair(unary("DepthToSpace", {1, 16, 4, 4}, {1, 4, 8, 8}, attrs({{"blocksize", int64_t{2}}})),
         unary("DepthToSpace", {1, 16, 4, 4}, {1, 16, 4, 4}, attrs({{"blocksize", int64_t{1}}})),
         "block_size = 1 outside (1, inf)");
}
// DepthToSpace: "输入通道数必须能被 block_size * block_size 整除"
TEST(Tnpuv2Boundary, DepthToSpaceChannelsDivisible) {
    pair(unary("DepthToSpace", {1, 8, 4, 4}, {1, 2, 8, 8}, attrs({{"blocksize", int64_t{2}}})),
         unary("DepthToSpace", {1, 6, 4, 4}, {1, 2, 8, 8}, attrs({{"blocksize", int64_t{2}}})),
         "divisible by block_size * block_size");
}

ir::Graph gather(int64_t n) {
    G g;
    g.opset(13).in("x", {1, 100, 4}, num::DType::I8).cst("i", {n}, num::DType::I64).val("y", {1, n, 4}, num::DType::I8);
    g.node("Gather", "n", {"x", "i"}, {"y"}, attrs({{"axis", int64_t{1}}})).out("y");
    return std::move(g.graph());
}
// Gather: "索引数量为 1~64"
TEST(Tnpuv2Boundary, GatherIndices64vs65) { pair(gather(64), gather(65), "number of indices = 65 outside [1, 64]"); }

ir::Graph reduce(const std::string& op, Ints axes, int64_t c = 16) {
    Ints out = {1, c, 4, 4};
    for (auto a : axes) out[static_cast<size_t>(a)] = 1;
    return unary(op, {1, c, 4, 4}, out, attrs({{"axes", axes}}));
}
// ReduceMax: "只支持 axes = [3],即按通道维求最大值" (NCHW axis 1)
TEST(Tnpuv2Boundary, ReduceMaxChannelVsHeight) {
    pair(reduce("ReduceMax", {1}), reduce("ReduceMax", {2}), "axes = [3] only");
}
// ReduceMax: "输入通道数必须为 16 的倍数"
TEST(Tnpuv2Boundary, ReduceMaxChannels16vs24) {
    pair(reduce("ReduceMax", {1}, 32), reduce("ReduceMax", {1}, 24), "C = 24 is not a multiple of 16");
}
// ReduceMean: "axes = [1,2]:按高度和宽度归约" allowed; [0] (batch) not listed
TEST(Tnpuv2Boundary, ReduceMeanHWvsBatch) {
    pair(reduce("ReduceMean", {2, 3}), reduce("ReduceMean", {0}), "axes mask = 1 not in");
}
// ReduceSum: "[0,1,2,3] -> [1,1,1,1]" allowed, [0] alone not
TEST(Tnpuv2Boundary, ReduceSumAllVsBatch) {
    pair(reduce("ReduceSum", {0, 1, 2, 3}), reduce("ReduceSum", {0}), "axes mask = 1 not in");
}
// ReduceMin/ReduceProd: "不支持"; ReduceMean is listed
TEST(Tnpuv2Boundary, ReduceProdUnsupported) {
    pair(reduce("ReduceMean", {1}), reduce("ReduceProd", {1}), "operator is unsupported on tnpuv2");
}
// Squeeze/Unsqueeze: "不支持"
TEST(Tnpuv2Boundary, SqueezeUnsupported) {
    pair(unary("Relu", {1, 8, 4, 4}, {1, 8, 4, 4}), unary("Squeeze", {1, 8, 4, 1}, {1, 8, 4}), "unsupported");
}
// Transpose/Permute: "支持 2~5 维张量"
TEST(Tnpuv2Boundary, TransposeRank5vs6) {
    pair(unary("Transpose", {1, 2, 3, 4, 5}, {1, 2, 3, 5, 4}, attrs({{"perm", Ints{0, 1, 2, 4, 3}}})),
         unary("Transpose", {1, 2, 3, 4, 5, 6}, {1, 2, 3, 4, 6, 5}, attrs({{"perm", Ints{0, 1, 2, 3, 5, 4}}})),
         "rank of input 0 'x' = 6");
}
// ReLU: "输入和输出必须为 4D 特征张量"
TEST(Tnpuv2Boundary, ReluRank4vs3) {
    pair(unary("Relu", {1, 8, 4, 4}, {1, 8, 4, 4}), unary("Relu", {8, 4, 4}, {8, 4, 4}), "rank of input 0 'x' = 3");
}
// Erf: "输入和输出 FP32" (quantized Erf not supported)
TEST(Tnpuv2Boundary, ErfFp32vsInt8) {
    pair(unary("Erf", {1, 8, 4, 4}, {1, 8, 4, 4}, {}, num::DType::F32), unary("Erf", {1, 8, 4, 4}, {1, 8, 4, 4}),
         "dtype of input 0 'x' = int8, allowed {float32}");
}
// Pad: "只支持 Constant 模式,不支持 Reflect、Edge 等模式"
TEST(Tnpuv2Boundary, PadConstantVsReflect) {
    auto mk = [](const char* mode) {
        G g;
        g.opset(13).in("x", {1, 8, 4, 4}, num::DType::I8).cst("p", {8}, num::DType::I64, {0, 0, 1, 1, 0, 0, 1, 1});
        g.val("y", {1, 8, 6, 6}, num::DType::I8).node("Pad", "n", {"x", "p"}, {"y"}, attrs({{"mode", std::string(mode)}}));
        g.out("y");
        return std::move(g.graph());
    };
    pair(mk("constant"), mk("reflect"), "mode = reflect not in {constant}");
}
// GRU: "隐藏单元数必须为 16 的倍数"; "linear_before_reset 必须为开启状态"
TEST(Tnpuv2Boundary, GruHidden16vs24) {
    auto mk = [](int64_t hid) {
        G g;
        g.opset(13).in("x", {4, 1, 16}, num::DType::I8).cst("W", {1, 3 * hid, 16}, num::DType::I8);
        g.cst("R", {1, 3 * hid, hid}, num::DType::I8).val("y", {4, 1, 1, hid}, num::DType::I8);
        g.node("GRU", "n", {"x", "W", "R"}, {"y"}, attrs({{"hidden_size", hid}, {"linear_before_reset", int64_t{1}}}));
        g.out("y");
        return std::move(g.graph());
    };
    pair(mk(16), mk(24), "hidden_size = 24 is not a multiple of 16");
}
// MatMul: "输入 A 的维度数为 2~4"
TEST(Tnpuv2Boundary, MatMulRankA4vs5) {
    auto mk = [](Ints a, Ints b, Ints o) {
        G g;
        g.opset(13).in("a", a, num::DType::I8).cst("b", b, num::DType::I8).val("y", o, num::DType::I8);
        g.node("MatMul", "n", {"a", "b"}, {"y"}).out("y");
        return std::move(g.graph());
    };
    pair(mk({1, 2, 4, 8}, {1, 2, 8, 16}, {1, 2, 4, 16}), mk({1, 1, 2, 4, 8}, {1, 1, 2, 8, 16}, {1, 1, 2, 4, 16}),
         "rank of input 0 'a' = 5");
}

}  // namespace
}  // namespace drv::check::testing
