// SPDX-License-Identifier: MIT
// SystemC executor of the MCU firmware (see mcu_systemc_executor.h).
#include "mcu_systemc_executor.h"

#include <tlm_utils/simple_target_socket.h>

#include <cstring>
#include <memory>
#include <systemc>

#include "riscv_iss/bus.h"
#include "riscv_iss/core_preset.h"
#include "riscv_iss/elf_image.h"
#include "riscv_iss/semihost.h"
#include "riscv_iss_tlm/riscv_core.h"

namespace mcu_sc {
namespace {

/// The preset's memory regions (flash, SRAM, ...) as one TLM target with DMI; other addresses answer
/// TLM_ADDRESS_ERROR_RESPONSE (the core turns that into an access fault).
struct McuMemory : sc_core::sc_module {
    tlm_utils::simple_target_socket<McuMemory> socket{"socket"};
    std::vector<iss::RegionConfig> regions;
    std::vector<std::vector<uint8_t>> mem;

    McuMemory(const sc_core::sc_module_name& n, const iss::CorePreset& p) : sc_core::sc_module(n), regions(p.memory) {
        for (const auto& r : regions) mem.emplace_back(r.size_bytes, 0);
        socket.register_b_transport(this, &McuMemory::b_transport);
        socket.register_get_direct_mem_ptr(this, &McuMemory::get_dmi);
    }
    int find(uint64_t a, unsigned len) const {
        for (size_t i = 0; i < regions.size(); ++i)
            if (a >= regions[i].base && a + len <= uint64_t(regions[i].base) + regions[i].size_bytes) return int(i);
        return -1;
    }
    void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time&) {
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

}  // namespace

mcu::FirmwareRun run_in_systemc(const mcu::McuTarget& t, const std::string& elf, const std::vector<uint8_t>& blob,
                                uint64_t max_insns) {
    mcu::FirmwareRun r;
    try {
        const iss::CorePreset preset = iss::load_preset(t.iss_preset, iss::default_preset_dir());
        // The ISS's ELF loader fills a staging bus; its regions are copied into the SystemC memory.
        iss::Bus staging(preset);
        const iss::ElfImage img = iss::load_elf(elf, staging);
        auto memory = std::make_unique<McuMemory>("mcu_mem", preset);
        for (size_t i = 0; i < preset.memory.size(); ++i) {
            const auto& reg = preset.memory[i];
            if (const uint8_t* src = staging.host_ptr(reg.base, reg.size_bytes)) std::memcpy(memory->mem[i].data(), src, reg.size_bytes);
        }
        if (!blob.empty()) {
            const int i = memory->find(t.blob_base, uint32_t(blob.size()));
            if (i < 0) throw std::runtime_error("blob region not in the memory map");
            std::memcpy(&memory->mem[size_t(i)][t.blob_base - preset.memory[size_t(i)].base], blob.data(), blob.size());
        }
        auto core = std::make_unique<iss::RiscvCore>("mcu_core", preset, sc_core::sc_time(1, sc_core::SC_US));
        sc_core::sc_signal<bool> no_irq{"no_irq"};
        std::vector<std::unique_ptr<sc_core::sc_signal<bool>>> local;
        core->socket.bind(memory->socket);
        core->irq_external.bind(no_irq);
        for (size_t i = 0; i < core->irq_local.size(); ++i) {
            local.push_back(std::make_unique<sc_core::sc_signal<bool>>());
            core->irq_local[i].bind(*local.back());
        }
        iss::Semihost semihost(elf, preset.cycles.clock_hz);
        core->hart().set_semihost(&semihost);
        core->hart().console_out = [&r](const char* s, size_t n) { r.console.append(s, n); };
        core->start(img.entry);
        // Simulated-time guard: max_insns at one instruction per cycle is far beyond any model run.
        const double limit_s = std::min(3600.0, double(max_insns) / double(preset.cycles.clock_hz));
        sc_core::sc_start(sc_core::sc_time(limit_s, sc_core::SC_SEC));
        r.total_cycles = core->hart().cycles_;
        r.total_instret = core->hart().instret_;
        if (core->stop_reason() == iss::StopReason::kExit) r.exit_code = core->hart().exit_code();
        else r.error = core->finished() ? "ISS: " + core->hart().stop_message() : "SystemC run did not finish";
    } catch (const std::exception& e) {
        r.error = std::string("SystemC platform: ") + e.what();
        return r;
    }
    mcu::parse_firmware_console(r);
    if (r.error.empty() && r.exit_code != 0) r.error = "firmware exit code " + std::to_string(r.exit_code);
    return r;
}

}  // namespace mcu_sc
