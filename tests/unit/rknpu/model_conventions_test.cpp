// SPDX-License-Identifier: MIT
// Producer conventions (issue 13): the tiny, plain, preact and MobileNetV2 nets as onnxruntime (QDQ uint8 /
// int8, QOperator), PyTorch FX and TensorRT-style explicit quantization write them
// (tools/zoo/conventions.py), compiled for RK3588 and RK3566 and run by the direct executor in isolated
// mode: every NPU layer within 1 LSB of its reference nodes (the unit's own DQ -> op -> Q as
// onnxruntime runs it), and as many layers off the CPU (NPU layers + views: a concat whose inputs share
// the output's quantization is a view, one that requantizes an NPU copy) as the onnxruntime-QDQ form
// of the same net, with task windows that pass verify_tiling. TensorRT-style nets end in a float op (no
// output quantizer): the int8 conv / Gemm with an fp16 output (ConvOp::float_out) is the NPU layer the
// QDQ form's head conv is, within kFloatOutLayerRtol x max |reference| of its DQ -> Conv / Gemm.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "compiler/model_loader.h"
#include "compiler/ref/reference.h"
#include "direct/direct_exec.h"
#include "compiler/rknpu/model.h"
#include "hw/profile.h"

namespace {

using namespace drv::rknpu;
using namespace sim;  // the direct executor (sim/direct)

drv::ir::Graph load(const std::string& path) {
    drv::importer::ImportOptions io;
    io.qdq = drv::importer::QdqMode::Rewrite;
    io.ort_cpu = drv::importer::OrtCpu::X86_64;  // as npusim run imports
    return drv::importer::load_model(path, io);
}

size_t npu_layers(const CompiledModel& m) {
    size_t k = 0;
    for (const auto& L : m.layers) k += L.unit == Unit::Npu;
    return k;
}

size_t off_cpu(const CompiledModel& m) {
    size_t k = 0;
    for (const auto& L : m.layers) k += L.unit != Unit::Cpu;
    return k;
}

/// Resize layers the SoC's operator rules keep on the CPU: the PyTorch FX and TensorRT-style nets
/// write nearest upsampling as PyTorch exports it (asymmetric, floor), which the RKNN seed's Resize
/// rule does not list; the ort_qdq net's default (half_pixel, round_prefer_floor) runs on the NPU.
size_t seed_cpu_resizes(const CompiledModel& m) {
    size_t k = 0;
    for (const auto& L : m.layers) k += L.unit == Unit::Cpu && L.op == "Resize" && L.cpu_reason == CpuReason::VendorRule;
    return k;
}

/// NPU layers writing an fp16 tensor from int8 inputs: int8 convs with a float output.
size_t float_out_layers(const CompiledModel& m) {
    size_t k = 0;
    for (const auto& L : m.layers) {
        if (L.unit != Unit::Npu || L.outputs.empty()) continue;
        auto t = m.tensors.find(L.outputs[0]);
        k += t != m.tensors.end() && t->second.fp16;
    }
    return k;
}

struct Case {
    std::string net, soc;
};

class Conventions : public ::testing::TestWithParam<Case> {};

TEST_P(Conventions, SameNpuLayersAndWithinOneLsb) {
    const Case c = GetParam();
    const std::string dir = NPUSIM_TEST_CONV_DIR;
    const std::string base = dir + "/" + c.net + (c.net == "mobilenetv2" ? "_qdq.onnx" : "_ort_qdq.onnx");
    if (!std::filesystem::exists(base)) GTEST_SKIP() << base << " not generated";
    const hw::SocProfile soc = hw::load_named_profile(c.soc);
    const size_t want = off_cpu(compile_model(load(base), soc));
    for (const std::string conv : {"ort_qdq_s8", "ort_qoperator", "pytorch_fx", "tensorrt"}) {
        const bool zoo_name = c.net == "mobilenetv2" && conv == "ort_qdq_s8";  // make_zoo's <model>_qdq_s8
        const std::string path = dir + "/" + c.net + "_" + (zoo_name ? std::string("qdq_s8") : conv) + ".onnx";
        ASSERT_TRUE(std::filesystem::exists(path)) << path;
        SCOPED_TRACE(path + " on " + c.soc);
        drv::ir::Graph g = load(path);
        std::map<std::string, num::Tensor> in;
        for (size_t k = 0; k < g.inputs().size(); ++k)
            in[g.inputs()[k]] = drv::ref::random_input(g.value(g.inputs()[k]), 7, k);
        CompileOptions co;
        co.keep_all_tensors = true;
        const CompiledModel m = compile_model(std::move(g), soc, co);
        EXPECT_EQ(off_cpu(m) + seed_cpu_resizes(m), want) << conv;
        if (conv == "tensorrt") {
            EXPECT_GE(float_out_layers(m), 1u) << "the float head is an NPU layer";
        }
        // The task windows verify in every convention: a fused int8-activation unit (ort_qdq_s8,
        // TensorRT-style: DQ -> Conv -> Q that onnxruntime runs in float) keeps its Conv's kernel
        // geometry (MobileNetV2's strided convs: halo rows, every-other-row CBUF loads).
        for (const std::string& p : verify_tiling(m, soc)) ADD_FAILURE() << conv << " tiling: " << p;
        const auto ref = reference_values(m.graph, in);
        DirectOptions o;
        o.isolated_reference = &ref;
        const DirectResult r = run_direct(m, soc, in, o);
        EXPECT_EQ(r.layers.size(), npu_layers(m));
        for (const auto& lc : r.layers) {
            const Layer& L = m.layers[lc.layer];
            EXPECT_LE(lc.diff.max_diff, 1) << conv << " layer " << L.name << ": " << lc.diff.str();
            auto t = m.tensors.find(L.outputs.at(0));
            if (t == m.tensors.end() || !t->second.fp16) continue;
            // A float output: the direct executor counts any difference as "worse" and reports max |diff|.
            double peak = 0;
            const num::Tensor& y = ref.at(L.outputs[0]);
            for (size_t k = 0; k < y.numel(); ++k) peak = std::max(peak, std::fabs(double(y.data<float>()[k])));
            EXPECT_GT(peak, 0.0);
            EXPECT_LE(lc.diff.max_abs, kFloatOutLayerRtol * peak) << conv << " float-output layer " << L.name;
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Nets, Conventions,
                         ::testing::Values(Case{"tiny", "rk3588"}, Case{"plain", "rk3588"}, Case{"tiny", "rk3566"},
                                           Case{"plain", "rk3566"}, Case{"preact", "rk3588"}, Case{"preact", "rk3566"},
                                           Case{"mobilenetv2", "rk3588"}, Case{"mobilenetv2", "rk3566"}),
                         [](const ::testing::TestParamInfo<Case>& i) { return i.param.net + "_" + i.param.soc; });

}  // namespace
