// SPDX-License-Identifier: MIT
// The HiSpark MCU targets of seed 000 as the MCU path sees them: clock, memory map split into the
// firmware image, the model-blob flash region and SRAM, the ISS preset, the spec-DB platform and the
// SoC devices (UART, timer, interrupt lines) the SystemC platform models. Generated at build time from
// one profile per MCU (hwdesc/profiles/mcu/<name>.json, drivers/mcu/tools/gen_mcu_board.py), as are
// the firmware linker scripts and the ISS presets (a test checks the ELFs' symbols agree).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace mcu {

struct McuTarget {
    std::string name;          ///< "ws63", "3066h"
    std::string display_name;  ///< "HiSpark WS63 (Hi3863)"
    std::vector<std::string> aliases;
    std::string iss_preset;    ///< the generated ISS preset <iss_preset>.json
    std::string spec_platform; ///< drivers/compiler/specs platform id for the seed-000 check
    uint64_t clock_hz = 0;
    uint32_t flash_base = 0, flash_bytes = 0;        ///< whole flash usable by the application
    uint32_t fw_flash_base = 0, fw_flash_bytes = 0;  ///< firmware image region
    uint32_t blob_base = 0, blob_bytes = 0;          ///< model blob region (written by the host)
    uint32_t sram_base = 0, sram_bytes = 0;
    uint32_t stack_bytes = 0;
    bool hot_code_in_ram = false;  ///< the firmware variant with the hot kernels in SRAM
    // SoC devices (the SystemC platform): UART register model "hisilicon_ws63" / "pl011" / "ns16550",
    // timer model "dw_apb_timer" / "unmodelled", the local interrupt lines (mip bits) and the CLINT stand-in.
    uint32_t uart_base = 0;
    std::string uart_model;
    uint32_t timer_base = 0;
    std::string timer_model;
    uint32_t timer_channels = 0, timer_clock_hz = 0, timer_irq = 0;
    uint32_t local_irq_lo = 0, local_irq_hi = 0;
    uint32_t clint_base = 0;
    std::vector<std::string> unknowns;  ///< figures that are assumptions (UNVERIFIED), with the reason
};

/// Known targets: "ws63", "3066h" and their aliases. Case-insensitive; nullptr when unknown.
const McuTarget* find_target(const std::string& name);
const std::vector<McuTarget>& all_targets();

}  // namespace mcu
