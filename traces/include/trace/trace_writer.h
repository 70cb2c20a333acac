// SPDX-License-Identifier: MIT
// Chrome/Perfetto trace-event JSON: complete ("X") slices on named tracks, counters ("C") and
// level signals, from which the same writer also renders a VCD (GTKWave). Perfetto and
// chrome://tracing open the JSON directly. Output is byte-deterministic: events keep insertion
// order, times are recorded in integer picoseconds and written at nanosecond resolution
// (microseconds with 3 decimals; start and end are rounded separately, so a slice that nests in
// or follows another in picoseconds still does in nanoseconds, as Perfetto stores them).
#pragma once
#include <cstdint>
#include <map>
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

/// How the slices of a track relate in time.
enum class Layout {
    Nested,  ///< slices nest in or follow each other (a block's busy periods)
    Lanes,   ///< slices may overlap (transfers in flight): written on as many lanes ("NAME", "NAME #2",
             ///< ...) as are outstanding at once, each lane nesting, first free lane first
};

class TraceWriter {
   public:
    /// A track (thread) inside a process group, created on first use; returns its id. Tracks and
    /// processes that never receive an event are not written.
    int track(const std::string& process, const std::string& thread, Layout layout = Layout::Nested);
    /// A complete event [start, start + dur) on a track.
    void complete(int track, const std::string& name, uint64_t start_ps, uint64_t dur_ps, std::vector<Arg> args = {},
                  const std::string& category = "npu");
    /// A zero-duration marker.
    void instant(int track, const std::string& name, uint64_t at_ps, std::vector<Arg> args = {});
    /// A counter sample: from at_ps on, each series of counter `name` in `process` has the value
    /// given (Perfetto draws one counter track per series, "NAME SERIES").
    void counter(const std::string& process, const std::string& name, uint64_t at_ps,
                 const std::vector<std::pair<std::string, double>>& values);
    /// A digital line (an interrupt): from at_ps on it has `value`. Written as a counter in the
    /// JSON and as a wire in the VCD; repeated values are dropped.
    void level(const std::string& process, const std::string& name, uint64_t at_ps, bool value);
    /// Adds `args` to every slice of `process` that starts in [from_ps, to_ps) (which layer a
    /// block's slice worked for is known to the caller only after the run). Keys a slice already
    /// has are kept.
    void annotate(const std::string& process, uint64_t from_ps, uint64_t to_ps, std::vector<Arg> args);

    size_t event_count() const { return events_.size(); }
    std::string to_json() const;
    /// Value change dump: per track a busy wire (or, for a Lanes track, the number of slices in
    /// flight), every level as a wire, every counter series as a real; timescale 1 ps.
    std::string to_vcd() const;
    /// Write to a file; false with errno set on failure.
    bool write_file(const std::string& path) const;
    bool write_vcd(const std::string& path) const;

   private:
    struct Track {
        std::string process;
        std::string thread;
        int pid;
        Layout layout;
    };
    struct Event {
        int track;  ///< for 'C': the process index
        std::string name;
        std::string category;
        char phase;
        uint64_t start_ps;
        uint64_t dur_ps;
        std::vector<Arg> args;
    };
    struct Window {
        uint64_t from_ps, to_ps;
        std::vector<Arg> args;
    };
    int process(const std::string& name);
    std::vector<Track> tracks_;
    std::vector<std::string> processes_;
    std::vector<Event> events_;
    std::map<int, std::vector<Window>> windows_;  ///< per pid
    std::map<std::pair<int, std::string>, bool> levels_;
};

/// Traffic of several initiators binned in time, written as bandwidth counters (GB/s = bytes/ns).
class RateCounter {
   public:
    explicit RateCounter(uint64_t bin_ps = 1000000) : bin_ps_(bin_ps) {}
    /// `bytes` moved uniformly over [begin_ps, end_ps) by `series`.
    void add(const std::string& series, uint64_t begin_ps, uint64_t end_ps, uint64_t bytes);
    bool empty() const { return bins_.empty(); }
    /// One sample per bin where a series moved bytes, and zero after the last.
    void emit(TraceWriter& w, const std::string& process, const std::string& name) const;

   private:
    uint64_t bin_ps_;
    std::map<std::string, std::map<uint64_t, double>> bins_;  ///< series -> bin index -> bytes
};

/// JSON string escaping (quotes included).
std::string json_quote(const std::string& s);

}  // namespace trace
