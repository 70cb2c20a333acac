// SPDX-License-Identifier: MIT
// Kernel-mode side of the tnpuv2 driver: programs CMD_BASE/CMD_WORDS, unmasks the interrupts,
// writes CONTROL.START, waits for the interrupt line, reads IRQ_STATUS and the fault registers,
// clears the interrupt and soft-resets the core after a fault or a timeout. MMIO through the HAL
// only (drivers/hal), so the same code would run against a board.
#pragma once
#include <cstdint>
#include <string>

#include "drv/npu_hal.h"

namespace drv::tnpuv2 {

struct SubmitResult {
    bool ok = false;
    std::string error;        ///< one line when !ok
    uint32_t irq_status = 0;  ///< IRQ_STATUS at the interrupt
    uint32_t fault_code = 0, fault_info = 0;
    uint64_t fault_addr = 0;
    uint32_t cmd_pc = 0;  ///< CMD_PC (the faulting command's word offset)
    uint32_t ops_done = 0;
    uint64_t cycles = 0;      ///< CYCLES_HI:LO
    uint64_t elapsed_ns = 0;  ///< kick to interrupt, device time
};

class Driver {
   public:
    explicit Driver(NpuHal& hal) : hal_(hal) {}
    /// Checks ID and VERSION against the format this driver writes; "" or the problem.
    std::string probe();
    /// Runs the stream at device address `stream_addr` (`words` 32-bit words); blocks.
    SubmitResult submit(uint64_t stream_addr, uint32_t words, uint64_t timeout_ns = 2'000'000'000);

   private:
    NpuHal& hal_;
};

}  // namespace drv::tnpuv2
