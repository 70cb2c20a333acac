// SPDX-License-Identifier: MIT
// drv::NpuHal implemented on the simulated platform: MMIO as TLM transactions from the host
// port, DMA buffers carved from simulated DDR (CPU access via debug transport, no bus time),
// interrupts as the cores' IRQ signals. Must be called from the platform's host thread.
#pragma once
#include <string>
#include <vector>

#include <systemc>
#include <tlm>

#include "drv/npu_hal.h"

namespace sim {

/// What SimHal needs of a simulated system: the host CPU's bus port, the NPU cores' MMIO bases,
/// interrupt lines and reset, and the on-chip SRAM it may place buffers in. Implemented by the
/// RKNPU SoC (sim::Platform) and the tnpuv2 system (sim/tnpuv2).
class HalTarget {
   public:
    virtual ~HalTarget() = default;
    virtual tlm::tlm_fw_transport_if<>& host_bus() = 0;
    virtual int npu_core_count() const = 0;
    virtual uint64_t npu_core_base(int core) const = 0;
    virtual sc_core::sc_signal<bool>& npu_irq(int core) = 0;
    virtual void npu_reset(int core) = 0;
    virtual uint64_t sram_base() const { return 0; }
    virtual uint64_t sram_bytes() const { return 0; }
    /// Map [base, base + bytes) one to one into the NPU's IOMMU domain (as the kernel driver maps
    /// every buffer it hands out); a no-op for systems whose NPU addresses memory physically.
    virtual void map_dma_identity(uint64_t base, uint64_t bytes) { (void)base, (void)bytes; }
};

class SimHal : public drv::NpuHal {
   public:
    /// Buffers are allocated from [pool_base, pool_base + pool_bytes) of DDR.
    SimHal(HalTarget& p, uint64_t pool_base, uint64_t pool_bytes);

    int core_count() const override { return p_.npu_core_count(); }
    uint32_t reg_read32(int core, uint32_t offset) override;
    void reg_write32(int core, uint32_t offset, uint32_t value) override;
    drv::DmaBuffer bo_create(size_t size, size_t align, drv::Placement where = drv::Placement::Ddr) override;
    void bo_destroy(const drv::DmaBuffer& bo) override;
    void bo_write(const drv::DmaBuffer& bo, size_t offset, const void* src, size_t len) override;
    void bo_read(const drv::DmaBuffer& bo, size_t offset, void* dst, size_t len) override;
    drv::WaitResult wait_irq(int core, uint64_t timeout_ns) override;
    void reset(int core) override;
    uint64_t now_ns() override;
    void log(const std::string& line) override { log_.push_back(line); }
    const std::vector<std::string>& log_lines() const { return log_; }
    bool is_sram(const drv::DmaBuffer& bo) const { return sram_end_ && bo.dma_addr < sram_end_ && bo.dma_addr >= p_.sram_base(); }

   private:
    void mmio(int core, uint32_t offset, uint32_t* data, bool write);
    void debug_access(uint64_t addr, void* data, size_t len, bool write);

    HalTarget& p_;
    uint64_t next_, end_;
    uint64_t sram_next_ = 0, sram_end_ = 0;
    uint32_t next_handle_ = 1;
    std::vector<std::string> log_;
};

}  // namespace sim
