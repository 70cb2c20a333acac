// SPDX-License-Identifier: MIT
// Per-layer run report: a text table for people, JSON for tools. Both deterministic.
#pragma once
#include <string>

#include "app/conv_example.h"
#include "app/model_run.h"

namespace sim {

std::string report_text(const RunResult& r);
std::string report_json(const RunResult& r);

/// Version of report_json(ModelRunResult)'s schema (docs/report-schema.md).
inline constexpr int kModelReportSchemaVersion = 1;

/// Whole-model report (issue 6): one row per layer, totals, numerics summary.
std::string report_text(const ModelRunResult& r);
std::string report_json(const ModelRunResult& r);

}  // namespace sim
