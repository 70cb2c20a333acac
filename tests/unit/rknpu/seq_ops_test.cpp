// SPDX-License-Identifier: MIT
// Sequence operators (issue 15): int8 Gather with constant indices in QDQ graphs (the onnxruntime
// QDQ convention: DequantizeLinear -> Gather -> QuantizeLinear with one quantization, which
// onnxruntime runs on the quantized tensor). Compiled for RK3588 (16-channel atoms) and RK3566
// (8-channel atoms) with the vendor rules, tiling verified, run by the direct executor in isolated
// mode against the reference executor (drv::ref / num::run_op): a gather moves bytes, so every
// value must equal the reference.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <iostream>

#include "compiler/onnx/onnx_importer.h"
#include "compiler/ref/reference.h"
#include "direct/direct_exec.h"
#include "compiler/rknpu/model.h"
#include "hw/profile.h"
#include "onnx_builder.h"

namespace {

using namespace drv::rknpu;

constexpr int32_t kU8 = ::onnx::TensorProto::UINT8;
constexpr int32_t kI8 = ::onnx::TensorProto::INT8;
constexpr int32_t kF32 = ::onnx::TensorProto::FLOAT;

using test_onnx::ramp;

/// x [1,8,H,W] -> Q -> 3x3 conv to 40 channels -> c (uint8, zp 131), then on c's quantization:
///   Gather axis 1 [5, 3, 3, 17, 39, 0, 16, 8, 9, 10, 33]  -> gc  (1x1 selection conv)
///   Gather axis 2 [H-1, 0, 1, 2, 2]                        -> gh  (PPU row runs)
///   Gather axis 2 [2] then axis 3 [W-1, 0, 1, 2, 5, -1]    -> gr, gw (PPU column runs of one row)
///   Gather axis 3 [1, 0] of c (several rows)               -> gx  (CPU: no lowering)
drv::ir::Graph gather_graph(int H, int W) {
    test_onnx::ModelBuilder b(13);
    const int C = 8, K = 40;
    b.input("x", kF32, {1, C, H, W});
    b.qdq("x", "xq", "xf", "x", 0.02f, kU8, 120);
    b.dq_weight("w", {K, C, 3, 3}, ramp(static_cast<size_t>(K) * C * 9, -90, 90, 3), 0.004f, "wf");
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

/// Q^T K as a PyTorch export of [batch, channels, time] code writes it (onnxruntime QDQ, uint8):
/// xa [1,8,1,N], xb [1,8,1,M] -> Q -> 1x1 conv to K channels [-> Relu] -> a, b; then
/// MatMul(Transpose(Reshape(a, [1,K,N]), (0,2,1)), Reshape(b, [1,K,M])) -> y [1,N,M], every tensor
/// with its own Q -> DQ (the Reshape/Transpose ones with their input's parameters).
struct MmCase {
    int K, N, M;
    bool relu_a, relu_b;  // Relu before the Q: uint8 zero point 0 (device -128)
};

drv::ir::Graph matmul_graph(const MmCase& c) {
    test_onnx::ModelBuilder b(13);
    auto qdq = [&](const std::string& in, const std::string& p, float s, int z, bool fresh) {
        if (fresh) {
            b.init_f32(p + "_s", {}, {s});
            b.init_int(p + "_z", kU8, {}, {z});
        }
        b.node("QuantizeLinear", {in, p + "_s", p + "_z"}, {in + "_q"});
        b.node("DequantizeLinear", {in + "_q", p + "_s", p + "_z"}, {in + "_d"});
        return in + "_d";
    };
    auto branch = [&](const std::string& x, int w, bool relu, uint32_t seed, float os, int oz) {
        b.input(x, kF32, {1, 8, 1, w});
        const std::string xd = qdq(x, x, 0.03f, 125, true);
        b.init_int(x + "_w", kI8, {c.K, 8, 1, 1}, ramp(static_cast<size_t>(c.K) * 8, -60, 60, seed));
        b.init_f32(x + "_ws", {}, {0.01f});
        b.init_int(x + "_wz", kI8, {}, {0});
        b.node("DequantizeLinear", {x + "_w", x + "_ws", x + "_wz"}, {x + "_wf"});
        b.node("Conv", {xd, x + "_wf"}, {x + "_c"}, x + "_conv");
        std::string v = x + "_c";
        if (relu) {
            b.node("Relu", {v}, {x + "_r"});
            v = x + "_r";
        }
        return qdq(v, x + "_o", os, relu ? 0 : oz, true);
    };
    const std::string a = branch("xa", c.N, c.relu_a, 7, 0.012f, 118), bb = branch("xb", c.M, c.relu_b, 8, 0.011f, 140);
    b.init_i64("sa", {3}, {1, c.K, c.N});
    b.init_i64("sb", {3}, {1, c.K, c.M});
    b.node("Reshape", {a, "sa"}, {"ra"}, "reshape_a");
    const std::string rad = qdq("ra", "xa_o", 0, 0, false);
    auto& tr = b.node("Transpose", {rad}, {"ta"}, "transpose_a");
    test_onnx::ModelBuilder::attr_ints(tr, "perm", {0, 2, 1});
    const std::string tad = qdq("ta", "xa_o", 0, 0, false);
    b.node("Reshape", {bb, "sb"}, {"rb"}, "reshape_b");
    const std::string rbd = qdq("rb", "xb_o", 0, 0, false);
    b.node("MatMul", {tad, rbd}, {"mm"}, "matmul");
    const std::string y = qdq("mm", "y", 0.02f, 131, true);
    b.node("Identity", {y}, {"y_out"});
    b.output("y_out");
    drv::importer::ImportOptions o;
    o.qdq = drv::importer::QdqMode::Rewrite;
    const std::string bytes = b.bytes();
    return drv::importer::import_onnx_bytes(bytes.data(), bytes.size(), o, "exmatmul.onnx");
}

void check_matmul(const char* soc_name, const MmCase& c) {
    const hw::SocProfile soc = hw::load_named_profile(soc_name);
    const drv::ir::Graph g = matmul_graph(c);
    const CompiledModel m = compile_model(g, soc);
    for (const auto& problem : verify_tiling(m, soc)) ADD_FAILURE() << soc_name << ": " << problem;
    const Layer* mm = nullptr;
    for (const auto& L : m.layers)
        if (L.name == "matmul") mm = &L;
    ASSERT_NE(mm, nullptr);
    const std::string what = fmt::format("{} K {} N {} M {} relu {}/{}", soc_name, c.K, c.N, c.M, c.relu_a, c.relu_b);
    std::cout << "[exmatmul " << what << "] " << mm->op << " tasks " << mm->tasks.size() << ": " << mm->note << "\n";
    ASSERT_EQ(mm->unit, Unit::Npu) << what << ": " << mm->note;
    EXPECT_EQ(mm->op, "exMatMul");
    EXPECT_EQ(mm->macs, static_cast<uint64_t>(c.K) * c.N * c.M);
    EXPECT_EQ(mm->ir_nodes.size(), 4u) << what;  // Reshape, Transpose, Reshape, MatMul
    std::map<std::string, num::Tensor> in;
    in["xa"] = drv::ref::random_input(g.value("xa"), 3, 0);
    in["xb"] = drv::ref::random_input(g.value("xb"), 4, 0);
    const auto ref = sim::reference_values(g, in);
    sim::DirectOptions d;
    d.isolated_reference = &ref;
    const sim::DirectResult r = sim::run_direct(m, soc, in, d);
    bool seen = false;
    for (const auto& lc : r.layers) {
        const Layer& L = m.layers[lc.layer];
        if (L.name != "matmul") continue;
        seen = true;
        std::cout << "[exmatmul " << what << "] isolated: " << lc.diff.str() << "\n";
        // An exact integer sum; the output convert rounds half up where onnxruntime rounds to even.
        EXPECT_LE(lc.diff.max_diff, 1) << what << ": " << lc.diff.str();
        EXPECT_LE(lc.diff.off_by_one * 100, lc.diff.values) << what << ": " << lc.diff.str();  // ties only
    }
    EXPECT_TRUE(seen) << what;
}

// Zero points in general position, and both operands after a Relu (uint8 zero point 0: A - za up
// to 255, split in thirds; B's zero point -128 as six padding taps of 64); N > 32 (two kernel
// groups of weight blocks) with K = 48 (a half channel group); K = 20 and 40 are not whole atoms
// (rk3588: 16-channel atoms, rk3566: 8), padded with zero weights.
TEST(SeqOps, ExMatMulOfTwoActivations) {
    for (const char* soc : {"rk3588", "rk3566"}) {
        check_matmul(soc, {64, 16, 16, false, false});
        check_matmul(soc, {64, 16, 24, true, true});
        check_matmul(soc, {48, 40, 24, false, true});
        check_matmul(soc, {20, 16, 16, false, false});
        check_matmul(soc, {40, 24, 16, true, false});
    }
}

TEST(SeqOps, GatherRk3588) { check_gather("rk3588", 6, 12); }
TEST(SeqOps, GatherRk3566EightByteAtoms) { check_gather("rk3566", 5, 8); }

}  // namespace

namespace {

/// The float form of matmul_graph (no Q / DQ): compiled with CompileOptions::fp16, the exMatMul
/// pattern as fp16 (A copied channel-last into the fp16 weight blocks, a 1x1 fp16 conv over B).
drv::ir::Graph matmul_graph_f32(const MmCase& c) {
    test_onnx::ModelBuilder b(13);
    auto branch = [&](const std::string& x, int w, bool relu, uint32_t seed) {
        b.input(x, kF32, {1, 8, 1, w});
        std::vector<float> wf;
        for (int v : ramp(static_cast<size_t>(c.K) * 8, -60, 60, seed)) wf.push_back(0.01f * static_cast<float>(v));
        b.init_f32(x + "_w", {c.K, 8, 1, 1}, wf);
        b.node("Conv", {x, x + "_w"}, {x + "_c"}, x + "_conv");
        if (!relu) return x + "_c";
        b.node("Relu", {x + "_c"}, {x + "_r"});
        return x + "_r";
    };
    const std::string a = branch("xa", c.N, c.relu_a, 7), bb = branch("xb", c.M, c.relu_b, 8);
    b.init_i64("sa", {3}, {1, c.K, c.N});
    b.init_i64("sb", {3}, {1, c.K, c.M});
    b.node("Reshape", {a, "sa"}, {"ra"}, "reshape_a");
    auto& tr = b.node("Transpose", {"ra"}, {"ta"}, "transpose_a");
    test_onnx::ModelBuilder::attr_ints(tr, "perm", {0, 2, 1});
    b.node("Reshape", {bb, "sb"}, {"rb"}, "reshape_b");
    b.node("MatMul", {"ta", "rb"}, {"mm"}, "matmul");
    b.node("Identity", {"mm"}, {"y_out"});
    b.output("y_out");
    const std::string bytes = b.bytes();
    return drv::importer::import_onnx_bytes(bytes.data(), bytes.size(), {}, "exmatmul_f32.onnx");
}

void check_matmul_f16(const char* soc_name, const MmCase& c) {
    const hw::SocProfile soc = hw::load_named_profile(soc_name);
    const drv::ir::Graph g = matmul_graph_f32(c);
    CompileOptions o;
    o.fp16 = true;
    const CompiledModel m = compile_model(g, soc, o);
    for (const auto& problem : verify_tiling(m, soc)) ADD_FAILURE() << soc_name << ": " << problem;
    const Layer* mm = nullptr;
    for (const auto& L : m.layers)
        if (L.name == "matmul") mm = &L;
    ASSERT_NE(mm, nullptr);
    const std::string what = fmt::format("fp16 {} K {} N {} M {}", soc_name, c.K, c.N, c.M);
    std::cout << "[exmatmul " << what << "] " << mm->op << " tasks " << mm->tasks.size() << ": " << mm->note << "\n";
    ASSERT_EQ(mm->unit, Unit::Npu) << what << ": " << mm->note;
    EXPECT_EQ(mm->op, "exMatMul");
    EXPECT_EQ(mm->ir_nodes.size(), 4u) << what;
    std::map<std::string, num::Tensor> in;
    in["xa"] = drv::ref::random_input(g.value("xa"), 3, 0);
    in["xb"] = drv::ref::random_input(g.value("xb"), 4, 0);
    const auto ref = sim::reference_values(g, in);
    double ref_max = 0;
    const num::Tensor& want = ref.at("mm");
    for (size_t k = 0; k < want.numel(); ++k) ref_max = std::max(ref_max, std::abs(static_cast<double>(want.data<float>()[k])));
    ASSERT_GT(ref_max, 0) << what;
    sim::DirectOptions d;
    d.isolated_reference = &ref;
    const sim::DirectResult r = sim::run_direct(m, soc, in, d);
    bool seen = false;
    for (const auto& lc : r.layers) {
        if (m.layers[lc.layer].name != "matmul") continue;
        seen = true;
        std::cout << "[exmatmul " << what << "] isolated: max |diff| " << lc.diff.max_abs << " of max |y| " << ref_max
                  << "\n";
        // The fp16 path's stated tolerance (kFp16LayerRtol): A, B and Y rounded to fp16, fp32 sums.
        EXPECT_LE(lc.diff.max_abs, kFp16LayerRtol * ref_max) << what << ": " << lc.diff.str();
        EXPECT_TRUE(lc.diff.same_shape) << what;
    }
    EXPECT_TRUE(seen) << what;
}

}  // namespace

// fp16 (RK3588's fp16 path; RK3566 too): whole atoms, two kernel groups, K not whole atoms (A's
// padding lanes as the padding channels' weights).
TEST(SeqOps, ExMatMulFp16) {
    for (const char* soc : {"rk3588", "rk3566"}) {
        check_matmul_f16(soc, {64, 16, 16, false, false});
        check_matmul_f16(soc, {48, 40, 24, true, false});
        check_matmul_f16(soc, {20, 16, 16, false, true});
    }
}

/// ShuffleNet's channel shuffle as torch.onnx exports torchvision's channel_shuffle (view [1,g,C/g,
/// H,W], transpose(1, 2), view [1,C,H,W]) in onnxruntime's QDQ form (every tensor Q -> DQ with its
/// input's parameters, as quantize_static gives a Reshape / Transpose): x [1,8,H,W] -> Q -> 3x3 conv
/// to C channels -> c (uint8), then the shuffle -> s. With `spatial`, the Transpose swaps H and W
/// instead (perm (0,1,2,4,3)): not a channel permutation, so no shuffle layer may be made of it.
drv::ir::Graph shuffle_graph(int C, int g, int H, int W, bool spatial) {
    test_onnx::ModelBuilder b(13);
    b.input("x", kF32, {1, 8, H, W});
    b.qdq("x", "xq", "xf", "x", 0.02f, kU8, 120);
    b.dq_weight("w", {C, 8, 3, 3}, ramp(static_cast<size_t>(C) * 8 * 9, -90, 90, 5), 0.004f, "wf");
    auto& cv = b.node("Conv", {"xf", "wf"}, {"cf"}, "conv");
    test_onnx::ModelBuilder::attr_ints(cv, "pads", {1, 1, 1, 1});
    b.init_f32("c_s", {}, {0.05f});
    b.init_int("c_z", kU8, {}, {131});
    auto qdq = [&](const std::string& v) {
        b.node("QuantizeLinear", {v, "c_s", "c_z"}, {v + "_q"});
        b.node("DequantizeLinear", {v + "_q", "c_s", "c_z"}, {v + "_d"});
        return v + "_d";
    };
    const std::string c = qdq("cf");
    b.init_i64("s5", {5}, {1, g, C / g, H, W});
    b.init_i64("s4", {4}, {1, C, H, W});
    b.node("Reshape", {c, "s5"}, {"r5"}, "shuffle_view");
    auto& tr = b.node("Transpose", {qdq("r5")}, {"t5"}, "shuffle_transpose");
    test_onnx::ModelBuilder::attr_ints(tr, "perm", spatial ? std::vector<int64_t>{0, 1, 2, 4, 3} : std::vector<int64_t>{0, 2, 1, 3, 4});
    if (spatial) b.init_i64("s4t", {4}, {1, C, W, H});
    b.node("Reshape", {qdq("t5"), spatial ? "s4t" : "s4"}, {"s"}, "shuffle");
    b.node("Identity", {qdq("s")}, {"y"});
    b.output("y");
    drv::importer::ImportOptions o;
    o.qdq = drv::importer::QdqMode::Rewrite;
    const std::string bytes = b.bytes();
    return drv::importer::import_onnx_bytes(bytes.data(), bytes.size(), o, "shuffle.onnx");
}

void check_shuffle(const char* soc_name, int C, int g, int H, int W) {
    const hw::SocProfile soc = hw::load_named_profile(soc_name);
    const drv::ir::Graph gr = shuffle_graph(C, g, H, W, false);
    const CompiledModel m = compile_model(gr, soc);
    for (const auto& problem : verify_tiling(m, soc)) ADD_FAILURE() << soc_name << ": " << problem;
    const std::string what = fmt::format("{} C {} g {} {}x{}", soc_name, C, g, H, W);
    const Layer* sh = nullptr;
    for (const auto& L : m.layers) {
        if (L.name == "shuffle") sh = &L;
        // The view and the Transpose are inside the shuffle's layer, not layers of their own.
        EXPECT_TRUE(L.name != "shuffle_view" && L.name != "shuffle_transpose") << what << ": " << L.name << " " << L.op;
    }
    ASSERT_NE(sh, nullptr) << what;
    std::cout << "[shuffle " << what << "] " << sh->op << " tasks " << sh->tasks.size() << ": " << sh->note << "\n";
    ASSERT_EQ(sh->unit, Unit::Npu) << what << ": " << sh->note;
    EXPECT_EQ(sh->op, "ChannelShuffle");
    EXPECT_EQ(sh->ir_nodes.size(), 3u) << what;  // Reshape, Transpose, Reshape
    std::map<std::string, num::Tensor> in;
    in["x"] = drv::ref::random_input(gr.value("x"), 21, 0);
    const auto ref = sim::reference_values(gr, in);
    sim::DirectOptions d;
    d.isolated_reference = &ref;
    const sim::DirectResult r = sim::run_direct(m, soc, in, d);
    bool seen = false;
    for (const auto& lc : r.layers)
        if (m.layers[lc.layer].name == "shuffle") {
            seen = true;
            EXPECT_TRUE(lc.diff.exact()) << what << ": " << lc.diff.str();  // a permutation moves bytes
        }
    EXPECT_TRUE(seen) << what;
    // End to end: the permuted conv output, channel j = channel (j mod g) C/g + j / g (the reference
    // executor runs the three nodes); the conv's own ties aside, the same values.
    const sim::DirectResult e = sim::run_direct(m, soc, in);
    const auto want = drv::ref::execute(gr, in);
    const sim::TensorDiff df = sim::compare_tensors(e.outputs.at("y"), want.at("y"));
    EXPECT_LE(df.max_abs, 0.05 + 1e-6) << what << ": " << df.str();

    // Not a shuffle: H and W swapped by the Transpose stay where the vendor rules put them.
    const drv::ir::Graph sp = shuffle_graph(C, g, H, W, true);
    const CompiledModel ms = compile_model(sp, soc);
    for (const auto& L : ms.layers) EXPECT_NE(L.op, "ChannelShuffle") << what << " (spatial transpose)";
}

// 48 channels in 2 groups (three 16-channel atoms, six 8-channel ones), ShuffleNetV2's 24 (an atom
// and a half on rk3588), 96 in 4 groups.
TEST(SeqOps, ChannelShuffleAsOnePermutation) {
    for (const char* soc : {"rk3588", "rk3566"}) {
        check_shuffle(soc, 48, 2, 6, 7);
        check_shuffle(soc, 24, 2, 5, 9);
        check_shuffle(soc, 96, 4, 4, 4);
    }
}

namespace {

/// shuffle_graph's float form (no Q / DQ), compiled with CompileOptions::fp16: the channel shuffle
/// moves fp16 elements, so every value is the reference's rounded to fp16 (the conv before it is
/// the fp16 path's own conv).
void check_shuffle_f16(const char* soc_name, int C, int g, int H, int W) {
    test_onnx::ModelBuilder b(13);
    b.input("x", kF32, {1, 8, H, W});
    std::vector<float> wf;
    for (int v : ramp(static_cast<size_t>(C) * 8 * 9, -90, 90, 5)) wf.push_back(0.004f * static_cast<float>(v));
    b.init_f32("w", {C, 8, 3, 3}, wf);
    auto& cv = b.node("Conv", {"x", "w"}, {"c"}, "conv");
    test_onnx::ModelBuilder::attr_ints(cv, "pads", {1, 1, 1, 1});
    b.init_i64("s5", {5}, {1, g, C / g, H, W});
    b.init_i64("s4", {4}, {1, C, H, W});
    b.node("Reshape", {"c", "s5"}, {"r5"}, "shuffle_view");
    auto& tr = b.node("Transpose", {"r5"}, {"t5"}, "shuffle_transpose");
    test_onnx::ModelBuilder::attr_ints(tr, "perm", {0, 2, 1, 3, 4});
    b.node("Reshape", {"t5", "s4"}, {"s"}, "shuffle");
    b.node("Identity", {"s"}, {"y"});
    b.output("y");
    const std::string bytes = b.bytes();
    const drv::ir::Graph gr = drv::importer::import_onnx_bytes(bytes.data(), bytes.size(), {}, "shuffle_f32.onnx");
    const hw::SocProfile soc = hw::load_named_profile(soc_name);
    CompileOptions o;
    o.fp16 = true;
    const CompiledModel m = compile_model(gr, soc, o);
    for (const auto& problem : verify_tiling(m, soc)) ADD_FAILURE() << soc_name << ": " << problem;
    const std::string what = fmt::format("fp16 {} C {} g {}", soc_name, C, g);
    const Layer* sh = nullptr;
    for (const auto& L : m.layers)
        if (L.name == "shuffle") sh = &L;
    ASSERT_NE(sh, nullptr) << what;
    ASSERT_EQ(sh->unit, Unit::Npu) << what << ": " << sh->note;
    EXPECT_EQ(sh->op, "ChannelShuffle");
    std::map<std::string, num::Tensor> in;
    in["x"] = drv::ref::random_input(gr.value("x"), 22, 0);
    const auto ref = sim::reference_values(gr, in);
    sim::DirectOptions d;
    d.isolated_reference = &ref;
    const sim::DirectResult r = sim::run_direct(m, soc, in, d);
    bool seen = false;
    for (const auto& lc : r.layers) {
        if (m.layers[lc.layer].name != "shuffle") continue;
        seen = true;
        // The device input is the conv's fp16 output; a permutation adds no error: each value is
        // the reference's (the same fp16 input, permuted) to fp16's half ulp at most.
        double ref_max = 0;
        const num::Tensor& want = ref.at("s");
        for (size_t k = 0; k < want.numel(); ++k) ref_max = std::max(ref_max, std::abs(static_cast<double>(want.data<float>()[k])));
        EXPECT_LE(lc.diff.max_abs, ref_max * 0x1p-11) << what << ": " << lc.diff.str();
        EXPECT_TRUE(lc.diff.same_shape) << what;
    }
    EXPECT_TRUE(seen) << what;
}

}  // namespace

TEST(SeqOps, ChannelShuffleFp16) {
    for (const char* soc : {"rk3588", "rk3566"}) {
        check_shuffle_f16(soc, 48, 2, 6, 7);
        check_shuffle_f16(soc, 24, 2, 5, 9);
    }
}
