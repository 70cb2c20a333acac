// SPDX-License-Identifier: MIT
// npu/rknpu/buffer_pool.h (issue 25): a buffer handed out is n zero bytes whatever an earlier user
// left in its memory, memory given back is reused (the point: no fresh pages per task), and the
// pool takes the smallest buffer that fits.
#include <gtest/gtest.h>

#include <algorithm>

#include "npu/rknpu/buffer_pool.h"

namespace {

using npu::rknpu::recycle_buffers;
using npu::rknpu::zeroed_buffer;

TEST(BufferPool, RecycledMemoryComesBackZeroed) {
    std::vector<std::vector<uint8_t>> give;
    give.push_back(zeroed_buffer(200000));
    std::fill(give[0].begin(), give[0].end(), uint8_t{0xab});
    const uint8_t* mem = give[0].data();
    recycle_buffers(give);
    EXPECT_TRUE(give.empty());
    const std::vector<uint8_t> v = zeroed_buffer(150000);  // fits in the returned 200000 bytes
    EXPECT_EQ(v.data(), mem);
    ASSERT_EQ(v.size(), 150000u);
    EXPECT_TRUE(std::all_of(v.begin(), v.end(), [](uint8_t b) { return b == 0; }));
}

TEST(BufferPool, SmallestFitAndSmallBuffersBypass) {
    std::vector<std::vector<uint8_t>> give;
    give.push_back(zeroed_buffer(300000));
    give.push_back(zeroed_buffer(100000));
    give.push_back(zeroed_buffer(1000));  // below the pooled size: freed, not kept
    const uint8_t* big = give[0].data();
    const uint8_t* mid = give[1].data();
    recycle_buffers(give);
    const std::vector<uint8_t> a = zeroed_buffer(90000);
    EXPECT_EQ(a.data(), mid);  // the 100000-byte buffer, not the 300000-byte one
    const std::vector<uint8_t> b = zeroed_buffer(250000);
    EXPECT_EQ(b.data(), big);
    const std::vector<uint8_t> c = zeroed_buffer(250000);  // nothing left that fits: new memory
    EXPECT_NE(c.data(), big);
    EXPECT_EQ(c.size(), 250000u);
}

}  // namespace
