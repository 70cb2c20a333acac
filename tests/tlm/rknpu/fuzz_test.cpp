// SPDX-License-Identifier: MIT
// Regcmd fuzzing: mutated and random streams must each end in a completed task, a fault with an
// interrupt, or a driver timeout - never a crash or a hang. Seeded; the count comes from
// NPUSIM_FUZZ_STREAMS (CI runs a few hundred; the 10,000-stream run is reported in the notes).
#include <cstdlib>
#include <random>

#include <gtest/gtest.h>

#include "hw/regcmd.h"
#include "hw/regdb.h"
#include "stream_fixture.h"

namespace {

using hw::rknpu::RegCmd;

std::vector<sim::RawJob> make_jobs(const hw::SocProfile& soc, int count, uint32_t seed) {
    std::mt19937 rng(seed);
    const testfix::ValidConv base = testfix::make_valid_conv(soc);
    std::vector<sim::RawJob> jobs;
    for (int n = 0; n < count; ++n) {
        sim::RawJob j = base.job;
        if (n > 0) j.preload.clear();  // tensors stay in DDR from the first job
        const uint32_t kind = rng() % 4;
        const int edits = 1 + static_cast<int>(rng() % 4);
        for (int e = 0; e < edits && !j.words.empty(); ++e) {
            uint64_t& w = j.words[rng() % j.words.size()];
            RegCmd c = RegCmd::decode(w);
            switch (kind) {
                case 0: c.value ^= 1u << (rng() % 32); break;                              // bit flip in a value
                case 1: c.value = rng(); break;                                            // random value
                case 2: c.offset = static_cast<uint16_t>(c.offset ^ (4u << (rng() % 12))); break;  // wrong register
                default: c.op = static_cast<uint32_t>(rng() & 0xffff); break;             // random op/target
            }
            w = c.encode();
        }
        if (rng() % 8 == 0) j.words.resize(rng() % j.words.size());                          // truncation
        if (rng() % 8 == 0) j.amount = rng() % 64;                                          // wrong amount
        if (rng() % 16 == 0) j.task_number = rng() % 5;                                     // wrong task count
        if (rng() % 32 == 0)                                                                // pure noise
            for (auto& w : j.words) w = (uint64_t{rng()} << 32) | rng();
        jobs.push_back(std::move(j));
    }
    return jobs;
}

TEST(RegcmdFuzz, EveryStreamEndsWithoutCrashOrHang) {
    const char* env = std::getenv("NPUSIM_FUZZ_STREAMS");
    const int count = env ? std::atoi(env) : 300;
    const hw::SocProfile soc = hw::load_named_profile("rk3588");
    const auto jobs = make_jobs(soc, count, 2026);
    const auto res = sim::run_raw_jobs(soc, jobs, npu::tlm_models::SimMode::Full, nullptr, 10'000'000);
    ASSERT_EQ(res.size(), jobs.size());
    int completed = 0, faulted = 0, timed_out = 0;
    for (size_t i = 0; i < res.size(); ++i) {
        const auto& r = res[i];
        const bool error = r.raw_status & 0x7000u;
        if (!r.irq)
            ++timed_out;
        else if (error)
            ++faulted;
        else
            ++completed;
        // A fault always comes with an explanation.
        if (error) {
            EXPECT_FALSE(r.diagnostics.empty()) << "stream " << i;
        }
    }
    std::printf("fuzz: %d streams: %d completed, %d faulted with a diagnostic, %d timed out (driver reset)\n", count,
                completed, faulted, timed_out);
    EXPECT_EQ(completed + faulted + timed_out, count);
    EXPECT_GT(faulted, count / 4);  // the mutations are mostly illegal: the checks must fire
}

}  // namespace
