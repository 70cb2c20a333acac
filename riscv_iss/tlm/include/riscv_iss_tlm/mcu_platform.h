// SPDX-License-Identifier: MIT
// A HiSpark MCU (ws63, 3066H) as a SystemC platform: iss::RiscvCore on a TLM bus with the core
// preset's memory map (flash, SRAM, TCMs, ROM) as one target with DMI - the core applies the
// preset's per-region fetch/read wait states - and the SoC devices of the MCU's profile
// (hwdesc/profiles/mcu, through mcu::McuTarget) behind b_transport (MMIO: the quantum keeper
// synchronises there): the UART with the SoC's register layout at its base (console), the timer (the
// WS63's DesignWare APB timers, their interrupt on a local line; a window that reads 0 where the
// profile has no register model), and an interrupt controller driving the hart's local lines (mip
// bits 16-31; the profile's local range). The machine timer and software interrupt are the CLINT
// inside the hart (mtime = cycles / mtime_divider). What npusim run --platform ws63|3066h executes the
// firmware on; one platform per process (a SystemC kernel elaborates once).
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "riscv_iss/core_preset.h"

namespace iss {

/// The SoC devices of an MCU profile (mcu::McuTarget's fields of the same names).
struct McuDevices {
    uint32_t uart_base = 0;
    std::string uart_model;   ///< "hisilicon_ws63", "pl011", "ns16550"; empty: none
    uint32_t timer_base = 0;
    std::string timer_model;  ///< "dw_apb_timer", "unmodelled"; empty: none
    uint32_t timer_channels = 0, timer_clock_hz = 0, timer_irq = 0;
    uint32_t local_irq_lo = 16, local_irq_hi = 31;  ///< interrupt numbers delivered as mip bits
};

/// McuDevices from anything with those fields (mcu::McuTarget), without a dependency on it.
template <typename T>
McuDevices mcu_devices_of(const T& t) {
    McuDevices d;
    d.uart_base = t.uart_base, d.uart_model = t.uart_model, d.timer_base = t.timer_base, d.timer_model = t.timer_model;
    d.timer_channels = t.timer_channels, d.timer_clock_hz = t.timer_clock_hz, d.timer_irq = t.timer_irq;
    d.local_irq_lo = t.local_irq_lo, d.local_irq_hi = t.local_irq_hi;
    return d;
}

struct McuPlatformRun {
    int exit_code = -1;         ///< guest exit code (valid when error is empty or names the code)
    std::string error;          ///< why the run failed; empty when the guest exited
    std::string console;        ///< semihosting and UART output, in order
    uint64_t cycles = 0, instret = 0;
    double sim_time_s = 0.0;    ///< SystemC time at the end (cycles at the preset clock)
};

/// Loads `elf`, copies each {address, bytes} (e.g. a model blob into flash) and runs until the guest
/// exits, faults or `max_insns` worth of cycles pass. Never throws.
McuPlatformRun run_mcu_platform(const CorePreset& preset, const McuDevices& devices, const std::string& elf,
                                const std::vector<std::pair<uint32_t, std::vector<uint8_t>>>& loads, uint64_t max_insns);

}  // namespace iss
