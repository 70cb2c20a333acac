// SPDX-License-Identifier: MIT
// The report files of a whole-model run besides --report/--trace: --vcd (the trace writer's VCD),
// --csv (one row per layer), --html (a self-contained page: per-layer bars, roofline, NPU timeline,
// CPU fallbacks). Nothing is written for an empty path.
#pragma once
#include <string>

#include "app/model_run.h"
#include "hw/profile.h"
#include "trace/trace_writer.h"

namespace sim {

/// Per-layer CSV (RFC 4180: comma separated, quoted when needed, header row).
std::string report_csv(const ModelRunResult& r);
/// The self-contained HTML page (no network: inline CSS, JS and SVG).
std::string report_html(const ModelRunResult& r, const hw::SocProfile& soc);
/// Writes the files asked for; "" or the error message naming the file.
std::string write_report_files(const ModelRunResult& r, const hw::SocProfile& soc, const trace::TraceWriter& tw,
                               const std::string& vcd_path, const std::string& csv_path, const std::string& html_path);

}  // namespace sim
