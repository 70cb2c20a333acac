// SPDX-License-Identifier: MIT
// Runs points as child processes: each point is `npusim run ...` executed by the npusim binary
// itself (the sweep's own executable), so a point takes exactly the code path of `npusim run` and
// every point gets a fresh SystemC kernel (it cannot be restarted within one process). Up to
// `jobs` children run at once; each child's result becomes a result file as soon as it exits, so
// an interrupted sweep keeps every finished point. Children die with the sweep (PDEATHSIG).
#pragma once
#include <ostream>
#include <string>
#include <vector>

#include "store.h"

namespace sweep {

struct RunnerOptions {
    std::string exe;  ///< the npusim binary
    int jobs = 1;
    bool progress = false;  ///< progress bar with ETA on stderr (a terminal, not --quiet)
};

struct RunCounts {
    size_t ran = 0, ok = 0, problem = 0, failed = 0;
    bool interrupted = false;  ///< SIGINT/SIGTERM: running points were stopped, no result written
    double seconds = 0;
};

RunCounts run_points(const Store& store, const std::vector<const Point*>& points, const RunnerOptions& o,
                     std::ostream& err);

/// Result of one finished child: status from the exit code and the report file, error from the
/// log (npusim's `npusim: error:` lines). Shared with the Slurm task runner.
PointResult finish_point(const std::string& report_path, const std::string& log_path, int wait_status);

/// CPUs this process may run on (sched_getaffinity: what Slurm or taskset granted), at least 1.
int available_cpus();

}  // namespace sweep
