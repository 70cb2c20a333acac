// SPDX-License-Identifier: MIT
// DDR timing model against hand-computed figures and its contention property.
#include <gtest/gtest.h>

#include "npu/memory/ddr_timing.h"
#include "npu/memory/sparse_memory.h"

using npu::memory::DdrTimingModel;

// 10 GB/s peak x 0.8 = 8 GB/s sustained = 8 bytes/ns = 125 ps per byte; latencies 100/50 ns.
TEST(DdrTiming, SingleReadIsLatencyPlusTransfer) {
    DdrTimingModel m(10e9, 0.8, 100, 50);
    // 4096 B x 125 ps = 512000 ps; + 100 ns latency.
    EXPECT_EQ(m.access(0, 4096, false), 100000u + 512000u);
    EXPECT_EQ(m.stats().read_bytes, 4096u);
    EXPECT_EQ(m.stats().queued_ps, 0u);
}

TEST(DdrTiming, WriteUsesWriteLatency) {
    DdrTimingModel m(10e9, 0.8, 100, 50);
    EXPECT_EQ(m.access(1000, 64, true), 1000u + 50000u + 64u * 125u);
}

TEST(DdrTiming, ConcurrentRequestsQueueOnTheChannel) {
    DdrTimingModel m(10e9, 0.8, 100, 50);
    const uint64_t a = m.access(0, 8000, false);  // 100000 + 1000000
    const uint64_t b = m.access(0, 8000, false);  // waits for a's data phase: a + 1000000
    EXPECT_EQ(a, 1100000u);
    EXPECT_EQ(b, 2100000u);
    EXPECT_EQ(m.stats().queued_ps, 1000000u);
    EXPECT_EQ(m.stats().busy_ps, 2000000u);
}

TEST(DdrTiming, IdleChannelDoesNotDelayLaterRequests) {
    DdrTimingModel m(10e9, 0.8, 100, 50);
    m.access(0, 800, false);                                // done at 200000
    EXPECT_EQ(m.access(1000000, 800, false), 1200000u);     // starts fresh after idle
}

TEST(DdrTiming, SustainedThroughputMatchesPeakTimesEfficiency) {
    // RK3588 profile figures: 33.792 GB/s x 0.7.
    DdrTimingModel m(33.792e9, 0.7, 120, 60);
    uint64_t done = 0;
    for (int i = 0; i < 1000; ++i) done = m.access(0, 1 << 20, false);
    const double gbps = 1000.0 * (1 << 20) / ((done - 120000) * 1e-12) / 1e9;
    EXPECT_NEAR(gbps, 33.792 * 0.7, 0.01);
}

TEST(SparseMemory, ReadsZeroAndRejectsOutOfRange) {
    npu::memory::SparseMemory mem(1 << 20);
    uint8_t buf[4] = {1, 2, 3, 4};
    EXPECT_TRUE(mem.write(65534, buf, 4));  // crosses a 64 KiB page boundary
    uint8_t out[6] = {};
    EXPECT_TRUE(mem.read(65533, out, 6));
    EXPECT_EQ(out[0], 0);
    EXPECT_EQ(out[1], 1);
    EXPECT_EQ(out[4], 4);
    EXPECT_EQ(out[5], 0);
    EXPECT_FALSE(mem.read((1 << 20) - 2, out, 4));
    EXPECT_FALSE(mem.write(~uint64_t{0} - 1, buf, 4));  // no wrap-around
}
