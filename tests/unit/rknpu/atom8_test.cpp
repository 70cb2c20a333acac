// SPDX-License-Identifier: MIT
// The blocks on an RK3566 profile, whose feature atom is 8 bytes (C2 = 8 int8, 4 fp16;
// hardware-facts.md §3.4, note R3): conv (int8 normal and depthwise, fp16), DPU eltwise add and
// PPU pooling, with the NC1HWC2 images written and read by an independent packer here (not the
// model's pack_cube), compared with the reference operators (num::run_op).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

#include <gtest/gtest.h>

#include "block_harness.h"
#include "npu/rknpu/conv_timing.h"
#include "numerics/requant.h"

namespace {

using npu::rknpu::Precision;
namespace en = npu::rknpu::enable;
constexpr uint32_t kAtom = 8;  // RK3566: c2_int8 = 8 one-byte elements
constexpr uint32_t kIn = 0x10000, kW = 0x40000, kBias = 0x50000, kOut = 0x60000, kEw = 0x20000;

const hw::SocProfile& rk3566() {
    static const hw::SocProfile p = hw::load_named_profile("rk3566");
    return p;
}

/// Byte offset of element (ch, y, x) of a compact NC1HWC2 image with 8-byte atoms.
uint64_t at8(uint32_t ch, uint32_t y, uint32_t x, uint32_t h, uint32_t w, uint32_t eb) {
    const uint32_t c2 = kAtom / eb;
    return (ch / c2) * uint64_t{w} * h * kAtom + (uint64_t{y} * w + x) * kAtom + (ch % c2) * eb;
}
uint64_t bytes8(uint32_t c, uint32_t h, uint32_t w, uint32_t eb) {
    const uint32_t c2 = kAtom / eb;
    return (c + c2 - 1) / c2 * uint64_t{w} * h * kAtom;
}
std::vector<uint8_t> pack8_i8(const std::vector<int>& v, uint32_t c, uint32_t h, uint32_t w) {
    std::vector<uint8_t> img(bytes8(c, h, w, 1), 0);
    for (uint32_t ch = 0; ch < c; ++ch)
        for (uint32_t y = 0; y < h; ++y)
            for (uint32_t x = 0; x < w; ++x)
                img[at8(ch, y, x, h, w, 1)] = static_cast<uint8_t>(static_cast<int8_t>(v[(size_t(ch) * h + y) * w + x]));
    return img;
}
std::vector<uint8_t> pack8_f16(const std::vector<float>& v, uint32_t c, uint32_t h, uint32_t w) {
    std::vector<uint8_t> img(bytes8(c, h, w, 2), 0);
    for (uint32_t ch = 0; ch < c; ++ch)
        for (uint32_t y = 0; y < h; ++y)
            for (uint32_t x = 0; x < w; ++x) {
                const uint16_t b = npu::rknpu::fp32_to_fp16(v[(size_t(ch) * h + y) * w + x]);
                std::memcpy(&img[at8(ch, y, x, h, w, 2)], &b, 2);
            }
    return img;
}
std::vector<int> unpack8_i8(const blk::Memory& m, uint64_t addr, uint32_t c, uint32_t h, uint32_t w) {
    const auto img = m.get(addr, bytes8(c, h, w, 1));
    std::vector<int> v(size_t(c) * h * w);
    for (uint32_t ch = 0; ch < c; ++ch)
        for (uint32_t y = 0; y < h; ++y)
            for (uint32_t x = 0; x < w; ++x) v[(size_t(ch) * h + y) * w + x] = static_cast<int8_t>(img[at8(ch, y, x, h, w, 1)]);
    return v;
}
std::vector<float> unpack8_f16(const blk::Memory& m, uint64_t addr, uint32_t c, uint32_t h, uint32_t w) {
    const auto img = m.get(addr, bytes8(c, h, w, 2));
    std::vector<float> v(size_t(c) * h * w);
    for (uint32_t ch = 0; ch < c; ++ch)
        for (uint32_t y = 0; y < h; ++y)
            for (uint32_t x = 0; x < w; ++x) {
                uint16_t b = 0;
                std::memcpy(&b, &img[at8(ch, y, x, h, w, 2)], 2);
                v[(size_t(ch) * h + y) * w + x] = npu::rknpu::fp16_to_fp32(b);
            }
    return v;
}

struct Spec {
    uint32_t in_c, hw, out_c;
    bool depthwise, fp16;
};
constexpr uint32_t kK = 3;  // 3x3, stride 1, pad 1: output hw = input hw

void emit_conv(drv::regcmd::Builder& b, const Spec& s, uint32_t in_c_pad, uint32_t weight_bytes, int pad_value,
               const num::FixedScale& cvt, int out_zp) {
    const uint64_t prec = s.fp16 ? 2 : 0, eb = s.fp16 ? 2 : 1, hw = s.hw;
    b.write_fields("CNA_CONV_CON1", {{"CONV_MODE", s.depthwise ? 3u : 0u}, {"IN_PRECISION", prec}, {"PROC_PRECISION", prec}});
    b.write_fields("CNA_CONV_CON3", {{"CONV_X_STRIDE", 1}, {"CONV_Y_STRIDE", 1}});
    b.write_fields("CNA_DATA_SIZE0", {{"DATAIN_WIDTH", hw}, {"DATAIN_HEIGHT", hw}});
    b.write_fields("CNA_DATA_SIZE1", {{"DATAIN_CHANNEL", in_c_pad}, {"DATAIN_CHANNEL_REAL", s.in_c - 1}});
    b.write("CNA_WEIGHT_SIZE0", weight_bytes);
    b.write_fields("CNA_WEIGHT_SIZE1", {{"WEIGHT_BYTES_PER_KERNEL", kK * kK * in_c_pad * eb}});
    b.write_fields("CNA_WEIGHT_SIZE2", {{"WEIGHT_WIDTH", kK}, {"WEIGHT_HEIGHT", kK}, {"WEIGHT_KERNELS", s.out_c}});
    b.write_fields("CNA_CBUF_CON0", {{"DATA_BANK", 2}, {"WEIGHT_BANK", 2}});
    b.write_fields("CNA_PAD_CON0", {{"PAD_TOP", 1}, {"PAD_LEFT", 1}});
    b.write("CNA_PAD_CON1", static_cast<uint32_t>(pad_value));
    b.write("CNA_FEATURE_DATA_ADDR", kIn);
    b.write_fields("CNA_CVT_CON0", {{"CVT_BYPASS", 1}, {"CVT_TYPE", 1}, {"DATA_SIGN", 1}});  // as Mesa and mtx512
    b.write_fields("CNA_DMA_CON1", {{"LINE_STRIDE", blk::line_field(hw * kAtom, hw::rknpu::Generation::RK356X)}});
    b.write_fields("CNA_DMA_CON2", {{"SURF_STRIDE", blk::surf_field(hw * hw * kAtom, hw * kAtom, hw::rknpu::Generation::RK356X)}});
    b.write("CNA_DCOMP_ADDR0", kW);
    b.write_fields("CORE_MISC_CFG", {{"PROC_PRECISION", prec}, {"DW_EN", s.depthwise ? 1u : 0u}, {"QD_EN", 1}});
    b.write_fields("CORE_DATAOUT_SIZE_0", {{"DATAOUT_WIDTH", hw - 1}, {"DATAOUT_HEIGHT", hw - 1}});
    b.write_fields("CORE_DATAOUT_SIZE_1", {{"DATAOUT_CHANNEL", s.out_c - 1}});
    b.write_fields("DPU_FEATURE_MODE_CFG", {{"BURST_LEN", 15}, {"OUTPUT_MODE", 2}});
    b.write_fields("DPU_DATA_FORMAT", {{"PROC_PRECISION", prec}, {"IN_PRECISION", prec}, {"OUT_PRECISION", prec}});
    b.write("DPU_DST_BASE_ADDR", kOut);
    b.write_fields("DPU_DST_SURF_STRIDE", {{"DST_SURF_STRIDE", hw * hw * kAtom / 16}});  // 16-byte units
    b.write_fields("DPU_DATA_CUBE_WIDTH", {{"WIDTH", hw - 1}});
    b.write_fields("DPU_DATA_CUBE_HEIGHT", {{"HEIGHT", hw - 1}});
    b.write_fields("DPU_DATA_CUBE_CHANNEL", {{"CHANNEL", s.out_c - 1}, {"ORIG_CHANNEL", s.out_c - 1}});
    b.write_fields("DPU_BS_CFG", {{"BS_ALU_ALGO", 2}, {"BS_ALU_SRC", 1}, {"BS_MUL_BYPASS", 1}, {"BS_RELU_BYPASS", 0}});
    b.write_fields("DPU_BN_CFG", {{"BN_BYPASS", 1}, {"BN_ALU_BYPASS", 1}, {"BN_MUL_BYPASS", 1}, {"BN_RELU_BYPASS", 1}});
    b.write_fields("DPU_EW_CFG", {{"EW_BYPASS", 1}, {"EW_OP_BYPASS", 1}, {"EW_LUT_BYPASS", 1}, {"EW_OP_CVT_BYPASS", 1},
                                  {"EW_RELU_BYPASS", 1}});
    b.write("DPU_OUT_CVT_OFFSET", static_cast<uint32_t>(out_zp));
    b.write_fields("DPU_OUT_CVT_SCALE", {{"OUT_CVT_SCALE", uint64_t(cvt.multiplier)}});
    b.write_fields("DPU_OUT_CVT_SHIFT", {{"OUT_CVT_SHIFT", uint64_t(cvt.shift)}});
    b.write_fields("DPU_RDMA_RDMA_BRDMA_CFG", {{"BRDMA_DATA_USE", 1}});
    b.write("DPU_RDMA_RDMA_BS_BASE_ADDR", kBias);
    b.write_fields("DPU_RDMA_RDMA_ERDMA_CFG", {{"ERDMA_DISABLE", 1}});
    b.write_fields("DPU_RDMA_RDMA_FEATURE_MODE_CFG", {{"BURST_LEN", 15}, {"MRDMA_DISABLE", 1}});
}

num::Attributes conv_attrs(const Spec& s) {
    num::Attributes a;
    a.set("kernel_shape", std::vector<int64_t>{kK, kK});
    a.set("pads", std::vector<int64_t>{1, 1, 1, 1});
    a.set("group", int64_t{s.depthwise ? s.in_c : 1});
    return a;
}

class Atom8Conv : public ::testing::TestWithParam<Spec> {};

TEST_P(Atom8Conv, MatchesReferenceWithEightByteAtoms) {
    const Spec s = GetParam();
    constexpr uint32_t kMask = en::CNA | en::CORE | en::DPU | en::DPU_RDMA;
    std::mt19937 rng(700 + s.in_c + (s.fp16 ? 1 : 0) + (s.depthwise ? 2 : 0));
    const uint32_t eb = s.fp16 ? 2 : 1, c2 = kAtom / eb;  // 8 int8 / 4 fp16 channels per atom
    const uint32_t in_c_pad = (s.in_c + c2 - 1) / c2 * c2, hw = s.hw, taps = kK * kK;
    const uint32_t cin_per = s.depthwise ? 1 : s.in_c;
    const size_t nw = size_t(s.out_c) * cin_per * taps;
    std::vector<uint8_t> wimg((s.depthwise ? taps * in_c_pad : taps * in_c_pad * s.out_c) * eb, 0);
    auto widx = [&](uint32_t o, uint32_t i, uint32_t t) {  // the CNA's weight blocks of RK3566
        return blk::weight_at(rk3566(), s.fp16 ? 16 : 8, s.depthwise, s.out_c, taps, in_c_pad, o, t, i);
    };
    blk::Memory mem;
    drv::regcmd::Builder b;
    npu::rknpu::TaskPlan plan;
    if (!s.fp16) {
        const float sx = 0.05f, sw = 0.02f, sy = 0.07f;
        const int zx = 4, zy = -3;
        const auto x = blk::random_i8(size_t(s.in_c) * hw * hw, rng);
        const auto w = blk::random_i8(nw, rng, -127, 127);
        std::vector<int32_t> bias(s.out_c);
        std::vector<uint8_t> bimg(4 * s.out_c);
        for (uint32_t o = 0; o < s.out_c; ++o) {
            bias[o] = int32_t(rng() % 2001) - 1000;
            int64_t wsum = 0;
            for (uint32_t i = 0; i < cin_per; ++i)
                for (uint32_t t = 0; t < taps; ++t) {
                    const int v = w[(size_t(o) * cin_per + i) * taps + t];
                    wsum += v;
                    wimg[widx(o, i, t)] = static_cast<uint8_t>(static_cast<int8_t>(v));
                }
            const int32_t folded = static_cast<int32_t>(bias[o] - int64_t{zx} * wsum);
            std::memcpy(&bimg[4 * o], &folded, 4);
        }
        std::vector<int> xp(size_t(in_c_pad) * hw * hw, zx);
        std::copy(x.begin(), x.end(), xp.begin());
        mem.put(kIn, pack8_i8(xp, in_c_pad, hw, hw));
        mem.put(kW, wimg);
        mem.put(kBias, bimg);
        emit_conv(b, s, in_c_pad, uint32_t(wimg.size()), zx, num::quantize_scale(double(sx) * sw / sy, 15, 63), zy);
        b.end_task(0, 0, kMask);
        plan = blk::run_task(blk::replay(b), kMask, mem, rk3566());
        const auto got = unpack8_i8(mem, kOut, s.out_c, hw, hw);
        const num::Tensor X = blk::tensor_i8(x, {1, s.in_c, hw, hw}), Wt = blk::tensor_i8(w, {s.out_c, cin_per, kK, kK});
        num::Tensor B(num::DType::I32, {s.out_c});
        for (uint32_t o = 0; o < s.out_c; ++o) B.data<int32_t>()[o] = bias[o];
        const num::Tensor xs = blk::scalar_f32(sx), xz = blk::scalar_i8(zx), ws = blk::scalar_f32(sw), wz = blk::scalar_i8(0),
                          ys = blk::scalar_f32(sy), yz = blk::scalar_i8(zy), hi = blk::scalar_i8(127);
        num::Tensor Y = num::run_op("QLinearConv", conv_attrs(s), {&X, &xs, &xz, &Wt, &ws, &wz, &ys, &yz, &B})[0];
        Y = num::run_op("Clip", {}, {&Y, &yz, &hi})[0];
        const auto want = blk::ints(Y);
        ASSERT_EQ(want.size(), got.size());
        size_t off = 0;
        for (size_t i = 0; i < want.size(); ++i) {
            ASSERT_LE(std::abs(got[i] - want[i]), 1) << i;
            off += got[i] != want[i];
        }
        EXPECT_LE(off * 100, want.size());
    } else {
        const auto x = blk::random_f16(size_t(s.in_c) * hw * hw, rng, -2.f, 2.f);
        const auto w = blk::random_f16(nw, rng, -0.5f, 0.5f);
        std::vector<float> bias(s.out_c);
        std::vector<uint8_t> bimg(4 * s.out_c);
        for (uint32_t o = 0; o < s.out_c; ++o) {
            bias[o] = npu::rknpu::round_to_fp16(float(int(rng() % 200) - 100) / 50.0f);
            std::memcpy(&bimg[4 * o], &bias[o], 4);
            for (uint32_t i = 0; i < cin_per; ++i)
                for (uint32_t t = 0; t < taps; ++t) {
                    const uint16_t h = npu::rknpu::fp32_to_fp16(w[(size_t(o) * cin_per + i) * taps + t]);
                    std::memcpy(&wimg[2 * widx(o, i, t)], &h, 2);
                }
        }
        std::vector<float> xp(size_t(in_c_pad) * hw * hw, 0.0f);
        std::copy(x.begin(), x.end(), xp.begin());
        mem.put(kIn, pack8_f16(xp, in_c_pad, hw, hw));
        mem.put(kW, wimg);
        mem.put(kBias, bimg);
        emit_conv(b, s, in_c_pad, uint32_t(wimg.size()), 0, num::FixedScale{1, 0}, 0);
        b.end_task(0, 0, kMask);
        plan = blk::run_task(blk::replay(b), kMask, mem, rk3566());
        const auto got = unpack8_f16(mem, kOut, s.out_c, hw, hw);
        const num::Tensor X = blk::tensor_f32(x, {1, s.in_c, hw, hw}), Wt = blk::tensor_f32(w, {s.out_c, cin_per, kK, kK}),
                          B = blk::tensor_f32(bias, {s.out_c});
        num::Tensor Y = num::run_op("Conv", conv_attrs(s), {&X, &Wt, &B})[0];
        Y = num::run_op("Relu", {}, {&Y})[0];
        const auto want = blk::floats(Y);
        ASSERT_EQ(want.size(), got.size());
        for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(got[i], want[i], 2e-3 * std::abs(want[i]) + 2e-3) << i;
    }
    // The DMA moves 8-byte-atom cubes: C padded to C2 = 8 (int8) / 4 (fp16), w*h*8 bytes per surface.
    ASSERT_FALSE(plan.reads.empty());
    uint64_t feature = 0;
    for (const auto& r : plan.reads)
        if (r.block == "CNA" && r.what != "weights") feature += r.bytes;
    EXPECT_EQ(feature, bytes8(in_c_pad, hw, hw, eb));
    uint64_t written = 0;
    for (const auto& r : plan.writes) written += r.bytes;
    EXPECT_EQ(written, bytes8(s.out_c, hw, hw, eb));
    EXPECT_EQ(plan.writes.size(), (s.out_c + c2 - 1) / c2);
    // DPU: one 8-byte output atom per cycle.
    EXPECT_EQ(plan.dpu_cycles, uint64_t{hw} * hw * ((s.out_c + c2 - 1) / c2));
    EXPECT_EQ(plan.core_cycles, npu::rknpu::conv_cost(*plan.conv, rk3566()).compute_cycles);
}

INSTANTIATE_TEST_SUITE_P(Rk3566, Atom8Conv,
                         ::testing::Values(Spec{20, 6, 12, false, false}, Spec{12, 8, 12, true, false},
                                           Spec{6, 6, 10, false, true}),
                         [](const auto& p) {
                             return std::string(p.param.fp16 ? "fp16" : "int8") + (p.param.depthwise ? "_dw" : "") +
                                    "_c" + std::to_string(p.param.in_c) + "_o" + std::to_string(p.param.out_c);
                         });

TEST(Atom8Dpu, EltwiseAddOfTwoCubesMatchesQLinearAdd) {
    constexpr uint32_t W = 6, H = 4, C = 20;  // three 8-channel atoms, the last half padding
    std::mt19937 rng(33);
    const float sa = 0.031f, sb = 0.05f, sc = 0.06f;
    const int za = -4, zb = 7, zc = 2;
    const auto a = blk::random_i8(C * H * W, rng), bb = blk::random_i8(C * H * W, rng);
    blk::Memory mem;
    mem.put(kIn, pack8_i8(a, C, H, W));
    mem.put(kEw, pack8_i8(bb, C, H, W));
    const auto ma = uint64_t(std::lround(double(sa) / sc * 16384)), mb = uint64_t(std::lround(double(sb) / sc * 16384));
    drv::regcmd::Builder b;
    blk::emit_dpu_task(b, W, H, C, kIn, kOut);
    b.write_fields("DPU_DST_SURF_STRIDE", {{"DST_SURF_STRIDE", W * H * kAtom / 16}});
    b.write_fields("DPU_BS_CFG", {{"BS_ALU_BYPASS", 0}, {"BS_ALU_ALGO", 2}, {"BS_MUL_BYPASS", 0}, {"BS_RELU_BYPASS", 1}});
    b.write("DPU_BS_ALU_CFG", static_cast<uint32_t>(-za));
    b.write_fields("DPU_BS_MUL_CFG", {{"BS_MUL_OPERAND", ma}, {"BS_MUL_SHIFT_VALUE", 8}});
    b.write_fields("DPU_EW_CFG", {{"EW_BYPASS", 0}, {"EW_OP_BYPASS", 0}, {"EW_OP_TYPE", 0}, {"EW_OP_SRC", 1},
                                  {"EW_ALU_ALGO", 2}, {"EW_OP_CVT_BYPASS", 0}, {"EW_LUT_BYPASS", 1}, {"EW_RELU_BYPASS", 1}});
    b.write("DPU_EW_CVT_OFFSET_VALUE", static_cast<uint32_t>(-zb));
    b.write_fields("DPU_EW_CVT_SCALE_VALUE", {{"EW_OP_CVT_SCALE", mb}, {"EW_OP_CVT_SHIFT", 8}});
    b.write_fields("DPU_RDMA_RDMA_ERDMA_CFG", {{"ERDMA_DISABLE", 0}, {"ERDMA_DATA_SIZE", 1}, {"ERDMA_DATA_MODE", 1}});
    b.write("DPU_RDMA_RDMA_EW_BASE_ADDR", kEw);
    b.write_fields("DPU_RDMA_RDMA_EW_SURF_STRIDE", {{"EW_SURF_STRIDE", W * H * kAtom / 16}});
    b.write("DPU_OUT_CVT_OFFSET", static_cast<uint32_t>(zc));
    b.write_fields("DPU_OUT_CVT_SHIFT", {{"OUT_CVT_SHIFT", 6}});
    b.end_task(0, 0, blk::kDpuOnly);
    const auto plan = blk::run_task(blk::replay(b), blk::kDpuOnly, mem, rk3566());
    const auto got = unpack8_i8(mem, kOut, C, H, W);
    const std::vector<int64_t> shape{1, C, H, W};
    const num::Tensor A = blk::tensor_i8(a, shape), B = blk::tensor_i8(bb, shape), as = blk::scalar_f32(sa),
                      az = blk::scalar_i8(za), bs = blk::scalar_f32(sb), bz = blk::scalar_i8(zb), cs = blk::scalar_f32(sc),
                      cz = blk::scalar_i8(zc);
    const auto want = blk::ints(num::run_op("QLinearAdd", {}, {&A, &as, &az, &B, &bs, &bz, &cs, &cz}, "com.microsoft")[0]);
    ASSERT_EQ(got.size(), want.size());
    size_t off = 0;
    for (size_t i = 0; i < got.size(); ++i) {
        ASSERT_LE(std::abs(got[i] - want[i]), 1) << i;
        off += got[i] != want[i];
    }
    EXPECT_LE(off * 50, got.size());
    // Input and EW cube each one compact 3-surface region of 8-byte atoms; 3 output surfaces.
    ASSERT_EQ(plan.reads.size(), 2u);
    EXPECT_EQ(plan.reads[0].bytes, 3u * W * H * kAtom);
    EXPECT_EQ(plan.reads[1].bytes, 3u * W * H * kAtom);
    EXPECT_EQ(plan.writes.size(), 3u);
    EXPECT_EQ(plan.dpu_cycles, 3u * W * H);
}

TEST(Atom8Ppu, MaxAndAveragePoolFromMemoryMatchRunOp) {
    constexpr uint32_t W = 12, H = 10, C = 12, K = 3, S = 2, P = 1, OW = 6, OH = 5;
    constexpr uint32_t kPpuOnly = en::PPU | en::PPU_RDMA;
    std::mt19937 rng(34);
    const auto x = blk::random_i8(C * H * W, rng);
    for (const uint32_t method : {1u, 0u}) {  // max, average (count_include_pad, pad value 0)
        blk::Memory mem;
        mem.put(kIn, pack8_i8(x, C, H, W));
        drv::regcmd::Builder b;
        b.write_fields("PPU_DATA_CUBE_IN_WIDTH", {{"CUBE_IN_WIDTH", W - 1}});
        b.write_fields("PPU_DATA_CUBE_IN_HEIGHT", {{"CUBE_IN_HEIGHT", H - 1}});
        b.write_fields("PPU_DATA_CUBE_IN_CHANNEL", {{"CUBE_IN_CHANNEL", C - 1}});
        b.write_fields("PPU_DATA_CUBE_OUT_WIDTH", {{"CUBE_OUT_WIDTH", OW - 1}});
        b.write_fields("PPU_DATA_CUBE_OUT_HEIGHT", {{"CUBE_OUT_HEIGHT", OH - 1}});
        b.write_fields("PPU_DATA_CUBE_OUT_CHANNEL", {{"CUBE_OUT_CHANNEL", C - 1}});
        b.write_fields("PPU_OPERATION_MODE_CFG", {{"POOLING_METHOD", method}, {"FLYING_MODE", 1}});
        b.write_fields("PPU_POOLING_KERNEL_CFG", {{"KERNEL_WIDTH", K - 1}, {"KERNEL_HEIGHT", K - 1},
                                                  {"KERNEL_STRIDE_WIDTH", S - 1}, {"KERNEL_STRIDE_HEIGHT", S - 1}});
        b.write_fields("PPU_RECIP_KERNEL_WIDTH", {{"RECIP_KERNEL_WIDTH", uint64_t(std::lround(65536.0 / K))}});
        b.write_fields("PPU_RECIP_KERNEL_HEIGHT", {{"RECIP_KERNEL_HEIGHT", uint64_t(std::lround(65536.0 / K))}});
        b.write_fields("PPU_POOLING_PADDING_CFG", {{"PAD_LEFT", P}, {"PAD_TOP", P}, {"PAD_RIGHT", P}, {"PAD_BOTTOM", P}});
        b.write("PPU_PADDING_VALUE_1_CFG", method == 1 ? static_cast<uint32_t>(-128) : 0u);
        b.write_fields("PPU_DST_BASE_ADDR", {{"DST_BASE_ADDR", kOut >> 4}});
        b.write_fields("PPU_DST_SURF_STRIDE", {{"DST_SURF_STRIDE", OW * OH * kAtom / 16}});
        b.write_fields("PPU_DATA_FORMAT", {{"PROC_PRECISION", 0}, {"DPU_FLYIN", 0}});
        b.write_fields("PPU_RDMA_RDMA_CUBE_IN_WIDTH", {{"CUBE_IN_WIDTH", W - 1}});
        b.write_fields("PPU_RDMA_RDMA_CUBE_IN_HEIGHT", {{"CUBE_IN_HEIGHT", H - 1}});
        b.write_fields("PPU_RDMA_RDMA_CUBE_IN_CHANNEL", {{"CUBE_IN_CHANNEL", C - 1}});
        b.write("PPU_RDMA_RDMA_SRC_BASE_ADDR", kIn);
        b.write_fields("PPU_RDMA_RDMA_SRC_LINE_STRIDE", {{"SRC_LINE_STRIDE", W * kAtom / 16}});
        b.write_fields("PPU_RDMA_RDMA_SRC_SURF_STRIDE", {{"SRC_SURF_STRIDE", W * H * kAtom / 16}});
        b.write_fields("PPU_RDMA_RDMA_DATA_FORMAT", {{"IN_PRECISION", 1}});
        b.end_task(0, 0, kPpuOnly);
        const auto plan = blk::run_task(blk::replay(b), kPpuOnly, mem, rk3566());
        const auto got = unpack8_i8(mem, kOut, C, OH, OW);
        num::Attributes a;
        a.set("kernel_shape", std::vector<int64_t>{K, K});
        a.set("strides", std::vector<int64_t>{S, S});
        a.set("pads", std::vector<int64_t>{P, P, P, P});
        std::vector<int> want;
        const num::Tensor X = blk::tensor_i8(x, {1, C, H, W});
        if (method == 1) {
            want = blk::ints(num::run_op("MaxPool", a, {&X})[0]);
        } else {
            a.set("count_include_pad", int64_t{1});
            const num::Tensor s1 = blk::scalar_f32(1.0f), z0 = blk::scalar_i8(0);
            want = blk::ints(num::run_op("QLinearAveragePool", a, {&X, &s1, &z0, &s1, &z0}, "com.microsoft")[0]);
        }
        ASSERT_EQ(got.size(), want.size());
        for (size_t i = 0; i < got.size(); ++i) ASSERT_LE(std::abs(got[i] - want[i]), method == 1 ? 0 : 1) << i;
        ASSERT_EQ(plan.reads.size(), 1u);  // compact: one region of two 8-byte-atom surfaces
        EXPECT_EQ(plan.reads[0].bytes, 2u * W * H * kAtom);
        EXPECT_EQ(plan.writes.size(), 2u);
        EXPECT_EQ(plan.ppu_cycles, 2u * W * H);  // input atoms dominate
    }
}

TEST(Atom8Validate, LineStrideIsCheckedAgainstTheProfilesAtom) {
    constexpr uint32_t kMask = en::CNA | en::CORE | en::DPU | en::DPU_RDMA;
    const Spec s{8, 6, 8, false, false};
    // LINE_STRIDE counts 4-byte units (docs/rknpu-register-semantics.md §8).
    auto faults = [&](uint64_t line_stride, const hw::SocProfile& p) {
        drv::regcmd::Builder b;
        emit_conv(b, s, 8, kK * kK * 8 * 8, 0, num::FixedScale{1, 0}, 0);
        b.write_fields("CNA_DMA_CON1", {{"LINE_STRIDE", line_stride / 4}});
        return npu::rknpu::plan_task(blk::replay(b), kMask, p).faults;
    };
    EXPECT_TRUE(faults(6 * kAtom, rk3566()).empty());
    const auto short8 = faults(6 * kAtom - 4, rk3566());
    ASSERT_FALSE(short8.empty());
    EXPECT_EQ(short8.front().reg, "DMA_CON1");
    const auto on3588 = faults(6 * kAtom, blk::soc());  // RK3588: 16-byte atoms need 6 * 16
    EXPECT_TRUE(std::any_of(on3588.begin(), on3588.end(), [](const auto& f) { return f.reg == "DMA_CON1"; }));
}


TEST(Atom8Plan, RowBandFeatureIsOneRegionPerSurfaceAndComputesTheSame) {
    // The input is a row band of a taller tensor: compact lines, surfaces 40 lines apart.
    constexpr uint32_t kMask = en::CNA | en::CORE | en::DPU | en::DPU_RDMA;
    const Spec s{20, 6, 12, false, false};  // 24 padded channels = 3 surfaces of 8-byte atoms
    const uint32_t in_c_pad = 24, hw = s.hw;
    std::mt19937 rng(99);
    const auto x = blk::random_i8(size_t(in_c_pad) * hw * hw, rng);
    const auto img = pack8_i8(x, in_c_pad, hw, hw);
    std::vector<uint8_t> wimg(kK * kK * in_c_pad * s.out_c), bimg(4 * s.out_c, 0);
    for (auto& b : wimg) b = static_cast<uint8_t>(rng() % 255);
    auto run = [&](uint64_t surf_stride) {
        blk::Memory mem;
        const uint64_t surf = uint64_t{hw} * hw * kAtom;
        for (uint64_t c1 = 0; c1 < 3; ++c1)
            mem.put(kIn + c1 * surf_stride, std::vector<uint8_t>(img.begin() + std::ptrdiff_t(c1 * surf),
                                                                  img.begin() + std::ptrdiff_t((c1 + 1) * surf)));
        mem.put(kW, wimg);
        mem.put(kBias, bimg);
        drv::regcmd::Builder b;
        emit_conv(b, s, in_c_pad, uint32_t(wimg.size()), 1, num::quantize_scale(0.01, 15, 63), 0);
        b.write_fields("CNA_DMA_CON2", {{"SURF_STRIDE", blk::surf_field(surf_stride, uint64_t{hw} * kAtom, hw::rknpu::Generation::RK356X)}});
        b.end_task(0, 0, kMask);
        const auto plan = blk::run_task(blk::replay(b), kMask, mem, rk3566());
        size_t feature_regions = 0;
        for (const auto& r : plan.reads) feature_regions += r.block == "CNA" && r.what != "weights";
        return std::make_pair(feature_regions, unpack8_i8(mem, kOut, s.out_c, hw, hw));
    };
    const auto [compact_regions, compact_out] = run(uint64_t{hw} * hw * kAtom);
    const auto [band_regions, band_out] = run(uint64_t{hw} * 40 * kAtom);
    EXPECT_EQ(compact_regions, 1u);
    EXPECT_EQ(band_regions, 3u);  // one per surface, not one per line (18)
    EXPECT_EQ(band_out, compact_out);
}

}  // namespace
