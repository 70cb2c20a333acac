// SPDX-License-Identifier: MIT
// The HiSpark MCU targets of seed 000 as the MCU path sees them: clock, memory map split into the
// firmware image, the model-blob flash region and SRAM, the ISS preset and the spec-DB platform.
// Figures single-sourced with firmware/boards/<name>.ld and riscv_iss/presets/<name>.json (a test
// checks they agree with the ELF's symbols).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace mcu {

struct McuTarget {
    std::string name;          ///< "ws63", "3066h"
    std::string iss_preset;    ///< riscv_iss/presets/<iss_preset>.json
    std::string spec_platform; ///< drivers/compiler/specs platform id for the seed-000 check
    uint64_t clock_hz = 0;
    uint32_t flash_base = 0, flash_bytes = 0;        ///< whole flash usable by the application
    uint32_t fw_flash_base = 0, fw_flash_bytes = 0;  ///< firmware image region
    uint32_t blob_base = 0, blob_bytes = 0;          ///< model blob region (written by the host)
    uint32_t sram_base = 0, sram_bytes = 0;
    uint32_t stack_bytes = 0;
    std::vector<std::string> unknowns;  ///< figures that are assumptions (UNVERIFIED)
};

/// Known targets: "ws63", "3066h" (alias "3066m"). Case-insensitive; nullptr when unknown.
const McuTarget* find_target(const std::string& name);
const std::vector<McuTarget>& all_targets();

}  // namespace mcu
