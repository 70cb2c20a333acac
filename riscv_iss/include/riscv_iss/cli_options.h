// SPDX-License-Identifier: MIT
// The option set of `rviss` / `npusim iss`, for any CLI11 (sub)command: the lead's npusim CLI calls
// iss::add_run_options(*app.add_subcommand("iss", ...), opts) and then iss::run_cli(opts).
#pragma once
#include <CLI/CLI.hpp>

#include "riscv_iss/run.h"

namespace iss {

inline void add_run_options(CLI::App& app, RunOptions& opt) {
    app.add_option("program", opt.elf, "RV32 ELF executable")->required();
    app.add_option("--core", opt.core, "core preset name (cv32e40p, ws63, 3066h) or preset JSON path");
    app.add_option("--preset-dir", opt.preset_dir, "directory with preset JSON files");
    app.add_option("--gdb", opt.gdb, "GDB remote stub: :PORT or HOST:PORT (TCP), or stdio");
    app.add_option("--trace", opt.trace, "Spike-style commit log file (- = stderr)");
    app.add_option("--profile", opt.profile, "per-function cycle profile file (- = stderr)");
    app.add_option("--max-insns", opt.max_insns, "stop after N instructions (exit code 124)");
    app.add_flag("--stats", opt.stats, "print instruction/cycle counts and MIPS to stderr");
}

}  // namespace iss
