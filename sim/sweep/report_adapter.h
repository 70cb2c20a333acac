// SPDX-License-Identifier: MIT
// The one place that reads `npusim run --report` JSON for the sweep: everything the merged
// outputs and the HTML page use comes through PointSummary. When the report schema changes
// (issue 17 versions it), only this adapter follows; the raw report stays in the result files,
// so `npusim sweep --collect` re-derives the summaries without rerunning a point.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace sweep {

struct LayerSummary {
    std::string name, op, unit, bound;  ///< unit NPU/CPU/view; bound compute/memory/overhead/host/""
    double time_us = 0, mac_utilisation = 0;
    uint64_t cycles = 0, macs = 0, macs_padded = 0, ddr_read_bytes = 0, ddr_write_bytes = 0;
};

struct PointSummary {
    uint64_t latency_ps = 0, npu_ps = 0, cpu_ps = 0;
    double latency_ms = 0, fps = 0;
    /// totals.inference_ms (the vendor runtime's run-call time, without host I/O conversion);
    /// negative when the report has none (reports written before the timing model split it).
    double inference_ms = -1;
    double inference_fps = -1;  ///< totals.inference_fps, -1 when absent
    std::string calibration;    ///< calibration.status of the SoC's timing (calibrated, inherited, ...)
    uint64_t ddr_read_bytes = 0, ddr_write_bytes = 0, macs = 0, macs_padded = 0, tasks = 0, weight_bytes = 0,
             arena_bytes = 0;
    uint64_t npu_layers = 0, cpu_layers = 0;
    std::vector<LayerSummary> layers;
    /// The layer with the largest time and its share of the summed layer times.
    std::string top_layer;
    double top_layer_share = 0;
    uint64_t bound_counts[4] = {0, 0, 0, 0};  ///< NPU layers bound by compute, memory, overhead; CPU (host)
};

/// Throws SweepError naming the missing or mistyped field.
PointSummary summarize_report(const nlohmann::json& report);

/// The bound of a layer as one letter (c compute, m memory, o overhead, h host, - none): the HTML
/// page's compact per-layer encoding.
char bound_letter(const std::string& bound);

}  // namespace sweep
