// SPDX-License-Identifier: MIT
// Builds a SoC from its profile: interconnect, DDR, the NPU cores with their MMIO windows and
// interrupt lines, and a host-CPU initiator through which the driver's HAL reaches them.
// Instance names follow the profile path (soc.npu.core0, soc.ddr) so traces and logs line up.
#pragma once
#include <functional>
#include <memory>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "hal_sim/sim_hal.h"
#include "hw/profile.h"
#include "npu/tlm/ddr.h"
#include "npu/tlm/interconnect.h"
#include "npu/tlm/iommu.h"
#include "npu/tlm/rknpu_core.h"
#include "trace/trace_writer.h"

namespace sim {

class Platform : public sc_core::sc_module, public HalTarget {
   public:
    /// The host CPU's bus port (driver MMIO and buffer access).
    tlm_utils::simple_initiator_socket<Platform> host;

    Platform(sc_core::sc_module_name name, const hw::SocProfile& soc, npu::tlm_models::SimMode mode,
             trace::TraceWriter* tw);
    /// Writes the bandwidth counters into the trace (the traffic is known only once the run is over).
    ~Platform() override;
    SC_HAS_PROCESS(Platform);

    /// The program the host CPU runs (the driver); started at time 0 in its own SC_THREAD.
    void set_host_program(std::function<void()> fn) { host_program_ = std::move(fn); }

    const hw::SocProfile& soc() const { return soc_; }
    int core_count() const { return static_cast<int>(cores_.size()); }
    npu::tlm_models::RknpuCore& core(int i) { return *cores_.at(static_cast<size_t>(i)); }
    std::vector<npu::tlm_models::RknpuCore*> cores() {
        std::vector<npu::tlm_models::RknpuCore*> v;
        for (auto& c : cores_) v.push_back(c.get());
        return v;
    }
    sc_core::sc_signal<bool>& irq(int i) { return *irqs_.at(static_cast<size_t>(i)); }
    npu::tlm_models::Ddr& ddr() { return *ddr_; }
    /// The NPU's IOMMU (pass-through when the profile has memory.npu_iommu = 0).
    npu::tlm_models::Iommu& iommu() { return *iommu_; }
    /// On-chip SRAM usable by the NPU (profile memory.nbuf_*), or nullptr when the SoC has none.
    npu::tlm_models::Ddr* nbuf() { return nbuf_.get(); }
    uint64_t core_base(int i) const { return soc_.npu.core_mmio_bases.value.at(static_cast<size_t>(i)); }

    // HalTarget (the simulator HAL's view of the SoC)
    tlm::tlm_fw_transport_if<>& host_bus() override { return *host.operator->(); }
    int npu_core_count() const override { return core_count(); }
    uint64_t npu_core_base(int core) const override { return core_base(core); }
    sc_core::sc_signal<bool>& npu_irq(int core) override { return irq(core); }
    void npu_reset(int core) override { this->core(core).reset(); }
    uint64_t sram_base() const override { return soc_.mem.nbuf_bytes.value ? soc_.mem.nbuf_base.value : 0; }
    uint64_t sram_bytes() const override { return nbuf_ ? soc_.mem.nbuf_bytes.value : 0; }
    void map_dma_identity(uint64_t base, uint64_t bytes) override { iommu_->map_identity(base, bytes); }

   private:
    void host_thread();

    const hw::SocProfile& soc_;
    std::unique_ptr<npu::tlm_models::Interconnect> bus_;
    std::unique_ptr<npu::tlm_models::Ddr> ddr_;
    std::unique_ptr<npu::tlm_models::Ddr> nbuf_;
    std::unique_ptr<npu::tlm_models::Iommu> iommu_;
    std::vector<std::unique_ptr<npu::tlm_models::RknpuCore>> cores_;
    std::vector<std::unique_ptr<sc_core::sc_signal<bool>>> irqs_;
    std::function<void()> host_program_;
    trace::TraceWriter* tw_ = nullptr;
    trace::RateCounter ddr_rate_, nbuf_rate_;  ///< per initiator and direction, 1 us bins
};

}  // namespace sim
