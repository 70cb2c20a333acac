// SPDX-License-Identifier: MIT
// Regcmd buffers on disk (raw little-endian 64-bit entries, as regcmdN.bin captures and
// `npusim run --dump-regcmd` write them), split into tasks at their op-enable entries.
#pragma once
#include <cstdint>
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
