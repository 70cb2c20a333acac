// SPDX-License-Identifier: MIT
// trace::TraceWriter against hand-worked expectations: which lane each overlapping transfer
// lands on (first free lane, as a slot allocator would), nanosecond rounding of start and end
// separately, no empty tracks, annotations, counters and the VCD's value changes (IEEE 1364
// section 18 syntax: $var, #time, scalar 0/1id, vector bN id, real rX id).
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <nlohmann/json.hpp>
#include <sstream>

#include "trace/trace_writer.h"

namespace {

using nlohmann::json;

json events(const trace::TraceWriter& w) { return json::parse(w.to_json())["traceEvents"]; }

std::map<int, std::string> thread_names(const json& ev) {
    std::map<int, std::string> m;
    for (const auto& e : ev)
        if (e["ph"] == "M" && e["name"] == "thread_name") m[e["tid"].get<int>()] = e["args"]["name"];
    return m;
}

TEST(TraceWriter, OverlappingTransfersGoToTheFirstFreeLane) {
    trace::TraceWriter w;
    const int t = w.track("core", "DMA", trace::Layout::Lanes);
    w.complete(t, "a", 0, 10000);      // [0, 10) ns: lane 1
    w.complete(t, "b", 5000, 10000);   // [5, 15): lane 1 busy -> lane 2
    w.complete(t, "c", 12000, 8000);   // [12, 20): lane 1 free again (10 <= 12)
    w.complete(t, "d", 13000, 1000);   // [13, 14): lanes 1 and 2 busy -> lane 3
    const json ev = events(w);
    const auto names = thread_names(ev);
    std::map<std::string, std::string> lane;
    for (const auto& e : ev)
        if (e["ph"] == "X") lane[e["name"]] = names.at(e["tid"].get<int>());
    EXPECT_EQ(lane["a"], "DMA");
    EXPECT_EQ(lane["b"], "DMA #2");
    EXPECT_EQ(lane["c"], "DMA");
    EXPECT_EQ(lane["d"], "DMA #3");
}

TEST(TraceWriter, NestedTracksStayOneTrackAndEmptyOnesAreDropped) {
    trace::TraceWriter w;
    const int t = w.track("core", "CORE");
    w.track("idle", "nothing");  // no event: neither the track nor its process is written
    w.complete(t, "parent", 0, 10000);
    w.complete(t, "child", 2000, 3000);
    const json ev = events(w);
    std::set<int> tids;
    int procs = 0;
    for (const auto& e : ev) {
        if (e["ph"] == "X") tids.insert(e["tid"].get<int>());
        if (e["ph"] == "M" && e["name"] == "process_name") {
            ++procs;
            EXPECT_EQ(e["args"]["name"], "core");
        }
    }
    EXPECT_EQ(tids.size(), 1u);
    EXPECT_EQ(procs, 1);
}

TEST(TraceWriter, StartAndEndRoundToNanosecondsSeparately) {
    trace::TraceWriter w;
    const int t = w.track("p", "t");
    // [1400, 2600) ps: start 1 ns, end 3 ns (half up), so dur 2 ns - rounding the 1200 ps duration
    // on its own would give 1 ns and end the slice before a parent ending at 2600 ps.
    w.complete(t, "x", 1400, 1200);
    w.complete(t, "y", 1000000123, 499);  // 1000000.123 ns .. 1000000.622 -> 1000000 .. 1000001 ns
    const std::string s = w.to_json();
    EXPECT_NE(s.find(R"("ts":0.001,"dur":0.002)"), std::string::npos) << s;
    EXPECT_NE(s.find(R"("ts":1000.000,"dur":0.001)"), std::string::npos) << s;
}

TEST(TraceWriter, AnnotationsAddArgsToSlicesStartingInTheWindow) {
    trace::TraceWriter w;
    const int a = w.track("core0", "CNA"), b = w.track("core1", "CNA");
    w.complete(a, "in", 1000, 10, {trace::arg("layer", "own")});
    w.complete(a, "in2", 1500, 10);
    w.complete(a, "out", 2000, 10);
    w.complete(b, "other", 1200, 10);
    w.annotate("core0", 1000, 2000, {trace::arg("layer", "conv1"), trace::arg("op", "Conv")});
    std::map<std::string, json> args;
    for (const auto& e : events(w))
        if (e["ph"] == "X") args[e["name"]] = e.value("args", json::object());
    EXPECT_EQ(args["in"]["layer"], "own");  // kept
    EXPECT_EQ(args["in"]["op"], "Conv");
    EXPECT_EQ(args["in2"]["layer"], "conv1");
    EXPECT_FALSE(args["out"].contains("layer"));    // starts at the window's end
    EXPECT_FALSE(args["other"].contains("layer"));  // another process
}

TEST(RateCounter, SpreadsBytesOverBinsAndReturnsToZero) {
    trace::TraceWriter w;
    trace::RateCounter rc(1000000);  // 1 us bins
    rc.add("core read", 500000, 2500000, 2000);  // 2000 B over 2 us: 500 B in bin 0, 1000 in 1, 500 in 2
    rc.add("core write", 1000000, 1000000, 300);  // instantaneous: all in bin 1
    rc.emit(w, "ddr", "bw");
    std::vector<std::pair<double, json>> samples;
    for (const auto& e : events(w))
        if (e["ph"] == "C") samples.emplace_back(e["ts"].get<double>(), e["args"]);
    ASSERT_EQ(samples.size(), 4u);
    EXPECT_DOUBLE_EQ(samples[0].first, 0.0);
    EXPECT_DOUBLE_EQ(samples[0].second["core read"].get<double>(), 0.5);  // 500 B / 1000 ns
    EXPECT_DOUBLE_EQ(samples[1].second["core read"].get<double>(), 1.0);
    EXPECT_DOUBLE_EQ(samples[1].second["core write"].get<double>(), 0.3);
    EXPECT_DOUBLE_EQ(samples[2].second["core read"].get<double>(), 0.5);
    EXPECT_DOUBLE_EQ(samples[3].first, 3.0);
    EXPECT_DOUBLE_EQ(samples[3].second["core read"].get<double>(), 0.0);
}

TEST(TraceWriter, VcdHasBusyWiresInFlightCountsLevelsAndReals) {
    trace::TraceWriter w;
    const int core = w.track("npu core0", "CORE");
    const int dma = w.track("npu core0", "DMA read", trace::Layout::Lanes);
    w.complete(core, "t0", 100, 50);
    w.complete(core, "t0 inner", 110, 10);  // nested: the wire stays 1
    w.complete(dma, "a", 100, 100);
    w.complete(dma, "b", 150, 100);
    w.level("npu core0", "irq", 300, true);
    w.level("npu core0", "irq", 301, true);  // repeated value dropped
    w.level("npu core0", "irq", 400, false);
    w.counter("npu core0", "CBUF", 100, {{"data", 4096.0}});
    const std::string v = w.to_vcd();
    EXPECT_NE(v.find("$timescale 1ps $end"), std::string::npos);
    EXPECT_NE(v.find("$scope module npu_core0 $end"), std::string::npos);
    // Identifiers in declaration order: CORE busy '!', DMA in flight '"', irq '#', CBUF data '$'.
    EXPECT_NE(v.find("$var wire 1 ! CORE_busy $end"), std::string::npos) << v;
    EXPECT_NE(v.find("$var integer 8 \" DMA_read_in_flight $end"), std::string::npos) << v;
    EXPECT_NE(v.find("$var wire 1 # irq $end"), std::string::npos) << v;
    EXPECT_NE(v.find("$var real 64 $ CBUF_data $end"), std::string::npos) << v;
    const std::string changes = v.substr(v.find("$end\n", v.find("$dumpvars")) + 5);
    EXPECT_EQ(changes,
              "#100\n1!\nb1 \"\nr4096 $\n"
              "#150\n0!\nb10 \"\n"
              "#200\nb1 \"\n"
              "#250\nb0 \"\n"
              "#300\n1#\n"
              "#400\n0#\n");
}

}  // namespace
