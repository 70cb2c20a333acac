// SPDX-License-Identifier: MIT
// MCU target table (see mcu_target.h; sources in firmware/boards/*.ld and docs/mcu-targets.md).
#include "mcu/mcu_target.h"

#include <algorithm>
#include <cctype>

namespace mcu {

const std::vector<McuTarget>& all_targets() {
    static const std::vector<McuTarget> t = [] {
        std::vector<McuTarget> v;
        McuTarget ws63;
        ws63.name = "ws63";
        ws63.iss_preset = "ws63";
        ws63.spec_platform = "ws63";
        ws63.clock_hz = 240000000;  // docs/mcu-targets.md 1.1
        ws63.flash_base = 0x00230300;  // application entry; 0x200000..0x230300 = boot loader
        ws63.flash_bytes = 0x00600000 - 0x00230300;
        ws63.fw_flash_base = 0x00230300;
        ws63.fw_flash_bytes = 0x000CFD00;
        ws63.blob_base = 0x00300000;
        ws63.blob_bytes = 0x00300000;
        ws63.sram_base = 0x00A00000;
        ws63.sram_bytes = 0x00090000;  // 576 KiB of the 606 KB (the rest: ROM data, TCMs)
        ws63.stack_bytes = 0x2000;
        ws63.unknowns = {"flash wait states behind the XIP cache (ISS preset: 2 cycles/fetch, no cache model)",
                         "cycle table: CV32E40P figures until calibrated on a board"};
        v.push_back(ws63);
        McuTarget h;
        h.name = "3066h";
        h.iss_preset = "3066h";
        h.spec_platform = "3066H";
        h.clock_hz = 200000000;  // 3066M datasheet
        h.flash_base = 0x03000000;
        h.flash_bytes = 0x00080000;  // up to 512 KB
        h.fw_flash_base = 0x03000000;
        h.fw_flash_bytes = 0x00014000;
        h.blob_base = 0x03014000;
        h.blob_bytes = 0x0006C000;
        h.sram_base = 0x02000000;
        h.sram_bytes = 0x00010000;  // 64 KB
        h.stack_bytes = 0x1000;
        h.unknowns = {"part name: seed 000's '3066H' is taken to be the 3066M (no 3066H in open_mcu)",
                      "flash base 0x3000000 (datasheet gives the size only)", "flash wait states (ISS preset: 1)",
                      "cycle table: CV32E40P figures until calibrated"};
        v.push_back(h);
        return v;
    }();
    return t;
}

const McuTarget* find_target(const std::string& name) {
    std::string n = name;
    std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (n == "3066m" || n == "hi3066h" || n == "3066") n = "3066h";
    if (n == "hi3863") n = "ws63";
    for (const auto& t : all_targets())
        if (t.name == n) return &t;
    return nullptr;
}

}  // namespace mcu
