// SPDX-License-Identifier: MIT
// Replays raw regcmd buffers on the simulated SoC, the way a captured regcmdN.bin from a board is
// replayed: the buffer is placed in DDR, the core is kicked in PC mode with explicit (or derived)
// TASK_NUMBER and first-task fetch amount, and the result is the hardware's view: interrupt and
// status registers, per-task records and the model's diagnostics. Used by `npusim replay`, the
// fault catalogue tests and the regcmd fuzzer.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hw/profile.h"
#include "npu/tlm/rknpu_core.h"
#include "rtl/cosim.h"
#include "trace/trace_writer.h"

namespace sim {

struct RawJob {
    int core = 0;
    std::vector<uint64_t> words;
    std::optional<uint64_t> addr;         ///< device address of the buffer (default: allocated)
    std::optional<uint32_t> task_number;  ///< TASK_CON.TASK_NUMBER (default: tasks in the buffer)
    std::optional<uint32_t> amount;       ///< first task's PC_REGISTER_AMOUNTS (default: derived)
    uint32_t int_mask = 0x300;
    /// Extra data placed in DDR before the kick (e.g. tensors the stream points at).
    std::vector<std::pair<uint64_t, std::vector<uint8_t>>> preload;
    /// DDR ranges read back after the job (e.g. its outputs).
    std::vector<std::pair<uint64_t, size_t>> readback;
};

struct RawResult {
    bool irq = false;          ///< the interrupt arrived before the driver's timeout
    uint32_t raw_status = 0, int_status = 0, task_status = 0;
    uint64_t elapsed_ns = 0;
    std::vector<std::string> diagnostics;  ///< model diagnostics raised by this job
    std::vector<npu::tlm_models::TaskRecord> tasks;
    std::vector<std::vector<uint8_t>> readback;
};

/// Run the jobs one after the other on one platform (one SystemC elaboration per process); the
/// core is reset between jobs. Throws std::invalid_argument for jobs that cannot be placed.
/// `rtl`: co-simulate the tasks on the RTL datapath; its per-task records go to `rtl_records`.
std::vector<RawResult> run_raw_jobs(const hw::SocProfile& soc, const std::vector<RawJob>& jobs,
                                    npu::tlm_models::SimMode mode, trace::TraceWriter* tw,
                                    uint64_t timeout_ns = 500'000'000, const npu::rtl::RtlOptions* rtl = nullptr,
                                    std::vector<npu::rtl::RtlTaskRecord>* rtl_records = nullptr);

}  // namespace sim
