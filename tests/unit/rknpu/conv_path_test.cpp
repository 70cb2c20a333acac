// SPDX-License-Identifier: MIT
// The conv path without SystemC: a single-conv regcmd stream -> register file -> decode/validate ->
// functional engine, compared with a direct convolution + QuantizeLinear written here. The stream
// comes from the Mesa-style single-task fixture (mesa_conv.h) and, for the layer the bundled example
// runs, from the model compiler's conv lowering (drv::rknpu::lower_conv: tiled into several tasks).
#include <cmath>
#include <random>

#include <gtest/gtest.h>

#include "drv/regcmd/builder.h"
#include "block_harness.h"
#include "compiler/rknpu/conv_lowering.h"
#include "mesa_conv.h"
#include "drv/rknpu/driver.h"
#include "hw/profile.h"
#include "hw/regcmd.h"
#include "npu/rknpu/conv_engine.h"
#include "npu/rknpu/conv_timing.h"
#include "numerics/requant.h"

namespace {

struct Shape {
    int in_c, hw, out_c, k, stride, pad, dil;
    bool relu;
};

std::vector<int8_t> direct_conv(const drv::rknpu::ConvLayer& L, const std::vector<int8_t>& x) {
    const int oh = L.out_h(), ow = L.out_w();
    std::vector<int8_t> y(static_cast<size_t>(L.out_c) * oh * ow);
    const double m = double(L.in_scale) * L.w_scale;
    for (int o = 0; o < L.out_c; ++o)
        for (int i = 0; i < oh; ++i)
            for (int j = 0; j < ow; ++j) {
                int64_t acc = L.bias[o];
                for (int c = 0; c < L.in_c; ++c)
                    for (int a = 0; a < L.kernel_h; ++a)
                        for (int b = 0; b < L.kernel_w; ++b) {
                            const int r = i * L.stride_h - L.pad_top + a * L.dilation_h;
                            const int s = j * L.stride_w - L.pad_left + b * L.dilation_w;
                            if (r < 0 || r >= L.in_h || s < 0 || s >= L.in_w) continue;
                            acc += (x[(size_t(c) * L.in_h + r) * L.in_w + s] - L.in_zp) *
                                   int64_t{L.weights[((size_t(o) * L.in_c + c) * L.kernel_h + a) * L.kernel_w + b]};
                        }
                double real = double(acc) * m;
                if (L.relu) real = std::max(real, 0.0);
                const double q = std::nearbyint(real / L.out_scale) + L.out_zp;
                y[(size_t(o) * oh + i) * ow + j] = static_cast<int8_t>(std::clamp(q, -128.0, 127.0));
            }
    return y;
}

/// A layer of shape `sh` with random int8 weights, int32 biases and input `x` (zero points in_zp /
/// out_zp; the output scale puts one accumulator standard deviation at ~40 LSB).
drv::rknpu::ConvLayer random_layer(const Shape& sh, int32_t in_zp, int32_t out_zp, std::mt19937& rng,
                                   std::vector<int8_t>& x) {
    drv::rknpu::ConvLayer L;
    L.in_c = sh.in_c, L.in_h = L.in_w = sh.hw, L.out_c = sh.out_c;
    L.kernel_h = L.kernel_w = sh.k;
    L.stride_h = L.stride_w = sh.stride;
    L.pad_top = L.pad_left = L.pad_bottom = L.pad_right = sh.pad;
    L.dilation_h = L.dilation_w = sh.dil;
    L.relu = sh.relu;
    L.in_scale = 0.04f, L.in_zp = in_zp, L.w_scale = 0.01f, L.out_zp = out_zp;
    L.out_scale = float(L.in_scale * L.w_scale * std::sqrt(double(sh.in_c) * sh.k * sh.k) * 5400.0 / 40.0);
    L.weights.resize(size_t(sh.out_c) * sh.in_c * sh.k * sh.k);
    for (auto& w : L.weights) w = static_cast<int8_t>(int(rng() % 255) - 127);
    L.bias.resize(size_t(sh.out_c));
    for (auto& b : L.bias) b = int(rng() % 4001) - 2000;
    x.resize(size_t(sh.in_c) * sh.hw * sh.hw);
    for (auto& v : x) v = static_cast<int8_t>(int(rng() % 256) - 128);
    return L;
}

class ConvPath : public ::testing::TestWithParam<Shape> {};

TEST_P(ConvPath, MatchesDirectConvolutionWithinOneLsb) {
    const Shape sh = GetParam();
    const hw::SocProfile soc = hw::load_named_profile("rk3588");
    std::mt19937 rng(1234 + sh.in_c * 7 + sh.k);
    std::vector<int8_t> x;
    const drv::rknpu::ConvLayer L = random_layer(sh, 5, -7, rng, x);

    const auto low = mesa_conv::lower(L, soc);
    drv::regcmd::Builder b;
    const mesa_conv::Addresses addr{0x1000, 0x200000, 0x300000, 0x400000};
    mesa_conv::emit(L, low, addr, b);
    b.end_task(0, 0, hw::rknpu::kConvOpEnableMask);
    npu::rknpu::RegFile rf;
    for (uint64_t w : b.words()) {
        const auto c = hw::rknpu::RegCmd::decode(w);
        if (c.target() != 0 && c.is_write()) rf.write(c.offset, c.value);
    }
    const auto cfg = npu::rknpu::decode_conv(rf, hw::rknpu::kConvOpEnableMask, soc);
    const auto faults = npu::rknpu::validate_conv(cfg, soc);
    ASSERT_TRUE(faults.empty()) << faults.front().reg << "." << faults.front().field << ": " << faults.front().message;
    EXPECT_EQ(cfg.out_w, uint32_t(L.out_w()));
    EXPECT_EQ(cfg.feature_addr, addr.input);
    // The engines compute on kernel-major weights: unpack the CNA's weight blocks the driver wrote.
    npu::rknpu::ConvOperands ops{mesa_conv::pack_input(L, low, x),
                                 npu::rknpu::canonical_weights(cfg, low.weights, cfg.out_c, cfg.in_c), low.bias};
    const auto img = npu::rknpu::run_conv(cfg, ops);
    const auto got = mesa_conv::unpack_output(L, low, img);
    const auto want = direct_conv(L, x);
    ASSERT_EQ(got.size(), want.size());
    size_t off_by_one = 0;
    for (size_t i = 0; i < got.size(); ++i) {
        const int d = std::abs(int(got[i]) - int(want[i]));
        ASSERT_LE(d, 1) << "element " << i;
        off_by_one += d;
    }
    // Ties and the 15-bit scale make a 1-LSB difference rare; more than 0.5 % would be a bug.
    EXPECT_LE(off_by_one * 200, got.size());
    // MACs on padded channels (hardware-facts III §5.1): Cin to C2 = 16, Cout to 32 (Mesa's
    // output-channel padding, npu.cout_align_int8 of the RK3588 profile).
    const auto cost = npu::rknpu::conv_cost(cfg, soc);
    EXPECT_EQ(cost.macs, L.macs());
    EXPECT_EQ(cost.macs_padded, uint64_t(L.out_h()) * L.out_w() * ((sh.out_c + 31) / 32 * 32) *
                                    ((sh.in_c + 15) / 16 * 16) * sh.k * sh.k);
}

INSTANTIATE_TEST_SUITE_P(Shapes, ConvPath,
                         ::testing::Values(Shape{16, 8, 16, 3, 1, 1, 1, true}, Shape{3, 12, 32, 3, 2, 1, 1, true},
                                           Shape{20, 9, 20, 3, 1, 2, 2, false}, Shape{32, 6, 8, 1, 1, 0, 1, false},
                                           Shape{8, 11, 24, 5, 2, 2, 1, true}),
                         [](const auto& p) {
                             const Shape& s = p.param;
                             return "c" + std::to_string(s.in_c) + "_hw" + std::to_string(s.hw) + "_o" +
                                    std::to_string(s.out_c) + "_k" + std::to_string(s.k) + "_s" +
                                    std::to_string(s.stride) + "_p" + std::to_string(s.pad) + "_d" +
                                    std::to_string(s.dil) + (s.relu ? "_relu" : "");
                         });

// The single-conv front door (what `npusim run LAYER.json` runs) is the model compiler's conv
// lowering: a layer whose input (128 x 56 x 56 = 392 KiB) or weights (256 x 3 x 3 x 256 = 576 KiB)
// exceed the 384 KiB CBUF is tiled into row bands / kernel groups, every task runs on the engines
// from DMA memory, and the output matches the direct convolution within 1 LSB.
TEST(ConvPathCompiler, SingleLayerIsTiledByTheModelCompilerAndMatches) {
    const hw::SocProfile soc = hw::load_named_profile("rk3588");
    for (const Shape sh : {Shape{128, 56, 16, 1, 1, 0, 1, true}, Shape{256, 8, 256, 3, 1, 1, 1, false}}) {
        std::mt19937 rng(99 + sh.in_c);
        std::vector<int8_t> x;
        const drv::rknpu::ConvLayer L = random_layer(sh, -9, 4, rng, x);
        EXPECT_THROW(mesa_conv::lower(L, soc), std::invalid_argument);  // one task cannot hold it

        const auto low = drv::rknpu::lower_conv(L, soc);
        ASSERT_GT(low.tasks.size(), 1u) << sh.in_c;
        const drv::rknpu::ConvAddresses addr{0x10000, 0x100000, 0x400000};
        blk::Memory mem;
        mem.put(addr.input, drv::rknpu::pack_input(L, low, x));
        mem.put(addr.constants, low.constants);
        for (size_t t = 0; t < low.tasks.size(); ++t) {
            drv::regcmd::Builder b;
            b.append(drv::rknpu::conv_task_words(low, t, addr));
            blk::run_task(blk::replay(b), low.tasks[t].meta.enable_mask, mem, soc);
        }
        const auto got = drv::rknpu::unpack_output(L, low, mem.get(addr.output, low.output_bytes));
        const auto want = direct_conv(L, x);
        ASSERT_EQ(got.size(), want.size());
        for (size_t i = 0; i < got.size(); ++i) ASSERT_LE(std::abs(int(got[i]) - int(want[i])), 1) << "element " << i;
        drv::regcmd::Builder one;
        EXPECT_THROW(drv::rknpu::emit_conv_task(L, low, addr, one), std::invalid_argument);
    }
}

TEST(ConvValidate, FlagsTooManyCbufBanks) {
    const hw::SocProfile soc = hw::load_named_profile("rk3588");
    npu::rknpu::RegFile rf;
    rf.write(hw::rknpu::CNA_CBUF_CON0::kOffset,
             hw::rknpu::CNA_CBUF_CON0::DATA_BANK.put(9) | hw::rknpu::CNA_CBUF_CON0::WEIGHT_BANK.put(5));
    const auto faults = npu::rknpu::validate_conv(npu::rknpu::decode_conv(rf, 0xd), soc);
    bool found = false;
    for (const auto& f : faults)
        if (f.reg == "CBUF_CON0") {
            found = true;
            EXPECT_EQ(f.value, 14u);
            EXPECT_NE(f.message.find("exceed the 12 CBUF banks"), std::string::npos);
        }
    EXPECT_TRUE(found);
}

}  // namespace
