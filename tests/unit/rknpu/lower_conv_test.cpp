// SPDX-License-Identifier: MIT
// lower_conv_op (conv tiling): a quantized conv lowered into task bodies over a small arena, the
// tasks decoded into a RegFile and run with plan_task/execute_task on the arena bytes (no SystemC),
// the output compared with the reference QLinearConv (num::run_op, onnxruntime arithmetic) followed
// by the fused activation in the int8 domain. Plus verify_tiling on the task windows.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
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

using drv::rknpu::Act;
using drv::rknpu::ArenaBuilder;
using drv::rknpu::ConvOp;
using drv::rknpu::DeviceTensor;
using drv::rknpu::TaskBody;

const hw::SocProfile& profile(const std::string& name) {
    static std::map<std::string, hw::SocProfile> cache;
    auto it = cache.find(name);
    if (it == cache.end()) it = cache.emplace(name, hw::load_named_profile(name)).first;
    return it->second;
}

struct Case {
    std::string name;
    int in_c = 16, h = 8, w = 8, out_c = 16;
    int kh = 3, kw = 3, sh = 1, sw = 1, dh = 1, dw = 1;
    int pt = 1, pl = 1, pb = 1, pr = 1;
    bool depthwise = false;
    bool per_channel = false;
    Act act = Act::None;
    int clip_lo = -128, clip_hi = 127;
    std::string soc = "rk3588";
    std::vector<int> cores = {0};
    // Input is a channel slice (at in_c_off) of a wider tensor with extra columns; output is a
    // channel slice (at out_c_off, C2-aligned) of a concat buffer with out_parent_c channels.
    int in_c_off = 0, in_parent_extra_c = 0, in_extra_w = 0;
    int out_c_off = 0, out_parent_extra_c = 0;
    // A smaller CBUF than the profile's (bytes per bank; 0 = the profile's) to force tiling on
    // small layers; the model validates against the same shrunken profile.
    uint32_t cbuf_bank_bytes = 0;
    // Per-channel weight scales spread over 2^16 with biases large enough that the small-scale
    // channels still produce outputs (the requantization's extreme case).
    bool extreme_scales = false;
};

struct Outcome {
    std::vector<TaskBody> tasks;
    size_t values = 0, equal = 0, off1 = 0, worse = 0;
    int max_diff = 0;
    bool outside_untouched = true;
};

int round_up(int v, int m) { return (v + m - 1) / m * m; }

/// A device tensor inside a parent NC1HWC2 image at arena offset `base`.
DeviceTensor tensor_at(const std::string& name, int c, int h, int w, int c2, uint64_t base, int parent_c, int parent_w,
                       int c_off) {
    DeviceTensor t;
    t.name = name;
    t.c = c, t.h = h, t.w = w, t.c2 = c2;
    t.line_stride = static_cast<uint32_t>(parent_w * c2);
    t.surf_stride = static_cast<uint32_t>(round_up(t.line_stride * h, 16));
    t.offset = base + static_cast<uint64_t>(c_off / c2) * t.surf_stride;
    t.bytes = static_cast<uint64_t>(t.surf_stride) * (round_up(parent_c, c2) / c2);
    return t;
}
uint64_t at(const DeviceTensor& t, int c, int y, int x) {
    return t.offset + static_cast<uint64_t>(c / t.c2) * t.surf_stride + static_cast<uint64_t>(y) * t.line_stride +
           static_cast<uint64_t>(x) * t.c2 + static_cast<uint64_t>(c % t.c2);
}

/// Execute task bodies against the arena image (addresses are arena offsets: base 0), one
/// register file per core kept across tasks as in PC mode.
void run_tasks(const std::vector<TaskBody>& tasks, std::vector<uint8_t>& mem, const hw::SocProfile& soc) {
    std::map<int, npu::rknpu::RegFile> rfs;
    for (const TaskBody& t : tasks) {
        npu::rknpu::RegFile& rf = rfs[t.meta.core];
        for (uint64_t w : t.words) {
            const auto c = hw::rknpu::RegCmd::decode(w);
            if (c.target() != 0 && c.is_write()) rf.write(c.offset, c.value);
        }
        const npu::rknpu::TaskPlan plan = npu::rknpu::plan_task(rf, t.meta.enable_mask, soc);
        if (!plan.faults.empty())
            throw std::runtime_error(t.meta.what + ": fault " + plan.faults.front().block + "." +
                                     plan.faults.front().reg + ": " + plan.faults.front().message);
        std::vector<std::vector<uint8_t>> in;
        for (const auto& r : plan.reads) {
            if (r.addr + r.bytes > mem.size()) throw std::runtime_error("read outside the arena: " + r.what);
            in.emplace_back(mem.begin() + static_cast<std::ptrdiff_t>(r.addr),
                            mem.begin() + static_cast<std::ptrdiff_t>(r.addr + r.bytes));
        }
        const auto out = npu::rknpu::execute_task(plan, in);
        // The same task with each run of consecutive regions of one kind concatenated in its first
        // buffer (the others empty), as RknpuCore's DMA hands a cube read surface by surface to
        // the engines: the same writes.
        std::vector<std::vector<uint8_t>> merged(in.size());
        for (size_t i = 0; i < in.size();) {
            size_t j = i + 1;
            merged[i] = in[i];
            while (j < in.size() && plan.reads[j].what == plan.reads[i].what && plan.reads[j].bytes > 0 && in[i].size() > 0) {
                merged[i].insert(merged[i].end(), in[j].begin(), in[j].end());
                ++j;
            }
            i = j;
        }
        if (npu::rknpu::execute_task(plan, std::move(merged)) != out)
            throw std::runtime_error(t.meta.what + ": the writes differ when same-kind reads arrive concatenated");
        for (size_t i = 0; i < out.size(); ++i) {
            if (plan.writes[i].addr + out[i].size() > mem.size()) throw std::runtime_error("write outside the arena");
            std::memcpy(mem.data() + plan.writes[i].addr, out[i].data(), out[i].size());
        }
    }
}

Outcome run_case(const Case& k, uint32_t seed = 1) {
    hw::SocProfile soc = profile(k.soc);
    if (k.cbuf_bank_bytes) soc.npu.cbuf_bank_bytes.value = k.cbuf_bank_bytes;
    const int c2 = soc.npu.c2_int8.value;
    std::mt19937 rng(seed);
    auto uni = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };

    ConvOp op;
    op.name = k.name;
    op.in_c = k.in_c, op.out_c = k.out_c;
    op.kernel_h = k.kh, op.kernel_w = k.kw, op.stride_h = k.sh, op.stride_w = k.sw;
    op.dilation_h = k.dh, op.dilation_w = k.dw;
    op.pad_top = k.pt, op.pad_left = k.pl, op.pad_bottom = k.pb, op.pad_right = k.pr;
    op.depthwise = k.depthwise;
    const int cin_per = k.depthwise ? 1 : k.in_c;
    const size_t nw = static_cast<size_t>(k.out_c) * cin_per * k.kh * k.kw;
    op.weights.resize(nw);
    for (auto& v : op.weights) v = static_cast<int8_t>(uni(-127, 127));
    op.bias.resize(static_cast<size_t>(k.out_c));
    for (auto& v : op.bias) v = uni(-20000, 20000);
    op.in_scale = 0.0213f;
    op.in_zp = 7;
    op.out_zp = -5;
    float wmean = 0.004f;
    if (k.per_channel) {
        op.w_scales.resize(static_cast<size_t>(k.out_c));
        // Spread over a factor ~64 (typical per-channel weight scales), with a float mantissa.
        for (auto& s : op.w_scales) s = 0.0005f * std::pow(2.0f, static_cast<float>(uni(0, 6000)) / 1000.0f);
    } else {
        op.w_scales = {wmean};
    }
    if (k.extreme_scales) {
        op.w_scales.resize(static_cast<size_t>(k.out_c));
        for (int c = 0; c < k.out_c; ++c) op.w_scales[static_cast<size_t>(c)] = 0.004f * std::ldexp(1.0f, -(c % 17));
    }
    // Output scale: outputs spread over roughly +-60 for the median channel.
    const double acc_std = std::sqrt(static_cast<double>(cin_per) * k.kh * k.kw) * 74.0 * 73.0;
    op.out_scale = static_cast<float>(op.in_scale * (k.per_channel ? 0.004 : wmean) * acc_std / 40.0);
    op.act = k.act;
    op.clip_lo = k.clip_lo, op.clip_hi = k.clip_hi;
    if (k.extreme_scales)
        for (int c = 0; c < k.out_c; ++c) {
            // A bias worth about +-40 output steps, within int32.
            const double m = static_cast<double>(op.in_scale) * op.w_scales[static_cast<size_t>(c)] / op.out_scale;
            op.bias[static_cast<size_t>(c)] =
                static_cast<int32_t>(std::clamp((c % 2 ? 40.0 : -40.0) / m, -2.0e9, 2.0e9));
        }

    const int oh = (k.h + k.pt + k.pb - ((k.kh - 1) * k.dh + 1)) / k.sh + 1;
    const int ow = (k.w + k.pl + k.pr - ((k.kw - 1) * k.dw + 1)) / k.sw + 1;

    // Arena: initialised constants first (lower_conv_op appends), activations at a fixed offset above.
    // Constants: packed weights (<= out_c x taps x C padded, or per group for depthwise) plus DPU
    // operands (10 bytes per channel per group), with room to spare.
    const uint64_t const_bytes = static_cast<uint64_t>(round_up(k.out_c, 64)) * round_up(k.in_c, 64) * k.kh * k.kw +
                                 64ull * round_up(k.out_c, 16) + 65536;
    const uint64_t kActBase = (2 * const_bytes + 4095) / 4096 * 4096;
    const int in_parent_c = k.in_c + k.in_c_off + k.in_parent_extra_c, in_parent_w = k.w + k.in_extra_w;
    const int out_parent_c = k.out_c + k.out_c_off + k.out_parent_extra_c;
    DeviceTensor in = tensor_at("x", k.in_c, k.h, k.w, c2, kActBase, in_parent_c, in_parent_w, k.in_c_off);
    in.scale = op.in_scale, in.zp = op.in_zp;
    const uint64_t in_base = kActBase;
    const uint64_t out_base = (kActBase + in.bytes + 4095) / 4096 * 4096;
    DeviceTensor out = tensor_at("y", k.out_c, oh, ow, c2, out_base, out_parent_c, ow, k.out_c_off);
    out.scale = op.out_scale, out.zp = op.out_zp;
    const uint64_t out_parent_bytes = out.bytes;

    ArenaBuilder arena;
    Outcome o;
    o.tasks = drv::rknpu::lower_conv_op(op, in, out, arena, soc, k.cores);
    if (arena.size() > kActBase) throw std::runtime_error("test arena too small for the constants");

    std::vector<uint8_t> mem(out_base + out_parent_bytes + 4096);
    for (size_t i = 0; i < mem.size(); i += 4) {  // garbage everywhere, padding channels included
        const uint32_t r32 = static_cast<uint32_t>(rng());
        for (size_t j = 0; j < 4 && i + j < mem.size(); ++j) mem[i + j] = static_cast<uint8_t>(r32 >> (8 * j));
    }
    std::memcpy(mem.data(), arena.init().data(), arena.init().size());
    std::vector<int> x(static_cast<size_t>(k.in_c) * k.h * k.w);
    for (auto& v : x) v = uni(-128, 127);
    for (int c = 0; c < k.in_c; ++c)
        for (int y = 0; y < k.h; ++y)
            for (int xx = 0; xx < k.w; ++xx)
                mem[at(in, c, y, xx)] = static_cast<uint8_t>(x[(static_cast<size_t>(c) * k.h + y) * k.w + xx]);
    const std::vector<uint8_t> before = mem;
    (void)in_base;

    run_tasks(o.tasks, mem, soc);

    // Reference: QLinearConv on NCHW int8, then the activation in the int8 domain.
    num::Tensor tx(num::DType::I8, {1, k.in_c, k.h, k.w});
    for (size_t i = 0; i < x.size(); ++i) tx.data<int8_t>()[i] = static_cast<int8_t>(x[i]);
    num::Tensor tw(num::DType::I8, {k.out_c, cin_per, k.kh, k.kw});
    std::memcpy(tw.data<int8_t>(), op.weights.data(), nw);
    num::Tensor txs(num::DType::F32, {}), txz(num::DType::I8, {}), tys(num::DType::F32, {}), tyz(num::DType::I8, {});
    txs.data<float>()[0] = op.in_scale, txz.data<int8_t>()[0] = static_cast<int8_t>(op.in_zp);
    tys.data<float>()[0] = op.out_scale, tyz.data<int8_t>()[0] = static_cast<int8_t>(op.out_zp);
    num::Tensor tws(num::DType::F32, {static_cast<int64_t>(op.w_scales.size())});
    for (size_t i = 0; i < op.w_scales.size(); ++i) tws.data<float>()[i] = op.w_scales[i];
    num::Tensor twz(num::DType::I8, {});
    twz.data<int8_t>()[0] = 0;
    num::Tensor tb(num::DType::I32, {k.out_c});
    std::memcpy(tb.data<int32_t>(), op.bias.data(), 4 * op.bias.size());
    num::Attributes a;
    a.set("kernel_shape", std::vector<int64_t>{k.kh, k.kw});
    a.set("strides", std::vector<int64_t>{k.sh, k.sw});
    a.set("dilations", std::vector<int64_t>{k.dh, k.dw});
    a.set("pads", std::vector<int64_t>{k.pt, k.pl, k.pb, k.pr});
    a.set("group", int64_t{k.depthwise ? k.in_c : 1});
    const auto ref = num::run_op("QLinearConv", a, {&tx, &txs, &txz, &tw, &tws, &twz, &tys, &tyz, &tb});
    const int8_t* r = ref.at(0).data<int8_t>();
    for (int c = 0; c < k.out_c; ++c)
        for (int y = 0; y < oh; ++y)
            for (int xx = 0; xx < ow; ++xx) {
                int want = r[(static_cast<size_t>(c) * oh + y) * ow + xx];
                if (k.act == Act::Relu) want = std::max(want, op.out_zp);
                if (k.act == Act::Clip) want = std::clamp(want, std::max(-128, k.clip_lo), std::min(127, k.clip_hi));
                const int got = static_cast<int8_t>(mem[at(out, c, y, xx)]);
                const int d = std::abs(got - want);
                ++o.values;
                if (d == 0)
                    ++o.equal;
                else if (d == 1)
                    ++o.off1;
                else
                    ++o.worse;
                o.max_diff = std::max(o.max_diff, d);
            }
    // Nothing outside the output slice's surfaces changed (other concat inputs, the input tensor).
    const uint64_t s0 = out.offset,
                   s1 = out.offset + static_cast<uint64_t>(round_up(k.out_c, c2) / c2) * out.surf_stride;
    for (uint64_t i = kActBase; i < mem.size(); ++i)
        if ((i < s0 || i >= s1) && mem[i] != before[i]) {
            o.outside_untouched = false;
            break;
        }
    return o;
}

void report(const Case& k, const Outcome& o) {
    std::printf("[lower_conv] %-28s tasks %3zu  values %7zu  exact %.5f  1-LSB %zu (%.5f)  worse %zu\n",
                k.name.c_str(), o.tasks.size(), o.values, static_cast<double>(o.equal) / o.values, o.off1,
                static_cast<double>(o.off1) / o.values, o.worse);
}

/// Equality or 1 LSB on at most `max_off1` of the values, output slice only.
void expect_close(const Case& k, double max_off1 = 0.001) {
    const Outcome o = run_case(k);
    report(k, o);
    EXPECT_EQ(o.worse, 0u) << k.name << ": max |diff| " << o.max_diff;
    EXPECT_LE(static_cast<double>(o.off1) / o.values, max_off1) << k.name;
    EXPECT_TRUE(o.outside_untouched) << k.name << ": wrote outside its output slice";
}

Case base(const std::string& name) {
    Case k;
    k.name = name;
    return k;
}

drv::rknpu::CompiledModel one_layer_model(const Case& k, const std::vector<TaskBody>& bodies);

TEST(LowerConv, Conv3x3Stride1Pad1) {
    Case k = base("3x3 s1 p1");
    k.in_c = 32, k.out_c = 32, k.h = 12, k.w = 10;
    expect_close(k);
}

TEST(LowerConv, Conv3x3Stride2) {
    Case k = base("3x3 s2 p1");
    k.in_c = 24, k.out_c = 48, k.h = 15, k.w = 14, k.sh = k.sw = 2;
    expect_close(k);
}

TEST(LowerConv, Conv3x3Stride2AsymmetricPad) {
    Case k = base("3x3 s2 pads 0,0,1,1");
    k.in_c = 16, k.out_c = 16, k.h = 14, k.w = 14, k.sh = k.sw = 2, k.pt = k.pl = 0;
    expect_close(k);
}

TEST(LowerConv, Pointwise) {
    Case k = base("1x1");
    k.in_c = 64, k.out_c = 40, k.h = 9, k.w = 7, k.kh = k.kw = 1, k.pt = k.pl = k.pb = k.pr = 0;
    expect_close(k);
}

TEST(LowerConv, Depthwise3x3) {
    Case k = base("dw 3x3 s1");
    k.in_c = k.out_c = 48, k.h = 10, k.w = 11, k.depthwise = true;
    expect_close(k);
    k.name = "dw 3x3 s2", k.sh = k.sw = 2;
    expect_close(k);
}

TEST(LowerConv, BigKernels) {
    Case k = base("5x5 p2");
    k.in_c = 16, k.out_c = 32, k.h = 11, k.w = 12, k.kh = k.kw = 5, k.pt = k.pl = k.pb = k.pr = 2;
    expect_close(k);
    k = base("7x7 s2 p3 Cin 3");
    k.in_c = 3, k.out_c = 32, k.h = 30, k.w = 28, k.kh = k.kw = 7, k.sh = k.sw = 2, k.pt = k.pl = k.pb = k.pr = 3;
    expect_close(k);
    k = base("6x6 s2 p2");
    k.in_c = 3, k.out_c = 32, k.h = 32, k.w = 32, k.kh = k.kw = 6, k.sh = k.sw = 2, k.pt = k.pl = k.pb = k.pr = 2;
    expect_close(k);
}

TEST(LowerConv, Dilation2) {
    Case k = base("3x3 dilation 2");
    k.in_c = 16, k.out_c = 16, k.h = 13, k.w = 13, k.dh = k.dw = 2, k.pt = k.pl = k.pb = k.pr = 2;
    expect_close(k);
}

TEST(LowerConv, PerChannelScalesReluClip) {
    Case k = base("per-channel");
    k.in_c = 32, k.out_c = 64, k.h = 9, k.w = 9, k.per_channel = true;
    expect_close(k);
    k.name = "per-channel relu", k.act = Act::Relu;
    expect_close(k);
    k.name = "per-channel clip", k.act = Act::Clip, k.clip_lo = -5, k.clip_hi = 40;  // ReLU6-like bounds
    expect_close(k);
    k = base("dw per-channel clip");
    k.in_c = k.out_c = 32, k.depthwise = true, k.per_channel = true, k.act = Act::Clip, k.clip_lo = -20, k.clip_hi = 90;
    expect_close(k);
}

TEST(LowerConv, ExtremePerChannelScales) {
    Case k = base("scales spread 2^16");
    k.in_c = 16, k.out_c = 34, k.h = 6, k.w = 6, k.extreme_scales = true;
    expect_close(k);
}

TEST(LowerConv, PointwiseStride2ReadsEveryOtherRow) {
    // ResNet projection: 1x1 s2. The lowering reads rows 0, 2, 4, ... only (LINE_STRIDE = 2 lines).
    Case k = base("1x1 s2 512->1024 28x28");
    k.in_c = 512, k.out_c = 1024, k.h = 28, k.w = 28, k.kh = k.kw = 1, k.sh = k.sw = 2;
    k.pt = k.pl = k.pb = k.pr = 0;
    const Outcome o = run_case(k);
    report(k, o);
    EXPECT_EQ(o.worse, 0u);
    EXPECT_LE(static_cast<double>(o.off1) / o.values, 0.001);
    const auto m = one_layer_model(k, o.tasks);
    const auto problems = drv::rknpu::verify_tiling(m, profile("rk3588"));
    EXPECT_TRUE(problems.empty()) << (problems.empty() ? "" : problems.front());
    for (const TaskBody& t : o.tasks) {  // DATAIN_HEIGHT = output rows of the band, not 2x
        uint32_t datain_h = 0;
        for (uint64_t w : t.words) {
            const auto c = hw::rknpu::RegCmd::decode(w);
            if (c.offset == 0x1020) datain_h = c.value & 0x7ff;  // CNA_DATA_SIZE0.DATAIN_HEIGHT
        }
        EXPECT_EQ(static_cast<int>(datain_h), t.meta.out_window.y1 - t.meta.out_window.y0) << t.meta.what;
    }
    // Odd height: 15 rows -> 8 output rows would need 16 lines of stride: read all rows instead.
    k = base("1x1 s2 64->32 15x15");
    k.in_c = 64, k.out_c = 32, k.h = 15, k.w = 15, k.kh = k.kw = 1, k.sh = k.sw = 2;
    k.pt = k.pl = k.pb = k.pr = 0;
    expect_close(k);
}

TEST(LowerConv, OddChannelCounts) {
    Case k = base("Cin 3 Cout 20");
    k.in_c = 3, k.out_c = 20, k.h = 16, k.w = 16;
    expect_close(k);
    k = base("dw C 40");
    k.in_c = k.out_c = 40, k.depthwise = true;
    expect_close(k);
}

TEST(LowerConv, StridedTensorsAndConcatSlice) {
    Case k = base("slices in/out");
    k.in_c = 32, k.out_c = 20, k.h = 10, k.w = 9;
    k.in_c_off = 16, k.in_parent_extra_c = 16, k.in_extra_w = 3;
    k.out_c_off = 32, k.out_parent_extra_c = 16;
    expect_close(k);
}

TEST(LowerConv, RowTilingWorkedExample) {
    // hardware-facts.md Part III 5.4: 64->64 3x3 on 160x160 does not fit the CBUF in one task.
    Case k = base("64->64 3x3 160x160");
    k.in_c = 64, k.out_c = 64, k.h = 160, k.w = 160;
    const Outcome o = run_case(k);
    report(k, o);
    EXPECT_EQ(o.worse, 0u);
    EXPECT_LE(static_cast<double>(o.off1) / o.values, 0.001);
    ASSERT_GT(o.tasks.size(), 1u);
    const hw::SocProfile& soc = profile("rk3588");
    int next_row = 0;
    for (const TaskBody& t : o.tasks) {
        std::printf("[lower_conv]   %-26s in rows %3d-%3d  banks %d data + %d weight\n", t.meta.what.c_str(),
                    t.meta.in_window.y0, t.meta.in_window.y1 - 1, t.meta.cbuf_data_banks, t.meta.cbuf_weight_banks);
        EXPECT_EQ(t.meta.out_window.y0, next_row);
        next_row = t.meta.out_window.y1;
        EXPECT_LE(t.meta.cbuf_data_banks + t.meta.cbuf_weight_banks, soc.npu.cbuf_banks.value);
        // Halo: rows y0-1 .. y1 of the input (clipped) for a 3x3 s1 p1.
        EXPECT_EQ(t.meta.in_window.y0, std::max(0, t.meta.out_window.y0 - 1));
        EXPECT_EQ(t.meta.in_window.y1, std::min(160, t.meta.out_window.y1 + 1));
    }
    EXPECT_EQ(next_row, 160);
}

TEST(LowerConv, KernelSplit) {
    Case k = base("1x1 2048->1000 on 1x1");
    k.in_c = 2048, k.out_c = 1000, k.h = 1, k.w = 1, k.kh = k.kw = 1, k.pt = k.pl = k.pb = k.pr = 0;
    Outcome o = run_case(k);
    report(k, o);
    EXPECT_EQ(o.worse, 0u);
    EXPECT_GT(o.tasks.size(), 1u);
    int next_k = 0;
    for (const TaskBody& t : o.tasks) {
        EXPECT_EQ(t.meta.out_window.c0, next_k);
        EXPECT_EQ(t.meta.out_window.c0 % 16, 0);
        next_k = t.meta.out_window.c1;
    }
    EXPECT_EQ(next_k, 1000);
    k = base("3x3 512->512 on 7x7");
    k.in_c = 512, k.out_c = 512, k.h = 7, k.w = 7;
    o = run_case(k);
    report(k, o);
    EXPECT_EQ(o.worse, 0u);
    EXPECT_GT(o.tasks.size(), 1u);
}

TEST(LowerConv, MultiCore) {
    Case k = base("3 cores 64->64 3x3 40x40");
    k.in_c = 64, k.out_c = 64, k.h = 40, k.w = 40, k.cores = {0, 1, 2};
    const Outcome o = run_case(k);
    report(k, o);
    EXPECT_EQ(o.worse, 0u);
    std::map<int, int> per_core;
    std::map<int, int> last_row;
    for (const TaskBody& t : o.tasks) {
        ++per_core[t.meta.core];
        // Each core's tasks stay in row order.
        if (last_row.count(t.meta.core)) {
            EXPECT_GE(t.meta.out_window.y0, last_row[t.meta.core]);
        }
        last_row[t.meta.core] = t.meta.out_window.y1;
    }
    EXPECT_EQ(per_core.size(), 3u);
    k = base("3 cores 7x7 512->512");
    k.in_c = 512, k.out_c = 512, k.h = 7, k.w = 7, k.cores = {0, 1, 2};
    const Outcome o2 = run_case(k);
    report(k, o2);
    EXPECT_EQ(o2.worse, 0u);
    std::map<int, int> cores2;
    for (const TaskBody& t : o2.tasks) ++cores2[t.meta.core];
    EXPECT_EQ(cores2.size(), 3u);
    // Weight-heavy 1x1 (256 KiB of weights, 12 KiB of input): cores split the kernels, not rows.
    k = base("3 cores 1x1 256->1024 7x7");
    k.in_c = 256, k.out_c = 1024, k.h = 7, k.w = 7, k.kh = k.kw = 1, k.pt = k.pl = k.pb = k.pr = 0, k.cores = {0, 1, 2};
    const Outcome o3 = run_case(k);
    report(k, o3);
    EXPECT_EQ(o3.worse, 0u);
    std::map<int, int> cores3;
    for (const TaskBody& t : o3.tasks) {
        ++cores3[t.meta.core];
        EXPECT_EQ(t.meta.out_window.y0, 0);
        EXPECT_EQ(t.meta.out_window.y1, 7);
    }
    EXPECT_EQ(cores3.size(), 3u);
    // Depthwise: channel groups per core.
    k = base("3 cores dw 96ch 56x56 s1");
    k.in_c = k.out_c = 96, k.h = 56, k.w = 56, k.depthwise = true, k.cores = {0, 1, 2};
    const Outcome o4 = run_case(k);
    report(k, o4);
    EXPECT_EQ(o4.worse, 0u);
    std::map<int, int> cores4;
    for (const TaskBody& t : o4.tasks) ++cores4[t.meta.core];
    EXPECT_EQ(cores4.size(), 3u);
}

TEST(LowerConv, C2Eight) {
    // RK3566: C2 = 8 (8-byte atoms); needs the model's per-profile atom size.
    Case k = base("rk3566 3x3 s1");
    k.soc = "rk3566", k.in_c = 20, k.out_c = 24, k.h = 9, k.w = 7;
    expect_close(k);
    k = base("rk3566 dw s2 per-channel");
    k.soc = "rk3566", k.in_c = k.out_c = 24, k.depthwise = true, k.sh = k.sw = 2, k.per_channel = true;
    expect_close(k);
}

TEST(LowerConv, BadInputIsOneLineError) {
    const hw::SocProfile& soc = profile("rk3588");
    ConvOp op;
    op.name = "bad";
    op.in_c = 16, op.out_c = 16, op.kernel_h = op.kernel_w = 3;
    op.weights.assign(16 * 16 * 9, 1);
    op.w_scales = {0.01f};
    DeviceTensor in = tensor_at("x", 16, 8, 8, 16, 0, 16, 8, 0);
    DeviceTensor out = tensor_at("y", 16, 6, 6, 16, 4096, 16, 6, 0);
    ArenaBuilder arena;
    EXPECT_NO_THROW(drv::rknpu::lower_conv_op(op, in, out, arena, soc, {0}));
    out.h = 8;  // geometry mismatch
    try {
        drv::rknpu::lower_conv_op(op, in, out, arena, soc, {0});
        FAIL() << "no error";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("conv 'bad'"), std::string::npos);
        EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
    }
    out.h = 6;
    op.kernel_h = 40;
    EXPECT_THROW(drv::rknpu::lower_conv_op(op, in, out, arena, soc, {0}), std::invalid_argument);
}

/// A one-layer CompiledModel around the tasks of a lowered 3x3 s1 p1 conv (64->64, 160x160 on
/// rk3588: 7 row bands; or 3x3 512->512 7x7: kernel groups), for verify_tiling.
drv::rknpu::CompiledModel one_layer_model(const Case& k, const std::vector<TaskBody>& bodies) {
    drv::rknpu::CompiledModel m;
    m.soc = k.soc;
    drv::ir::Value x, w, y;
    x.name = "x", w.name = "w", y.name = "y";
    w.shape = {k.out_c, k.depthwise ? 1 : k.in_c, k.kh, k.kw};
    m.graph.add_value(x), m.graph.add_value(w), m.graph.add_value(y);
    drv::ir::Node n;
    n.name = "conv", n.op_type = "QLinearConv";
    n.inputs = {"x", "xs", "xz", "w", "ws", "wz", "ys", "yz"};
    n.outputs = {"y"};
    n.attrs.set("strides", std::vector<int64_t>{k.sh, k.sw});
    n.attrs.set("dilations", std::vector<int64_t>{k.dh, k.dw});
    n.attrs.set("pads", std::vector<int64_t>{k.pt, k.pl, k.pb, k.pr});
    n.attrs.set("group", int64_t{k.depthwise ? k.in_c : 1});
    m.graph.add_node(n);
    const int c2 = profile(k.soc).npu.c2_int8.value;
    const int oh = (k.h + k.pt + k.pb - ((k.kh - 1) * k.dh + 1)) / k.sh + 1;
    const int ow = (k.w + k.pl + k.pr - ((k.kw - 1) * k.dw + 1)) / k.sw + 1;
    m.tensors["x"] = tensor_at("x", k.in_c, k.h, k.w, c2, 0, k.in_c, k.w, 0);
    m.tensors["y"] = tensor_at("y", k.out_c, oh, ow, c2, 0, k.out_c, ow, 0);
    drv::rknpu::Layer L;
    L.name = "conv", L.op = "Conv", L.inputs = {"x"}, L.outputs = {"y"}, L.ir_nodes = {0};
    for (const TaskBody& b : bodies) {
        L.tasks.push_back(m.tasks.size());
        m.tasks.push_back(b.meta);
    }
    m.layers.push_back(L);
    return m;
}

bool mentions(const std::vector<std::string>& problems, const std::string& what) {
    for (const auto& p : problems)
        if (p.find(what) != std::string::npos) return true;
    return false;
}

TEST(VerifyTiling, LoweredLayersVerify) {
    const hw::SocProfile& soc = profile("rk3588");
    for (Case k : {base("rows"), base("kernels"), base("dw s2")}) {
        if (k.name == "rows") k.in_c = 64, k.out_c = 64, k.h = 160, k.w = 160;
        if (k.name == "kernels") k.in_c = 512, k.out_c = 512, k.h = 7, k.w = 7, k.cores = {0, 1, 2};
        if (k.name == "dw s2") k.in_c = k.out_c = 96, k.h = 112, k.w = 112, k.depthwise = true, k.sh = k.sw = 2;
        ArenaBuilder arena;
        ConvOp op;
        op.name = k.name, op.in_c = k.in_c, op.out_c = k.out_c, op.depthwise = k.depthwise;
        op.kernel_h = op.kernel_w = 3, op.stride_h = op.stride_w = k.sh;
        op.pad_top = op.pad_left = op.pad_bottom = op.pad_right = 1;
        op.weights.assign(static_cast<size_t>(k.out_c) * (k.depthwise ? 1 : k.in_c) * 9, 1);
        op.w_scales = {0.01f};
        const auto m0 = one_layer_model(k, {});
        const auto bodies = drv::rknpu::lower_conv_op(op, m0.tensors.at("x"), m0.tensors.at("y"), arena, soc, k.cores);
        const auto m = one_layer_model(k, bodies);
        const auto problems = drv::rknpu::verify_tiling(m, soc);
        EXPECT_TRUE(problems.empty()) << k.name << ": " << (problems.empty() ? "" : problems.front());
        std::printf("[verify_tiling] %-8s %zu tasks verified\n", k.name.c_str(), bodies.size());
    }
}

TEST(VerifyTiling, BrokenWindowsAreReported) {
    const hw::SocProfile& soc = profile("rk3588");
    Case k = base("rows");
    k.in_c = 64, k.out_c = 64, k.h = 160, k.w = 160;
    ArenaBuilder arena;
    ConvOp op;
    op.name = "rows", op.in_c = 64, op.out_c = 64, op.kernel_h = op.kernel_w = 3;
    op.pad_top = op.pad_left = op.pad_bottom = op.pad_right = 1;
    op.weights.assign(64 * 64 * 9, 1);
    op.w_scales = {0.01f};
    const auto m0 = one_layer_model(k, {});
    const auto bodies = drv::rknpu::lower_conv_op(op, m0.tensors.at("x"), m0.tensors.at("y"), arena, soc, {0});
    ASSERT_GE(bodies.size(), 3u);
    const drv::rknpu::CompiledModel good = one_layer_model(k, bodies);
    ASSERT_TRUE(drv::rknpu::verify_tiling(good, soc).empty());
    const std::string t1 = good.tasks[1].what;

    auto m = good;  // gap: task 1 stops one row early
    m.tasks[1].out_window.y1 -= 1;
    auto p = drv::rknpu::verify_tiling(m, soc);
    EXPECT_TRUE(mentions(p, "gap")) << (p.empty() ? "none" : p.front());
    EXPECT_TRUE(mentions(p, "layer 'conv'"));

    m = good;  // overlap: task 1 writes one row of task 2
    m.tasks[1].out_window.y1 += 1;
    p = drv::rknpu::verify_tiling(m, soc);
    EXPECT_TRUE(mentions(p, "overlaps")) << (p.empty() ? "none" : p.front());
    EXPECT_TRUE(mentions(p, m.tasks[2].what));

    m = good;  // halo: the band's input misses its last needed row
    m.tasks[1].in_window.y1 -= 1;
    p = drv::rknpu::verify_tiling(m, soc);
    ASSERT_EQ(p.size(), 1u);
    EXPECT_TRUE(mentions(p, "task '" + t1 + "'")) << p.front();
    EXPECT_TRUE(mentions(p, "do not include rows")) << p.front();

    m = good;  // halo at the top
    m.tasks[1].in_window.y0 += 1;
    EXPECT_TRUE(mentions(drv::rknpu::verify_tiling(m, soc), "do not include rows"));

    m = good;  // CBUF over-subscribed
    m.tasks[0].cbuf_weight_banks = soc.npu.cbuf_banks.value;
    EXPECT_TRUE(mentions(drv::rknpu::verify_tiling(m, soc), "CBUF banks exceed"));

    m = good;  // more input rows than the data banks hold
    m.tasks[0].in_window.y1 = 160;
    EXPECT_TRUE(mentions(drv::rknpu::verify_tiling(m, soc), "CBUF entries"));

    m = good;  // output outside the tensor
    m.tasks.back().out_window.y1 = 161;
    EXPECT_TRUE(mentions(drv::rknpu::verify_tiling(m, soc), "outside the"));

    m = good;  // a task missing from the layer
    m.layers[0].tasks.pop_back();
    EXPECT_TRUE(mentions(drv::rknpu::verify_tiling(m, soc), "gap"));
}

TEST(VerifyTiling, FusedQdqUnitKeepsTheConvGeometry) {
    // The layer of an int8-activation QDQ unit (onnxruntime's ort_qdq_s8 convention, also PyTorch FX
    // and TensorRT style: DequantizeLinear x, DequantizeLinear w -> Conv -> QuantizeLinear, which
    // onnxruntime runs in float on x86 and the compiler fuses) lists the unit's nodes in graph
    // order, the input's DequantizeLinear first. The verifier must take the rows from the Conv
    // (3x3 s2 p1: output band rows y0-y1 read input rows 2*y0-1 .. 2*y1-1), not from the
    // element-wise DQ; the Conv gives no kernel_shape and reads the float weight the DQ makes, so
    // the kernel height comes from the quantized weight behind it. Regression: ResNet50 v2 /
    // YOLOv5s *_qdq_s8 failed --verify-tiling while their uint8 forms passed.
    const hw::SocProfile& soc = profile("rk3588");
    Case k = base("qdq s2");
    k.in_c = 64, k.out_c = 64, k.h = 160, k.w = 160, k.sh = k.sw = 2;
    ArenaBuilder arena;
    ConvOp op;
    op.name = k.name, op.in_c = 64, op.out_c = 64, op.kernel_h = op.kernel_w = 3, op.stride_h = op.stride_w = 2;
    op.pad_top = op.pad_left = op.pad_bottom = op.pad_right = 1;
    op.weights.assign(64 * 64 * 9, 1);
    op.w_scales = {0.01f};
    const auto m0 = one_layer_model(k, {});
    const auto bodies = drv::rknpu::lower_conv_op(op, m0.tensors.at("x"), m0.tensors.at("y"), arena, soc, {0});
    ASSERT_GE(bodies.size(), 2u);  // row bands: the halo matters
    drv::rknpu::CompiledModel good = one_layer_model(k, bodies);
    drv::ir::Graph g;
    for (const char* v : {"x", "x_dq", "w_q", "w_dq", "y_f", "y"}) {
        drv::ir::Value val;
        val.name = v;
        if (std::string(v) == "w_q") val.shape = {64, 64, 3, 3};
        g.add_value(val);
    }
    auto node = [&](const std::string& name, const std::string& type, std::vector<std::string> in, std::string out) {
        drv::ir::Node n;
        n.name = name, n.op_type = type, n.inputs = std::move(in), n.outputs = {std::move(out)};
        return n;
    };
    g.add_node(node("dq_x", "DequantizeLinear", {"x", "xs", "xz"}, "x_dq"));
    g.add_node(node("dq_w", "DequantizeLinear", {"w_q", "ws", "wz"}, "w_dq"));
    drv::ir::Node conv = node("conv", "Conv", {"x_dq", "w_dq"}, "y_f");
    conv.attrs.set("strides", std::vector<int64_t>{2, 2});
    conv.attrs.set("pads", std::vector<int64_t>{1, 1, 1, 1});
    g.add_node(conv);
    g.add_node(node("q_y", "QuantizeLinear", {"y_f", "ys", "yz"}, "y"));
    good.graph = std::move(g);
    good.layers[0].ir_nodes = {0, 1, 2, 3};
    auto p = drv::rknpu::verify_tiling(good, soc);
    EXPECT_TRUE(p.empty()) << p.front();
    auto m = good;  // the second band's input starts one row late: its top halo row is missing
    m.tasks[1].in_window.y0 += 1;
    p = drv::rknpu::verify_tiling(m, soc);
    EXPECT_TRUE(mentions(p, "do not include rows")) << (p.empty() ? "none" : p.front());
}

TEST(VerifyTiling, ConcatByAddressingCountsInPlaceSlices) {
    // "cat" (64 ch) = "a" (32 ch, written in place by its producer) ++ a requantizing copy of "b".
    const hw::SocProfile& soc = profile("rk3588");
    drv::rknpu::CompiledModel m;
    DeviceTensor cat = tensor_at("cat", 64, 8, 8, 16, 4096, 64, 8, 0);
    DeviceTensor a = tensor_at("cat", 32, 8, 8, 16, 4096, 64, 8, 0);
    a.name = "a", a.alias_of = "cat";
    DeviceTensor b = tensor_at("b", 32, 8, 8, 16, 65536, 32, 8, 0);
    m.tensors = {{"cat", cat}, {"a", a}, {"b", b}};
    drv::rknpu::Layer prod, concat;
    prod.name = "producer_a", prod.unit = drv::rknpu::Unit::Cpu, prod.outputs = {"a"};
    concat.name = "concat", concat.op = "Concat", concat.inputs = {"a", "b"}, concat.outputs = {"cat"};
    drv::rknpu::NpuTask copy;
    copy.what = "copy b";
    copy.out_window = {32, 64, 0, 8, 0, 8};
    copy.in_window = {0, 32, 0, 8, 0, 8};
    m.tasks = {copy};
    concat.tasks = {0};
    m.layers = {prod, concat};
    auto p = drv::rknpu::verify_tiling(m, soc);
    EXPECT_TRUE(p.empty()) << p.front();
    m.tasks[0].out_window = {0, 32, 0, 8, 0, 8};  // the copy lands on the in-place slice
    p = drv::rknpu::verify_tiling(m, soc);
    EXPECT_TRUE(mentions(p, "overlaps")) << (p.empty() ? "none" : p.front());
    EXPECT_TRUE(mentions(p, "gap"));
}

/// 300 random geometries (fixed seed) on a CBUF shrunk to 12 x 1 KiB so that small layers need row
/// bands and kernel groups; every case must match the reference within 1 LSB and its task
/// windows must pass verify_tiling against the same profile.
TEST(LowerConv, RandomGeometriesWithTinyCbuf) {
    std::mt19937 rng(2026);
    auto uni = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    constexpr int kCases = 300;
    size_t values = 0, off1 = 0, tasks = 0, tiled = 0, no_fit = 0;
    for (int i = 0; i < kCases; ++i) {
        Case k;
        k.name = "random " + std::to_string(i);
        k.soc = uni(0, 3) == 0 ? "rk3566" : "rk3588";
        k.cbuf_bank_bytes = 1024;
        k.depthwise = uni(0, 3) == 0;
        k.in_c = uni(1, 40);
        k.out_c = k.depthwise ? k.in_c : uni(1, 40);
        k.kh = uni(1, 5), k.kw = uni(1, 5), k.sh = uni(1, 3), k.sw = uni(1, 3), k.dh = uni(1, 2), k.dw = uni(1, 2);
        const int eh = (k.kh - 1) * k.dh + 1, ew = (k.kw - 1) * k.dw + 1;
        k.pt = uni(0, std::min(eh - 1, 15)), k.pb = uni(0, eh - 1), k.pl = uni(0, std::min(ew - 1, 15)),
        k.pr = uni(0, ew - 1);
        k.h = uni(std::max(1, eh - k.pt - k.pb), 24), k.w = uni(std::max(1, ew - k.pl - k.pr), 16);
        k.per_channel = uni(0, 1) == 1;
        const int a = uni(0, 2);
        k.act = a == 0 ? Act::None : (a == 1 ? Act::Relu : Act::Clip);
        k.clip_lo = uni(-128, 0), k.clip_hi = uni(10, 127);
        if (uni(0, 2) == 0) k.cores = {0, 1, 2};
        Outcome o;
        try {
            o = run_case(k, static_cast<uint32_t>(i));
        } catch (const std::invalid_argument& e) {
            // Only an honest "does not fit" is acceptable (a kernel row wider than the tiny CBUF).
            EXPECT_NE(std::string(e.what()).find("no tiling fits"), std::string::npos) << k.name << ": " << e.what();
            ++no_fit;
            continue;
        }
        EXPECT_EQ(o.worse, 0u) << k.name << ": max |diff| " << o.max_diff;
        EXPECT_TRUE(o.outside_untouched) << k.name;
        hw::SocProfile soc = profile(k.soc);
        soc.npu.cbuf_bank_bytes.value = k.cbuf_bank_bytes;
        const auto m = one_layer_model(k, o.tasks);
        const auto problems = drv::rknpu::verify_tiling(m, soc);
        EXPECT_TRUE(problems.empty()) << k.name << ": " << (problems.empty() ? "" : problems.front());
        values += o.values, off1 += o.off1, tasks += o.tasks.size(), tiled += o.tasks.size() > 1;
    }
    std::printf(
        "[lower_conv] random tiny-CBUF cases: %zu tiled of %d (%zu do not fit), %zu tasks, %zu values, 1-LSB %.5f\n",
        tiled, kCases, no_fit, tasks, values, static_cast<double>(off1) / std::max<size_t>(1, values));
    EXPECT_GT(tiled, static_cast<size_t>(kCases / 3));
    EXPECT_LE(static_cast<double>(off1), 0.001 * static_cast<double>(values));
}

}  // namespace
