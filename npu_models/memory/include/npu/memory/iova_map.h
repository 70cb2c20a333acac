// SPDX-License-Identifier: MIT
// One IOMMU translation domain as extents: IOVA [start, start + len) -> physical [pa, pa + len),
// non-overlapping. A mapping replaces whatever it covers page by page (the split remainders keep
// their translation), an unmapping removes the pages it covers, as a per-page table does, but a
// buffer of N pages costs O(log n) instead of N tree nodes (a 64 MiB buffer object is 16384 pages).
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>

namespace npu::memory {

class IovaMap {
   public:
    /// [iova, iova + bytes) -> [pa, pa + bytes); the caller checks alignment and the aperture.
    void map(uint64_t iova, uint64_t pa, uint64_t bytes);
    /// Remove the translations of [lo, hi) (hi > lo; nothing mapped there is fine).
    void unmap(uint64_t lo, uint64_t hi);
    /// Physical address of `iova`, or false when it is not mapped.
    bool translate(uint64_t iova, uint64_t& pa) const;
    /// Bytes mapped in all.
    uint64_t mapped_bytes() const { return bytes_; }
    size_t extents() const { return ext_.size(); }

   private:
    struct Extent {
        uint64_t len, pa;
    };
    std::map<uint64_t, Extent> ext_;  ///< start IOVA -> extent
    uint64_t bytes_ = 0;
};

}  // namespace npu::memory
