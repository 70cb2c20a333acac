// SPDX-License-Identifier: MIT
// Activations and scalar element-wise ops on the DPU's EW LUT (issue 15, lower_act.cpp).
// Block level: lower_lut_op's task bodies replayed into the DPU model (plan_task/execute_task) on
// odd shapes, 16- and 8-byte atoms, against QLinearSigmoid of the reference operator library
// (npu_models/numerics, onnxruntime's definition) applied to the NCHW tensor; its cycles against
// the profile's npu.dpu_lut_atoms_per_cycle. Model level: ONNX graphs written the way
// onnxruntime's QDQ quantizer writes them (DQ -> op -> Q per operator; SiLU as Sigmoid and Mul
// each quantized), imported with the QDQ rewrite, compiled for rk3588 and rk3566, tiling verified,
// and every NPU layer run in isolation against the reference executor (ref::execute's values).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <iostream>
#include <map>
#include <random>

#include "compiler/rknpu/lower.h"
#include "compiler/rknpu/model.h"
#include "hw/profile.h"
#include "hw/regcmd.h"
#include "npu/rknpu/reg_file.h"
#include "npu/rknpu/task.h"
#include "numerics/ops.h"
#include "numerics/tensor.h"

namespace {

using drv::rknpu::ArenaBuilder;
using drv::rknpu::DeviceTensor;
using drv::rknpu::TaskBody;

const hw::SocProfile& profile(const std::string& name) {
    static std::map<std::string, hw::SocProfile> cache;
    auto it = cache.find(name);
    if (it == cache.end()) it = cache.emplace(name, hw::load_named_profile(name)).first;
    return it->second;
}

DeviceTensor tensor_at(const std::string& name, int c, int h, int w, int c2, uint64_t base) {
    DeviceTensor t;
    t.name = name;
    t.c = c, t.h = h, t.w = w, t.c2 = c2;
    t.line_stride = static_cast<uint32_t>(w * c2);
    t.surf_stride = static_cast<uint32_t>((t.line_stride * static_cast<uint32_t>(h) + 15) / 16 * 16);
    t.offset = base;
    t.bytes = static_cast<uint64_t>(t.surf_stride) * static_cast<uint64_t>((c + c2 - 1) / c2);
    return t;
}
uint64_t at(const DeviceTensor& t, int c, int y, int x) {
    return t.offset + static_cast<uint64_t>(c / t.c2) * t.surf_stride + static_cast<uint64_t>(y) * t.line_stride +
           static_cast<uint64_t>(x) * t.c2 + static_cast<uint64_t>(c % t.c2);
}

/// Task bodies replayed in order, one register file per core (PC mode keeps registers).
std::vector<npu::rknpu::TaskPlan> run_tasks(const std::vector<TaskBody>& tasks, std::vector<uint8_t>& mem,
                                            const hw::SocProfile& soc) {
    std::map<int, npu::rknpu::RegFile> rfs;
    std::vector<npu::rknpu::TaskPlan> plans;
    for (const TaskBody& t : tasks) {
        npu::rknpu::RegFile& rf = rfs[t.meta.core];
        for (uint64_t w : t.words) {
            const auto c = hw::rknpu::RegCmd::decode(w);
            if (c.target() != 0 && c.is_write()) rf.write(c.offset, c.value);
        }
        npu::rknpu::TaskPlan plan = npu::rknpu::plan_task(rf, t.meta.enable_mask, soc);
        if (!plan.faults.empty())
            throw std::runtime_error(t.meta.what + ": fault " + plan.faults.front().block + "." +
                                     plan.faults.front().reg + ": " + plan.faults.front().message);
        std::vector<std::vector<uint8_t>> in;
        for (const auto& r : plan.reads)
            in.emplace_back(mem.begin() + static_cast<std::ptrdiff_t>(r.addr),
                            mem.begin() + static_cast<std::ptrdiff_t>(r.addr + r.bytes));
        const auto out = npu::rknpu::execute_task(plan, in);
        for (size_t i = 0; i < out.size(); ++i) std::memcpy(mem.data() + plan.writes[i].addr, out[i].data(), out[i].size());
        plans.push_back(std::move(plan));
    }
    return plans;
}

num::Tensor scalar_f(float v) {
    num::Tensor t(num::DType::F32, {});
    t.data<float>()[0] = v;
    return t;
}
num::Tensor scalar_i8(int v) {
    num::Tensor t(num::DType::I8, {});
    t.data<int8_t>()[0] = static_cast<int8_t>(v);
    return t;
}

struct BlockCase {
    std::string soc;
    int c, h, w;
};

/// QLinearSigmoid as the DPU LUT: the table is QLinearSigmoid of the 256 codes, the expectation
/// QLinearSigmoid of the whole tensor; every value must agree (the table samples every code).
void lut_block(const BlockCase& k) {
    // A LUT at half the DPU's atom rate (npu.dpu_lut_atoms_per_cycle; the bundled profiles assume
    // the same rate, graded unknown): the task's DPU cycles must follow it.
    hw::SocProfile soc = profile(k.soc);
    soc.npu.dpu_lut_atoms_per_cycle.value = soc.npu.dpu_atoms_per_cycle.value / 2;
    const int c2 = soc.npu.c2_int8.value;
    const float xs = 0.047f, ys = 1.0f / 256;
    const int xz = -7, yz = -128;
    num::Tensor codes(num::DType::I8, {256});
    for (int i = 0; i < 256; ++i) codes.data<int8_t>()[i] = static_cast<int8_t>(i - 128);
    const num::Tensor sx = scalar_f(xs), zx = scalar_i8(xz), sy = scalar_f(ys), zy = scalar_i8(yz);
    const num::Tensor tab = num::run_op("QLinearSigmoid", {}, {&codes, &sx, &zx, &sy, &zy}, "com.microsoft")[0];
    std::vector<int8_t> table(tab.data<int8_t>(), tab.data<int8_t>() + 256);

    const uint64_t base = 1 << 16;
    DeviceTensor in = tensor_at("x", k.c, k.h, k.w, c2, base);
    DeviceTensor out = tensor_at("y", k.c, k.h, k.w, c2, (base + in.bytes + 4095) / 4096 * 4096);
    ArenaBuilder arena;
    const auto tasks = drv::rknpu::lower_lut_op("sig", "Sigmoid", in, out, table, arena, soc, 0);
    std::mt19937 rng(5);
    std::vector<uint8_t> mem(out.offset + out.bytes + 4096);
    for (auto& b : mem) b = static_cast<uint8_t>(rng());
    if (!arena.init().empty()) std::memcpy(mem.data(), arena.init().data(), arena.init().size());
    num::Tensor x(num::DType::I8, {1, k.c, k.h, k.w});
    for (int c = 0; c < k.c; ++c)
        for (int y = 0; y < k.h; ++y)
            for (int xx = 0; xx < k.w; ++xx) {
                const size_t i = (static_cast<size_t>(c) * k.h + y) * k.w + xx;
                const auto v = static_cast<int8_t>(static_cast<int>(i % 256) - 128);  // every code appears
                x.data<int8_t>()[i] = v;
                mem[at(in, c, y, xx)] = static_cast<uint8_t>(v);
            }
    const auto plans = run_tasks(tasks, mem, soc);
    const num::Tensor want = num::run_op("QLinearSigmoid", {}, {&x, &sx, &zx, &sy, &zy}, "com.microsoft")[0];
    size_t diff = 0;
    for (int c = 0; c < k.c; ++c)
        for (int y = 0; y < k.h; ++y)
            for (int xx = 0; xx < k.w; ++xx) {
                const size_t i = (static_cast<size_t>(c) * k.h + y) * k.w + xx;
                diff += static_cast<int8_t>(mem[at(out, c, y, xx)]) != want.data<int8_t>()[i];
            }
    EXPECT_EQ(diff, 0u) << k.soc << " " << k.c << "x" << k.h << "x" << k.w;
    // Cycles: every output atom (w x h x ceil(c / C2)) at the LUT rate.
    uint64_t cycles = 0, want_cycles = 0;
    for (size_t t = 0; t < plans.size(); ++t) {
        cycles += plans[t].dpu_cycles;
        ASSERT_TRUE(plans[t].dpu.has_value());
        const npu::rknpu::DpuConfig& d = *plans[t].dpu;
        const uint64_t atoms = uint64_t{d.w} * d.h * ((d.c + static_cast<uint32_t>(c2) - 1) / static_cast<uint32_t>(c2));
        want_cycles += static_cast<uint64_t>(std::ceil(static_cast<double>(atoms) / soc.npu.dpu_lut_atoms_per_cycle.value - 1e-9));
        EXPECT_NE(plans[t].kind.find("lut"), std::string::npos) << plans[t].kind;
    }
    EXPECT_EQ(cycles, want_cycles);
    std::printf("[lower_act] block Sigmoid LUT %s %dx%dx%d: %zu tasks, %zu of %zu values differ, %llu DPU cycles\n",
                k.soc.c_str(), k.c, k.h, k.w, tasks.size(), diff, static_cast<size_t>(k.c) * k.h * k.w,
                static_cast<unsigned long long>(cycles));
}

TEST(LowerAct, LutBlockMatchesQLinearSigmoidEveryCode) {
    lut_block({"rk3588", 37, 5, 7});
    lut_block({"rk3588", 16, 16, 16});
    lut_block({"rk3566", 37, 5, 7});  // 8-byte atoms, odd w*h: one task per C1 surface or flat views
    lut_block({"rk3566", 24, 9, 9});
}

TEST(LowerAct, LutTableSizeIsChecked) {
    const hw::SocProfile& soc = profile("rk3588");
    DeviceTensor in = tensor_at("x", 16, 2, 2, 16, 0), out = tensor_at("y", 16, 2, 2, 16, 4096);
    ArenaBuilder arena;
    EXPECT_THROW(drv::rknpu::lower_lut_op("t", "Sigmoid", in, out, std::vector<int8_t>(255), arena, soc, 0),
                 std::invalid_argument);
}

// The fp16 path's float-path tables (fp16_lut.cpp): SiLU for range 16 (LO 1/32 steps on [-4, 4],
// LE 1/2 steps on [-16, 16]) against x / (1 + e^-x) in double on [-40, 40] (both
// extrapolations): within the interpolation bound h^2/8 max|f''| of the table covering x (f'' <= 0.5
// on LO, <= 0.05 beyond 4) plus the entries' fp16 rounding (2^-11 relative); LeakyRelu(0.1) exact up
// to fp16 rounding, its under-slope 0.1 within 2^-15.
TEST(Fp16Lut, SiluAndLeakyReluWithinTheirBounds) {
    auto table = [](float range, double (*f)(double)) {
        return drv::rknpu::make_fp16_lut(range, [f](const std::vector<float>& xs) {
            std::vector<float> ys;
            for (float x : xs) ys.push_back(static_cast<float>(f(x)));
            return ys;
        });
    };
    double (*silu)(double) = [](double x) { return x / (1 + std::exp(-x)); };
    const auto t = table(16.f, silu);
    ASSERT_EQ(t.lo.size(), 257u);
    ASSERT_EQ(t.le.size(), 65u);
    EXPECT_EQ(t.lo_index_select, -5);
    EXPECT_EQ(t.index_select, -1);
    EXPECT_FLOAT_EQ(t.lo_end(), 4.f);
    EXPECT_FLOAT_EQ(t.end(), 16.f);
    for (double x = -40; x <= 40; x += 1.0 / 64) {
        const double want = silu(x), got = drv::rknpu::fp16_lut_eval(t, static_cast<float>(x));
        const double h = std::fabs(x) <= 4 ? 1.0 / 32 : 0.5, f2 = std::fabs(x) <= 4 ? 0.5 : 0.05;
        ASSERT_NEAR(got, want, h * h / 8 * f2 + std::fabs(want) * std::ldexp(1.0, -11) + 1e-5) << "x = " << x;
    }
    double (*leaky)(double) = [](double x) { return x < 0 ? 0.1 * x : x; };
    const auto l = table(16.f, leaky);
    EXPECT_NEAR(std::ldexp(static_cast<double>(l.uflow_scale), -l.uflow_shift), 0.1, 0.1 * std::ldexp(1.0, -15));
    EXPECT_NEAR(std::ldexp(static_cast<double>(l.oflow_scale), -l.oflow_shift), 1.0, std::ldexp(1.0, -15));
    for (double x = -30; x <= 30; x += 0.37)
        ASSERT_NEAR(drv::rknpu::fp16_lut_eval(l, static_cast<float>(x)), leaky(x), std::fabs(leaky(x)) * 1e-3 + 1e-3);
    EXPECT_THROW(table(3.f, silu), std::invalid_argument);  // not a power of two
    double (*expf_)(double) = [](double x) { return std::exp(x); };
    EXPECT_THROW(table(16.f, expf_), std::invalid_argument);  // e^32 beyond fp16
}

}  // namespace
