// SPDX-License-Identifier: MIT
// The results folder of a sweep, shared by the local runner, the Slurm array tasks and --status /
// --collect:
//   manifest.json        the expanded points (written before anything runs)
//   points/ID.json       one result per point: its key, inputs, status, exit code, error, raw report
//   work/HOST-PID/       a runner's running points' reports and logs (removed as results are written)
//   slurm/               batch scripts, point lists and task logs of each submission
//   sweep.csv, sweep.json, sweep.html   the merged outputs
// Result files are written to a temporary name and renamed, so a killed sweep leaves either a
// whole result or none; a result counts only when its id and key match the point's.
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "spec.h"

namespace sweep {

struct PointResult {
    std::string id;
    std::string status;  ///< "ok", "problem" (the run found a problem: exit 1), "failed"
    int exit_code = 0;
    std::string error;      ///< npusim's error lines, or what went wrong around it
    nlohmann::json report;  ///< the run's --report JSON (null when it wrote none)
    bool ok() const { return status == "ok"; }
};

struct Manifest {
    std::string name, npusim_version;
    std::vector<std::string> param_keys;
    std::vector<std::string> notes;
    std::vector<Point> points;
};

class Store {
   public:
    explicit Store(std::string dir) : dir_(std::move(dir)) {}
    const std::string& dir() const { return dir_; }
    std::string path(const std::string& rel) const { return dir_ + "/" + rel; }
    std::string result_path(const std::string& id) const { return path("points/" + id + ".json"); }

    /// Creates the folders; SweepError when it cannot.
    void init() const;
    void write_manifest(const Manifest& m) const;
    /// SweepError when absent or malformed (names the file).
    Manifest read_manifest() const;

    /// The point's result, if one exists whose id and key match (nullopt: absent, stale, torn).
    std::optional<PointResult> load(const Point& p) const;
    void save(const Point& p, const PointResult& r) const;
    /// Result files in points/ that belong to no point of `m` (an older spec's).
    std::vector<std::string> stale(const Manifest& m) const;

   private:
    std::string dir_;
};

/// Writes `text` to `path` through a temporary file in the same folder and a rename.
void write_atomic(const std::string& path, const std::string& text);
std::string read_file(const std::string& path);

nlohmann::ordered_json point_to_json(const Point& p);
Point point_from_json(const nlohmann::ordered_json& j);

}  // namespace sweep
