// SPDX-License-Identifier: MIT
// Byte buffers reused from task to task (issue 25): the engines' output surfaces are large (a
// 112 x 112 int8 surface is 196 KiB), and a fresh allocation of that size is fresh pages from the
// OS every task (glibc returns them on free), so a repeated inference spent ~7 % of its time in
// page faults. The core gives each task's write buffers back once they are in memory; the engines
// take their output buffers from here. Per thread, bounded; the bytes handed out are zero, as a
// new std::vector's would be.
#pragma once
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace npu::rknpu {

/// n zero bytes, in a buffer given back earlier when one has the capacity.
std::vector<uint8_t> zeroed_buffer(size_t n);
/// n bytes the caller overwrites entirely (a DMA read's destination): a buffer given back earlier
/// keeps its old bytes (no zero fill), a new one is zero.
std::vector<uint8_t> overwritten_buffer(size_t n);
/// Keep the buffers' memory for zeroed_buffer (up to the pool's bound); `bufs` is left empty.
void recycle_buffers(std::vector<std::vector<uint8_t>>& bufs);
/// recycle_buffers for single buffers (a task's spent reads); each is left empty.
template <class... B>
void recycle(B&... bufs) {
    std::vector<std::vector<uint8_t>> v;
    v.reserve(sizeof...(B));
    (v.push_back(std::move(bufs)), ...);
    recycle_buffers(v);
}

}  // namespace npu::rknpu
