// SPDX-License-Identifier: MIT
// Functional backing store for large simulated memories: 64 KiB pages allocated on first write,
// unwritten bytes read as zero. Deterministic (ordered page map).
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

namespace npu::memory {

class SparseMemory {
   public:
    explicit SparseMemory(uint64_t size_bytes) : size_(size_bytes) {}
    uint64_t size() const { return size_; }
    /// False (and nothing copied) when [addr, addr+len) leaves the memory.
    bool read(uint64_t addr, uint8_t* dst, uint64_t len) const;
    bool write(uint64_t addr, const uint8_t* src, uint64_t len);
    bool in_range(uint64_t addr, uint64_t len) const { return len <= size_ && addr <= size_ - len; }
    size_t pages_allocated() const { return pages_.size(); }

   private:
    static constexpr uint64_t kPageBytes = 64 * 1024;
    uint64_t size_;
    std::map<uint64_t, std::unique_ptr<uint8_t[]>> pages_;
};

}  // namespace npu::memory
