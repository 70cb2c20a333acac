// SPDX-License-Identifier: MIT
// Merged outputs of a sweep: one JSON and one CSV over every point of the manifest, in point
// order (never completion order), so the same results give the same bytes wherever they ran;
// and the self-contained HTML page (html.cpp).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "report_adapter.h"
#include "store.h"

namespace sweep {

struct MergedPoint {
    const Point* point = nullptr;
    std::string status;  ///< ok, problem, failed, missing
    int exit_code = 0;
    std::string error;
    std::optional<PointSummary> summary;  ///< ok and problem points with a readable report
};

struct Merged {
    std::string name, npusim_version;
    std::vector<std::string> param_keys, notes;
    std::vector<MergedPoint> rows;
    size_t ok = 0, problem = 0, failed = 0, missing = 0;
};

Merged merge(const Store& store, const Manifest& m);
std::string merged_json(const Merged& m);
/// One row per point: inputs, status, totals and a per-layer roll-up (layers per bound, top layer).
std::string merged_csv(const Merged& m);
/// Self-contained page (inline SVG drawn by inline JS from embedded data, no network).
std::string merged_html(const Merged& m);

}  // namespace sweep
