// SPDX-License-Identifier: MIT
// Roll-ups of a whole-model run's layer rows, shared by the text, JSON, CSV and HTML reports and
// `npusim compare`: layers ranked by time with their share of the latency (what RKNN's perf
// evaluation lists) and the totals per operator type (Vela's summary per op).
#pragma once
#include <string>
#include <vector>

#include "app/model_run.h"

namespace sim {

/// Share of the end-to-end latency, in percent.
double latency_share(const ModelRunResult& r, const ModelLayerRow& l);
/// Indices of the `n` slowest layers (ties: graph order).
std::vector<size_t> top_layers(const ModelRunResult& r, size_t n);

struct OpRollup {
    std::string op, unit;  ///< unit: NPU, CPU, view, or "NPU+CPU" when an op type runs on both
    size_t layers = 0;
    double time_us = 0, share_pct = 0;
    uint64_t macs = 0, ddr_bytes = 0;
};
/// One row per op type, slowest first (ties: first appearance).
std::vector<OpRollup> op_rollup(const ModelRunResult& r);

/// "top layers by time" and "time by op type" tables for the text report.
std::string rollup_text(const ModelRunResult& r, size_t top_n = 10);

}  // namespace sim
