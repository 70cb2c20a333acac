// SPDX-License-Identifier: MIT
// The regcmd subcommands of the CLI: decode, lint and replay of a captured or written command
// buffer (docs/cli.md), with the options they share.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "hw/profile.h"
#include "rtl/cosim.h"

namespace sim::cli {

constexpr int kExitProblem = 1;
constexpr int kExitBadInput = 2;

/// Prints `npusim: error: MSG` on stderr; returns kExitBadInput.
int fail(const std::string& msg);

/// --rtl / --rtl-vcd (run and replay): the blocks to co-simulate (nullopt: none), or an error message.
struct RtlChoice {
    std::optional<npu::rtl::RtlOptions> opts;
    std::string error;
};
RtlChoice rtl_choice(const std::string& blocks, const std::string& vcd, const std::string& mode);

/// Target of the regcmd subcommands: a platform name, or a profile file, plus --param overrides.
struct TargetArgs {
    std::string platform = "rk3588";
    std::string profile_file;
    std::vector<std::string> params;
    void add_to(CLI::App& app) {
        app.add_option("-p,--platform,--soc", platform, "SoC profile (see `npusim platforms`); --soc is an alias")
            ->capture_default_str();
        app.add_option("--profile", profile_file, "SoC profile file (JSON like hwdesc/profiles/*.json) instead of the platform's");
        app.add_option("--param", params, "Override a profile parameter: section.key=value, repeatable");
    }
    /// Throws hw::ProfileError (a one-line message naming the platform or file).
    hw::SocProfile load() const {
        hw::SocProfile soc = profile_file.empty() ? hw::load_named_profile(platform) : hw::load_profile(profile_file);
        hw::apply_param_overrides(soc, params);
        return soc;
    }
};

struct RegcmdArgs {
    std::string file;
    TargetArgs target;  ///< --platform tnpuv2 selects tnpuv2 command streams
    std::string base;
};

struct ReplayArgs {
    std::string file, mode = "timing", trace_path, rtl, rtl_vcd;
    std::string vcd_path;  ///< --vcd
    TargetArgs target;
    std::string base, core = "0", core_mask, tasks, amount, task_list;
    std::vector<std::string> loads, dumps;
};

int cmd_decode(const RegcmdArgs& a);
int cmd_lint(const RegcmdArgs& a);
int cmd_replay(const ReplayArgs& a);

}  // namespace sim::cli
