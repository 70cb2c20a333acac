// SPDX-License-Identifier: MIT
#include "npu/rknpu/buffer_pool.h"

#include <utility>

namespace npu::rknpu {

namespace {
/// Below this size malloc reuses memory well by itself.
constexpr size_t kMinPooled = 16 * 1024;
constexpr size_t kMaxBuffers = 256;
constexpr size_t kMaxBytes = size_t{256} << 20;

struct Pool {
    std::vector<std::vector<uint8_t>> free;
    size_t bytes = 0;
};
Pool& pool() {
    thread_local Pool p;
    return p;
}
}  // namespace

std::vector<uint8_t> zeroed_buffer(size_t n) {
    Pool& p = pool();
    if (n >= kMinPooled) {
        // The smallest buffer that holds n bytes (a few dozen candidates at most).
        size_t best = p.free.size();
        for (size_t i = 0; i < p.free.size(); ++i)
            if (p.free[i].capacity() >= n && (best == p.free.size() || p.free[i].capacity() < p.free[best].capacity())) best = i;
        if (best != p.free.size()) {
            std::vector<uint8_t> v = std::move(p.free[best]);
            p.free[best] = std::move(p.free.back());
            p.free.pop_back();
            p.bytes -= v.capacity();
            v.assign(n, 0);
            return v;
        }
    }
    return std::vector<uint8_t>(n);
}

void recycle_buffers(std::vector<std::vector<uint8_t>>& bufs) {
    Pool& p = pool();
    for (auto& v : bufs) {
        if (v.capacity() < kMinPooled || p.free.size() >= kMaxBuffers || p.bytes + v.capacity() > kMaxBytes) continue;
        v.clear();
        p.bytes += v.capacity();
        p.free.push_back(std::move(v));
    }
    bufs.clear();
}

}  // namespace npu::rknpu
