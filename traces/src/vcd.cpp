// SPDX-License-Identifier: MIT
// The trace as a value change dump (IEEE 1364 section 18): one module per process, a busy wire per
// block track, the number of transfers in flight per overlapping (Lanes) track, interrupt lines as
// wires, counter series as reals. GTKWave and vcd2fst read it.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <set>

#include "trace/trace_writer.h"

namespace trace {

namespace {

/// VCD identifiers: printable ASCII '!'..'~', base 94.
std::string vcd_id(size_t n) {
    std::string s;
    do {
        s += static_cast<char>('!' + n % 94);
        n /= 94;
    } while (n);
    return s;
}

/// Scope and variable names without whitespace or VCD-special characters.
std::string vcd_name(const std::string& s) {
    std::string o;
    for (char c : s) o += (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.') ? c : '_';
    while (o.find("__") != std::string::npos) o.erase(o.find("__"), 1);
    if (!o.empty() && o.back() == '_') o.pop_back();
    return o.empty() ? "_" : o;
}

struct Var {
    std::string id, name, type;  // type: wire | integer | real
    int width = 1;
};

std::string value_text(const Var& v, double value) {
    if (v.type == "real") return fmt::format("r{:.6g} {}", value, v.id);
    const auto n = static_cast<uint64_t>(value);
    if (v.width == 1) return fmt::format("{}{}", n ? 1 : 0, v.id);
    std::string bits;
    for (uint64_t x = n; x; x >>= 1) bits.insert(bits.begin(), static_cast<char>('0' + (x & 1)));
    return fmt::format("b{} {}", bits.empty() ? "0" : bits, v.id);
}

}  // namespace

std::string TraceWriter::to_vcd() const {
    // Variables per process, in creation order.
    std::map<int, std::vector<size_t>> vars_of;  // pid -> var indices
    std::vector<Var> vars;
    std::map<int, size_t> var_of_track;
    std::map<std::pair<int, std::string>, size_t> var_of_series;  // (pid, "counter series" or level)
    struct Change {
        uint64_t at;
        size_t var;
        double delta;  // slices: +1 / -1; counters and levels: absolute value
        bool absolute;
    };
    std::vector<Change> ch;
    auto add_var = [&](int pid, const std::string& name, const std::string& type, int width) {
        vars.push_back(Var{vcd_id(vars.size()), vcd_name(name), type, width});
        vars_of[pid].push_back(vars.size() - 1);
        return vars.size() - 1;
    };
    for (const Event& e : events_) {
        if (e.phase == 'X' && e.dur_ps > 0) {
            const Track& t = tracks_.at(static_cast<size_t>(e.track));
            auto it = var_of_track.find(e.track);
            if (it == var_of_track.end()) {
                const bool lanes = t.layout == Layout::Lanes;
                it = var_of_track
                         .emplace(e.track, add_var(t.pid, lanes ? t.thread + " in flight" : t.thread + " busy",
                                                   lanes ? "integer" : "wire", lanes ? 8 : 1))
                         .first;
            }
            ch.push_back({e.start_ps, it->second, 1, false});
            ch.push_back({e.start_ps + e.dur_ps, it->second, -1, false});
        } else if (e.phase == 'C' || e.phase == 'L') {
            const int pid = e.track + 1;
            for (const Arg& a : e.args) {
                const std::string key = e.phase == 'L' ? e.name : e.name + " " + a.key;
                auto it = var_of_series.find({pid, key});
                if (it == var_of_series.end())
                    it = var_of_series
                             .emplace(std::make_pair(pid, key),
                                      add_var(pid, key, e.phase == 'L' ? "wire" : "real", e.phase == 'L' ? 1 : 64))
                             .first;
                ch.push_back({e.start_ps, it->second, std::stod(a.json_value), true});
            }
        }
    }
    std::string o = "$version npusim $end\n$timescale 1ps $end\n";
    for (const auto& [pid, vs] : vars_of) {
        o += fmt::format("$scope module {} $end\n", vcd_name(processes_.at(static_cast<size_t>(pid - 1))));
        std::set<std::string> seen;
        for (size_t v : vs) {
            std::string n = vars[v].name;
            for (int k = 2; seen.count(n); ++k) n = fmt::format("{}_{}", vars[v].name, k);
            seen.insert(n);
            o += fmt::format("$var {} {} {} {} $end\n", vars[v].type, vars[v].width, vars[v].id, n);
        }
        o += "$upscope $end\n";
    }
    o += "$enddefinitions $end\n#0\n$dumpvars\n";
    for (const Var& v : vars) o += value_text(v, 0) + "\n";
    o += "$end\n";
    std::stable_sort(ch.begin(), ch.end(), [](const Change& a, const Change& b) { return a.at < b.at; });
    std::vector<double> cur(vars.size(), 0.0), shown(vars.size(), 0.0);
    for (size_t i = 0; i < ch.size();) {
        const uint64_t at = ch[i].at;
        std::vector<size_t> touched;
        for (; i < ch.size() && ch[i].at == at; ++i) {
            cur[ch[i].var] = ch[i].absolute ? ch[i].delta : cur[ch[i].var] + ch[i].delta;
            touched.push_back(ch[i].var);
        }
        std::sort(touched.begin(), touched.end());
        touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
        std::string lines;
        for (size_t v : touched) {
            const double val = vars[v].type == "wire" ? (cur[v] > 0 ? 1.0 : 0.0) : cur[v];
            if (val == shown[v]) continue;
            shown[v] = val;
            lines += value_text(vars[v], val) + "\n";
        }
        if (!lines.empty()) o += fmt::format("#{}\n", at) + lines;
    }
    return o;
}

bool TraceWriter::write_vcd(const std::string& path) const {
    std::ofstream f(path, std::ios::binary);
    if (!f) return false;
    const std::string s = to_vcd();
    f.write(s.data(), static_cast<std::streamsize>(s.size()));
    return static_cast<bool>(f);
}

}  // namespace trace
