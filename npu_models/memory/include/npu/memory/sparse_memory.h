// SPDX-License-Identifier: MIT
// Functional backing store for large simulated memories: 64 KiB pages allocated on first write,
// unwritten bytes read as zero. Deterministic (ordered page map). Ranges can instead be backed by
// memory the caller owns (attach): `npusim serve` maps the buffer objects of the programs it runs
// (memfd shared memory) into DDR this way, so the NPU and the program see the same bytes.
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
    /// Back [addr, addr + len) with `host` (not owned, must outlive the attachment) instead of the
    /// sparse pages; false when the range leaves the memory or overlaps another attachment.
    bool attach(uint64_t addr, uint8_t* host, uint64_t len);
    /// Remove the attachment starting at `addr` (its bytes read as zero again).
    void detach(uint64_t addr);

   private:
    struct External {
        uint64_t len;
        uint8_t* host;
    };
    /// The attachment containing `addr`, or the distance to the next one (in `gap`).
    const std::pair<const uint64_t, External>* external_at(uint64_t addr, uint64_t& gap) const;
    bool sparse_read(uint64_t addr, uint8_t* dst, uint64_t len) const;
    bool sparse_write(uint64_t addr, const uint8_t* src, uint64_t len);
    std::map<uint64_t, External> external_;
    static constexpr uint64_t kPageBytes = 64 * 1024;
    uint64_t size_;
    std::map<uint64_t, std::unique_ptr<uint8_t[]>> pages_;
};

}  // namespace npu::memory
