// SPDX-License-Identifier: MIT
// What the emulated kernel drivers do around a kick: wait for a core's interrupt line until a
// deadline in simulated time (or until the job is aborted by a reset), let the line drop after
// the handler cleared the status, and explain a fault or timeout with the task, the registers and
// the program counter the model saw.
#pragma once
#include <cstdint>
#include <string>

#include <systemc>

#include "exec/soc.h"

namespace sim::exec {

enum class WaitResult { Irq, Timeout, Aborted };

/// Waits on `core`'s interrupt line (level) until `deadline_ps`; `abort` ends the wait early.
WaitResult wait_core_irq(SocHost& soc, int core, uint64_t deadline_ps, const sc_core::sc_event& abort,
                         const bool& aborted);
/// After INTERRUPT_CLEAR: give the model the delta cycles it takes to lower the line.
void settle_irq(SocHost& soc, int core);

/// INTERRUPT_* bits by name: "0x300 (DPU group 0, DPU group 1)".
std::string status_text(uint32_t status);

/// Where a core stopped: PC_BASE_ADDRESS / PC_REGISTER_AMOUNTS / TASK status / raw status read
/// back, the tasks the model ran for this kick (index, kind, faults) and its diagnostics since
/// `diag0` / `task0`. One line per fact, each prefixed with `indent`.
std::string explain_core(SocHost& soc, int core, size_t diag0, size_t task0, const std::string& indent);

}  // namespace sim::exec
