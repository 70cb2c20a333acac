// SPDX-License-Identifier: MIT
// A HiSpark MCU (ws63, 3066H) as a SystemC platform: iss::RiscvCore on a TLM bus with the core
// preset's memory map (flash, SRAM, TCMs, ROM) as one target with DMI - the core applies the
// preset's per-region fetch/read wait states - and a 16550-style UART console at the preset's
// devices.console_base behind b_transport (MMIO: the quantum keeper synchronises there). The
// machine timer and software interrupt are the CLINT inside the hart (mtime = cycles /
// mtime_divider); the external and local interrupt lines come from an interrupt controller whose
// sources are the platform's devices (none raises one in model runs). What npusim run --platform
// ws63|3066h executes the firmware on; one platform per process (a SystemC kernel elaborates once).
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "riscv_iss/core_preset.h"

namespace iss {

struct McuPlatformRun {
    int exit_code = -1;         ///< guest exit code (valid when error is empty or names the code)
    std::string error;          ///< why the run failed; empty when the guest exited
    std::string console;        ///< semihosting and UART output, in order
    uint64_t cycles = 0, instret = 0;
    double sim_time_s = 0.0;    ///< SystemC time at the end (cycles at the preset clock)
};

/// Loads `elf`, copies each {address, bytes} (e.g. a model blob into flash) and runs until the guest
/// exits, faults or `max_insns` worth of cycles pass. Never throws.
McuPlatformRun run_mcu_platform(const CorePreset& preset, const std::string& elf,
                                const std::vector<std::pair<uint32_t, std::vector<uint8_t>>>& loads, uint64_t max_insns);

}  // namespace iss
