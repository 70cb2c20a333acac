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

void SparseMemory::stamp_external(uint64_t addr, uint64_t len, uint64_t st) {
    for (uint64_t p = addr / kPageBytes, last = (addr + len - 1) / kPageBytes; p <= last; ++p) ext_stamps_[p] = st;
}

bool SparseMemory::write(uint64_t addr, const uint8_t* src, uint64_t len) {
    if (!in_range(addr, len)) return false;
    if (external_.empty()) return sparse_write(addr, src, len);
    while (len > 0) {
        uint64_t gap = 0;
        if (const auto* e = external_at(addr, gap)) {
            const uint64_t off = addr - e->first;
            const uint64_t n = std::min(len, e->second.len - off);
            if (e->second.tracked) stamp_external(addr, n, next_stamp());
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
    external_.emplace(addr, External{len, host, tracked});
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
        for (; it != external_.end() && it->first < addr + len; ++it)
            if (it->first + it->second.len > addr && !it->second.tracked) return kVolatileStamp;
        for (auto p = ext_stamps_.lower_bound(addr / kPageBytes); p != ext_stamps_.end() && p->first <= last; ++p)
            st = std::max(st, p->second);
    }
    for (auto it = pages_.lower_bound(addr / kPageBytes); it != pages_.end() && it->first <= last; ++it)
        st = std::max(st, it->second.stamp);
    return st;
}

}  // namespace npu::memory
