// SPDX-License-Identifier: MIT
// Issue 25: the core hands a conv the weight image it read before when the memory's stamps say the
// bytes did not change (RknpuCore::dma_move, mem_stamp.h). A hit must give exactly what reading
// afresh gives, and every write into the weights must be seen: by the host (the driver loading new
// weights) and by the NPU itself (a task writing its output over them). One platform runs the jobs
// one after the other (the cores keep their images across jobs, as across inferences); the 32-channel
// conv of stream_fixture.h has 9 KiB of weights, above the 4 KiB from which images are kept.
#include <gtest/gtest.h>

#include "hw/regdb.h"
#include "stream_fixture.h"

namespace {

std::vector<sim::RawResult> run() {
    const hw::SocProfile soc = hw::load_named_profile("rk3588");
    const testfix::ValidConv a = testfix::make_valid_conv(soc, 1, 32);
    std::vector<uint8_t> w1, w2;
    for (const auto& [addr, bytes] : a.job.preload)
        if (addr == testfix::kWeights) w1 = bytes;
    w2 = w1;
    for (size_t i = 0; i < w2.size(); i += 7) w2[i] = static_cast<uint8_t>(w2[i] ^ 0x5a);
    const auto with = [&](std::vector<std::pair<uint64_t, std::vector<uint8_t>>> preload) {
        sim::RawJob j = a.job;
        j.preload = std::move(preload);
        return j;
    };
    // The same conv writing its 32 x 8 x 8 output over the first 2 KiB of the weights.
    testfix::ValidConv x = testfix::make_valid_conv(soc, 1, 32);
    testfix::set_value(x.job.words, x.index_of("DPU_DST_BASE_ADDR"), static_cast<uint32_t>(testfix::kWeights));
    x.job.preload.clear();
    x.job.readback = {{testfix::kWeights, 2048}};
    std::vector<sim::RawJob> jobs = {
        a.job,                                 // 0: W1
        with({}),                              // 1: nothing written: the image read in job 0
        with({{testfix::kWeights, w2}}),       // 2: the host writes W2
        with({{testfix::kWeights, w1}}),       // 3: and W1 again
        x.job,                                 // 4: the NPU writes over the weights
        with({}),                              // 5: the conv on the weights job 4 left
        with({{testfix::kWeights, w1}}),       // 6: W1 again
    };
    return sim::run_raw_jobs(soc, jobs, npu::tlm_models::SimMode::Full, nullptr);
}

TEST(WeightSnapshot, WritesByHostAndNpuAreSeen) {
    const auto r = run();
    ASSERT_EQ(r.size(), 7u);
    for (size_t i = 0; i < r.size(); ++i) {
        EXPECT_TRUE(r[i].irq) << "job " << i;
        EXPECT_TRUE(r[i].diagnostics.empty()) << "job " << i << ": " << r[i].diagnostics.front();
        ASSERT_EQ(r[i].readback.size(), 1u) << "job " << i;
    }
    const auto& out = [&](size_t i) { return r[i].readback[0]; };
    bool nonzero = false;
    for (uint8_t b : out(0)) nonzero |= b != 0;
    EXPECT_TRUE(nonzero);
    EXPECT_EQ(out(1), out(0));  // unchanged weights
    EXPECT_NE(out(2), out(0));  // host-written W2 is used, not the image of W1
    EXPECT_EQ(out(3), out(0));
    EXPECT_EQ(out(4), out(0));  // job 4 computed the same conv; its output now overlays the weights
    EXPECT_NE(out(5), out(0));  // the NPU-written weights are used
    EXPECT_EQ(out(6), out(0));
    // Job 5's weights are job 4's output followed by W1's remaining bytes: the same output as a
    // host write of those bytes gives (checked through job 2's path: a changed image is read anew).
}

}  // namespace
