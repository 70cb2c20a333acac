// SPDX-License-Identifier: MIT
// Issues 14 / 15, block level: the data-movement lowerings of the int8 path on the fp16 path (a float
// model, CompileOptions::fp16) - bilinear Resize (replicate pad + nearest upsampling as DPU/PPU copies,
// the fixed-kernel depthwise conv in fp16: lower_resize.cpp), constant Pad (the border a DPU copy of a
// constant fp16 image, lower_move.cpp), Concat along H and W (DPU copies into the row / column range)
// and Gather with constant indices along C (a 1x1 selection conv in fp16), H (PPU row copies) and W of
// a one-row tensor (PPU column copies). A float graph compiled for RK3588 (8-channel fp16 atoms,
// 16 bytes) and RK3566 (4-channel fp16 atoms, 8 bytes: odd pixel counts make surfaces the 16-byte
// stride units cannot express, so copies split per C1 surface), tiling verified, every listed layer
// on the NPU, run by the direct executor in isolated mode against the reference operator library
// (num::run_op, float32). Expectation:
//  - copies (Pad, Concat, Gather): each value the fp16 rounding of the reference's float value, so
//    max |got - want| <= 2^-11 x max |want| (round to nearest, 11-bit significand);
//  - bilinear Resize: the input's fp16 rounding, the weights (exact for even factors, 1/9 rounded
//    for a factor 3), fp16 products summed in fp32, the output's fp16 rounding: within
//    2^-9 x max |want| (the bound the fp16 eltwise blocks are held to, broadcast_test.cpp).
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
constexpr int C = 8, K = 24;

using test_onnx::ramp;

/// x [1,8,H,W] -> 3x3 convs to 24 channels c, d; r [1,8,1,W] a one-row graph input. Then
///   Resize linear x2 / x4 (half_pixel), x3 rows x2 columns (pytorch_half_pixel) of c;
///   Pad c by (1, 2, 2, 1) with 0 and with 0.3; Concat(c, d) along H and along W;
///   Gather c along C (indices 5 0 23 7 7 -1), along H (H-1, 0, 1, 2, 4), r along W (2 3 0 1 W-2 W-1).
drv::ir::Graph graph(int H, int W) {
    test_onnx::ModelBuilder b(13);
    b.input("x", kF32, {1, C, H, W});
    b.input("r", kF32, {1, C, 1, W});
    for (const char* cv : {"c", "d"}) {
        const std::vector<int32_t> wq = ramp(static_cast<size_t>(K) * C * 9, -90, 90, cv[0] == 'c' ? 1 : 2);
        std::vector<float> wf(wq.size());
        for (size_t j = 0; j < wq.size(); ++j) wf[j] = 0.004f * static_cast<float>(wq[j]);
        b.init_f32(std::string("w") + cv, {K, C, 3, 3}, wf);
        auto& n = b.node("Conv", {"x", std::string("w") + cv}, {cv}, std::string("conv_") + cv);
        test_onnx::ModelBuilder::attr_ints(n, "pads", {1, 1, 1, 1});
    }
    b.init_f32("roi", {0}, {});
    auto resize = [&](const std::string& name, float sh, float sw, const char* ctm) {
        b.init_f32(name + "_sc", {4}, {1.f, 1.f, sh, sw});
        auto& r = b.node("Resize", {"c", "roi", name + "_sc"}, {"y_" + name}, name);
        test_onnx::ModelBuilder::attr_string(r, "mode", "linear");
        test_onnx::ModelBuilder::attr_string(r, "coordinate_transformation_mode", ctm);
        b.output("y_" + name);
    };
    resize("bilinear2", 2, 2, "half_pixel");
    resize("bilinear4", 4, 4, "half_pixel");
    resize("bilinear32", 3, 2, "pytorch_half_pixel");
    b.init_i64("pads", {8}, {0, 0, 1, 2, 0, 0, 2, 1});
    b.init_f32("pad_zero", {}, {0.f});
    b.init_f32("pad_v", {}, {0.3f});
    b.node("Pad", {"c", "pads", "pad_zero"}, {"y_pad0"}, "pad0");
    b.node("Pad", {"c", "pads", "pad_v"}, {"y_pad03"}, "pad03");
    b.output("y_pad0"), b.output("y_pad03");
    for (const auto& [name, axis] : {std::pair{"concat_h", 2}, std::pair{"concat_w", 3}}) {
        auto& n = b.node("Concat", {"c", "d"}, {std::string("y_") + name}, name);
        test_onnx::ModelBuilder::attr_int(n, "axis", axis);
        b.output(std::string("y_") + name);
    }
    auto gather = [&](const std::string& name, const std::string& x, int axis, std::vector<int64_t> idx) {
        b.init_i64(name + "_i", {static_cast<int64_t>(idx.size())}, idx);
        auto& n = b.node("Gather", {x, name + "_i"}, {"y_" + name}, name);
        test_onnx::ModelBuilder::attr_int(n, "axis", axis);
        b.output("y_" + name);
    };
    gather("gather_c", "c", 1, {5, 0, 23, 7, 7, -1});
    gather("gather_h", "c", 2, {H - 1, 0, 1, 2, 4});
    // Runs starting at even output columns: on RK3566 a PPU output at an odd one is not 16-byte
    // aligned (8-byte fp16 atoms) and stays on the CPU, as on the int8 path.
    gather("gather_w", "r", 3, {2, 3, 0, 1, W - 2, W - 1});
    drv::importer::ImportOptions o;
    o.qdq = drv::importer::QdqMode::Keep;
    const std::string s = b.bytes();
    return drv::importer::import_onnx_bytes(s.data(), s.size(), o, "move_fp16.onnx");
}

const char* kCopies[] = {"pad0", "pad03", "concat_h", "concat_w", "gather_c", "gather_h", "gather_w"};
const char* kBilinear[] = {"bilinear2", "bilinear4", "bilinear32"};

/// Runs the float graph at H x W on `soc_name`; returns the number of surface-split copy tasks.
size_t check_soc(const char* soc_name, int H, int W) {
    const hw::SocProfile soc = hw::load_named_profile(soc_name);
    const drv::ir::Graph g = graph(H, W);
    CompileOptions opts;
    opts.fp16 = true;
    const CompiledModel m = compile_model(g, soc, opts);
    for (const auto& problem : verify_tiling(m, soc)) ADD_FAILURE() << soc_name << ": " << problem;
    const std::string tag = std::string("[move fp16 ") + soc_name + " " + std::to_string(H) + "x" + std::to_string(W) + "] ";
    std::map<std::string, const Layer*> by_name;
    size_t split = 0;
    for (const auto& L : m.layers) {
        by_name[L.name] = &L;
        std::cout << tag << L.name << " " << L.op << " "
                  << (L.unit == Unit::Npu ? "NPU" : L.unit == Unit::Cpu ? "CPU" : "view") << " tasks " << L.tasks.size()
                  << (L.note.empty() ? "" : ": " + L.note) << "\n";
        for (size_t t : L.tasks) split += m.tasks[t].what.find("(surface ") != std::string::npos;
    }
    std::vector<std::string> listed(std::begin(kCopies), std::end(kCopies));
    listed.insert(listed.end(), std::begin(kBilinear), std::end(kBilinear));
    for (const std::string& name : listed) {
        if (!by_name.count(name)) {
            ADD_FAILURE() << tag << name << " has no layer";
            return split;
        }
        EXPECT_EQ(by_name.at(name)->unit, Unit::Npu) << tag << name << ": " << by_name.at(name)->note;
        EXPECT_NE(by_name.at(name)->note.find("fp16"), std::string::npos) << tag << name << ": " << by_name.at(name)->note;
    }
    std::map<std::string, num::Tensor> in;
    in["x"] = drv::ref::random_input(g.value("x"), 5, 0);
    in["r"] = drv::ref::random_input(g.value("r"), 6, 0);
    const auto ref = sim::reference_values(g, in);
    sim::DirectOptions d;
    d.isolated_reference = &ref;
    const sim::DirectResult r = sim::run_direct(m, soc, in, d);
    size_t checked = 0;
    for (const auto& c : r.layers) {
        const Layer& L = m.layers[c.layer];
        if (std::find(listed.begin(), listed.end(), L.name) == listed.end()) continue;
        ++checked;
        double ymax = 0;
        for (const auto& o : L.outputs)
            if (ref.count(o))
                for (size_t j = 0; j < ref.at(o).numel(); ++j)
                    ymax = std::max(ymax, std::fabs(static_cast<double>(ref.at(o).data<float>()[j])));
        const bool copy = L.name.rfind("bilinear", 0) != 0;
        std::cout << tag << "isolated " << L.name << " (" << L.op << "): " << c.diff.str() << "; max |got - want| "
                  << c.diff.max_abs << " of max |y| " << ymax << " = 2^" << std::log2(c.diff.max_abs / ymax) << "\n";
        EXPECT_TRUE(c.diff.same_shape) << tag << L.name;
        EXPECT_GT(ymax, 0.1) << tag << L.name;  // the values are not all (nearly) zero
        EXPECT_LE(c.diff.max_abs, std::ldexp(ymax, copy ? -11 : -9)) << tag << L.name << ": " << c.diff.str();
    }
    EXPECT_EQ(checked, listed.size()) << tag;
    return split;
}

TEST(MoveFp16, PadConcatGatherBilinearRk3588) { EXPECT_EQ(check_soc("rk3588", 10, 12), 0u); }
// 8-byte fp16 atoms: 6 x 8 has every surface a whole number of 16-byte units (no split) ...
TEST(MoveFp16, PadConcatGatherBilinearRk3566) { EXPECT_EQ(check_soc("rk3566", 6, 8), 0u); }
// ... an odd height does not: the bilinear pad's column copies (7 one-atom rows, 56 bytes in a
// 64-byte surface) run one C1 surface per task (and the Pad's side strips), still on the NPU. An
// odd width stays on the CPU: the PPU's row strides are 16-byte units (the int8 path's limit too).
TEST(MoveFp16, PadConcatGatherBilinearRk3566OddHeight) { EXPECT_GT(check_soc("rk3566", 7, 8), 0u); }

}  // namespace
