// SPDX-License-Identifier: MIT
// IovaMap (the IOMMU's extent table) against the per-page table it replaces: a std::map from
// IOVA page to physical page, where a map overwrites each page it covers and an unmap erases
// each page it covers. Random overlapping maps and unmaps; after each, every page of the window
// translates alike (or is unmapped in both) and the mapped byte counts agree.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>

#include "npu/memory/iova_map.h"

namespace {
constexpr uint64_t kPage = 4096;
constexpr uint64_t kPages = 96;  // the window the random ranges fall in

struct Lcg {
    uint64_t s;
    uint64_t next(uint64_t n) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        return (s >> 33) % n;
    }
};
}  // namespace

TEST(IovaMap, MatchesAPerPageTableUnderRandomOverlaps) {
    for (uint64_t seed = 1; seed <= 20; ++seed) {
        npu::memory::IovaMap m;
        std::map<uint64_t, uint64_t> ref;  // IOVA page -> physical page
        Lcg r{seed};
        for (int op = 0; op < 300; ++op) {
            const uint64_t first = r.next(kPages), n = 1 + r.next(16);
            const uint64_t iova = 0x10000000 + first * kPage;
            if (r.next(3) != 0) {
                const uint64_t pa = 0x80000000 + r.next(1024) * kPage;
                m.map(iova, pa, n * kPage);
                for (uint64_t p = 0; p < n; ++p) ref[iova + p * kPage] = pa + p * kPage;
            } else {
                m.unmap(iova, iova + n * kPage);
                for (uint64_t p = 0; p < n; ++p) ref.erase(iova + p * kPage);
            }
            ASSERT_EQ(m.mapped_bytes(), ref.size() * kPage) << "seed " << seed << " op " << op;
            for (uint64_t p = 0; p < kPages + 20; ++p) {
                const uint64_t a = 0x10000000 + p * kPage + (p * 37) % kPage;  // an offset inside the page
                uint64_t pa = 0;
                const auto it = ref.find(a / kPage * kPage);
                ASSERT_EQ(m.translate(a, pa), it != ref.end()) << "seed " << seed << " op " << op << " page " << p;
                if (it != ref.end()) {
                    ASSERT_EQ(pa, it->second + a % kPage);
                }
            }
        }
    }
}

TEST(IovaMap, SplitsKeepTheirTranslationAndEdgesAreExclusive) {
    npu::memory::IovaMap m;
    m.map(0x1000, 0x50000, 0x4000);  // [0x1000, 0x5000) -> [0x50000, 0x54000)
    m.unmap(0x2000, 0x3000);         // a hole in the middle
    uint64_t pa = 0;
    EXPECT_TRUE(m.translate(0x1fff, pa));
    EXPECT_EQ(pa, 0x50fffu);
    EXPECT_FALSE(m.translate(0x2000, pa));
    EXPECT_FALSE(m.translate(0x2fff, pa));
    EXPECT_TRUE(m.translate(0x3000, pa));
    EXPECT_EQ(pa, 0x52000u);
    EXPECT_FALSE(m.translate(0x5000, pa));
    EXPECT_FALSE(m.translate(0x0fff, pa));
    EXPECT_EQ(m.mapped_bytes(), 0x3000u);
    EXPECT_EQ(m.extents(), 2u);
    m.unmap(0, UINT64_MAX);
    EXPECT_EQ(m.mapped_bytes(), 0u);
    EXPECT_EQ(m.extents(), 0u);
}
