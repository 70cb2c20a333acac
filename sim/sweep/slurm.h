// SPDX-License-Identifier: MIT
// Sweeps on Slurm: a submission writes the points to run and a batch script into the results
// folder's slurm/ and submits one job array through `sbatch`; array task i runs points
// [i*K, (i+1)*K) of the list with the same runner as a local sweep, writing one result file per
// point into the shared results folder. `--status` asks `squeue` about the recorded jobs.
#pragma once
#include <ostream>
#include <string>
#include <vector>

#include "store.h"

namespace sweep {

struct SlurmOptions {
    std::string partition, time;
    size_t array_chunk = 0;  ///< points per array task; 0: as few tasks as fit MaxArraySize's default
    int cpus_per_task = 1;
    bool wait = false;   ///< sbatch --wait: return when the whole array has finished
    bool force = false;  ///< tasks rerun points even when a result exists (--point, --only-failed)
    std::vector<std::string> sbatch_args;
};

struct Submission {
    std::string job_id;
    size_t points = 0, tasks = 0, chunk = 0;
    int sbatch_exit = 0;  ///< with --wait: sbatch's exit code (non-zero when a task failed)
};

/// SweepError when sbatch is missing or refuses the job (its message).
Submission submit(const Store& store, const std::string& name, const std::string& exe,
                  const std::vector<const Point*>& points, const SlurmOptions& o, std::ostream& out);

/// The body of one array task (`npusim sweep --slurm-task FILE`): SLURM_ARRAY_TASK_ID selects
/// the chunk. Exit 0 when every point of the chunk is ok, 1 otherwise.
int run_task(const Store& store, const std::string& points_file, const std::string& exe, std::ostream& err);

/// One line per recorded job: its array tasks by state from squeue (or why squeue cannot say).
std::vector<std::string> job_status(const Store& store);

/// Runs a program without a shell; stdout and stderr captured. rc -1: it could not be started.
struct Captured {
    int rc = -1;
    std::string out, err;
};
Captured run_capture(const std::vector<std::string>& argv);

}  // namespace sweep
