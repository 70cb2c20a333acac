// SPDX-License-Identifier: MIT
// Data-movement lowerings (issue 15): int8 Split, Slice and nearest Resize in QDQ graphs (the
// onnxruntime QDQ convention: DequantizeLinear -> op -> QuantizeLinear with the same quantization,
// which onnxruntime runs on the quantized tensor). Compiled for RK3588 (16-channel atoms) and
// RK3566 (8-channel atoms), run by the direct executor in isolated mode (every NPU layer fed the
// reference executor's inputs, drv::ref / num::run_op) and end to end. Data movement must be
// exact: every value equal to the reference (no rounding is involved).
#include <gtest/gtest.h>

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


/// x [1,8,H,W] -> Q -> 3x3 conv to 48 channels -> c (uint8, zp 130) then, all on c's quantization:
///   Split [16, 32] along channels        -> s0, s1   (views)
///   Slice channels 16..48                -> sc       (view)
///   Slice rows 1..H-1, cols 2..W         -> sw       (PPU window copy)
///   Slice rows 1..H step 2               -> st       (CPU: the seed's Slice rule)
///   Slice channels 3..11                 -> su       (1x1 selection conv)
///   Resize nearest x2 (half_pixel)       -> r2       (DPU copies, scratch)
///   Resize nearest x3 rows x2 cols (pytorch_half_pixel) -> r3
///   Resize nearest x2 asymmetric / floor (PyTorch's nn.Upsample export) -> r4 (the same pixels as
///                                        half_pixel: the vendor view's rewrite, DPU copies)
///   Resize nearest x3 rows x2 cols asymmetric / round_prefer_floor -> r5 (CPU: the seed's Resize
///                                        rule; row o picks round(o / 3), not the seed's pixel)
///   Concat axis 2 [c, c rows 0..3] to another scale -> ch (requantizing DPU copies)
///   Concat axis 3 [c, c cols 0..5], c's quantization -> cw (DPU copies into notched rows)
///   AveragePool 3x3/2 pad 1 (count_include_pad) -> ap, 2x2/2 -> a2 (depthwise convs)
///   GlobalMaxPool of a 3x4 window -> gm (PPU), of c (beyond 7x7) -> gb (CPU: the seed's rule)
/// each consumed by a DQ (graph outputs in float) and s0/s1 by an Add (the views read by a DPU op).
drv::ir::Graph move_graph(int H, int W) {
    test_onnx::ModelBuilder b(13);
    const int C = 8, K = 48;
    b.input("x", kF32, {1, C, H, W});
    auto q = [&](const std::string& in, const std::string& out, float s, int z) {
        b.init_f32(out + "_s", {}, {s});
        b.init_int(out + "_z", kU8, {}, {z});
        b.node("QuantizeLinear", {in, out + "_s", out + "_z"}, {out});
    };
    auto qas = [&](const std::string& in, const std::string& out) {  // Q with c's parameters
        b.node("QuantizeLinear", {in, "c_s", "c_z"}, {out});
    };
    auto dq = [&](const std::string& in, const std::string& scale, const std::string& out) {
        b.node("DequantizeLinear", {in, scale + "_s", scale + "_z"}, {out});
    };
    q("x", "xq", 0.02f, 120);
    dq("xq", "xq", "xf");
    b.dq_weight("w", {K, C, 3, 3}, ramp(static_cast<size_t>(K) * C * 9, -90, 90, 1), 0.004f, "wf");
    auto& cv = b.node("Conv", {"xf", "wf"}, {"cf"}, "conv");
    test_onnx::ModelBuilder::attr_ints(cv, "pads", {1, 1, 1, 1});
    q("cf", "c", 0.05f, 130);
    auto data = [&](const std::string& out) {
        dq("c", "c", out);
        return out;
    };
    // Split
    b.init_i64("split", {2}, {16, 32});
    auto& sp = b.node("Split", {data("c_sp"), "split"}, {"s0f", "s1f"}, "split");
    test_onnx::ModelBuilder::attr_int(sp, "axis", 1);
    qas("s0f", "s0");
    qas("s1f", "s1");
    dq("s0", "c", "s0d");
    dq("s1", "c", "s1d");
    // s1's first 16 channels + s0 (Add reads both views).
    b.init_i64("a_st", {1}, {0});
    b.init_i64("a_en", {1}, {16});
    b.init_i64("a_ax", {1}, {1});
    b.node("Slice", {"s1d", "a_st", "a_en", "a_ax"}, {"s1hf"}, "slice_s1");
    qas("s1hf", "s1h");
    dq("s1h", "c", "s1hd");
    b.node("Add", {"s0d", "s1hd"}, {"adf"}, "add");
    q("adf", "ad", 0.08f, 128);
    dq("ad", "ad", "y_add");
    auto slice = [&](const std::string& name, std::vector<int64_t> st, std::vector<int64_t> en, std::vector<int64_t> ax,
                     std::vector<int64_t> steps) {
        const auto n = static_cast<int64_t>(st.size());
        b.init_i64(name + "_st", {n}, st);
        b.init_i64(name + "_en", {n}, en);
        b.init_i64(name + "_ax", {n}, ax);
        std::vector<std::string> in{data(name + "_in"), name + "_st", name + "_en", name + "_ax"};
        if (!steps.empty()) {
            b.init_i64(name + "_sp", {n}, steps);
            in.push_back(name + "_sp");
        }
        b.node("Slice", in, {name + "f"}, name);
        qas(name + "f", name);
        dq(name, "c", "y_" + name);
    };
    slice("sc", {16}, {48}, {1}, {});
    slice("sw", {1, 2}, {H - 1, W}, {2, 3}, {1, 1});
    slice("st", {1}, {H}, {2}, {2});  // strided: the seed keeps steps 1 unless H*W == 1
    slice("su", {3}, {11}, {1}, {});
    // Resize x2 (opset 13: X, roi, scales)
    b.init_f32("roi", {0}, {});
    b.init_f32("sc2", {4}, {1.f, 1.f, 2.f, 2.f});
    b.node("Resize", {data("r2_in"), "roi", "sc2"}, {"r2f"}, "resize2");
    qas("r2f", "r2");
    dq("r2", "c", "y_r2");
    b.init_f32("sc3", {4}, {1.f, 1.f, 3.f, 2.f});
    auto& r3 = b.node("Resize", {data("r3_in"), "roi", "sc3"}, {"r3f"}, "resize3");
    test_onnx::ModelBuilder::attr_string(r3, "coordinate_transformation_mode", "pytorch_half_pixel");
    qas("r3f", "r3");
    dq("r3", "c", "y_r3");
    // asymmetric / floor, as torch.onnx exports nn.Upsample(scale_factor=2, mode="nearest"): the
    // attributes the seed does not list, picking the pixels of the ones it does (A-NEAREST).
    auto& r4 = b.node("Resize", {data("r4_in"), "roi", "sc2"}, {"r4f"}, "resize4");
    test_onnx::ModelBuilder::attr_string(r4, "coordinate_transformation_mode", "asymmetric");
    test_onnx::ModelBuilder::attr_string(r4, "nearest_mode", "floor");
    qas("r4f", "r4");
    dq("r4", "c", "y_r4");
    // asymmetric / round_prefer_floor by 3: other pixels than the seed's mode, the vendor rule's CPU fallback.
    auto& r5 = b.node("Resize", {data("r5_in"), "roi", "sc3"}, {"r5f"}, "resize5");
    test_onnx::ModelBuilder::attr_string(r5, "coordinate_transformation_mode", "asymmetric");
    qas("r5f", "r5");
    dq("r5", "c", "y_r5");
    // Concat along H (requantizing: another scale) and W (same quantization) of c and a slice of c.
    slice("top", {0}, {3}, {2}, {});
    slice("left", {0}, {5}, {3}, {});
    auto& ch = b.node("Concat", {data("ch_in"), "y_top"}, {"chf"}, "concat_h");
    test_onnx::ModelBuilder::attr_int(ch, "axis", 2);
    q("chf", "ch", 0.06f, 125);
    dq("ch", "ch", "y_ch");
    auto& cw = b.node("Concat", {data("cw_in"), "y_left"}, {"cwf"}, "concat_w");
    test_onnx::ModelBuilder::attr_int(cw, "axis", 3);
    qas("cwf", "cw");
    dq("cw", "c", "y_cw");
    // Along W with another output quantization (onnxruntime calibrates the concat output on its
    // own range): both inputs requantized into scratches, then copied into their columns.
    auto& cr = b.node("Concat", {data("cr_in"), "y_left"}, {"crf"}, "concat_wq");
    test_onnx::ModelBuilder::attr_int(cr, "axis", 3);
    q("crf", "cr", 0.07f, 121);
    dq("cr", "cr", "y_cr");
    // AveragePool 3x3/2 pad 1 counting the padding (onnxruntime's QLinearAveragePool), and 2x2/2.
    auto& ap = b.node("AveragePool", {data("ap_in")}, {"apf"}, "avgpool3");
    test_onnx::ModelBuilder::attr_ints(ap, "kernel_shape", {3, 3});
    test_onnx::ModelBuilder::attr_ints(ap, "strides", {2, 2});
    test_onnx::ModelBuilder::attr_ints(ap, "pads", {1, 1, 1, 1});
    test_onnx::ModelBuilder::attr_int(ap, "count_include_pad", 1);
    q("apf", "ap", 0.03f, 128);
    dq("ap", "ap", "y_ap");
    auto& a2 = b.node("AveragePool", {data("a2_in")}, {"a2f"}, "avgpool2");
    test_onnx::ModelBuilder::attr_ints(a2, "kernel_shape", {2, 2});
    test_onnx::ModelBuilder::attr_ints(a2, "strides", {2, 2});
    q("a2f", "a2", 0.04f, 126);
    dq("a2", "a2", "y_a2");
    // GlobalMaxPool of a 3 x 4 window (inside the seed's (0, 7] x (0, 7]) and of c (beyond 7 x 7:
    // the seed's rule sends it to the CPU).
    slice("corner", {0, 0}, {3, 4}, {2, 3}, {});  // rows of 4 atoms: 16-byte PPU strides on RK356x too
    b.node("GlobalMaxPool", {"y_corner"}, {"gmf"}, "gmaxpool");
    qas("gmf", "gm");
    dq("gm", "c", "y_gm");
    b.node("GlobalMaxPool", {data("gb_in")}, {"gbf"}, "gmaxpool_big");
    qas("gbf", "gb");
    dq("gb", "c", "y_gb");
    for (const char* o : {"y_add", "y_sc", "y_sw", "y_st", "y_su", "y_r2", "y_r3", "y_r4", "y_r5", "y_ch", "y_cw", "y_cr", "y_ap", "y_a2",
                          "y_gm", "y_gb"})
        b.output(o);
    drv::importer::ImportOptions o;
    o.qdq = drv::importer::QdqMode::Rewrite;
    const std::string s = b.bytes();
    return drv::importer::import_onnx_bytes(s.data(), s.size(), o, "move.onnx");
}

struct Expect {
    const char* op;
    Unit unit;
};

void check_soc(const char* soc_name, int H, int W) {
    const hw::SocProfile soc = hw::load_named_profile(soc_name);
    const drv::ir::Graph g = move_graph(H, W);
    CompileOptions o;
    const CompiledModel m = compile_model(g, soc, o);
    for (const auto& problem : verify_tiling(m, soc)) ADD_FAILURE() << soc_name << ": " << problem;
    std::map<std::string, const Layer*> by_name;
    for (const auto& L : m.layers) {
        by_name[L.name] = &L;
        std::cout << "[move " << soc_name << "] " << L.name << " " << L.op << " "
                  << (L.unit == Unit::Npu ? "NPU" : L.unit == Unit::Cpu ? "CPU" : "view") << " tasks "
                  << L.tasks.size() << (L.note.empty() ? "" : ": " + L.note) << "\n";
    }
    // Expected placement: views for the aligned channel slices (C2 16 on RK3588, 8 on RK3566).
    const std::map<std::string, Unit> want{{"split", Unit::View},   {"slice_s1", Unit::View}, {"sc", Unit::View},
                                           {"sw", Unit::Npu},       {"su", Unit::Npu},        {"resize2", Unit::Npu},
                                           {"resize3", Unit::Npu},  {"add", Unit::Npu},      {"st", Unit::Cpu},
                                           {"resize4", Unit::Npu},  {"resize5", Unit::Cpu},
                                           {"concat_h", Unit::Npu}, {"concat_w", Unit::Npu},
                                           {"concat_wq", Unit::Npu},
                                           {"avgpool3", Unit::Npu}, {"avgpool2", Unit::Npu},
                                           {"corner", Unit::Npu},   {"gmaxpool", Unit::Npu},  {"gmaxpool_big", Unit::Cpu}};
    for (const auto& [name, unit] : want) {
        ASSERT_TRUE(by_name.count(name)) << name;
        EXPECT_EQ(by_name.at(name)->unit, unit) << soc_name << " " << name << ": " << by_name.at(name)->note;
        if (unit == Unit::Cpu) {  // the rule and its seed section are cited
            EXPECT_EQ(by_name.at(name)->cpu_reason, CpuReason::VendorRule) << name;
            EXPECT_NE(by_name.at(name)->note.find("RKNN Compiler V2.3.2 operator spec"), std::string::npos) << name;
        }
    }
    std::map<std::string, num::Tensor> in;
    in["x"] = drv::ref::random_input(g.value("x"), 5, 0);
    const auto ref = sim::reference_values(g, in);
    sim::DirectOptions d;
    d.isolated_reference = &ref;
    const sim::DirectResult r = sim::run_direct(m, soc, in, d);
    size_t checked = 0;
    for (const auto& c : r.layers) {
        const Layer& L = m.layers[c.layer];
        std::cout << "[move " << soc_name << "] isolated " << L.name << " (" << L.op << "): " << c.diff.str() << "\n";
        // Data movement is exact; the Add, the conv and the H and requantizing W concats (another
        // output scale) requantize (1 LSB at rounding ties: fixed-point multiplier vs onnxruntime's float).
        if (L.op == "Slice" || L.op == "Resize" || L.op == "GlobalMaxPool" || L.name == "concat_w") {
            EXPECT_TRUE(c.diff.exact()) << soc_name << " " << L.name << ": " << c.diff.str();
            ++checked;
        } else {
            EXPECT_LE(c.diff.max_diff, 1) << soc_name << " " << L.name;
        }
    }
    EXPECT_EQ(checked, 10u) << soc_name;
    // End to end: the outputs fed only by data movement equal the reference exactly.
    const sim::DirectResult e = sim::run_direct(m, soc, in);
    const auto want_out = drv::ref::execute(g, in);
    for (const char* name : {"y_sc", "y_sw", "y_st", "y_su", "y_r2", "y_r3", "y_r4", "y_r5"}) {
        // The conv before may differ by 1 LSB (0.05) at a rounding tie; the moves add nothing.
        const sim::TensorDiff df = sim::compare_tensors(e.outputs.at(name), want_out.at(name));
        EXPECT_LE(df.max_abs, 0.05 + 1e-6) << soc_name << " " << name << ": " << df.str();
    }
}

// ShuffleNetV2's channel split (PyTorch FX export: DQ -> Split -> one Q per half, the input's
// parameters): halves of 24 channels start inside a 16-channel atom on RK3588, so each half is a 1x1
// selection convolution (exact); on RK3566 (8-channel atoms) both are views. The two halves must
// stay two tensors (a multi-output unit's outputs are not aliases of the first).
TEST(MoveOps, SplitIntoPartsInsideAnAtomIsExact) {
    test_onnx::ModelBuilder b(13);
    b.input("x", kF32, {1, 48, 5, 7});
    b.init_f32("s", {}, {0.04f});
    b.init_int("z", kU8, {}, {60});
    b.node("QuantizeLinear", {"x", "s", "z"}, {"xq"});
    b.node("DequantizeLinear", {"xq", "s", "z"}, {"xf"});
    b.init_i64("sizes", {2}, {24, 24});
    auto& sp = b.node("Split", {"xf", "sizes"}, {"af", "bf"}, "split");
    test_onnx::ModelBuilder::attr_int(sp, "axis", 1);
    for (const char* h : {"a", "b"}) {
        b.node("QuantizeLinear", {std::string(h) + "f", "s", "z"}, {std::string(h) + "q"});
        b.node("DequantizeLinear", {std::string(h) + "q", "s", "z"}, {std::string("y_") + h});
        b.output(std::string("y_") + h);
    }
    drv::importer::ImportOptions io;
    io.qdq = drv::importer::QdqMode::Rewrite;
    const std::string bytes = b.bytes();
    const drv::ir::Graph g = drv::importer::import_onnx_bytes(bytes.data(), bytes.size(), io, "split24.onnx");
    for (const char* soc_name : {"rk3588", "rk3566"}) {
        const hw::SocProfile soc = hw::load_named_profile(soc_name);
        const CompiledModel m = compile_model(g, soc);
        const Layer* split = nullptr;
        for (const auto& L : m.layers)
            if (L.name == "split") split = &L;
        ASSERT_NE(split, nullptr);
        EXPECT_EQ(split->unit, std::string(soc_name) == "rk3588" ? Unit::Npu : Unit::View) << soc_name << ": " << split->note;
        std::map<std::string, num::Tensor> in;
        in["x"] = drv::ref::random_input(g.value("x"), 9, 0);
        const sim::DirectResult e = sim::run_direct(m, soc, in);
        const auto want = drv::ref::execute(g, in);
        for (const char* y : {"y_a", "y_b"}) {
            const sim::TensorDiff d = sim::compare_tensors(e.outputs.at(y), want.at(y));
            EXPECT_EQ(d.max_abs, 0.0) << soc_name << " " << y << ": " << d.str();
        }
    }
}

// A channel concat whose inputs start inside an atom (20 + 12 + 16 channels: offsets 20 and 32 on
// RK3588's 16-channel atoms, 20 on RK3566's 8-channel ones), each input with its own quantization:
// requantizing copies into C2-aligned slices of a scratch, then a 1x1 selection convolution (exact)
// - one NPU layer, was a CPU layer ("no NPU lowering yet"). Within 1 LSB of the reference
// QLinearConcat (the copies' fixed-point multipliers against its float ratio at a tie).
TEST(MoveOps, ConcatOfPartsInsideAnAtom) {
    test_onnx::ModelBuilder b(13);
    const int cs[3] = {20, 12, 16};
    const float sc[3] = {0.03f, 0.05f, 0.02f};
    const int zp[3] = {100, 128, 90};
    std::vector<std::string> parts;
    for (int k = 0; k < 3; ++k) {
        const std::string x = "x" + std::to_string(k);
        b.input(x, kF32, {1, cs[k], 5, 7});
        b.init_f32(x + "_s", {}, {sc[k]});
        b.init_int(x + "_z", kU8, {}, {zp[k]});
        b.node("QuantizeLinear", {x, x + "_s", x + "_z"}, {x + "q"});
        b.node("DequantizeLinear", {x + "q", x + "_s", x + "_z"}, {x + "f"});
        parts.push_back(x + "f");
    }
    auto& cc = b.node("Concat", parts, {"cf"}, "concat");
    test_onnx::ModelBuilder::attr_int(cc, "axis", 1);
    b.qdq("cf", "cq", "y", "o", 0.04f, kU8, 110);
    b.output("y");
    drv::importer::ImportOptions io;
    io.qdq = drv::importer::QdqMode::Rewrite;
    const std::string bytes = b.bytes();
    const drv::ir::Graph g = drv::importer::import_onnx_bytes(bytes.data(), bytes.size(), io, "concat_atoms.onnx");
    for (const char* soc_name : {"rk3588", "rk3566"}) {
        const hw::SocProfile soc = hw::load_named_profile(soc_name);
        const CompiledModel m = compile_model(g, soc);
        const Layer* concat = nullptr;
        for (const auto& L : m.layers)
            if (L.name == "concat") concat = &L;
        ASSERT_NE(concat, nullptr);
        EXPECT_EQ(concat->unit, Unit::Npu) << soc_name << ": " << concat->note;
        EXPECT_GE(concat->tasks.size(), 4u) << soc_name << ": three copies and the selection conv";
        for (const std::string& p : verify_tiling(m, soc)) ADD_FAILURE() << soc_name << " tiling: " << p;
        std::map<std::string, num::Tensor> in;
        for (int k = 0; k < 3; ++k) in["x" + std::to_string(k)] = drv::ref::random_input(g.value("x" + std::to_string(k)), 3, k);
        const auto want = drv::ref::execute(g, in);
        const sim::DirectResult e = sim::run_direct(m, soc, in);
        const sim::TensorDiff d = sim::compare_tensors(e.outputs.at("y"), want.at("y"));
        EXPECT_LE(d.max_abs, 0.04 + 1e-6) << soc_name << ": " << d.str();
        EXPECT_GT(d.values, 0u);
    }
}

TEST(MoveOps, SplitSliceResizeRk3588) { check_soc("rk3588", 10, 12); }
TEST(MoveOps, SplitSliceResizeRk3566EightByteAtoms) { check_soc("rk3566", 9, 8); }

}  // namespace
