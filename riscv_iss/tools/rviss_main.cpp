// SPDX-License-Identifier: MIT
// rviss: standalone front end of the RISC-V ISS with the options of `npusim iss`.
#include <CLI/CLI.hpp>

#include "riscv_iss/run.h"

int main(int argc, char** argv) {
    iss::RunOptions opt;
    CLI::App app{"rviss: RV32IMAFC instruction-set simulator for the npusim MCU targets"};
    app.add_option("program", opt.elf, "RV32 ELF executable")->required();
    app.add_option("--core", opt.core, "core preset name (cv32e40p, ws63, 3066h) or preset JSON path");
    app.add_option("--preset-dir", opt.preset_dir, "directory with preset JSON files");
    app.add_option("--gdb", opt.gdb, "GDB remote stub: :PORT (TCP) or stdio");
    app.add_option("--trace", opt.trace, "Spike-style commit log file (- = stderr)");
    app.add_option("--profile", opt.profile, "per-function cycle profile file (- = stderr)");
    app.add_option("--max-insns", opt.max_insns, "stop after N instructions (exit code 124)");
    app.add_flag("--stats", opt.stats, "print instruction/cycle counts and MIPS to stderr");
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        const int rc = app.exit(e);
        return rc == 0 ? 0 : iss::kExitUsage;
    }
    return iss::run_cli(opt);
}
