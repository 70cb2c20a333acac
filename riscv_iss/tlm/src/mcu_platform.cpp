// SPDX-License-Identifier: MIT
// The MCU SystemC platform (see mcu_platform.h).
#include "riscv_iss_tlm/mcu_platform.h"

#include <tlm_utils/simple_target_socket.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <systemc>

#include "riscv_iss/bus.h"
#include "riscv_iss/elf_image.h"
#include "riscv_iss/semihost.h"
#include "riscv_iss_tlm/riscv_core.h"

namespace iss {
namespace {

/// The preset's memory regions and the UART as one TLM target. Memory answers with DMI; any other
/// address is TLM_ADDRESS_ERROR_RESPONSE, which the core turns into an access fault.
struct McuBus : sc_core::sc_module {
    tlm_utils::simple_target_socket<McuBus> socket{"socket"};
    std::vector<RegionConfig> regions;
    std::vector<std::vector<uint8_t>> mem;
    uint32_t uart_base;
    std::string* console;

    McuBus(const sc_core::sc_module_name& n, const CorePreset& p, std::string* out)
        : sc_core::sc_module(n), regions(p.memory), uart_base(p.devices.console_base), console(out) {
        for (const auto& r : regions) mem.emplace_back(r.size_bytes, 0);
        socket.register_b_transport(this, &McuBus::b_transport);
        socket.register_get_direct_mem_ptr(this, &McuBus::get_dmi);
    }
    int find(uint64_t a, uint64_t len) const {
        for (size_t i = 0; i < regions.size(); ++i)
            if (a >= regions[i].base && a + len <= uint64_t(regions[i].base) + regions[i].size_bytes) return int(i);
        return -1;
    }
    /// 16550 subset, as QEMU virt's UART: THR at +0 (write: one character), LSR at +5 (THR empty, 0x60).
    bool uart(tlm::tlm_generic_payload& gp) {
        const uint64_t a = gp.get_address();
        if (uart_base == 0 || a < uart_base || a >= uint64_t(uart_base) + 8) return false;
        if (gp.is_write() && a == uart_base) console->push_back(static_cast<char>(gp.get_data_ptr()[0]));
        if (gp.is_read()) {
            std::memset(gp.get_data_ptr(), 0, gp.get_data_length());
            if (a == uint64_t(uart_base) + 5) gp.get_data_ptr()[0] = 0x60;
        }
        gp.set_response_status(tlm::TLM_OK_RESPONSE);
        return true;
    }
    void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time&) {
        if (uart(gp)) return;
        const int i = find(gp.get_address(), gp.get_data_length());
        if (i < 0 || (gp.is_write() && !regions[size_t(i)].writable)) {
            gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
            return;
        }
        uint8_t* p = &mem[size_t(i)][gp.get_address() - regions[size_t(i)].base];
        if (gp.is_read()) std::memcpy(gp.get_data_ptr(), p, gp.get_data_length());
        else std::memcpy(p, gp.get_data_ptr(), gp.get_data_length());
        gp.set_response_status(tlm::TLM_OK_RESPONSE);
    }
    bool get_dmi(tlm::tlm_generic_payload& gp, tlm::tlm_dmi& dmi) {
        const int i = find(gp.get_address(), 1);
        if (i < 0) return false;
        const auto& r = regions[size_t(i)];
        dmi.set_dmi_ptr(mem[size_t(i)].data());
        dmi.set_start_address(r.base);
        dmi.set_end_address(uint64_t(r.base) + r.size_bytes - 1);
        dmi.allow_read_write();  // the core applies the preset's writable flag and wait states
        return true;
    }
};

/// Interrupt controller: one level line per source, OR-ed into MEIP, and the local lines.
struct McuIntc : sc_core::sc_module {
    sc_core::sc_signal<bool> external{"external"};
    sc_core::sc_vector<sc_core::sc_signal<bool>> local;
    McuIntc(const sc_core::sc_module_name& n, size_t lines) : sc_core::sc_module(n), local("local", lines) {}
};

}  // namespace

McuPlatformRun run_mcu_platform(const CorePreset& preset, const std::string& elf,
                                const std::vector<std::pair<uint32_t, std::vector<uint8_t>>>& loads, uint64_t max_insns) {
    McuPlatformRun r;
    try {
        // The ISS's ELF loader fills a staging bus; its regions are copied into the platform's memory.
        Bus staging(preset);
        const ElfImage img = load_elf(elf, staging);
        auto bus = std::make_unique<McuBus>("mcu_bus", preset, &r.console);
        for (size_t i = 0; i < preset.memory.size(); ++i) {
            const auto& reg = preset.memory[i];
            if (const uint8_t* src = staging.host_ptr(reg.base, reg.size_bytes)) std::memcpy(bus->mem[i].data(), src, reg.size_bytes);
        }
        for (const auto& [addr, bytes] : loads) {
            if (bytes.empty()) continue;
            const int i = bus->find(addr, bytes.size());
            if (i < 0) throw std::runtime_error("load of " + std::to_string(bytes.size()) + " bytes at " + std::to_string(addr) + " is outside the memory map");
            std::memcpy(&bus->mem[size_t(i)][addr - preset.memory[size_t(i)].base], bytes.data(), bytes.size());
        }
        auto core = std::make_unique<RiscvCore>("mcu_core", preset, sc_core::sc_time(1, sc_core::SC_US));
        auto intc = std::make_unique<McuIntc>("mcu_intc", core->irq_local.size());
        core->socket.bind(bus->socket);
        core->irq_external.bind(intc->external);
        for (size_t i = 0; i < core->irq_local.size(); ++i) core->irq_local[i].bind(intc->local[i]);
        Semihost semihost(elf, preset.cycles.clock_hz);
        core->hart().set_semihost(&semihost);
        core->hart().console_out = [&r](const char* s, size_t n) { r.console.append(s, n); };
        core->start(img.entry);
        // The guest's exit stops the kernel (sc_stop); its "simulation stopped by user" info is not output.
        sc_core::sc_report_handler::set_actions("/OSCI/SystemC", sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
        // Simulated-time guard: max_insns at one instruction per cycle.
        const double limit_s = std::min(3600.0, double(max_insns) / double(preset.cycles.clock_hz));
        sc_core::sc_start(sc_core::sc_time(limit_s, sc_core::SC_SEC));
        r.cycles = core->hart().cycles_;
        r.instret = core->hart().instret_;
        r.sim_time_s = sc_core::sc_time_stamp().to_seconds();
        if (core->stop_reason() == StopReason::kExit) r.exit_code = core->hart().exit_code();
        else r.error = core->finished() ? "ISS: " + core->hart().stop_message() : "the SystemC run did not finish within the instruction budget";
    } catch (const std::exception& e) {
        r.error = std::string("SystemC platform: ") + e.what();
    }
    return r;
}

}  // namespace iss
