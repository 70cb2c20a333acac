// SPDX-License-Identifier: MIT
// CNA/CORE variants through hand-built regcmd streams: depthwise int8 (vs QLinearConv with
// group = C) and fp16 normal/depthwise convolutions (vs Conv on fp32), with padding, stride and
// dilation; their MAC cost (fp16 at the profile's fp16 rate, depthwise at MACs/cycle / C2).
#include <cmath>
#include <cstring>
#include <random>

#include <gtest/gtest.h>

#include "block_harness.h"
#include "mesa_conv.h"
#include "npu/rknpu/conv_timing.h"
#include "numerics/requant.h"

namespace {

using npu::rknpu::Precision;
namespace en = npu::rknpu::enable;
constexpr uint32_t kIn = 0x10000, kW = 0x40000, kBias = 0x50000, kOut = 0x60000;
constexpr uint32_t kMask = en::CNA | en::CORE | en::DPU | en::DPU_RDMA;

struct Spec {
    uint32_t in_c, hw, out_c, k, stride, pad, dil;
    bool depthwise, fp16, relu;
    uint32_t out_hw() const { return (hw + 2 * pad - ((k - 1) * dil + 1)) / stride + 1; }
};

std::string name(const Spec& s) {
    return std::string(s.fp16 ? "fp16" : "int8") + (s.depthwise ? "_dw" : "") + "_c" + std::to_string(s.in_c) + "_hw" +
           std::to_string(s.hw) + "_o" + std::to_string(s.out_c) + "_k" + std::to_string(s.k) + "_s" +
           std::to_string(s.stride) + "_p" + std::to_string(s.pad) + "_d" + std::to_string(s.dil) +
           (s.relu ? "_relu" : "");
}

/// Registers of one conv task (CNA, CORE, DPU with bias from memory + ReLU + output convert).
void emit_conv(drv::regcmd::Builder& b, const Spec& s, uint32_t in_c_pad, uint32_t weight_bytes, int pad_value,
               const num::FixedScale& cvt, int out_zp) {
    const uint64_t prec = s.fp16 ? 2 : 0, oh = s.out_hw();
    const uint64_t per_kernel = uint64_t{s.k} * s.k * in_c_pad * (s.fp16 ? 2 : 1);
    b.write_fields("CNA_CONV_CON1", {{"CONV_MODE", s.depthwise ? 3u : 0u}, {"IN_PRECISION", prec}, {"PROC_PRECISION", prec}});
    b.write_fields("CNA_CONV_CON3", {{"CONV_X_STRIDE", s.stride}, {"CONV_Y_STRIDE", s.stride},
                                     {"ATROUS_X_DILATION", s.dil}, {"ATROUS_Y_DILATION", s.dil}});
    b.write_fields("CNA_DATA_SIZE0", {{"DATAIN_WIDTH", s.hw}, {"DATAIN_HEIGHT", s.hw}});
    b.write_fields("CNA_DATA_SIZE1", {{"DATAIN_CHANNEL", in_c_pad}, {"DATAIN_CHANNEL_REAL", s.in_c - 1}});
    b.write("CNA_WEIGHT_SIZE0", weight_bytes);
    b.write_fields("CNA_WEIGHT_SIZE1", {{"WEIGHT_BYTES_PER_KERNEL", per_kernel}});
    b.write_fields("CNA_WEIGHT_SIZE2", {{"WEIGHT_WIDTH", s.k}, {"WEIGHT_HEIGHT", s.k}, {"WEIGHT_KERNELS", s.out_c}});
    b.write_fields("CNA_CBUF_CON0", {{"DATA_BANK", 2}, {"WEIGHT_BANK", 2}});
    b.write_fields("CNA_CBUF_CON1", {{"DATA_ENTRIES", (uint64_t{s.hw} * in_c_pad * (s.fp16 ? 2 : 1) + 127) / 128}});
    b.write_fields("CNA_PAD_CON0", {{"PAD_TOP", s.pad}, {"PAD_LEFT", s.pad}});
    b.write("CNA_PAD_CON1", static_cast<uint32_t>(pad_value));
    b.write("CNA_FEATURE_DATA_ADDR", kIn);
    b.write_fields("CNA_CVT_CON0", {{"CVT_BYPASS", 1}, {"CVT_TYPE", 1}, {"DATA_SIGN", 1}});  // as Mesa and mtx512
    b.write_fields("CNA_DMA_CON1", {{"LINE_STRIDE", blk::line_field(uint64_t{s.hw} * 16)}});
    b.write_fields("CNA_DMA_CON2", {{"SURF_STRIDE", blk::surf_field(uint64_t{s.hw} * s.hw * 16, uint64_t{s.hw} * 16)}});
    b.write("CNA_DCOMP_ADDR0", kW);
    b.write_fields("CORE_MISC_CFG", {{"PROC_PRECISION", prec}, {"DW_EN", s.depthwise ? 1u : 0u}, {"QD_EN", 1}});
    b.write_fields("CORE_DATAOUT_SIZE_0", {{"DATAOUT_WIDTH", oh - 1}, {"DATAOUT_HEIGHT", oh - 1}});
    b.write_fields("CORE_DATAOUT_SIZE_1", {{"DATAOUT_CHANNEL", s.out_c - 1}});
    b.write_fields("DPU_FEATURE_MODE_CFG", {{"BURST_LEN", 15}, {"OUTPUT_MODE", 2}});
    b.write_fields("DPU_DATA_FORMAT", {{"PROC_PRECISION", prec}, {"IN_PRECISION", prec}, {"OUT_PRECISION", prec}});
    b.write("DPU_DST_BASE_ADDR", kOut);
    b.write_fields("DPU_DST_SURF_STRIDE", {{"DST_SURF_STRIDE", oh * oh}});
    b.write_fields("DPU_DATA_CUBE_WIDTH", {{"WIDTH", oh - 1}});
    b.write_fields("DPU_DATA_CUBE_HEIGHT", {{"HEIGHT", oh - 1}});
    b.write_fields("DPU_DATA_CUBE_CHANNEL", {{"CHANNEL", s.out_c - 1}, {"ORIG_CHANNEL", s.out_c - 1}});
    b.write_fields("DPU_BS_CFG", {{"BS_ALU_ALGO", 2}, {"BS_ALU_SRC", 1}, {"BS_MUL_BYPASS", 1}, {"BS_RELU_BYPASS", s.relu ? 0u : 1u}});
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
    a.set("kernel_shape", std::vector<int64_t>{s.k, s.k});
    a.set("strides", std::vector<int64_t>{s.stride, s.stride});
    a.set("dilations", std::vector<int64_t>{s.dil, s.dil});
    a.set("pads", std::vector<int64_t>{s.pad, s.pad, s.pad, s.pad});
    a.set("group", int64_t{s.depthwise ? s.in_c : 1});
    return a;
}

class ConvVariant : public ::testing::TestWithParam<Spec> {};

TEST_P(ConvVariant, MatchesReferenceAndCostsTheProfileRate) {
    const Spec s = GetParam();
    std::mt19937 rng(100 + s.in_c * 3 + s.k + (s.fp16 ? 7 : 0) + (s.depthwise ? 13 : 0));
    const uint32_t c2 = s.fp16 ? 8 : 16, eb = s.fp16 ? 2 : 1;
    const uint32_t in_c_pad = (s.in_c + c2 - 1) / c2 * c2, oh = s.out_hw();
    const uint32_t cin_per = s.depthwise ? 1 : s.in_c;
    const size_t nw = size_t(s.out_c) * cin_per * s.k * s.k;  // ONNX OIHW (I = 1 for depthwise)
    const uint64_t taps = uint64_t{s.k} * s.k;
    std::vector<uint8_t> wimg((s.depthwise ? taps * in_c_pad : taps * in_c_pad * s.out_c) * eb, 0);
    auto widx = [&](uint32_t o, uint32_t i, uint32_t y, uint32_t x) {  // the CNA's weight blocks, element index
        return blk::weight_at(blk::soc(), s.fp16 ? 16 : 8, s.depthwise, s.out_c, uint32_t(taps), in_c_pad, o, y * s.k + x, i);
    };
    blk::Memory mem;
    drv::regcmd::Builder b;
    std::vector<uint8_t> out_img;
    if (!s.fp16) {
        const float sx = 0.05f, sw = 0.02f, sy = 0.07f;
        const int zx = 4, zy = -3;
        const auto x = blk::random_i8(size_t(s.in_c) * s.hw * s.hw, rng);
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
                    wimg[widx(o, i, t / s.k, t % s.k)] = static_cast<uint8_t>(static_cast<int8_t>(v));
                }
            const int32_t folded = static_cast<int32_t>(bias[o] - int64_t{zx} * wsum);  // padding reads zx too
            std::memcpy(&bimg[4 * o], &folded, 4);
        }
        std::vector<int> xp(size_t(in_c_pad) * s.hw * s.hw, zx);
        std::copy(x.begin(), x.end(), xp.begin());
        mem.put(kIn, blk::pack_i(xp, in_c_pad, s.hw, s.hw));
        mem.put(kW, wimg);
        mem.put(kBias, bimg);
        const num::FixedScale cvt = num::quantize_scale(double(sx) * sw / sy, 15, 63);
        emit_conv(b, s, in_c_pad, uint32_t(wimg.size()), zx, cvt, zy);
        b.end_task(0, 0, kMask);
        const auto plan = blk::run_task(blk::replay(b), kMask, mem);
        const auto got = blk::unpack(mem, kOut, s.out_c, oh, oh, Precision::Int8);
        const num::Tensor X = blk::tensor_i8(x, {1, s.in_c, s.hw, s.hw}), Wt = blk::tensor_i8(w, {s.out_c, cin_per, s.k, s.k});
        num::Tensor B(num::DType::I32, {s.out_c});
        for (uint32_t o = 0; o < s.out_c; ++o) B.data<int32_t>()[o] = bias[o];
        const num::Tensor xs = blk::scalar_f32(sx), xz = blk::scalar_i8(zx), ws = blk::scalar_f32(sw), wz = blk::scalar_i8(0),
                          ys = blk::scalar_f32(sy), yz = blk::scalar_i8(zy);
        num::Tensor Y = num::run_op("QLinearConv", conv_attrs(s), {&X, &xs, &xz, &Wt, &ws, &wz, &ys, &yz, &B})[0];
        if (s.relu) {
            const num::Tensor lo = blk::scalar_i8(zy), hi = blk::scalar_i8(127);
            Y = num::run_op("Clip", {}, {&Y, &lo, &hi})[0];
        }
        const auto want = blk::ints(Y);
        ASSERT_EQ(want.size(), got.i.size());
        size_t off = 0;
        for (size_t i = 0; i < want.size(); ++i) {
            ASSERT_LE(std::abs(int(got.i[i]) - want[i]), 1) << i;
            off += got.i[i] != want[i];
        }
        EXPECT_LE(off * 100, want.size());
        EXPECT_EQ(plan.kind, std::string(s.depthwise ? "dwconv" : "conv") + (s.relu ? "+relu" : ""));
        const auto cost = npu::rknpu::conv_cost(*plan.conv, blk::soc());
        EXPECT_EQ(plan.core_cycles, cost.compute_cycles);
        // DPU: one output atom per cycle; the pipeline waits for the slower of CORE and DPU.
        EXPECT_EQ(plan.dpu_cycles, uint64_t{oh} * oh * ((s.out_c + 15) / 16));
        EXPECT_EQ(plan.pipeline_cycles(), std::max(plan.core_cycles, plan.dpu_cycles));
        if (s.depthwise) {
            EXPECT_EQ(cost.macs, uint64_t{oh} * oh * s.out_c * taps);
            // Depthwise (hardware-facts III §5.1): Cout padded to 64 (Mesa), run at the profile's
            // depthwise efficiency x 1024 MAC/cycle (calibrated: tools/calibrate/fits/).
            const uint64_t padded = uint64_t{oh} * oh * ((s.out_c + 63) / 64 * 64) * taps;
            EXPECT_EQ(cost.macs_padded, padded);
            const double rate = 1024.0 * blk::soc().npu.depthwise_mac_efficiency.value;
            EXPECT_EQ(cost.compute_cycles, static_cast<uint64_t>(std::ceil(static_cast<double>(padded) / rate - 1e-9)));
        }
    } else {
        const auto x = blk::random_f16(size_t(s.in_c) * s.hw * s.hw, rng, -2.f, 2.f);
        const auto w = blk::random_f16(nw, rng, -0.5f, 0.5f);
        std::vector<float> bias(s.out_c);
        std::vector<uint8_t> bimg(4 * s.out_c);
        for (uint32_t o = 0; o < s.out_c; ++o) {
            bias[o] = npu::rknpu::round_to_fp16(float(int(rng() % 200) - 100) / 50.0f);
            std::memcpy(&bimg[4 * o], &bias[o], 4);  // fp32 ALU operand
            for (uint32_t i = 0; i < cin_per; ++i)
                for (uint32_t t = 0; t < taps; ++t) {
                    const uint16_t h = npu::rknpu::fp32_to_fp16(w[(size_t(o) * cin_per + i) * taps + t]);
                    const uint64_t e = widx(o, i, t / s.k, t % s.k);
                    wimg[2 * e] = static_cast<uint8_t>(h & 0xff);
                    wimg[2 * e + 1] = static_cast<uint8_t>(h >> 8);
                }
        }
        std::vector<float> xp(size_t(in_c_pad) * s.hw * s.hw, 0.0f);
        std::copy(x.begin(), x.end(), xp.begin());
        mem.put(kIn, blk::pack_f(xp, in_c_pad, s.hw, s.hw));
        mem.put(kW, wimg);
        mem.put(kBias, bimg);
        emit_conv(b, s, in_c_pad, uint32_t(wimg.size()), 0, num::FixedScale{1, 0}, 0);
        b.end_task(0, 0, kMask);
        const auto plan = blk::run_task(blk::replay(b), kMask, mem);
        const auto got = blk::unpack(mem, kOut, s.out_c, oh, oh, Precision::Fp16);
        const num::Tensor X = blk::tensor_f32(x, {1, s.in_c, s.hw, s.hw}), Wt = blk::tensor_f32(w, {s.out_c, cin_per, s.k, s.k}),
                          B = blk::tensor_f32(bias, {s.out_c});
        num::Tensor Y = num::run_op("Conv", conv_attrs(s), {&X, &Wt, &B})[0];
        if (s.relu) Y = num::run_op("Relu", {}, {&Y})[0];
        const auto want = blk::floats(Y);
        ASSERT_EQ(want.size(), got.f.size());
        for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(got.f[i], want[i], 2e-3 * std::abs(want[i]) + 2e-3) << i;
        EXPECT_EQ(plan.kind, std::string(s.depthwise ? "dwconv" : "conv") + "-fp16" + (s.relu ? "+relu" : ""));
        const auto cost = npu::rknpu::conv_cost(*plan.conv, blk::soc());
        if (!s.depthwise) {
            EXPECT_EQ(cost.macs_padded, uint64_t{oh} * oh * ((s.out_c + 15) / 16 * 16) * in_c_pad * taps);
            // fp16: half the int8 rate, with the dense efficiency and stripes.
            EXPECT_EQ(cost.compute_cycles, blk::dense_cycles(blk::soc(), uint64_t{oh} * oh, cost.macs_padded / (uint64_t{oh} * oh), 512));
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Variants, ConvVariant,
                         ::testing::Values(Spec{20, 9, 20, 3, 1, 1, 1, true, false, true},
                                           Spec{16, 10, 16, 3, 2, 1, 2, true, false, false},
                                           Spec{32, 7, 32, 5, 1, 2, 1, true, false, true},
                                           Spec{12, 7, 10, 3, 1, 1, 1, false, true, true},
                                           Spec{8, 9, 24, 3, 2, 2, 2, false, true, false},
                                           Spec{8, 8, 8, 3, 1, 1, 1, true, true, false}),
                         [](const auto& p) { return name(p.param); });

// A residual block's tail: the conv accumulators flow into the DPU, the EW stage adds a second
// int8 cube read by ERDMA (converted to the accumulator scale), then ReLU and the output convert.
TEST(ConvResidual, ConvPlusEltwiseAddFromMemoryMatchesDirectReference) {
    std::mt19937 rng(77);
    drv::rknpu::ConvLayer L;
    L.in_c = 16, L.in_h = L.in_w = 8, L.out_c = 20, L.kernel_h = L.kernel_w = 3;
    L.pad_top = L.pad_left = L.pad_bottom = L.pad_right = 1;
    L.in_scale = 0.04f, L.w_scale = 0.01f, L.out_scale = 0.09f, L.in_zp = 3, L.out_zp = -6;
    L.weights.resize(size_t(L.out_c) * L.in_c * 9);
    for (auto& w : L.weights) w = static_cast<int8_t>(int(rng() % 255) - 127);
    L.bias.resize(size_t(L.out_c));
    for (auto& v : L.bias) v = int(rng() % 2001) - 1000;
    std::vector<int8_t> x(size_t(L.in_c) * 64);
    for (auto& v : x) v = static_cast<int8_t>(int(rng() % 256) - 128);
    const auto r = blk::random_i8(size_t(L.out_c) * 64, rng);
    const float sr = 0.05f;
    const int zr = 9;
    const auto low = mesa_conv::lower(L, blk::soc());
    const mesa_conv::Addresses addr{kIn, kW, kBias, kOut};
    blk::Memory mem;
    mem.put(addr.input, mesa_conv::pack_input(L, low, x));
    mem.put(addr.weights, low.weights);
    mem.put(addr.bias, low.bias);
    mem.put(0x70000, blk::pack_i(r, L.out_c, 8, 8));
    drv::regcmd::Builder b;
    mesa_conv::emit(L, low, addr, b);
    // (r - zr) * sr / (sx * sw) in the accumulator domain: a 16-bit scale with a 7-bit shift.
    const double k = double(sr) / (double(L.in_scale) * L.w_scale);
    b.write_fields("DPU_BS_CFG", {{"BS_ALU_ALGO", 2}, {"BS_ALU_SRC", 1}, {"BS_RELU_BYPASS", 1}, {"BS_MUL_BYPASS", 1}});
    b.write_fields("DPU_EW_CFG", {{"EW_BYPASS", 0}, {"EW_OP_BYPASS", 0}, {"EW_OP_SRC", 1}, {"EW_ALU_ALGO", 2},
                                  {"EW_OP_CVT_BYPASS", 0}, {"EW_LUT_BYPASS", 1}, {"EW_RELU_BYPASS", 0}});
    b.write("DPU_EW_CVT_OFFSET_VALUE", static_cast<uint32_t>(-zr));
    b.write_fields("DPU_EW_CVT_SCALE_VALUE", {{"EW_OP_CVT_SCALE", uint64_t(std::lround(k * 128))}, {"EW_OP_CVT_SHIFT", 7}});
    // ERDMA: 8-bit elements (TRM code 1), one per pixel (mode 1), as Mesa's fused add programs it.
    b.write_fields("DPU_RDMA_RDMA_ERDMA_CFG", {{"ERDMA_DISABLE", 0}, {"ERDMA_DATA_SIZE", 1}, {"ERDMA_DATA_MODE", 1}});
    b.write("DPU_RDMA_RDMA_EW_BASE_ADDR", 0x70000);
    b.write_fields("DPU_RDMA_RDMA_EW_SURF_STRIDE", {{"EW_SURF_STRIDE", 64}});
    b.end_task(0, 0, kMask);
    const auto plan = blk::run_task(blk::replay(b), kMask, mem);
    EXPECT_EQ(plan.kind, "conv+eltwise+relu");
    const auto got = blk::unpack(mem, kOut, L.out_c, 8, 8, Precision::Int8);
    size_t off = 0;
    for (int o = 0; o < L.out_c; ++o)
        for (int i = 0; i < 8; ++i)
            for (int j = 0; j < 8; ++j) {
                int64_t acc = L.bias[size_t(o)];
                for (int c = 0; c < L.in_c; ++c)
                    for (int a = 0; a < 3; ++a)
                        for (int bb = 0; bb < 3; ++bb) {
                            const int yy = i - 1 + a, xx = j - 1 + bb;
                            if (yy < 0 || yy >= 8 || xx < 0 || xx >= 8) continue;
                            acc += (x[(size_t(c) * 8 + yy) * 8 + xx] - L.in_zp) *
                                   int64_t{L.weights[((size_t(o) * L.in_c + c) * 3 + a) * 3 + bb]};
                        }
                const size_t e = (size_t(o) * 8 + i) * 8 + j;
                const double real = std::max(0.0, double(acc) * L.in_scale * L.w_scale + (r[e] - zr) * double(sr));
                const int want = int(std::clamp(std::nearbyint(real / L.out_scale) + L.out_zp, -128.0, 127.0));
                ASSERT_LE(std::abs(int(got.i[e]) - want), 1) << e;
                off += got.i[e] != want;
            }
    EXPECT_LE(off * 50, got.i.size());
}

// int16: 2-byte features and weights (C2 = 8), 48-bit accumulation, CORE_CLIP_TRUNCATE >> 4
// into the DPU, int16 output; compared with an exact integer reference.
TEST(ConvInt16, ClipTruncateThenBiasAndConvertMatchDirectReference) {
    std::mt19937 rng(88);
    const Spec s{8, 6, 12, 3, 1, 1, 1, false, true, false};  // fp16 sizes: same layout as int16
    const uint32_t oh = s.out_hw();
    std::uniform_int_distribution<int> d(-3000, 3000);
    std::vector<int> x(8 * 36), w(12 * 8 * 9);
    for (auto& v : x) v = d(rng);
    for (auto& v : w) v = d(rng);
    std::vector<uint8_t> wimg(12 * 9 * 8 * 2), bimg(4 * 12);
    std::vector<int32_t> bias(12);
    for (uint32_t o = 0; o < 12; ++o) {
        bias[o] = int32_t(rng() % 20001) - 10000;
        std::memcpy(&bimg[4 * o], &bias[o], 4);
        for (uint32_t i = 0; i < 8; ++i)
            for (uint32_t t = 0; t < 9; ++t) {
                const auto v = static_cast<uint16_t>(static_cast<int16_t>(w[(o * 8 + i) * 9 + t]));
                const size_t e = blk::weight_at(blk::soc(), 16, false, 12, 9, 8, o, t, i);
                wimg[2 * e] = static_cast<uint8_t>(v & 0xff);
                wimg[2 * e + 1] = static_cast<uint8_t>(v >> 8);
            }
    }
    blk::Memory mem;
    mem.put(kIn, blk::pack_i(x, 8, 6, 6, Precision::Int16));
    mem.put(kW, wimg);
    mem.put(kBias, bimg);
    const double m = 16.0 / 4000.0;  // acc >> 4, then scale back by 16 / 4000
    const num::FixedScale cvt = num::quantize_scale(m, 15, 63);
    drv::regcmd::Builder b;
    emit_conv(b, s, 8, uint32_t(wimg.size()), 0, cvt, 0);
    b.write_fields("CNA_CONV_CON1", {{"IN_PRECISION", 1}, {"PROC_PRECISION", 1}});
    b.write_fields("CORE_MISC_CFG", {{"PROC_PRECISION", 1}, {"QD_EN", 1}});
    b.write_fields("CORE_CLIP_TRUNCATE", {{"CLIP_TRUNCATE", 4}});
    b.write_fields("DPU_DATA_FORMAT", {{"PROC_PRECISION", 1}, {"IN_PRECISION", 1}, {"OUT_PRECISION", 1}});
    b.end_task(0, 0, kMask);
    const auto plan = blk::run_task(blk::replay(b), kMask, mem);
    EXPECT_EQ(plan.core_cycles, blk::dense_cycles(blk::soc(), uint64_t{oh} * oh, 16 * 8 * 9, 512));  // fp16 rate and C2
    const auto got = blk::unpack(mem, kOut, 12, oh, oh, Precision::Int16);
    for (uint32_t o = 0; o < 12; ++o)
        for (uint32_t i = 0; i < oh; ++i)
            for (uint32_t j = 0; j < oh; ++j) {
                int64_t acc = 0;
                for (uint32_t c = 0; c < 8; ++c)
                    for (int a = 0; a < 3; ++a)
                        for (int bb = 0; bb < 3; ++bb) {
                            const int yy = int(i) - 1 + a, xx = int(j) - 1 + bb;
                            if (yy < 0 || yy >= 6 || xx < 0 || xx >= 6) continue;
                            acc += int64_t{x[(c * 6 + yy) * 6 + xx]} * w[(o * 8 + c) * 9 + a * 3 + bb];
                        }
                const double want = std::clamp(std::nearbyint((double(acc) / 16.0 + bias[o]) * m), -32768.0, 32767.0);
                ASSERT_LE(std::abs(double(got.i[(size_t(o) * oh + i) * oh + j]) - want), 1.0) << o << " " << i << " " << j;
            }
}

TEST(ConvVariantFaults, PaddedDepthwiseOutputIsLegalUnknownPrecisionIsNot) {
    // Mesa pads depthwise outputs above the input channels (x2 when <= 32, then to 64: rkt_task.c
    // fill_task): the extra channels have no input and accumulate 0, which is not a fault.
    drv::regcmd::Builder b;
    const Spec s{16, 6, 32, 3, 1, 1, 1, true, false, false};
    emit_conv(b, s, 16, 9 * 16, 0, num::FixedScale{1, 0}, 0);
    auto faults = npu::rknpu::plan_task(blk::replay(b), kMask, blk::soc()).faults;
    EXPECT_TRUE(faults.empty()) << faults.front().message;
    b.write_fields("CNA_CONV_CON1", {{"PROC_PRECISION", 5}});  // fp32 is a DPU output code, not a CNA input
    faults = npu::rknpu::plan_task(blk::replay(b), kMask, blk::soc()).faults;
    bool prec = false;
    for (const auto& f : faults) prec |= f.field == "PROC_PRECISION" && f.block == "CNA";
    EXPECT_TRUE(prec);
}

}  // namespace
