// SPDX-License-Identifier: MIT
// Issue 15, block level: Pad mode reflect and edge on the NPU (lower_pad_copy_op: a notched DPU copy
// of the input into the interior, then lower_border_copies - PPU column reads + DPU copies for the
// border columns, DPU row copies for the border rows, corners with them). Graphs of several Pads
// (symmetric, asymmetric, one-sided pads, 1-row and 1-column inputs for edge) on the int8 QDQ path
// (DQ -> Pad -> Q with the input's quantization, QdqMode::Rewrite) and on the fp16 path (a float
// graph, CompileOptions::fp16), compiled for RK3588 (16-byte atoms) and RK3566 (8-byte atoms: odd
// heights split copies per C1 surface, odd widths read the columns from the output's interior or
// stay on the CPU), tiling verified, run end to end by the direct executor. The inputs are exact in
// both precisions (k / 32, |k| <= 128: the int8 quantization scale 1/32, zero point 128, and fp16
// represent them), so the expectation is bit-identical output against a hand-written reference of
// np.pad's reflect (mirror without the edge pixel) and edge (repeat it) semantics.
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "compiler/onnx/onnx_importer.h"
#include "direct/direct_exec.h"
#include "compiler/rknpu/model.h"
#include "hw/profile.h"
#include "onnx_builder.h"

namespace {

using namespace drv::rknpu;

constexpr int32_t kU8 = ::onnx::TensorProto::UINT8;
constexpr int32_t kF32 = ::onnx::TensorProto::FLOAT;
constexpr int C = 24;  // two int8 surfaces on RK3588, three on RK3566 (fp16: three / six)

struct PadCase {
    std::string name, input, mode;
    int top, left, bottom, right;
    bool npu = true;  ///< expected on the NPU (else the CPU, the note naming `why`)
    std::string why;
};

PadCase pc(std::string name, std::string input, std::string mode, int top, int left, int bottom, int right,
           bool npu = true, std::string why = "") {
    PadCase p;
    p.name = std::move(name), p.input = std::move(input), p.mode = std::move(mode);
    p.top = top, p.left = left, p.bottom = bottom, p.right = right;
    p.npu = npu, p.why = std::move(why);
    return p;
}

/// np.pad's source index of output index i (input index i - before) for `mode` along a dimension n.
int source(int i, int n, const std::string& mode) {
    if (mode == "edge") return std::clamp(i, 0, n - 1);
    if (i < 0) return -i;  // reflect: mirror about the edge pixel, which is not repeated
    if (i >= n) return 2 * (n - 1) - i;
    return i;
}

/// Hand-written reference: out[c][y][x] = in[c][src(y - top)][src(x - left)].
std::vector<float> reference_pad(const num::Tensor& in, const PadCase& p) {
    const int h = static_cast<int>(in.shape()[2]), w = static_cast<int>(in.shape()[3]);
    const int oh = h + p.top + p.bottom, ow = w + p.left + p.right;
    std::vector<float> out(static_cast<size_t>(C) * static_cast<size_t>(oh * ow));
    const float* x = in.data<float>();
    for (int c = 0; c < C; ++c)
        for (int y = 0; y < oh; ++y)
            for (int xx = 0; xx < ow; ++xx)
                out[(static_cast<size_t>(c) * static_cast<size_t>(oh) + static_cast<size_t>(y)) * static_cast<size_t>(ow) +
                    static_cast<size_t>(xx)] =
                    x[(static_cast<size_t>(c) * static_cast<size_t>(h) + static_cast<size_t>(source(y - p.top, h, p.mode))) *
                          static_cast<size_t>(w) +
                      static_cast<size_t>(source(xx - p.left, w, p.mode))];
    return out;
}

/// Inputs x [1,C,H,W], r [1,C,1,W], k [1,C,H,1]; every case a Pad of one of them into y_<name>.
drv::ir::Graph graph(int H, int W, const std::vector<PadCase>& cases, bool f16) {
    test_onnx::ModelBuilder b(13);
    b.input("x", kF32, {1, C, H, W});
    b.input("r", kF32, {1, C, 1, W});
    b.input("k", kF32, {1, C, H, 1});
    b.init_f32("q_s", {}, {1.f / 32.f});
    b.init_int("q_z", kU8, {}, {128});
    for (const PadCase& p : cases) {
        const std::string n = p.name;
        b.init_i64(n + "_pads", {8}, {0, 0, p.top, p.left, 0, 0, p.bottom, p.right});
        std::string src = p.input;
        if (!f16) {  // quantize_static's QDQ Pad: its input's DQ, the output's Q with the same parameters
            b.node("QuantizeLinear", {p.input, "q_s", "q_z"}, {n + "_xq"});
            b.node("DequantizeLinear", {n + "_xq", "q_s", "q_z"}, {n + "_xf"});
            src = n + "_xf";
        }
        auto& pad = b.node("Pad", {src, n + "_pads"}, {f16 ? "y_" + n : n + "_f"}, n);
        test_onnx::ModelBuilder::attr_string(pad, "mode", p.mode);
        if (!f16) {
            b.node("QuantizeLinear", {n + "_f", "q_s", "q_z"}, {n + "_q"});
            b.node("DequantizeLinear", {n + "_q", "q_s", "q_z"}, {"y_" + n});
        }
        b.output("y_" + n);
    }
    drv::importer::ImportOptions o;
    o.qdq = f16 ? drv::importer::QdqMode::Keep : drv::importer::QdqMode::Rewrite;
    const std::string s = b.bytes();
    return drv::importer::import_onnx_bytes(s.data(), s.size(), o, "pad_modes.onnx");
}

/// A tensor of k / 32 values, k in [-128, 127] (exact in the int8 quantization and in fp16).
num::Tensor exact_input(std::vector<int64_t> shape, int seed) {
    num::Tensor t(num::DType::F32, shape);
    float* v = t.data<float>();
    for (size_t j = 0; j < t.numel(); ++j)
        v[j] = static_cast<float>(static_cast<int>((j * 37 + static_cast<size_t>(seed) * 101 + j * j / 7) % 256) - 128) / 32.f;
    return t;
}

/// Compiles and runs the cases at H x W on `soc_name`; returns the NPU task count of every case.
/// `checker`: the vendor rules apply (the RKNN v2.3.2 Pad allows modes constant and reflect: edge
/// goes to the CPU by that rule); off, every Pad the lowering takes is on the NPU.
std::map<std::string, size_t> check(const char* soc_name, int H, int W, const std::vector<PadCase>& cases, bool f16,
                                    bool checker = false) {
    const hw::SocProfile soc = hw::load_named_profile(soc_name);
    const drv::ir::Graph g = graph(H, W, cases, f16);
    CompileOptions opts;
    opts.fp16 = f16;
    opts.consult_checker = checker;
    const CompiledModel m = compile_model(g, soc, opts);
    const std::string tag = std::string("[pad modes ") + soc_name + (f16 ? " fp16 " : " int8 ") + std::to_string(H) + "x" +
                            std::to_string(W) + (checker ? " vendor rules] " : "] ");
    for (const auto& problem : verify_tiling(m, soc)) ADD_FAILURE() << tag << problem;
    std::map<std::string, size_t> tasks;
    for (const PadCase& p : cases) {
        const Layer* L = nullptr;
        for (const auto& l : m.layers)
            if (l.name == p.name) L = &l;
        if (!L) {
            ADD_FAILURE() << tag << p.name << " has no layer";
            continue;
        }
        std::cout << tag << p.name << " " << p.mode << " (" << p.top << ", " << p.left << ", " << p.bottom << ", "
                  << p.right << ") " << (L->unit == Unit::Npu ? "NPU" : "CPU") << " tasks " << L->tasks.size() << ": "
                  << L->note << "\n";
        const bool vendor_cpu = checker && p.mode == "edge";
        EXPECT_EQ(L->unit == Unit::Npu, p.npu && !vendor_cpu) << tag << p.name << ": " << L->note;
        if (!p.npu || vendor_cpu) {
            const std::string why = vendor_cpu ? "mode = edge not in {constant, reflect}" : p.why;
            EXPECT_NE(L->note.find(why), std::string::npos) << tag << p.name << ": " << L->note;
        }
        tasks[p.name] = L->tasks.size();
    }
    std::map<std::string, num::Tensor> in;
    in["x"] = exact_input({1, C, H, W}, 1);
    in["r"] = exact_input({1, C, 1, W}, 2);
    in["k"] = exact_input({1, C, H, 1}, 3);
    const sim::DirectResult r = sim::run_direct(m, soc, in);
    size_t compared = 0, valid = 0;
    for (const PadCase& p : cases) {
        const auto& shape = in.at(p.input).shape();
        if (p.mode == "reflect" && (std::max(p.top, p.bottom) >= shape[2] || std::max(p.left, p.right) >= shape[3]))
            continue;  // not a valid ONNX Pad (onnxruntime refuses it): only its placement is checked
        ++valid;
        const std::string y = "y_" + p.name;
        if (!r.outputs.count(y)) {
            ADD_FAILURE() << tag << "no output " << y;
            continue;
        }
        const num::Tensor& got = r.outputs.at(y);
        const std::vector<float> want = reference_pad(in.at(p.input), p);
        if (got.numel() != want.size()) {
            ADD_FAILURE() << tag << p.name << ": " << got.numel() << " values, " << want.size() << " expected";
            continue;
        }
        size_t differ = 0;
        for (size_t j = 0; j < want.size(); ++j) differ += got.data<float>()[j] != want[j];
        EXPECT_EQ(differ, 0u) << tag << p.name << ": " << differ << " of " << want.size() << " values differ";
        ++compared;
    }
    EXPECT_EQ(compared, valid) << tag;
    EXPECT_GT(valid, 0u) << tag;
    return tasks;
}

// Reflect and edge of x: symmetric 1, asymmetric (the right pad the widest), one-sided rows / columns;
// edge of the 1-row r and the 1-column k (every border pixel the one row / column).
std::vector<PadCase> cases(int H, int W) {
    (void)W;
    return {pc("reflect1", "x", "reflect", 1, 1, 1, 1),
            pc("reflect_asym", "x", "reflect", 2, 0, 1, 3),
            pc("reflect_rows", "x", "reflect", 0, 0, H - 1, 0),
            pc("edge1", "x", "edge", 1, 1, 1, 1),
            pc("edge_asym", "x", "edge", 3, 2, 0, 5),
            pc("edge_row", "r", "edge", 2, 1, 3, 2),
            pc("edge_col", "k", "edge", 1, 3, 2, 1),
            // ONNX requires reflect pads below the dimension: a 1-row input cannot be reflected along H.
            pc("reflect_row", "r", "reflect", 1, 1, 1, 1, false, "pad < dim")};
}

TEST(PadModes, ReflectEdgeInt8Rk3588) {
    const auto t = check("rk3588", 6, 8, cases(6, 8), false);
    // reflect 1: interior + 2 x (column read + write) + 2 rows; edge (3, 2, 0, 5): interior,
    // 2 columns from one read on the left, 5 from one read on the right, top rows doubled 1 + 2.
    EXPECT_EQ(t.at("reflect1"), 7u);
    EXPECT_EQ(t.at("edge_asym"), 1u + 3u + 6u + 2u);
}
TEST(PadModes, ReflectEdgeFp16Rk3588) { check("rk3588", 6, 8, cases(6, 8), true); }
// With the vendor rules (the default compile, `npusim run` / `check`): reflect on the NPU, edge on
// the CPU by the seed's Pad rule, the values the same.
TEST(PadModes, VendorRulesKeepEdgeOnTheCpu) {
    check("rk3588", 6, 8, cases(6, 8), false, true);
    check("rk3566", 7, 8, cases(7, 8), true, true);
}
// 8-byte atoms: 6 x 8 surfaces are whole 16-byte units; an odd height splits the column write-backs
// and odd-row copies per C1 surface (still exact).
TEST(PadModes, ReflectEdgeInt8Rk3566) { check("rk3566", 6, 8, cases(6, 8), false); }
TEST(PadModes, ReflectEdgeInt8Rk3566OddHeight) {
    const auto t = check("rk3566", 7, 8, cases(7, 8), false);
    EXPECT_GT(t.at("reflect1"), 7u);  // per-surface copies
}
TEST(PadModes, ReflectEdgeFp16Rk3566OddHeight) { check("rk3566", 7, 8, cases(7, 8), true); }
// An odd width on 8-byte atoms: the PPU needs 16-byte rows. Left + right odd: the output's rows are
// (the columns are read from its interior); left + right even: neither, the CPU with the reason.
TEST(PadModes, OddWidthRk3566) {
    const std::string why = "16-byte units";
    const std::vector<PadCase> c = {pc("reflect_odd", "x", "reflect", 1, 1, 1, 2),
                                    pc("edge_odd", "x", "edge", 0, 2, 1, 1),
                                    pc("reflect_even", "x", "reflect", 1, 1, 1, 1, false, why),
                                    pc("edge_rows_only", "x", "edge", 2, 0, 1, 0)};
    check("rk3566", 6, 7, c, false);
    check("rk3566", 6, 7, c, true);
    // 16-byte atoms have no such limit.
    std::vector<PadCase> all = c;
    all[2].npu = true;
    check("rk3588", 6, 7, all, false);
}

}  // namespace
