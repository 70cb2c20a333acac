// SPDX-License-Identifier: MIT
// Test bench of the RTL CORE (rtl/rknpu/npu_core_mac.sv through Verilator --sc): random int8 conv
// tasks (shapes, strides, dilation, padding with PAD_VALUE, depthwise, output channels that do
// not fill a kernel group, CLIP_TRUNCATE, operands biased to -128/127) streamed through the MAC
// array by the CSC sequencer, with random back-pressure on the output; every accumulator must
// equal the C++ reference loop's (rknpu::conv_accumulate_reference: exact sums wrapped to int32).
// Depthwise cases run with random schedules (channel padding 16/32/64, beat rates 0.3..1). Plus
// the array's throughput on the bundled conv (one feature beat per cycle), on a depthwise conv
// with RK3588's schedule (padding to 64, beats at the profile's lane utilisation) and the int32
// wrap of a K = 147456 dot product. Seeded: the same cases every run.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>

#include "rtl/core_seq.h"
#include "rtl/datapath.h"
#include "rtl_test_util.h"

namespace {

using namespace rtltest;
using npu::rtl::CoreOut;
using npu::rtl::CoreSequencer;
using npu::rtl::Datapath;
using npu::rtl::DatapathJob;
using npu::rtl::DatapathStats;

struct Outcome {
    int cases = 0, failed_cases = 0;
    uint64_t dot_products = 0, mismatches = 0;
    std::string first_failure;
    uint64_t bundled_cycles = 0, bundled_beats = 0;
    uint64_t dw_cycles = 0, dw_beats = 0, dw_mismatches = 0;
    uint32_t dw_rate = 0;
    int64_t wrap_rtl = 0, wrap_ref = 0;
};

/// Run one conv on the RTL CORE; returns the accumulator cube.
Cube run_core(Datapath& dp, const ConvCase& k, Rng* backpressure, DatapathStats* st = nullptr,
              const npu::rtl::DwSchedule& dw = {}) {
    CoreSequencer seq(k.c, k.ops, dw);
    Cube acc = Cube::make(k.c.out_w, k.c.out_h, k.c.out_c, false);
    const size_t P = static_cast<size_t>(k.c.out_w) * k.c.out_h;
    DatapathJob j;
    j.core = &seq;
    j.core_outputs = seq.expected_outputs();
    j.on_core = [&](const CoreOut& o) {
        for (uint32_t l = 0; l < npu::rtl::kLanes; ++l) {
            const uint32_t ch = o.cgrp * npu::rtl::kLanes + l;
            if (ch < k.c.out_c) acc.i[ch * P + o.pix] = o.v[l];
        }
    };
    if (backpressure) j.out_ready = [backpressure]() { return backpressure->coin(70); };
    const DatapathStats s = dp.run(j);
    if (st) *st = s;
    return acc;
}

TEST(RtlCore, RandomConvsMatchTheReferenceAccumulators) {
    Outcome out;
    Datapath dp("rtl_core_bench", 1000);
    ScRunner bench("bench", [&]() {
        Rng r(20240611);
        const int n = cases(160);
        for (int i = 0; i < n; ++i) {
            const ConvCase k = random_conv(r, i % 8 == 7);
            Rng bp(static_cast<uint32_t>(1000 + i));
            Rng sr(static_cast<uint32_t>(3000 + i));  // depthwise schedule: padding, beat rate
            npu::rtl::DwSchedule dws;
            dws.cout_align = npu::rtl::kLanes << sr.in(0, 2);
            dws.rate_q16 = static_cast<uint32_t>(sr.coin(25) ? npu::rtl::kDwRateOne : sr.in(19661, 65535));
            const Cube rtl = run_core(dp, k, i % 2 ? &bp : nullptr, nullptr, dws);
            const Cube ref = conv_accumulate_reference(k.c, k.ops);
            ++out.cases;
            uint64_t bad = 0;
            for (size_t e = 0; e < ref.size(); ++e) bad += rtl.i[e] != ref.i[e];
            out.dot_products += ref.size();
            out.mismatches += bad;
            if (bad && !out.failed_cases++)
                out.first_failure = fmt::format(
                    "case {}: {}x{}x{} -> {}x{}x{}, k {}x{} s {}x{} d {}x{} dw {}: {} of {} differ", i, k.c.in_w,
                    k.c.in_h, k.c.in_c, k.c.out_w, k.c.out_h, k.c.out_c, k.c.kernel_w, k.c.kernel_h, k.c.stride_x,
                    k.c.stride_y, k.c.dilation_x, k.c.dilation_y, k.c.depthwise, bad, ref.size());
        }
        // The bundled conv (examples/conv3x3_int8.json): 16 -> 32 channels, 32 x 32, 3 x 3, pad 1.
        Rng rb(7);
        ConvCase b = random_conv(rb);
        ConvConfig& c = b.c;
        c.depthwise = false, c.in_c = 16, c.in_w = c.in_h = 32, c.out_w = c.out_h = 32, c.out_c = c.kernels = 32;
        c.kernel_w = c.kernel_h = 3, c.stride_x = c.stride_y = 1, c.dilation_x = c.dilation_y = 1;
        c.pad_left = c.pad_top = 1, c.clip_truncate = 0;
        c.weight_bytes = 9 * 16 * 32, c.weight_bytes_per_kernel = 9 * 16;
        b.ops.weights = rb.int8s(c.weight_bytes);
        b.ops.feature = rb.int8s(32 * 32 * 16);
        DatapathStats st;
        const Cube rtl = run_core(dp, b, nullptr, &st);
        const Cube ref = conv_accumulate_reference(c, b.ops);
        out.mismatches += rtl.i != ref.i;
        out.bundled_cycles = st.cycles;
        out.bundled_beats = st.feature_beats;
        // int32 wrap: 16384 channels of -128 x -128 over a 3 x 3 kernel = 9 * 16384 * 16384 = 2^31 * 1.125.
        ConvCase w = random_conv(rb);
        ConvConfig& cw = w.c;
        cw.depthwise = false, cw.in_c = 16384, cw.in_w = cw.in_h = 3, cw.out_w = cw.out_h = 1,
        cw.out_c = cw.kernels = 1;
        cw.kernel_w = cw.kernel_h = 3, cw.stride_x = cw.stride_y = 1, cw.dilation_x = cw.dilation_y = 1;
        cw.pad_left = cw.pad_top = 0, cw.clip_truncate = 0;
        cw.weight_bytes = 9 * 16384, cw.weight_bytes_per_kernel = 9 * 16384;
        w.ops.weights.assign(cw.weight_bytes, 0x80);
        w.ops.feature.assign(9 * 16384, 0x80);
        out.wrap_rtl = run_core(dp, w, nullptr).i[0];
        out.wrap_ref = conv_accumulate_reference(cw, w.ops).i[0];
        // Depthwise 3x3/1, 32 channels, 28 x 28, pad 1, with RK3588's schedule (dw_schedule of the
        // profile: padding to 64, npu.depthwise_mac_efficiency 0.04332 x 1024 / 64 products per beat).
        ConvCase d = random_conv(rb);
        ConvConfig& cd = d.c;
        cd.depthwise = true, cd.in_c = cd.out_c = cd.kernels = 32, cd.in_w = cd.in_h = 28, cd.out_w = cd.out_h = 28;
        cd.kernel_w = cd.kernel_h = 3, cd.stride_x = cd.stride_y = 1, cd.dilation_x = cd.dilation_y = 1;
        cd.pad_left = cd.pad_top = 1, cd.clip_truncate = 0;
        cd.weight_bytes = 9 * 32, cd.weight_bytes_per_kernel = 9 * 32;
        d.ops.weights = rb.int8s(cd.weight_bytes);
        d.ops.feature = rb.int8s(2 * 28 * 28 * 16);
        npu::rtl::DwSchedule rk;
        rk.cout_align = 64;
        rk.rate_q16 = static_cast<uint32_t>(std::lround(0.04332 * 1024 / 64 * npu::rtl::kDwRateOne));
        out.dw_rate = rk.rate_q16;
        DatapathStats sd;
        const Cube dwr = run_core(dp, d, nullptr, &sd, rk);
        const Cube dref = conv_accumulate_reference(cd, d.ops);
        out.dw_mismatches = dwr.i != dref.i;
        out.dw_cycles = sd.cycles;
        out.dw_beats = sd.feature_beats;
    });
    sc_core::sc_start();
    std::printf(
        "RTL CORE: %d random conv tasks, %llu accumulators (dot products over taps and channels), "
        "%llu differ\n",
        out.cases, static_cast<unsigned long long>(out.dot_products), static_cast<unsigned long long>(out.mismatches));
    std::printf("RTL CORE: bundled conv 3x3 16->32 32x32: %llu feature beats in %llu cycles\n",
                static_cast<unsigned long long>(out.bundled_beats),
                static_cast<unsigned long long>(out.bundled_cycles));
    EXPECT_EQ(out.failed_cases, 0) << out.first_failure;
    EXPECT_EQ(out.mismatches, 0u);
    EXPECT_GE(out.dot_products, 10000u);
    // 1024 output pixels / 2 per beat x 9 taps x 1 channel group = 4608 beats, one per cycle, plus
    // the first weight set (32 atoms, kWeightAtoms per cycle) and the drain of the last stripe: its
    // last pass completes an entry (2 pixels x 32 kernels = 4 output atoms) per cycle for 32
    // cycles, the output port takes one atom per cycle, so 96 cycles follow the last beat (plus
    // the ~10-stage pipeline).
    const uint64_t first_set = npu::rtl::kKernels / npu::rtl::kWeightAtoms;
    EXPECT_EQ(out.bundled_beats, 4608u);
    EXPECT_GE(out.bundled_cycles, 4608u + first_set + 96u);
    EXPECT_LE(out.bundled_cycles, 4608u + first_set + 96u + 16u);
    // Depthwise: 32 channels padded to 64 = one beat per pixel and tap (4 channel groups, 2 of
    // them padding): 9 taps x 784 pixels = 7056 beats, admitted at rate / 65536 per cycle.
    std::printf("RTL CORE: depthwise 3x3 32ch 28x28, padding 64, rate %u/65536: %llu beats in %llu cycles\n",
                out.dw_rate, static_cast<unsigned long long>(out.dw_beats),
                static_cast<unsigned long long>(out.dw_cycles));
    EXPECT_EQ(out.dw_mismatches, 0u);
    EXPECT_EQ(out.dw_beats, 7056u);
    const double dw_ideal = 7056.0 * npu::rtl::kDwRateOne / out.dw_rate;
    EXPECT_GE(static_cast<double>(out.dw_cycles), dw_ideal);
    EXPECT_LE(static_cast<double>(out.dw_cycles), dw_ideal + 40.0);
    EXPECT_EQ(out.wrap_ref, -1879048192);  // 9 * 2^28 mod 2^32, as int32
    EXPECT_EQ(out.wrap_rtl, out.wrap_ref);
}

}  // namespace
