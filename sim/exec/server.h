// SPDX-License-Identifier: MIT
// `npusim serve`: holds one simulated SoC and serves the programs that `npusim exec` runs (their
// LD_PRELOAD interposer connects once per opened device node) over a UNIX socket. One thread per
// connection does the socket I/O; every request runs in the SoC's dispatcher thread, so several
// programs share the SoC as they share a board: their jobs queue on the cores and run concurrently
// on different cores.
#pragma once
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "exec/drm.h"
#include "hw/profile.h"
#include "trace/trace_writer.h"

namespace sim::exec {

class SocHost;
class RknpuDevice;
class RocketDevice;

struct ServeOptions {
    std::string socket;        ///< UNIX socket path
    uint32_t core_mask = 0;    ///< cores the drivers use (0: all)
    bool exit_when_idle = false;  ///< exit when the last connection closes (servers `exec` starts)
    int ready_fd = -1;         ///< write one line here when listening (used by `exec`)
    bool record_trace = false; ///< keep a trace (written on request or at exit to trace_path)
    std::string trace_path, report_path;  ///< written at exit when set
    bool quiet = false;
};

/// Runs the server until SIGINT/SIGTERM, a shutdown request or (exit_when_idle) the last
/// disconnect. Returns the process exit code (0, or 2 when the socket cannot be set up).
int serve(const hw::SocProfile& soc, const ServeOptions& o);

/// The default socket of a platform: $NPUSIM_SOCKET, else $XDG_RUNTIME_DIR (or /tmp) /
/// npusim-<uid>-<platform>.sock.
std::string default_socket(const std::string& platform);

}  // namespace sim::exec
