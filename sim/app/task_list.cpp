// SPDX-License-Identifier: MIT
#include "app/task_list.h"

#include <cstring>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/regcmd_file.h"
#include "hw/regdb.h"
#include "numerics/limits.h"

namespace sim {

namespace {

uint64_t num(const nlohmann::json& j, const std::string& what) {
    if (j.is_number_unsigned()) return j.get<uint64_t>();
    if (j.is_number_integer() && j.get<int64_t>() >= 0) return static_cast<uint64_t>(j.get<int64_t>());
    if (j.is_string()) {
        const std::string s = j.get<std::string>();
        size_t pos = 0;
        try {
            const uint64_t v = std::stoull(s, &pos, 0);
            if (pos == s.size() && s.find('-') == std::string::npos) return v;
        } catch (const std::exception&) {
        }
    }
    throw std::runtime_error(fmt::format("{}: not a non-negative integer", what));
}

uint32_t num32(const nlohmann::json& o, const char* key, const std::string& where, uint32_t dflt = 0) {
    if (!o.contains(key)) return dflt;
    const uint64_t v = num(o.at(key), where + "." + key);
    if (v > 0xffffffffu) throw std::runtime_error(fmt::format("{}.{}: {} exceeds 32 bits", where, key, v));
    return static_cast<uint32_t>(v);
}

}  // namespace

TaskList read_task_list(const std::string& path) {
    const std::vector<char> chars = num::read_input_file(path);
    const std::vector<uint8_t> bytes(chars.begin(), chars.end());
    TaskList tl;
    size_t first = 0;
    while (first < bytes.size() && (bytes[first] == ' ' || bytes[first] == '\n' || bytes[first] == '\t')) ++first;
    if (first < bytes.size() && bytes[first] == '{') {
        nlohmann::json j;
        try {
            j = nlohmann::json::parse(bytes.begin(), bytes.end());
        } catch (const nlohmann::json::exception& e) {
            throw std::runtime_error(fmt::format("'{}': not valid JSON: {}", path, e.what()));
        }
        if (!j.contains("tasks") || !j["tasks"].is_array())
            throw std::runtime_error(fmt::format("'{}': no \"tasks\" array", path));
        for (size_t i = 0; i < j["tasks"].size(); ++i) {
            const auto& o = j["tasks"][i];
            const std::string w = fmt::format("'{}': tasks[{}]", path, i);
            if (!o.is_object()) throw std::runtime_error(w + ": not an object");
            RknpuTask t;
            t.flags = num32(o, "flags", w), t.op_idx = num32(o, "op_idx", w), t.enable_mask = num32(o, "enable_mask", w);
            t.int_mask = num32(o, "int_mask", w), t.int_clear = num32(o, "int_clear", w);
            t.int_status = num32(o, "int_status", w), t.regcfg_amount = num32(o, "regcfg_amount", w);
            t.regcfg_offset = num32(o, "regcfg_offset", w);
            if (!o.contains("regcmd_addr")) throw std::runtime_error(w + ": no regcmd_addr");
            t.regcmd_addr = num(o["regcmd_addr"], w + ".regcmd_addr");
            tl.tasks.push_back(t);
        }
        if (j.contains("submit")) {
            const auto& o = j["submit"];
            const std::string w = fmt::format("'{}': submit", path);
            RknpuSubmit s;
            s.flags = num32(o, "flags", w, s.flags), s.task_start = num32(o, "task_start", w);
            s.task_number = num32(o, "task_number", w, static_cast<uint32_t>(tl.tasks.size()));
            s.core_mask = num32(o, "core_mask", w);
            if (o.contains("task_base_addr")) s.task_base_addr = num(o["task_base_addr"], w + ".task_base_addr");
            if (o.contains("subcore_task")) {
                const auto& sc = o["subcore_task"];
                if (!sc.is_array() || sc.size() > 5) throw std::runtime_error(w + ".subcore_task: up to 5 [start, number]");
                for (size_t i = 0; i < sc.size(); ++i) {
                    if (!sc[i].is_array() || sc[i].size() != 2)
                        throw std::runtime_error(fmt::format("{}.subcore_task[{}]: expected [start, number]", w, i));
                    s.subcore_task[i][0] = static_cast<uint32_t>(num(sc[i][0], w + ".subcore_task"));
                    s.subcore_task[i][1] = static_cast<uint32_t>(num(sc[i][1], w + ".subcore_task"));
                }
            }
            tl.submit = s;
        }
        return tl;
    }
    if (bytes.empty() || bytes.size() % kRknpuTaskBytes != 0)
        throw std::runtime_error(fmt::format("'{}': {} bytes is not an array of {}-byte struct rknpu_task", path,
                                             bytes.size(), kRknpuTaskBytes));
    for (size_t at = 0; at < bytes.size(); at += kRknpuTaskBytes) {
        uint32_t u[8];
        std::memcpy(u, bytes.data() + at, sizeof(u));
        RknpuTask t{u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], 0};
        std::memcpy(&t.regcmd_addr, bytes.data() + at + 32, 8);
        tl.tasks.push_back(t);
    }
    return tl;
}

std::vector<RawKick> kicks_of(const TaskList& tl, uint32_t core_mask, const hw::SocProfile& soc,
                              const std::vector<uint64_t>& buffer, uint64_t buffer_base) {
    const int ncores = soc.npu.core_count.value;
    const uint32_t scale = static_cast<uint32_t>(soc.npu.pc_data_amount_scale.value);
    const uint32_t max_tasks = (1u << soc.npu.pc_task_number_bits.value) - 1u;
    std::vector<int> cores;
    for (int c = 0; c < ncores; ++c)
        if (core_mask & (1u << c)) cores.push_back(c);
    if (cores.empty()) cores.push_back(0);  // RKNPU_CORE_AUTO_MASK: an idle core (the first)
    std::vector<RawKick> out;
    auto add = [&](int core, size_t start, size_t count, bool pingpong) {
        if (count == 0) return;
        if (start + count > tl.tasks.size())
            throw std::invalid_argument(fmt::format("core {}: tasks {}..{} beyond the list's {} tasks", core, start,
                                                    start + count - 1, tl.tasks.size()));
        for (size_t at = start; at < start + count; at += max_tasks) {
            const size_t n = std::min<size_t>(max_tasks, start + count - at);
            const RknpuTask& first = tl.tasks[at];
            const RknpuTask& last = tl.tasks[at + n - 1];
            RawKick k;
            k.core = core;
            k.addr = first.regcmd_addr;
            k.amount = (first.regcfg_amount + 4 + scale - 1) / scale - 1;
            k.task_number = static_cast<uint32_t>(n);
            k.int_mask = last.int_mask;
            k.int_clear = first.int_mask;
            k.pingpong = pingpong;
            k.first_task = at;
            out.push_back(k);
        }
    };
    if (tl.submit) {
        const RknpuSubmit& s = *tl.submit;
        const bool pp = (s.flags & 0x4u) != 0;
        if (ncores == 1) {
            add(cores.front(), s.task_start, s.task_number, pp);
            return out;
        }
        for (int c : cores) {
            const size_t slot = cores.size() == 3 ? static_cast<size_t>(c) + 2 : static_cast<size_t>(c);
            add(c, s.subcore_task[slot][0], s.subcore_task[slot][1], pp);
        }
        return out;
    }
    // No submit: chains of consecutive tasks linked through the buffer, dealt to the cores.
    const std::vector<TaskSpan> spans = split_tasks(buffer);
    std::vector<std::pair<size_t, size_t>> chains;  // [start, count)
    for (size_t i = 0; i < tl.tasks.size();) {
        size_t n = 1;
        while (i + n < tl.tasks.size()) {
            const uint64_t here = tl.tasks[i + n - 1].regcmd_addr;
            std::optional<uint32_t> next;
            for (const TaskSpan& sp : spans)
                if (buffer_base + 8 * sp.begin == here) next = task_tail(buffer, sp).next_addr;
            if (!next || hw::rknpu::PC_BASE_ADDRESS::PC_SOURCE_ADDR.bytes(*next) != tl.tasks[i + n].regcmd_addr) break;
            ++n;
        }
        chains.emplace_back(i, n);
        i += n;
    }
    for (size_t k = 0; k < chains.size(); ++k) add(cores[k % cores.size()], chains[k].first, chains[k].second, true);
    return out;
}

}  // namespace sim
