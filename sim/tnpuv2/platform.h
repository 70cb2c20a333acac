// SPDX-License-Identifier: MIT
// The tnpuv2 system: a host CPU port, the shared interconnect and DDR models (npu_models/tlm), one
// tnpuv2 core with its MMIO window and interrupt line, built from the tnpuv2 profile. Implements
// the simulator HAL's view (sim/hal_sim) so the kernel-mode driver runs unchanged.
#pragma once
#include <tlm_utils/simple_initiator_socket.h>

#include <functional>
#include <memory>
#include <systemc>
#include <tlm>

#include "hal_sim/sim_hal.h"
#include "hw/tnpuv2/profile.h"
#include "npu/tlm/ddr.h"
#include "npu/tlm/interconnect.h"
#include "tnpu_core.h"
#include "trace/trace_writer.h"

namespace sim::tnpuv2 {

class TnpuPlatform : public sc_core::sc_module, public HalTarget {
   public:
    tlm_utils::simple_initiator_socket<TnpuPlatform> host;

    TnpuPlatform(sc_core::sc_module_name name, const hw::tnpuv2::Profile& p, npu::tnpuv2::Mode mode,
                 trace::TraceWriter* tw);
    SC_HAS_PROCESS(TnpuPlatform);

    void set_host_program(std::function<void()> fn) { program_ = std::move(fn); }
    npu::tnpuv2::TnpuCore& core() { return *core_; }
    npu::tlm_models::Ddr& ddr() { return *ddr_; }
    const hw::tnpuv2::Profile& profile() const { return p_; }

    // HalTarget
    tlm::tlm_fw_transport_if<>& host_bus() override { return *host.operator->(); }
    int npu_core_count() const override { return 1; }
    uint64_t npu_core_base(int) const override { return p_.npu.mmio_base.value; }
    sc_core::sc_signal<bool>& npu_irq(int) override { return irq_; }
    void npu_reset(int) override { core_->reset(); }

   private:
    void host_thread();
    const hw::tnpuv2::Profile& p_;
    hw::MemoryParams mem_;
    std::unique_ptr<npu::tlm_models::Interconnect> bus_;
    std::unique_ptr<npu::tlm_models::Ddr> ddr_;
    std::unique_ptr<npu::tnpuv2::TnpuCore> core_;
    sc_core::sc_signal<bool> irq_{"irq"};
    std::function<void()> program_;
};

}  // namespace sim::tnpuv2
