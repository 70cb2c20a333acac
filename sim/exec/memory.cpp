// SPDX-License-Identifier: MIT
#include "exec/memory.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

namespace sim::exec {

std::unique_ptr<Backing> Backing::create(uint64_t bytes, const std::string& name) {
    std::unique_ptr<Backing> b(new Backing());
    b->fd_ = memfd_create(name.c_str(), MFD_CLOEXEC);
    if (b->fd_ < 0) throw std::runtime_error(fmt::format("memfd_create: {}", std::strerror(errno)));
    if (ftruncate(b->fd_, static_cast<off_t>(bytes)) != 0)
        throw std::runtime_error(fmt::format("ftruncate of a {}-byte buffer: {}", bytes, std::strerror(errno)));
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, b->fd_, 0);
    if (p == MAP_FAILED) throw std::runtime_error(fmt::format("mmap of a {}-byte buffer: {}", bytes, std::strerror(errno)));
    b->map_ = static_cast<uint8_t*>(p);
    b->bytes_ = bytes;
    fd_identity(b->fd_, b->dev_, b->ino_);
    return b;
}

std::unique_ptr<Backing> Backing::import(int fd, std::string& why) {
    struct stat st {};
    if (fstat(fd, &st) != 0) {
        why = fmt::format("fstat: {}", std::strerror(errno));
        return nullptr;
    }
    if (!S_ISREG(st.st_mode) || st.st_size <= 0) {
        why = "not a shared-memory buffer (memfd or dma-buf of this simulator)";
        return nullptr;
    }
    std::unique_ptr<Backing> b(new Backing());
    b->fd_ = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (b->fd_ < 0) {
        why = fmt::format("dup: {}", std::strerror(errno));
        return nullptr;
    }
    const uint64_t bytes = page_align(static_cast<uint64_t>(st.st_size));
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, b->fd_, 0);
    if (p == MAP_FAILED) {
        why = fmt::format("mmap: {}", std::strerror(errno));
        return nullptr;
    }
    b->map_ = static_cast<uint8_t*>(p);
    b->bytes_ = bytes;
    b->dev_ = st.st_dev;
    b->ino_ = st.st_ino;
    return b;
}

Backing::~Backing() {
    if (map_) munmap(map_, bytes_);
    if (fd_ >= 0) close(fd_);
}

bool fd_identity(int fd, dev_t& dev, ino_t& ino) {
    struct stat st {};
    if (fstat(fd, &st) != 0) return false;
    dev = st.st_dev;
    ino = st.st_ino;
    return true;
}

namespace {
uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }
}  // namespace

std::optional<uint64_t> RangeAllocator::alloc_low(uint64_t bytes, uint64_t align) {
    if (bytes == 0 || bytes > end_ - base_) return std::nullopt;
    uint64_t at = align_up(base_, align);
    for (const auto& [s, len] : used_) {
        if (at + bytes <= s) break;
        at = std::max(at, align_up(s + len, align));
    }
    if (at < base_ || at > end_ || end_ - at < bytes) return std::nullopt;
    used_[at] = bytes;
    return at;
}

std::optional<uint64_t> RangeAllocator::alloc_high(uint64_t bytes, uint64_t align, uint64_t limit) {
    limit = std::min(limit, end_);
    if (bytes == 0 || limit <= base_ || bytes > limit - base_) return std::nullopt;
    auto fit = [&](uint64_t hs, uint64_t he) -> std::optional<uint64_t> {
        if (he <= hs || he - hs < bytes) return std::nullopt;
        const uint64_t at = (he - bytes) / align * align;
        if (at < hs) return std::nullopt;
        return at;
    };
    uint64_t top = limit;
    std::optional<uint64_t> at;
    for (auto it = used_.rbegin(); it != used_.rend() && !at; ++it) {
        const uint64_t s = it->first, e = it->first + it->second;
        if (s >= top) continue;
        if (e < top) at = fit(e, top);
        top = s;
    }
    if (!at) at = fit(base_, top);
    if (at) used_[*at] = bytes;
    return at;
}

std::optional<uint64_t> RangeAllocator::alloc_best(uint64_t bytes, uint64_t align) {
    if (bytes == 0) return std::nullopt;
    std::optional<uint64_t> best;
    uint64_t best_size = UINT64_MAX;
    uint64_t hole_start = base_;
    auto consider = [&](uint64_t hs, uint64_t he) {
        const uint64_t at = align_up(hs, align);
        if (at < he && he - at >= bytes && he - hs < best_size) {
            best = at;
            best_size = he - hs;
        }
    };
    for (const auto& [s, len] : used_) {
        consider(hole_start, s);
        hole_start = s + len;
    }
    consider(hole_start, end_);
    if (best) used_[*best] = bytes;
    return best;
}

uint64_t RangeAllocator::used_bytes() const {
    uint64_t n = 0;
    for (const auto& [s, len] : used_) n += len;
    return n;
}

std::optional<uint64_t> rknpu_alloc_iova(RangeAllocator& a, uint64_t bytes, bool size_aligned, uint64_t limit,
                                         uint64_t& reserved_bytes) {
    uint64_t pages = page_align(bytes) / kPage;
    uint64_t pow2 = 1;
    while (pow2 < pages) pow2 <<= 1;
    if (size_aligned && pages < 32) pages = pow2;
    reserved_bytes = pages * kPage;
    return a.alloc_high(reserved_bytes, size_aligned ? pow2 * kPage : kPage, limit);
}

}  // namespace sim::exec
