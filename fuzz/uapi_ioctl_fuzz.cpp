// SPDX-License-Identifier: MIT
// libFuzzer target (issue 23): untrusted ioctl streams into the emulated kernel drivers of
// `npusim serve` (sim/exec: the DRM core, the vendor RKNPU uAPI, the mainline rocket uAPI) on the
// real rk3588 SoC. SystemC cannot restart in one process, so the SoC is built once
// (LLVMFuzzerInitialize) and its kernel runs on a background thread for the whole process, as
// `npusim serve` runs it (sim/exec/server.cpp): requests go to the SoC's dispatcher through
// ExecCore, the same code a connection's thread calls, and a watchdog repeats missed wake-ups.
//
// One input = one client session (one open() of a device node):
//   byte 0      bit 0: 0 /dev/dri/card0 (rknpu), 1 /dev/accel/accel0 (rocket); bit 1: rknpu's render
//               node renderD128 (DRM_AUTH ioctls refused); bit 2: NPX_HELLO_LOG (every reply logs)
//   records until the input ends, each  u8 op, u16 len (little-endian), then:
//     op 1 IOCTL   u8 fd, then len bytes: the NPX_OP_IOCTL payload (npx_ioctl_req + arg + extra)
//                  fd != 0 passes a copy of descriptor (fd - 1) % n of those earlier replies
//                  returned (dma-bufs, fences), as the interposer passes what the program holds
//     op 2 MMAP    len bytes: the NPX_OP_MMAP payload (npx_mmap_req); a mapping the driver grants
//                  is kept (its memfd and offset) for WRITE
//     op 3 MUNMAP  len bytes: the NPX_OP_MUNMAP payload (npx_munmap_req)
//     op 4 WRITE   u8 mapping, u32 offset, then len bytes the program stores through mapping
//                  (mapping % n of the granted ones; clipped to the mapping's length, as a store
//                  past it would fault in the program, not in the simulator)
//   any other op, or a short record, ends the session as the server ends a connection that
//   sends one.
// Then the session is closed as a disconnect closes it (ExecCore::close_session), the harness
// waits for every job to end, and checks that the buffer memory is back to what it was before the
// input: GEM objects, physical DDR, IOMMU domains and pages, DRM files, open descriptors.
//
// A clean outcome is any reply (the drivers answer -errno with their log). A C++ exception out of
// a handler, a sanitizer report, a crash, a hang (-timeout) or memory that stays allocated after
// the session ended is a finding ("fuzz finding: ..." and abort).
#include <dirent.h>
#include <sys/types.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <future>
#include <memory>
#include <thread>
#include <time.h>
#include <vector>

#include "exec/core.h"
#include "exec/soc.h"
#include "hw/profile.h"

using namespace sim::exec;

namespace {

struct Host {
    hw::SocProfile soc = hw::load_named_profile("rk3588");
    std::unique_ptr<ExecCore> core;
    std::thread kernel, watchdog;
};
Host* g_host = nullptr;
// NPUSIM_FUZZ_VERBOSE=1: print every request's return value and log (to check what seeds reach).
const bool g_verbose = std::getenv("NPUSIM_FUZZ_VERBOSE") != nullptr;

[[noreturn]] void finding(const std::string& what) {
    std::fprintf(stderr, "fuzz finding: %s\n", what.c_str());
    std::fflush(stderr);
    std::abort();
}

/// Descriptors of buffer memory open in the process (the backings' memfds, "npusim-<driver>-bo<N>",
/// and their copies): fence pipes are counted by the driver (Usage::fences). Other descriptors are
/// left out: libFuzzer and the sanitizers open their own (the symbolizer's pipes) at any time.
size_t open_fds() {
    size_t n = 0;
    if (DIR* d = opendir("/proc/self/fd")) {
        char link[256];
        while (const dirent* e = readdir(d)) {
            const std::string path = std::string("/proc/self/fd/") + e->d_name;
            const ssize_t k = readlink(path.c_str(), link, sizeof link - 1);
            if (k > 0 && std::string(link, static_cast<size_t>(k)).rfind("/memfd:npusim-", 0) == 0) ++n;
        }
        closedir(d);
    }
    return n;
}

ExecCore::Usage usage() {
    ExecCore::Usage u;
    g_host->core->in_sim([&u](std::shared_ptr<Pending> p) {
        u = g_host->core->usage();
        p->complete(Reply{});
    });
    return u;
}

struct Reader {
    const uint8_t* p;
    size_t n;
    bool take(void* out, size_t k) {
        if (k > n) return false;
        std::memcpy(out, p, k);
        p += k;
        n -= k;
        return true;
    }
};

struct Mapping {
    int fd;
    uint64_t offset, length;
};

void run_session(const uint8_t* data, size_t size) {
    ExecCore& core = *g_host->core;
    if (size == 0) return;
    const uint8_t mode = data[0];
    npx_hello h{};
    h.version = NPX_PROTO_VERSION;
    h.pid = 4242;
    h.kind = (mode & 1) ? NPX_KIND_ROCKET : NPX_KIND_RKNPU;
    h.flags = (mode & 4) ? NPX_HELLO_LOG : 0;
    std::snprintf(h.node, sizeof h.node, "%s",
                  (mode & 1) ? "/dev/accel/accel0" : (mode & 2) ? "/dev/dri/renderD128" : "/dev/dri/card0");
    std::snprintf(h.comm, sizeof h.comm, "fuzz");
    std::snprintf(h.tag, sizeof h.tag, "fuzz");
    std::snprintf(h.arch, sizeof h.arch, "x86_64");
    std::shared_ptr<Session> s;
    const Reply hr = core.open_session(h, s);
    if (hr.ret < 0 || !s) finding("hello refused: " + hr.log);

    std::vector<int> fds;  // descriptors the replies passed (the program's copies)
    std::vector<Mapping> maps;
    Reader in{data + 1, size - 1};
    std::vector<uint8_t> payload;
    for (;;) {
        uint8_t op = 0;
        uint16_t len = 0;
        if (!in.take(&op, 1) || !in.take(&len, 2)) break;
        if (op == 4) {
            uint8_t m = 0;
            uint32_t off = 0;
            if (!in.take(&m, 1) || !in.take(&off, 4) || len > in.n) break;
            const uint8_t* bytes = in.p;
            in.p += len;
            in.n -= len;
            if (maps.empty()) continue;
            const Mapping& mp = maps[m % maps.size()];
            if (off >= mp.length) continue;
            const size_t k = std::min<uint64_t>(len, mp.length - off);
            if (pwrite(mp.fd, bytes, k, static_cast<off_t>(mp.offset + off)) != static_cast<ssize_t>(k))
                finding("pwrite into a granted mapping failed");
            continue;
        }
        uint8_t fsel = 0;
        if (op == 1 && !in.take(&fsel, 1)) break;
        if (len > in.n) break;
        payload.assign(in.p, in.p + len);
        in.p += len;
        in.n -= len;
        const uint32_t wire_op = op == 1 ? NPX_OP_IOCTL : op == 2 ? NPX_OP_MMAP : op == 3 ? NPX_OP_MUNMAP : 0;
        if (!wire_op) break;
        int in_fd = -1;
        if (op == 1 && fsel && !fds.empty()) in_fd = dup(fds[(fsel - 1u) % fds.size()]);
        Reply r;
        bool ok = false;
        try {
            ok = core.request(s, wire_op, payload.data(), payload.size(), in_fd, r);
        } catch (const std::exception& e) {
            finding(std::string("exception out of a request: ") + e.what());
        }
        if (!ok) {
            if (in_fd >= 0) close(in_fd);
            break;
        }
        if (g_verbose) {
            uint32_t cmd = 0;
            if (wire_op == NPX_OP_IOCTL) std::memcpy(&cmd, payload.data(), 4);
            std::fprintf(stderr, "op %u cmd 0x%08x ret %d fd %d (%zu open)\n%s", wire_op, cmd, r.ret, r.fd, open_fds(), r.log.c_str());
        }
        if (r.fd >= 0) {
            if (wire_op == NPX_OP_MMAP && r.ret == 0) {
                npx_mmap_req q;
                std::memcpy(&q, payload.data(), sizeof q);
                maps.push_back({r.fd, r.memfd_offset, page_align(q.length)});
            } else if (fds.size() < 64) {
                fds.push_back(r.fd);
            } else {
                close(r.fd);
            }
        }
    }
    core.close_session(s);
    // The program has exited: its descriptors and mappings go (the fences and dma-bufs it held).
    for (int fd : fds) close(fd);
    for (const Mapping& m : maps) close(m.fd);
    // Jobs of the closed file run to their end (or their timeout, in simulated time).
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    if (!core.jobs().wait_all((static_cast<int64_t>(ts.tv_sec) + 50) * 1000000000 + ts.tv_nsec))
        finding("jobs still running 50 s after the session closed");
}

}  // namespace

namespace {
std::atomic<bool> g_stop{false};

/// At exit: stop the kernel as a shutdown request stops `npusim serve`, so the process ends with
/// no SystemC thread running under the static destructors.
void stop_kernel() {
    g_stop = true;
    g_host->core->soc().post([] { sc_core::sc_stop(); });
    g_host->kernel.join();
    g_host->watchdog.join();
}

void start_host() {
    // As npusim's main: 1 ps resolution before any sc_time exists.
    setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 1);
    sc_core::sc_set_time_resolution(1, sc_core::SC_PS);
    g_host = new Host();
    g_host->core = std::make_unique<ExecCore>(g_host->soc, 0, nullptr, /*history=*/false);
    sc_core::sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
    std::promise<void> started;
    // As Server::run: requests are posted once the kernel runs.
    g_host->core->soc().on_start([&started] { started.set_value(); });
    g_host->kernel = std::thread([] { sc_core::sc_start(); });
    g_host->watchdog = std::thread([] {
        // serve's watchdog repeats a missed wake-up every 20 ms; a fuzz input makes hundreds of
        // requests, so this one looks every 0.5 ms (a nudge with nothing pending does nothing).
        while (!g_stop) {
            g_host->core->soc().nudge();
            usleep(500);
        }
    });
    started.get_future().wait();
    std::atexit(stop_kernel);
}
}  // namespace

// libsystemc refers to sc_main (its own main() calls it); the fuzz driver's main() is the one that runs.
int sc_main(int, char*[]) { return 0; }

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static const bool started = (start_host(), true);
    (void)started;
    static const size_t fds0 = open_fds();
    static const ExecCore::Usage base = usage();
    run_session(data, size);
    const ExecCore::Usage after = usage();
    if (g_verbose) std::fprintf(stderr, "before: %s\nafter:  %s\n", base.text().c_str(), after.text().c_str());
    if (after != base) finding("buffer memory left after the session closed: before " + base.text() + ", after " + after.text());
    const size_t fds = open_fds();
    if (fds != fds0)
        finding("buffer descriptors open: " + std::to_string(fds0) + " before the session, " + std::to_string(fds) + " after");
    return 0;
}
