// SPDX-License-Identifier: MIT
// Kernel-mode side of the RKNPU driver: kicks a list of chained tasks on one core in PC mode,
// waits for the interrupt, checks the status and resets the core on timeout or fault. Follows
// the vendor rknpu_job_subcore_commit_pc sequence (hardware-facts.md Part I §1.3).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "drv/npu_hal.h"

namespace drv::rknpu {

/// Per-SoC driver configuration (vendor rknpu_config); filled from the SoC profile by the caller.
struct CoreConfig {
    int core_count = 1;
    int pc_data_amount_scale = 2;
    int pc_task_number_bits = 12;
    uint32_t pc_task_status_offset = 0x3c;
};

/// One task as the user-mode driver hands it over (struct rknpu_task subset).
struct Task {
    uint64_t regcmd_addr = 0;
    uint32_t regcfg_amount = 0;  ///< register entries, excluding the 4 task-ending entries
    uint32_t int_mask = 0x300;   ///< interrupt bits this task raises when done (DPU pair)
    uint32_t enable_mask = 0xd;  ///< blocks it enables (CNA|CORE|DPU)
};

struct SubmitResult {
    bool ok = false;
    std::string error;            ///< one line when !ok
    uint32_t int_status = 0;      ///< INTERRUPT_STATUS seen at completion
    uint32_t raw_status = 0;      ///< INTERRUPT_RAW_STATUS
    uint32_t task_status = 0;     ///< tasks completed (PC_TASK_STATUS)
    uint64_t hw_elapse_ns = 0;    ///< kick to interrupt, device time
};

class Driver {
   public:
    Driver(NpuHal& hal, CoreConfig cfg) : hal_(hal), cfg_(cfg) {}
    /// Run `tasks` (already chained by their regcmd streams) on `core`; blocks until done.
    SubmitResult submit(int core, const std::vector<Task>& tasks, uint64_t timeout_ns = 500'000'000);
    /// The two halves of submit(), so that several cores can be kicked before waiting on any.
    /// kick() returns false (with `error` set) when the job cannot be started.
    bool kick(int core, const std::vector<Task>& tasks, SubmitResult& r);
    void wait(int core, const std::vector<Task>& tasks, uint64_t timeout_ns, SubmitResult& r);

   private:
    NpuHal& hal_;
    CoreConfig cfg_;
    std::vector<uint64_t> kick_time_ns_ = std::vector<uint64_t>(8, 0);
};

/// Fold each ping-pong pair of interrupt bits (0-1, 2-3, ..., 12-13) onto both bits of the pair,
/// as the vendor driver's rknpu_fuzz_status does before comparing with the expected mask.
uint32_t fuzz_status(uint32_t status);

}  // namespace drv::rknpu
