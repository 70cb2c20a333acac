// SPDX-License-Identifier: MIT
// Model-level folds of issue 13 that the zoo conventions exercise, on small in-memory graphs:
// - TensorRT-style network heads (TensorRT explicit quantization as NVIDIA pytorch-quantization
//   exports it: symmetric int8 Q -> DQ on the op's inputs, per-channel weight Q -> DQ on axis 0, float
//   bias, no quantizer on the output): DequantizeLinear x, DequantizeLinear w -> Conv / Gemm -> float
//   graph output is one NPU layer with an fp16 output (ConvOp::float_out), within
//   kFloatOutLayerRtol x max |reference| of the reference nodes, on RK3588 and RK3566;
// - weight scales along an axis that is not the op's output channels are not folded (the lowerings
//   read one scale per output channel);
// - a nearest Resize unit whose DQ is int8 and whose Q is uint8 of the same device quantization (what
//   onnxruntime's x86 int8 rule leaves of an int8 QDQ model) runs on the NPU, exactly.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "compiler/onnx/onnx_importer.h"
#include "compiler/ref/reference.h"
#include "direct/direct_exec.h"
#include "compiler/rknpu/model.h"
#include "hw/profile.h"
#include "onnx_builder.h"

namespace {

using namespace drv::rknpu;
using namespace sim;

constexpr int32_t kU8 = ::onnx::TensorProto::UINT8;
constexpr int32_t kI8 = ::onnx::TensorProto::INT8;
constexpr int32_t kF32 = ::onnx::TensorProto::FLOAT;

std::vector<float> wave(size_t n, float lo, float hi, uint32_t seed) {
    std::vector<float> v(n);
    uint32_t s = seed;
    for (auto& x : v) {
        s = s * 1664525u + 1013904223u;
        x = lo + (hi - lo) * static_cast<float>((s >> 8) & 0xffff) / 65535.0f;
    }
    return v;
}

drv::ir::Graph import(const test_onnx::ModelBuilder& b, const std::string& name) {
    drv::importer::ImportOptions io;
    io.qdq = drv::importer::QdqMode::Rewrite;
    io.ort_cpu = drv::importer::OrtCpu::X86_64;  // as npusim run imports
    const std::string s = b.bytes();
    return drv::importer::import_onnx_bytes(s.data(), s.size(), io, name);
}

/// Symmetric int8 input quantizer (TensorRT style) of float tensor `x`.
std::string trt_input(test_onnx::ModelBuilder& b, const std::string& x, float amax) {
    b.init_f32(x + "_s", {}, {amax / 127.0f});
    b.init_int(x + "_z", kI8, {}, {0});
    b.node("QuantizeLinear", {x, x + "_s", x + "_z"}, {x + "_q"});
    b.node("DequantizeLinear", {x + "_q", x + "_s", x + "_z"}, {x + "_dq"});
    return x + "_dq";
}

/// Float weights -> per-channel (axis `axis`) symmetric int8 Q -> DQ.
std::string trt_weight(test_onnx::ModelBuilder& b, const std::string& w, const std::vector<int64_t>& dims, int axis) {
    size_t n = 1;
    for (int64_t d : dims) n *= static_cast<size_t>(d);
    const std::vector<float> v = wave(n, -0.5f, 0.5f, 7);
    const int64_t ch = dims[static_cast<size_t>(axis)];
    b.init_f32(w, dims, v);
    b.init_f32(w + "_s", {ch}, wave(static_cast<size_t>(ch), 0.5f / 127, 2.0f / 127, 9));
    b.init_int(w + "_z", kI8, {ch}, std::vector<int32_t>(static_cast<size_t>(ch), 0));
    auto& q = b.node("QuantizeLinear", {w, w + "_s", w + "_z"}, {w + "_q"});
    test_onnx::ModelBuilder::attr_int(q, "axis", axis);
    auto& d = b.node("DequantizeLinear", {w + "_q", w + "_s", w + "_z"}, {w + "_dq"});
    test_onnx::ModelBuilder::attr_int(d, "axis", axis);
    return w + "_dq";
}

/// x [1,32,12,12] -> TensorRT head conv 3x3 (45 channels, float bias) -> y_conv, and GAP -> Flatten
/// -> TensorRT Gemm (transB = 1, 32 -> 10) -> y_fc: two float graph outputs no quantizer reads.
/// With `acts`: a Clip(0, 6) (ReLU6, the Clip the vendor rule takes) after the conv, before its float
/// output (the vendor rules keep a Relu / Clip of a rank-2 tensor, the Gemm's, on the CPU)
/// (DQ -> Conv -> Relu with no Q after it).
drv::ir::Graph head_graph(int conv_weight_axis, bool acts = false) {
    test_onnx::ModelBuilder b(13);
    b.input("x", kF32, {1, 32, 12, 12});
    const std::string xc = trt_input(b, "x", 1.0f);
    const std::string wc = trt_weight(b, "wc", {45, 32, 3, 3}, conv_weight_axis);
    b.init_f32("bc", {45}, wave(45, -0.3f, 0.3f, 11));
    auto& cv = b.node("Conv", {xc, wc, "bc"}, {acts ? "y_conv_pre" : "y_conv"}, "head_conv");
    test_onnx::ModelBuilder::attr_ints(cv, "pads", {1, 1, 1, 1});
    if (acts) {
        b.init_f32("c_lo", {}, {0.0f});
        b.init_f32("c_hi", {}, {6.0f});
        b.node("Clip", {"y_conv_pre", "c_lo", "c_hi"}, {"y_conv"}, "head_clip");
    }
    b.output("y_conv");
    b.node("GlobalAveragePool", {"x"}, {"g"});
    b.node("Flatten", {"g"}, {"gf"});
    const std::string xf = trt_input(b, "gf", 0.6f);
    const std::string wf = trt_weight(b, "wf", {10, 32}, 0);
    b.init_f32("bf", {10}, wave(10, -0.3f, 0.3f, 13));
    auto& gm = b.node("Gemm", {xf, wf, "bf"}, {"y_fc"}, "head_fc");
    test_onnx::ModelBuilder::attr_int(gm, "transB", 1);
    b.output("y_fc");
    return import(b, "trt_heads.onnx");
}

const Layer* layer(const CompiledModel& m, const std::string& name) {
    for (const auto& L : m.layers)
        if (L.name == name) return &L;
    return nullptr;
}

void expect_heads_on_npu(bool acts) {
    const drv::ir::Graph g = head_graph(0, acts);
    for (const char* soc_name : {"rk3588", "rk3566"}) {
        SCOPED_TRACE(soc_name);
        const hw::SocProfile soc = hw::load_named_profile(soc_name);
        CompileOptions co;
        co.keep_all_tensors = true;
        const CompiledModel m = compile_model(g, soc, co);
        for (const char* head : {"head_conv", "head_fc"}) {
            const Layer* L = layer(m, head);
            ASSERT_NE(L, nullptr) << head;
            EXPECT_EQ(L->unit, Unit::Npu) << head << ": " << L->note;
            // DQ x, DQ w, the op (the weight Q is folded at import) [, the Relu / Clip]
            EXPECT_EQ(L->ir_nodes.size(), acts && std::string(head) == "head_conv" ? 4u : 3u) << head;
            ASSERT_TRUE(m.tensors.count(L->outputs.at(0)));
            EXPECT_TRUE(m.tensors.at(L->outputs[0]).fp16) << head;
        }
        std::map<std::string, num::Tensor> in;
        in["x"] = drv::ref::random_input(g.value("x"), 5, 0);
        const auto ref = reference_values(m.graph, in);
        DirectOptions o;
        o.isolated_reference = &ref;
        const DirectResult r = run_direct(m, soc, in, o);
        size_t checked = 0;
        for (const auto& lc : r.layers) {
            const Layer& L = m.layers[lc.layer];
            if (L.name != "head_conv" && L.name != "head_fc") continue;
            const num::Tensor& want = ref.at(L.outputs.at(0));
            double peak = 0;
            for (size_t k = 0; k < want.numel(); ++k) peak = std::max(peak, std::fabs(double(want.data<float>()[k])));
            EXPECT_GT(peak, 0.1) << L.name;
            EXPECT_GT(lc.diff.values, 0u);
            EXPECT_LE(lc.diff.max_abs, kFloatOutLayerRtol * peak) << L.name << ": peak " << peak;
            ++checked;
        }
        EXPECT_EQ(checked, 2u);
        if (!acts) continue;
        for (const auto& L : m.layers)
            EXPECT_NE(L.name, "head_clip") << "a layer of its own: " << L.note;
        // The clamps are in the layer: outputs at the bounds (0, and 6 for the Clip) as the reference's.
        size_t at_bound = 0;
        const num::Tensor& want = ref.at("y_conv");
        for (size_t k = 0; k < want.numel(); ++k) at_bound += want.data<float>()[k] == 0.0f || want.data<float>()[k] == 6.0f;
        EXPECT_GT(at_bound, want.numel() / 4);
    }
}

TEST(FloatHead, TensorRtConvAndGemmHeadsRunOnTheNpuInFp16) { expect_heads_on_npu(false); }

// TensorRT style: a Relu / Clip between the head conv and the float output (no Q after it) is fused
// into the float-output layer (the DPU float path's BN ReLU / RELUX, BN ALU max, EW ALU min); it was a CPU
// layer on the fp16 tensor ("no NPU lowering yet for float Relu").
TEST(FloatHead, ReluAndClipOnTheFloatOutputAreFused) { expect_heads_on_npu(true); }

TEST(FloatHead, WeightScalesAlongAnotherAxisAreNotFolded) {
    // Per-channel scales along the Conv weight's input-channel axis (1): not one scale per output
    // channel, so no fused unit; the Conv runs on the CPU as onnxruntime runs it (float).
    const drv::ir::Graph g = head_graph(1);
    const CompiledModel m = compile_model(g, hw::load_named_profile("rk3588"));
    const Layer* L = layer(m, "head_conv");
    ASSERT_NE(L, nullptr);
    EXPECT_EQ(L->unit, Unit::Cpu);
    EXPECT_EQ(L->ir_nodes.size(), 1u);
    EXPECT_EQ(layer(m, "head_fc")->unit, Unit::Npu);
}

TEST(FloatHead, Int8DqUint8QResizeUnitIsExactOnTheNpu) {
    // onnxruntime's QDQ int8 form (activation_type QInt8, zero points -128): x -> Q -> DQ -> Conv ->
    // Q -> DQ -> Resize nearest x2 -> Q -> DQ, the conv's Q read by two DQs. Imported as onnxruntime's
    // x86-64 CPU EP runs it, the int8 Conv unit stays in float with its int8 Q, while the Resize's Q
    // becomes uint8 (zero point 0):
    // DQ int8 (z -128) -> Resize -> Q uint8 (z 0), the same device bytes, folds into the int8 resize.
    test_onnx::ModelBuilder b(13);
    b.input("x", kF32, {1, 8, 5, 6});
    b.init_f32("xs", {}, {0.02f});
    b.init_f32("s", {}, {0.03f});
    b.init_int("z8", kI8, {}, {-128});
    b.node("QuantizeLinear", {"x", "xs", "z8"}, {"xq"});
    b.node("DequantizeLinear", {"xq", "xs", "z8"}, {"xf"});
    std::vector<int32_t> w(24 * 8);
    for (size_t k = 0; k < w.size(); ++k) w[k] = static_cast<int32_t>((k * 37) % 181) - 90;
    b.init_int("w", kI8, {24, 8, 1, 1}, w);
    b.init_f32("ws", {}, {0.004f});
    b.init_int("wz", kI8, {}, {0});
    b.node("DequantizeLinear", {"w", "ws", "wz"}, {"wf"});
    b.node("Conv", {"xf", "wf"}, {"cf"}, "conv");
    b.node("QuantizeLinear", {"cf", "s", "z8"}, {"cq"});
    b.node("DequantizeLinear", {"cq", "s", "z8"}, {"cd"});
    b.node("DequantizeLinear", {"cq", "s", "z8"}, {"y_conv"});  // a second reader (YOLOv5s: the PAN concat)
    b.output("y_conv");
    b.init_f32("scales", {4}, {1.f, 1.f, 2.f, 2.f});
    auto& rs = b.node("Resize", {"cd", "", "scales"}, {"rf"}, "resize");
    auto* a = rs.add_attribute();
    a->set_name("mode");
    a->set_type(::onnx::AttributeProto::STRING);
    a->set_s("nearest");
    b.node("QuantizeLinear", {"rf", "s", "z8"}, {"rq"});
    b.node("DequantizeLinear", {"rq", "s", "z8"}, {"y"});
    b.output("y");
    const drv::ir::Graph g = import(b, "resize_s8u8.onnx");
    for (const char* soc_name : {"rk3588", "rk3566"}) {
        const hw::SocProfile soc = hw::load_named_profile(soc_name);
        CompileOptions co;
        co.keep_all_tensors = true;
        const CompiledModel m = compile_model(g, soc, co);
        const Layer* L = layer(m, "resize");
        ASSERT_NE(L, nullptr);
        EXPECT_EQ(L->unit, Unit::Npu) << soc_name << ": " << L->note;
        ASSERT_EQ(L->inputs.size(), 1u);
        EXPECT_EQ(g.value(L->inputs[0]).dtype, num::DType::I8);  // the mismatch this test is about
        EXPECT_EQ(g.value(L->outputs.at(0)).dtype, num::DType::U8);
        std::map<std::string, num::Tensor> in;
        in["x"] = drv::ref::random_input(g.value("x"), 3, 0);
        const auto ref = reference_values(m.graph, in);
        DirectOptions o;
        o.isolated_reference = &ref;
        const DirectResult r = run_direct(m, soc, in, o);
        bool seen = false;
        for (const auto& lc : r.layers) {
            if (m.layers[lc.layer].name != "resize") continue;
            seen = true;
            EXPECT_EQ(lc.diff.max_diff, 0) << soc_name << ": " << lc.diff.str();
            EXPECT_EQ(lc.diff.values, lc.diff.equal);
        }
        EXPECT_TRUE(seen);
    }
}

}  // namespace
