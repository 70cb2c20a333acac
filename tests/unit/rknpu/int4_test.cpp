// SPDX-License-Identifier: MIT
// The int4 MAC path (UNVERIFIED encoding: PROC_PRECISION 3, two signed 4-bit elements per byte,
// even channel in the low nibble, C2 = 32 with 16-byte atoms) on a profile that has one
// (npu.int4_macs_per_cycle > 0): normal and depthwise int4 convolutions against a direct integer
// convolution written here, their MAC cost at the int4 rate, and the fault on a profile without it.
#include <cstring>
#include <random>

#include <gtest/gtest.h>

#include "block_harness.h"
#include "npu/rknpu/conv_timing.h"

namespace {

namespace en = npu::rknpu::enable;
constexpr uint32_t kIn = 0x10000, kW = 0x40000, kBias = 0x50000, kOut = 0x60000;
constexpr uint32_t kMask = en::CNA | en::CORE | en::DPU | en::DPU_RDMA;
constexpr uint32_t kAtom = 16, kC2 = 32;  // rk3588 atom; 32 int4 channels per atom

struct Spec {
    uint32_t in_c, hw, out_c, k, stride, pad;
    bool depthwise;
    int pad_value;  ///< int4, -8..7
    uint32_t out_hw() const { return (hw + 2 * pad - k) / stride + 1; }
};

/// Write int4 value v as element `idx` of a packed image (even index: low nibble).
void put4(std::vector<uint8_t>& img, uint64_t byte, uint64_t idx, int v) {
    const auto n = static_cast<uint8_t>(v & 0xf);
    img[byte] = (idx & 1) ? static_cast<uint8_t>((img[byte] & 0x0f) | (n << 4)) : static_cast<uint8_t>((img[byte] & 0xf0) | n);
}

void emit(drv::regcmd::Builder& b, const Spec& s, uint32_t in_c_pad, uint32_t weight_bytes) {
    const uint64_t oh = s.out_hw();
    b.write_fields("CNA_CONV_CON1", {{"CONV_MODE", s.depthwise ? 3u : 0u}, {"IN_PRECISION", hw::rknpu::enums::Precision::INT4},
                                     {"PROC_PRECISION", hw::rknpu::enums::Precision::INT4}});
    b.write_fields("CNA_CONV_CON3", {{"CONV_X_STRIDE", s.stride}, {"CONV_Y_STRIDE", s.stride}});
    b.write_fields("CNA_DATA_SIZE0", {{"DATAIN_WIDTH", s.hw}, {"DATAIN_HEIGHT", s.hw}});
    b.write_fields("CNA_DATA_SIZE1", {{"DATAIN_CHANNEL", in_c_pad}, {"DATAIN_CHANNEL_REAL", s.in_c - 1}});
    b.write("CNA_WEIGHT_SIZE0", weight_bytes);
    b.write_fields("CNA_WEIGHT_SIZE1", {{"WEIGHT_BYTES_PER_KERNEL", uint64_t{s.k} * s.k * in_c_pad / 2}});
    b.write_fields("CNA_WEIGHT_SIZE2", {{"WEIGHT_WIDTH", s.k}, {"WEIGHT_HEIGHT", s.k}, {"WEIGHT_KERNELS", s.out_c}});
    b.write_fields("CNA_CBUF_CON0", {{"DATA_BANK", 2}, {"WEIGHT_BANK", 2}});
    b.write_fields("CNA_PAD_CON0", {{"PAD_TOP", s.pad}, {"PAD_LEFT", s.pad}});
    b.write("CNA_PAD_CON1", static_cast<uint32_t>(s.pad_value));
    b.write("CNA_FEATURE_DATA_ADDR", kIn);
    b.write_fields("CNA_CVT_CON0", {{"CVT_BYPASS", 1}, {"CVT_TYPE", 1}, {"DATA_SIGN", 1}});  // as Mesa and mtx512
    b.write_fields("CNA_DMA_CON1", {{"LINE_STRIDE", blk::line_field(uint64_t{s.hw} * kAtom)}});
    b.write_fields("CNA_DMA_CON2", {{"SURF_STRIDE", blk::surf_field(uint64_t{s.hw} * s.hw * kAtom, uint64_t{s.hw} * kAtom)}});
    b.write("CNA_DCOMP_ADDR0", kW);
    b.write_fields("CORE_MISC_CFG", {{"PROC_PRECISION", hw::rknpu::enums::Precision::INT4}, {"DW_EN", s.depthwise ? 1u : 0u}, {"QD_EN", 1}});
    b.write_fields("CORE_DATAOUT_SIZE_0", {{"DATAOUT_WIDTH", oh - 1}, {"DATAOUT_HEIGHT", oh - 1}});
    b.write_fields("CORE_DATAOUT_SIZE_1", {{"DATAOUT_CHANNEL", s.out_c - 1}});
    // DPU: + bias from memory, int16 output unchanged (scale 1, shift 0).
    b.write_fields("DPU_FEATURE_MODE_CFG", {{"BURST_LEN", 15}, {"OUTPUT_MODE", 2}});
    b.write_fields("DPU_DATA_FORMAT", {{"PROC_PRECISION", 0}, {"IN_PRECISION", 0}, {"OUT_PRECISION", 1}});
    b.write("DPU_DST_BASE_ADDR", kOut);
    b.write_fields("DPU_DST_SURF_STRIDE", {{"DST_SURF_STRIDE", oh * oh}});
    b.write_fields("DPU_DATA_CUBE_WIDTH", {{"WIDTH", oh - 1}});
    b.write_fields("DPU_DATA_CUBE_HEIGHT", {{"HEIGHT", oh - 1}});
    b.write_fields("DPU_DATA_CUBE_CHANNEL", {{"CHANNEL", s.out_c - 1}, {"ORIG_CHANNEL", s.out_c - 1}});
    b.write_fields("DPU_BS_CFG", {{"BS_ALU_ALGO", 2}, {"BS_ALU_SRC", 1}, {"BS_MUL_BYPASS", 1}, {"BS_RELU_BYPASS", 1}});
    b.write_fields("DPU_BN_CFG", {{"BN_BYPASS", 1}, {"BN_ALU_BYPASS", 1}, {"BN_MUL_BYPASS", 1}, {"BN_RELU_BYPASS", 1}});
    b.write_fields("DPU_EW_CFG", {{"EW_BYPASS", 1}, {"EW_OP_BYPASS", 1}, {"EW_LUT_BYPASS", 1}, {"EW_OP_CVT_BYPASS", 1},
                                  {"EW_RELU_BYPASS", 1}});
    b.write("DPU_OUT_CVT_OFFSET", 0);
    b.write_fields("DPU_OUT_CVT_SCALE", {{"OUT_CVT_SCALE", 1}});
    b.write_fields("DPU_OUT_CVT_SHIFT", {{"OUT_CVT_SHIFT", 0}});
    b.write_fields("DPU_RDMA_RDMA_BRDMA_CFG", {{"BRDMA_DATA_USE", 1}});
    b.write("DPU_RDMA_RDMA_BS_BASE_ADDR", kBias);
    b.write_fields("DPU_RDMA_RDMA_ERDMA_CFG", {{"ERDMA_DISABLE", 1}});
    b.write_fields("DPU_RDMA_RDMA_FEATURE_MODE_CFG", {{"BURST_LEN", 15}, {"MRDMA_DISABLE", 1}});
}

class Int4Conv : public ::testing::TestWithParam<Spec> {};

TEST_P(Int4Conv, MatchesDirectIntegerConvolutionAtTheInt4Rate) {
    const Spec s = GetParam();
    const hw::SocProfile& soc = blk::soc();  // rk3588: npu.int4_macs_per_cycle > 0
    ASSERT_GT(soc.npu.int4_macs_per_cycle.value, 0);
    std::mt19937 rng(400 + s.in_c + s.k);
    std::uniform_int_distribution<int> d4(-8, 7);
    const uint32_t in_c_pad = (s.in_c + kC2 - 1) / kC2 * kC2, oh = s.out_hw(), taps = s.k * s.k;
    const uint32_t cin_per = s.depthwise ? 1 : s.in_c;
    // x[c][y][x] (padding channels 0), w[o][i][ky][kx], bias[o].
    std::vector<int> x(size_t(in_c_pad) * s.hw * s.hw, 0), w(size_t(s.out_c) * cin_per * taps), bias(s.out_c);
    for (size_t i = 0; i < size_t(s.in_c) * s.hw * s.hw; ++i) x[i] = d4(rng);
    for (auto& v : w) v = d4(rng);
    for (auto& v : bias) v = int(rng() % 401) - 200;
    std::vector<uint8_t> fimg(uint64_t{in_c_pad} / kC2 * s.hw * s.hw * kAtom, 0);
    for (uint32_t c = 0; c < in_c_pad; ++c)
        for (uint32_t y = 0; y < s.hw; ++y)
            for (uint32_t xx = 0; xx < s.hw; ++xx)
                put4(fimg, (c / kC2) * uint64_t{s.hw} * s.hw * kAtom + (uint64_t{y} * s.hw + xx) * kAtom + (c % kC2) / 2, c,
                     x[(size_t(c) * s.hw + y) * s.hw + xx]);
    const uint64_t welems = s.depthwise ? uint64_t{taps} * in_c_pad : uint64_t{taps} * in_c_pad * s.out_c;
    std::vector<uint8_t> wimg(welems / 2, 0);
    for (uint32_t o = 0; o < s.out_c; ++o)
        for (uint32_t i = 0; i < cin_per; ++i)
            for (uint32_t t = 0; t < taps; ++t) {
                const uint64_t e = blk::weight_at(soc, 4, s.depthwise, s.out_c, taps, in_c_pad, o, t, i);
                put4(wimg, e / 2, e, w[(size_t(o) * cin_per + i) * taps + t]);
            }
    std::vector<uint8_t> bimg(4 * s.out_c);
    for (uint32_t o = 0; o < s.out_c; ++o) std::memcpy(&bimg[4 * o], &bias[o], 4);
    blk::Memory mem;
    mem.put(kIn, fimg);
    mem.put(kW, wimg);
    mem.put(kBias, bimg);
    drv::regcmd::Builder b;
    emit(b, s, in_c_pad, uint32_t(wimg.size()));
    b.end_task(0, 0, kMask);
    const auto plan = blk::run_task(blk::replay(b), kMask, mem);
    const auto got = blk::unpack(mem, kOut, s.out_c, oh, oh, npu::rknpu::Precision::Int16);
    for (uint32_t o = 0; o < s.out_c; ++o)
        for (uint32_t oy = 0; oy < oh; ++oy)
            for (uint32_t ox = 0; ox < oh; ++ox) {
                int64_t acc = bias[o];
                for (uint32_t i = 0; i < cin_per; ++i)
                    for (uint32_t ky = 0; ky < s.k; ++ky)
                        for (uint32_t kx = 0; kx < s.k; ++kx) {
                            const int iy = int(oy * s.stride + ky) - int(s.pad), ix = int(ox * s.stride + kx) - int(s.pad);
                            const uint32_t ch = s.depthwise ? o : i;
                            const bool in = iy >= 0 && iy < int(s.hw) && ix >= 0 && ix < int(s.hw);
                            const int xv = in ? x[(size_t(ch) * s.hw + uint32_t(iy)) * s.hw + uint32_t(ix)] : s.pad_value;
                            acc += int64_t{xv} * w[((size_t(o) * cin_per + i) * s.k + ky) * s.k + kx];
                        }
                ASSERT_EQ(got.i[(size_t(o) * oh + oy) * oh + ox], acc) << o << "," << oy << "," << ox;
            }
    EXPECT_EQ(plan.kind, s.depthwise ? "dwconv-int4" : "conv-int4");
    EXPECT_EQ(plan.reads[plan.reads.size() - 1].bytes, fimg.size());  // C2 = 32: int4 atoms of 16 bytes
    const auto cost = npu::rknpu::conv_cost(*plan.conv, soc);
    EXPECT_EQ(plan.core_cycles, cost.compute_cycles);
    if (!s.depthwise) {
        const uint64_t cout = (s.out_c + 31) / 32 * 32;  // npu.cout_align_int8 on rk3588
        EXPECT_EQ(cost.macs_padded, uint64_t{oh} * oh * cout * in_c_pad * taps);
        // int4: twice the int8 rate, with the dense efficiency and stripes.
        EXPECT_EQ(cost.compute_cycles, blk::dense_cycles(soc, uint64_t{oh} * oh, cout * in_c_pad * taps, 2048));
    }
}

INSTANTIATE_TEST_SUITE_P(Shapes, Int4Conv,
                         ::testing::Values(Spec{40, 7, 20, 3, 1, 1, false, 0}, Spec{32, 8, 8, 3, 2, 1, false, -1},
                                           Spec{24, 6, 24, 3, 1, 1, true, 5}),
                         [](const auto& p) {
                             return std::string(p.param.depthwise ? "dw_" : "") + "c" + std::to_string(p.param.in_c) +
                                    "_o" + std::to_string(p.param.out_c) + "_s" + std::to_string(p.param.stride);
                         });

TEST(Int4Conv, FaultsOnAProfileWithoutAnInt4Path) {
    const hw::SocProfile rk3566 = hw::load_named_profile("rk3566");  // npu.int4_macs_per_cycle = 0
    ASSERT_EQ(rk3566.npu.int4_macs_per_cycle.value, 0);
    const Spec s{16, 6, 8, 3, 1, 1, false, 0};
    drv::regcmd::Builder b;
    emit(b, s, 16, 3 * 3 * 16 * 8 / 2);
    b.write_fields("CNA_DMA_CON1", {{"LINE_STRIDE", blk::line_field(uint64_t{s.hw} * 8, hw::rknpu::Generation::RK356X)}});  // 8-byte atoms
    b.write_fields("CNA_DMA_CON2", {{"SURF_STRIDE", blk::surf_field(uint64_t{s.hw} * s.hw * 8, uint64_t{s.hw} * 8,
                                                                    hw::rknpu::Generation::RK356X)}});
    const auto faults = npu::rknpu::plan_task(blk::replay(b), kMask, rk3566).faults;
    ASSERT_FALSE(faults.empty());
    EXPECT_EQ(faults.front().field, "PROC_PRECISION");
    EXPECT_NE(faults.front().message.find("no int4 MAC path"), std::string::npos) << faults.front().message;
}

}  // namespace
