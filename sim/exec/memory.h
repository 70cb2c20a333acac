// SPDX-License-Identifier: MIT
// Buffer-object memory of `npusim serve`: shared-memory backings (memfd) that the simulator maps
// into its DDR and hands to the programs for mmap, and the address allocators the emulated kernel
// drivers use: physical pages of the SoC's DDR, the vendor driver's top-down IOVAs below 4 GiB
// (rockchip-linux/kernel drivers/rknpu/rknpu_iommu.c rknpu_iommu_dma_alloc_iova over the kernel's
// iova.c, which walks the tree backwards from the limit, size-aligned), and rocket's per-file
// drm_mm with best-fit page-aligned nodes (torvalds/linux drivers/accel/rocket/rocket_gem.c
// rocket_ioctl_create_bo, drm_mm_insert_node_generic(size, PAGE_SIZE, 0, DRM_MM_INSERT_BEST)).
#pragma once
#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

namespace sim::exec {

inline constexpr uint64_t kPage = 4096;
inline uint64_t page_align(uint64_t v) { return (v + kPage - 1) / kPage * kPage; }

/// Shared memory of one buffer object: a memfd (or an imported descriptor) mapped read/write.
class Backing {
   public:
    /// A new zero-filled memfd of `bytes` (page multiple). Throws std::runtime_error.
    static std::unique_ptr<Backing> create(uint64_t bytes, const std::string& name);
    /// Map a descriptor a program passed in (PRIME import); nullptr (with `why`) when it cannot
    /// be mapped as shared memory. The descriptor is duplicated.
    static std::unique_ptr<Backing> import(int fd, std::string& why);
    ~Backing();
    Backing(const Backing&) = delete;
    Backing& operator=(const Backing&) = delete;

    int fd() const { return fd_; }
    uint8_t* data() const { return map_; }
    uint64_t bytes() const { return bytes_; }
    ino_t inode() const { return ino_; }
    dev_t device() const { return dev_; }

   private:
    Backing() = default;
    int fd_ = -1;
    uint8_t* map_ = nullptr;
    uint64_t bytes_ = 0;
    ino_t ino_ = 0;
    dev_t dev_ = 0;
};

/// The (device, inode) of a descriptor, to recognise a buffer's memfd when a program passes it
/// back (PRIME_FD_TO_HANDLE); false when fstat fails.
bool fd_identity(int fd, dev_t& dev, ino_t& ino);

/// Allocated ranges of an address space [base, base + size) and three placement rules.
class RangeAllocator {
   public:
    RangeAllocator(uint64_t base, uint64_t size) : base_(base), end_(base + size) {}
    /// Lowest address: first fit, `align` a power of two.
    std::optional<uint64_t> alloc_low(uint64_t bytes, uint64_t align);
    /// Highest address whose range ends at or below `limit`, aligned to `align` (iova.c top-down).
    std::optional<uint64_t> alloc_high(uint64_t bytes, uint64_t align, uint64_t limit);
    /// drm_mm DRM_MM_INSERT_BEST: the smallest hole that fits, at its (aligned) start.
    std::optional<uint64_t> alloc_best(uint64_t bytes, uint64_t align);
    void free(uint64_t addr) { used_.erase(addr); }
    uint64_t used_bytes() const;

   private:
    uint64_t base_, end_;
    std::map<uint64_t, uint64_t> used_;  ///< start -> length
};

/// The vendor driver's IOVA placement for one buffer: size rounded to pages (and, when the
/// allocation is size-aligned and below 32 pages, to a power of two of pages, the rcache rule of
/// iommu_dma_alloc_iova), aligned to the power of two at or above its page count; top-down below
/// `limit`. `size_aligned` is false with RKNPU_MEM_IOMMU_LIMIT_IOVA_ALIGNMENT.
std::optional<uint64_t> rknpu_alloc_iova(RangeAllocator& a, uint64_t bytes, bool size_aligned, uint64_t limit,
                                         uint64_t& reserved_bytes);

}  // namespace sim::exec
