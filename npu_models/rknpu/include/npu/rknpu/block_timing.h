// SPDX-License-Identifier: MIT
// Cycle cost of the DPU and PPU stages (no data; SG-8.4): element counts in 16-byte atoms divided
// by a per-stage throughput. The throughputs are not public; they are named constants here until
// the SoC profile carries them (to move into hw::NpuParams: see the constants' comments).
#pragma once
#include <cstdint>

#include "hw/profile.h"
#include "npu/rknpu/cube.h"

namespace npu::rknpu {

/// UNVERIFIED (profile candidate npu.dpu_atoms_per_cycle): the DPU consumes one 16-byte atom
/// (16 int8 or 8 fp16 elements) per cycle through BS/BN/EW/LUT/convert, the NVDLA SDP rate.
inline constexpr uint64_t kDpuAtomsPerCycle = 1;
/// UNVERIFIED (profile candidate npu.dpu_lut_atoms_per_cycle): the LUT stage keeps that rate.
inline constexpr uint64_t kDpuLutAtomsPerCycle = 1;
/// UNVERIFIED (profile candidate npu.ppu_atoms_per_cycle): the PPU reads each input atom once
/// into its line buffers and emits one output atom per cycle; cost = max(input, output) atoms.
inline constexpr uint64_t kPpuAtomsPerCycle = 1;

/// Atoms of a w x h x c cube in precision p (`atom`: the SoC's atom bytes, atom_bytes(profile)).
inline uint64_t cube_atoms(uint32_t w, uint32_t h, uint32_t c, Precision p, uint32_t atom = kAtomBytes) {
    return cube_bytes(w, h, c, p, atom) / atom;
}

/// DPU cycles for a w x h x c output cube.
inline uint64_t dpu_cycles(uint32_t w, uint32_t h, uint32_t c, Precision out, bool lut, uint32_t atom = kAtomBytes) {
    const uint64_t rate = lut ? (kDpuLutAtomsPerCycle < kDpuAtomsPerCycle ? kDpuLutAtomsPerCycle : kDpuAtomsPerCycle)
                              : kDpuAtomsPerCycle;
    return (cube_atoms(w, h, c, out, atom) + rate - 1) / rate;
}

/// PPU cycles from its input and output atoms.
inline uint64_t ppu_cycles(uint64_t in_atoms, uint64_t out_atoms) {
    const uint64_t a = in_atoms > out_atoms ? in_atoms : out_atoms;
    return (a + kPpuAtomsPerCycle - 1) / kPpuAtomsPerCycle;
}

}  // namespace npu::rknpu
