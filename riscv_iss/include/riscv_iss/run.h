// SPDX-License-Identifier: MIT
// Entry point of `npusim iss` / `rviss`: load an ELF on a core preset and run it standalone.
#pragma once
#include <cstdint>
#include <string>

namespace iss {

/// Options of `npusim iss [--core ws63] PROG.elf [--gdb :PORT] [--trace FILE] [--max-insns N]`.
struct RunOptions {
    std::string elf;                ///< program to run (required)
    std::string core = "cv32e40p";  ///< preset name (riscv_iss/presets/<name>.json) or a JSON path
    std::string preset_dir;         ///< where presets live; empty = iss::default_preset_dir()
    std::string gdb;                ///< ":PORT" / "HOST:PORT" = GDB remote stub over TCP, "stdio" = over stdin/stdout
    std::string trace;              ///< Spike-style commit log file ("-" = stderr)
    std::string profile;            ///< per-function cycle profile file ("-" = stderr)
    uint64_t max_insns = 0;         ///< stop with kExitInsnLimit after this many instructions (0 = no limit)
    bool stats = false;             ///< print instructions, cycles and host MIPS to stderr at the end
};

/// Exit codes of run_cli() besides the guest's own exit code (0..119 pass through unchanged;
/// larger guest codes are reported as kExitGuestCodeTooLarge).
enum ExitCode : int {
    kExitGuestCodeTooLarge = 119,
    kExitLoadError = 120,      ///< bad ELF, unknown preset, unreadable file
    kExitIllegalInsn = 121,    ///< illegal instruction with no trap handler
    kExitWildJump = 122,       ///< fetch from unmapped memory with no trap handler
    kExitAccessFault = 123,    ///< load/store to unmapped memory with no trap handler
    kExitInsnLimit = 124,      ///< --max-insns exhausted (runaway loop)
    kExitDeadlock = 125,       ///< WFI with nothing that could ever wake the hart
    kExitUnhandledTrap = 126,  ///< any other trap with no handler
    kExitUsage = 127,          ///< invalid options (e.g. bad --gdb address)
};

/// Runs one program; prints guest console output to stdout and one-line errors ("rviss: error: ...")
/// to stderr. Never throws, never calls exit(). Called by tools/rviss_main.cpp and by `npusim iss`.
int run_cli(const RunOptions& options);

}  // namespace iss
