// SPDX-License-Identifier: MIT
// DPU block tests: DPU-only tasks (MRDMA input) driven through regcmd streams, compared with the
// reference operator library (num::run_op) or a direct reference written here: ReLU, Clip
// (ReLUX), quantized LeakyRelu (MUL_PRELU), per-channel bias + requantization from memory,
// eltwise Add/Mul of two int8 cubes (ERDMA + EW convert), LUT sigmoid, LUT ends, fp16 path, faults.
#include <cmath>
#include <cstring>
#include <random>

#include <gtest/gtest.h>

#include "block_harness.h"
#include "npu/rknpu/dpu_engine.h"
#include "numerics/requant.h"

namespace {

using npu::rknpu::Precision;
constexpr uint32_t W = 5, H = 3, C = 20;  // two atoms, the second partly padding
constexpr uint32_t kSrc = 0x10000, kDst = 0x40000, kEw = 0x20000, kOps = 0x30000;
const std::vector<int64_t> kShape{1, C, H, W};

std::vector<int> run_int8(drv::regcmd::Builder& b, blk::Memory& mem, npu::rknpu::TaskPlan* plan_out = nullptr) {
    b.end_task(0, 0, blk::kDpuOnly);
    const auto plan = blk::run_task(blk::replay(b), blk::kDpuOnly, mem);
    if (plan_out) *plan_out = plan;
    const auto q = blk::unpack(mem, kDst, C, H, W, Precision::Int8);
    return {q.i.begin(), q.i.end()};
}

void expect_within(const std::vector<int>& got, const std::vector<int>& want, int tol, double max_off_frac) {
    ASSERT_EQ(got.size(), want.size());
    size_t off = 0;
    for (size_t i = 0; i < got.size(); ++i) {
        const int d = std::abs(got[i] - want[i]);
        ASSERT_LE(d, tol) << "element " << i << " got " << got[i] << " want " << want[i];
        off += d != 0;
    }
    EXPECT_LE(double(off), max_off_frac * double(got.size()));
}

TEST(DpuInt8, ReluMatchesRunOpAndPlansTheTask) {
    std::mt19937 rng(11);
    const auto x = blk::random_i8(C * H * W, rng);
    blk::Memory mem;
    mem.put(kSrc, blk::pack_i(x, C, H, W));
    drv::regcmd::Builder b;
    blk::emit_dpu_task(b, W, H, C, kSrc, kDst);
    b.write_fields("DPU_BS_CFG", {{"BS_ALU_BYPASS", 1}, {"BS_MUL_BYPASS", 1}, {"BS_RELU_BYPASS", 0}});
    npu::rknpu::TaskPlan plan;
    const auto got = run_int8(b, mem, &plan);
    const num::Tensor X = blk::tensor_i8(x, kShape);
    const auto want = blk::ints(num::run_op("Relu", {}, {&X})[0]);
    expect_within(got, want, 0, 0);
    ASSERT_EQ(plan.reads.size(), 1u);
    EXPECT_EQ(plan.reads[0].addr, kSrc);
    EXPECT_EQ(plan.reads[0].bytes, 2u * W * H * 16);
    EXPECT_EQ(plan.reads[0].block, "DPU_RDMA");
    ASSERT_EQ(plan.writes.size(), 2u);
    EXPECT_EQ(plan.writes[1].addr, kDst + W * H * 16);
    EXPECT_EQ(plan.dpu_cycles, 2u * W * H);  // one atom per cycle (kDpuAtomsPerCycle)
    EXPECT_EQ(plan.core_cycles, 0u);
    EXPECT_EQ(plan.kind, "dpu:relu");
}

TEST(DpuInt8, ReluxClipMatchesRunOpClip) {
    std::mt19937 rng(12);
    const auto x = blk::random_i8(C * H * W, rng);
    blk::Memory mem;
    mem.put(kSrc, blk::pack_i(x, C, H, W));
    drv::regcmd::Builder b;
    blk::emit_dpu_task(b, W, H, C, kSrc, kDst);
    b.write_fields("DPU_BS_CFG", {{"BS_ALU_BYPASS", 1}, {"BS_MUL_BYPASS", 1}, {"BS_RELU_BYPASS", 0}, {"BS_RELUX_EN", 1}});
    b.write("DPU_BS_RELUX_CMP_VALUE", 100);
    const auto got = run_int8(b, mem);
    const num::Tensor X = blk::tensor_i8(x, kShape), lo = blk::scalar_i8(0), hi = blk::scalar_i8(100);
    expect_within(got, blk::ints(num::run_op("Clip", {}, {&X, &lo, &hi})[0]), 0, 0);
}

TEST(DpuInt8, AluMaxWithBsOperandAndMinWithEwRegisterOperandClip) {
    std::mt19937 rng(20);
    const auto x = blk::random_i8(C * H * W, rng);
    blk::Memory mem;
    mem.put(kSrc, blk::pack_i(x, C, H, W));
    drv::regcmd::Builder b;
    blk::emit_dpu_task(b, W, H, C, kSrc, kDst);
    b.write_fields("DPU_BS_CFG", {{"BS_ALU_BYPASS", 0}, {"BS_ALU_ALGO", 0}, {"BS_MUL_BYPASS", 1}, {"BS_RELU_BYPASS", 1}});
    b.write("DPU_BS_ALU_CFG", static_cast<uint32_t>(-20));
    b.write_fields("DPU_EW_CFG", {{"EW_BYPASS", 0}, {"EW_OP_BYPASS", 0}, {"EW_OP_SRC", 0}, {"EW_ALU_ALGO", 1},
                                  {"EW_LUT_BYPASS", 1}, {"EW_OP_CVT_BYPASS", 1}, {"EW_RELU_BYPASS", 1}});
    b.write("DPU_EW_OP_VALUE_0", 50);
    npu::rknpu::TaskPlan plan;
    const auto got = run_int8(b, mem, &plan);
    const num::Tensor X = blk::tensor_i8(x, kShape), lo = blk::scalar_i8(-20), hi = blk::scalar_i8(50);
    expect_within(got, blk::ints(num::run_op("Clip", {}, {&X, &lo, &hi})[0]), 0, 0);
    EXPECT_EQ(plan.reads.size(), 1u);  // register operands: no DPU_RDMA operand reads
}

TEST(DpuInt8, QuantizedLeakyReluThroughBsAndBnMatchesQLinearLeakyRelu) {
    std::mt19937 rng(13);
    const auto x = blk::random_i8(C * H * W, rng);
    const float s_in = 0.05f, s_out = 0.043f, alpha = 0.1f;  // no exact .5 ties (ORT rounds them to even)
    const int z_in = 3, z_out = -5;
    blk::Memory mem;
    mem.put(kSrc, blk::pack_i(x, C, H, W));
    drv::regcmd::Builder b;
    blk::emit_dpu_task(b, W, H, C, kSrc, kDst);
    // BS: x - z_in, then * 256 for precision; BN: negative values * alpha (Q15); convert back.
    b.write_fields("DPU_BS_CFG", {{"BS_ALU_BYPASS", 0}, {"BS_ALU_ALGO", 2}, {"BS_MUL_BYPASS", 0}, {"BS_RELU_BYPASS", 1}});
    b.write("DPU_BS_ALU_CFG", static_cast<uint32_t>(-z_in));
    b.write_fields("DPU_BS_MUL_CFG", {{"BS_MUL_OPERAND", 256}, {"BS_MUL_SHIFT_VALUE", 0}});
    b.write_fields("DPU_BN_CFG", {{"BN_ALU_BYPASS", 1}, {"BN_MUL_BYPASS", 0}, {"BN_MUL_PRELU", 1}, {"BN_RELU_BYPASS", 1}});
    b.write_fields("DPU_BN_MUL_CFG", {{"BN_MUL_OPERAND", uint64_t(std::lround(alpha * 32768))}, {"BN_MUL_SHIFT_VALUE", 15}});
    const num::FixedScale m = num::quantize_scale(double(s_in) / s_out / 256.0, 15, 63);
    b.write("DPU_OUT_CVT_OFFSET", static_cast<uint32_t>(z_out));
    b.write_fields("DPU_OUT_CVT_SCALE", {{"OUT_CVT_SCALE", uint64_t(m.multiplier)}});
    b.write_fields("DPU_OUT_CVT_SHIFT", {{"OUT_CVT_SHIFT", uint64_t(m.shift)}});
    const auto got = run_int8(b, mem);
    const num::Tensor X = blk::tensor_i8(x, kShape), xs = blk::scalar_f32(s_in), xz = blk::scalar_i8(z_in),
                      ys = blk::scalar_f32(s_out), yz = blk::scalar_i8(z_out);
    num::Attributes a;
    a.set("alpha", alpha);
    const auto want = blk::ints(num::run_op("QLinearLeakyRelu", a, {&X, &xs, &xz, &ys, &yz}, "com.microsoft")[0]);
    expect_within(got, want, 1, 0.02);
}

/// Per-channel ALU (bias) and MUL (requant) operands read from memory by DPU_RDMA, through the
/// BS stage (BRDMA) or the BN stage (NRDMA).
void per_channel_from_memory(bool bn) {
    std::mt19937 rng(bn ? 41 : 14);
    const auto x = blk::random_i8(C * H * W, rng);
    std::vector<int32_t> bias(C);
    std::vector<int16_t> mul(C);
    std::vector<uint8_t> ops(6 * C);
    for (uint32_t c = 0; c < C; ++c) {
        bias[c] = int32_t(rng() % 2001) - 1000;
        mul[c] = static_cast<int16_t>(int(rng() % 3000) - 500);
        std::memcpy(&ops[4 * c], &bias[c], 4);
        std::memcpy(&ops[4 * C + 2 * c], &mul[c], 2);
    }
    blk::Memory mem;
    mem.put(kSrc, blk::pack_i(x, C, H, W));
    mem.put(kOps, ops);
    drv::regcmd::Builder b;
    blk::emit_dpu_task(b, W, H, C, kSrc, kDst);
    if (bn) {
        b.write_fields("DPU_BN_CFG", {{"BN_ALU_BYPASS", 0}, {"BN_ALU_SRC", 1}, {"BN_ALU_ALGO", 2}, {"BN_MUL_BYPASS", 0},
                                      {"BN_RELU_BYPASS", 1}});
        b.write_fields("DPU_BN_MUL_CFG", {{"BN_MUL_SRC", 1}, {"BN_MUL_SHIFT_VALUE", 10}});
        b.write_fields("DPU_RDMA_RDMA_NRDMA_CFG", {{"NRDMA_DATA_USE", 3}});
        b.write("DPU_RDMA_RDMA_BN_BASE_ADDR", kOps);
    } else {
        b.write_fields("DPU_BS_CFG", {{"BS_ALU_BYPASS", 0}, {"BS_ALU_SRC", 1}, {"BS_ALU_ALGO", 2}, {"BS_MUL_BYPASS", 0},
                                      {"BS_RELU_BYPASS", 1}});
        b.write_fields("DPU_BS_MUL_CFG", {{"BS_MUL_SRC", 1}, {"BS_MUL_SHIFT_VALUE", 10}});
        b.write_fields("DPU_RDMA_RDMA_BRDMA_CFG", {{"BRDMA_DATA_USE", 3}});
        b.write("DPU_RDMA_RDMA_BS_BASE_ADDR", kOps);
    }
    b.write("DPU_OUT_CVT_OFFSET", 3);
    npu::rknpu::TaskPlan plan;
    const auto got = run_int8(b, mem, &plan);
    std::vector<int> want(got.size());
    for (uint32_t c = 0; c < C; ++c)
        for (uint32_t i = 0; i < H * W; ++i) {
            const double v = std::floor(double(x[c * H * W + i] + bias[c]) * mul[c] / 1024.0 + 0.5) + 3;
            want[c * H * W + i] = int(std::clamp(v, -128.0, 127.0));
        }
    expect_within(got, want, 0, 0);
    ASSERT_EQ(plan.reads.size(), 2u);
    EXPECT_EQ(plan.reads[1].addr, kOps);
    EXPECT_EQ(plan.reads[1].bytes, 6u * C);
    EXPECT_EQ(plan.reads[1].what, bn ? "bn operands" : "bias");
}

TEST(DpuInt8, PerChannelBiasAndRequantFromMemoryMatchDirectReference) { per_channel_from_memory(false); }
TEST(DpuInt8, PerChannelBnOperandsFromMemoryMatchDirectReference) { per_channel_from_memory(true); }

struct QParams {
    float sa, sb, sc;
    int za, zb, zc;
};

TEST(DpuInt8, EltwiseAddOfTwoCubesMatchesQLinearAdd) {
    std::mt19937 rng(15);
    const QParams q{0.031f, 0.05f, 0.06f, -4, 7, 2};  // ratios without exact .5 ties
    const auto a = blk::random_i8(C * H * W, rng), bb = blk::random_i8(C * H * W, rng);
    blk::Memory mem;
    mem.put(kSrc, blk::pack_i(a, C, H, W));
    mem.put(kEw, blk::pack_i(bb, C, H, W));
    // Both inputs to the output scale with 6 extra fraction bits: multiplier ratio * 2^14, >> 8.
    const auto ma = uint64_t(std::lround(double(q.sa) / q.sc * 16384)), mb = uint64_t(std::lround(double(q.sb) / q.sc * 16384));
    drv::regcmd::Builder b;
    blk::emit_dpu_task(b, W, H, C, kSrc, kDst);
    b.write_fields("DPU_BS_CFG", {{"BS_ALU_BYPASS", 0}, {"BS_ALU_ALGO", 2}, {"BS_MUL_BYPASS", 0}, {"BS_RELU_BYPASS", 1}});
    b.write("DPU_BS_ALU_CFG", static_cast<uint32_t>(-q.za));
    b.write_fields("DPU_BS_MUL_CFG", {{"BS_MUL_OPERAND", ma}, {"BS_MUL_SHIFT_VALUE", 8}});
    b.write_fields("DPU_EW_CFG", {{"EW_BYPASS", 0}, {"EW_OP_BYPASS", 0}, {"EW_OP_TYPE", 0}, {"EW_OP_SRC", 1},
                                  {"EW_ALU_ALGO", 2}, {"EW_OP_CVT_BYPASS", 0}, {"EW_LUT_BYPASS", 1}, {"EW_RELU_BYPASS", 1}});
    b.write("DPU_EW_CVT_OFFSET_VALUE", static_cast<uint32_t>(-q.zb));
    b.write_fields("DPU_EW_CVT_SCALE_VALUE", {{"EW_OP_CVT_SCALE", mb}, {"EW_OP_CVT_SHIFT", 8}});
    b.write_fields("DPU_RDMA_RDMA_ERDMA_CFG", {{"ERDMA_DISABLE", 0}, {"ERDMA_DATA_SIZE", 1}, {"ERDMA_DATA_MODE", 1}});
    b.write("DPU_RDMA_RDMA_EW_BASE_ADDR", kEw);
    b.write_fields("DPU_RDMA_RDMA_EW_SURF_STRIDE", {{"EW_SURF_STRIDE", uint64_t{W} * H}});
    b.write("DPU_OUT_CVT_OFFSET", static_cast<uint32_t>(q.zc));
    b.write_fields("DPU_OUT_CVT_SHIFT", {{"OUT_CVT_SHIFT", 6}});
    npu::rknpu::TaskPlan plan;
    const auto got = run_int8(b, mem, &plan);
    const num::Tensor A = blk::tensor_i8(a, kShape), B = blk::tensor_i8(bb, kShape), as = blk::scalar_f32(q.sa),
                      az = blk::scalar_i8(q.za), bs = blk::scalar_f32(q.sb), bz = blk::scalar_i8(q.zb),
                      cs = blk::scalar_f32(q.sc), cz = blk::scalar_i8(q.zc);
    const auto want = blk::ints(num::run_op("QLinearAdd", {}, {&A, &as, &az, &B, &bs, &bz, &cs, &cz}, "com.microsoft")[0]);
    expect_within(got, want, 1, 0.02);
    EXPECT_EQ(plan.kind, "dpu:bias+mul+eltwise");
    ASSERT_EQ(plan.reads.size(), 2u);
    EXPECT_EQ(plan.reads[1].what, "ew operand");
    EXPECT_EQ(plan.reads[1].addr, kEw);
}

TEST(DpuInt8, EltwiseMulOfTwoCubesMatchesQLinearMul) {
    std::mt19937 rng(16);
    const QParams q{0.02f, 0.03f, 0.05f, 5, -3, -1};
    const auto a = blk::random_i8(C * H * W, rng), bb = blk::random_i8(C * H * W, rng);
    blk::Memory mem;
    mem.put(kSrc, blk::pack_i(a, C, H, W));
    mem.put(kEw, blk::pack_i(bb, C, H, W));
    drv::regcmd::Builder b;
    blk::emit_dpu_task(b, W, H, C, kSrc, kDst);
    b.write_fields("DPU_BS_CFG", {{"BS_ALU_BYPASS", 0}, {"BS_ALU_ALGO", 2}, {"BS_MUL_BYPASS", 1}, {"BS_RELU_BYPASS", 1}});
    b.write("DPU_BS_ALU_CFG", static_cast<uint32_t>(-q.za));
    b.write_fields("DPU_EW_CFG", {{"EW_BYPASS", 0}, {"EW_OP_BYPASS", 0}, {"EW_OP_TYPE", 1}, {"EW_OP_SRC", 1},
                                  {"EW_OP_CVT_BYPASS", 0}, {"EW_LUT_BYPASS", 1}, {"EW_RELU_BYPASS", 1}});
    b.write("DPU_EW_CVT_OFFSET_VALUE", static_cast<uint32_t>(-q.zb));
    b.write_fields("DPU_EW_CVT_SCALE_VALUE", {{"EW_OP_CVT_SCALE", 1}, {"EW_OP_CVT_SHIFT", 0}, {"EW_TRUNCATE", 0}});
    b.write_fields("DPU_RDMA_RDMA_ERDMA_CFG", {{"ERDMA_DISABLE", 0}, {"ERDMA_DATA_SIZE", 1}, {"ERDMA_DATA_MODE", 1}});
    b.write("DPU_RDMA_RDMA_EW_BASE_ADDR", kEw);
    const num::FixedScale m = num::quantize_scale(double(q.sa) * q.sb / q.sc, 15, 63);
    b.write("DPU_OUT_CVT_OFFSET", static_cast<uint32_t>(q.zc));
    b.write_fields("DPU_OUT_CVT_SCALE", {{"OUT_CVT_SCALE", uint64_t(m.multiplier)}});
    b.write_fields("DPU_OUT_CVT_SHIFT", {{"OUT_CVT_SHIFT", uint64_t(m.shift)}});
    const auto got = run_int8(b, mem);
    const num::Tensor A = blk::tensor_i8(a, kShape), B = blk::tensor_i8(bb, kShape), as = blk::scalar_f32(q.sa),
                      az = blk::scalar_i8(q.za), bs = blk::scalar_f32(q.sb), bz = blk::scalar_i8(q.zb),
                      cs = blk::scalar_f32(q.sc), cz = blk::scalar_i8(q.zc);
    const auto want = blk::ints(num::run_op("QLinearMul", {}, {&A, &as, &az, &B, &bs, &bz, &cs, &cz}, "com.microsoft")[0]);
    expect_within(got, want, 1, 0.02);
}

/// Load a table through the LUT access port: ACCESS_CFG then one ACCESS_DATA write per entry.
void load_table(drv::regcmd::Builder& b, int table, const std::vector<int>& v) {
    b.write_fields("DPU_LUT_ACCESS_CFG", {{"LUT_ACCESS_TYPE", 1}, {"LUT_TABLE_ID", uint64_t(table)}, {"LUT_ADDR", 0}});
    for (int e : v) b.write_fields("DPU_LUT_ACCESS_DATA", {{"LUT_ACCESS_DATA", uint64_t(uint16_t(int16_t(e)))}});
}

TEST(DpuInt8, LutSigmoidMatchesQLinearSigmoid) {
    std::mt19937 rng(17);
    const float s_in = 0.03f;
    const int z_in = 2;
    const auto x = blk::random_i8(C * H * W, rng);
    auto sig_q15 = [&](int v) {
        return int(std::min(32767.0, std::nearbyint(32768.0 / (1.0 + std::exp(-double(v) * s_in)))));
    };
    std::vector<int> le(65), lo(257);
    for (int i = 0; i < 65; ++i) le[size_t(i)] = sig_q15(-32 + i);       // fine table around 0, step 1
    for (int i = 0; i < 257; ++i) lo[size_t(i)] = sig_q15(-256 + 2 * i);  // coarse table, step 2
    blk::Memory mem;
    mem.put(kSrc, blk::pack_i(x, C, H, W));
    drv::regcmd::Builder b;
    blk::emit_dpu_task(b, W, H, C, kSrc, kDst);
    b.write_fields("DPU_BS_CFG", {{"BS_ALU_BYPASS", 0}, {"BS_ALU_ALGO", 2}, {"BS_MUL_BYPASS", 1}, {"BS_RELU_BYPASS", 1}});
    b.write("DPU_BS_ALU_CFG", static_cast<uint32_t>(-z_in));
    b.write_fields("DPU_EW_CFG", {{"EW_BYPASS", 0}, {"EW_OP_BYPASS", 1}, {"EW_LUT_BYPASS", 0}, {"EW_OP_CVT_BYPASS", 1},
                                  {"EW_RELU_BYPASS", 1}});
    load_table(b, 0, le);
    load_table(b, 1, lo);
    b.write_fields("DPU_LUT_CFG", {{"LUT_HYBRID_PRIORITY", 0}, {"LUT_UFLOW_PRIORITY", 1}, {"LUT_OFLOW_PRIORITY", 1}});
    b.write_fields("DPU_LUT_INFO", {{"LUT_LE_INDEX_SELECT", 0}, {"LUT_LO_INDEX_SELECT", 1}});
    b.write("DPU_LUT_LE_START", static_cast<uint32_t>(-32));
    b.write("DPU_LUT_LE_END", 32);
    b.write("DPU_LUT_LO_START", static_cast<uint32_t>(-256));
    b.write("DPU_LUT_LO_END", 256);
    // sigmoid * 2^15 >> 7 = sigmoid * 256; output scale 1/256, zero point -128.
    b.write("DPU_OUT_CVT_OFFSET", static_cast<uint32_t>(-128));
    b.write_fields("DPU_OUT_CVT_SHIFT", {{"OUT_CVT_SHIFT", 7}});
    npu::rknpu::TaskPlan plan;
    const auto got = run_int8(b, mem, &plan);
    const num::Tensor X = blk::tensor_i8(x, kShape), xs = blk::scalar_f32(s_in), xz = blk::scalar_i8(z_in),
                      ys = blk::scalar_f32(1.0f / 256), yz = blk::scalar_i8(-128);
    const auto want = blk::ints(num::run_op("QLinearSigmoid", {}, {&X, &xs, &xz, &ys, &yz}, "com.microsoft")[0]);
    expect_within(got, want, 1, 0.05);
    EXPECT_EQ(plan.kind, "dpu:bias+lut");
}

TEST(DpuLut, PortWritesAutoIncrementAndReadTypeIsIgnored) {
    drv::regcmd::Builder b;
    b.write_fields("DPU_LUT_ACCESS_CFG", {{"LUT_ACCESS_TYPE", 1}, {"LUT_TABLE_ID", 1}, {"LUT_ADDR", 255}});
    b.write("DPU_LUT_ACCESS_DATA", 0x1234);
    b.write("DPU_LUT_ACCESS_DATA", 0xfffe);  // -2
    b.write("DPU_LUT_ACCESS_DATA", 77);      // address 257: past the LO table, dropped
    b.write_fields("DPU_LUT_ACCESS_CFG", {{"LUT_ACCESS_TYPE", 0}, {"LUT_TABLE_ID", 0}, {"LUT_ADDR", 3}});
    b.write("DPU_LUT_ACCESS_DATA", 55);  // read access: no store
    const auto rf = blk::replay(b);
    EXPECT_EQ(rf.lut_lo()[255], 0x1234);
    EXPECT_EQ(rf.lut_lo()[256], -2);
    EXPECT_EQ(rf.lut_le()[3], 0);
}

TEST(DpuLut, InterpolationUnderflowOverflowAndPriorities) {
    npu::rknpu::DpuLut l;
    l.lo.resize(257);
    for (int i = 0; i < 257; ++i) l.lo[size_t(i)] = static_cast<int16_t>(10 * i);
    l.lo_start = 0, l.lo_index_select = 2, l.lo_end = 1024;
    l.lo_uflow_scale = 3, l.lo_uflow_shift = 1, l.lo_oflow_scale = 5, l.lo_oflow_shift = 0;
    l.le.assign(65, 0);
    for (int i = 0; i < 65; ++i) l.le[size_t(i)] = static_cast<int16_t>(-i);
    l.le_start = 2000, l.le_end = 2064, l.le_index_select = 0;
    l.hybrid_prefer_lo = true;
    l.uflow_prefer_lo = true;
    EXPECT_EQ(npu::rknpu::lut_lookup(l, 0), 0);
    EXPECT_EQ(npu::rknpu::lut_lookup(l, 5), 13);        // 10 + (10 * 1 / 4 = 2.5 -> 3, half up)
    EXPECT_EQ(npu::rknpu::lut_lookup(l, 1024), 2560);   // last entry
    EXPECT_EQ(npu::rknpu::lut_lookup(l, -8), -12);      // both under: LO (UFLOW_PRIORITY), 0 + (-8*3 >> 1)
    EXPECT_EQ(npu::rknpu::lut_lookup(l, 1030), 2590);   // LO over, LE under: HYBRID_PRIORITY -> LO
    EXPECT_EQ(npu::rknpu::lut_lookup(l, 2010), -10);    // only LE covers it
    l.uflow_prefer_lo = false;
    EXPECT_EQ(npu::rknpu::lut_lookup(l, -8), 0);        // LE underflow with slope 0: first entry
}

TEST(DpuFp16, ReluLeakyClipAndEltwiseAddMatchRunOp) {
    std::mt19937 rng(18);
    const auto x = blk::random_f16(C * H * W, rng), y = blk::random_f16(C * H * W, rng);
    const num::Tensor X = blk::tensor_f32(x, kShape), Y = blk::tensor_f32(y, kShape);
    auto run = [&](auto program) {
        blk::Memory mem;
        mem.put(kSrc, blk::pack_f(x, C, H, W));
        mem.put(kEw, blk::pack_f(y, C, H, W));
        drv::regcmd::Builder b;
        blk::emit_dpu_task(b, W, H, C, kSrc, kDst, true);
        program(b);
        b.end_task(0, 0, blk::kDpuOnly);
        blk::run_task(blk::replay(b), blk::kDpuOnly, mem);
        return blk::unpack(mem, kDst, C, H, W, Precision::Fp16).f;
    };
    auto expect_close = [](const std::vector<float>& got, const std::vector<float>& want) {
        ASSERT_EQ(got.size(), want.size());
        for (size_t i = 0; i < got.size(); ++i)
            ASSERT_NEAR(got[i], npu::rknpu::round_to_fp16(want[i]), 1e-3 * std::abs(want[i]) + 1e-6) << i;
    };
    expect_close(run([](drv::regcmd::Builder& b) {
                     b.write_fields("DPU_BS_CFG", {{"BS_ALU_BYPASS", 1}, {"BS_MUL_BYPASS", 1}, {"BS_RELU_BYPASS", 0}});
                 }),
                 blk::floats(num::run_op("Relu", {}, {&X})[0]));
    num::Attributes la;
    la.set("alpha", 0.1f);
    expect_close(run([](drv::regcmd::Builder& b) {
                     b.write_fields("DPU_BS_CFG", {{"BS_ALU_BYPASS", 1}, {"BS_MUL_BYPASS", 0}, {"BS_MUL_PRELU", 1},
                                                   {"BS_RELU_BYPASS", 1}});
                     b.write_fields("DPU_BS_MUL_CFG", {{"BS_MUL_OPERAND", npu::rknpu::fp32_to_fp16(0.1f)}});
                 }),
                 blk::floats(num::run_op("LeakyRelu", la, {&X})[0]));
    const num::Tensor lo = blk::scalar_f32(0.0f), hi = blk::scalar_f32(2.5f);
    expect_close(run([](drv::regcmd::Builder& b) {
                     b.write_fields("DPU_BS_CFG", {{"BS_ALU_BYPASS", 1}, {"BS_MUL_BYPASS", 1}, {"BS_RELU_BYPASS", 0},
                                                   {"BS_RELUX_EN", 1}});
                     const float v = 2.5f;
                     uint32_t bits = 0;
                     std::memcpy(&bits, &v, 4);
                     b.write("DPU_BS_RELUX_CMP_VALUE", bits);
                 }),
                 blk::floats(num::run_op("Clip", {}, {&X, &lo, &hi})[0]));
    expect_close(run([](drv::regcmd::Builder& b) {
                     b.write_fields("DPU_EW_CFG", {{"EW_BYPASS", 0}, {"EW_OP_BYPASS", 0}, {"EW_OP_SRC", 1},
                                                   {"EW_ALU_ALGO", 2}, {"EW_OP_CVT_BYPASS", 1}, {"EW_LUT_BYPASS", 1},
                                                   {"EW_RELU_BYPASS", 1}});
                     b.write_fields("DPU_RDMA_RDMA_ERDMA_CFG",
                                    {{"ERDMA_DISABLE", 0}, {"ERDMA_DATA_SIZE", 2}, {"ERDMA_DATA_MODE", 1}});
                     b.write("DPU_RDMA_RDMA_EW_BASE_ADDR", kEw);
                 }),
                 blk::floats(num::run_op("Add", {}, {&X, &Y})[0]));
}

// The LUT on the fp16 path (UNVERIFIED encoding, see lut_lookup_f): fp16 table entries, fp32
// start/end, a negative INDEX_SELECT for a 1/8 step. Sigmoid over [-4, 4] (LE, fine) and [-16, 16]
// (LO, coarse), held flat beyond (slope 0), against run_op Sigmoid.
TEST(DpuFp16, LutSigmoidMatchesSigmoid) {
    std::mt19937 rng(19);
    const auto x = blk::random_f16(C * H * W, rng, -20.f, 20.f);
    auto sig = [](double v) { return 1.0 / (1.0 + std::exp(-v)); };
    auto f32 = [](float v) {
        uint32_t u = 0;
        std::memcpy(&u, &v, 4);
        return u;
    };
    std::vector<int> le(65), lo(257);
    for (int i = 0; i < 65; ++i) le[size_t(i)] = npu::rknpu::fp32_to_fp16(float(sig(-4.0 + i * 0.125)));
    for (int i = 0; i < 257; ++i) lo[size_t(i)] = npu::rknpu::fp32_to_fp16(float(sig(-16.0 + i * 0.125)));
    blk::Memory mem;
    mem.put(kSrc, blk::pack_f(x, C, H, W));
    drv::regcmd::Builder b;
    blk::emit_dpu_task(b, W, H, C, kSrc, kDst, true);
    b.write_fields("DPU_EW_CFG", {{"EW_BYPASS", 0}, {"EW_OP_BYPASS", 1}, {"EW_LUT_BYPASS", 0}, {"EW_OP_CVT_BYPASS", 1},
                                  {"EW_RELU_BYPASS", 1}});
    load_table(b, 0, le);
    load_table(b, 1, lo);
    b.write_fields("DPU_LUT_CFG", {{"LUT_HYBRID_PRIORITY", 0}, {"LUT_UFLOW_PRIORITY", 1}, {"LUT_OFLOW_PRIORITY", 1}});
    b.write_fields("DPU_LUT_INFO", {{"LUT_LE_INDEX_SELECT", 0xfd}, {"LUT_LO_INDEX_SELECT", 0xfd}});  // -3: step 1/8
    b.write("DPU_LUT_LE_START", f32(-4.f));
    b.write("DPU_LUT_LE_END", f32(4.f));
    b.write("DPU_LUT_LO_START", f32(-16.f));
    b.write("DPU_LUT_LO_END", f32(16.f));
    b.end_task(0, 0, blk::kDpuOnly);
    const auto plan = blk::run_task(blk::replay(b), blk::kDpuOnly, mem);
    EXPECT_EQ(plan.kind, "dpu-fp16:lut");
    const auto got = blk::unpack(mem, kDst, C, H, W, Precision::Fp16).f;
    const num::Tensor X = blk::tensor_f32(x, kShape);
    const auto want = blk::floats(num::run_op("Sigmoid", {}, {&X})[0]);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 1.5e-3) << "x = " << x[i];
}

TEST(DpuLut, FloatTableInterpolatesExtrapolatesAndPassesNaN) {
    npu::rknpu::DpuLut l;
    auto bits = [](float v) {
        int32_t u = 0;
        std::memcpy(&u, &v, 4);
        return u;
    };
    l.le.assign(npu::rknpu::kLutLeEntries, 0);
    l.lo.assign(npu::rknpu::kLutLoEntries, 0);
    for (size_t i = 0; i < l.le.size(); ++i) l.le[i] = static_cast<int16_t>(npu::rknpu::fp32_to_fp16(float(i) * 0.5f));
    l.le_start = bits(1.0f), l.le_end = bits(17.0f), l.le_index_select = 0xfe;  // step 1/4: y = 2 * (x - 1)
    l.lo_start = bits(100.f), l.lo_end = bits(101.f);                           // never covers these inputs
    l.le_uflow_scale = 3, l.le_uflow_shift = 1;                                  // slope 1.5 below the start
    l.hybrid_prefer_lo = false;
    EXPECT_FLOAT_EQ(npu::rknpu::lut_lookup_f(l, 1.0f), 0.0f);
    EXPECT_FLOAT_EQ(npu::rknpu::lut_lookup_f(l, 2.125f), 2.25f);  // between entries 4 and 5
    EXPECT_FLOAT_EQ(npu::rknpu::lut_lookup_f(l, 17.0f), 32.0f);   // the last entry
    EXPECT_FLOAT_EQ(npu::rknpu::lut_lookup_f(l, -1.0f), -3.0f);   // under: entry 0 + (x - start) * 1.5 (LE and LO under)
    EXPECT_TRUE(std::isnan(npu::rknpu::lut_lookup_f(l, std::nanf(""))));
}

TEST(DpuInt16, ScaleAndClipAnInt16CubeWithInt16Output) {
    std::mt19937 rng(19);
    std::uniform_int_distribution<int> d(-32768, 32767);
    std::vector<int> x(C * H * W);
    for (auto& v : x) v = d(rng);
    blk::Memory mem;
    mem.put(kSrc, blk::pack_i(x, C, H, W, Precision::Int16));
    drv::regcmd::Builder b;
    blk::emit_dpu_task(b, W, H, C, kSrc, kDst);
    b.write_fields("DPU_DATA_FORMAT", {{"PROC_PRECISION", 0}, {"IN_PRECISION", 1}, {"OUT_PRECISION", 1}});
    b.write_fields("DPU_DST_SURF_STRIDE", {{"DST_SURF_STRIDE", uint64_t{W} * H}});
    b.write_fields("DPU_RDMA_RDMA_FEATURE_MODE_CFG", {{"BURST_LEN", 15}, {"MRDMA_DISABLE", 0}, {"IN_PRECISION", 1}});
    // y = clip(x * 3 / 2, 0, 20000): MUL 3 >> 1 (half up), ReLUX at 20000, saturating int16 output.
    b.write_fields("DPU_BS_CFG", {{"BS_ALU_BYPASS", 1}, {"BS_MUL_BYPASS", 0}, {"BS_RELU_BYPASS", 0}, {"BS_RELUX_EN", 1}});
    b.write_fields("DPU_BS_MUL_CFG", {{"BS_MUL_OPERAND", 3}, {"BS_MUL_SHIFT_VALUE", 1}});
    b.write("DPU_BS_RELUX_CMP_VALUE", 20000);
    b.end_task(0, 0, blk::kDpuOnly);
    const auto plan = blk::run_task(blk::replay(b), blk::kDpuOnly, mem);
    EXPECT_EQ(plan.reads[0].bytes, 3u * W * H * 16);  // 20 int16 channels: 3 atoms of 8
    EXPECT_EQ(plan.writes.size(), 3u);
    const auto got = blk::unpack(mem, kDst, C, H, W, Precision::Int16);
    for (size_t i = 0; i < x.size(); ++i) {
        const int64_t want = std::clamp<int64_t>((int64_t{x[i]} * 3 + 1) >> 1, 0, 20000);
        ASSERT_EQ(got.i[i], want) << i;
    }
}

TEST(DpuFaults, ProgrammingErrorsNameTheRegister) {
    auto faults = [](auto program, uint32_t mask = blk::kDpuOnly) {
        drv::regcmd::Builder b;
        blk::emit_dpu_task(b, W, H, C, kSrc, kDst);
        program(b);
        return npu::rknpu::plan_task(blk::replay(b), mask, blk::soc()).faults;
    };
    auto has = [](const std::vector<npu::rknpu::Fault>& f, const std::string& field) {
        for (const auto& x : f)
            if (x.field == field) return true;
        return false;
    };
    EXPECT_TRUE(has(faults([](drv::regcmd::Builder& b) {
                        b.write_fields("DPU_RDMA_RDMA_FEATURE_MODE_CFG", {{"MRDMA_DISABLE", 1}});
                    }),
                    "MRDMA_DISABLE"));
    EXPECT_TRUE(has(faults([](drv::regcmd::Builder& b) {
                        b.write_fields("DPU_EW_CFG", {{"EW_BYPASS", 0}, {"EW_OP_BYPASS", 0}, {"EW_OP_SRC", 1},
                                                      {"EW_LUT_BYPASS", 1}, {"EW_RELU_BYPASS", 1}});
                    }),
                    "ERDMA_DISABLE"));
    EXPECT_TRUE(has(faults([](drv::regcmd::Builder& b) {
                        b.write_fields("DPU_DATA_FORMAT", {{"PROC_PRECISION", 0}, {"OUT_PRECISION", 2}});
                    }),
                    "OUT_PRECISION"));
    EXPECT_TRUE(has(faults([](drv::regcmd::Builder& b) {
                        b.write_fields("DPU_BS_CFG", {{"BS_ALU_ALGO", 9}, {"BS_MUL_BYPASS", 1}, {"BS_RELU_BYPASS", 1}});
                    }),
                    "BS_ALU_ALGO"));
    EXPECT_TRUE(has(faults([](drv::regcmd::Builder& b) { b.write_fields("DPU_RDMA_RDMA_DATA_CUBE_WIDTH", {{"WIDTH", 9}}); }),
                    "WIDTH/HEIGHT/CHANNEL"));
    EXPECT_TRUE(has(faults([](drv::regcmd::Builder&) {}, npu::rknpu::enable::DPU), "OP_EN"));
}

}  // namespace
