// SPDX-License-Identifier: MIT
// SystemC executor of the MCU firmware (see mcu_systemc_executor.h): iss::run_mcu_platform.
#include "mcu_systemc_executor.h"

#include "riscv_iss/core_preset.h"
#include "riscv_iss_tlm/mcu_platform.h"

namespace mcu_sc {

mcu::FirmwareRun run_in_systemc(const mcu::McuTarget& t, const std::string& elf, const std::vector<uint8_t>& blob,
                                uint64_t max_insns) {
    mcu::FirmwareRun r;
    iss::McuPlatformRun p;
    try {
        p = iss::run_mcu_platform(iss::load_preset(t.iss_preset, iss::default_preset_dir()), iss::mcu_devices_of(t), elf, {{t.blob_base, blob}}, max_insns);
    } catch (const std::exception& e) {
        r.error = std::string("SystemC platform: ") + e.what();
        return r;
    }
    r.console = p.console;
    r.total_cycles = p.cycles;
    r.total_instret = p.instret;
    r.exit_code = p.exit_code;
    r.error = p.error;
    mcu::parse_firmware_console(r);
    if (r.error.empty() && r.exit_code != 0) r.error = "firmware exit code " + std::to_string(r.exit_code);
    return r;
}

}  // namespace mcu_sc
