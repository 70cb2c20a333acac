// SPDX-License-Identifier: MIT
// Regcmd buffers on disk (raw little-endian 64-bit entries, as regcmdN.bin captures and
// `npusim run --dump-regcmd` write them), split into tasks at their op-enable entries.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sim {

/// Read a regcmd file; std::runtime_error naming the file when missing or not a multiple of 8 bytes.
std::vector<uint64_t> read_regcmd_file(const std::string& path);
bool write_regcmd_file(const std::string& path, const std::vector<uint64_t>& words);

/// [begin, end) entry ranges of the tasks: a task ends with its op-enable entry; NOP padding
/// between tasks belongs to no task. A trailing range without op-enable is returned too.
struct TaskSpan {
    size_t begin = 0, end = 0;  ///< end is one past the op-enable entry (or buffer end)
    bool has_op_enable = false;
};
std::vector<TaskSpan> split_tasks(const std::vector<uint64_t>& words);

}  // namespace sim

namespace sim {

/// The task-end chain entries of a span (the last PC_BASE_ADDRESS / PC_REGISTER_AMOUNTS writes;
/// absent when the slot holds a zero word) and its op-enable value.
struct TaskTail {
    std::optional<uint32_t> next_addr, next_amount;
    uint32_t enable_mask = 0;
};
TaskTail task_tail(const std::vector<uint64_t>& words, const TaskSpan& t);

/// The chains of a buffer placed at NPU address `base`: span indices linked by their
/// PC_BASE_ADDRESS (docs/rknpu-register-semantics.md §2: a buffer may hold several independent
/// chains, one per core or per kick; a chain ends at a zero word or PC_BASE_ADDRESS = 0). A
/// pointer that reaches no task of the buffer ends its chain with `broken` set.
struct Chain {
    std::vector<size_t> tasks;
    bool broken = false;
    uint64_t broken_target = 0;  ///< where the pointer went
};
std::vector<Chain> find_chains(const std::vector<uint64_t>& words, const std::vector<TaskSpan>& spans, uint64_t base);
/// The buffer's NPU address inferred from its first chain pointer (it points at a later task).
std::optional<uint64_t> infer_base(const std::vector<uint64_t>& words, const std::vector<TaskSpan>& spans);

}  // namespace sim
