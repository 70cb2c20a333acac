// SPDX-License-Identifier: MIT
// Maps an instruction to its base cost in the cycle model (taken-branch, division and hazard extras are
// added at execution time by the exec functions and the run loop).
#pragma once
#include <cstdint>

#include "riscv_iss/core_preset.h"
#include "riscv_iss/decoded_insn.h"

namespace iss {
uint32_t base_cycles(Op exec_op, uint32_t csr_number, const CycleModel& cm);
}  // namespace iss
