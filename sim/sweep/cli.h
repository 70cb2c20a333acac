// SPDX-License-Identifier: MIT
// `npusim sweep`: options and the command (issue 24). main.cpp only registers the subcommand.
#pragma once
#include <ostream>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace sweep {

struct SweepCliOptions {
    std::string spec, results;
    std::vector<std::string> params, points;
    int jobs = 0;  ///< 0: the CPUs this process may use
    bool quiet = false, list = false, status = false, collect = false, only_failed = false;
    bool slurm = false, wait = false;
    std::string partition, time;
    size_t array_chunk = 0;
    int cpus_per_task = 0;
    std::vector<std::string> sbatch_args;
    std::string slurm_task;  ///< internal: the body of one array task
    std::string version;     ///< npusim version, part of every point id
};

void add_sweep_options(CLI::App& sub, SweepCliOptions& o);

/// Exit codes: 0 every point ok; 1 some point failed, found a problem or is missing (--collect);
/// 2 bad spec or usage; 130 interrupted (finished points are kept, rerun to continue).
int run_sweep_cli(const SweepCliOptions& o, std::ostream& out, std::ostream& err);

}  // namespace sweep
