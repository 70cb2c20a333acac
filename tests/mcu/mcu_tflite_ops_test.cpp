// SPDX-License-Identifier: MIT
// Issue 21 acceptance 3 (TFLite half): every TFLite builtin configuration the MCU converter takes,
// one node at a time, int8 and float32, on seeded data: the blob run by the host build of the
// firmware's runtime and kernels (mcu_runtime_host, byte-identical to the ISS build - checked by the
// model tests) against the reference executor's tflite operators (num::run_op, TFLite arithmetic).
// int8 must be bit-exact, float32 within 1e-5 relative. Also the converter's refusals of issue 23
// (rank > 4 tensors, BatchNormalization parameters shorter than the channels).

#include "mcu_op_test_util.h"

namespace {

using namespace mcut;

class Ops : public ::testing::TestWithParam<bool> {};

TEST_P(Ops, Conv2D) {
    for (const char* pad : {"SAME", "VALID"})
        for (int64_t s : {1, 2})
            for (const char* act : {"NONE", "RELU", "RELU6"}) {
                T t(GetParam());
                const int64_t o = std::string(pad) == "SAME" ? (9 + s - 1) / s : (9 - 3 + s) / s;
                t.in("x", {1, 9, 9, 5}).weight("w", {6, 3, 3, 5}).bias("b", 6).out("y", {1, o, o, 6}, 0.15f, -5);
                t.op("CONV_2D", {"x", "w", "b"}, {{"padding", S(pad)}, {"stride_h", s}, {"stride_w", s}, {"fused_activation_function", S(act)}});
                EXPECT_EQ(run(t), "") << pad << " s" << s << " " << act;
            }
    T t(GetParam());  // dilation 2, per-tensor weights, no bias
    t.in("x", {1, 10, 10, 3}).weight("w", {4, 3, 3, 3}, 0, false).out("y", {1, 10, 10, 4}, 0.1f, 7);
    t.op("CONV_2D", {"x", "w", ""}, {{"padding", S("SAME")}, {"dilation_h_factor", int64_t(2)}, {"dilation_w_factor", int64_t(2)}});
    EXPECT_EQ(run(t), "");
}

TEST_P(Ops, DepthwiseConv2D) {
    for (int64_t dm : {1, 2}) {
        T t(GetParam());
        t.in("x", {1, 8, 8, 4}).weight("w", {1, 3, 3, 4 * dm}, 3).bias("b", 4 * dm).out("y", {1, 4, 4, 4 * dm}, 0.06f, -20);
        t.op("DEPTHWISE_CONV_2D", {"x", "w", "b"}, {{"padding", S("SAME")}, {"stride_h", int64_t(2)}, {"stride_w", int64_t(2)},
                                                   {"depth_multiplier", dm}, {"fused_activation_function", S("RELU")}});
        EXPECT_EQ(run(t), "") << "multiplier " << dm;
    }
}

TEST_P(Ops, FullyConnected) {
    for (bool pc : {true, false}) {
        T t(GetParam());
        t.in("x", {2, 3, 8}).weight("w", {5, 24}, 0, pc).bias("b", 5).out("y", {2, 5}, 0.1f, -30);
        t.op("FULLY_CONNECTED", {"x", "w", "b"}, {{"fused_activation_function", S("RELU")}});
        EXPECT_EQ(run(t), "") << "per-channel " << pc;
    }
    T t(GetParam());  // keep_num_dims
    t.in("x", {1, 4, 8}).weight("w", {3, 8}).out("y", {1, 4, 3}, 0.05f, 1);
    t.op("FULLY_CONNECTED", {"x", "w", ""}, {{"keep_num_dims", int64_t(1)}});
    EXPECT_EQ(run(t), "");
}

TEST_P(Ops, Binary) {
    for (const char* op : {"ADD", "SUB", "MUL", "MAXIMUM", "MINIMUM", "DIV"}) {
        const bool q8only = std::string(op) == "ADD" || std::string(op) == "SUB" || std::string(op) == "MUL";
        if (GetParam() && !q8only) continue;  // int8 MAXIMUM/MINIMUM need equal quantization (below), DIV: no kernel
        for (const Ints& bs : {Ints{1, 4, 4, 6}, Ints{1, 1, 1, 6}, Ints{1, 4, 1, 1}}) {
            T t(GetParam());
            t.in("a", {1, 4, 4, 6}, 0.04f, -7).in("b", bs, 0.09f, 11).out("y", {1, 4, 4, 6}, 0.07f, 2);
            t.op(op, {"a", "b"}, {{"fused_activation_function", S(q8only ? "RELU" : "NONE")}});
            EXPECT_EQ(run(t), "") << op << " b " << bs.size();
        }
    }
}

// The converter's verdict alone (the reference refuses these graphs itself, as TFLite's Prepare does).
std::string convert_error(T& t) {
    std::map<std::string, num::Tensor> inputs;
    for (size_t i = 0; i < t.graph().inputs().size(); ++i)
        inputs[t.graph().inputs()[i]] = drv::ref::random_input(t.graph().value(t.graph().inputs()[i]), 21, i);
    try {
        mcu::convert_graph(t.graph(), inputs);
    } catch (const std::exception& e) {
        return e.what();
    }
    return "";
}

// int8 MAXIMUM / MINIMUM: TFLite takes the codes when both inputs share the output's quantization
// (maximum_minimum.cc); other quantizations are refused by name.
TEST(TfliteInt8, MaximumMinimumOnSharedQuantization) {
    for (const char* op : {"MAXIMUM", "MINIMUM"})
        for (const Ints& bs : {Ints{1, 4, 4, 6}, Ints{1, 1, 1, 6}, Ints{1, 4, 1, 1}})
            for (const char* act : {"NONE", "RELU"}) {
                T t(true);
                t.in("a", {1, 4, 4, 6}, 0.05f, -7).in("b", bs, 0.05f, -7).out("y", {1, 4, 4, 6}, 0.05f, -7);
                t.op(op, {"a", "b"}, {{"fused_activation_function", S(act)}});
                EXPECT_EQ(run(t), "") << op << " b " << bs.size() << " " << act;
            }
    T t(true);
    t.in("a", {1, 4, 4, 6}, 0.05f, -7).in("b", {1, 4, 4, 6}, 0.09f, 2).out("y", {1, 4, 4, 6}, 0.05f, -7);
    t.op("MAXIMUM", {"a", "b"});
    EXPECT_NE(run(t).find("reference: "), std::string::npos);
    const std::string r = convert_error(t);
    EXPECT_NE(r.find("no MCU kernel yet"), std::string::npos) << r;
}

// int8 SUM / MEAN / REDUCE_MAX / REDUCE_MIN over adjacent axes (TFLite reduce.cc: sum of x - zx
// requantized with s_x / (s_y count); max/min on the codes with one quantization).
TEST(TfliteInt8, Reductions) {
    struct C {
        const char* op;
        Ints in, axes, out;
        float so;
        int32_t zo;
    };
    for (const C& c : {C{"SUM", {1, 4, 5, 6}, {1, 2}, {1, 6}, 0.4f, 3}, C{"SUM", {2, 3, 8}, {2}, {2, 3}, 0.2f, -4},
                       C{"MEAN", {1, 4, 5, 6}, {3}, {1, 4, 5}, 0.03f, 1}, C{"MEAN", {1, 4, 5, 6}, {1}, {1, 5, 6}, 0.04f, -2},
                       C{"MEAN", {3, 10}, {-1}, {3}, 0.02f, 0}, C{"REDUCE_MAX", {1, 4, 5, 6}, {1, 2}, {1, 6}, 0.05f, 3},
                       C{"REDUCE_MIN", {1, 4, 5, 6}, {2, 3}, {1, 4}, 0.05f, 3}, C{"REDUCE_MAX", {2, 3, 8}, {0}, {3, 8}, 0.05f, 3}}) {
        T t(true);
        t.in("x", c.in, 0.05f, 3).ints("ax", {int64_t(c.axes.size())}, std::vector<int32_t>(c.axes.begin(), c.axes.end()));
        t.out("y", c.out, c.so, c.zo);
        t.op(c.op, {"x", "ax"}, {{"keep_dims", int64_t(0)}});
        EXPECT_EQ(run(t), "") << c.op << " over " << c.axes.size() << " axes from " << c.axes[0];
    }
    T t(true);  // REDUCE_MAX into another quantization: TFLite refuses it, so does the converter
    t.in("x", {1, 4, 5, 6}, 0.05f, 3).ints("ax", {1}, {3}).out("y", {1, 4, 5}, 0.07f, 3);
    t.op("REDUCE_MAX", {"x", "ax"}, {{"keep_dims", int64_t(0)}});
    EXPECT_NE(run(t).find("reference: "), std::string::npos);
    EXPECT_NE(convert_error(t).find("no MCU kernel yet"), std::string::npos) << convert_error(t);
}

// GATHER of constant indices (any axis, repeated and scalar indices) and TILE (rank 2-4), int8 codes
// copied, against the reference's tflite GATHER / TILE; runtime indices are refused by name.
TEST_P(Ops, GatherTile) {
    struct G {
        Ints x, ishape;
        std::vector<int32_t> idx;
        int64_t axis;
        Ints y;
    };
    for (const G& c : {G{{1, 4, 5, 6}, {3}, {2, 0, 2}, 3, {1, 4, 5, 3}}, G{{6, 10}, {4}, {5, 0, 1, 5}, 0, {4, 10}},
                       G{{2, 7, 3}, {2, 2}, {6, 1, 0, 3}, 1, {2, 2, 2, 3}}, G{{2, 7, 3}, {}, {4}, -2, {2, 3}}}) {
        T t(GetParam());
        t.in("x", c.x).ints("i", c.ishape, c.idx).out("y", c.y, 0.05f, 3);
        t.op("GATHER", {"x", "i"}, {{"axis", c.axis}, {"batch_dims", int64_t(0)}});
        EXPECT_EQ(run(t), "") << "GATHER axis " << c.axis;
    }
    for (auto [xs, m] : {std::pair<Ints, std::vector<int32_t>>{{3, 5}, {2, 3}}, {{2, 3, 4}, {1, 3, 2}}, {{1, 2, 3, 4}, {2, 1, 2, 3}}}) {
        Ints ys = xs;
        for (size_t k = 0; k < xs.size(); ++k) ys[k] *= m[k];
        T t(GetParam());
        t.in("x", xs).ints("m", {int64_t(m.size())}, m).out("y", ys, 0.05f, 3);
        t.op("TILE", {"x", "m"});
        EXPECT_EQ(run(t), "") << "TILE rank " << xs.size();
    }
    T t(GetParam());
    t.in("x", {6, 10}).in("i", {2}).out("y", {2, 10}, 0.05f, 3);
    t.graph().value("i").dtype = num::DType::I32;
    t.graph().value("i").quant = {};
    t.op("GATHER", {"x", "i"}, {{"axis", int64_t(0)}});
    EXPECT_NE(convert_error(t).find("no MCU kernel yet for GATHER of runtime indices"), std::string::npos) << convert_error(t);
}

TEST_P(Ops, ArgMin) {
    // Ties resolve to the first index as TFLite's ArgMinMax (std::less); the int8 codes of seeded data repeat.
    T t(GetParam());
    t.in("x", {3, 10}).ints("ax", {}, {1}).out("y", {3}, 1.0f, 0, num::DType::I32);
    t.graph().value("y").dtype = num::DType::I32;
    t.graph().value("y").quant = {};
    t.op("ARG_MIN", {"x", "ax"});
    EXPECT_EQ(run(t), "");
}

TEST_P(Ops, Pooling) {
    for (const char* op : {"AVERAGE_POOL_2D", "MAX_POOL_2D"})
        for (const char* pad : {"SAME", "VALID"}) {
            T t(GetParam());
            const int64_t o = std::string(pad) == "SAME" ? 4 : 3;
            t.in("x", {1, 7, 7, 3}).out("y", {1, o, o, 3}, 0.05f, 3);
            t.op(op, {"x"}, {{"padding", S(pad)}, {"stride_h", int64_t(2)}, {"stride_w", int64_t(2)}, {"filter_height", int64_t(3)},
                             {"filter_width", int64_t(3)}, {"fused_activation_function", S("RELU")}});
            EXPECT_EQ(run(t), "") << op << " " << pad;
        }
}

TEST_P(Ops, MeanAndSoftmax) {
    T t(GetParam());
    t.in("x", {1, 5, 6, 8}).ints("ax", {2}, {1, 2}).out("y", {1, 1, 1, 8}, 0.01f, -2);
    t.op("MEAN", {"x", "ax"}, {{"keep_dims", int64_t(1)}});
    EXPECT_EQ(run(t), "");
    T s(GetParam());
    s.in("x", {3, 10}, 0.2f, 5).out("y", {3, 10}, 1.0f / 256, -128);
    s.op("SOFTMAX", {"x"}, {{"beta", 1.0f}});
    EXPECT_EQ(run(s), "");
}

TEST_P(Ops, Unary) {
    const std::vector<const char*> all{"RELU", "RELU6", "LOGISTIC", "TANH", "HARD_SWISH", "LEAKY_RELU", "ELU", "ABS", "NEG", "EXP",
                                       "LOG", "SQRT", "RSQRT", "SIN", "COS", "SQUARE", "FLOOR", "CEIL", "ROUND", "GELU", "RELU_N1_TO_1"};
    const std::vector<std::string> float_kernels{"RELU", "RELU6", "LOGISTIC", "TANH", "HARD_SWISH", "LEAKY_RELU", "ELU", "ABS",
                                                 "NEG", "EXP", "SQRT", "RSQRT", "SQUARE", "FLOOR", "CEIL", "ROUND", "LOG", "RELU_N1_TO_1",
                                                 "SIN", "COS", "GELU"};
    for (const char* op : all) {
        T t(GetParam());
        t.in("x", {1, 4, 4, 8}, 0.04f, 0).out("y", {1, 4, 4, 8}, 0.03f, -9);
        t.op(op, {"x"}, {{"alpha", 0.1f}});
        const std::string r = run(t);
        if (GetParam() || std::find(float_kernels.begin(), float_kernels.end(), op) != float_kernels.end())
            EXPECT_EQ(r, "") << op;
        else  // float LOG, SQRT, ...: refused by name, the same words as `npusim check`
            EXPECT_NE(r.find("no MCU kernel yet"), std::string::npos) << op << ": " << r;
    }
}

TEST_P(Ops, DataMovement) {
    const bool q = GetParam();
    auto pass = [&](T& t, const char* what) { EXPECT_EQ(run(t), "") << what; };
    {
        T t(q);
        t.in("x", {1, 3, 4, 5}).ints("s", {2}, {3, 20}).out("y", {3, 20}, 0.05f, 3);
        t.op("RESHAPE", {"x", "s"}, {{"new_shape", Ints{3, 20}}});
        pass(t, "RESHAPE");
    }
    {
        T t(q);
        t.in("a", {1, 4, 4, 3}).in("b", {1, 4, 4, 5}).out("y", {1, 4, 4, 8}, 0.05f, 3);
        t.op("CONCATENATION", {"a", "b"}, {{"axis", int64_t(3)}});
        pass(t, "CONCATENATION");
    }
    {
        T t(q);
        t.in("x", {1, 4, 4, 3}).ints("p", {4, 2}, {0, 0, 1, 2, 2, 1, 0, 3}).out("y", {1, 7, 7, 6}, 0.05f, 3);
        t.op("PAD", {"x", "p"});
        pass(t, "PAD");
    }
    {
        T t(q);
        t.in("x", {1, 4, 5, 3}).ints("p", {4}, {0, 3, 1, 2}).out("y", {1, 3, 4, 5}, 0.05f, 3);
        t.op("TRANSPOSE", {"x", "p"});
        pass(t, "TRANSPOSE");
    }
    {
        T t(q);
        t.in("x", {1, 6, 6, 4}).ints("b", {4}, {0, 1, 0, 1}).ints("e", {4}, {1, 6, 5, 4}).ints("s", {4}, {1, 2, 1, 1}).out("y", {1, 3, 5, 3}, 0.05f, 3);
        t.op("STRIDED_SLICE", {"x", "b", "e", "s"});
        pass(t, "STRIDED_SLICE");
    }
    {
        T t(q);
        t.in("x", {1, 6, 6, 4}).ints("b", {4}, {0, 2, 1, 0}).ints("n", {4}, {1, 3, -1, 2}).out("y", {1, 3, 5, 2}, 0.05f, 3);
        t.op("SLICE", {"x", "b", "n"});
        pass(t, "SLICE");
    }
}

TEST_P(Ops, SplitPackArgMaxReduce) {
    const bool q = GetParam();
    {
        T t(q);
        t.ints("ax", {}, {2}).in("x", {1, 4, 6, 3}).out("a", {1, 4, 2, 3}, 0.05f, 3).out("b", {1, 4, 2, 3}, 0.05f, 3).out("c", {1, 4, 2, 3}, 0.05f, 3);
        t.op("SPLIT", {"ax", "x"}, {{"num_splits", int64_t(3)}});
        EXPECT_EQ(run(t), "") << "SPLIT";
    }
    {
        T t(q);
        t.in("x", {2, 7}).ints("s", {2}, {3, -1}).ints("ax", {}, {1}).out("a", {2, 3}, 0.05f, 3).out("b", {2, 4}, 0.05f, 3);
        t.op("SPLIT_V", {"x", "s", "ax"});
        EXPECT_EQ(run(t), "") << "SPLIT_V";
    }
    {
        T t(q);
        t.in("x", {3, 4, 5}).out("a", {3, 5}, 0.05f, 3).out("b", {3, 5}, 0.05f, 3).out("c", {3, 5}, 0.05f, 3).out("d", {3, 5}, 0.05f, 3);
        t.op("UNPACK", {"x"}, {{"axis", int64_t(1)}, {"num", int64_t(4)}});
        EXPECT_EQ(run(t), "") << "UNPACK";
    }
    {
        T t(q);
        t.in("a", {2, 5}).in("b", {2, 5}).in("c", {2, 5}).out("y", {2, 3, 5}, 0.05f, 3);
        t.op("PACK", {"a", "b", "c"}, {{"axis", int64_t(1)}, {"values_count", int64_t(3)}});
        EXPECT_EQ(run(t), "") << "PACK";
    }
    {
        T t(q);
        t.in("x", {3, 10}).ints("ax", {}, {1}).out("y", {3}, 1.0f, 0, num::DType::I32);
        t.graph().value("y").dtype = num::DType::I32;
        t.graph().value("y").quant = {};
        t.op("ARG_MAX", {"x", "ax"});
        EXPECT_EQ(run(t), "") << "ARG_MAX";
    }
    if (!q) {
        for (const char* op : {"SUM", "REDUCE_MAX", "REDUCE_MIN"}) {
            T t(q);
            t.in("x", {1, 4, 5, 6}).ints("ax", {2}, {1, 2}).out("y", {1, 6});
            t.op(op, {"x", "ax"}, {{"keep_dims", int64_t(0)}});
            EXPECT_EQ(run(t), "") << op;
        }
        T t(q);
        t.in("x", {1, 4, 4, 6}).weight("al", {1, 1, 6}).out("y", {1, 4, 4, 6});
        t.op("PRELU", {"x", "al"});
        EXPECT_EQ(run(t), "") << "PRELU";
    }
}

TEST(TfliteQuantizeOps, QuantizeDequantizeRequantize) {
    T t(false);  // float -> int8
    t.in("x", {2, 8});
    ir::Value v;
    v.name = "y";
    v.dtype = num::DType::I8;
    v.shape = {2, 8};
    v.shape_known = true;
    v.quant.scale = {0.0071f};
    v.quant.zero_point = {4};
    t.graph().add_value(v);
    t.graph().outputs().push_back("y");
    t.op("QUANTIZE", {"x"});
    EXPECT_EQ(run(t), "");
    T d(true);  // int8 -> float, and int8 -> int8
    d.in("x", {2, 8}).out("y", {2, 8}, 1.0f, 0, num::DType::F32);
    d.graph().value("y").dtype = num::DType::F32;
    d.graph().value("y").quant = {};
    d.op("DEQUANTIZE", {"x"});
    EXPECT_EQ(run(d), "");
    T r(true);
    r.in("x", {2, 8}, 0.05f, 3).out("y", {2, 8}, 0.021f, -17);
    r.op("QUANTIZE", {"x"});
    EXPECT_EQ(run(r), "");
}

// ONNX float element-wise functions MobileNet/ResNet-style float models use (Clip = ReLU6 ...).
TEST(OnnxFloatOps, ClipSqrtFloorCeilLog) {
    for (const char* op : {"Clip", "Sqrt", "Floor", "Ceil", "Log"}) {
        T t(false, false);
        t.in("x", {1, 8, 4, 4}).out("y", {1, 8, 4, 4});
        std::vector<std::string> ins{"x"};
        if (std::string(op) == "Clip") {
            for (auto [n, v] : {std::pair<const char*, float>{"lo", 0.0f}, {"hi", 0.5f}}) {
                ir::Value c;
                c.name = n;
                c.shape_known = true;
                c.data = num::Tensor(num::DType::F32, {});
                c.data->data<float>()[0] = v;
                t.graph().add_value(c);
                ins.push_back(n);
            }
        }
        t.op(op, ins);
        EXPECT_EQ(run(t), "") << op;
    }
}

// ONNX Gelu (opset 20, erf and tanh forms) and TFLite GELU approximate on the float kernels. (ONNX
// Sin/Cos: the reference executor has no ONNX Sin/Cos, so the MCU path leaves them without a kernel.)
TEST(OnnxFloatOps, Gelu) {
    for (const char* op : {"Gelu", "GeluTanh"}) {
        T t(false, false);
        t.graph().set_opset("", 20);
        t.in("x", {1, 8, 4, 4}).out("y", {1, 8, 4, 4});
        if (std::string(op) == "GeluTanh") t.op("Gelu", {"x"}, {{"approximate", S("tanh")}});
        else t.op(op, {"x"});
        EXPECT_EQ(run(t), "") << op;
    }
    T t(false);
    t.in("x", {1, 4, 4, 8}).out("y", {1, 4, 4, 8});
    t.op("GELU", {"x"}, {{"approximate", int64_t(1)}});
    EXPECT_EQ(run(t), "") << "GELU approximate";
}

// ONNX Gather (constant int64 indices, negative ones too, NCHW axes of a rank-4 tensor stored NHWC, a
// scalar index on rank 3) and Tile against the reference executor's ONNX Gather / Tile.
TEST(OnnxFloatOps, GatherTile) {
    struct G {
        Ints x, ishape;
        std::vector<int64_t> idx;
        int64_t axis;
        Ints y;
    };
    for (const G& c : {G{{1, 6, 4, 5}, {3}, {5, 0, -1}, 1, {1, 3, 4, 5}}, G{{1, 6, 4, 5}, {2}, {3, 1}, 3, {1, 6, 4, 2}},
                       G{{1, 6, 4, 5}, {4}, {0, 3, 3, 2}, -2, {1, 6, 4, 5}}, G{{2, 7, 3}, {}, {4}, 1, {2, 3}},
                       G{{6, 10}, {2, 2}, {5, 0, 1, 5}, 0, {2, 2, 10}}}) {
        T t(false, false);
        t.in("x", c.x).out("y", c.y);
        ir::Value iv;
        iv.name = "i";
        iv.shape_known = true;
        iv.data = num::Tensor(num::DType::I64, c.ishape);
        std::copy(c.idx.begin(), c.idx.end(), iv.data->data<int64_t>());
        t.graph().add_value(iv);
        t.op("Gather", {"x", "i"}, {{"axis", c.axis}});
        EXPECT_EQ(run(t), "") << "Gather axis " << c.axis << " of rank " << c.x.size();
    }
    for (auto [xs, m] : {std::pair<Ints, std::vector<int64_t>>{{1, 3, 2, 4}, {1, 2, 3, 1}}, {{2, 3, 4}, {2, 1, 3}}}) {
        Ints ys = xs;
        for (size_t k = 0; k < xs.size(); ++k) ys[k] *= m[k];
        T t(false, false);
        t.in("x", xs).out("y", ys);
        ir::Value rv;
        rv.name = "rep";
        rv.shape_known = true;
        rv.data = num::Tensor(num::DType::I64, {int64_t(m.size())});
        std::copy(m.begin(), m.end(), rv.data->data<int64_t>());
        t.graph().add_value(rv);
        t.op("Tile", {"x", "rep"});
        EXPECT_EQ(run(t), "") << "Tile rank " << xs.size();
    }
}

// ONNX ArgMax / ArgMin over the last axis (onnxruntime's convention: int64 indices, first index on ties).
TEST(OnnxFloatOps, ArgMaxArgMin) {
    for (const char* op : {"ArgMax", "ArgMin"})
        for (int64_t keep : {0, 1}) {
            T t(false, false);
            t.in("x", {3, 2, 9});
            t.out("y", keep ? Ints{3, 2, 1} : Ints{3, 2}, 1.0f, 0, num::DType::I64);
            t.op(op, {"x"}, {{"axis", int64_t(-1)}, {"keepdims", keep}});
            EXPECT_EQ(run(t), "") << op << " keepdims " << keep;
        }
}

INSTANTIATE_TEST_SUITE_P(Tflite, Ops, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& i) { return i.param ? "int8" : "f32"; });

// Issue 23: the converter used to index before its 4-entry dims for rank > 4 (heap corruption)
// and read BatchNormalization's parameters past their end.
TEST(McuConvertRefusals, RankAboveFour) {
    ir::Graph g;
    for (const char* n : {"x", "y"}) {
        ir::Value v;
        v.name = n;
        v.shape = {1, 2, 2, 2, 2};
        v.shape_known = true;
        g.add_value(v);
    }
    g.inputs() = {"x"};
    g.outputs() = {"y"};
    ir::Node n;
    n.op_type = "Relu";
    n.name = "r";
    n.inputs = {"x"};
    n.outputs = {"y"};
    g.add_node(n);
    std::map<std::string, num::Tensor> in{{"x", num::Tensor(num::DType::F32, {1, 2, 2, 2, 2})}};
    try {
        mcu::convert_graph(g, in);
        FAIL() << "converted a rank-5 graph";
    } catch (const mcu::ConvertError& e) {
        EXPECT_NE(std::string(e.what()).find("rank 5 tensors have no MCU kernel yet"), std::string::npos) << e.what();
    }
}

TEST(McuConvertRefusals, BatchNormParametersShorterThanChannels) {
    ir::Graph g;
    auto val = [&](const char* n, Ints s, bool c) {
        ir::Value v;
        v.name = n;
        v.shape = s;
        v.shape_known = true;
        if (c) v.data = num::Tensor(num::DType::F32, s);
        g.add_value(v);
    };
    val("x", {1, 8, 2, 2}, false);
    val("y", {1, 8, 2, 2}, false);
    for (const char* p : {"s", "b", "m"}) val(p, {8}, true);
    val("v", {2}, true);  // 2 of 8 variances
    g.inputs() = {"x"};
    g.outputs() = {"y"};
    ir::Node n;
    n.op_type = "BatchNormalization";
    n.name = "bn";
    n.inputs = {"x", "s", "b", "m", "v"};
    n.outputs = {"y"};
    g.add_node(n);
    std::map<std::string, num::Tensor> in{{"x", num::Tensor(num::DType::F32, {1, 8, 2, 2})}};
    try {
        mcu::convert_graph(g, in);
        FAIL() << "converted a BatchNormalization with 2 variances for 8 channels";
    } catch (const mcu::ConvertError& e) {
        EXPECT_NE(std::string(e.what()).find("must be float32[8]"), std::string::npos) << e.what();
    }
}

}  // namespace
