// SPDX-License-Identifier: MIT
#include "npu/memory/sparse_memory.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <iterator>

namespace npu::memory {

uint64_t next_stamp() {
    static uint64_t counter = 0;
    return ++counter;
}

bool SparseMemory::sparse_read(uint64_t addr, uint8_t* dst, uint64_t len) const {
    while (len > 0) {
        const uint64_t page = addr / kPageBytes;
        const uint64_t off = addr % kPageBytes;
        const uint64_t n = std::min(len, kPageBytes - off);
        auto it = pages_.find(page);
        if (it == pages_.end())
            std::memset(dst, 0, n);
        else
            std::memcpy(dst, it->second.bytes.get() + off, n);
        dst += n;
        addr += n;
        len -= n;
    }
    return true;
}

bool SparseMemory::sparse_write(uint64_t addr, const uint8_t* src, uint64_t len) {
    const uint64_t st = len ? next_stamp() : 0;
    while (len > 0) {
        const uint64_t page = addr / kPageBytes;
        const uint64_t off = addr % kPageBytes;
        const uint64_t n = std::min(len, kPageBytes - off);
        Page& p = pages_[page];
        if (!p.bytes) {
            p.bytes = std::make_unique<uint8_t[]>(kPageBytes);
            std::memset(p.bytes.get(), 0, kPageBytes);
        }
        p.stamp = st;
        std::memcpy(p.bytes.get() + off, src, n);
        src += n;
        addr += n;
        len -= n;
    }
    return true;
}

const std::pair<const uint64_t, SparseMemory::External>* SparseMemory::external_at(uint64_t addr, uint64_t& gap) const {
    gap = UINT64_MAX;
    auto it = external_.upper_bound(addr);
    if (it != external_.end()) gap = it->first - addr;
    if (it == external_.begin()) return nullptr;
    --it;
    return addr - it->first < it->second.len ? &*it : nullptr;
}

bool SparseMemory::read(uint64_t addr, uint8_t* dst, uint64_t len) const {
    if (!in_range(addr, len)) return false;
    if (external_.empty()) return sparse_read(addr, dst, len);
    while (len > 0) {
        uint64_t gap = 0;
        if (const auto* e = external_at(addr, gap)) {
            const uint64_t off = addr - e->first;
            const uint64_t n = std::min(len, e->second.len - off);
            std::memcpy(dst, e->second.host + off, n);
            dst += n, addr += n, len -= n;
        } else {
            const uint64_t n = std::min(len, gap);
            sparse_read(addr, dst, n);
            dst += n, addr += n, len -= n;
        }
    }
    return true;
}

bool SparseMemory::write(uint64_t addr, const uint8_t* src, uint64_t len) {
    if (!in_range(addr, len)) return false;
    if (external_.empty()) return sparse_write(addr, src, len);
    while (len > 0) {
        uint64_t gap = 0;
        if (const auto* e = external_at(addr, gap)) {
            const uint64_t off = addr - e->first;
            const uint64_t n = std::min(len, e->second.len - off);
            if (e->second.tracked) {
                std::vector<uint64_t>& st = e->second.stamps;
                const uint64_t now = next_stamp();
                for (uint64_t p = off / kPageBytes; p <= (off + n - 1) / kPageBytes; ++p) st[p] = now;
            }
            std::memcpy(e->second.host + off, src, n);
            src += n, addr += n, len -= n;
        } else {
            const uint64_t n = std::min(len, gap);
            sparse_write(addr, src, n);
            src += n, addr += n, len -= n;
        }
    }
    return true;
}

bool SparseMemory::attach(uint64_t addr, uint8_t* host, uint64_t len, bool tracked) {
    if (len == 0 || !in_range(addr, len) || !host) return false;
    auto next = external_.lower_bound(addr);
    if (next != external_.end() && next->first < addr + len) return false;
    if (next != external_.begin()) {
        auto prev = std::prev(next);
        if (prev->first + prev->second.len > addr) return false;
    }
    External e{len, host, tracked, {}};
    if (tracked) e.stamps.assign(static_cast<size_t>((len + kPageBytes - 1) / kPageBytes), 0);
    external_.emplace(addr, std::move(e));
    layout_stamp_ = next_stamp();
    return true;
}

void SparseMemory::detach(uint64_t addr) {
    if (external_.erase(addr)) layout_stamp_ = next_stamp();
}

uint64_t SparseMemory::stamp(uint64_t addr, uint64_t len) const {
    if (len == 0 || !in_range(addr, len)) return layout_stamp_;
    uint64_t st = layout_stamp_;
    const uint64_t last = (addr + len - 1) / kPageBytes;
    if (!external_.empty()) {
        // Attachments overlapping the range (the one holding addr, then those starting in it).
        auto it = external_.upper_bound(addr);
        if (it != external_.begin()) --it;
        for (; it != external_.end() && it->first < addr + len; ++it) {
            const External& e = it->second;
            if (it->first + e.len <= addr) continue;
            if (!e.tracked) return kVolatileStamp;
            // The attachment's 64 KiB pieces the range overlaps.
            const uint64_t lo = std::max(addr, it->first) - it->first, hi = std::min(addr + len, it->first + e.len) - it->first;
            for (uint64_t p = lo / kPageBytes; p <= (hi - 1) / kPageBytes; ++p) st = std::max(st, e.stamps[p]);
        }
    }
    for (auto it = pages_.lower_bound(addr / kPageBytes); it != pages_.end() && it->first <= last; ++it)
        st = std::max(st, it->second.stamp);
    return st;
}

}  // namespace npu::memory
