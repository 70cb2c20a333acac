// SPDX-License-Identifier: MIT
// Functional backing store for large simulated memories: 64 KiB pages allocated on first write,
// unwritten bytes read as zero. Deterministic (ordered page map). Ranges can instead be backed by
// memory the caller owns (attach): `npusim serve` maps the buffer objects of the programs it runs
// (memfd shared memory) into DDR this way, so the NPU and the program see the same bytes.
// Every write stamps the pages it touches (next_stamp()): stamp() of a range tells a reader whether
// the range may have changed since it last looked (issue 25: the NPU model keeps the weights it read
// while their pages keep their stamps).
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

namespace npu::memory {

/// A process-wide increasing counter (one simulation thread): the stamp of each change to memory
/// contents or to an address translation, so that stamps of different components compare.
uint64_t next_stamp();
/// stamp() of a range whose bytes can change without a write through this model (attached host
/// memory): never the same twice.
inline constexpr uint64_t kVolatileStamp = UINT64_MAX;

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
    /// `tracked`: nothing writes `host` except through this object (the model runner's own arena),
    /// so its writes are stamped like the sparse pages'; otherwise (memory another process shares)
    /// stamp() of the range is kVolatileStamp.
    bool attach(uint64_t addr, uint8_t* host, uint64_t len, bool tracked = false);
    /// Remove the attachment starting at `addr` (its bytes read as zero again).
    void detach(uint64_t addr);
    /// The latest stamp of a write into [addr, addr + len) (0: never written), at least the stamp
    /// of the last attach / detach; kVolatileStamp when the range overlaps an attachment. Equal
    /// results of two calls mean the bytes did not change between them.
    uint64_t stamp(uint64_t addr, uint64_t len) const;

   private:
    struct External {
        uint64_t len;
        uint8_t* host;
        bool tracked;
        /// tracked: per 64 KiB of the attachment (from its start), the stamp of its last write.
        mutable std::vector<uint64_t> stamps;  ///< (written through external_at's const view)
    };
    /// The attachment containing `addr`, or the distance to the next one (in `gap`).
    const std::pair<const uint64_t, External>* external_at(uint64_t addr, uint64_t& gap) const;
    bool sparse_read(uint64_t addr, uint8_t* dst, uint64_t len) const;
    bool sparse_write(uint64_t addr, const uint8_t* src, uint64_t len);
    std::map<uint64_t, External> external_;
    static constexpr uint64_t kPageBytes = 64 * 1024;
    struct Page {
        std::unique_ptr<uint8_t[]> bytes;
        uint64_t stamp = 0;  ///< of the last write into the page
    };
    uint64_t size_;
    std::map<uint64_t, Page> pages_;
    uint64_t layout_stamp_ = 0;  ///< of the last attach / detach

};

}  // namespace npu::memory
