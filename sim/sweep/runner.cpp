// SPDX-License-Identifier: MIT
#include "runner.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace sweep {

namespace {

volatile std::sig_atomic_t g_stop = 0;
void on_stop(int) { g_stop = 1; }

std::string hms(double s) {
    if (!(s >= 0) || s > 359999) return "--:--";
    const auto t = static_cast<long>(s + 0.5);
    return t >= 3600 ? fmt::format("{}:{:02}:{:02}", t / 3600, t / 60 % 60, t % 60)
                     : fmt::format("{}:{:02}", t / 60, t % 60);
}

std::string host_name() {
    char buf[256] = {};
    if (gethostname(buf, sizeof(buf) - 1) != 0 || !buf[0]) return "host";
    return buf;
}

/// work/HOST-PID folders of runners on this host that are gone (killed): their leftovers.
void clean_stale_work(const Store& store, const std::string& host) {
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(store.path("work"), ec)) {
        const std::string name = e.path().filename().string();
        const size_t dash = name.rfind('-');
        if (dash == std::string::npos || name.substr(0, dash) != host) continue;
        const long pid = std::strtol(name.c_str() + dash + 1, nullptr, 10);
        if (pid > 0 && kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)
            std::filesystem::remove_all(e.path(), ec);
    }
}

struct Running {
    const Point* point;
    std::string report, log;
};

}  // namespace

int available_cpus() {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
    const long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? static_cast<int>(n) : 1;
}

PointResult finish_point(const std::string& report_path, const std::string& log_path, int wait_status) {
    PointResult r;
    std::error_code ec;
    std::string log;
    if (std::filesystem::exists(log_path, ec)) log = read_file(log_path);
    std::vector<std::string> errors, tail;  // tail: the log's last lines, for a crash
    std::string last;
    std::istringstream lines(log);
    for (std::string line; std::getline(lines, line);) {
        if (line.rfind("npusim: error: ", 0) == 0) errors.push_back(line.substr(15));
        if (line.empty()) continue;
        last = line;
        tail.push_back(line);
        if (tail.size() > 3) tail.erase(tail.begin());
    }
    for (const std::string& e : errors) r.error += (r.error.empty() ? "" : "; ") + e;
    bool have_report = false;
    if (std::filesystem::exists(report_path, ec)) {
        try {
            r.report = nlohmann::json::parse(read_file(report_path));
            have_report = true;
        } catch (const nlohmann::json::exception& e) {
            r.error += (r.error.empty() ? "" : "; ") + fmt::format("report unreadable ({})", e.what());
        }
    }
    if (WIFSIGNALED(wait_status)) {
        r.exit_code = 128 + WTERMSIG(wait_status);
        r.status = "failed";
        std::string t;
        for (const std::string& l : tail) t += (t.empty() ? "" : " | ") + l;
        r.error = fmt::format("npusim run killed by signal {} ({}){}{}", WTERMSIG(wait_status),
                              strsignal(WTERMSIG(wait_status)), t.empty() ? "" : "; its last output: ", t);
        return r;
    }
    r.exit_code = WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : -1;
    if (r.exit_code == 0 && have_report) {
        r.status = "ok";
        r.error.clear();
    } else if (r.exit_code == 1 && have_report) {
        r.status = "problem";
    } else {
        r.status = "failed";
        if (r.exit_code == 0) r.error = "npusim run wrote no report";
    }
    if (r.status != "ok" && r.error.empty())
        r.error = last.empty() ? fmt::format("npusim run exited with {}", r.exit_code) : last;
    return r;
}

RunCounts run_points(const Store& store, const std::vector<const Point*>& points, const RunnerOptions& o,
                     std::ostream& err) {
    RunCounts c;
    const auto t0 = std::chrono::steady_clock::now();
    const int jobs = std::max(1, o.jobs);

    // SIGCHLD blocked and waited for with sigtimedwait (no polling delay between points);
    // SIGINT/SIGTERM stop the sweep after the running points are stopped.
    sigset_t chld, old_mask;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sigprocmask(SIG_BLOCK, &chld, &old_mask);
    struct sigaction sa {
    }, old_int{}, old_term{};
    sa.sa_handler = on_stop;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    g_stop = 0;
    const pid_t parent = getpid();
    // Each runner has its own work folder (a local sweep and Slurm tasks may share the results).
    const std::string host = host_name();
    clean_stale_work(store, host);
    const std::string work = store.path(fmt::format("work/{}-{}", host, static_cast<long>(parent)));
    {
        std::error_code ec;
        std::filesystem::create_directories(work, ec);
        if (ec) throw SweepError(fmt::format("cannot create '{}' ({})", work, ec.message()));
    }

    std::map<pid_t, Running> running;
    size_t next = 0, done = 0;
    auto elapsed = [&]() { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
    auto draw = [&](bool final_line) {
        if (!o.progress) return;
        const size_t n = points.size();
        const double s = elapsed(), rate = s > 0 ? static_cast<double>(done) / s : 0;
        const int width = 28, fill = n ? static_cast<int>(width * done / n) : width;
        std::string bar(static_cast<size_t>(fill), '#');
        bar += std::string(static_cast<size_t>(width - fill), '-');
        err << fmt::format("\r  {}/{} [{}] {:3}%  {:.1f} points/s  {} {}{}\033[K", done, n, bar,
                           n ? 100 * done / n : 100, rate, final_line ? "took" : "ETA",
                           final_line ? hms(s) : (done ? hms(static_cast<double>(n - done) / rate) : "--:--"),
                           c.failed + c.problem ? fmt::format("  {} not ok", c.failed + c.problem) : "");
        if (final_line) err << "\n";
        err.flush();
    };

    auto launch = [&](const Point* p) {
        Running r{p, work + "/" + p->id + ".report.json", work + "/" + p->id + ".log"};
        std::error_code ec;
        std::filesystem::remove(r.report, ec);
        const std::vector<std::string> args = p->run_args(r.report);
        std::vector<char*> argv;
        std::string prog = o.exe;
        argv.push_back(prog.data());
        std::vector<std::string> own(args);
        for (std::string& a : own) argv.push_back(a.data());
        argv.push_back(nullptr);
        const int log_fd = ::open(r.log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (log_fd < 0) throw SweepError(fmt::format("cannot write '{}' ({})", r.log, std::strerror(errno)));
        const pid_t pid = fork();
        if (pid < 0) {
            ::close(log_fd);
            throw SweepError(fmt::format("cannot start a point ({})", std::strerror(errno)));
        }
        if (pid == 0) {  // child: only async-signal-safe calls until exec
            signal(SIGINT, SIG_DFL);
            signal(SIGTERM, SIG_DFL);
            sigprocmask(SIG_SETMASK, &old_mask, nullptr);
            prctl(PR_SET_PDEATHSIG, SIGTERM);
            if (getppid() != parent) _exit(127);
            const int null_fd = ::open("/dev/null", O_RDONLY);
            if (null_fd >= 0) dup2(null_fd, 0);
            dup2(log_fd, 1);
            dup2(log_fd, 2);
            execv(prog.c_str(), argv.data());
            _exit(127);
        }
        ::close(log_fd);
        running.emplace(pid, std::move(r));
    };

    auto reap = [&](pid_t pid, int status) {
        auto it = running.find(pid);
        if (it == running.end()) return;
        const Running r = std::move(it->second);
        running.erase(it);
        PointResult res = finish_point(r.report, r.log, status);
        res.id = r.point->id;
        store.save(*r.point, res);
        std::error_code ec;
        std::filesystem::remove(r.report, ec);
        std::filesystem::remove(r.log, ec);
        ++c.ran;
        ++done;
        if (res.status == "ok") ++c.ok;
        if (res.status == "problem") ++c.problem;
        if (res.status == "failed") ++c.failed;
    };

    draw(false);
    while (!g_stop && (next < points.size() || !running.empty())) {
        while (!g_stop && next < points.size() && running.size() < static_cast<size_t>(jobs)) launch(points[next++]);
        bool any = false;
        for (;;) {
            int status = 0;
            const pid_t pid = waitpid(-1, &status, WNOHANG);
            if (pid <= 0) break;
            reap(pid, status);
            any = true;
        }
        if (!any && !running.empty()) {
            const timespec ts{0, 250'000'000};
            sigtimedwait(&chld, nullptr, &ts);
        }
        draw(false);
    }
    if (g_stop) {
        c.interrupted = true;
        for (const auto& [pid, r] : running) kill(pid, SIGTERM);
        for (const auto& [pid, r] : running) {
            int status = 0;
            waitpid(pid, &status, 0);
            std::error_code ec;
            std::filesystem::remove(r.report, ec);
            std::filesystem::remove(r.log, ec);
        }
        running.clear();
        if (o.progress) err << "\n";
    } else {
        draw(true);
    }
    {
        std::error_code ec;
        std::filesystem::remove_all(work, ec);
    }
    sigaction(SIGINT, &old_int, nullptr);
    sigaction(SIGTERM, &old_term, nullptr);
    sigprocmask(SIG_SETMASK, &old_mask, nullptr);
    c.seconds = elapsed();
    return c;
}

}  // namespace sweep
