// SPDX-License-Identifier: MIT
// rviss: standalone front end of the RISC-V ISS with the options of `npusim iss`.
#include "riscv_iss/cli_options.h"
#include "riscv_iss/run.h"

int main(int argc, char** argv) {
    iss::RunOptions opt;
    CLI::App app{"rviss: RV32IMAFC instruction-set simulator for the npusim MCU targets"};
    iss::add_run_options(app, opt);
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        const int rc = app.exit(e);
        return rc == 0 ? 0 : iss::kExitUsage;
    }
    return iss::run_cli(opt);
}
