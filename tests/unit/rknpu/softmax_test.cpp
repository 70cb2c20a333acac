// SPDX-License-Identifier: MIT
// Issue 15, block level: Softmax on the fp16 path (model_compiler_softmax.cpp, assumption
// A-SOFTMAX-F16 in drivers/compiler/rknpu/COMPILER.md). Along W, per row of H: the PPU max over the row (one
// window, or the row seen as an a x b grid), the EW minus of that per-channel scalar, the float-path
// LUT of exp, a depthwise conv of ones for the sum and the EW div. Along C: a max tree (EW max of
// channel halves: views or 0/1 selection convs), 1x1 broadcast convs, minus, exp, a 1x1 sum conv,
// div. A float graph (ONNX Softmax, opset 13: axis -1 by default) compiled for RK3588 and RK3562
// (tiling verified), run by the direct executor in isolated mode against the reference operator
// library (num::run_op, float32 Softmax on the float32 input).
// Expectation: exp's table (LO steps of 1/16 on [-8, 8]: linear interpolation <= 2^-11 relative,
// which the division by the sum largely cancels; LE steps of 1 below, where exp < e^-8), the fp16
// roundings of x, d, e, s and y (x of tens of units: +-2^-6 absolute, up to 1.6 % on the small
// terms, the largest share of the error on sm_q) keep every value within 2^-8 x max |want|.
// RK3566_RK3568 has no Softmax (vendor rule: CPU); axis 2 is outside the seed's rule; a width that
// is no product of two PPU windows stays on the CPU with its reason.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>

#include "compiler/onnx/onnx_importer.h"
#include "compiler/ref/reference.h"
#include "direct/direct_exec.h"
#include "compiler/rknpu/model.h"
#include "hw/profile.h"
#include "onnx_builder.h"

namespace {

using namespace drv::rknpu;

constexpr int32_t kF32 = ::onnx::TensorProto::FLOAT;

/// x [1,8,3,24] -> 1x1 conv to 16 channels c -> sm_c (W 24: a 2 x 12 grid);
/// r [1,5,1,64] x 8 -> sm_r (a 4 x 16 grid; 5 channels: a partial C2 atom);
/// q [1,8,2,7] x 40 (logits of tens of units: exp's LE table and its underflow) -> sm_q;
/// z [1,8,1,37] -> sm_z (37 is prime: CPU); c along axis 2 -> sm_axis2 (CPU: the seed allows 1 or 3).
/// Along C: c (16 channels: views of whole atoms down to 8, then selection convs) -> smc_c;
/// k [1,21,5,6] x 6 (odd levels 21 -> 11 -> 6 -> 3 -> 2 -> 1) -> smc_k; v [1,1000,1,1] x 4 (a
/// classifier's scores) -> smc_v.
drv::ir::Graph graph() {
    test_onnx::ModelBuilder b(13);
    b.input("x", kF32, {1, 8, 3, 24});
    b.input("r", kF32, {1, 5, 1, 64});
    b.input("q", kF32, {1, 8, 2, 7});
    b.input("z", kF32, {1, 8, 1, 37});
    b.input("k", kF32, {1, 21, 5, 6});
    b.input("v", kF32, {1, 1000, 1, 1});
    const std::vector<int32_t> wq = test_onnx::ramp(16 * 8, -90, 90, 3);
    std::vector<float> wf(wq.size());
    for (size_t j = 0; j < wq.size(); ++j) wf[j] = 0.03f * static_cast<float>(wq[j]);
    b.init_f32("w", {16, 8, 1, 1}, wf);
    b.node("Conv", {"x", "w"}, {"c"}, "conv");
    b.init_f32("forty", {}, {40.f});
    b.node("Mul", {"q", "forty"}, {"q40"}, "scale");
    b.node("Softmax", {"c"}, {"y_c"}, "sm_c");
    b.init_f32("eight", {}, {8.f});
    b.node("Mul", {"r", "eight"}, {"r8"}, "scale_r");
    b.node("Softmax", {"r8"}, {"y_r"}, "sm_r");
    b.node("Softmax", {"q40"}, {"y_q"}, "sm_q");
    b.node("Softmax", {"z"}, {"y_z"}, "sm_z");
    auto& a2 = b.node("Softmax", {"c"}, {"y_a2"}, "sm_axis2");
    test_onnx::ModelBuilder::attr_int(a2, "axis", 2);
    b.init_f32("six", {}, {6.f});
    b.node("Mul", {"k", "six"}, {"k6"}, "scale_k");
    b.init_f32("four", {}, {4.f});
    b.node("Mul", {"v", "four"}, {"v4"}, "scale_v");
    for (const auto& [x, yv, nm] : {std::tuple{"c", "yc_c", "smc_c"}, {"k6", "yc_k", "smc_k"}, {"v4", "yc_v", "smc_v"}}) {
        auto& sc = b.node("Softmax", {x}, {yv}, nm);
        test_onnx::ModelBuilder::attr_int(sc, "axis", 1);
    }
    for (const char* y : {"y_c", "y_r", "y_q", "y_z", "y_a2", "yc_c", "yc_k", "yc_v"}) b.output(y);
    drv::importer::ImportOptions o;
    o.qdq = drv::importer::QdqMode::Keep;
    const std::string s = b.bytes();
    return drv::importer::import_onnx_bytes(s.data(), s.size(), o, "softmax_fp16.onnx");
}

const char* kLowered[] = {"sm_c", "sm_r", "sm_q", "smc_c", "smc_k", "smc_v"};

void check_soc(const char* soc_name, bool has_softmax) {
    const hw::SocProfile soc = hw::load_named_profile(soc_name);
    const drv::ir::Graph g = graph();
    CompileOptions opts;
    opts.fp16 = true;
    const CompiledModel m = compile_model(g, soc, opts);
    for (const auto& problem : verify_tiling(m, soc)) ADD_FAILURE() << soc_name << ": " << problem;
    const std::string tag = std::string("[softmax fp16 ") + soc_name + "] ";
    std::map<std::string, const Layer*> by_name;
    for (const auto& L : m.layers) {
        by_name[L.name] = &L;
        std::cout << tag << L.name << " " << L.op << " "
                  << (L.unit == Unit::Npu ? "NPU" : L.unit == Unit::Cpu ? "CPU" : "view") << " tasks " << L.tasks.size()
                  << (L.note.empty() ? "" : ": " + L.note) << "\n";
    }
    for (const char* name : {"sm_c", "sm_r", "sm_q", "sm_z", "sm_axis2", "smc_c", "smc_k", "smc_v"})
        ASSERT_TRUE(by_name.count(name)) << tag << name << " has no layer";
    if (!has_softmax) {
        for (const char* name : kLowered) {
            EXPECT_EQ(by_name.at(name)->unit, Unit::Cpu) << tag << name;
            EXPECT_EQ(by_name.at(name)->cpu_reason, CpuReason::VendorRule) << tag << name << ": " << by_name.at(name)->note;
        }
        return;
    }
    for (const char* name : kLowered) {
        const Layer& L = *by_name.at(name);
        EXPECT_EQ(L.unit, Unit::Npu) << tag << name << ": " << L.note;
        if (std::string(name).rfind("sm_", 0) != 0) continue;
        const int rows = std::string(name) == "sm_c" ? 3 : std::string(name) == "sm_r" ? 1 : 2;
        EXPECT_EQ(L.tasks.size(), static_cast<size_t>(5 * rows)) << tag << name;  // five tasks per row
    }
    EXPECT_EQ(by_name.at("sm_z")->cpu_reason, CpuReason::NoLowering);
    EXPECT_NE(by_name.at("sm_z")->note.find("not a product of two PPU windows"), std::string::npos) << by_name.at("sm_z")->note;
    // Axis 2 is outside the seed's rule (axis 1 or 3): the vendor rule's verdict.
    EXPECT_EQ(by_name.at("sm_axis2")->cpu_reason, CpuReason::VendorRule) << by_name.at("sm_axis2")->note;

    std::map<std::string, num::Tensor> in;
    size_t pos = 0;
    for (const char* x : {"x", "r", "q", "z", "k", "v"}) in[x] = drv::ref::random_input(g.value(x), 11, pos++);
    const auto ref = sim::reference_values(g, in);
    sim::DirectOptions d;
    d.isolated_reference = &ref;
    const sim::DirectResult r = sim::run_direct(m, soc, in, d);
    size_t checked = 0;
    for (const auto& c : r.layers) {
        const Layer& L = m.layers[c.layer];
        if (std::find(std::begin(kLowered), std::end(kLowered), L.name) == std::end(kLowered)) continue;
        ++checked;
        const num::Tensor& want = ref.at(L.outputs.at(0));
        double ymax = 0, row_sum_err = 0;
        for (size_t j = 0; j < want.numel(); ++j) ymax = std::max(ymax, std::fabs(static_cast<double>(want.data<float>()[j])));
        // The reference is a softmax: every row sums to 1 (a check of the comparison's input).
        const bool along_c = L.name.rfind("smc_", 0) == 0;
        const size_t Cn = static_cast<size_t>(want.dim(1)), HW = static_cast<size_t>(want.dim(2) * want.dim(3));
        const size_t rows = along_c ? HW : Cn * static_cast<size_t>(want.dim(2)), len = along_c ? Cn : static_cast<size_t>(want.dim(3));
        for (size_t r0 = 0; r0 < rows; ++r0) {
            double s = 0;
            for (size_t k = 0; k < len; ++k) s += want.data<float>()[along_c ? k * HW + r0 : r0 * len + k];
            row_sum_err = std::max(row_sum_err, std::fabs(s - 1.0));
        }
        EXPECT_LT(row_sum_err, 1e-5) << tag << L.name;
        std::cout << tag << "isolated " << L.name << ": " << c.diff.str() << "; max |got - want| " << c.diff.max_abs
                  << " of max |y| " << ymax << " = 2^" << std::log2(c.diff.max_abs / ymax) << "\n";
        EXPECT_TRUE(c.diff.same_shape) << tag << L.name;
        EXPECT_GT(ymax, 5.0 / static_cast<double>(len)) << tag << L.name;  // the rows are not uniform
        EXPECT_LE(c.diff.max_abs, std::ldexp(ymax, -8)) << tag << L.name << ": " << c.diff.str();
    }
    EXPECT_EQ(checked, std::size(kLowered)) << tag;
}

TEST(SoftmaxFp16, AlongWidthAndChannelsRk3588) { check_soc("rk3588", true); }

// Softmax-1 / -11 (before opset 13) flattens from `axis` on: along axis 1 of [1,8,3,4] it normalises
// all 96 values together, which the per-channel lowering does not compute (CPU, with the reason);
// on [1,8,1,1] the two definitions agree (NPU); the last axis is the same in both (NPU).
TEST(SoftmaxFp16, OpsetElevenAxisOneFlattens) {
    test_onnx::ModelBuilder b(11);
    b.input("a", kF32, {1, 8, 3, 4});
    b.input("v", kF32, {1, 8, 1, 1});
    for (const auto& [x, y, nm, axis] : {std::tuple{"a", "ya", "sm_flat", 1}, {"v", "yv", "sm_vec", 1}, {"a", "yw", "sm_last", 3}}) {
        auto& n = b.node("Softmax", {x}, {y}, nm);
        test_onnx::ModelBuilder::attr_int(n, "axis", axis);
        b.output(y);
    }
    drv::importer::ImportOptions o;
    o.qdq = drv::importer::QdqMode::Keep;
    const std::string bytes = b.bytes();
    const drv::ir::Graph g = drv::importer::import_onnx_bytes(bytes.data(), bytes.size(), o, "softmax11.onnx");
    CompileOptions opts;
    opts.fp16 = true;
    const CompiledModel m = compile_model(g, hw::load_named_profile("rk3588"), opts);
    std::map<std::string, const Layer*> by_name;
    for (const auto& L : m.layers) by_name[L.name] = &L;
    ASSERT_TRUE(by_name.count("sm_flat") && by_name.count("sm_vec") && by_name.count("sm_last"));
    EXPECT_EQ(by_name.at("sm_flat")->unit, Unit::Cpu);
    EXPECT_NE(by_name.at("sm_flat")->note.find("before opset 13"), std::string::npos) << by_name.at("sm_flat")->note;
    EXPECT_EQ(by_name.at("sm_vec")->unit, Unit::Npu) << by_name.at("sm_vec")->note;
    EXPECT_EQ(by_name.at("sm_last")->unit, Unit::Npu) << by_name.at("sm_last")->note;
}
TEST(SoftmaxFp16, AlongWidthAndChannelsRk3562) { check_soc("rk3562", true); }
TEST(SoftmaxFp16, VendorRuleRk3566) { check_soc("rk3566", false); }

}  // namespace
