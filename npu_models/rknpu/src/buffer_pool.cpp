// SPDX-License-Identifier: MIT
#include "npu/rknpu/buffer_pool.h"

#include <utility>

namespace npu::rknpu {

namespace {
/// Below this size malloc reuses memory well by itself.
constexpr size_t kMinPooled = 16 * 1024;
constexpr size_t kMaxBuffers = 256;
constexpr size_t kMaxBytes = size_t{256} << 20;

/// Pooled buffers keep their last size (their bytes are whatever the last user left); a buffer is
/// picked by capacity, and growing it within the capacity zero-fills only the growth.
struct Pool {
    std::vector<std::vector<uint8_t>> free;
    size_t bytes = 0;
};
Pool& pool() {
    thread_local Pool p;
    return p;
}

/// The smallest pooled buffer of at least n bytes, taken out of the pool; empty when none fits.
std::vector<uint8_t> take(size_t n) {
    Pool& p = pool();
    if (n < kMinPooled) return {};
    size_t best = p.free.size();  // a few dozen candidates at most
    for (size_t i = 0; i < p.free.size(); ++i)
        if (p.free[i].capacity() >= n && (best == p.free.size() || p.free[i].capacity() < p.free[best].capacity())) best = i;
    if (best == p.free.size()) return {};
    std::vector<uint8_t> v = std::move(p.free[best]);
    p.free[best] = std::move(p.free.back());
    p.free.pop_back();
    p.bytes -= v.capacity();
    return v;
}
}  // namespace

std::vector<uint8_t> zeroed_buffer(size_t n) {
    std::vector<uint8_t> v = take(n);
    if (v.capacity() < n) return std::vector<uint8_t>(n);  // none pooled fits
    v.assign(n, 0);
    return v;
}

std::vector<uint8_t> overwritten_buffer(size_t n) {
    std::vector<uint8_t> v = take(n);
    if (v.capacity() < n) return std::vector<uint8_t>(n);  // none pooled fits
    v.resize(n);  // shrinking writes nothing; growing within the capacity zero-fills the growth only
    return v;
}

void recycle_buffers(std::vector<std::vector<uint8_t>>& bufs) {
    Pool& p = pool();
    for (auto& v : bufs) {
        if (v.capacity() < kMinPooled || p.free.size() >= kMaxBuffers || p.bytes + v.capacity() > kMaxBytes) continue;
        p.bytes += v.capacity();
        p.free.push_back(std::move(v));
    }
    bufs.clear();
}

}  // namespace npu::rknpu
