// SPDX-License-Identifier: MIT
#include "app/regcmd_file.h"

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>

#include "hw/regcmd.h"
#include "hw/regdb.h"
#include "numerics/limits.h"

#include <map>

namespace sim {

std::vector<uint64_t> read_regcmd_file(const std::string& path) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
        throw std::runtime_error(fmt::format("cannot open regcmd file '{}' (a directory)", path));
    if (!std::filesystem::exists(path, ec))
        throw std::runtime_error(fmt::format("cannot open regcmd file '{}' (no such file)", path));
    // Regular files within the budget only: /dev/zero or a FIFO would be read until memory runs out.
    // An empty file is a kick with zero tasks, which the hardware faults (replay says so).
    const std::vector<char> chars = num::read_input_file(path);
    const auto* bytes = reinterpret_cast<const uint8_t*>(chars.data());
    if (chars.size() % 8 != 0)
        throw std::runtime_error(fmt::format("'{}': {} bytes is not a whole number of 64-bit regcmd entries", path,
                                             chars.size()));
    std::vector<uint64_t> words(chars.size() / 8);
    for (size_t i = 0; i < words.size(); ++i)
        for (int b = 7; b >= 0; --b) words[i] = (words[i] << 8) | bytes[i * 8 + static_cast<size_t>(b)];
    return words;
}

bool write_regcmd_file(const std::string& path, const std::vector<uint64_t>& words) {
    std::ofstream f(path, std::ios::binary);
    for (uint64_t w : words)
        for (int b = 0; b < 8; ++b) f.put(static_cast<char>((w >> (8 * b)) & 0xff));
    return static_cast<bool>(f);
}

std::vector<TaskSpan> split_tasks(const std::vector<uint64_t>& words) {
    std::vector<TaskSpan> out;
    size_t i = 0;
    while (i < words.size()) {
        while (i < words.size() && hw::rknpu::RegCmd::decode(words[i]).is_nop()) ++i;
        if (i >= words.size()) break;
        TaskSpan t;
        t.begin = i;
        while (i < words.size()) {
            const hw::rknpu::RegCmd c = hw::rknpu::RegCmd::decode(words[i++]);
            if (c.target() == 0 && c.is_op_enable()) {
                t.has_op_enable = true;
                break;
            }
        }
        t.end = i;
        out.push_back(t);
    }
    return out;
}

}  // namespace sim

namespace sim {

TaskTail task_tail(const std::vector<uint64_t>& words, const TaskSpan& t) {
    using namespace hw::rknpu;
    TaskTail tail;
    for (size_t i = t.begin; i < t.end; ++i) {
        const RegCmd c = RegCmd::decode(words[i]);
        if (c.target() == 0 && c.is_op_enable()) tail.enable_mask = c.value;
        if (c.target() != target::PC || !c.is_write()) continue;
        if (c.offset == PC_BASE_ADDRESS::kOffset) tail.next_addr = c.value;
        if (c.offset == PC_REGISTER_AMOUNTS::kOffset) tail.next_amount = c.value;
    }
    return tail;
}

std::vector<Chain> find_chains(const std::vector<uint64_t>& words, const std::vector<TaskSpan>& spans, uint64_t base) {
    using namespace hw::rknpu;
    std::map<uint64_t, size_t> at;  // task start address -> span
    for (size_t i = 0; i < spans.size(); ++i) at[base + 8 * spans[i].begin] = i;
    std::vector<bool> used(spans.size(), false);
    std::vector<Chain> out;
    for (size_t first = 0; first < spans.size(); ++first) {
        if (used[first]) continue;
        Chain c;
        for (size_t t = first;;) {
            used[t] = true;
            c.tasks.push_back(t);
            const TaskTail tail = task_tail(words, spans[t]);
            const uint64_t next = PC_BASE_ADDRESS::PC_SOURCE_ADDR.bytes(tail.next_addr.value_or(0));
            if (next == 0) break;
            auto it = at.find(next);
            if (it == at.end() || used[it->second]) {
                c.broken = true;
                c.broken_target = next;
                break;
            }
            t = it->second;
        }
        out.push_back(std::move(c));
    }
    return out;
}

std::optional<uint64_t> infer_base(const std::vector<uint64_t>& words, const std::vector<TaskSpan>& spans) {
    using namespace hw::rknpu;
    for (size_t i = 0; i + 1 < spans.size(); ++i) {
        const uint64_t next = PC_BASE_ADDRESS::PC_SOURCE_ADDR.bytes(task_tail(words, spans[i]).next_addr.value_or(0));
        // The pointer of task i points at the first later task it can: task i + 1 in the usual
        // layout (tasks back to back, each chain in buffer order).
        if (next >= 8 * spans[i + 1].begin) return next - 8 * spans[i + 1].begin;
    }
    return std::nullopt;
}

}  // namespace sim
