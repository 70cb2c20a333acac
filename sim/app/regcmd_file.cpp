// SPDX-License-Identifier: MIT
#include "app/regcmd_file.h"

#include <fstream>
#include <stdexcept>

#include <fmt/format.h>

#include "hw/regcmd.h"

namespace sim {

std::vector<uint64_t> read_regcmd_file(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw std::runtime_error(fmt::format("cannot open regcmd file '{}'", path));
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    if (bytes.size() % 8 != 0)
        throw std::runtime_error(fmt::format("'{}': {} bytes is not a whole number of 64-bit regcmd entries", path,
                                             bytes.size()));
    std::vector<uint64_t> words(bytes.size() / 8);
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
