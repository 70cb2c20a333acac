// SPDX-License-Identifier: MIT
// `npusim run --platform ws63|3066h MODEL` in the CLI: the MCU path of drivers/mcu with the firmware
// executed on the SystemC platform (riscv_iss_tlm, iss::run_mcu_platform), and the run written as
// --report JSON and a --trace (Chrome/Perfetto, traces/) with one span per layer named after the
// kernel function it calls.
#pragma once
#include <string>

#include "mcu/mcu_run.h"
#include "results/results.h"

namespace sim {

/// Runs `o` (executor and report are set here); writes the report/trace when the paths are
/// non-empty. Returns run_cli's exit code, or 2 when a file cannot be written.
/// `res`: --output / --output-dir / --expect on the firmware's outputs (results/results.h);
/// `vcd_path`: --vcd.
int run_mcu_cli(mcu::McuRunOptions o, const std::string& report_path, const std::string& trace_path,
                const results::ResultOptions& res = {}, const std::string& vcd_path = "");

/// The firmware on the SystemC MCU platform (iss::run_mcu_platform) as an mcu::FirmwareExecutor.
mcu::FirmwareRun run_on_mcu_platform(const mcu::McuTarget& t, const std::string& elf, const std::vector<uint8_t>& blob,
                                     uint64_t max_insns);

/// The run report as JSON (schema "npusim.mcu_run/1"), deterministic.
std::string mcu_report_json(const mcu::McuRunReport& r);

}  // namespace sim
