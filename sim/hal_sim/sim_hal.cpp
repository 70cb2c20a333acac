// SPDX-License-Identifier: MIT
#include "hal_sim/sim_hal.h"

#include <stdexcept>

#include <fmt/format.h>

namespace sim {

SimHal::SimHal(HalTarget& p, uint64_t pool_base, uint64_t pool_bytes)
    : p_(p), next_(pool_base), end_(pool_base + pool_bytes) {
    // The kernel driver maps every buffer it hands out into the NPU's IOMMU domain; this HAL maps
    // its pool (and the on-chip SRAM) one to one, so the addresses it returns are both IOVA and
    // physical.
    p.map_dma_identity(pool_base, pool_bytes);
    if (p.sram_bytes()) {
        sram_next_ = p.sram_base();
        sram_end_ = sram_next_ + p.sram_bytes();
        p.map_dma_identity(sram_next_, p.sram_bytes());
    }
}

void SimHal::mmio(int core, uint32_t offset, uint32_t* data, bool write) {
    tlm::tlm_generic_payload gp;
    gp.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
    gp.set_address(p_.npu_core_base(core) + offset);
    gp.set_data_ptr(reinterpret_cast<unsigned char*>(data));
    gp.set_data_length(4);
    gp.set_streaming_width(4);
    gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    p_.host_bus().b_transport(gp, delay);
    sc_core::wait(delay);
    if (gp.get_response_status() != tlm::TLM_OK_RESPONSE)
        throw std::runtime_error(fmt::format("MMIO {} core {} offset 0x{:04x}: {}", write ? "write" : "read", core,
                                             offset, gp.get_response_string()));
}

uint32_t SimHal::reg_read32(int core, uint32_t offset) {
    uint32_t v = 0;
    mmio(core, offset, &v, false);
    return v;
}

void SimHal::reg_write32(int core, uint32_t offset, uint32_t value) { mmio(core, offset, &value, true); }

drv::DmaBuffer SimHal::bo_create(size_t size, size_t align, drv::Placement where) {
    if (align == 0 || (align & (align - 1))) throw std::invalid_argument("bo_create: alignment must be a power of two");
    if (where == drv::Placement::TrySram && sram_end_ > 0) {
        const uint64_t sbase = (sram_next_ + align - 1) & ~static_cast<uint64_t>(align - 1);
        if (sbase + size <= sram_end_) {
            sram_next_ = sbase + size;
            return drv::DmaBuffer{next_handle_++, sbase, size};
        }
    }
    const uint64_t base = (next_ + align - 1) & ~static_cast<uint64_t>(align - 1);
    if (base + size > end_)
        throw std::runtime_error(fmt::format("bo_create: {} bytes do not fit the {} bytes left in the DMA pool", size,
                                             end_ > next_ ? end_ - next_ : 0));
    next_ = base + size;
    return drv::DmaBuffer{next_handle_++, base, size};
}

void SimHal::bo_destroy(const drv::DmaBuffer&) {}  // bump allocator: freed with the platform

void SimHal::debug_access(uint64_t addr, void* data, size_t len, bool write) {
    tlm::tlm_generic_payload gp;
    gp.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
    gp.set_address(addr);
    gp.set_data_ptr(static_cast<unsigned char*>(data));
    gp.set_data_length(static_cast<unsigned int>(len));
    if (p_.host_bus().transport_dbg(gp) != len)
        throw std::runtime_error(fmt::format("buffer access at 0x{:x} (+{}) outside DDR", addr, len));
}

void SimHal::bo_write(const drv::DmaBuffer& bo, size_t offset, const void* src, size_t len) {
    if (offset + len > bo.size) throw std::out_of_range("bo_write beyond the buffer");
    debug_access(bo.dma_addr + offset, const_cast<void*>(src), len, true);
}

void SimHal::bo_read(const drv::DmaBuffer& bo, size_t offset, void* dst, size_t len) {
    if (offset + len > bo.size) throw std::out_of_range("bo_read beyond the buffer");
    debug_access(bo.dma_addr + offset, dst, len, false);
}

drv::WaitResult SimHal::wait_irq(int core, uint64_t timeout_ns) {
    sc_core::sc_signal<bool>& line = p_.npu_irq(core);
    if (line.read()) return drv::WaitResult::Irq;
    sc_core::wait(sc_core::sc_time(static_cast<double>(timeout_ns), sc_core::SC_NS), line.posedge_event());
    return line.read() ? drv::WaitResult::Irq : drv::WaitResult::Timeout;
}

void SimHal::reset(int core) { p_.npu_reset(core); }

uint64_t SimHal::now_ns() { return sc_core::sc_time_stamp().value() / 1000; }

}  // namespace sim
