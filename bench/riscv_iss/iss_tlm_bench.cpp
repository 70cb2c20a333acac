// SPDX-License-Identifier: MIT
// Speed of the ISS inside SystemC (issue 7 acceptance 3: >= 50 MIPS in the wrapper): runs a guest ELF on
// RiscvCore with a memory target that serves DMI from an iss::Bus (RAM, console, test finisher) and
// reports host MIPS. Host time is measured here, in the benchmark driver, never inside the models.
#include <tlm_utils/simple_target_socket.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <systemc>

#include "riscv_iss/bus.h"
#include "riscv_iss/elf_image.h"
#include "riscv_iss/semihost.h"
#include "riscv_iss_tlm/riscv_core.h"

namespace {

struct BusTarget : sc_core::sc_module {
    tlm_utils::simple_target_socket<BusTarget> socket{"socket"};
    iss::Bus& bus;
    BusTarget(const sc_core::sc_module_name& n, iss::Bus& b) : sc_core::sc_module(n), bus(b) {
        socket.register_b_transport(this, &BusTarget::b_transport);
        socket.register_get_direct_mem_ptr(this, &BusTarget::get_dmi);
    }
    void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time&) {
        uint64_t wait = 0;
        const auto a = static_cast<uint32_t>(gp.get_address());
        const bool ok = gp.is_read() ? bus.read(a, gp.get_data_length(), gp.get_data_ptr(), 0, wait)
                                     : bus.write(a, gp.get_data_length(), gp.get_data_ptr(), 0, wait);
        gp.set_response_status(ok ? tlm::TLM_OK_RESPONSE : tlm::TLM_ADDRESS_ERROR_RESPONSE);
    }
    bool get_dmi(tlm::tlm_generic_payload& gp, tlm::tlm_dmi& dmi) {
        iss::DmiRegion r;
        if (!bus.get_dmi(static_cast<uint32_t>(gp.get_address()), r)) return false;
        dmi.set_dmi_ptr(r.host);
        dmi.set_start_address(r.base);
        dmi.set_end_address(static_cast<uint64_t>(r.base) + r.size - 1);
        dmi.allow_read_write();
        return true;
    }
};

}  // namespace

int sc_main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: iss_tlm_bench PROG.elf [quantum_us]\n");
        return 2;
    }
    const double quantum_us = argc > 2 ? std::atof(argv[2]) : 10.0;
    const iss::CorePreset preset = iss::load_preset("cv32e40p", iss::default_preset_dir());
    iss::Bus bus(preset);
    const iss::ElfImage img = iss::load_elf(argv[1], bus);
    BusTarget target("mem", bus);
    iss::RiscvCore core("core", preset, sc_core::sc_time(quantum_us, sc_core::SC_US));
    sc_core::sc_signal<bool> irq_ext("irq_ext"), local[16];
    core.socket.bind(target.socket);
    core.irq_external.bind(irq_ext);
    for (unsigned i = 0; i < 16; ++i) core.irq_local[i].bind(local[i]);
    bus.attach(&core.hart());
    iss::Semihost semihost(argv[1], preset.cycles.clock_hz);
    core.hart().set_semihost(&semihost);
    core.hart().set_tohost(img.tohost, img.fromhost);
    core.hart().console_out = [](const char* s, size_t n) { std::fwrite(s, 1, n, stdout); };
    core.start(img.entry);
    const auto t0 = std::chrono::steady_clock::now();
    const std::clock_t c0 = std::clock();
    sc_core::sc_start();
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double cpu = static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC;
    const auto insns = static_cast<double>(core.hart().instret_);
    std::fflush(stdout);
    std::fprintf(stderr,
                 "iss_tlm_bench: %.0f instructions, sim time %s, quantum %.1f us, %.3f s wall, %.3f s cpu, "
                 "%.1f MIPS (cpu)\n",
                 insns, sc_core::sc_time_stamp().to_string().c_str(), quantum_us, wall, cpu, insns / cpu / 1e6);
    return core.hart().exit_code();
}
