// SPDX-License-Identifier: MIT
// `npusim compare MODEL --platform a,b,c|all [--core-mask m1,m2] [--param k=GRID] [-j N]`: one
// model over a list of SoCs, core masks and parameter values, side by side. The points are a
// sweep built on the fly (sweep::expand) and run by the sweep's runner (one `npusim run` child per
// point, in parallel), so a row is exactly what `npusim run` reports.
#pragma once
#include <ostream>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace sweep {

struct CompareCliOptions {
    std::string model;
    std::string platforms;  ///< comma-separated profile names, or "all" (every RKNPU profile)
    std::string core_masks = "auto";
    std::string mode = "timing";
    std::vector<std::string> params;
    int jobs = 0;
    bool quiet = false;
    std::string csv_path, json_path, html_path;
    std::string version;
};

void add_compare_options(CLI::App& sub, CompareCliOptions& o);

/// Exit codes: 0 every row ran; 1 some row failed or found a problem; 2 bad input or usage.
int run_compare_cli(const CompareCliOptions& o, std::ostream& out, std::ostream& err);

}  // namespace sweep
