// SPDX-License-Identifier: MIT
// `npusim exec` and `npusim serve` (docs/exec.md): run an unmodified Linux program (x86-64, or
// aarch64 under qemu-user) against the simulated NPU's kernel interfaces.
#pragma once
#include <string>
#include <vector>

namespace sim::exec {

struct ExecArgs {
    std::string platform = "rk3588";
    std::string socket;       ///< default: default_socket(platform)
    std::string trace_path, report_path;
    bool log = false;
    std::string core_mask;    ///< cores the emulated drivers use (a server `exec` starts)
    std::vector<std::string> nodes;  ///< PATH=rknpu|rocket (default: /dev/dri/card1, renderD129, accel0)
    std::string qemu = "qemu-aarch64", sysroot = "/usr/aarch64-linux-gnu";
    std::string interposer;   ///< override the interposer library
    std::vector<std::string> command;  ///< PROGRAM ARGS...
};

struct ServeArgs {
    std::string platform = "rk3588";
    std::string socket, core_mask, trace_path, report_path;
    bool exit_when_idle = false, record_trace = false, quiet = false;
    int ready_fd = -1;
};

/// Exit codes: the program's own (128 + N when it died of signal N); 2 bad usage; 126 the program
/// cannot be executed; 127 it was not found.
int cmd_exec(const ExecArgs& a);
int cmd_serve(const ServeArgs& a);

/// RKNN core-mask names: auto, all, 0, 1, 2, 0_1, 0_1_2 ...; 0 = auto. Throws std::invalid_argument
/// naming `where`.
uint32_t parse_core_mask_name(const std::string& s, int cores, const std::string& where);

}  // namespace sim::exec
