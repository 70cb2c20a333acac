// SPDX-License-Identifier: MIT
#include "trace/trace_writer.h"

#include <cstdio>
#include <fstream>

#include <fmt/format.h>

namespace trace {

std::string json_quote(const std::string& s) {
    std::string o = "\"";
    for (unsigned char ch : s) {
        switch (ch) {
            case '"': o += "\\\""; break;
            case '\\': o += "\\\\"; break;
            case '\n': o += "\\n"; break;
            case '\t': o += "\\t"; break;
            case '\r': o += "\\r"; break;
            default:
                if (ch < 0x20)
                    o += fmt::format("\\u{:04x}", ch);
                else
                    o += static_cast<char>(ch);
        }
    }
    return o + "\"";
}

Arg arg(const std::string& key, const std::string& text) { return Arg{key, json_quote(text)}; }
Arg arg(const std::string& key, uint64_t v) { return Arg{key, fmt::format("{}", v)}; }
Arg arg(const std::string& key, int64_t v) { return Arg{key, fmt::format("{}", v)}; }
Arg arg(const std::string& key, double v) { return Arg{key, fmt::format("{:.6g}", v)}; }

int TraceWriter::track(const std::string& process, const std::string& thread) {
    for (size_t i = 0; i < tracks_.size(); ++i)
        if (tracks_[i].process == process && tracks_[i].thread == thread) return static_cast<int>(i);
    int pid = -1;
    for (size_t i = 0; i < processes_.size(); ++i)
        if (processes_[i] == process) pid = static_cast<int>(i) + 1;
    if (pid < 0) {
        processes_.push_back(process);
        pid = static_cast<int>(processes_.size());
    }
    tracks_.push_back(Track{process, thread, pid, static_cast<int>(tracks_.size()) + 1});
    return static_cast<int>(tracks_.size()) - 1;
}

void TraceWriter::complete(int track, const std::string& name, uint64_t start_ps, uint64_t dur_ps,
                           std::vector<Arg> args, const std::string& category) {
    events_.push_back(Event{track, name, category, 'X', start_ps, dur_ps, std::move(args)});
}

void TraceWriter::instant(int track, const std::string& name, uint64_t at_ps, std::vector<Arg> args) {
    events_.push_back(Event{track, name, "npu", 'i', at_ps, 0, std::move(args)});
}

namespace {
std::string us(uint64_t ps) { return fmt::format("{}.{:06d}", ps / 1000000, ps % 1000000); }
}  // namespace

std::string TraceWriter::to_json() const {
    std::string o = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
    bool first = true;
    auto sep = [&]() {
        if (!first) o += ",\n";
        first = false;
    };
    for (size_t i = 0; i < processes_.size(); ++i) {
        sep();
        o += fmt::format(R"({{"ph":"M","name":"process_name","pid":{},"tid":0,"args":{{"name":{}}}}})", i + 1,
                         json_quote(processes_[i]));
    }
    for (const Track& t : tracks_) {
        sep();
        o += fmt::format(R"({{"ph":"M","name":"thread_name","pid":{},"tid":{},"args":{{"name":{}}}}})", t.pid, t.tid,
                         json_quote(t.thread));
        sep();
        o += fmt::format(R"({{"ph":"M","name":"thread_sort_index","pid":{},"tid":{},"args":{{"sort_index":{}}}}})",
                         t.pid, t.tid, t.tid);
    }
    for (const Event& e : events_) {
        const Track& t = tracks_.at(static_cast<size_t>(e.track));
        sep();
        o += fmt::format(R"({{"ph":"{}","name":{},"cat":{},"pid":{},"tid":{},"ts":{})", e.phase, json_quote(e.name),
                         json_quote(e.category), t.pid, t.tid, us(e.start_ps));
        if (e.phase == 'X') o += fmt::format(R"(,"dur":{})", us(e.dur_ps));
        if (e.phase == 'i') o += R"(,"s":"t")";
        if (!e.args.empty()) {
            o += ",\"args\":{";
            for (size_t i = 0; i < e.args.size(); ++i)
                o += fmt::format("{}{}:{}", i ? "," : "", json_quote(e.args[i].key), e.args[i].json_value);
            o += "}";
        }
        o += "}";
    }
    o += "\n]}\n";
    return o;
}

bool TraceWriter::write_file(const std::string& path) const {
    std::ofstream f(path, std::ios::binary);
    if (!f) return false;
    const std::string s = to_json();
    f.write(s.data(), static_cast<std::streamsize>(s.size()));
    return static_cast<bool>(f);
}

}  // namespace trace
