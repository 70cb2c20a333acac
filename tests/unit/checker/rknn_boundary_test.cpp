// SPDX-License-Identifier: MIT
// RKNN boundary pairs (seed 001, RKNN Compiler V2.3.2; seed 004, RKNN2 V2.5.0): each test builds the
// graph in the IR, checks a value just inside the seed's limit (NPU) and just outside (CPU fallback
// with the rule named). The limits are quoted from the seed text here, independent of the DB.
#include "check_test_util.h"

namespace drv::check::testing {
namespace {

struct ConvP {
    std::string op = "Conv";
    int64_t c = 8, h = 32, w = 32, oc = 16, kh = 3, kw = 3, sh = 1, sw = 1, dh = 1, dw = 1, group = 1;
    Ints pads = {0, 0, 0, 0};
    num::DType dt = num::DType::F32;
    bool relu = false;
};

int64_t conv_out(int64_t in, int64_t k, int64_t s, int64_t d, int64_t p0, int64_t p1) {
    return (in + p0 + p1 - ((k - 1) * d + 1)) / s + 1;
}

ir::Graph conv(const ConvP& p) {
    G g;
    g.opset(13).in("x", {1, p.c, p.h, p.w}, p.dt);
    bool tr = p.op == "ConvTranspose";
    int64_t oh = tr ? p.sh * (p.h - 1) + (p.kh - 1) * p.dh + 1 - p.pads[0] - p.pads[2]
                    : conv_out(p.h, p.kh, p.sh, p.dh, p.pads[0], p.pads[2]);
    int64_t ow = tr ? p.sw * (p.w - 1) + (p.kw - 1) * p.dw + 1 - p.pads[1] - p.pads[3]
                    : conv_out(p.w, p.kw, p.sw, p.dw, p.pads[1], p.pads[3]);
    Ints wshape = tr ? Ints{p.c, p.oc / p.group, p.kh, p.kw} : Ints{p.oc, p.c / p.group, p.kh, p.kw};
    g.cst("W", wshape, p.dt).val("y", {1, p.oc, oh, ow}, p.dt);
    g.node(p.op, "conv", {"x", "W"}, {"y"},
           attrs({{"kernel_shape", Ints{p.kh, p.kw}}, {"strides", Ints{p.sh, p.sw}}, {"pads", p.pads},
                  {"dilations", Ints{p.dh, p.dw}}, {"group", p.group}}));
    if (p.relu) {
        g.val("z", {1, p.oc, oh, ow}, p.dt).node("Relu", "relu", {"y"}, {"z"}).out("z");
    } else {
        g.out("y");
    }
    return std::move(g.graph());
}

/// Conv inside and outside; `tweak` applies the boundary value.
template <typename F>
void conv_pair(const std::string& pid, F tweak_in, F tweak_out, const std::string& rule_text) {
    ConvP in, out;
    tweak_in(in);
    tweak_out(out);
    ir::Graph gi = conv(in), go = conv(out);
    NodeResult ri = check_node(gi, pid, "conv"), ro = check_node(go, pid, "conv");
    EXPECT_TRUE(passes(ri)) << describe(ri);
    EXPECT_EQ(ro.verdict, Verdict::CpuFallback) << describe(ro);
    EXPECT_TRUE(violates(ro, rule_text)) << describe(ro);
}

using CP = void (*)(ConvP&);

// seed 001 §3.2.5 Convolution: "kernel_h∈[1,31]" / "kernel_w∈[1,31]"
TEST(RknnBoundary, Rk3588ConvKernelW31vs32) {
    conv_pair("RK3588", CP([](ConvP& p) { p.kw = 31; p.w = 64; }), CP([](ConvP& p) { p.kw = 32; p.w = 64; }),
              "kernel_w = 32 outside [1, 31]");
}
TEST(RknnBoundary, Rk3588ConvKernelH31vs32) {
    conv_pair("RK3588", CP([](ConvP& p) { p.kh = 31; p.h = 64; }), CP([](ConvP& p) { p.kh = 32; p.h = 64; }),
              "kernel_h = 32 outside [1, 31]");
}
// seed 001 §3.2.5: "stride_h∈[1,7]" "stride_w∈[1,7]"
TEST(RknnBoundary, Rk3588ConvStrideH7vs8) {
    conv_pair("RK3588", CP([](ConvP& p) { p.sh = 7; }), CP([](ConvP& p) { p.sh = 8; }), "stride_h = 8 outside [1, 7]");
}
TEST(RknnBoundary, Rk3588ConvStrideW7vs8) {
    conv_pair("RK3588", CP([](ConvP& p) { p.sw = 7; }), CP([](ConvP& p) { p.sw = 8; }), "stride_w = 8 outside [1, 7]");
}
// seed 001 §3.2.5: "pads_top∈[0,15]" ... "pads_right∈[0,15]"
TEST(RknnBoundary, Rk3588ConvPadTop15vs16) {
    conv_pair("RK3588", CP([](ConvP& p) { p.pads = {15, 0, 0, 0}; }), CP([](ConvP& p) { p.pads = {16, 0, 0, 0}; }),
              "pads_top = 16 outside [0, 15]");
}
TEST(RknnBoundary, Rk3588ConvPadRight15vs16) {
    conv_pair("RK3588", CP([](ConvP& p) { p.pads = {0, 0, 0, 15}; }), CP([](ConvP& p) { p.pads = {0, 0, 0, 16}; }),
              "pads_right = 16 outside [0, 15]");
}
// seed 001 §3.2.5: "dilations_h∈[1,31]"
TEST(RknnBoundary, Rk3588ConvDilationH31vs32) {
    conv_pair("RK3588", CP([](ConvP& p) { p.kh = 2; p.dh = 31; p.h = 64; }),
              CP([](ConvP& p) { p.kh = 2; p.dh = 32; p.h = 64; }), "dilation_h = 32 outside [1, 31]");
}
// seed 001 §3.2.5: "width: 当dilated_kernel_h>1时,width<16383"
TEST(RknnBoundary, Rk3588ConvDilatedWidth16382vs16383) {
    conv_pair("RK3588", CP([](ConvP& p) { p.h = 4; p.w = 16382; }), CP([](ConvP& p) { p.h = 4; p.w = 16383; }),
              "width = 16383 outside");
}
// seed 001 §3.2.6 DepthwiseConvolution: "kernel_h∈[1,8]" "kernel_w∈[1,8]"
TEST(RknnBoundary, Rk3588DepthwiseKernel8vs9) {
    auto dw = [](ConvP& p) { p.c = 16; p.oc = 16; p.group = 16; };
    conv_pair("RK3588", CP([](ConvP& p) { p.c = 16; p.oc = 16; p.group = 16; p.kw = 8; }),
              CP([](ConvP& p) { p.c = 16; p.oc = 16; p.group = 16; p.kw = 9; }), "kernel_w = 9 outside [1, 8]");
    ConvP p;
    dw(p);
    ir::Graph g = conv(p);
    EXPECT_EQ(check_node(g, "RK3588", "conv").spec_op, "DepthwiseConvolution");
}
// seed 001 §3.2.6: "dilations_h∈[1,32]"
TEST(RknnBoundary, Rk3588DepthwiseDilation32vs33) {
    conv_pair("RK3588", CP([](ConvP& p) { p.c = 16; p.oc = 16; p.group = 16; p.kh = 2; p.dh = 32; p.h = 80; }),
              CP([](ConvP& p) { p.c = 16; p.oc = 16; p.group = 16; p.kh = 2; p.dh = 33; p.h = 80; }),
              "dilation_h = 33 outside [1, 32]");
}
// seed 001 §3.3.6 (RK3562) DepthwiseConvolution: "kernel_h∈[1,8]"
TEST(RknnBoundary, Rk3562DepthwiseKernelH8vs9) {
    conv_pair("RK3562", CP([](ConvP& p) { p.c = 16; p.oc = 16; p.group = 16; p.kh = 8; }),
              CP([](ConvP& p) { p.c = 16; p.oc = 16; p.group = 16; p.kh = 9; }), "kernel_h = 9 outside [1, 8]");
}
// seed 001 §3.1.5 (RK3566/RK3568) Convolution: "kernel_w∈[1,31]"
TEST(RknnBoundary, Rk3566ConvKernelW31vs32) {
    conv_pair("RK3568", CP([](ConvP& p) { p.kw = 31; p.w = 64; }), CP([](ConvP& p) { p.kw = 32; p.w = 64; }),
              "kernel_w = 32 outside [1, 31]");
}
// seed 001 §3.2.20 ConvTranspose: "stride_h仅支持1,2,4,8"
TEST(RknnBoundary, Rk3588ConvTransposeStride8vs3) {
    auto mk = [](int64_t s) {
        ConvP p;
        p.op = "ConvTranspose";
        p.kh = p.kw = 1;
        p.sh = s;
        return p;
    };
    ir::Graph gi = conv(mk(8)), go = conv(mk(3));
    NodeResult ri = check_node(gi, "RK3588", "conv"), ro = check_node(go, "RK3588", "conv");
    EXPECT_TRUE(passes(ri)) << describe(ri);
    EXPECT_TRUE(violates(ro, "stride_h = 3 not in {1, 2, 4, 8}")) << describe(ro);
}
// seed 001 §3.2.20: "当dilation不等于(1,1)时，只支持kernel=(1,1)"
TEST(RknnBoundary, Rk3588ConvTransposeDilationNeedsKernel1) {
    auto mk = [](int64_t k) {
        ConvP p;
        p.op = "ConvTranspose";
        p.kh = p.kw = k;
        p.dh = p.dw = 2;
        p.pads = {0, 0, 2 * (k - 1), 2 * (k - 1)};
        return p;
    };
    ir::Graph gi = conv(mk(1)), go = conv(mk(3));
    NodeResult ri = check_node(gi, "RK3588", "conv"), ro = check_node(go, "RK3588", "conv");
    EXPECT_TRUE(passes(ri)) << describe(ri);
    EXPECT_TRUE(violates(ro, "if dilation != (1,1) then kernel must be (1,1)")) << describe(ro);
}
// seed 001 §3.2.20: "不支持kernel_h*dilations_h‑dilations_h‑pads_top<0"
TEST(RknnBoundary, Rk3588ConvTransposePadTopFormula) {
    auto mk = [](int64_t pt) {
        ConvP p;
        p.op = "ConvTranspose";
        p.h = p.w = 8;
        p.pads = {pt, 0, 2, 2};  // pads_bottom 2 keeps "stride_h*(height-1)-pads_top+1 >= output_h" true
        return p;
    };
    ir::Graph gi = conv(mk(2)), go = conv(mk(3));  // 3*1-1-2 = 0 (ok), 3*1-1-3 = -1 (unsupported)
    NodeResult ri = check_node(gi, "RK3588", "conv"), ro = check_node(go, "RK3588", "conv");
    EXPECT_TRUE(passes(ri)) << describe(ri);
    EXPECT_TRUE(violates(ro, "kernel_h*dilation_h - dilation_h - pads_top < 0")) << describe(ro);
}
// seed 001 §3.4.5 (RV1103/RV1106) Convolution: "T1:int8(Tensor)" only
TEST(RknnBoundary, Rv1106ConvInt8vsFloat16) {
    conv_pair("RV1106", CP([](ConvP& p) { p.dt = num::DType::I8; }), CP([](ConvP& p) { p.dt = num::DType::F16; }),
              "dtype of input 0 'x' = float16, allowed {int8}");
}
// seed 001 §3.2.5: weight "量化支持 per-layer, per-channel"; output "per-layer"
TEST(RknnBoundary, Rk3588ConvOutputPerLayerVsPerChannel) {
    ConvP p;
    p.dt = num::DType::I8;
    ir::Graph gi = conv(p), go = conv(p);
    auto q = [](ir::Graph& g, const char* n, size_t k) {
        auto& v = g.value(n);
        v.quant.scale.assign(k, 0.1f);
        v.quant.zero_point.assign(k, 0);
    };
    q(gi, "x", 1), q(gi, "W", 16), q(gi, "y", 1);
    q(go, "x", 1), q(go, "W", 16), q(go, "y", 16);
    NodeResult ri = check_node(gi, "RK3588", "conv"), ro = check_node(go, "RK3588", "conv");
    EXPECT_TRUE(passes(ri)) << describe(ri);
    EXPECT_TRUE(violates(ro, "output 0 'y' is quantized per-channel, allowed {per-layer}")) << describe(ro);
}
// seed 001 §3.2.7 ConvolutionRelu: "说明及规格限制同Convolution" (fused op inherits the base limits)
TEST(RknnBoundary, Rk3588ConvolutionReluInheritsKernelLimit) {
    ConvP in, out;
    in.relu = out.relu = true;
    in.kw = 31, out.kw = 32, in.w = out.w = 64;
    ir::Graph gi = conv(in), go = conv(out);
    NodeResult ri = check_node(gi, "RK3588", "conv"), ro = check_node(go, "RK3588", "conv");
    EXPECT_TRUE(passes(ri)) << describe(ri);
    EXPECT_EQ(ri.spec_op, "ConvolutionRelu");
    EXPECT_EQ(check_node(gi, "RK3588", "relu").verdict, Verdict::Fused);
    EXPECT_TRUE(violates(ro, "kernel_w = 32 outside [1, 31]")) << describe(ro);
    EXPECT_EQ(ro.violations.at(0).op, "Convolution");
}

ir::Graph pool(const std::string& op, int64_t k, int64_t s, Ints pads, int64_t c = 8, int64_t ceil = 0,
               int64_t cip = -1) {
    G g;
    int64_t h = 32;
    int64_t o = (h + pads[0] + pads[2] - k) / s + 1;
    g.opset(13).in("x", {1, c, h, h}).val("y", {1, c, o, o});
    num::Attributes a = attrs({{"kernel_shape", Ints{k, k}}, {"strides", Ints{s, s}}, {"pads", pads},
                               {"ceil_mode", ceil}});
    if (cip >= 0) a.set("count_include_pad", cip);
    g.node(op, "pool", {"x"}, {"y"}, a).out("y");
    return std::move(g.graph());
}

void pool_pair(const std::string& pid, ir::Graph gi, ir::Graph go, const std::string& text) {
    NodeResult ri = check_node(gi, pid, "pool"), ro = check_node(go, pid, "pool");
    EXPECT_TRUE(passes(ri)) << describe(ri);
    EXPECT_EQ(ro.verdict, Verdict::CpuFallback) << describe(ro);
    EXPECT_TRUE(violates(ro, text)) << describe(ro);
}

// seed 001 §3.2.44 MaxPool: "kernel_h∈(0,7]"
TEST(RknnBoundary, Rk3588MaxPoolKernel7vs8) {
    pool_pair("RK3588", pool("MaxPool", 7, 1, {0, 0, 0, 0}), pool("MaxPool", 8, 1, {0, 0, 0, 0}),
              "kernel_h = 8 outside (0, 7]");
}
// seed 001 §3.2.44: "strides_h∈(0,8]"
TEST(RknnBoundary, Rk3588MaxPoolStride8vs9) {
    pool_pair("RK3588", pool("MaxPool", 2, 8, {0, 0, 0, 0}), pool("MaxPool", 2, 9, {0, 0, 0, 0}),
              "stride_h = 9 outside (0, 8]");
}
// seed 001 §3.2.44: "pad_top∈[0,7]"
TEST(RknnBoundary, Rk3588MaxPoolPad7vs8) {
    pool_pair("RK3588", pool("MaxPool", 7, 1, {7, 0, 0, 0}), pool("MaxPool", 7, 1, {8, 0, 0, 0}),
              "pads_top = 8 outside [0, 7]");
}
// seed 001 §3.2.44: "使用ceil或floor的方式计算输出的shape:不支持" (ceil_mode unsupported)
TEST(RknnBoundary, Rk3588MaxPoolCeilMode) {
    pool_pair("RK3588", pool("MaxPool", 2, 2, {0, 0, 0, 0}, 8, 0), pool("MaxPool", 2, 2, {0, 0, 0, 0}, 8, 1),
              "ceil_mode = 1 not in {0}");
}
// seed 001 §3.2.44: "channel∈(0,8192]"
TEST(RknnBoundary, Rk3588MaxPoolChannel8192vs8193) {
    pool_pair("RK3588", pool("MaxPool", 2, 2, {0, 0, 0, 0}, 8192), pool("MaxPool", 2, 2, {0, 0, 0, 0}, 8193),
              "channel = 8193 outside (0, 8192]");
}
// seed 001 §3.2.46 AveragePool: "count_include_pad是否包含pad数值进行计算:1"
TEST(RknnBoundary, Rk3588AveragePoolCountIncludePad) {
    pool_pair("RK3588", pool("AveragePool", 3, 1, {1, 1, 1, 1}, 8, 0, 1),
              pool("AveragePool", 3, 1, {1, 1, 1, 1}, 8, 0, 0), "count_include_pad = 0 not in {1}");
}

ir::Graph unary(const std::string& op, Ints shape, num::Attributes a = {}, num::DType dt = num::DType::F32,
                int64_t opset = 13) {
    G g;
    g.opset(opset).in("x", shape, dt).val("y", shape, dt).node(op, "n", {"x"}, {"y"}, std::move(a)).out("y");
    return std::move(g.graph());
}

void pair(const std::string& pid, ir::Graph gi, ir::Graph go, const std::string& text,
          Verdict bad = Verdict::CpuFallback) {
    NodeResult ri = check_node(gi, pid, "n"), ro = check_node(go, pid, "n");
    EXPECT_TRUE(passes(ri)) << describe(ri);
    EXPECT_EQ(ro.verdict, bad) << describe(ro);
    if (!text.empty()) {
        EXPECT_TRUE(violates(ro, text)) << describe(ro);
    }
}

// seed 001 §3.2.56 Softmax: "做softmax的轴:1,3，即channel和width方向"
TEST(RknnBoundary, Rk3588SoftmaxAxis3vs2) {
    pair("RK3588", unary("Softmax", {1, 8, 4, 4}, attrs({{"axis", int64_t{3}}})),
         unary("Softmax", {1, 8, 4, 4}, attrs({{"axis", int64_t{2}}})), "axis = 2 not in {1, 3}");
}
// seed 001 §3.2.4 Concat: input "shape:[batch,channel,height,width]" (4-D)
TEST(RknnBoundary, Rk3588ConcatRank4vs5) {
    auto mk = [](Ints s, Ints o) {
        G g;
        g.opset(13).in("a", s).in("b", s).val("y", o);
        g.node("Concat", "n", {"a", "b"}, {"y"}, attrs({{"axis", int64_t{1}}})).out("y");
        return std::move(g.graph());
    };
    pair("RK3588", mk({1, 4, 8, 8}, {1, 8, 8, 8}), mk({1, 4, 8, 8, 2}, {1, 8, 8, 8, 2}), "rank of input 0 'a' = 5");
}

ir::Graph binary(const std::string& op, Ints a, Ints b, Ints out, bool b_const = false) {
    G g;
    g.opset(13).in("a", a);
    if (b_const) g.cst("b", b, num::DType::F32, {0.5});
    else g.in("b", b);
    g.val("y", out).node(op, "n", {"a", "b"}, {"y"}).out("y");
    return std::move(g.graph());
}

// seed 001 §3.2.41 Mul: "广播约束同Expand算子"; §3.2.34 Expand: "[b,c,1,1]‑>[b,c,h,w]" listed, [b,1,h,w] not
TEST(RknnBoundary, Rk3588MulBroadcastExpandPatterns) {
    pair("RK3588", binary("Mul", {1, 16, 8, 8}, {1, 16, 1, 1}, {1, 16, 8, 8}),
         binary("Mul", {1, 16, 8, 8}, {1, 1, 8, 8}, {1, 16, 8, 8}), "as 'b1hw'");
}
// seed 001 §3.2.34 Expand: "[b,c,1,w]‑>[b,c,h,w],h∈[1,8192]"
TEST(RknnBoundary, Rk3588ExpandH8192vs8193) {
    auto mk = [](int64_t h) {
        G g;
        g.opset(13).in("x", {1, 2, 1, 4}).cst("s", {4}, num::DType::I64, {1, 2, double(h), 4}).val("y", {1, 2, h, 4});
        g.node("Expand", "n", {"x", "s"}, {"y"}).out("y");
        return std::move(g.graph());
    };
    pair("RK3588", mk(8192), mk(8193), "h = 8193 outside [1, 8192]");
}
// seed 001 §3.2.48 Pow: exponent "当前仅支持0、1、2、3、0.5、‑0.5"
TEST(RknnBoundary, Rk3588PowExponentHalfVs4) {
    auto mk = [](double e) {
        G g;
        g.opset(13).in("x", {1, 4, 4, 4}).cst("e", {1}, num::DType::F32, {e}).val("y", {1, 4, 4, 4});
        g.node("Pow", "n", {"x", "e"}, {"y"}).out("y");
        return std::move(g.graph());
    };
    pair("RK3588", mk(0.5), mk(4), "exponent = 4 not in");
}
// seed 001 §3.2.54 Resize: "mode ... 目前仅支持nearest和linear两种可配置"
TEST(RknnBoundary, Rk3588ResizeModeLinearVsCubic) {
    auto mk = [](const char* mode) {
        G g;
        g.opset(13).in("x", {1, 4, 4, 4}).val("y", {1, 4, 8, 8});
        g.node("Resize", "n", {"x"}, {"y"}, attrs({{"mode", std::string(mode)}})).out("y");
        return std::move(g.graph());
    };
    pair("RK3588", mk("linear"), mk("cubic"), "mode = cubic not in");
}

ir::Graph gru(int64_t batch, int64_t hidden) {
    G g;
    // R as a runtime input: a constant 1x24576x8192 tensor would allocate 800 MB for nothing here.
    g.opset(13).in("x", {4, batch, 16}).cst("W", {1, 3 * hidden, 16}).in("R", {1, 3 * hidden, hidden});
    g.val("y", {4, 1, batch, hidden});
    g.node("GRU", "n", {"x", "W", "R"}, {"y"}, attrs({{"hidden_size", hidden}})).out("y");
    return std::move(g.graph());
}
// seed 001 §3.2.35 GRU: "batchsize∈(0,8192],大于1时仅支持4的倍数"
TEST(RknnBoundary, Rk3588GruBatchMultipleOf4) {
    pair("RK3588", gru(4, 8), gru(6, 8), "batch_size = 6 is not a multiple of 4");
}
// seed 001 §3.2.35 GRU: "hiddensize∈(0,8192]"
TEST(RknnBoundary, Rk3588GruHidden8192vs8193) {
    pair("RK3588", gru(1, 8192), gru(1, 8193), "hidden_size = 8193 outside (0, 8192]");
}

ir::Graph transpose(Ints perm, Ints in, num::DType dt) {
    Ints out;
    for (auto p : perm) out.push_back(in[static_cast<size_t>(p)]);
    G g;
    g.opset(13).in("x", in, dt).val("y", out, dt).node("Transpose", "n", {"x"}, {"y"}, attrs({{"perm", perm}})).out("y");
    return std::move(g.graph());
}
// seed 001 §3.2.62 Transpose: "perm=[0,2,3,1] T1:c1<8192,h1*w1%8=0"
TEST(RknnBoundary, Rk3588TransposeHwMultipleOf8) {
    pair("RK3588", transpose({0, 2, 3, 1}, {1, 16, 2, 4}, num::DType::I8),
         transpose({0, 2, 3, 1}, {1, 16, 3, 3}, num::DType::I8), "h1*w1%8=0");
}
// seed 001 §3.1.58 (RK3566/RK3568) Transpose: "perm=[0,1,2,3] 无限制", "perm=[0,2,3,1] 不支持"
TEST(RknnBoundary, Rk3566TransposePermUnsupported) {
    pair("RK3566", transpose({0, 1, 2, 3}, {1, 16, 2, 4}, num::DType::I8),
         transpose({0, 2, 3, 1}, {1, 16, 2, 4}, num::DType::I8), "perm = 231 not in");
}
// seed 004 Sigmoid (RV1103B/RV1106B): "T1:int8(Tensor)" only
TEST(RknnBoundary, Rv1106bSigmoidInt8vsFloat16) {
    pair("RV1106B", unary("Sigmoid", {1, 4, 4, 4}, {}, num::DType::I8),
         unary("Sigmoid", {1, 4, 4, 4}, {}, num::DType::F16), "dtype of input 0 'x' = float16, allowed {int8}");
}
// seed 004 Tanh: "shape:[batch,channel,height,width]" (4-D)
TEST(RknnBoundary, Rv1106bTanhRank4vs3) {
    pair("RV1106B", unary("Tanh", {1, 4, 4, 4}, {}, num::DType::I8), unary("Tanh", {4, 4, 4}, {}, num::DType::I8),
         "rank of input 0 'x' = 3");
}
// seed 004 HardSwish: "量化支持 per-layer"
TEST(RknnBoundary, Rv1106bHardSwishPerLayer) {
    ir::Graph gi = unary("HardSwish", {1, 4, 4, 4}, {}, num::DType::I8);
    ir::Graph go = unary("HardSwish", {1, 4, 4, 4}, {}, num::DType::I8);
    go.value("x").quant.scale = {0.1f, 0.2f, 0.3f, 0.4f};
    go.value("x").quant.zero_point = {0, 0, 0, 0};
    pair("RV1106B", std::move(gi), std::move(go), "is quantized per-channel");
}
// seed 001 version history: RK2118 named, no tables -> "not in the seed", never a guess
TEST(RknnBoundary, Rk2118IsNotInTheSeed) {
    ir::Graph g = unary("Relu", {1, 4, 4, 4});
    EXPECT_EQ(check_node(g, "RK2118", "n").verdict, Verdict::NotInSeed);
    EXPECT_EQ(check_node(g, "RK3576", "n").verdict, Verdict::NotInSeed);
}
// seed 001 §3.2: Erf has no RK3588 NPU entry -> CPU path
TEST(RknnBoundary, Rk3588OpOutsideTableFallsBack) {
    ir::Graph g = unary("Erf", {1, 4, 4, 4});
    NodeResult r = check_node(g, "RK3588", "n");
    EXPECT_EQ(r.verdict, Verdict::CpuFallback) << describe(r);
    EXPECT_NE(r.reason.find("not in the RK3588 operator table"), std::string::npos);
}
// seed 001 §3.4: the RV1103/RV1106 table is cut off at "3.4.33 Div": Div (and anything after it) is
// not in the seed -> "not in the seed", no guess; RK3588 lists Div
TEST(RknnBoundary, Rv1106DivIsTruncatedAway) {
    ir::Graph g = binary("Div", {1, 4, 4, 4}, {1, 4, 4, 4}, {1, 4, 4, 4});
    EXPECT_EQ(check_node(g, "RV1106", "n").verdict, Verdict::NotInSeed);
    EXPECT_TRUE(passes(check_node(g, "RK3588", "n")));
}

}  // namespace
}  // namespace drv::check::testing
