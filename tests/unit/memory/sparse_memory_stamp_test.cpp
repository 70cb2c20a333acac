// SPDX-License-Identifier: MIT
// SparseMemory::stamp (issue 25): equal answers must mean equal bytes. Checked against the bytes
// themselves under random writes into sparse pages and a tracked attachment: whenever a range's
// bytes changed its stamp changed, and a write outside its 64 KiB pages leaves the stamp alone.
// Untracked attachments are volatile; attach / detach count as changes; reads change nothing.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "npu/memory/sparse_memory.h"

namespace {

using npu::memory::kVolatileStamp;
using npu::memory::SparseMemory;

TEST(SparseMemoryStamp, ChangedBytesAlwaysChangeTheStamp) {
    constexpr uint64_t kSize = 1 << 22;  // 4 MiB: 64 pages of 64 KiB
    for (uint32_t seed = 1; seed <= 4; ++seed) {
        std::mt19937_64 rng(seed);
        SparseMemory m(kSize);
        std::vector<uint8_t> host(1 << 20);  // a tracked attachment over [1 MiB, 2 MiB)
        ASSERT_TRUE(m.attach(1 << 20, host.data(), host.size(), true));
        struct Probe {
            uint64_t addr, len, stamp;
            std::vector<uint8_t> bytes;
        };
        std::vector<Probe> probes;
        for (int k = 0; k < 40; ++k) {
            Probe p;
            p.len = 1 + rng() % 200000;
            p.addr = rng() % (kSize - p.len);
            p.stamp = m.stamp(p.addr, p.len);
            p.bytes.resize(p.len);
            ASSERT_TRUE(m.read(p.addr, p.bytes.data(), p.len));
            probes.push_back(std::move(p));
        }
        for (int step = 0; step < 200; ++step) {
            const uint64_t len = 1 + rng() % 5000, addr = rng() % (kSize - len);
            std::vector<uint8_t> v(len);
            for (auto& b : v) b = static_cast<uint8_t>(rng());
            ASSERT_TRUE(m.write(addr, v.data(), len));
            for (Probe& p : probes) {
                std::vector<uint8_t> now(p.len);
                ASSERT_TRUE(m.read(p.addr, now.data(), p.len));
                const uint64_t st = m.stamp(p.addr, p.len);
                ASSERT_NE(st, kVolatileStamp);
                if (now != p.bytes) {
                    ASSERT_NE(st, p.stamp) << "seed " << seed << " step " << step;
                }
                // A write outside the range's pages leaves its stamp alone.
                const bool touches = addr / 65536 <= (p.addr + p.len - 1) / 65536 && p.addr / 65536 <= (addr + len - 1) / 65536;
                if (!touches) {
                    ASSERT_EQ(st, p.stamp) << "seed " << seed << " step " << step;
                }
                p.stamp = st;
                p.bytes = std::move(now);
            }
        }
    }
}

TEST(SparseMemoryStamp, UntrackedAttachmentsAreVolatileAndLayoutChangesCount) {
    SparseMemory m(1 << 20);
    std::vector<uint8_t> shared(8192);
    const uint64_t before = m.stamp(0, 4096);
    ASSERT_TRUE(m.attach(65536, shared.data(), shared.size()));  // untracked: another process may write it
    EXPECT_EQ(m.stamp(65536 + 100, 10), kVolatileStamp);
    EXPECT_EQ(m.stamp(60000, 6000), kVolatileStamp);      // overlaps its start
    EXPECT_NE(m.stamp(0, 4096), kVolatileStamp);           // elsewhere: an ordinary stamp,
    EXPECT_GT(m.stamp(0, 4096), before);                   // moved by the attach
    const uint64_t attached = m.stamp(0, 4096);
    m.detach(65536);
    EXPECT_NE(m.stamp(65536, 8192), kVolatileStamp);
    EXPECT_GT(m.stamp(0, 4096), attached);  // the detach too
    // Reads do not move stamps.
    const uint64_t s = m.stamp(0, 1 << 20);
    std::vector<uint8_t> buf(1 << 20);
    ASSERT_TRUE(m.read(0, buf.data(), buf.size()));
    EXPECT_EQ(m.stamp(0, 1 << 20), s);
}

}  // namespace
