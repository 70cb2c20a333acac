// SPDX-License-Identifier: MIT
// RiscvCore: MemoryPort over the TLM socket and the SC_THREAD that runs the hart quantum by quantum.
#include "riscv_iss_tlm/riscv_core.h"

#include <algorithm>
#include <cstring>

namespace iss {

/// MemoryPort implementation on the initiator socket. Runs inside RiscvCore's SC_THREAD, so it may wait().
class RiscvCore::Port : public MemoryPort {
public:
    explicit Port(RiscvCore& core) : core_(core) {}

    bool get_dmi(uint32_t addr, DmiRegion& out) override {
        tlm::tlm_generic_payload gp;
        tlm::tlm_dmi dmi;
        gp.set_address(addr);
        gp.set_command(tlm::TLM_READ_COMMAND);
        if (!core_.socket->get_direct_mem_ptr(gp, dmi) || !dmi.is_read_write_allowed()) return false;
        const uint64_t start = dmi.get_start_address(), end = dmi.get_end_address();
        if (start > 0xffffffffull || end < start) return false;
        out.base = static_cast<uint32_t>(start);
        out.size = static_cast<uint32_t>(std::min<uint64_t>(end - start + 1, 0x100000000ull - start) & ~3ull);
        out.host = dmi.get_dmi_ptr();
        out.writable = true;
        out.executable = true;
        const auto cycles = [&](const sc_core::sc_time& t) {
            return static_cast<uint8_t>(std::min<double>(255.0, t / core_.period_));
        };
        out.read_wait_cycles = cycles(dmi.get_read_latency());
        out.write_wait_cycles = cycles(dmi.get_write_latency());
        out.fetch_wait_cycles = out.read_wait_cycles;
        // Preset regions override the latency the target reports (flash vs SRAM wait states).
        for (const RegionConfig& r : core_.preset_.memory) {
            if (addr - r.base < r.size_bytes) {
                out.read_wait_cycles = r.read_wait_cycles;
                out.write_wait_cycles = r.write_wait_cycles;
                out.fetch_wait_cycles = r.fetch_wait_cycles;
                out.writable = r.writable;
            }
        }
        return out.size != 0;
    }

    bool read(uint32_t addr, uint32_t len, uint8_t* data, uint64_t now_cycles, uint64_t& wait_cycles) override {
        return transport(tlm::TLM_READ_COMMAND, addr, len, data, now_cycles, wait_cycles);
    }
    bool write(uint32_t addr, uint32_t len, const uint8_t* data, uint64_t now_cycles, uint64_t& wait_cycles) override {
        return transport(tlm::TLM_WRITE_COMMAND, addr, len, const_cast<uint8_t*>(data), now_cycles, wait_cycles);
    }

private:
    bool transport(tlm::tlm_command cmd, uint32_t addr, uint32_t len, uint8_t* data, uint64_t now_cycles,
                   uint64_t& wait_cycles) {
        // MMIO is always performed at the right SystemC time: catch up with the hart's local time first.
        core_.sync_to(now_cycles);
        tlm::tlm_generic_payload gp;
        sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
        gp.set_command(cmd);
        gp.set_address(addr);
        gp.set_data_ptr(data);
        gp.set_data_length(len);
        gp.set_streaming_width(len);
        gp.set_byte_enable_ptr(nullptr);
        gp.set_dmi_allowed(false);
        gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
        core_.socket->b_transport(gp, delay);
        wait_cycles = static_cast<uint64_t>(delay / core_.period_);
        if (delay > sc_core::SC_ZERO_TIME) {
            sc_core::wait(delay);
            core_.synced_cycles_ += wait_cycles;
        }
        return gp.get_response_status() == tlm::TLM_OK_RESPONSE;  // errors become access faults
    }

    RiscvCore& core_;
};

RiscvCore::RiscvCore(const sc_core::sc_module_name& name, const CorePreset& preset, const sc_core::sc_time& quantum)
    : sc_core::sc_module(name),
      socket("socket"),
      irq_external("irq_external"),
      irq_local("irq_local", 16),
      preset_(preset),
      period_(sc_core::sc_time(1.0 / static_cast<double>(preset.cycles.clock_hz), sc_core::SC_SEC)),
      quantum_(quantum),
      port_(std::make_unique<Port>(*this)),
      hart_(std::make_unique<Hart>(preset.isa, preset.cycles, *port_, preset.devices)) {
    hart_->wfi_stops_ = true;
    SC_HAS_PROCESS(RiscvCore);
    SC_THREAD(run_thread);
    SC_METHOD(irq_method);
    sensitive << irq_external;
    for (auto& in : irq_local) sensitive << in;
    dont_initialize();
}

RiscvCore::~RiscvCore() = default;

void RiscvCore::start(uint32_t pc) {
    hart_->reset(pc);
    started_ = true;
    start_event_.notify(sc_core::SC_ZERO_TIME);
}

void RiscvCore::irq_method() {
    hart_->set_irq_line(cause::kMachineExtIrq, irq_external.read());
    for (unsigned i = 0; i < irq_local.size(); ++i) hart_->set_irq_line(16 + i, irq_local[i].read());
    irq_event_.notify(sc_core::SC_ZERO_TIME);
}

void RiscvCore::sync_to(uint64_t cycles) {
    if (cycles > synced_cycles_) {
        sc_core::wait(static_cast<double>(cycles - synced_cycles_) * period_);
        synced_cycles_ = cycles;
    }
}

void RiscvCore::run_thread() {
    if (!started_) sc_core::wait(start_event_);
    const uint64_t quantum_cycles = std::max<uint64_t>(1, static_cast<uint64_t>(quantum_ / period_));
    for (;;) {
        const StopReason r = hart_->run(quantum_cycles);
        sync_to(hart_->cycles_);
        if (r == StopReason::kInsnLimit) continue;
        if (r == StopReason::kWfi) {
            // Sleep until an interrupt line changes or the CLINT timer fires, then resume at that time.
            const uint64_t deadline = hart_->timer_deadline_cycles();
            if (deadline == ~0ull) {
                sc_core::wait(irq_event_);
            } else if (deadline > hart_->cycles_) {
                sc_core::wait(static_cast<double>(deadline - hart_->cycles_) * period_, irq_event_);
            }
            const auto now_cycles = static_cast<uint64_t>(sc_core::sc_time_stamp() / period_);
            hart_->cycles_ = synced_cycles_ = std::max(hart_->cycles_, now_cycles);
            continue;
        }
        reason_ = r;
        finished_ = true;
        if (stop_on_exit) sc_core::sc_stop();
        return;
    }
}

}  // namespace iss
