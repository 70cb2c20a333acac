// SPDX-License-Identifier: MIT
#include "npu/memory/iova_map.h"

#include <iterator>

namespace npu::memory {

void IovaMap::unmap(uint64_t lo, uint64_t hi) {
    if (hi <= lo) return;
    auto it = ext_.upper_bound(lo);
    if (it != ext_.begin()) {
        auto prev = std::prev(it);
        if (prev->first + prev->second.len > lo) it = prev;  // the extent containing lo
    }
    while (it != ext_.end() && it->first < hi) {
        const uint64_t s = it->first, e = s + it->second.len, pa = it->second.pa;
        it = ext_.erase(it);
        bytes_ -= e - s;
        if (s < lo) {  // the part before the range keeps its translation
            ext_.emplace(s, Extent{lo - s, pa});
            bytes_ += lo - s;
        }
        if (e > hi) {  // and the part after it
            it = ext_.emplace(hi, Extent{e - hi, pa + (hi - s)}).first;
            bytes_ += e - hi;
            break;
        }
    }
}

void IovaMap::map(uint64_t iova, uint64_t pa, uint64_t bytes) {
    if (bytes == 0) return;
    unmap(iova, iova + bytes);
    ext_.emplace(iova, Extent{bytes, pa});
    bytes_ += bytes;
}

bool IovaMap::translate(uint64_t iova, uint64_t& pa) const {
    auto it = ext_.upper_bound(iova);
    if (it == ext_.begin()) return false;
    --it;
    if (iova - it->first >= it->second.len) return false;
    pa = it->second.pa + (iova - it->first);
    return true;
}

}  // namespace npu::memory
