// SPDX-License-Identifier: MIT
// Sequence operators (issue 15): int8 Gather with constant indices in QDQ graphs (the onnxruntime
// QDQ convention: DequantizeLinear -> Gather -> QuantizeLinear with one quantization, which
// onnxruntime runs on the quantized tensor). Compiled for RK3588 (16-channel atoms) and RK3566
// (8-channel atoms) with the vendor rules, tiling verified, run by the direct executor in isolated
// mode against the reference executor (drv::ref / num::run_op): a gather moves bytes, so every
// value must equal the reference.
#include <gtest/gtest.h>

#include <iostream>

#include "compiler/onnx/onnx_importer.h"
#include "compiler/ref/reference.h"
#include "direct/direct_exec.h"
#include "drv/rknpu/model.h"
#include "hw/profile.h"
#include "onnx_builder.h"

namespace {

using namespace drv::rknpu;

constexpr int32_t kU8 = ::onnx::TensorProto::UINT8;
constexpr int32_t kI8 = ::onnx::TensorProto::INT8;
constexpr int32_t kF32 = ::onnx::TensorProto::FLOAT;

std::vector<int32_t> ramp(size_t n, int lo, int hi, uint32_t seed) {
    std::vector<int32_t> v(n);
    uint32_t s = seed;
    for (auto& x : v) {
        s = s * 1664525u + 1013904223u;
        x = lo + static_cast<int>((s >> 8) % static_cast<uint32_t>(hi - lo + 1));
    }
    return v;
}

/// x [1,8,H,W] -> Q -> 3x3 conv to 40 channels -> c (uint8, zp 131), then on c's quantization:
///   Gather axis 1 [5, 3, 3, 17, 39, 0, 16, 8, 9, 10, 33]  -> gc  (1x1 selection conv)
///   Gather axis 2 [H-1, 0, 1, 2, 2]                        -> gh  (PPU row runs)
///   Gather axis 2 [2] then axis 3 [W-1, 0, 1, 2, 5, -1]    -> gr, gw (PPU column runs of one row)
///   Gather axis 3 [1, 0] of c (several rows)               -> gx  (CPU: no lowering)
drv::ir::Graph gather_graph(int H, int W) {
    test_onnx::ModelBuilder b(13);
    const int C = 8, K = 40;
    b.input("x", kF32, {1, C, H, W});
    b.init_f32("x_s", {}, {0.02f});
    b.init_int("x_z", kU8, {}, {120});
    b.node("QuantizeLinear", {"x", "x_s", "x_z"}, {"xq"});
    b.node("DequantizeLinear", {"xq", "x_s", "x_z"}, {"xf"});
    b.init_int("w", kI8, {K, C, 3, 3}, ramp(static_cast<size_t>(K) * C * 9, -90, 90, 3));
    b.init_f32("w_s", {}, {0.004f});
    b.init_int("w_z", kI8, {}, {0});
    b.node("DequantizeLinear", {"w", "w_s", "w_z"}, {"wf"});
    auto& cv = b.node("Conv", {"xf", "wf"}, {"cf"}, "conv");
    test_onnx::ModelBuilder::attr_ints(cv, "pads", {1, 1, 1, 1});
    b.init_f32("c_s", {}, {0.05f});
    b.init_int("c_z", kU8, {}, {131});
    b.node("QuantizeLinear", {"cf", "c_s", "c_z"}, {"c"});
    int k = 0;
    auto gather = [&](const std::string& name, const std::string& src, int axis, std::vector<int64_t> idx) {
        const std::string d = name + "_in" + std::to_string(k++);
        b.node("DequantizeLinear", {src, "c_s", "c_z"}, {d});
        b.init_i64(name + "_i", {static_cast<int64_t>(idx.size())}, idx);
        auto& g = b.node("Gather", {d, name + "_i"}, {name + "f"}, name);
        test_onnx::ModelBuilder::attr_int(g, "axis", axis);
        b.node("QuantizeLinear", {name + "f", "c_s", "c_z"}, {name});
        b.node("DequantizeLinear", {name, "c_s", "c_z"}, {"y_" + name});
    };
    gather("gc", "c", 1, {5, 3, 3, 17, 39, 0, 16, 8, 9, 10, 33});
    gather("gh", "c", 2, {H - 1, 0, 1, 2, 2});
    gather("gr", "c", 2, {2});
    gather("gw", "gr", 3, {W - 1, 0, 1, 2, 5, -1});
    gather("gx", "c", 3, {1, 0});
    for (const char* o : {"y_gc", "y_gh", "y_gw", "y_gx"}) b.output(o);
    drv::importer::ImportOptions o;
    o.qdq = drv::importer::QdqMode::Rewrite;
    const std::string s = b.bytes();
    return drv::importer::import_onnx_bytes(s.data(), s.size(), o, "gather.onnx");
}

void check_gather(const char* soc_name, int H, int W) {
    const hw::SocProfile soc = hw::load_named_profile(soc_name);
    const drv::ir::Graph g = gather_graph(H, W);
    const CompiledModel m = compile_model(g, soc);
    for (const auto& problem : verify_tiling(m, soc)) ADD_FAILURE() << soc_name << ": " << problem;
    std::map<std::string, const Layer*> by_name;
    for (const auto& L : m.layers) {
        by_name[L.name] = &L;
        std::cout << "[gather " << soc_name << "] " << L.name << " " << L.op << " "
                  << (L.unit == Unit::Npu ? "NPU" : L.unit == Unit::Cpu ? "CPU" : "view") << " tasks "
                  << L.tasks.size() << (L.note.empty() ? "" : ": " + L.note) << "\n";
    }
    // Two runs of rows (H-1; 0..2) plus the repeated row 2: 3 PPU tasks; columns (W-1; 0..2; 5; W-1): 4,
    // except with 8-byte atoms (RK3566), where a column start of one atom is not the 16-byte aligned
    // address the PPU's destination needs (the layer falls back, saying so).
    const bool atom16 = soc.npu.c2_int8.value == 16;
    const std::map<std::string, std::pair<Unit, size_t>> want{{"gc", {Unit::Npu, 0}},
                                                              {"gh", {Unit::Npu, 3}},
                                                              {"gr", {Unit::Npu, 1}},
                                                              {"gw", {atom16 ? Unit::Npu : Unit::Cpu, atom16 ? 4 : 0}},
                                                              {"gx", {Unit::Cpu, 0}}};
    for (const auto& [name, w] : want) {
        ASSERT_TRUE(by_name.count(name)) << name;
        const Layer& L = *by_name.at(name);
        EXPECT_EQ(L.unit, w.first) << soc_name << " " << name << ": " << L.note;
        if (w.second) {
            EXPECT_EQ(L.tasks.size(), w.second) << soc_name << " " << name;
        }
    }
    EXPECT_EQ(by_name.at("gx")->cpu_reason, CpuReason::NoLowering);
    if (!atom16) {
        EXPECT_NE(by_name.at("gw")->note.find("16-byte aligned"), std::string::npos) << by_name.at("gw")->note;
    }
    std::map<std::string, num::Tensor> in;
    in["x"] = drv::ref::random_input(g.value("x"), 11, 0);
    const auto ref = sim::reference_values(g, in);
    sim::DirectOptions d;
    d.isolated_reference = &ref;
    const sim::DirectResult r = sim::run_direct(m, soc, in, d);
    size_t checked = 0;
    for (const auto& c : r.layers) {
        const Layer& L = m.layers[c.layer];
        std::cout << "[gather " << soc_name << "] isolated " << L.name << " (" << L.op << "): " << c.diff.str() << "\n";
        if (L.op == "Gather") {
            EXPECT_TRUE(c.diff.exact()) << soc_name << " " << L.name << ": " << c.diff.str();
            ++checked;
        }
    }
    EXPECT_EQ(checked, atom16 ? 4u : 3u) << soc_name;
    // End to end: the gathers add nothing to the conv before them.
    const sim::DirectResult e = sim::run_direct(m, soc, in);
    const auto want_out = drv::ref::execute(g, in);
    for (const char* name : {"y_gc", "y_gh", "y_gw", "y_gx"}) {
        const sim::TensorDiff df = sim::compare_tensors(e.outputs.at(name), want_out.at(name));
        EXPECT_LE(df.max_abs, 0.05 + 1e-6) << soc_name << " " << name << ": " << df.str();  // the conv's tie
    }
}

TEST(SeqOps, GatherRk3588) { check_gather("rk3588", 6, 12); }
TEST(SeqOps, GatherRk3566EightByteAtoms) { check_gather("rk3566", 5, 8); }

}  // namespace
