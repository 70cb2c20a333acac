// SPDX-License-Identifier: MIT
// An int8 conv with a float output (ConvOp::float_out: a QDQ conv whose output no QuantizeLinear
// reads, the TensorRT-style heads): lower_conv_op's tasks decoded into a RegFile and run with
// plan_task/execute_task on the arena bytes, the fp16 output compared with the float convolution of
// the dequantized values (what DequantizeLinear x, DequantizeLinear w -> Conv computes in
// onnxruntime: x_real = x_scale (x - x_zp), w_real = w_scale[c] w, + the float bias), computed here in
// double, within kFloatOutLayerRtol x max |reference| per layer. RK3588 (16-byte atoms, fp16 C2 8)
// and RK3566 (8-byte atoms, fp16 C2 4), one and three cores, row and kernel tiling.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <random>

#include "compiler/rknpu/lower.h"
#include "compiler/rknpu/model.h"
#include "hw/profile.h"
#include "hw/regcmd.h"
#include "npu/rknpu/reg_file.h"
#include "npu/rknpu/task.h"
#include "numerics/half.h"

namespace {

using drv::rknpu::ArenaBuilder;
using drv::rknpu::ConvOp;
using drv::rknpu::DeviceTensor;
using drv::rknpu::TaskBody;

struct Case {
    std::string name, soc = "rk3588";
    int in_c = 32, h = 10, w = 9, out_c = 40, k = 3, stride = 1, pad = 1;
    bool depthwise = false;
    int in_zp = 0;                 ///< int8 device zero point (a uint8 graph tensor's zp - 128)
    float w_spread = 64.f;         ///< per-channel weight scales over this factor (1: per tensor)
    std::vector<int> cores = {0};
    uint32_t cbuf_bank_bytes = 0;  ///< a smaller CBUF (bytes per bank) to force tiling; 0 = the profile's
    /// A fused Relu / Clip on the float output (TensorRT style: DQ -> Conv -> Relu with no Q after it):
    /// Act::Relu, or Act::Clip with [clip_lo, clip_hi] in real values.
    drv::rknpu::Act act = drv::rknpu::Act::None;
    float clip_lo = 0.f, clip_hi = 0.f;
};

int round_up(int v, int m) { return (v + m - 1) / m * m; }

DeviceTensor tensor(const std::string& name, int c, int h, int w, int c2, bool fp16, uint64_t offset) {
    DeviceTensor t;
    t.name = name;
    t.c = c, t.h = h, t.w = w, t.c2 = c2, t.fp16 = fp16;
    t.line_stride = static_cast<uint32_t>(w * c2 * (fp16 ? 2 : 1));
    t.surf_stride = static_cast<uint32_t>(round_up(static_cast<int>(t.line_stride) * h, 16));
    t.bytes = static_cast<uint64_t>(t.surf_stride) * static_cast<uint64_t>(round_up(c, c2) / c2);
    t.offset = offset;
    return t;
}

uint64_t at(const DeviceTensor& t, int c, int y, int x) {
    return t.offset + static_cast<uint64_t>(c / t.c2) * t.surf_stride + static_cast<uint64_t>(y) * t.line_stride +
           static_cast<uint64_t>((x * t.c2 + c % t.c2) * (t.fp16 ? 2 : 1));
}

/// One register file per core kept across tasks (PC mode); faults fail the test.
void run_tasks(const std::vector<TaskBody>& tasks, std::vector<uint8_t>& mem, const hw::SocProfile& soc,
               std::vector<std::string>& assumptions) {
    std::map<int, npu::rknpu::RegFile> rfs;
    for (const TaskBody& t : tasks) {
        npu::rknpu::RegFile& rf = rfs[t.meta.core];
        for (uint64_t w : t.words) {
            const auto c = hw::rknpu::RegCmd::decode(w);
            if (c.target() != 0 && c.is_write()) rf.write(c.offset, c.value);
        }
        const npu::rknpu::TaskPlan plan = npu::rknpu::plan_task(rf, t.meta.enable_mask, soc);
        if (!plan.faults.empty())
            throw std::runtime_error(t.meta.what + ": fault " + plan.faults.front().block + "." + plan.faults.front().reg +
                                     ": " + plan.faults.front().message);
        assumptions.insert(assumptions.end(), plan.assumptions.begin(), plan.assumptions.end());
        std::vector<std::vector<uint8_t>> in;
        for (const auto& r : plan.reads)
            in.emplace_back(mem.begin() + static_cast<std::ptrdiff_t>(r.addr),
                            mem.begin() + static_cast<std::ptrdiff_t>(r.addr + r.bytes));
        const auto out = npu::rknpu::execute_task(plan, in);
        for (size_t i = 0; i < out.size(); ++i) std::memcpy(mem.data() + plan.writes[i].addr, out[i].data(), out[i].size());
    }
}

struct Outcome {
    double max_abs = 0, peak = 0;
    size_t tasks = 0;
    bool assumption_named = false;
};

Outcome run_case(const Case& k) {
    hw::SocProfile soc = hw::load_named_profile(k.soc);
    if (k.cbuf_bank_bytes) soc.npu.cbuf_bank_bytes.value = k.cbuf_bank_bytes;
    std::mt19937 rng(11);
    auto uni = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    const int oh = (k.h + 2 * k.pad - k.k) / k.stride + 1, ow = (k.w + 2 * k.pad - k.k) / k.stride + 1;
    const int cin_per = k.depthwise ? 1 : k.in_c, taps = k.k * k.k;
    ConvOp op;
    op.name = k.name;
    op.float_out = true;
    op.in_c = k.in_c, op.out_c = k.depthwise ? k.in_c : k.out_c;
    op.kernel_h = op.kernel_w = k.k, op.stride_h = op.stride_w = k.stride;
    op.pad_top = op.pad_left = op.pad_bottom = op.pad_right = k.pad;
    op.depthwise = k.depthwise;
    op.weights.resize(static_cast<size_t>(op.out_c) * cin_per * taps);
    for (auto& v : op.weights) v = static_cast<int8_t>(uni(-127, 127));
    op.in_scale = 0.0173f, op.in_zp = k.in_zp;
    for (int c = 0; c < op.out_c; ++c)  // TensorRT-style amax / 127 scales, spread over w_spread
        op.w_scales.push_back(0.0021f * std::pow(k.w_spread, static_cast<float>(c) / static_cast<float>(op.out_c)));
    for (int c = 0; c < op.out_c; ++c) op.bias_f.push_back(0.37f * static_cast<float>(uni(-100, 100)));
    op.act = k.act, op.clip_lo_f = k.clip_lo, op.clip_hi_f = k.clip_hi;

    const int c2 = soc.npu.c2_int8.value, c2f = soc.npu.c2_fp16.value;
    const uint64_t base = 8u << 20;
    const DeviceTensor in = tensor("x", k.in_c, k.h, k.w, c2, false, base);
    const DeviceTensor out = tensor("y", op.out_c, oh, ow, c2f, true, (base + in.bytes + 4095) / 4096 * 4096);
    ArenaBuilder arena;
    Outcome o;
    const auto tasks = drv::rknpu::lower_conv_op(op, in, out, arena, soc, k.cores);
    o.tasks = tasks.size();
    if (arena.size() > base) throw std::runtime_error("test arena too small for the constants");
    std::vector<uint8_t> mem(out.offset + out.bytes + 4096, 0xa5);  // garbage in the padding channels too
    std::memcpy(mem.data(), arena.init().data(), arena.init().size());
    std::vector<int> x(static_cast<size_t>(k.in_c) * k.h * k.w);
    for (auto& v : x) v = uni(-128, 127);
    for (int c = 0; c < k.in_c; ++c)
        for (int y = 0; y < k.h; ++y)
            for (int xx = 0; xx < k.w; ++xx)
                mem[at(in, c, y, xx)] = static_cast<uint8_t>(x[(static_cast<size_t>(c) * k.h + y) * k.w + xx]);
    std::vector<std::string> assumptions;
    run_tasks(tasks, mem, soc, assumptions);
    for (const auto& a : assumptions) o.assumption_named |= a.rfind("A-I2F", 0) == 0;

    // Reference: the float conv of the dequantized values (zero padding in real values).
    std::vector<double> want(static_cast<size_t>(op.out_c) * oh * ow), got(want.size());
    for (int oc = 0; oc < op.out_c; ++oc)
        for (int y = 0; y < oh; ++y)
            for (int xx = 0; xx < ow; ++xx) {
                double s = 0;
                for (int ci = 0; ci < cin_per; ++ci)
                    for (int ky = 0; ky < k.k; ++ky)
                        for (int kx = 0; kx < k.k; ++kx) {
                            const int iy = y * k.stride - k.pad + ky, ix = xx * k.stride - k.pad + kx;
                            if (iy < 0 || iy >= k.h || ix < 0 || ix >= k.w) continue;
                            const int c = k.depthwise ? oc : ci;
                            const double xr = static_cast<double>(op.in_scale) *
                                              (x[(static_cast<size_t>(c) * k.h + iy) * k.w + ix] - k.in_zp);
                            const double wr = static_cast<double>(op.w_scales[static_cast<size_t>(oc)]) *
                                              op.weights[((static_cast<size_t>(oc) * cin_per + ci) * k.k + ky) * k.k + kx];
                            s += xr * wr;
                        }
                const size_t i = (static_cast<size_t>(oc) * oh + y) * ow + xx;
                want[i] = s + op.bias_f[static_cast<size_t>(oc)];
                if (k.act == drv::rknpu::Act::Relu) want[i] = std::max(want[i], 0.0);
                if (k.act == drv::rknpu::Act::Clip) want[i] = std::min(std::max(want[i], double{k.clip_lo}), double{k.clip_hi});
                const uint64_t a = at(out, oc, y, xx);
                got[i] = num::fp16_to_fp32(static_cast<uint16_t>(mem[a] | (mem[a + 1] << 8)));
            }
    for (size_t i = 0; i < want.size(); ++i) {
        o.peak = std::max(o.peak, std::fabs(want[i]));
        o.max_abs = std::max(o.max_abs, std::fabs(got[i] - want[i]));
    }
    return o;
}

void expect_within(const Case& k) {
    const Outcome o = run_case(k);
    std::printf("[float_out] %-26s %-7s tasks %3zu  max |diff| %.3g = %.3g x max |reference| (tolerance %.3g)\n",
                k.name.c_str(), k.soc.c_str(), o.tasks, o.max_abs, o.max_abs / o.peak, drv::rknpu::kFloatOutLayerRtol);
    EXPECT_GT(o.peak, 1.0) << k.name;  // the outputs are not all ~0
    EXPECT_LE(o.max_abs, drv::rknpu::kFloatOutLayerRtol * o.peak) << k.name << " on " << k.soc;
    EXPECT_TRUE(o.assumption_named) << "the model names assumption A-I2F for an int8 conv on the DPU float path";
}

class FloatOut : public ::testing::TestWithParam<std::string> {};

TEST_P(FloatOut, Conv3x3UnsignedInputPerChannel) {
    Case k;
    k.name = "conv3x3_zp", k.soc = GetParam(), k.in_zp = -100;  // uint8 zero point 28
    expect_within(k);
}

TEST_P(FloatOut, StridedPerTensorNoPadding) {
    Case k;
    k.name = "conv3x3_s2", k.soc = GetParam(), k.stride = 2, k.pad = 0, k.w_spread = 1.f, k.in_zp = 5;
    expect_within(k);
}

TEST_P(FloatOut, Depthwise) {
    Case k;
    k.name = "depthwise", k.soc = GetParam(), k.depthwise = true, k.in_c = 48;
    expect_within(k);
}

// The classifier head of MobileNetV2 (Gemm 1280 -> 1000 as a 1x1 conv on a 1x1x1280 input) on three
// cores: kernel groups spread over the cores, each writing its own fp16 surfaces.
TEST_P(FloatOut, ClassifierGemmAcrossCores) {
    Case k;
    k.name = "gemm_1280x1000", k.soc = GetParam(), k.in_c = 1280, k.out_c = 1000, k.h = k.w = 1, k.k = 1, k.pad = 0;
    k.w_spread = 4.f;
    if (k.soc == "rk3588") k.cores = {0, 1, 2};
    expect_within(k);
}

// A YOLOv5s-style detection head (1x1, 255 outputs) on a CBUF small enough to tile rows and kernels.
TEST_P(FloatOut, DetectHeadTiled) {
    Case k;
    k.name = "head_1x1_255", k.soc = GetParam(), k.in_c = 128, k.out_c = 255, k.h = 20, k.w = 20, k.k = 1, k.pad = 0;
    k.cbuf_bank_bytes = 4096;
    const Outcome o = run_case(k);
    EXPECT_GT(o.tasks, 2u);
    expect_within(k);
}

// A Relu / ReLU6 / Clip on the float output in the same DPU program (BN ReLU and RELUX, BN ALU max
// and EW ALU min on the float path): values clamped at the bounds, the rest as without it.
TEST_P(FloatOut, FusedReluAndClip) {
    Case k;
    k.soc = GetParam();
    k.name = "relu", k.act = drv::rknpu::Act::Relu;
    expect_within(k);
    k.name = "relu6", k.act = drv::rknpu::Act::Clip, k.clip_lo = 0.f, k.clip_hi = 6.f;
    expect_within(k);
    k.name = "clip_neg_lo", k.clip_lo = -3.5f, k.clip_hi = 4.25f;
    expect_within(k);
    k.name = "clip_only_hi", k.clip_lo = -std::numeric_limits<float>::infinity(), k.clip_hi = 2.f;
    expect_within(k);
}

INSTANTIATE_TEST_SUITE_P(Socs, FloatOut, ::testing::Values("rk3588", "rk3566"));

// An int8 conv onnxruntime runs in float (ConvOp::float_ref: the TensorRT-style unit whose output
// several QuantizeLinear read): y = Q((sum (x - zp) w) x_scale w_scale[c] + b[c]) with the float bias
// b added as it is, not rounded to an int32 of scale x_scale w_scale[c] (the BN ALU adds the
// fraction the BS ALU's int32 leaves). Every output equals the double-precision reference except
// values within 1e-6 LSB of a rounding tie (none here); the int32-rounded bias would change some.
struct FloatRefOutcome {
    size_t values = 0, off = 0, near_tie = 0, rounded_bias_off = 0;
};

FloatRefOutcome run_float_ref(const std::string& soc_name, bool depthwise, drv::rknpu::Act act, std::vector<int> cores) {
    hw::SocProfile soc = hw::load_named_profile(soc_name);
    std::mt19937 rng(5);
    auto uni = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    const int in_c = depthwise ? 48 : 24, h = 9, w = 11, kk = 3, out_c = depthwise ? 48 : 40;
    const int cin_per = depthwise ? 1 : in_c, taps = kk * kk;
    ConvOp op;
    op.name = "float_ref";
    op.float_ref = true;
    op.in_c = in_c, op.out_c = out_c, op.kernel_h = op.kernel_w = kk;
    op.pad_top = op.pad_left = op.pad_bottom = op.pad_right = 1;
    op.depthwise = depthwise;
    op.act = act;
    op.weights.resize(static_cast<size_t>(out_c) * cin_per * taps);
    for (auto& v : op.weights) v = static_cast<int8_t>(uni(-8, 8));  // small codes: outputs inside int8
    op.in_scale = 0.0173f, op.in_zp = 3;
    // Large per-channel multipliers x_scale w_scale / y_scale (0.05 .. 0.4): an accumulator unit is
    // a sizeable fraction of an output LSB, so a bias rounded to whole accumulator units moves outputs.
    op.out_scale = 0.05f, op.out_zp = -7;
    for (int c = 0; c < out_c; ++c) op.w_scales.push_back(0.15f * std::pow(8.f, static_cast<float>(c) / out_c));
    for (int c = 0; c < out_c; ++c) {
        const double m = double{op.in_scale} * op.w_scales[static_cast<size_t>(c)];
        op.bias_f.push_back(static_cast<float>(m * (uni(-100, 100) + 0.05 * uni(1, 19))));  // fractions 0.05 .. 0.95
    }
    const int c2 = soc.npu.c2_int8.value;
    const uint64_t base = 8u << 20;
    const DeviceTensor in = tensor("x", in_c, h, w, c2, false, base);
    const DeviceTensor out = tensor("y", out_c, h, w, c2, false, (base + in.bytes + 4095) / 4096 * 4096);
    ArenaBuilder arena;
    const auto tasks = drv::rknpu::lower_conv_op(op, in, out, arena, soc, cores);
    std::vector<uint8_t> mem(out.offset + out.bytes + 4096, 0xa5);
    std::memcpy(mem.data(), arena.init().data(), arena.init().size());
    std::vector<int> x(static_cast<size_t>(in_c) * h * w);
    for (auto& v : x) v = uni(-10, 16);
    for (int c = 0; c < in_c; ++c)
        for (int y = 0; y < h; ++y)
            for (int xx = 0; xx < w; ++xx) mem[at(in, c, y, xx)] = static_cast<uint8_t>(x[(static_cast<size_t>(c) * h + y) * w + xx]);
    std::vector<std::string> assumptions;
    run_tasks(tasks, mem, soc, assumptions);
    auto quant = [&](double real) {
        double v = real / op.out_scale;
        if (act == drv::rknpu::Act::Relu) v = std::max(v, 0.0);
        return static_cast<int>(std::clamp(std::nearbyint(v) + op.out_zp, -128.0, 127.0));
    };
    FloatRefOutcome o;
    for (int oc = 0; oc < out_c; ++oc) {
        const double m = double{op.in_scale} * op.w_scales[static_cast<size_t>(oc)];
        const double b = op.bias_f[static_cast<size_t>(oc)];
        const double b_rounded = std::nearbyint(b / m) * m;  // an int32 bias of scale x_scale w_scale
        for (int y = 0; y < h; ++y)
            for (int xx = 0; xx < w; ++xx) {
                int64_t acc = 0;
                for (int ci = 0; ci < cin_per; ++ci)
                    for (int ky = 0; ky < kk; ++ky)
                        for (int kx = 0; kx < kk; ++kx) {
                            const int iy = y - 1 + ky, ix = xx - 1 + kx;
                            if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
                            const int c = depthwise ? oc : ci;
                            acc += int64_t{x[(static_cast<size_t>(c) * h + iy) * w + ix] - op.in_zp} *
                                   op.weights[((static_cast<size_t>(oc) * cin_per + ci) * kk + ky) * kk + kx];
                        }
                const double real = static_cast<double>(acc) * m + b;
                const int want = quant(real);
                const int got = static_cast<int8_t>(mem[at(out, oc, y, xx)]);
                const double frac = real / op.out_scale - std::floor(real / op.out_scale);
                ++o.values;
                o.near_tie += std::fabs(frac - 0.5) < 1e-6;
                o.off += got != want;
                o.rounded_bias_off += quant(static_cast<double>(acc) * m + b_rounded) != want;
            }
    }
    return o;
}

TEST(FloatRef, FloatBiasKeptAsOnnxruntimeAddsIt) {
    for (const std::string soc : {"rk3588", "rk3566"})
        for (bool dw : {false, true})
            for (auto act : {drv::rknpu::Act::None, drv::rknpu::Act::Relu}) {
                const auto o = run_float_ref(soc, dw, act, soc == "rk3588" ? std::vector<int>{0, 1, 2} : std::vector<int>{0});
                std::printf("[float_ref] %s %s %s: %zu values, %zu off (%zu within 1e-6 LSB of a tie); an int32 bias "
                            "would put %zu off\n",
                            soc.c_str(), dw ? "depthwise" : "conv3x3", act == drv::rknpu::Act::Relu ? "relu" : "none",
                            o.values, o.off, o.near_tie, o.rounded_bias_off);
                EXPECT_LE(o.off, o.near_tie) << soc << (dw ? " depthwise" : " conv");
                EXPECT_GT(o.rounded_bias_off, o.values / 100) << "the case does not tell a kept float bias from a rounded one";
            }
}

// The fp16 multiplier's exponent is taken out into BN (2^-exp): channel scales far below fp16's
// normal range (m = 3.6e-5 here, fp16 normals start at 6.1e-5) still keep 11 bits; a channel more than 2^13 below the largest is
// refused (it would be an fp16 subnormal) with a one-line error naming the conv.
TEST(FloatOutLimits, TinyScalesKeepPrecisionHugeSpreadIsRefused) {
    Case k;
    k.name = "tiny_scales", k.w_spread = 2.f;
    const Outcome o = run_case(k);
    EXPECT_LE(o.max_abs, drv::rknpu::kFloatOutLayerRtol * o.peak);
    k.name = "huge_spread", k.w_spread = 65536.f;
    try {
        run_case(k);
        ADD_FAILURE() << "a 2^16 spread of channel scales was lowered";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("conv 'huge_spread'"), std::string::npos) << e.what();
    }
}

}  // namespace
