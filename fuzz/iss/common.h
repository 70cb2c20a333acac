// SPDX-License-Identifier: MIT
// Shared by the ISS fuzz targets: a small core (64 KiB RAM at 0x80000000, QEMU-virt devices, both
// triggers kinds, misaligned accesses performed) built in code so no preset file is needed.
#pragma once
#include "riscv_iss/core_preset.h"

namespace iss::fuzz {

inline CorePreset small_core(bool misaligned_trap = false) {
    CorePreset p;
    p.name = "fuzz";
    p.isa.misaligned_trap = misaligned_trap;
    p.isa.triggers.count = 2;
    p.isa.triggers.execute = p.isa.triggers.load = p.isa.triggers.store = true;
    p.memory.push_back({"ram", 0x80000000u, 0x4000, true, 0, 0, 0});
    p.memory.push_back({"rom", 0x80100000u, 0x1000, false, 1, 0, 2});
    return p;
}

}  // namespace iss::fuzz
