// SPDX-License-Identifier: MIT
// Entry point of `npusim iss` / `rviss`: load an ELF on a core preset and run it standalone.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace iss {

/// Options of `npusim iss [--core-preset ws63] PROG.elf [--gdb :PORT] [--trace FILE] [--max-insns N] ...`.
struct RunOptions {
    std::string elf;                 ///< program to run (required)
    std::string core = "cv32e40p";   ///< preset name (riscv_iss/presets/<name>.json) or a JSON path
    std::string platform;            ///< MCU platform (ws63, 3066h): its core preset; exclusive with a non-default core
    std::string profile_misused;     ///< `--profile` given: an error (the ISS's profile is --func-profile)
    std::string preset_dir;          ///< where presets live; empty = iss::default_preset_dir()
    std::string gdb;                 ///< ":PORT" / "HOST:PORT" = GDB remote stub over TCP, "stdio" = over stdin/stdout
    std::string trace;               ///< Spike-style commit log file incl. traps ("-" = stderr)
    std::string profile;             ///< per-function cycle profile file, --func-profile ("-" = stderr)
    uint64_t max_insns = 0;          ///< stop with kExitInsnLimit after this many attempted instructions (0 = none)
    std::string max_insns_text;      ///< --max-insns as typed (checked: 0 .. kMaxInsnsLimit); overrides max_insns
    bool stats = false;              ///< print instructions, cycles and host MIPS to stderr at the end
    std::vector<std::string> dumps;  ///< "ADDR:LEN=FILE": raw memory bytes written to FILE when the run ends
    std::string signature;           ///< riscv-arch-test signature file (begin_signature .. end_signature)
    std::string engine;              ///< "" or "blocks" (default), "step" (the reference engine)
    std::string tool = "rviss";      ///< prefix of error messages ("npusim" when run as `npusim iss`)
};

/// The largest --max-insns (a day of simulation at 10 GIPS is below it; larger values are typos).
constexpr uint64_t kMaxInsnsLimit = 1000000000000000ull;

/// Exit codes of run_cli() besides the guest's own exit code (0..118 pass through unchanged), following
/// the npusim CLI conventions (shared docs cli.md).
enum ExitCode : int {
    kExitUsage = 2,                ///< invalid options (bad --gdb address, --max-insns out of range, ...), missing program
    kExitGuestCodeTooLarge = 119,  ///< the guest exited with a code outside 0..118 (the message gives it)
    kExitLoadError = 120,          ///< bad ELF (present but not loadable), unknown or invalid preset
    kExitIllegalInsn = 121,        ///< illegal instruction with no trap handler
    kExitWildJump = 122,           ///< fetch from unmapped memory with no trap handler
    kExitAccessFault = 123,        ///< load/store to unmapped memory with no trap handler
    kExitDeadlock = 125,           ///< WFI with nothing that could ever wake the hart
    kExitUnhandledTrap = 126,      ///< any other trap with no handler
    kExitInsnLimit = 127,          ///< --max-insns exhausted (runaway loop or trap storm)
};

/// Runs one program; prints guest console output to stdout and one-line errors ("<tool>: error: ...") to
/// stderr. A riscv-tests HTIF failure (tohost = N << 1 | 1) reports "tohost: test N failed" and exits N.
/// Never throws, never calls exit(). Called by tools/rviss_main.cpp and by `npusim iss`.
int run_cli(const RunOptions& options);

}  // namespace iss
