// SPDX-License-Identifier: MIT
// PPU block tests: pooling tasks driven through regcmd streams, standalone (PPU_RDMA reads memory,
// strided lines) and on the fly after the DPU (DPU-only and conv tasks), compared with num::run_op
// (MaxPool, AveragePool, QLinearAveragePool) for int8 and fp16; timing and faults.
#include <cmath>
#include <functional>
#include <random>

#include <gtest/gtest.h>

#include "block_harness.h"
#include "mesa_conv.h"
#include "npu/rknpu/block_timing.h"
#include "npu/rknpu/conv_engine.h"

namespace {

using npu::rknpu::Precision;
namespace en = npu::rknpu::enable;
constexpr uint32_t kSrc = 0x10000, kDst = 0x80000, kDpuDst = 0x60000;

struct Pool {
    uint32_t method, k, s, pad;
};

uint32_t out_dim(uint32_t in, const Pool& p) { return (in + 2 * p.pad - p.k) / p.s + 1; }

/// PPU registers for a c x h x w input; PPU_RDMA registers when `from_memory`.
void emit_ppu(drv::regcmd::Builder& b, uint32_t w, uint32_t h, uint32_t c, const Pool& p, uint32_t pad_value,
              bool fp16, bool from_memory, uint64_t line_stride = 0, uint64_t surf_stride = 0) {
    const uint32_t ow = out_dim(w, p), oh = out_dim(h, p);
    const uint64_t prec = fp16 ? 2 : 0;
    b.write_fields("PPU_DATA_CUBE_IN_WIDTH", {{"CUBE_IN_WIDTH", w - 1}});
    b.write_fields("PPU_DATA_CUBE_IN_HEIGHT", {{"CUBE_IN_HEIGHT", h - 1}});
    b.write_fields("PPU_DATA_CUBE_IN_CHANNEL", {{"CUBE_IN_CHANNEL", c - 1}});
    b.write_fields("PPU_DATA_CUBE_OUT_WIDTH", {{"CUBE_OUT_WIDTH", ow - 1}});
    b.write_fields("PPU_DATA_CUBE_OUT_HEIGHT", {{"CUBE_OUT_HEIGHT", oh - 1}});
    b.write_fields("PPU_DATA_CUBE_OUT_CHANNEL", {{"CUBE_OUT_CHANNEL", c - 1}});
    b.write_fields("PPU_OPERATION_MODE_CFG", {{"POOLING_METHOD", p.method}, {"FLYING_MODE", from_memory ? 1u : 0u}});
    b.write_fields("PPU_POOLING_KERNEL_CFG", {{"KERNEL_WIDTH", p.k - 1}, {"KERNEL_HEIGHT", p.k - 1},
                                              {"KERNEL_STRIDE_WIDTH", p.s - 1}, {"KERNEL_STRIDE_HEIGHT", p.s - 1}});
    b.write_fields("PPU_RECIP_KERNEL_WIDTH", {{"RECIP_KERNEL_WIDTH", uint64_t(std::lround(65536.0 / p.k))}});
    b.write_fields("PPU_RECIP_KERNEL_HEIGHT", {{"RECIP_KERNEL_HEIGHT", uint64_t(std::lround(65536.0 / p.k))}});
    b.write_fields("PPU_POOLING_PADDING_CFG",
                   {{"PAD_LEFT", p.pad}, {"PAD_TOP", p.pad}, {"PAD_RIGHT", p.pad}, {"PAD_BOTTOM", p.pad}});
    b.write("PPU_PADDING_VALUE_1_CFG", pad_value);
    b.write_fields("PPU_DST_BASE_ADDR", {{"DST_BASE_ADDR", kDst >> 4}});
    b.write_fields("PPU_DST_SURF_STRIDE", {{"DST_SURF_STRIDE", uint64_t{ow} * oh}});
    b.write_fields("PPU_DATA_FORMAT", {{"PROC_PRECISION", prec}, {"DPU_FLYIN", from_memory ? 0u : 1u}});
    b.write_fields("PPU_MISC_CTRL", {{"BURST_LEN", 15}});
    if (!from_memory) return;
    b.write_fields("PPU_RDMA_RDMA_CUBE_IN_WIDTH", {{"CUBE_IN_WIDTH", w - 1}});
    b.write_fields("PPU_RDMA_RDMA_CUBE_IN_HEIGHT", {{"CUBE_IN_HEIGHT", h - 1}});
    b.write_fields("PPU_RDMA_RDMA_CUBE_IN_CHANNEL", {{"CUBE_IN_CHANNEL", c - 1}});
    b.write("PPU_RDMA_RDMA_SRC_BASE_ADDR", kSrc);
    b.write_fields("PPU_RDMA_RDMA_SRC_LINE_STRIDE", {{"SRC_LINE_STRIDE", (line_stride ? line_stride : w * 16ull) >> 4}});
    b.write_fields("PPU_RDMA_RDMA_SRC_SURF_STRIDE",
                   {{"SRC_SURF_STRIDE", (surf_stride ? surf_stride : uint64_t{w} * h * 16) >> 4}});
    b.write_fields("PPU_RDMA_RDMA_DATA_FORMAT", {{"IN_PRECISION", fp16 ? 2u : 1u}});
}

/// Scatter a compact NC1HWC2 image into memory with the given line and surface strides.
void put_strided(blk::Memory& m, const std::vector<uint8_t>& img, uint32_t w, uint32_t h, uint64_t line, uint64_t surf) {
    const uint64_t c1s = img.size() / (uint64_t{w} * h * 16);
    for (uint64_t c1 = 0; c1 < c1s; ++c1)
        for (uint32_t y = 0; y < h; ++y)
            m.put(kSrc + c1 * surf + y * line,
                  std::vector<uint8_t>(img.begin() + std::ptrdiff_t((c1 * h + y) * w * 16),
                                       img.begin() + std::ptrdiff_t((c1 * h + y + 1) * w * 16)));
}

num::Attributes pool_attrs(const Pool& p, bool include_pad = false) {
    num::Attributes a;
    a.set("kernel_shape", std::vector<int64_t>{p.k, p.k});
    a.set("strides", std::vector<int64_t>{p.s, p.s});
    a.set("pads", std::vector<int64_t>{p.pad, p.pad, p.pad, p.pad});
    if (include_pad) a.set("count_include_pad", int64_t{1});
    return a;
}

constexpr uint32_t W = 11, H = 9, C = 20;
constexpr uint32_t kPpuOnly = en::PPU | en::PPU_RDMA;

TEST(PpuInt8, MaxPoolFromStridedMemoryMatchesRunOp) {
    std::mt19937 rng(21);
    const auto x = blk::random_i8(C * H * W, rng);
    const Pool p{1, 3, 2, 1};
    const uint64_t line = (W + 2) * 16, surf = line * H + 64;
    blk::Memory mem;
    put_strided(mem, blk::pack_i(x, C, H, W), W, H, line, surf);
    drv::regcmd::Builder b;
    emit_ppu(b, W, H, C, p, static_cast<uint32_t>(-128), false, true, line, surf);
    b.end_task(0, 0, kPpuOnly);
    const auto plan = blk::run_task(blk::replay(b), kPpuOnly, mem);
    const uint32_t ow = out_dim(W, p), oh = out_dim(H, p);
    const auto got = blk::unpack(mem, kDst, C, oh, ow, Precision::Int8);
    const num::Tensor X = blk::tensor_i8(x, {1, C, H, W});
    const auto want = blk::ints(num::run_op("MaxPool", pool_attrs(p), {&X})[0]);
    ASSERT_EQ(want.size(), got.i.size());
    for (size_t i = 0; i < want.size(); ++i) ASSERT_EQ(got.i[i], want[i]) << i;
    EXPECT_EQ(plan.reads.size(), 2u * H);  // one read per line: the lines are not contiguous
    EXPECT_EQ(plan.reads[1].addr, kSrc + line);
    EXPECT_EQ(plan.kind, "ppu:maxpool");
    EXPECT_EQ(plan.ppu_cycles, 2u * H * W);  // input atoms dominate (kPpuAtomsPerCycle)
    EXPECT_EQ(plan.pipeline_cycles(), plan.ppu_cycles);
}

TEST(PpuInt8, MinPoolMatchesNegatedMaxPool) {
    std::mt19937 rng(22);
    const auto x = blk::random_i8(C * H * W, rng);
    const Pool p{2, 2, 2, 0};
    blk::Memory mem;
    mem.put(kSrc, blk::pack_i(x, C, H, W));
    drv::regcmd::Builder b;
    emit_ppu(b, W, H, C, p, 127, false, true);
    b.end_task(0, 0, kPpuOnly);
    blk::run_task(blk::replay(b), kPpuOnly, mem);
    const uint32_t ow = out_dim(W, p), oh = out_dim(H, p);
    const auto got = blk::unpack(mem, kDst, C, oh, ow, Precision::Int8);
    std::vector<float> neg(x.size());
    for (size_t i = 0; i < x.size(); ++i) neg[i] = -float(x[i]);
    const num::Tensor X = blk::tensor_f32(neg, {1, C, H, W});
    const auto want = blk::floats(num::run_op("MaxPool", pool_attrs(p), {&X})[0]);
    for (size_t i = 0; i < want.size(); ++i) ASSERT_EQ(got.i[i], -int(want[i])) << i;
}

TEST(PpuInt8, AveragePoolWithZeroPointPaddingMatchesQLinearAveragePool) {
    std::mt19937 rng(23);
    const auto x = blk::random_i8(C * H * W, rng);
    const int zp = -7;
    for (const Pool p : {Pool{0, 3, 1, 1}, Pool{0, 2, 2, 0}, Pool{0, 5, 3, 2}}) {
        blk::Memory mem;
        mem.put(kSrc, blk::pack_i(x, C, H, W));
        drv::regcmd::Builder b;
        emit_ppu(b, W, H, C, p, static_cast<uint32_t>(zp), false, true);
        b.end_task(0, 0, kPpuOnly);
        blk::run_task(blk::replay(b), kPpuOnly, mem);
        const uint32_t ow = out_dim(W, p), oh = out_dim(H, p);
        const auto got = blk::unpack(mem, kDst, C, oh, ow, Precision::Int8);
        const num::Tensor X = blk::tensor_i8(x, {1, C, H, W}), s = blk::scalar_f32(0.1f), z = blk::scalar_i8(zp);
        const auto want =
            blk::ints(num::run_op("QLinearAveragePool", pool_attrs(p, true), {&X, &s, &z, &s, &z}, "com.microsoft")[0]);
        ASSERT_EQ(want.size(), got.i.size());
        // 1-LSB differences only where the exact mean sits on (or within the 1.16 reciprocal's
        // error of) a .5 tie: the PPU rounds half up, onnxruntime half to even.
        for (uint32_t c = 0; c < C; ++c)
            for (uint32_t oy = 0; oy < oh; ++oy)
                for (uint32_t ox = 0; ox < ow; ++ox) {
                    const size_t i = (size_t(c) * oh + oy) * ow + ox;
                    if (got.i[i] == want[i]) continue;
                    ASSERT_EQ(std::abs(int(got.i[i]) - want[i]), 1) << "k" << p.k << " element " << i;
                    int64_t sum = 0;
                    for (uint32_t ky = 0; ky < p.k; ++ky)
                        for (uint32_t kx = 0; kx < p.k; ++kx) {
                            const int iy = int(oy * p.s + ky) - int(p.pad), ix = int(ox * p.s + kx) - int(p.pad);
                            sum += (iy < 0 || iy >= int(H) || ix < 0 || ix >= int(W)) ? zp : x[(c * H + iy) * W + ix];
                        }
                    const double mean = double(sum) / (p.k * p.k);
                    EXPECT_NEAR(mean - std::floor(mean), 0.5, 0.01) << "k" << p.k << " element " << i;
                }
    }
}

TEST(PpuFp16, MaxAndAveragePoolMatchRunOp) {
    std::mt19937 rng(24);
    const auto x = blk::random_f16(C * H * W, rng);
    const num::Tensor X = blk::tensor_f32(x, {1, C, H, W});
    for (const Pool p : {Pool{1, 3, 2, 1}, Pool{0, 3, 1, 1}}) {
        blk::Memory mem;
        mem.put(kSrc, blk::pack_f(x, C, H, W));
        drv::regcmd::Builder b;
        const float pad = p.method == 1 ? -65504.0f : 0.0f;
        uint32_t bits = 0;
        std::memcpy(&bits, &pad, 4);
        emit_ppu(b, W, H, C, p, bits, true, true);
        b.end_task(0, 0, kPpuOnly);
        blk::run_task(blk::replay(b), kPpuOnly, mem);
        const auto got = blk::unpack(mem, kDst, C, out_dim(H, p), out_dim(W, p), Precision::Fp16);
        const auto want = blk::floats(num::run_op(p.method == 1 ? "MaxPool" : "AveragePool", pool_attrs(p, true), {&X})[0]);
        ASSERT_EQ(want.size(), got.f.size());
        for (size_t i = 0; i < want.size(); ++i)
            ASSERT_NEAR(got.f[i], want[i], 2e-3 * std::abs(want[i]) + 1e-3) << "method " << p.method << " element " << i;
    }
}

TEST(PpuChained, DpuReluThenMaxPoolOnTheFly) {
    std::mt19937 rng(25);
    const auto x = blk::random_i8(C * H * W, rng);
    const Pool p{1, 3, 2, 1};
    blk::Memory mem;
    mem.put(kSrc, blk::pack_i(x, C, H, W));
    drv::regcmd::Builder b;
    blk::emit_dpu_task(b, W, H, C, kSrc, kDpuDst);
    b.write_fields("DPU_BS_CFG", {{"BS_ALU_BYPASS", 1}, {"BS_MUL_BYPASS", 1}, {"BS_RELU_BYPASS", 0}});
    emit_ppu(b, W, H, C, p, static_cast<uint32_t>(-128), false, false);
    const uint32_t mask = blk::kDpuOnly | en::PPU;
    b.end_task(0, 0, mask);
    const auto plan = blk::run_task(blk::replay(b), mask, mem);
    const num::Tensor X = blk::tensor_i8(x, {1, C, H, W});
    const num::Tensor R = num::run_op("Relu", {}, {&X})[0];
    const auto want = blk::ints(num::run_op("MaxPool", pool_attrs(p), {&R})[0]);
    const auto got = blk::unpack(mem, kDst, C, out_dim(H, p), out_dim(W, p), Precision::Int8);
    for (size_t i = 0; i < want.size(); ++i) ASSERT_EQ(got.i[i], want[i]) << i;
    // OUTPUT_MODE = 2 keeps the DPU write-back: the ReLU output lands too.
    const auto relu = blk::unpack(mem, kDpuDst, C, H, W, Precision::Int8);
    EXPECT_EQ(std::vector<int>(relu.i.begin(), relu.i.end()), blk::ints(R));
    EXPECT_EQ(plan.kind, "dpu:relu+maxpool");
    EXPECT_EQ(plan.writes.size(), 4u);  // 2 DPU surfaces + 2 PPU surfaces
    // Without OUTPUT_MODE bit 1 only the pooled cube is written.
    b.clear();
    blk::emit_dpu_task(b, W, H, C, kSrc, kDpuDst);
    b.write_fields("DPU_FEATURE_MODE_CFG", {{"BURST_LEN", 15}, {"OUTPUT_MODE", 0}});
    emit_ppu(b, W, H, C, p, static_cast<uint32_t>(-128), false, false);
    const auto plan2 = npu::rknpu::plan_task(blk::replay(b), mask, blk::soc());
    ASSERT_TRUE(plan2.faults.empty());
    ASSERT_EQ(plan2.writes.size(), 2u);
    EXPECT_EQ(plan2.writes[0].block, "PPU");
}

TEST(PpuChained, ConvThenAveragePoolOnTheFly) {
    std::mt19937 rng(26);
    drv::rknpu::ConvLayer L;
    L.in_c = 8, L.in_h = L.in_w = 10, L.out_c = 24, L.kernel_h = L.kernel_w = 3, L.pad_top = L.pad_left = L.pad_bottom = L.pad_right = 1;
    L.relu = true, L.in_scale = 0.04f, L.w_scale = 0.01f, L.out_scale = 0.05f, L.in_zp = 3, L.out_zp = -2;
    L.weights.resize(size_t(L.out_c) * L.in_c * 9);
    for (auto& w : L.weights) w = static_cast<int8_t>(int(rng() % 255) - 127);
    L.bias.assign(size_t(L.out_c), 100);
    std::vector<int8_t> x(size_t(L.in_c) * L.in_h * L.in_w);
    for (auto& v : x) v = static_cast<int8_t>(int(rng() % 256) - 128);
    const auto low = mesa_conv::lower(L, blk::soc());
    const mesa_conv::Addresses addr{0x10000, 0x20000, 0x30000, kDpuDst};
    blk::Memory mem;
    mem.put(addr.input, mesa_conv::pack_input(L, low, x));
    mem.put(addr.weights, low.weights);
    mem.put(addr.bias, low.bias);
    drv::regcmd::Builder b;
    mesa_conv::emit(L, low, addr, b);
    const Pool p{0, 2, 2, 0};
    emit_ppu(b, 10, 10, 24, p, static_cast<uint32_t>(L.out_zp), false, false);
    const uint32_t mask = en::CNA | en::CORE | en::DPU | en::DPU_RDMA | en::PPU;
    b.end_task(0, 0, mask);
    const auto plan = blk::run_task(blk::replay(b), mask, mem);
    EXPECT_EQ(plan.kind, "conv+relu+avgpool");
    EXPECT_GT(plan.core_cycles, plan.ppu_cycles);
    // The conv output (written too: the driver programs OUTPUT_MODE 2) pooled by the reference.
    const auto conv = blk::unpack(mem, kDpuDst, 24, 10, 10, Precision::Int8);
    const num::Tensor Y = blk::tensor_i8(std::vector<int>(conv.i.begin(), conv.i.end()), {1, 24, 10, 10});
    const num::Tensor s = blk::scalar_f32(L.out_scale), z = blk::scalar_i8(L.out_zp);
    const auto want = blk::ints(num::run_op("QLinearAveragePool", pool_attrs(p, true), {&Y, &s, &z, &s, &z}, "com.microsoft")[0]);
    const auto got = blk::unpack(mem, kDst, 24, 5, 5, Precision::Int8);
    for (size_t i = 0; i < want.size(); ++i) ASSERT_LE(std::abs(int(got.i[i]) - want[i]), 1) << i;
}

// The fast engines (DPU surfaces straight into the PPU, PPU on packed atoms) against the reference
// engines (Cube in, Cube out) on whole tasks: every byte of memory equal, for conv + pool and
// DPU + pool with and without the DPU write-back, and a standalone PPU task.
TEST(PpuChained, FastAndReferenceEnginesWriteTheSameBytes) {
    std::mt19937 rng(27);
    auto both = [](const std::function<void(blk::Memory&)>& run) {
        blk::Memory fast, ref;
        run(fast);
        npu::rknpu::set_reference_engines(true);
        run(ref);
        npu::rknpu::set_reference_engines(false);
        return fast.bytes == ref.bytes;
    };
    // conv (3x3, 24 kernels) + 3x3/2 average pool, DPU output written and not.
    drv::rknpu::ConvLayer L;
    L.in_c = 8, L.in_h = L.in_w = 11, L.out_c = 24, L.kernel_h = L.kernel_w = 3, L.pad_top = L.pad_left = L.pad_bottom = L.pad_right = 1;
    L.relu = true, L.in_scale = 0.04f, L.w_scale = 0.01f, L.out_scale = 0.05f, L.in_zp = 3, L.out_zp = -2;
    L.weights.resize(size_t(L.out_c) * L.in_c * 9);
    for (auto& w : L.weights) w = static_cast<int8_t>(int(rng() % 255) - 127);
    L.bias.assign(size_t(L.out_c), -300);
    std::vector<int8_t> x(size_t(L.in_c) * L.in_h * L.in_w);
    for (auto& v : x) v = static_cast<int8_t>(int(rng() % 256) - 128);
    const auto low = mesa_conv::lower(L, blk::soc());
    const mesa_conv::Addresses addr{0x10000, 0x20000, 0x30000, kDpuDst};
    for (const uint64_t mode : {2u, 0u}) {
        EXPECT_TRUE(both([&](blk::Memory& mem) {
            mem.put(addr.input, mesa_conv::pack_input(L, low, x));
            mem.put(addr.weights, low.weights);
            mem.put(addr.bias, low.bias);
            drv::regcmd::Builder b;
            mesa_conv::emit(L, low, addr, b);
            b.write_fields("DPU_FEATURE_MODE_CFG", {{"BURST_LEN", 15}, {"OUTPUT_MODE", mode}});
            emit_ppu(b, 11, 11, 24, Pool{0, 3, 2, 1}, static_cast<uint32_t>(L.out_zp), false, false);
            const uint32_t mask = en::CNA | en::CORE | en::DPU | en::DPU_RDMA | en::PPU;
            b.end_task(0, 0, mask);
            blk::run_task(blk::replay(b), mask, mem);
        })) << "conv + avgpool, OUTPUT_MODE " << mode;
    }
    // DPU (bias + ReLU from registers) + 2x2/2 min pool; then a standalone max pool.
    const auto xi = blk::random_i8(C * H * W, rng);
    EXPECT_TRUE(both([&](blk::Memory& mem) {
        mem.put(kSrc, blk::pack_i(xi, C, H, W));
        drv::regcmd::Builder b;
        blk::emit_dpu_task(b, W, H, C, kSrc, kDpuDst);
        b.write_fields("DPU_BS_CFG", {{"BS_ALU_BYPASS", 0}, {"BS_ALU_ALGO", 2}, {"BS_MUL_BYPASS", 1}, {"BS_RELU_BYPASS", 0}});
        b.write("DPU_BS_ALU_CFG", 5);
        emit_ppu(b, W, H, C, Pool{2, 2, 2, 0}, 0, false, false);
        const uint32_t mask = blk::kDpuOnly | en::PPU;
        b.end_task(0, 0, mask);
        blk::run_task(blk::replay(b), mask, mem);
    })) << "dpu + minpool";
    EXPECT_TRUE(both([&](blk::Memory& mem) {
        mem.put(kSrc, blk::pack_i(xi, C, H, W));
        drv::regcmd::Builder b;
        emit_ppu(b, W, H, C, Pool{1, 3, 1, 1}, static_cast<uint32_t>(-128), false, true);
        b.end_task(0, 0, kPpuOnly);
        blk::run_task(blk::replay(b), kPpuOnly, mem);
    })) << "standalone maxpool";
}

TEST(PpuFaults, ProgrammingErrorsNameTheRegister) {
    auto faults = [](auto program, uint32_t mask = kPpuOnly) {
        drv::regcmd::Builder b;
        emit_ppu(b, W, H, C, Pool{1, 3, 2, 1}, 0, false, true);
        program(b);
        return npu::rknpu::plan_task(blk::replay(b), mask, blk::soc()).faults;
    };
    auto has = [](const std::vector<npu::rknpu::Fault>& f, const std::string& field) {
        for (const auto& x : f)
            if (x.field == field) return true;
        return false;
    };
    EXPECT_TRUE(has(faults([](drv::regcmd::Builder& b) { b.write_fields("PPU_DATA_FORMAT", {{"DPU_FLYIN", 1}}); }), "DPU_FLYIN"));
    EXPECT_TRUE(has(faults([](drv::regcmd::Builder& b) {
                        b.write_fields("PPU_POOLING_PADDING_CFG", {{"PAD_LEFT", 3}});
                    }),
                    "PAD_LEFT/TOP/RIGHT/BOTTOM"));
    EXPECT_TRUE(has(faults([](drv::regcmd::Builder& b) {
                        b.write_fields("PPU_DATA_CUBE_OUT_WIDTH", {{"CUBE_OUT_WIDTH", 20}});
                    }),
                    "CUBE_OUT_WIDTH/HEIGHT"));
    EXPECT_TRUE(has(faults([](drv::regcmd::Builder& b) {
                        b.write_fields("PPU_OPERATION_MODE_CFG", {{"POOLING_METHOD", 3}});
                    }),
                    "POOLING_METHOD"));
    EXPECT_TRUE(has(faults([](drv::regcmd::Builder& b) {
                        b.write_fields("PPU_RDMA_RDMA_CUBE_IN_CHANNEL", {{"CUBE_IN_CHANNEL", 3}});
                    }),
                    "CUBE_IN_WIDTH/HEIGHT/CHANNEL"));
    EXPECT_TRUE(has(faults([](drv::regcmd::Builder&) {}, en::CNA | en::CORE | en::DPU | en::PPU | en::PPU_RDMA), "OP_EN"));
}

}  // namespace
