// SPDX-License-Identifier: MIT
// The timing formulas read every rate and padding rule from the profile: hand computations from
// hardware-facts.md Part III §5.1 (padded MACs / MACs per cycle, atoms / atoms per cycle), and the
// same formulas after `--param`-style overrides.
#include <gtest/gtest.h>

#include "hw/profile.h"
#include "npu/rknpu/block_timing.h"
#include "npu/rknpu/conv_timing.h"

using npu::rknpu::ConvConfig;
using npu::rknpu::Precision;

namespace {

/// RK3588 with the dense MAC efficiency at 1 and stripes longer than the 35-pixel test plane, so
/// that the padding tests below see the peak formula; `overrides` follow.
hw::SocProfile rk3588(std::vector<std::string> overrides = {}) {
    hw::SocProfile p = hw::load_named_profile("rk3588");
    overrides.insert(overrides.begin(), {"npu.conv_mac_efficiency=1", "npu.stripe_max_pixels=64"});
    hw::apply_param_overrides(p, overrides);
    return p;
}

/// 7x5 output, 3x3 kernel, 20 real input channels (DATAIN_CHANNEL 20), 40 output channels.
ConvConfig conv(Precision prec = Precision::Int8, bool depthwise = false) {
    ConvConfig c;
    c.in_c = c.in_c_real = depthwise ? 40 : 20;
    c.kernel_w = c.kernel_h = 3;
    c.out_w = 7;
    c.out_h = 5;
    c.out_c = 40;
    c.kernels = 40;
    c.precision = c.core_precision = prec;
    c.depthwise = depthwise;
    return c;
}

uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

}  // namespace

TEST(ConvCost, Int8PadsCinToC2AndCoutTo32) {
    const auto r = npu::rknpu::conv_cost(conv(), rk3588());
    EXPECT_EQ(r.macs, 35u * 40 * 20 * 9);
    EXPECT_EQ(r.macs_padded, 35u * 64 * 32 * 9);  // Cout 40 -> 64 (32-multiple), Cin 20 -> 32 (C2 16)
    EXPECT_EQ(r.compute_cycles, ceil_div(35u * 64 * 32 * 9, 1024));
    // With the kernel group set to 16 channels, Cout 40 pads to 48 only.
    const auto q = npu::rknpu::conv_cost(conv(), rk3588({"npu.cout_align_int8=16"}));
    EXPECT_EQ(q.macs_padded, 35u * 48 * 32 * 9);
    // Twice the MAC rate halves the cycles (rounded up).
    const auto f = npu::rknpu::conv_cost(conv(), rk3588({"npu.int8_macs_per_cycle=2048"}));
    EXPECT_EQ(f.compute_cycles, ceil_div(35u * 64 * 32 * 9, 2048));
}

TEST(ConvCost, Int16AndFp16UseTheWideC2TheirRateAndPadding) {
    // int16: C2 8 (Cin 20 -> 24), Cout to npu.cout_align_fp16 = 16 (40 -> 48), 512 MAC/cycle.
    const auto i16 = npu::rknpu::conv_cost(conv(Precision::Int16), rk3588());
    EXPECT_EQ(i16.macs_padded, 35u * 48 * 24 * 9);
    EXPECT_EQ(i16.compute_cycles, ceil_div(35u * 48 * 24 * 9, 512));
    // The int16 rate is its own parameter: changing the fp16 rate leaves it alone.
    const auto i16b = npu::rknpu::conv_cost(conv(Precision::Int16), rk3588({"npu.fp16_macs_per_cycle=256"}));
    EXPECT_EQ(i16b.compute_cycles, i16.compute_cycles);
    const auto f16 = npu::rknpu::conv_cost(conv(Precision::Fp16), rk3588({"npu.fp16_macs_per_cycle=256"}));
    EXPECT_EQ(f16.compute_cycles, ceil_div(35u * 48 * 24 * 9, 256));
}

TEST(ConvCost, DenseEfficiencyAndShortStripes) {
    // Half the sustained rate: twice the cycles.
    const auto h = npu::rknpu::conv_cost(conv(), rk3588({"npu.conv_mac_efficiency=0.5"}));
    EXPECT_EQ(h.compute_cycles, ceil_div(35u * 64 * 32 * 9, 512));
    // Stripes of 32 pixels, a weight load of 1024 B / 128 B per cycle = 8 cycles: the 35 pixels run
    // as a 32-pixel stripe and a 3-pixel one that waits 8 cycles -> 40 pixel-cycles.
    const auto s32 = npu::rknpu::conv_cost(conv(), rk3588({"npu.stripe_max_pixels=32", "npu.cbuf_read_bytes_per_cycle=128"}));
    EXPECT_EQ(s32.stripe_pixels, 40u);
    EXPECT_EQ(s32.compute_cycles, ceil_div(40u * 64 * 32 * 9, 1024));
    EXPECT_EQ(s32.macs_padded, 35u * 64 * 32 * 9);  // the padded MAC count itself is unchanged
    // A narrower CBUF read (16 B/cycle: 64-cycle loads) makes every 5-pixel stripe wait: 7 x 64.
    const auto s5 = npu::rknpu::conv_cost(conv(), rk3588({"npu.stripe_max_pixels=5", "npu.cbuf_read_bytes_per_cycle=16"}));
    EXPECT_EQ(s5.stripe_pixels, 7u * 64);
}

TEST(ConvCost, DepthwisePadsTo64AndRunsAtTheEfficiency) {
    const hw::SocProfile p = rk3588({"npu.depthwise_mac_efficiency=0.125"});
    const auto r = npu::rknpu::conv_cost(conv(Precision::Int8, true), p);
    EXPECT_EQ(r.macs, 35u * 40 * 9);
    EXPECT_EQ(r.macs_padded, 35u * 64 * 9);  // 40 channels -> 64 (Mesa's depthwise padding)
    // 1024 x 0.125 = 128 useful MACs per cycle: 20160 / 128 = 157.5 -> 158.
    EXPECT_EQ(r.compute_cycles, 158u);
    const auto q = npu::rknpu::conv_cost(conv(Precision::Int8, true),
                                         rk3588({"npu.depthwise_mac_efficiency=0.25", "npu.depthwise_cout_align=8"}));
    EXPECT_EQ(q.macs_padded, 35u * 40 * 9);
    EXPECT_EQ(q.compute_cycles, ceil_div(35u * 40 * 9, 256));
}

TEST(BlockTiming, DpuAndPpuAtomsPerCycleFromTheProfile) {
    // 7x5 pixels x ceil(40 / 16) = 3 atoms each = 105 int8 atoms.
    EXPECT_EQ(npu::rknpu::cube_atoms(7, 5, 40, Precision::Int8), 105u);
    const hw::SocProfile p = rk3588();
    EXPECT_EQ(npu::rknpu::dpu_cycles(p.npu, 7, 5, 40, Precision::Int8, false), 105u);
    const hw::SocProfile slow = rk3588({"npu.dpu_atoms_per_cycle=0.3", "npu.dpu_lut_atoms_per_cycle=0.25"});
    EXPECT_EQ(npu::rknpu::dpu_cycles(slow.npu, 7, 5, 40, Precision::Int8, false), 350u);  // 105 / 0.3
    EXPECT_EQ(npu::rknpu::dpu_cycles(slow.npu, 7, 5, 40, Precision::Int8, true), 420u);   // LUT: 105 / 0.25
    // A faster LUT does not speed the DPU up: the slower of the two rates.
    const hw::SocProfile lut = rk3588({"npu.dpu_lut_atoms_per_cycle=4"});
    EXPECT_EQ(npu::rknpu::dpu_cycles(lut.npu, 7, 5, 40, Precision::Int8, true), 105u);
    // fp16 output: 8 channels per atom -> 5 atoms per pixel.
    EXPECT_EQ(npu::rknpu::dpu_cycles(p.npu, 7, 5, 40, Precision::Fp16, false), 175u);
    // PPU: max(input, output) atoms at npu.ppu_atoms_per_cycle.
    EXPECT_EQ(npu::rknpu::ppu_cycles(p.npu, 105, 30), 105u);
    EXPECT_EQ(npu::rknpu::ppu_cycles(rk3588({"npu.ppu_atoms_per_cycle=2"}).npu, 105, 30), 53u);
    // 8-byte atoms (RK356x): 40 int8 channels = 5 atoms per pixel.
    EXPECT_EQ(npu::rknpu::dpu_cycles(p.npu, 7, 5, 40, Precision::Int8, false, 8), 175u);
}
