// SPDX-License-Identifier: MIT
// Issue 21 acceptance 3 (TFLite half): every TFLite builtin configuration the MCU converter takes,
// one node at a time, int8 and float32, on seeded data: the blob run by the host build of the
// firmware's runtime and kernels (mcu_runtime_host, byte-identical to the ISS build - checked by the
// model tests) against the reference executor's tflite operators (num::run_op, TFLite arithmetic).
// int8 must be bit-exact, float32 within 1e-5 relative. Also the converter's refusals of issue 23
// (rank > 4 tensors, BatchNormalization parameters shorter than the channels).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "compiler/ref/reference.h"
#include "mcu/blob_writer.h"

namespace {

using Ints = std::vector<int64_t>;
namespace ir = drv::ir;

uint64_t g_seed = 1;
uint64_t next() {
    g_seed = g_seed * 6364136223846793005ull + 1442695040888963407ull;
    return g_seed >> 33;
}

/// A one-operator TFLite graph in the IR, quantization on the values as the importer records it.
class T {
   public:
    explicit T(bool int8, bool tflite = true) : int8_(int8), domain_(tflite ? "tflite" : "") {
        if (tflite) g_.set_opset("tflite", 3);
        else g_.set_opset("", 13);
    }
    T& in(const std::string& n, Ints s, float scale = 0.05f, int32_t zp = 3) {
        ir::Value& v = add(n, s, act_type(), false);
        if (int8_) v.quant = q(scale, zp);
        g_.inputs().push_back(n);
        return *this;
    }
    T& out(const std::string& n, Ints s, float scale = 0.08f, int32_t zp = -5, num::DType d = num::DType::F32) {
        ir::Value& v = add(n, s, int8_ && d == num::DType::F32 ? num::DType::I8 : d, false);
        if (int8_ && v.dtype == num::DType::I8) v.quant = q(scale, zp);
        g_.outputs().push_back(n);
        return *this;
    }
    /// Weights: int8 symmetric per channel along `axis` (or per tensor) in int8 graphs, else float.
    T& weight(const std::string& n, Ints s, int axis = 0, bool per_channel = true) {
        ir::Value& v = add(n, s, int8_ ? num::DType::I8 : num::DType::F32, true);
        if (int8_) {
            const int64_t ch = per_channel ? s[size_t(axis)] : 1;
            v.quant.axis = per_channel ? axis : -1;
            for (int64_t c = 0; c < ch; ++c) {
                v.quant.scale.push_back(0.01f + 0.003f * float(c));
                v.quant.zero_point.push_back(0);
            }
            for (size_t i = 0; i < v.data->numel(); ++i) v.data->data<int8_t>()[i] = int8_t(int(next() % 255) - 127);
        } else {  // float weights in [-0.5, 0.5]
            for (size_t i = 0; i < v.data->numel(); ++i) v.data->data<float>()[i] = float(int(next() % 1001) - 500) / 1000.0f;
        }
        v.data->quant = v.quant;
        return *this;
    }
    T& bias(const std::string& n, int64_t c) {
        ir::Value& v = add(n, {c}, int8_ ? num::DType::I32 : num::DType::F32, true);
        for (int64_t i = 0; i < c; ++i) {
            if (int8_) v.data->data<int32_t>()[i] = int32_t(next() % 4001) - 2000;
            else v.data->data<float>()[i] = float(int(next() % 201) - 100) / 100.0f;
        }
        return *this;
    }
    T& ints(const std::string& n, Ints s, const std::vector<int32_t>& vals) {
        ir::Value& v = add(n, s, num::DType::I32, true);
        std::memcpy(v.data->raw(), vals.data(), vals.size() * 4);
        return *this;
    }
    T& op(const std::string& op, std::vector<std::string> ins, std::vector<std::pair<std::string, num::AttrValue>> attrs = {}) {
        ir::Node n;
        n.op_type = op;
        n.domain = domain_;
        n.name = op;
        n.inputs = std::move(ins);
        n.outputs = g_.outputs();  // every graph output: multi-output ops (SPLIT, UNPACK) write them all
        for (auto& [k, v] : attrs) n.attrs.set(k, v);
        const ir::Value& o = g_.value(n.outputs[0]);
        n.attrs.set("_output_dtype", std::string(num::dtype_name(o.dtype)));
        if (!o.quant.empty()) {
            n.attrs.set("_output_scale", o.quant.scale);
            n.attrs.set("_output_zero_point", Ints(o.quant.zero_point.begin(), o.quant.zero_point.end()));
        }
        g_.add_node(std::move(n));
        return *this;
    }
    ir::Graph& graph() { return g_; }
    bool int8() const { return int8_; }

   private:
    num::DType act_type() const { return int8_ ? num::DType::I8 : num::DType::F32; }
    static num::QuantParams q(float s, int32_t z) {
        num::QuantParams p;
        p.scale = {s};
        p.zero_point = {z};
        return p;
    }
    ir::Value& add(const std::string& n, Ints s, num::DType d, bool constant) {
        ir::Value v;
        v.name = n;
        v.dtype = d;
        v.shape = s;
        v.shape_known = true;
        if (constant) v.data = num::Tensor(d, s);
        return g_.add_value(std::move(v));
    }
    bool int8_;
    std::string domain_;
    ir::Graph g_;
};

/// Reference vs host runtime of the converted blob; returns "" when they agree.
std::string run(T& t) {
    ir::Graph& g = t.graph();
    std::map<std::string, num::Tensor> inputs;
    for (size_t i = 0; i < g.inputs().size(); ++i) inputs[g.inputs()[i]] = drv::ref::random_input(g.value(g.inputs()[i]), 21, i);
    std::map<std::string, num::Tensor> ref;
    try {
        ref = drv::ref::execute(g, inputs);
    } catch (const std::exception& e) {
        return std::string("reference: ") + e.what();
    }
    mcu::Blob b;
    try {
        b = mcu::convert_graph(g, inputs);
    } catch (const std::exception& e) {
        return std::string("convert: ") + e.what();
    }
    std::string err;
    const auto outs = mcu::run_blob_on_host(b, err);
    if (!err.empty()) return "host runtime: " + err;
    for (size_t k = 0; k < b.outputs.size(); ++k) {
        const num::Tensor got = mcu::output_tensor(b.outputs[k], outs[k]);
        const num::Tensor& want = ref.at(b.outputs[k].value);
        if (got.nbytes() != want.nbytes()) return "size differs";
        size_t bad = 0;
        for (size_t i = 0; i < want.numel(); ++i) {
            if (want.dtype() == num::DType::F32) {
                const float a = got.data<float>()[i], w = want.data<float>()[i];
                if (!(std::fabs(a - w) <= 1e-5f * std::max(1.0f, std::fabs(w))) && !(std::isnan(a) && std::isnan(w))) ++bad;
            } else if (std::memcmp(got.raw() + i * num::dtype_size(want.dtype()), want.raw() + i * num::dtype_size(want.dtype()),
                                   num::dtype_size(want.dtype())) != 0) {
                ++bad;
            }
        }
        if (bad) return std::to_string(bad) + " of " + std::to_string(want.numel()) + " values differ";
    }
    return "";
}

using A = std::vector<std::pair<std::string, num::AttrValue>>;
std::string S(const char* s) { return s; }

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
        if (GetParam() && !q8only) continue;  // int8 MAXIMUM/MINIMUM need equal quantization, DIV: no kernel
        for (const Ints& bs : {Ints{1, 4, 4, 6}, Ints{1, 1, 1, 6}, Ints{1, 4, 1, 1}}) {
            T t(GetParam());
            t.in("a", {1, 4, 4, 6}, 0.04f, -7).in("b", bs, 0.09f, 11).out("y", {1, 4, 4, 6}, 0.07f, 2);
            t.op(op, {"a", "b"}, {{"fused_activation_function", S(q8only ? "RELU" : "NONE")}});
            EXPECT_EQ(run(t), "") << op << " b " << bs.size();
        }
    }
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
                                                 "NEG", "EXP", "SQRT", "RSQRT", "SQUARE", "FLOOR", "CEIL", "ROUND", "LOG"};
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
