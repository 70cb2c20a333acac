// SPDX-License-Identifier: MIT
// The CLI's one vocabulary (../shared/docs/cli.md) in code: platform names (lower case, matched
// case-insensitively, operator-table names as aliases), "did you mean" for unknown platforms and
// options, parse errors as one `npusim: error:` line, and which `run` options apply to which
// kind of run (an option that does not apply is an error naming the option and the run kind).
#pragma once
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace sim::cli {

/// Levenshtein distance (case-insensitive).
size_t edit_distance(const std::string& a, const std::string& b);

/// The candidate closest to `word` when it is close enough to be a typo ("" otherwise).
std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates);

/// Every platform name `run` accepts: the SoC profiles, the MCU targets and tnpuv2, lower case.
std::vector<std::string> platform_names();

/// `name` as its canonical platform name: case-insensitive; an operator-table name
/// ("RK3566_RK3568", "RV1103B_RV1106B") maps to its first member with a profile; MCU aliases
/// (hi3863, 3066m) to their target. Throws std::invalid_argument with the one-line message
/// (known names, "did you mean") for an unknown name.
std::string canonical_platform(const std::string& name);

/// Kinds of `npusim run`, as bits.
enum RunKind : unsigned { kLayerRun = 1, kNpuModelRun = 2, kMcuRun = 4, kReferenceRun = 8, kTnpuv2Run = 16 };
const char* run_kind_name(unsigned kind);  ///< "layer runs", "NPU model runs", ...

/// One row of the applicability table: the option's long name and the run kinds it applies to.
struct OptionScope {
    const char* option;
    unsigned kinds;
    const char* hint = nullptr;  ///< what to use instead, where there is a counterpart
};
const std::vector<OptionScope>& run_option_scopes();

/// The error text for the first option given on `run` (CLI11 counts) that does not apply to
/// `kind`; `where` names the run ("--platform rk3588 m.onnx"). "" when every option applies.
std::string inapplicable_option(const CLI::App& run, unsigned kind, const std::string& where);

/// One line (without the `npusim: error: ` prefix) for a CLI11 parse error; unknown options get a
/// "did you mean" from the options of the subcommand they were given to.
std::string parse_error_text(CLI::App& app, const CLI::ParseError& e);

}  // namespace sim::cli
