// SPDX-License-Identifier: MIT
// Thin SystemC/TLM-2.0 wrapper around iss::Hart (SG-8.2): initiator socket with DMI for RAM/flash,
// b_transport for MMIO (synchronising the quantum keeper first), interrupt inputs, WFI that waits for the
// timer or an interrupt line, and conversion of the hart's cycles to sc_time with the preset's clock.
#pragma once
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/tlm_quantumkeeper.h>

#include <memory>
#include <systemc>
#include <tlm>

#include "riscv_iss/core_preset.h"
#include "riscv_iss/hart.h"

namespace iss {

class RiscvCore : public sc_core::sc_module {
public:
    tlm_utils::simple_initiator_socket<RiscvCore> socket;
    sc_core::sc_in<bool> irq_external;                   ///< mip.MEIP
    sc_core::sc_vector<sc_core::sc_in<bool>> irq_local;  ///< local lines 16..31 (mip bits 16+)

    /// `quantum`: how far the core may run ahead of SystemC time between synchronisations.
    RiscvCore(const sc_core::sc_module_name& name, const CorePreset& preset, const sc_core::sc_time& quantum);
    ~RiscvCore() override;

    Hart& hart() { return *hart_; }
    /// Starts execution at `pc` (call before sc_start; the thread idles until then).
    void start(uint32_t pc);
    /// Set once the guest exits or fails; sc_stop() is called at that point when stop_on_exit is true.
    bool finished() const { return finished_; }
    StopReason stop_reason() const { return reason_; }
    bool stop_on_exit = true;
    sc_core::sc_time cycle_time() const { return period_; }

private:
    class Port;
    void run_thread();
    void irq_method();
    void sync_to(uint64_t cycles);

    CorePreset preset_;
    sc_core::sc_time period_;
    sc_core::sc_time quantum_;
    std::unique_ptr<Port> port_;
    std::unique_ptr<Hart> hart_;
    sc_core::sc_event irq_event_, start_event_;
    uint64_t synced_cycles_ = 0;
    bool started_ = false, finished_ = false;
    StopReason reason_ = StopReason::kNone;
};

}  // namespace iss
