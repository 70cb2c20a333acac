// SPDX-License-Identifier: MIT
#include "exec/exec_cli.h"

#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "exec/protocol.h"
#include "exec/server.h"
#include "hw/profile.h"

extern char** environ;

namespace sim::exec {

namespace {

constexpr int kBadInput = 2, kCannotExec = 126, kNotFound = 127;

int fail(const std::string& msg, int code = kBadInput) {
    std::cerr << "npusim: error: " << msg << "\n";
    return code;
}

std::string self_exe() {
    char buf[PATH_MAX];
    const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

/// What the program is: a dynamically linked ELF of which machine, or something else (a script).
struct Binary {
    bool elf = false, dynamic = false;
    int machine = 0;
};

Binary inspect(const std::string& path) {
    Binary b;
    std::ifstream f(path, std::ios::binary);
    Elf64_Ehdr eh{};
    if (!f.read(reinterpret_cast<char*>(&eh), sizeof eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) return b;
    b.elf = true;
    if (eh.e_ident[EI_CLASS] != ELFCLASS64) return b;
    b.machine = eh.e_machine;
    for (int i = 0; i < eh.e_phnum; ++i) {
        Elf64_Phdr ph{};
        f.seekg(static_cast<std::streamoff>(eh.e_phoff + static_cast<uint64_t>(i) * eh.e_phentsize));
        if (!f.read(reinterpret_cast<char*>(&ph), sizeof ph)) break;
        if (ph.p_type == PT_INTERP) b.dynamic = true;
    }
    return b;
}

std::string find_in_path(const std::string& cmd) {
    if (cmd.find('/') != std::string::npos) return cmd;
    const char* p = std::getenv("PATH");
    std::string path = p ? p : "/usr/bin:/bin";
    for (size_t at = 0; at <= path.size();) {
        const size_t next = std::min(path.find(':', at), path.size());
        const std::string dir = path.substr(at, next - at);
        const std::string cand = (dir.empty() ? "." : dir) + "/" + cmd;
        if (access(cand.c_str(), X_OK) == 0) return cand;
        at = next + 1;
    }
    return "";
}

/// The interposer next to the binary: build tree (sim/npusim -> sim/interposer/) or install
/// (bin/npusim -> lib/npusim/).
std::string find_interposer(const std::string& override_path, const std::string& file) {
    if (!override_path.empty()) return override_path;
    if (const char* e = std::getenv("NPUSIM_INTERPOSER_DIR"); e && *e) return std::string(e) + "/" + file;
    const std::filesystem::path dir = std::filesystem::path(self_exe()).parent_path();
    for (const auto& cand : {dir / "interposer" / file, dir / ".." / "lib" / "npusim" / file})
        if (std::filesystem::exists(cand)) return std::filesystem::weakly_canonical(cand).string();
    return "";
}

int connect_to(const std::string& path) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (path.size() >= sizeof addr.sun_path) return -1;
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/// Start `npusim serve` for this run; returns its pid, or -1 with a message.
pid_t start_server(const ExecArgs& a, const std::string& socket, std::string& why) {
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) {
        why = std::strerror(errno);
        return -1;
    }
    const std::string exe = self_exe();
    std::vector<std::string> argv = {exe, "serve", "--platform", a.platform, "--socket", socket, "--exit-when-idle",
                                     "--quiet", "--ready-fd", std::to_string(p[1])};
    if (!a.trace_path.empty()) argv.push_back("--record-trace");
    if (!a.core_mask.empty()) argv.insert(argv.end(), {"--core-mask", a.core_mask});
    const pid_t pid = fork();
    if (pid == 0) {
        fcntl(p[1], F_SETFD, 0);
        std::vector<char*> av;
        for (auto& s : argv) av.push_back(s.data());
        av.push_back(nullptr);
        execv(exe.c_str(), av.data());
        _exit(kCannotExec);
    }
    close(p[1]);
    char buf[16] = {};
    pollfd pf{p[0], POLLIN, 0};
    const int r = poll(&pf, 1, 60000);
    const ssize_t n = r > 0 ? read(p[0], buf, sizeof buf - 1) : 0;
    close(p[0]);
    if (n <= 0 || std::strncmp(buf, "ready", 5) != 0) {
        int st = 0;
        if (waitpid(pid, &st, WNOHANG) == 0) kill(pid, SIGTERM);
        waitpid(pid, &st, 0);
        why = "the simulator did not start";
        return -1;
    }
    return pid;
}

int control(int fd, uint32_t what, const std::string& text, std::string& msg) {
    npx_control c{what, static_cast<uint32_t>(text.size())};
    if (npx_send(fd, NPX_OP_CONTROL, &c, sizeof c, text.data(), text.size(), nullptr, 0, nullptr, 0) != 0) return -EPIPE;
    npx_hdr h{};
    void* pl = nullptr;
    int fds[2];
    if (npx_recv(fd, &h, &pl, fds) != 0 || h.len < sizeof(npx_status_rep)) {
        free(pl);
        return -EPIPE;
    }
    npx_status_rep rep;
    std::memcpy(&rep, pl, sizeof rep);
    msg.assign(static_cast<char*>(pl) + sizeof rep, std::min<size_t>(rep.text_len, h.len - sizeof rep));
    free(pl);
    return rep.ret;
}

std::string absolute(const std::string& p) {
    return p.empty() ? p : std::filesystem::absolute(p).lexically_normal().string();
}

}  // namespace

uint32_t parse_core_mask_name(const std::string& s, int cores, const std::string& where) {
    if (s == "auto" || s.empty()) return 0;
    if (s == "all") return (1u << cores) - 1u;
    uint32_t m = 0;
    for (size_t pos = 0; pos <= s.size();) {
        const size_t next = std::min(s.find('_', pos), s.size());
        const std::string item = s.substr(pos, next - pos);
        if (item.size() != 1 || item[0] < '0' || item[0] > '9' || (m >> (item[0] - '0')) & 1u)
            throw std::invalid_argument(fmt::format("--core-mask '{}': expected auto, all or cores like 0_1_2, {}", s, where));
        const int c = item[0] - '0';
        if (c >= cores)
            throw std::invalid_argument(
                fmt::format("--core-mask '{}': core {} does not exist, {} (cores 0..{})", s, c, where, cores - 1));
        m |= 1u << c;
        pos = next + 1;
    }
    return m;
}

int cmd_serve(const ServeArgs& a) {
    hw::SocProfile soc;
    try {
        soc = hw::load_named_profile(a.platform);
    } catch (const std::exception& e) {
        return fail(fmt::format("{}, serve", e.what()));
    }
    if (soc.family != "rknpu") return fail(fmt::format("--platform {}: not an RKNPU SoC, serve", a.platform));
    if (soc.name == "rk2118")
        return fail("--platform rk2118: the RK2118 runs RT-Thread, which has no Linux DRM node to emulate, serve");
    ServeOptions o;
    o.socket = a.socket.empty() ? default_socket(soc.name) : a.socket;
    try {
        o.core_mask = parse_core_mask_name(a.core_mask, soc.npu.core_count.value, "serve");
    } catch (const std::invalid_argument& e) {
        return fail(e.what());
    }
    o.exit_when_idle = a.exit_when_idle;
    o.ready_fd = a.ready_fd;
    o.record_trace = a.record_trace;
    o.trace_path = absolute(a.trace_path);
    o.report_path = absolute(a.report_path);
    o.quiet = a.quiet;
    return serve(soc, o);
}

int cmd_exec(const ExecArgs& a) {
    if (a.command.empty()) return fail("no program given, exec (usage: npusim exec [options] -- PROGRAM ARGS...)");
    hw::SocProfile soc;
    try {
        soc = hw::load_named_profile(a.platform);
    } catch (const std::exception& e) {
        return fail(fmt::format("{}, exec", e.what()));
    }
    if (soc.family != "rknpu") return fail(fmt::format("--platform {}: not an RKNPU SoC, exec", a.platform));
    if (soc.name == "rk2118")
        return fail("--platform rk2118: the RK2118 runs RT-Thread, which has no Linux DRM node to emulate, exec");
    try {
        parse_core_mask_name(a.core_mask, soc.npu.core_count.value, "exec");
    } catch (const std::invalid_argument& e) {
        return fail(e.what());
    }
    std::string nodes;
    for (const std::string& n : a.nodes) {
        const size_t eq = n.find('=');
        const std::string kind = eq == std::string::npos ? "" : n.substr(eq + 1);
        if (eq == std::string::npos || n[0] != '/' || (kind != "rknpu" && kind != "rocket"))
            return fail(fmt::format("--node '{}': expected /dev/PATH=rknpu or /dev/PATH=rocket, exec", n));
        if (kind == "rocket" && soc.name != "rk3588")
            return fail(fmt::format("--node '{}': the rocket driver exists for rk3588 only, exec", n));
        nodes += (nodes.empty() ? "" : ":") + n;
    }
    const std::string program = find_in_path(a.command[0]);
    if (program.empty() || access(program.c_str(), F_OK) != 0)
        return fail(fmt::format("program '{}' not found, exec", a.command[0]), kNotFound);
    if (access(program.c_str(), X_OK) != 0)
        return fail(fmt::format("program '{}' is not executable, exec", program), kCannotExec);
    const Binary bin = inspect(program);
    const bool arm64 = bin.elf && bin.machine == EM_AARCH64;
    if (bin.elf && bin.machine != EM_X86_64 && bin.machine != EM_AARCH64)
        return fail(fmt::format("program '{}': ELF machine {} is neither x86-64 nor aarch64, exec", program, bin.machine),
                    kCannotExec);
    if (bin.elf && !bin.dynamic)
        return fail(fmt::format("program '{}' is statically linked, exec (the interposer is an LD_PRELOAD library: "
                                "link the program dynamically)",
                                program),
                    kCannotExec);
    const std::string lib =
        find_interposer(a.interposer, arm64 ? "libnpusim-interposer-aarch64.so" : "libnpusim-interposer.so");
    if (lib.empty() || access(lib.c_str(), R_OK) != 0)
        return fail(fmt::format("the {} interposer library is not built, exec (build target npusim_interposer{}; or "
                                "--interposer PATH)",
                                arm64 ? "aarch64" : "x86-64", arm64 ? "_aarch64" : ""));
    std::string qemu;
    if (arm64) {
        qemu = find_in_path(a.qemu);
        if (qemu.empty()) return fail(fmt::format("'{}' not found, exec (install qemu-user; or --qemu PATH)", a.qemu));
        if (access((a.sysroot + "/lib/ld-linux-aarch64.so.1").c_str(), F_OK) != 0)
            return fail(fmt::format("--sysroot {}: no lib/ld-linux-aarch64.so.1, exec (install libc6-arm64-cross, which "
                                    "gcc-aarch64-linux-gnu brings)",
                                    a.sysroot));
    }
    const std::string socket = a.socket.empty() ? default_socket(soc.name) : a.socket;
    pid_t server = -1;
    int ctl = connect_to(socket);
    if (ctl < 0) {
        std::string why;
        server = start_server(a, socket, why);
        if (server < 0) return fail(fmt::format("{} at '{}', exec", why, socket), 125);
        ctl = connect_to(socket);
        if (ctl < 0) return fail(fmt::format("cannot connect to the simulator at '{}', exec", socket), 125);
    }
    const std::string tag = fmt::format("exec-{}", getpid());
    npx_hello hello{};
    hello.version = NPX_PROTO_VERSION;
    hello.pid = getpid();
    hello.kind = NPX_KIND_CONTROL;
    std::snprintf(hello.comm, sizeof hello.comm, "npusim-exec");
    std::snprintf(hello.tag, sizeof hello.tag, "%s", tag.c_str());
    npx_send(ctl, NPX_OP_HELLO, &hello, sizeof hello, nullptr, 0, nullptr, 0, nullptr, 0);
    {
        npx_hdr h{};
        void* pl = nullptr;
        int fds[2];
        if (npx_recv(ctl, &h, &pl, fds) != 0) return fail(fmt::format("the simulator at '{}' did not answer, exec", socket), 125);
        free(pl);
    }
    // The program's environment: the interposer and where it finds the simulator.
    std::vector<std::string> env;
    for (char** e = environ; *e; ++e) {
        const std::string s = *e;
        if (s.rfind("NPUSIM_", 0) == 0 || (arm64 && s.rfind("LD_PRELOAD=", 0) == 0)) continue;
        if (!arm64 && s.rfind("LD_PRELOAD=", 0) == 0) continue;
        env.push_back(s);
    }
    std::vector<std::string> mine = {"NPUSIM_SOCKET=" + socket, "NPUSIM_TAG=" + tag};
    if (a.log) mine.push_back("NPUSIM_LOG=1");
    if (!nodes.empty()) mine.push_back("NPUSIM_NODES=" + nodes);
    const char* pre = std::getenv("LD_PRELOAD");
    std::vector<std::string> argv;
    if (arm64) {
        argv = {qemu, "-L", a.sysroot, "-E", "LD_PRELOAD=" + lib};
        for (const std::string& m : mine) argv.insert(argv.end(), {"-E", m});
        argv.push_back(program);
    } else {
        env.push_back("LD_PRELOAD=" + lib + (pre && *pre ? std::string(":") + pre : ""));
        argv = {program};
    }
    env.insert(env.end(), mine.begin(), mine.end());
    argv.insert(argv.end(), a.command.begin() + 1, a.command.end());
    const pid_t child = fork();
    if (child == 0) {
        std::vector<char*> av, ev;
        for (auto& s : argv) av.push_back(s.data());
        for (auto& s : env) ev.push_back(s.data());
        av.push_back(nullptr);
        ev.push_back(nullptr);
        execve(arm64 ? qemu.c_str() : program.c_str(), av.data(), ev.data());
        std::cerr << fmt::format("npusim: error: cannot execute '{}': {}, exec\n", program, std::strerror(errno));
        _exit(kCannotExec);
    }
    int status = 0;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    std::string msg;
    if (!a.trace_path.empty() && control(ctl, NPX_CTL_WRITE_TRACE, absolute(a.trace_path), msg) != 0) {
        std::cerr << fmt::format("npusim: error: {}, exec --trace\n", msg.empty() ? "trace not written" : msg);
        if (rc == 0) rc = kBadInput;
    }
    if (!a.report_path.empty() && control(ctl, NPX_CTL_WRITE_REPORT, absolute(a.report_path), msg) != 0) {
        std::cerr << fmt::format("npusim: error: {}, exec --report\n", msg.empty() ? "report not written" : msg);
        if (rc == 0) rc = kBadInput;
    }
    close(ctl);
    if (server > 0) {
        int st = 0;
        while (waitpid(server, &st, 0) < 0 && errno == EINTR) {
        }
    }
    return rc;
}

}  // namespace sim::exec
