// SPDX-License-Identifier: MIT
// Core preset: ISA switches, cycle table and memory map of one MCU core, loaded from
// riscv_iss/presets/<name>.json (SG-8.3.4: keys carry units, unknown keys are errors).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace iss {

/// Sdtrig trigger module (RISC-V Debug Specification 0.13.2 ch. 5 / Sdtrig 1.0): `count` match-control
/// (mcontrol, type 2) triggers with the access kinds they can match. With debugger_only, tdata1.dmode
/// is hardwired to 1: only the debugger (GDB hardware breakpoints) may program them and M-mode writes are
/// ignored (CV32E40P). count = 0: the trigger CSRs exist and report no trigger.
struct TriggerConfig {
    uint32_t count = 0;
    bool execute = true, load = false, store = false;
    bool debugger_only = false;
};

/// Which extensions exist; a disabled extension's encodings decode as illegal instructions.
struct IsaConfig {
    bool m = true, a = true, f = true, c = true, u_mode = true;
    /// true: misaligned loads/stores raise address-misaligned; false: the core performs them as one or
    /// two aligned bus transactions (the second costs CycleModel::misaligned_penalty). AMOs always trap.
    bool misaligned_trap = true;
    TriggerConfig triggers;
    uint32_t reset_pc = 0x80000000u;
    uint32_t mhartid = 0;
    uint32_t mvendorid = 0, marchid = 0, mimpid = 0;
    uint32_t misa() const;
};

/// Per-instruction-class cost in core cycles (CV32E40P-like by default,
/// openhwgroup/cv32e40p:docs/source/pipeline.rst). Values tagged UNVERIFIED in a preset are guesses.
struct CycleModel {
    uint32_t alu = 1, mul = 1, mulh = 5, div_min = 3, div_max = 35, div_by_zero = 35;
    uint32_t load = 1, store = 1, misaligned_penalty = 1;
    uint32_t jal = 2, jalr = 2, branch_not_taken = 1, branch_taken = 3;
    uint32_t csr = 1, csr_slow = 4, fence = 1, fence_i = 2, system = 4, wfi = 2, amo = 2;
    uint32_t fp_add = 1, fp_mul = 1, fp_fma = 1, fp_div = 19, fp_sqrt = 19, fp_cvt = 1, fp_cmp = 1, fp_mv = 1;
    uint32_t load_use_penalty = 1, jalr_use_penalty = 1;
    uint64_t clock_hz = 100000000;  ///< core clock, converts cycles to time in the TLM wrapper
    uint32_t mtime_divider = 100;   ///< core cycles per CLINT mtime tick
};

struct RegionConfig {
    std::string name;
    uint32_t base = 0;
    uint32_t size_bytes = 0;
    bool writable = true;
    uint8_t read_wait_cycles = 0, write_wait_cycles = 0, fetch_wait_cycles = 0;
};

/// Fixed MMIO addresses of the built-in devices (0 disables one).
struct DeviceMap {
    uint32_t clint_base = 0x02000000u;          ///< SiFive CLINT layout: msip +0, mtimecmp +0x4000, mtime +0xbff8
    uint32_t console_base = 0x10000000u;        ///< 16550-style THR at +0, LSR at +5 (QEMU virt's UART address)
    uint32_t test_finisher_base = 0x00100000u;  ///< SiFive test device (QEMU virt): 0x5555 pass, code<<16|0x3333 fail
};

struct CorePreset {
    std::string name;
    std::string description;
    IsaConfig isa;
    CycleModel cycles;
    DeviceMap devices;
    std::vector<RegionConfig> memory;
};

/// Loads a preset by name ("cv32e40p", "ws63", "3066h") from `preset_dir`, or a JSON file path.
/// Throws std::runtime_error naming the file and JSON path on any error.
CorePreset load_preset(const std::string& name_or_path, const std::string& preset_dir);

/// Directory holding the preset JSON files (compiled-in source path, overridable by RVISS_PRESET_DIR).
std::string default_preset_dir();

}  // namespace iss
