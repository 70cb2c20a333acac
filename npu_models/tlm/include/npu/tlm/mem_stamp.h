// SPDX-License-Identifier: MIT
// A debug-transport query for "may these bytes have changed?" (issue 25): transport_dbg with
// TLM_IGNORE_COMMAND and this extension on [address, address + length). Each component on the way
// folds into `stamp` the latest change that could alter the bytes the initiator sees there: the
// IOMMU its translation changes, the DDR its page write stamps (npu::memory::SparseMemory::stamp,
// kVolatileStamp for attached host memory). transport_dbg returns the length when every byte is
// reachable, else 0. Two equal answers mean the initiator would read the same bytes.
#pragma once
#include <cstdint>

#include <tlm>

namespace npu::tlm_models {

struct MemStampQuery : tlm::tlm_extension<MemStampQuery> {
    uint64_t stamp = 0;
    tlm::tlm_extension_base* clone() const override {
        auto* e = new MemStampQuery;
        e->stamp = stamp;
        return e;
    }
    void copy_from(const tlm::tlm_extension_base& o) override { stamp = static_cast<const MemStampQuery&>(o).stamp; }
};

/// The query of [addr, addr + len) on payload `p` through `fn` (a transport_dbg call): the stamp,
/// or false when not every byte is reachable. The extension is removed from `p` again.
template <typename Fn>
bool query_mem_stamp(tlm::tlm_generic_payload& p, uint64_t addr, uint64_t len, uint64_t& stamp, Fn&& fn) {
    MemStampQuery q;
    p.set_command(tlm::TLM_IGNORE_COMMAND);
    p.set_address(addr);
    p.set_data_ptr(nullptr);
    p.set_data_length(static_cast<unsigned int>(len));
    p.set_streaming_width(static_cast<unsigned int>(len));
    p.set_byte_enable_ptr(nullptr);
    p.set_extension(&q);
    const bool ok = fn(p) == len;
    p.clear_extension(&q);
    stamp = q.stamp;
    return ok;
}

}  // namespace npu::tlm_models
