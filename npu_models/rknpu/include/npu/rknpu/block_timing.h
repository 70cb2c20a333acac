// SPDX-License-Identifier: MIT
// Cycle cost of the DPU and PPU stages (no data; SG-8.4): element counts in 16-byte atoms divided
// by a per-stage throughput (atom = npu.c2_int8 bytes) from the SoC profile (npu.dpu_atoms_per_cycle,
// npu.dpu_lut_atoms_per_cycle, npu.ppu_atoms_per_cycle; graded unknown: not public).
#pragma once
#include <cmath>
#include <cstdint>

#include "hw/profile.h"
#include "npu/rknpu/cube.h"

namespace npu::rknpu {

/// Atoms of a w x h x c cube in precision p (atom = the profile's atom bytes, cube.h atom_bytes).
inline uint64_t cube_atoms(uint32_t w, uint32_t h, uint32_t c, Precision p, uint32_t atom = kAtomBytes) {
    return cube_bytes(w, h, c, p, atom) / atom;
}

/// ceil(atoms / rate) for a fractional rate (exact for integral rates).
inline uint64_t atoms_to_cycles(uint64_t atoms, double atoms_per_cycle) {
    return static_cast<uint64_t>(std::ceil(static_cast<double>(atoms) / atoms_per_cycle - 1e-9));
}

/// DPU cycles for a w x h x c output cube: BS/BN/EW/convert at npu.dpu_atoms_per_cycle; with the
/// LUT in the path the slower of that and npu.dpu_lut_atoms_per_cycle.
inline uint64_t dpu_cycles(const hw::NpuParams& n, uint32_t w, uint32_t h, uint32_t c, Precision out, bool lut,
                           uint32_t atom = kAtomBytes) {
    double rate = n.dpu_atoms_per_cycle.value;
    if (lut && n.dpu_lut_atoms_per_cycle.value < rate) rate = n.dpu_lut_atoms_per_cycle.value;
    return atoms_to_cycles(cube_atoms(w, h, c, out, atom), rate);
}

/// PPU cycles: it reads each input atom once into its line buffers and emits its output atoms;
/// cost = max(input, output) atoms at npu.ppu_atoms_per_cycle.
inline uint64_t ppu_cycles(const hw::NpuParams& n, uint64_t in_atoms, uint64_t out_atoms) {
    return atoms_to_cycles(in_atoms > out_atoms ? in_atoms : out_atoms, n.ppu_atoms_per_cycle.value);
}

}  // namespace npu::rknpu
