// SPDX-License-Identifier: MIT
// Test bench of the RTL DPU (rtl/rknpu/npu_dpu_cvt.sv through Verilator --sc): random integer-path
// configurations of every stage (BS/BN ALU max/min/add from register or memory, MUL with shifts
// 0..63 and PReLU, ReLU/ReLUX; EW ALU/MUL with register or ERDMA operand, its convert and
// truncation; OUT_CVT scale/shift/offset, int8/int16 saturation) on random int32 inputs biased to
// the extremes, with random back-pressure; every output must equal rknpu::run_dpu's. Then the
// CORE streaming into the DPU (flying mode) on random conv tasks against conv_dpu_cube, and the
// DPU's throughput (one atom per cycle). Seeded: the same cases every run.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "rtl/core_seq.h"
#include "rtl/datapath.h"
#include "rtl/dpu_map.h"
#include "rtl_test_util.h"

namespace {

using namespace rtltest;
using npu::rtl::CubeBeats;
using npu::rtl::Datapath;
using npu::rtl::DatapathJob;
using npu::rtl::DatapathStats;
using npu::rtl::DpuOut;
using npu::rtl::DpuPorts;
using npu::rtl::kLanes;

Cube run_dpu_rtl(Datapath& dp, const DpuConfig& d, const Cube& in, const DpuOperands& ops, Rng* bp,
                 DatapathStats* st = nullptr) {
    const DpuPorts ports = npu::rtl::dpu_ports(d);
    Cube ew;
    if (ports.ew_en && ports.ew_op_en && ports.ew_op_mem) ew = unpack_cube(ops.ew, d.w, d.h, d.c, d.ew_prec(), d.atom);
    Cube out = Cube::make(d.w, d.h, d.c, false);
    CubeBeats beats(in);
    DatapathJob j;
    j.dpu = &ports;
    j.dpu_in = &beats;
    j.dpu_groups = (d.c + kLanes - 1) / kLanes;
    j.operands = [&](uint32_t g) { return npu::rtl::dpu_group_operands(d, ops, g); };
    j.ew = &ew;
    j.dpu_outputs = beats.count();
    j.on_dpu = [&](const DpuOut& o) { npu::rtl::store_dpu_out(o, out); };
    if (bp) j.out_ready = [bp]() { return bp->coin(75); };
    const DatapathStats s = dp.run(j);
    if (st) *st = s;
    return out;
}

struct Outcome {
    int cases = 0, failed = 0, chain_cases = 0, chain_failed = 0;
    uint64_t values = 0, mismatches = 0, chain_values = 0, chain_mismatches = 0;
    std::string first, chain_first;
    uint64_t tput_cycles = 0, tput_atoms = 0;
};

TEST(RtlDpu, RandomConfigurationsMatchRunDpuAndTheFlyingChainMatchesConvDpuCube) {
    Outcome out;
    Datapath dp("rtl_dpu_bench", 1000);
    ScRunner bench("bench", [&]() {
        Rng r(19700101);
        const int n = cases(400);
        for (int i = 0; i < n; ++i) {
            const uint32_t w = static_cast<uint32_t>(r.in(1, 9)), h = static_cast<uint32_t>(r.in(1, 6));
            const uint32_t c = static_cast<uint32_t>(r.in(1, 70));
            DpuOperands ops;
            const DpuConfig d = random_dpu(r, w, h, c, ops);
            Cube in = Cube::make(w, h, c, false);
            for (auto& v : in.i) {
                const int64_t k = r.in(0, 9);
                v = k == 0 ? INT32_MIN : (k == 1 ? INT32_MAX : (k < 5 ? r.in(-300, 300) : r.in(INT32_MIN, INT32_MAX)));
            }
            Rng bp(static_cast<uint32_t>(77 + i));
            const Cube rtl = run_dpu_rtl(dp, d, in, ops, i % 2 ? &bp : nullptr);
            const Cube ref = run_dpu(d, in, ops);
            ++out.cases;
            uint64_t bad = 0;
            for (size_t e = 0; e < ref.size(); ++e) bad += rtl.i[e] != ref.i[e];
            out.values += ref.size();
            out.mismatches += bad;
            if (bad && !out.failed++) {
                size_t e = 0;
                while (rtl.i[e] == ref.i[e]) ++e;
                out.first = fmt::format("case {}: {} of {} differ, first at {} (in {}): rtl {} ref {}", i, bad,
                                        ref.size(), e, in.i[e], rtl.i[e], ref.i[e]);
            }
        }
        // The CORE streaming into the DPU on random conv tasks with random DPU programs.
        const int m = cases(400) / 8;
        for (int i = 0; i < m; ++i) {
            ConvCase k = random_conv(r, i % 5 == 4);
            DpuOperands dops;
            dops.bs = {};
            DpuConfig d = random_dpu(r, k.c.out_w, k.c.out_h, k.c.out_c, dops);
            d.from_core = true;
            k.c.dpu = d;
            k.ops.bias = dops.bs;
            const DpuConfig dc = conv_dpu_config(k.c);
            const DpuPorts ports = npu::rtl::dpu_ports(dc);
            Cube ew;
            if (ports.ew_en && ports.ew_op_en && ports.ew_op_mem)
                ew = unpack_cube(dops.ew, dc.w, dc.h, dc.c, dc.ew_prec(), dc.atom);
            npu::rtl::CoreSequencer seq(k.c, k.ops);
            Cube rtl = Cube::make(dc.w, dc.h, dc.c, false);
            DatapathJob j;
            j.core = &seq;
            j.core_outputs = seq.expected_outputs();
            j.dpu = &ports;
            j.flying = true;
            j.dpu_groups = (dc.c + kLanes - 1) / kLanes;
            j.operands = [&](uint32_t g) { return npu::rtl::dpu_group_operands(dc, dops, g); };
            j.ew = &ew;
            j.dpu_outputs = static_cast<uint64_t>(dc.w) * dc.h * j.dpu_groups;
            j.on_dpu = [&](const DpuOut& o) { npu::rtl::store_dpu_out(o, rtl); };
            Rng bp(static_cast<uint32_t>(5 + i));
            if (i % 2) j.out_ready = [&bp]() { return bp.coin(60); };
            dp.run(j);
            const Cube ref = conv_dpu_cube(k.c, k.ops, dops.bn, dops.ew);
            ++out.chain_cases;
            uint64_t bad = 0;
            for (size_t e = 0; e < ref.size(); ++e) bad += rtl.i[e] != ref.i[e];
            out.chain_values += ref.size();
            out.chain_mismatches += bad;
            if (bad && !out.chain_failed++)
                out.chain_first = fmt::format("chain case {}: {} of {} differ", i, bad, ref.size());
        }
        // Throughput: 32 x 32 x 64 int8 cube, BS add + OUT_CVT: 4096 atoms.
        DpuOperands ops;
        DpuConfig d = random_dpu(r, 32, 32, 64, ops);
        Cube in = Cube::make(32, 32, 64, false);
        for (auto& v : in.i) v = r.in(-128, 127);
        DatapathStats st;
        run_dpu_rtl(dp, d, in, ops, nullptr, &st);
        out.tput_cycles = st.cycles;
        out.tput_atoms = st.dpu_inputs;
    });
    sc_core::sc_start();
    std::printf("RTL DPU: %d random configurations, %llu output values, %llu differ\n", out.cases,
                static_cast<unsigned long long>(out.values), static_cast<unsigned long long>(out.mismatches));
    std::printf("RTL CORE->DPU (flying): %d random conv tasks, %llu output values, %llu differ\n", out.chain_cases,
                static_cast<unsigned long long>(out.chain_values),
                static_cast<unsigned long long>(out.chain_mismatches));
    std::printf("RTL DPU: %llu atoms in %llu cycles\n", static_cast<unsigned long long>(out.tput_atoms),
                static_cast<unsigned long long>(out.tput_cycles));
    EXPECT_EQ(out.failed, 0) << out.first;
    EXPECT_EQ(out.chain_failed, 0) << out.chain_first;
    EXPECT_GE(out.values, 10000u);
    EXPECT_EQ(out.tput_atoms, 4096u);
    // One atom per cycle after the 12-cycle pipeline (skid + D0..D10) fills.
    EXPECT_GE(out.tput_cycles, 4096u);
    EXPECT_LE(out.tput_cycles, 4096u + 16u);
}

}  // namespace
