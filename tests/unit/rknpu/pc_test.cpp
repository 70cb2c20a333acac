// SPDX-License-Identifier: MIT
// The plain PC interpreter (npu/rknpu/pc.h) without SystemC: kicks, chains, the fetch amount with
// the task end Mesa relies on (A-PC-FETCH), the status bits each block raises in its ping-pong
// group, faults with their bits; plus a fuzz over mutated and random streams (no crash, no hang,
// every fault explained). NPUSIM_FUZZ_STREAMS sets the fuzz count (CI: the default smoke count).
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <random>

#include <gtest/gtest.h>

#include "drv/regcmd/builder.h"
#include "mesa_conv.h"
#include "hw/regcmd.h"
#include "hw/regdb.h"
#include "npu/rknpu/pc.h"

namespace {

using namespace hw::rknpu;
namespace rk = npu::rknpu;

const hw::SocProfile& soc() {
    static const hw::SocProfile p = hw::load_named_profile("rk3588");
    return p;
}

/// Flat memory [base, base + size) as the NPU's DMA port.
struct FlatMem : rk::DmaPort {
    uint64_t base;
    std::vector<uint8_t> bytes;
    FlatMem(uint64_t b, size_t n) : base(b), bytes(n, 0) {}
    bool in(uint64_t a, uint64_t n) const { return a >= base && n <= bytes.size() && a - base <= bytes.size() - n; }
    bool read(uint64_t a, uint8_t* d, uint64_t n) override {
        if (!in(a, n)) return false;
        std::memcpy(d, bytes.data() + (a - base), n);
        return true;
    }
    bool write(uint64_t a, const uint8_t* s, uint64_t n) override {
        if (!in(a, n)) return false;
        std::memcpy(bytes.data() + (a - base), s, n);
        return true;
    }
    void put(uint64_t a, const std::vector<uint8_t>& v) { std::memcpy(bytes.data() + (a - base), v.data(), v.size()); }
    void put_words(uint64_t a, const std::vector<uint64_t>& w) {
        for (size_t i = 0; i < w.size(); ++i)
            for (int b = 0; b < 8; ++b) bytes[a - base + i * 8 + size_t(b)] = static_cast<uint8_t>(w[i] >> (8 * b));
    }
};

constexpr uint64_t kBase = 0x100000, kIn = 0x100000, kW = 0x110000, kBias = 0x120000, kOut = 0x130000,
                   kRegcmd = 0x140000;

/// `tasks` chained copies of a valid 16x8x8 int8 conv (the driver's single-conv lowering).
std::vector<uint64_t> conv_stream(FlatMem& mem, int tasks, std::vector<size_t>* starts = nullptr) {
    drv::rknpu::ConvLayer L;
    L.in_c = 16, L.in_h = 8, L.in_w = 8, L.out_c = 16;
    L.pad_top = L.pad_left = L.pad_bottom = L.pad_right = 1;
    L.in_scale = 0.05f, L.w_scale = 0.02f, L.out_scale = 0.5f;
    std::mt19937 rng(3);
    L.weights.resize(16 * 16 * 9);
    for (auto& w : L.weights) w = static_cast<int8_t>(int(rng() % 255) - 127);
    std::vector<int8_t> x(16 * 8 * 8);
    for (auto& v : x) v = static_cast<int8_t>(int(rng() % 256) - 128);
    const auto low = mesa_conv::lower(L, soc());
    std::vector<std::vector<uint64_t>> bodies;
    for (int t = 0; t < tasks; ++t) {
        drv::regcmd::Builder b;
        mesa_conv::emit(L, low, {uint32_t(kIn), uint32_t(kW), uint32_t(kBias), uint32_t(kOut + 0x1000u * t)}, b);
        bodies.push_back(b.words());
    }
    mem.put(kIn, mesa_conv::pack_input(L, low, x));
    mem.put(kW, low.weights);
    mem.put(kBias, low.bias);
    return drv::regcmd::link_tasks(bodies, kRegcmd, soc().npu.pc_data_amount_scale.value, kConvOpEnableMask, starts);
}

/// The PC registers of a kick of `tasks` tasks at kRegcmd, `entries` entries in the first task.
rk::RegFile kick_regs(uint64_t entries, uint32_t tasks) {
    rk::RegFile rf;
    rf.write(PC_BASE_ADDRESS::kOffset, static_cast<uint32_t>(kRegcmd));
    rf.write(PC_REGISTER_AMOUNTS::kOffset, drv::regcmd::pc_data_amount(entries, soc().npu.pc_data_amount_scale.value));
    rf.write(PC_TASK_CON::kOffset, PC_TASK_CON::TASK_NUMBER.put(tasks));
    return rf;
}

constexpr uint32_t kConvGroup0 = 0x155;  // CNA feature/weight/CSC 0/2/4, CORE 6, DPU 8

TEST(PcInterpreter, RunsAChainOfThreeAndRaisesEachBlocksBit) {
    FlatMem mem(kBase, 1 << 20);
    std::vector<size_t> starts;
    const auto w = conv_stream(mem, 3, &starts);
    mem.put_words(kRegcmd, w);
    rk::RegFile rf = kick_regs(starts[1], 3);
    rk::CoreState st;
    const rk::KickResult r = rk::run_kick(rf, st, soc(), mem);
    EXPECT_TRUE(r.ok()) << (r.diagnostics.empty() ? "" : r.diagnostics.front());
    EXPECT_EQ(r.tasks_done, 3u);
    EXPECT_EQ(r.raw_status, kConvGroup0);
    ASSERT_EQ(r.tasks.size(), 3u);
    EXPECT_EQ(r.tasks[1].addr, kRegcmd + 8 * starts[1]);
    EXPECT_EQ(r.tasks[0].enable_mask, kConvOpEnableMask);
    // The three tasks wrote the same output to their three addresses.
    EXPECT_EQ(std::memcmp(mem.bytes.data() + (kOut - kBase), mem.bytes.data() + (kOut + 0x2000 - kBase), 1024), 0);
}

TEST(PcInterpreter, ChainEndingBeforeTaskNumberFaults) {
    FlatMem mem(kBase, 1 << 20);
    std::vector<size_t> starts;
    const auto w = conv_stream(mem, 2, &starts);
    mem.put_words(kRegcmd, w);
    rk::RegFile rf = kick_regs(starts[1], 3);
    rk::CoreState st;
    const rk::KickResult r = rk::run_kick(rf, st, soc(), mem);
    EXPECT_EQ(r.tasks_done, 2u);
    EXPECT_TRUE(r.raw_status & rk::status::programming_fault());
    ASSERT_FALSE(r.diagnostics.empty());
    EXPECT_NE(r.diagnostics.back().find("chain ends after 2 of 3 tasks"), std::string::npos) << r.diagnostics.back();
}

// Mesa patches the next task's amount as ALIGN((n - 4) / 2, 2): up to four entries short of the
// task, which runs on silicon, so the PC fetches the 4-entry task end too (A-PC-FETCH). Five or
// more entries short is a fault.
TEST(PcInterpreter, FetchAmountMayLeaveOutTheTaskEnd) {
    FlatMem mem(kBase, 1 << 20);
    std::vector<size_t> starts;
    const auto w = conv_stream(mem, 1, &starts);
    mem.put_words(kRegcmd, w);
    size_t n = 0;
    while (!(RegCmd::decode(w[n]).target() == 0 && RegCmd::decode(w[n]).is_op_enable())) ++n;
    ++n;  // entries up to and including the op-enable entry
    auto run = [&](uint32_t amount) {
        rk::RegFile rf = kick_regs(n, 1);
        rf.write(PC_REGISTER_AMOUNTS::kOffset, amount);
        rk::CoreState st;
        return rk::run_kick(rf, st, soc(), mem);
    };
    // The largest shortfall Mesa's rule produces: the fetch ends right before the task end.
    ASSERT_EQ(n % 2, 0u);
    const uint32_t mesa = static_cast<uint32_t>((n - 4) / 2 - 1);
    ASSERT_EQ((mesa + 1) * 2, n - 4);
    EXPECT_EQ(run(mesa).tasks_done, 1u);
    const rk::KickResult short_by_more = run(static_cast<uint32_t>((n - 6) / 2 - 1));
    EXPECT_EQ(short_by_more.tasks_done, 0u);
    ASSERT_FALSE(short_by_more.diagnostics.empty());
    EXPECT_NE(short_by_more.diagnostics.front().find("no op-enable entry"), std::string::npos);
}

// Ping-pong groups (docs §4, §11): with EXECUTER_PP_EN in a block's S_POINTER (producers write
// 0xE) its group alternates task by task; the vendor's two single-task matmul submits came back
// with int_status 0x100 and then 0x200.
TEST(PcInterpreter, PingPongGroupAlternatesWithExecuterPpEn) {
    FlatMem mem(kBase, 1 << 20);
    std::vector<size_t> starts;
    const auto w = conv_stream(mem, 1, &starts);
    mem.put_words(kRegcmd, w);
    rk::CoreState st;
    uint32_t dpu_bits[2] = {};
    for (int k = 0; k < 2; ++k) {
        rk::RegFile rf = kick_regs(w.size(), 1);
        rf.write(DPU_S_POINTER::kOffset, 0xE);  // applied before the stream: the stream does not write it
        dpu_bits[k] = rk::run_kick(rf, st, soc(), mem).raw_status & 0x300u;
    }
    EXPECT_EQ(dpu_bits[0], PC_INTERRUPT_RAW_STATUS::DPU_0.mask());
    EXPECT_EQ(dpu_bits[1], PC_INTERRUPT_RAW_STATUS::DPU_1.mask());
}

// A PPU task raises the PPU pair, not the DPU's (docs §4, §12): the driver waits for 0xc00.
TEST(PcInterpreter, PpuTaskRaisesThePpuBit) {
    rk::RegFile rf;
    auto wr = [&](uint16_t off, uint32_t v) { rf.write(off, v); };
    wr(PPU_DATA_CUBE_IN_WIDTH::kOffset, 3), wr(PPU_DATA_CUBE_IN_HEIGHT::kOffset, 3), wr(PPU_DATA_CUBE_IN_CHANNEL::kOffset, 15);
    wr(PPU_DATA_CUBE_OUT_WIDTH::kOffset, 1), wr(PPU_DATA_CUBE_OUT_HEIGHT::kOffset, 1), wr(PPU_DATA_CUBE_OUT_CHANNEL::kOffset, 15);
    wr(PPU_OPERATION_MODE_CFG::kOffset, PPU_OPERATION_MODE_CFG::POOLING_METHOD.put(1) | PPU_OPERATION_MODE_CFG::FLYING_MODE.put(1));
    wr(PPU_POOLING_KERNEL_CFG::kOffset, PPU_POOLING_KERNEL_CFG::KERNEL_WIDTH.put(1) | PPU_POOLING_KERNEL_CFG::KERNEL_HEIGHT.put(1) |
                                           PPU_POOLING_KERNEL_CFG::KERNEL_STRIDE_WIDTH.put(1) |
                                           PPU_POOLING_KERNEL_CFG::KERNEL_STRIDE_HEIGHT.put(1));
    wr(PPU_DST_BASE_ADDR::kOffset, uint32_t(kOut)), wr(PPU_DST_SURF_STRIDE::kOffset, 4u << 4);
    wr(PPU_RDMA_RDMA_CUBE_IN_WIDTH::kOffset, 3), wr(PPU_RDMA_RDMA_CUBE_IN_HEIGHT::kOffset, 3);
    wr(PPU_RDMA_RDMA_CUBE_IN_CHANNEL::kOffset, 15);
    wr(PPU_RDMA_RDMA_SRC_BASE_ADDR::kOffset, uint32_t(kIn));
    wr(PPU_RDMA_RDMA_SRC_LINE_STRIDE::kOffset, 4u << 4), wr(PPU_RDMA_RDMA_SRC_SURF_STRIDE::kOffset, 16u << 4);
    wr(PPU_RDMA_RDMA_DATA_FORMAT::kOffset, 1);  // 8-bit elements (TRM width code)
    rk::TaskEntries e;
    e.has_op_en = e.has_sync = true;
    e.enable_mask = rk::enable::PPU | rk::enable::PPU_RDMA;
    const rk::TaskStep s = rk::plan_step(e, rf, soc(), rk::CoreState{});
    ASSERT_TRUE(s.faults.empty()) << s.faults.front().message;
    EXPECT_EQ(s.done_bits, PC_INTERRUPT_RAW_STATUS::PPU_0.mask());
}

TEST(PcInterpreter, ZeroTaskKickAndFetchOutsideMemoryFault) {
    FlatMem mem(kBase, 1 << 20);
    rk::CoreState st;
    rk::RegFile rf = kick_regs(8, 0);
    rk::KickResult r = rk::run_kick(rf, st, soc(), mem);
    EXPECT_TRUE(r.raw_status & rk::status::programming_fault());
    rf = kick_regs(8, 1);
    rf.write(PC_BASE_ADDRESS::kOffset, 0x10);  // below the memory
    r = rk::run_kick(rf, st, soc(), mem);
    EXPECT_TRUE(r.raw_status & rk::status::dma_read_error());
    ASSERT_FALSE(r.diagnostics.empty());
    EXPECT_NE(r.diagnostics.front().find("regcmd fetch"), std::string::npos);
}

// Plain-interpreter fuzz: streams mutated from the valid conv (bit flips, random values, wrong
// registers, random op/targets, truncation, noise) and random PC kicks end in completion or a
// fault with an explanation: never an exception, crash or hang (every kick terminates: the chain
// walker is bounded by TASK_NUMBER, each task by the model's watchdogs).
TEST(PcInterpreterFuzz, EveryStreamEndsWithoutCrashOrHang) {
    const char* env = std::getenv("NPUSIM_FUZZ_STREAMS");
    const long count = env ? std::atol(env) : 2000;
    FlatMem mem(kBase, 1 << 20);
    std::vector<size_t> starts;
    const auto valid = conv_stream(mem, 2, &starts);
    const std::vector<uint8_t> image = mem.bytes;
    std::mt19937_64 rng(2026);
    long completed = 0, faulted = 0;
    const auto t0 = std::chrono::steady_clock::now();
    for (long n = 0; n < count; ++n) {
        std::vector<uint64_t> w = valid;
        const int kind = static_cast<int>(rng() % 5);
        const int edits = 1 + static_cast<int>(rng() % 4);
        for (int e = 0; e < edits; ++e) {
            RegCmd c = RegCmd::decode(w[rng() % w.size()]);
            uint64_t& word = w[rng() % w.size()];
            c = RegCmd::decode(word);
            switch (kind) {
                case 0: c.value ^= 1u << (rng() % 32); break;
                case 1: c.value = static_cast<uint32_t>(rng()); break;
                case 2: c.offset = static_cast<uint16_t>(c.offset ^ (4u << (rng() % 12))); break;
                case 3: c.op = static_cast<uint32_t>(rng() & 0xffff); break;
                default: c.value = static_cast<uint32_t>(rng() % 64); break;  // small values: sizes, strides
            }
            word = c.encode();
        }
        if (rng() % 8 == 0) w.resize(rng() % w.size());
        if (rng() % 32 == 0)
            for (auto& x : w) x = rng();
        if (n % 64 == 0) mem.bytes = image;  // outputs of earlier streams may have landed on the inputs
        std::fill(mem.bytes.begin() + (kRegcmd - kBase), mem.bytes.begin() + (kRegcmd - kBase) + 0x2000, 0);
        mem.put_words(kRegcmd, w);
        rk::RegFile rf = kick_regs(starts[1], 1 + static_cast<uint32_t>(rng() % 3));
        if (rng() % 8 == 0) rf.write(PC_REGISTER_AMOUNTS::kOffset, static_cast<uint32_t>(rng() % 128));
        rk::CoreState st;
        const rk::KickResult r = rk::run_kick(rf, st, soc(), mem);
        if (r.ok()) {
            ++completed;
        } else {
            ++faulted;
            ASSERT_FALSE(r.diagnostics.empty()) << "stream " << n << ": a fault without an explanation";
        }
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("interpreter fuzz: %ld streams in %.1f s: %ld completed, %ld faulted with a diagnostic\n", count, s,
                completed, faulted);
    EXPECT_EQ(completed + faulted, count);
    EXPECT_GT(faulted, count / 4);  // the mutations are mostly illegal: the checks must fire
    EXPECT_GT(completed, 0);
}

}  // namespace
