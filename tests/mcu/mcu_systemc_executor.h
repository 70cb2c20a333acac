// SPDX-License-Identifier: MIT
// Runs the MCU firmware on the ISS inside a SystemC platform (iss::RiscvCore, riscv_iss_tlm) instead
// of the standalone bus: a FirmwareExecutor for mcu::run_cli (McuRunOptions::executor). The platform is
// the target's memory map as one TLM target with DMI; wait states come from the core preset, so cycle
// counts equal the standalone ISS run. One call per process (a SystemC kernel elaborates once).
// Kept here until sim/ builds the MCU platform from the SoC profile (the lead's code may reuse it).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "mcu/firmware_runner.h"

namespace mcu_sc {

mcu::FirmwareRun run_in_systemc(const mcu::McuTarget& t, const std::string& elf, const std::vector<uint8_t>& blob,
                                uint64_t max_insns);

}  // namespace mcu_sc
