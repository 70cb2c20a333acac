// SPDX-License-Identifier: MIT
#include "npu/memory/sparse_memory.h"

#include <algorithm>
#include <cstring>

namespace npu::memory {

bool SparseMemory::read(uint64_t addr, uint8_t* dst, uint64_t len) const {
    if (!in_range(addr, len)) return false;
    while (len > 0) {
        const uint64_t page = addr / kPageBytes;
        const uint64_t off = addr % kPageBytes;
        const uint64_t n = std::min(len, kPageBytes - off);
        auto it = pages_.find(page);
        if (it == pages_.end())
            std::memset(dst, 0, n);
        else
            std::memcpy(dst, it->second.get() + off, n);
        dst += n;
        addr += n;
        len -= n;
    }
    return true;
}

bool SparseMemory::write(uint64_t addr, const uint8_t* src, uint64_t len) {
    if (!in_range(addr, len)) return false;
    while (len > 0) {
        const uint64_t page = addr / kPageBytes;
        const uint64_t off = addr % kPageBytes;
        const uint64_t n = std::min(len, kPageBytes - off);
        auto& p = pages_[page];
        if (!p) {
            p = std::make_unique<uint8_t[]>(kPageBytes);
            std::memset(p.get(), 0, kPageBytes);
        }
        std::memcpy(p.get() + off, src, n);
        src += n;
        addr += n;
        len -= n;
    }
    return true;
}

}  // namespace npu::memory
