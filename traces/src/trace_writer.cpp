// SPDX-License-Identifier: MIT
#include "trace/trace_writer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <fstream>

namespace trace {

std::string json_quote(const std::string& s) {
    std::string o = "\"";
    for (unsigned char ch : s) {
        switch (ch) {
            case '"':
                o += "\\\"";
                break;
            case '\\':
                o += "\\\\";
                break;
            case '\n':
                o += "\\n";
                break;
            case '\t':
                o += "\\t";
                break;
            case '\r':
                o += "\\r";
                break;
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

int TraceWriter::process(const std::string& name) {
    for (size_t i = 0; i < processes_.size(); ++i)
        if (processes_[i] == name) return static_cast<int>(i) + 1;
    processes_.push_back(name);
    return static_cast<int>(processes_.size());
}

int TraceWriter::track(const std::string& process_name, const std::string& thread, Layout layout) {
    for (size_t i = 0; i < tracks_.size(); ++i)
        if (tracks_[i].process == process_name && tracks_[i].thread == thread) return static_cast<int>(i);
    const int pid = process(process_name);
    tracks_.push_back(Track{process_name, thread, pid, layout});
    return static_cast<int>(tracks_.size()) - 1;
}

void TraceWriter::complete(int track, const std::string& name, uint64_t start_ps, uint64_t dur_ps,
                           std::vector<Arg> args, const std::string& category) {
    events_.push_back(Event{track, name, category, 'X', start_ps, dur_ps, std::move(args)});
}

void TraceWriter::instant(int track, const std::string& name, uint64_t at_ps, std::vector<Arg> args) {
    events_.push_back(Event{track, name, "npu", 'i', at_ps, 0, std::move(args)});
}

void TraceWriter::counter(const std::string& process_name, const std::string& name, uint64_t at_ps,
                          const std::vector<std::pair<std::string, double>>& values) {
    std::vector<Arg> args;
    for (const auto& [k, v] : values) args.push_back(arg(k, v));
    events_.push_back(Event{process(process_name) - 1, name, "counter", 'C', at_ps, 0, std::move(args)});
}

void TraceWriter::level(const std::string& process_name, const std::string& name, uint64_t at_ps, bool value) {
    const int pid = process(process_name);
    const auto it = levels_.find({pid, name});
    if (it != levels_.end() && it->second == value) return;
    if (it == levels_.end() && !value) {
        levels_[{pid, name}] = false;  // the line starts low: nothing to record yet
        return;
    }
    levels_[{pid, name}] = value;
    events_.push_back(Event{pid - 1, name, "level", 'L', at_ps, 0, {arg("value", uint64_t{value ? 1u : 0u})}});
}

void TraceWriter::annotate(const std::string& process_name, uint64_t from_ps, uint64_t to_ps, std::vector<Arg> args) {
    windows_[process(process_name)].push_back(Window{from_ps, to_ps, std::move(args)});
}

namespace {
uint64_t to_ns(uint64_t ps) { return (ps + 500) / 1000; }
std::string us_of_ns(uint64_t ns) { return fmt::format("{}.{:03d}", ns / 1000, ns % 1000); }
}  // namespace

std::string TraceWriter::to_json() const {
    // Which tracks and processes carry events; lanes of the overlapping tracks.
    std::vector<bool> track_used(tracks_.size()), proc_used(processes_.size());
    std::vector<std::vector<size_t>> by_track(tracks_.size());
    for (size_t i = 0; i < events_.size(); ++i) {
        const Event& e = events_[i];
        if (e.phase == 'C' || e.phase == 'L') {
            proc_used.at(static_cast<size_t>(e.track)) = true;
            continue;
        }
        track_used.at(static_cast<size_t>(e.track)) = true;
        proc_used.at(static_cast<size_t>(tracks_[static_cast<size_t>(e.track)].pid - 1)) = true;
        by_track[static_cast<size_t>(e.track)].push_back(i);
    }
    std::vector<int> lane(events_.size(), 0);
    std::vector<int> lanes(tracks_.size(), 1);
    for (size_t t = 0; t < tracks_.size(); ++t) {
        if (tracks_[t].layout != Layout::Lanes) continue;
        std::vector<size_t> idx = by_track[t];
        auto start = [&](size_t i) { return to_ns(events_[i].start_ps); };
        auto end = [&](size_t i) { return to_ns(events_[i].start_ps + events_[i].dur_ps); };
        std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) {
            if (start(a) != start(b)) return start(a) < start(b);
            return end(a) > end(b);
        });
        std::vector<uint64_t> lane_end;
        for (size_t i : idx) {
            size_t l = 0;
            while (l < lane_end.size() && lane_end[l] > start(i)) ++l;
            if (l == lane_end.size()) lane_end.push_back(0);
            lane_end[l] = end(i);
            lane[i] = static_cast<int>(l);
        }
        lanes[t] = std::max<int>(1, static_cast<int>(lane_end.size()));
    }
    // Dense pids over the used processes, tids over the used (track, lane) pairs.
    std::vector<int> pid_of(processes_.size(), 0);
    int next_pid = 1;
    for (size_t p = 0; p < processes_.size(); ++p)
        if (proc_used[p]) pid_of[p] = next_pid++;
    std::vector<int> first_tid(tracks_.size(), 0);
    int next_tid = 1;
    for (size_t t = 0; t < tracks_.size(); ++t)
        if (track_used[t]) {
            first_tid[t] = next_tid;
            next_tid += lanes[t];
        }

    std::string o = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
    bool first = true;
    auto sep = [&]() {
        if (!first) o += ",\n";
        first = false;
    };
    for (size_t i = 0; i < processes_.size(); ++i) {
        if (!proc_used[i]) continue;
        sep();
        o += fmt::format(R"({{"ph":"M","name":"process_name","pid":{},"tid":0,"args":{{"name":{}}}}})", pid_of[i],
                         json_quote(processes_[i]));
    }
    for (size_t t = 0; t < tracks_.size(); ++t) {
        if (!track_used[t]) continue;
        const Track& tr = tracks_[t];
        const int pid = pid_of[static_cast<size_t>(tr.pid - 1)];
        for (int l = 0; l < lanes[t]; ++l) {
            const int tid = first_tid[t] + l;
            const std::string name = l == 0 ? tr.thread : fmt::format("{} #{}", tr.thread, l + 1);
            sep();
            o += fmt::format(R"({{"ph":"M","name":"thread_name","pid":{},"tid":{},"args":{{"name":{}}}}})", pid, tid,
                             json_quote(name));
            sep();
            o += fmt::format(R"({{"ph":"M","name":"thread_sort_index","pid":{},"tid":{},"args":{{"sort_index":{}}}}})",
                             pid, tid, tid);
        }
    }
    // Annotation windows per process, by start; the longest window bounds the backward scan.
    std::map<int, std::vector<const Window*>> wins;
    std::map<int, uint64_t> longest;
    for (const auto& [p, ws] : windows_) {
        for (const Window& w : ws) {
            wins[p].push_back(&w);
            longest[p] = std::max(longest[p], w.to_ps - w.from_ps);
        }
        std::stable_sort(wins[p].begin(), wins[p].end(),
                         [](const Window* a, const Window* b) { return a->from_ps < b->from_ps; });
    }
    // Events in time order, a longer slice before a shorter one starting at the same nanosecond
    // (its parent), as an importer that sorts by timestamp needs them; ties keep insertion order.
    std::vector<size_t> order(events_.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        const Event &x = events_[a], &y = events_[b];
        const uint64_t xs = to_ns(x.start_ps), ys = to_ns(y.start_ps);
        if (xs != ys) return xs < ys;
        return to_ns(x.start_ps + x.dur_ps) - xs > to_ns(y.start_ps + y.dur_ps) - ys;
    });
    for (size_t i : order) {
        const Event& e = events_[i];
        sep();
        const uint64_t s = to_ns(e.start_ps);
        if (e.phase == 'C' || e.phase == 'L') {
            o += fmt::format(R"({{"ph":"C","name":{},"cat":{},"pid":{},"tid":0,"ts":{},"args":{{)", json_quote(e.name),
                             json_quote(e.category), pid_of[static_cast<size_t>(e.track)], us_of_ns(s));
            for (size_t a = 0; a < e.args.size(); ++a)
                o += fmt::format("{}{}:{}", a ? "," : "", json_quote(e.args[a].key), e.args[a].json_value);
            o += "}}";
            continue;
        }
        const Track& t = tracks_.at(static_cast<size_t>(e.track));
        o += fmt::format(R"({{"ph":"{}","name":{},"cat":{},"pid":{},"tid":{},"ts":{})", e.phase, json_quote(e.name),
                         json_quote(e.category), pid_of[static_cast<size_t>(t.pid - 1)],
                         first_tid[static_cast<size_t>(e.track)] + lane[i], us_of_ns(s));
        if (e.phase == 'X') o += fmt::format(R"(,"dur":{})", us_of_ns(to_ns(e.start_ps + e.dur_ps) - s));
        if (e.phase == 'i') o += R"(,"s":"t")";
        std::vector<const Arg*> args;
        for (const Arg& a : e.args) args.push_back(&a);
        const auto wit = wins.find(t.pid);
        if (wit != wins.end()) {
            const auto& ws = wit->second;
            auto it = std::upper_bound(ws.begin(), ws.end(), e.start_ps,
                                       [](uint64_t v, const Window* w) { return v < w->from_ps; });
            const uint64_t span = longest[t.pid];
            while (it != ws.begin()) {
                --it;
                if ((*it)->from_ps + span < e.start_ps) break;
                if (e.start_ps >= (*it)->to_ps) continue;
                for (const Arg& a : (*it)->args)
                    if (std::none_of(args.begin(), args.end(), [&](const Arg* x) { return x->key == a.key; }))
                        args.push_back(&a);
            }
        }
        if (!args.empty()) {
            o += ",\"args\":{";
            for (size_t a = 0; a < args.size(); ++a)
                o += fmt::format("{}{}:{}", a ? "," : "", json_quote(args[a]->key), args[a]->json_value);
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

void RateCounter::add(const std::string& series, uint64_t begin_ps, uint64_t end_ps, uint64_t bytes) {
    auto& b = bins_[series];
    if (end_ps <= begin_ps) {
        b[begin_ps / bin_ps_] += static_cast<double>(bytes);
        return;
    }
    const double per_ps = static_cast<double>(bytes) / static_cast<double>(end_ps - begin_ps);
    for (uint64_t k = begin_ps / bin_ps_; k * bin_ps_ < end_ps; ++k) {
        const uint64_t lo = std::max(begin_ps, k * bin_ps_), hi = std::min(end_ps, (k + 1) * bin_ps_);
        b[k] += per_ps * static_cast<double>(hi - lo);
    }
}

void RateCounter::emit(TraceWriter& w, const std::string& process, const std::string& name) const {
    std::map<uint64_t, bool> at;  // bins where a value is written (a moved bin and the one after it)
    for (const auto& [s, b] : bins_)
        for (const auto& [k, v] : b) {
            at[k] = true;
            at.try_emplace(k + 1, true);
        }
    const double bin_ns = static_cast<double>(bin_ps_) / 1000.0;
    std::vector<std::pair<std::string, double>> last;
    for (const auto& [k, unused] : at) {
        std::vector<std::pair<std::string, double>> vals;
        for (const auto& [s, b] : bins_) {
            const auto it = b.find(k);
            vals.emplace_back(s, it == b.end() ? 0.0 : it->second / bin_ns);
        }
        if (vals == last) continue;
        w.counter(process, name, k * bin_ps_, vals);
        last = std::move(vals);
    }
}

}  // namespace trace
