// SPDX-License-Identifier: MIT
// --rtl option parsing and the RTL section of the run report.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

#include "rtl/cosim.h"

namespace npu::rtl {

RtlOptions parse_rtl_blocks(const std::string& list) {
    RtlOptions o;
    size_t pos = 0;
    while (pos <= list.size()) {
        const size_t next = std::min(list.find(',', pos), list.size());
        const std::string item = list.substr(pos, next - pos);
        if (item == "core")
            o.core = true;
        else if (item == "dpu")
            o.dpu = true;
        else
            throw std::invalid_argument(fmt::format("--rtl '{}': unknown block '{}' (known: core, dpu)", list, item));
        pos = next + 1;
    }
    return o;
}

std::string soc_unsupported(const hw::SocProfile& soc) {
    const auto atom = static_cast<uint32_t>(soc.npu.c2_int8.value);
    if (atom == 16) return "";
    return fmt::format("--rtl: the RTL datapath is built for 16-byte atoms (RK3588 class); {} has {}-byte atoms",
                       soc.name, atom);
}

namespace {

std::string blocks(const RtlOptions& o) { return o.core && o.dpu ? "core,dpu" : (o.core ? "core" : "dpu"); }

struct Summary {
    size_t tasks = 0, rtl_tasks = 0, mismatched = 0, within10 = 0, fallbacks = 0;
    uint64_t model = 0, rtl = 0;
    double max_abs_pct = 0;
};

Summary summarise(const std::vector<RtlTaskRecord>& recs) {
    Summary s;
    for (const RtlTaskRecord& r : recs) {
        ++s.tasks;
        s.mismatched += r.bytes_differ != 0;
        s.fallbacks += !r.fallback.empty();
        if (r.rtl.empty()) continue;
        ++s.rtl_tasks;
        s.model += r.model_cycles;
        s.rtl += r.rtl_cycles;
        s.within10 += std::fabs(r.diff_pct()) <= 10.0;
        s.max_abs_pct = std::max(s.max_abs_pct, std::fabs(r.diff_pct()));
    }
    return s;
}

}  // namespace

std::string report_text(const std::vector<RtlTaskRecord>& recs, const RtlOptions& o,
                        const std::vector<std::string>& labels) {
    std::ostringstream out;
    const Summary s = summarise(recs);
    out << fmt::format(
        "\nRTL co-simulation (--rtl {}): per task, the RTL's cycles beside the timing model's and the "
        "output bytes against the C++ engine\n",
        blocks(o));
    const bool named = !labels.empty();
    out << fmt::format("{:>4} {:>5}  {}{:<26} {:<9} {:>10} {:>10} {:>8}  {}\n", "core", "task",
                       named ? fmt::format("{:<22}", "layer") : "", "kind", "rtl", "model_cyc", "rtl_cyc", "diff",
                       "bytes");
    for (size_t i = 0; i < recs.size(); ++i) {
        const RtlTaskRecord& r = recs[i];
        const std::string lab = named ? fmt::format("{:<21.21}", i < labels.size() ? labels[i] : "") + " " : "";
        const std::string bytes =
            r.bytes_differ ? fmt::format("{} of {} DIFFER", r.bytes_differ, r.bytes) : fmt::format("{} equal", r.bytes);
        if (r.rtl.empty()) {
            out << fmt::format("{:>4} {:>5}  {}{:<26.26} {:<9} {:>10} {:>10} {:>8}  {} (C++: {})\n", r.core, r.index,
                               lab, r.kind, "-", "-", "-", "-", bytes, r.fallback);
            continue;
        }
        out << fmt::format("{:>4} {:>5}  {}{:<26.26} {:<9} {:>10} {:>10} {:>+7.1f}%  {}{}\n", r.core, r.index, lab,
                           r.kind, r.rtl, r.model_cycles, r.rtl_cycles, r.diff_pct(), bytes,
                           r.fallback.empty() ? "" : " (C++: " + r.fallback + ")");
    }
    const double total_pct =
        s.model ? 100.0 * (static_cast<double>(s.rtl) - static_cast<double>(s.model)) / static_cast<double>(s.model)
                : 0.0;
    out << fmt::format(
        "RTL summary: {} task(s), {} on the RTL, {} with C++ fallback; bytes {} ({} task(s) differ); "
        "cycles RTL {} vs model {} ({:+.1f}%), {} of {} tasks within 10%, max |diff| {:.1f}%\n",
        s.tasks, s.rtl_tasks, s.fallbacks, s.mismatched ? "DIFFER" : "equal on every task", s.mismatched, s.rtl,
        s.model, total_pct, s.within10, s.rtl_tasks, s.max_abs_pct);
    if (!o.vcd.empty()) out << fmt::format("RTL signals: {}\n", o.vcd);
    return out.str();
}

nlohmann::ordered_json report_json(const std::vector<RtlTaskRecord>& recs, const RtlOptions& o,
                                   const std::vector<std::string>& labels) {
    nlohmann::ordered_json j;
    j["blocks"] = blocks(o);
    if (!o.vcd.empty()) j["vcd"] = o.vcd;
    nlohmann::ordered_json tasks = nlohmann::ordered_json::array();
    for (size_t i = 0; i < recs.size(); ++i) {
        const RtlTaskRecord& r = recs[i];
        nlohmann::ordered_json t{{"core", r.core},
                                 {"task", r.index},
                                 {"start_ps", r.start_ps},
                                 {"kind", r.kind},
                                 {"rtl", r.rtl},
                                 {"model_cycles", r.model_cycles},
                                 {"rtl_cycles", r.rtl_cycles},
                                 {"diff_pct", std::round(r.diff_pct() * 100.0) / 100.0},
                                 {"model_core_cycles", r.model_core},
                                 {"model_dpu_cycles", r.model_dpu},
                                 {"rtl_core_last_cycle", r.rtl_core_last},
                                 {"bytes", r.bytes},
                                 {"bytes_differ", r.bytes_differ}};
        if (!r.fallback.empty()) t["fallback"] = r.fallback;
        if (i < labels.size()) t["layer"] = labels[i];
        tasks.push_back(std::move(t));
    }
    j["tasks"] = std::move(tasks);
    const Summary s = summarise(recs);
    j["summary"] = {{"tasks", s.tasks},
                    {"rtl_tasks", s.rtl_tasks},
                    {"fallback_tasks", s.fallbacks},
                    {"tasks_differ", s.mismatched},
                    {"rtl_cycles", s.rtl},
                    {"model_cycles", s.model},
                    {"within_10pct", s.within10},
                    {"max_abs_diff_pct", std::round(s.max_abs_pct * 100.0) / 100.0}};
    return j;
}

std::string mismatch_error(const std::vector<RtlTaskRecord>& recs) {
    size_t n = 0;
    const RtlTaskRecord* first = nullptr;
    for (const RtlTaskRecord& r : recs)
        if (r.bytes_differ) {
            ++n;
            if (!first) first = &r;
        }
    if (!n) return "";
    return fmt::format(
        "RTL output differs from the C++ engine on {} task(s), first on core {} task {} ({}, {} of {} "
        "bytes)",
        n, first->core, first->index, first->kind, first->bytes_differ, first->bytes);
}

}  // namespace npu::rtl
