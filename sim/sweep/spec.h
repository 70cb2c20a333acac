// SPDX-License-Identifier: MIT
// Sweep specifications (issue 24): a JSON or YAML file naming models, platforms, core masks, modes,
// profile-parameter grids and run options, expanded to points. Every point is one `npusim run`;
// its id is a content hash (model bytes, profile bytes, options, npusim version), so a result
// file can be matched to its point on any machine and a changed input invalidates it.
#pragma once
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace sweep {

/// Bad spec, bad option value, unreadable file: exit 2 with the one-line message.
class SweepError : public std::runtime_error {
   public:
    using std::runtime_error::runtime_error;
};

/// One `--param` axis: a profile parameter and the values it takes (already formatted as the
/// `--param section.key=value` text `npusim run` parses).
struct ParamAxis {
    std::string key;
    std::vector<std::string> values;
};

/// Options every point passes to `npusim run` (the subset of its options that a sweep may set).
struct RunOptions {
    uint64_t seed = 0;
    std::vector<std::string> cpu_nodes, input_shapes;
    bool no_compare = false, expect_exact = false, verify_tiling = false;
    nlohmann::ordered_json to_json() const;  ///< canonical, for ids and outputs
};

struct SweepSpec {
    std::string name;
    std::filesystem::path file;          ///< the spec file (absolute)
    std::vector<std::string> models;     ///< as written (relative to the spec's folder)
    std::vector<std::string> platforms;  ///< profile names or profile files
    std::vector<std::string> core_masks{"auto"};
    std::vector<std::string> modes{"timing"};
    std::vector<ParamAxis> params;
    RunOptions options;
    std::string results;  ///< results folder as written ("" = default)
};

/// Reads a .json, .yaml or .yml spec; SweepError naming the file and the key on any problem.
SweepSpec load_spec(const std::string& path);
/// Parses the spec document itself (JSON value; YAML is converted first). `file` names it in errors.
SweepSpec parse_spec(const nlohmann::ordered_json& doc, const std::filesystem::path& file);
/// A grid from text, as `--param key=GRID` takes it: "v", "v1,v2,...", "from:to:step" (inclusive),
/// "from:to:xFACTOR" (geometric). Numbers are formatted as `npusim run --param` parses them.
std::vector<std::string> parse_grid_text(const std::string& key, const std::string& grid);
/// Adds or replaces axes from `--param key=GRID` assignments.
void apply_param_grids(SweepSpec& s, const std::vector<std::string>& assignments);

/// One point: one `npusim run`.
struct Point {
    size_t index = 0;
    std::string id;            ///< 16 hex digits of the SHA-256 of `key`
    std::string model;         ///< as written in the spec
    std::string model_path;    ///< absolute
    std::string platform;      ///< profile name
    std::string profile_file;  ///< set when the spec names a profile file: run --profile
    std::string core_mask, mode;
    std::vector<std::pair<std::string, std::string>> params;
    RunOptions options;
    nlohmann::ordered_json key;  ///< what the id hashes
    /// The `npusim run` arguments (after the program name) writing its report to `report_path`.
    std::vector<std::string> run_args(const std::string& report_path) const;
    /// Inputs for the result files and merged outputs (no machine paths).
    nlohmann::ordered_json inputs_json() const;
};

struct Expansion {
    std::vector<Point> points;
    std::vector<std::string> notes;  ///< combinations left out (core mask not on a platform)
};

/// Expands the grid in a fixed order (models, platforms, core masks, modes, then the parameter
/// axes in spec order, the last varying fastest). Checks every platform, core mask and parameter
/// value with the profile loader and the compiler's core-mask rule before anything runs.
Expansion expand(const SweepSpec& s, const std::string& npusim_version);

/// Formats a number as `--param` text: integers without a fraction, others in the shortest form
/// that reads back to the same double.
std::string number_text(double v);

}  // namespace sweep
