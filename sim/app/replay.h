// SPDX-License-Identifier: MIT
// Replays raw regcmd buffers on the simulated SoC, the way a captured regcmdN.bin from a board is
// replayed: the buffer and any memory images are placed at their NPU addresses (rknpu IOVAs
// through the IOMMU, or physical addresses), each core is kicked in PC mode as the vendor kernel
// kicks it (rknpu_job_subcore_commit_pc: S_POINTER on multi-core SoCs, first task's address and
// amount, last task's int_mask, TASK_CON, OP_EN), the cores of one wave run concurrently, and the
// result is the hardware's view: interrupt and status registers, per-task records, the model's
// diagnostics, memory read back. Used by `npusim replay`, the fault catalogue and the fuzzer.
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

class SimHal;

/// One kick of one core: the PC registers the kernel writes.
struct RawKick {
    int core = 0;
    uint64_t addr = 0;         ///< PC_BASE_ADDRESS: the first task's regcmd address
    uint32_t amount = 0;       ///< PC_REGISTER_AMOUNTS.PC_DATA_AMOUNT
    uint32_t task_number = 1;  ///< TASK_CON.TASK_NUMBER
    uint32_t int_mask = 0x300, int_clear = 0x1ffff;
    bool pingpong = true;
    size_t first_task = 0;  ///< index of the kick's first task in its task list (kicks_of)
};

struct RawJob {
    // The buffer and a single kick on `core` (explicit values or derived from the buffer).
    int core = 0;
    std::vector<uint64_t> words;
    std::optional<uint64_t> addr;         ///< NPU address of the buffer (default: allocated)
    std::optional<uint32_t> task_number;  ///< TASK_CON.TASK_NUMBER (default: tasks in the first chain)
    std::optional<uint32_t> amount;       ///< first task's PC_REGISTER_AMOUNTS (default: derived)
    uint32_t int_mask = 0x300;
    /// Kicks to run instead of the single one above (task lists, several chains, several cores);
    /// kicks of different cores run concurrently in waves, in list order per core.
    std::vector<RawKick> kicks;
    /// Data placed at NPU addresses before the kicks (tensors the stream points at).
    std::vector<std::pair<uint64_t, std::vector<uint8_t>>> preload;
    /// NPU address ranges read back after the job (its outputs).
    std::vector<std::pair<uint64_t, size_t>> readback;
};

struct RawKickResult {
    RawKick kick;
    bool irq = false;  ///< the interrupt arrived before the driver's timeout
    bool status_ok = false;  ///< the vendor kernel's test: fold(INT_STATUS) == fold(int_mask), no error bit
    uint32_t raw_status = 0, int_status = 0, task_status = 0;
    uint64_t elapsed_ns = 0;
    std::vector<std::string> diagnostics;
    std::vector<npu::tlm_models::TaskRecord> tasks;
};

struct RawResult {
    // The single kick, or every kick together (irq: all raised; statuses OR'ed; task_status summed).
    bool irq = false;
    uint32_t raw_status = 0, int_status = 0, task_status = 0;
    uint64_t elapsed_ns = 0;
    std::vector<std::string> diagnostics;  ///< model diagnostics raised by this job
    std::vector<npu::tlm_models::TaskRecord> tasks;
    std::vector<RawKickResult> kicks;
    std::vector<std::vector<uint8_t>> readback;
    std::vector<std::string> errors;  ///< a load or read-back the memory map refused
};

/// Run the jobs one after the other on one platform (one SystemC elaboration per process); the
/// cores are reset between jobs. Throws std::invalid_argument for jobs that cannot be placed.
/// `rtl`: co-simulate the tasks on the RTL datapath; its per-task records go to `rtl_records`.
std::vector<RawResult> run_raw_jobs(const hw::SocProfile& soc, const std::vector<RawJob>& jobs,
                                    npu::tlm_models::SimMode mode, trace::TraceWriter* tw,
                                    uint64_t timeout_ns = 500'000'000, const npu::rtl::RtlOptions* rtl = nullptr,
                                    std::vector<npu::rtl::RtlTaskRecord>* rtl_records = nullptr);

/// One PC-mode kick as the vendor kernel writes it (rknpu_job_subcore_commit + _pc): slave mode,
/// S_POINTER on multi-core SoCs, the first task's address and amount, INTERRUPT_MASK/CLEAR,
/// TASK_CON, TASK_DMA_BASE_ADDR 0, OP_EN 1 then 0. From the platform's host thread.
void kick_pc(SimHal& hal, const hw::SocProfile& soc, const RawKick& k);

/// The vendor kernel's completion test (rknpu_job.c rknpu_fuzz_status): each ping-pong pair of
/// status bits folded (any bit of a pair sets both).
uint32_t fold_status(uint32_t status);

}  // namespace sim
