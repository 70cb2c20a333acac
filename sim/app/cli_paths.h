// SPDX-License-Identifier: MIT
// Checks of option values every subcommand shares (../shared/docs/cli.md "Files"): no option is
// given an empty value, and no file the command writes is one it reads or another one it writes
// ("nothing is written unless asked; an output path equal to an input is an error").
#pragma once
#include <string>

#include <CLI/CLI.hpp>

namespace sim::cli {

/// The error text (without the `npusim: error: ` prefix) for the first empty option value or
/// output path that names an input or another output of the parsed subcommand `sub`; "" when the
/// values are fine. Paths are compared as files (hard links and symlinks to one file are one file).
std::string check_option_values(const CLI::App& sub);

}  // namespace sim::cli
