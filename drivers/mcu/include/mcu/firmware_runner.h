// SPDX-License-Identifier: MIT
// Runs the cross-built MCU firmware on the RISC-V ISS (riscv_iss core library, the target's core
// preset and memory map) with a model blob placed in the flash blob region, and parses what the
// firmware prints over semihosting. Also the memory-fit check that precedes every run.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "mcu/mcu_target.h"

namespace mcu {

struct LayerCycles {
    uint32_t index = 0, op = 0;
    uint64_t cycles = 0, instret = 0;
    std::string name;
};

struct FirmwareRun {
    int exit_code = -1;            ///< guest exit code; < 0 when the ISS stopped abnormally
    std::string error;             ///< why the run failed (ISS fatal stop, bad output), empty when fine
    std::string console;           ///< everything the firmware printed
    std::vector<LayerCycles> layers;
    std::vector<std::vector<uint8_t>> outputs;  ///< "O" lines in order
    uint64_t schedule_cycles = 0, schedule_instret = 0;  ///< "T" line: all layers
    uint64_t total_cycles = 0, total_instret = 0;        ///< whole run incl. start-up and printing
    double host_cpu_seconds = 0.0;
};

/// Directory of the cross-built ELFs: $NPUSIM_MCU_FIRMWARE_DIR, else share/npusim/firmware beside the binary.
std::string firmware_dir();
/// Path of mcu_<program>_<target>.elf ("runtime", "selftest", "bench").
std::string firmware_elf(const McuTarget& t, const std::string& program);

/// Runs `elf` on the target's ISS preset; `blob` (may be empty) is copied to the blob region first.
/// Never throws: load errors are reported in `error`.
FirmwareRun run_firmware(const McuTarget& t, const std::string& elf, const std::vector<uint8_t>& blob,
                         uint64_t max_insns = 4000000000ull);

/// Fills layers/outputs/schedule counters of `r` from r.console (the firmware's protocol, see
/// firmware/runtime/main.c). For executors other than run_firmware().
void parse_firmware_console(FirmwareRun& r);

/// How run_cli executes the firmware: run_firmware() (ISS core, standalone bus) by default; sim/ may
/// pass one that runs the same ELF and blob on the ISS inside the SystemC platform.
using FirmwareExecutor = std::function<FirmwareRun(const McuTarget&, const std::string& elf,
                                                   const std::vector<uint8_t>& blob, uint64_t max_insns)>;

/// Image sizes of an ELF from its program headers: flash (text/rodata/data load image) and SRAM
/// (data + bss + picolibc's stack reservation).
struct ElfFootprint {
    uint32_t flash_bytes = 0, sram_bytes = 0;
    bool ok = false;
    std::string error;
};
ElfFootprint elf_footprint(const std::string& elf, const McuTarget& t);

/// Memory fit of a model on a target, with the figures (issue 8: rejected before running).
struct FitReport {
    bool fits = false;
    uint32_t fw_flash = 0, blob_bytes = 0, flash_used = 0, flash_total = 0, blob_region = 0;
    uint32_t fw_sram = 0, arena_bytes = 0, sram_used = 0, sram_total = 0;
    std::vector<std::string> problems;  ///< "flash: needs X bytes, has Y" ...
    std::string text() const;           ///< multi-line human report
};
FitReport check_fit(const McuTarget& t, const ElfFootprint& fw, uint32_t blob_bytes, uint32_t arena_bytes);

}  // namespace mcu
