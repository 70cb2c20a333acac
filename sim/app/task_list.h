// SPDX-License-Identifier: MIT
// Task lists as a runtime submits them to the vendor kernel driver (rockchip-linux/kernel
// drivers/rknpu/include/rknpu_ioctl.h, the layout docs/rknpu-register-semantics.md §5 gives):
// `struct rknpu_task` (packed, 40 bytes, little-endian: u32 flags, op_idx, enable_mask, int_mask,
// int_clear, int_status, regcfg_amount, regcfg_offset; u64 regcmd_addr) as the binary array, or
// JSON {"uapi", "submit": {flags, timeout, task_start, task_number, core_mask, task_base_addr,
// subcore_task: [[start, number] x 5]}, "tasks": [{the rknpu_task fields}]} (numbers or "0x.."
// strings). Turned into the kicks the kernel makes (rknpu_job_subcore_commit_pc).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "app/replay.h"
#include "hw/profile.h"

namespace sim {

struct RknpuTask {
    uint32_t flags = 0, op_idx = 0, enable_mask = 0, int_mask = 0, int_clear = 0, int_status = 0;
    uint32_t regcfg_amount = 0, regcfg_offset = 0;
    uint64_t regcmd_addr = 0;
};
inline constexpr size_t kRknpuTaskBytes = 40;

struct RknpuSubmit {
    uint32_t flags = 0x5;  ///< RKNPU_JOB_PC | RKNPU_JOB_PINGPONG
    uint32_t task_start = 0, task_number = 0, core_mask = 0;
    uint64_t task_base_addr = 0;
    uint32_t subcore_task[5][2] = {};
};

struct TaskList {
    std::vector<RknpuTask> tasks;
    std::optional<RknpuSubmit> submit;  ///< JSON only
};

/// Read a task list (JSON when the file starts with '{', else the packed binary array); throws
/// std::runtime_error naming the file and the offending entry.
TaskList read_task_list(const std::string& path);

/// The kicks of a submit as the vendor kernel makes them: per core of `core_mask` (bit i = core
/// i) its task range (subcore_task[i], or [i + 2] with three cores, on multi-core SoCs; else
/// task_start / task_number), split into kicks of at most 2^bits - 1 tasks; first task's
/// regcmd_addr and ceil((regcfg_amount + 4) / scale) - 1, last task's int_mask. Without a
/// submit, the tasks' chains (task i links to i + 1 through the buffer at `buffer_base`) are
/// dealt to the cores of core_mask in turn. Throws std::invalid_argument on an inconsistent list.
std::vector<RawKick> kicks_of(const TaskList& tl, uint32_t core_mask, const hw::SocProfile& soc,
                              const std::vector<uint64_t>& buffer, uint64_t buffer_base);

}  // namespace sim
