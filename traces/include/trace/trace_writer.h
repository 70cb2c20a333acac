// SPDX-License-Identifier: MIT
// Chrome/Perfetto trace-event JSON ("X" complete events on named tracks). Perfetto and
// chrome://tracing open the file directly. Output is byte-deterministic: events keep insertion
// order, times are integer picoseconds printed as microseconds with 6 decimals.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace trace {

/// One argument of an event: a name and a pre-rendered JSON value.
struct Arg {
    std::string key;
    std::string json_value;
};
Arg arg(const std::string& key, const std::string& text);
Arg arg(const std::string& key, uint64_t v);
Arg arg(const std::string& key, int64_t v);
Arg arg(const std::string& key, double v);

class TraceWriter {
   public:
    /// A track (thread) inside a process group, created on first use; returns its id.
    int track(const std::string& process, const std::string& thread);
    /// A complete event [start, start + dur) on a track.
    void complete(int track, const std::string& name, uint64_t start_ps, uint64_t dur_ps,
                  std::vector<Arg> args = {}, const std::string& category = "npu");
    /// A zero-duration marker.
    void instant(int track, const std::string& name, uint64_t at_ps, std::vector<Arg> args = {});
    size_t event_count() const { return events_.size(); }
    std::string to_json() const;
    /// Write to a file; false with errno set on failure.
    bool write_file(const std::string& path) const;

   private:
    struct Track {
        std::string process;
        std::string thread;
        int pid;
        int tid;
    };
    struct Event {
        int track;
        std::string name;
        std::string category;
        char phase;
        uint64_t start_ps;
        uint64_t dur_ps;
        std::vector<Arg> args;
    };
    std::vector<Track> tracks_;
    std::vector<std::string> processes_;
    std::vector<Event> events_;
};

/// JSON string escaping (quotes included).
std::string json_quote(const std::string& s);

}  // namespace trace
