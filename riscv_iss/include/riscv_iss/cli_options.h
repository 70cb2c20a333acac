// SPDX-License-Identifier: MIT
// The option set of `rviss` / `npusim iss`, for any CLI11 (sub)command: the lead's npusim CLI calls
// iss::add_run_options(*app.add_subcommand("iss", ...), opts) and then iss::run_cli(opts). Names follow
// the shared CLI conventions (cli.md): --platform / --core-preset, --func-profile, --dump ADDR:LEN=FILE.
#pragma once
#include <CLI/CLI.hpp>

#include "riscv_iss/run.h"

namespace iss {

inline void add_run_options(CLI::App& app, RunOptions& opt) {
    app.add_option("program", opt.elf, "RV32 ELF executable")->required();
    app.add_option("-p,--platform", opt.platform, "MCU platform whose core runs the program (ws63, 3066h)");
    app.add_option("--core-preset,--core", opt.core,
                   "bare core preset name (cv32e40p, ws63, 3066h) or preset JSON file (default cv32e40p)");
    app.add_option("--preset-dir", opt.preset_dir, "directory with preset JSON files");
    app.add_option("--gdb", opt.gdb, "GDB remote stub: :PORT or HOST:PORT (TCP), or stdio");
    app.add_option("--trace", opt.trace, "Spike-style commit log with traps (- = stderr)");
    app.add_option("--func-profile", opt.profile, "per-function cycle profile (- = stderr)");
    app.add_option("--profile", opt.profile_misused, "(not for iss: a SoC profile JSON; see --func-profile)")
        ->group("");
    app.add_option("--max-insns", opt.max_insns_text,
                   "stop after N attempted instructions, traps included (0 = no limit; exit code 127)");
    app.add_option("--dump", opt.dumps, "write guest memory ADDR:LEN=FILE (raw bytes) when the run ends; repeatable")
        ->expected(1)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    app.add_option("--signature", opt.signature,
                   "write the riscv-arch-test signature (begin_signature..end_signature, one word per line)");
    app.add_option("--engine", opt.engine, "execution engine: blocks (default) or step (reference)");
    app.add_flag("--stats", opt.stats, "print instruction/cycle counts and MIPS to stderr");
}

}  // namespace iss
