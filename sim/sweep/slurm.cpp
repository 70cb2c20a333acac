// SPDX-License-Identifier: MIT
#include "slurm.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <sstream>

#include "runner.h"

namespace sweep {

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

namespace {

constexpr size_t kDefaultMaxArraySize = 1001;  // slurm.conf MaxArraySize default: indices 0..1000

std::string sh_quote(const std::string& s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

std::string trim(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
    return s;
}

}  // namespace

Captured run_capture(const std::vector<std::string>& argv) {
    Captured c;
    char out_tmpl[] = "/tmp/npusim-sweep-outXXXXXX", err_tmpl[] = "/tmp/npusim-sweep-errXXXXXX";
    const int out_fd = mkstemp(out_tmpl), err_fd = mkstemp(err_tmpl);
    if (out_fd < 0 || err_fd < 0) return c;
    std::vector<std::string> own(argv);
    std::vector<char*> args;
    for (std::string& a : own) args.push_back(a.data());
    args.push_back(nullptr);
    const pid_t pid = fork();
    if (pid == 0) {
        const int null_fd = ::open("/dev/null", O_RDONLY);
        if (null_fd >= 0) dup2(null_fd, 0);
        dup2(out_fd, 1);
        dup2(err_fd, 2);
        execvp(args[0], args.data());
        _exit(127);
    }
    int status = 0;
    if (pid > 0) {
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
        c.rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    ::close(out_fd);
    ::close(err_fd);
    c.out = read_file(out_tmpl);
    c.err = read_file(err_tmpl);
    ::unlink(out_tmpl);
    ::unlink(err_tmpl);
    if (c.rc == 127 && c.out.empty() && c.err.empty()) c.rc = -1;  // exec failed: no such program
    return c;
}

Submission submit(const Store& store, const std::string& name, const std::string& exe,
                  const std::vector<const Point*>& points, const SlurmOptions& o, std::ostream& out) {
    Submission s;
    s.points = points.size();
    s.chunk = o.array_chunk
                  ? o.array_chunk
                  : std::max<size_t>(1, (points.size() + kDefaultMaxArraySize - 2) / (kDefaultMaxArraySize - 1));
    s.tasks = (points.size() + s.chunk - 1) / s.chunk;
    size_t n = 1;
    while (fs::exists(store.path(fmt::format("slurm/submit-{}.sh", n)))) ++n;
    const std::string base = store.path(fmt::format("slurm/submit-{}", n));
    ojson list;
    list["format"] = "npusim-sweep-slurm-points";
    list["chunk"] = s.chunk;
    list["force"] = o.force;
    ojson pts = ojson::array();
    for (const Point* p : points) pts.push_back(point_to_json(*p));
    list["points"] = pts;
    write_atomic(base + ".points.json", list.dump(1) + "\n");
    std::string label;  // job name and comment: the sweep name without shell or line breaks
    for (char ch : name)
        label += std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_' || ch == '.' ? ch : '_';
    std::string script = "#!/bin/sh\n";
    script += fmt::format("# npusim sweep '{}', submission {}: {} points in {} array tasks of up to {} (generated)\n",
                          label, n, s.points, s.tasks, s.chunk);
    script += fmt::format("exec {} sweep --results {} --slurm-task {}\n", sh_quote(exe), sh_quote(store.dir()),
                          sh_quote(base + ".points.json"));
    write_atomic(base + ".sh", script);

    std::vector<std::string> argv{
        "sbatch",   "--parsable",       "--job-name", "npusim-sweep-" + label, fmt::format("--array=0-{}", s.tasks - 1),
        "--output", base + "_%A_%a.out"};
    if (!o.partition.empty()) argv.insert(argv.end(), {"--partition", o.partition});
    if (!o.time.empty()) argv.insert(argv.end(), {"--time", o.time});
    argv.push_back(fmt::format("--cpus-per-task={}", std::max(1, o.cpus_per_task)));
    if (o.wait) argv.push_back("--wait");
    argv.insert(argv.end(), o.sbatch_args.begin(), o.sbatch_args.end());
    argv.push_back(base + ".sh");
    out << fmt::format("submitting {} points as a job array of {} task(s) of up to {} point(s){}\n", s.points, s.tasks,
                       s.chunk, o.wait ? "; waiting for it to finish" : "");
    out.flush();
    const Captured c = run_capture(argv);
    if (c.rc < 0)
        throw SweepError("sbatch not found, --slurm (install Slurm's client commands, or run without --slurm)");
    const std::string id = trim(c.out.substr(0, c.out.find_first_of(";\n")));
    if (id.empty() || id.find_first_not_of("0123456789") != std::string::npos)
        throw SweepError(fmt::format("sbatch refused the job array: {}", trim(c.err.empty() ? c.out : c.err)));
    s.job_id = id;
    s.sbatch_exit = c.rc;
    // Record the job for --status.
    ojson jobs = ojson::object({{"jobs", ojson::array()}});
    const std::string jobs_file = store.path("slurm/jobs.json");
    if (fs::exists(jobs_file)) {
        try {
            jobs = ojson::parse(read_file(jobs_file));
        } catch (const ojson::exception&) {
        }
    }
    jobs["jobs"].push_back(
        {{"job_id", id}, {"submission", n}, {"points", s.points}, {"tasks", s.tasks}, {"chunk", s.chunk}});
    write_atomic(jobs_file, jobs.dump(1) + "\n");
    return s;
}

int run_task(const Store& store, const std::string& points_file, const std::string& exe, std::ostream& err) {
    const char* task = std::getenv("SLURM_ARRAY_TASK_ID");
    if (!task || !*task) throw SweepError("--slurm-task runs inside a Slurm array task (SLURM_ARRAY_TASK_ID unset)");
    char* end = nullptr;
    const unsigned long i = std::strtoul(task, &end, 10);
    if (*end) throw SweepError(fmt::format("SLURM_ARRAY_TASK_ID '{}' is not an index", task));
    std::vector<Point> all;
    size_t chunk = 1;
    bool force = false;
    try {
        const ojson j = ojson::parse(read_file(points_file));
        chunk = j.at("chunk").get<size_t>();
        force = j.at("force").get<bool>();
        for (const auto& p : j.at("points")) all.push_back(point_from_json(p));
    } catch (const ojson::exception& e) {
        throw SweepError(fmt::format("malformed point list '{}' ({})", points_file, e.what()));
    }
    std::vector<const Point*> mine;
    for (size_t k = i * chunk; k < std::min(all.size(), (i + 1) * chunk); ++k)
        if (force || !store.load(all[k])) mine.push_back(&all[k]);  // a requeued task skips finished points
    RunnerOptions ro;
    ro.exe = exe;
    const char* cpt = std::getenv("SLURM_CPUS_PER_TASK");
    ro.jobs = cpt && std::atoi(cpt) > 0 ? std::atoi(cpt) : available_cpus();
    const RunCounts c = run_points(store, mine, ro, err);
    err << fmt::format("npusim sweep: array task {}: {} point(s) ran in {:.1f} s: {} ok, {} problem, {} failed\n", i,
                       c.ran, c.seconds, c.ok, c.problem, c.failed);
    return c.interrupted || c.problem || c.failed ? 1 : 0;
}

std::vector<std::string> job_status(const Store& store) {
    std::vector<std::string> lines;
    const std::string jobs_file = store.path("slurm/jobs.json");
    if (!fs::exists(jobs_file)) return lines;
    ojson jobs;
    try {
        jobs = ojson::parse(read_file(jobs_file));
    } catch (const ojson::exception&) {
        return {"slurm/jobs.json is unreadable"};
    }
    for (const auto& j : jobs.at("jobs")) {
        const std::string id = j.at("job_id").get<std::string>();
        const Captured c = run_capture({"squeue", "-h", "-r", "-j", id, "-o", "%T"});
        std::string what;
        if (c.rc < 0) {
            what = "squeue not found";
        } else {
            std::map<std::string, int> states;
            std::istringstream ss(c.out);
            for (std::string s; std::getline(ss, s);)
                if (!s.empty()) ++states[s];
            for (const auto& [s, n] : states) what += fmt::format("{}{} {}", what.empty() ? "" : ", ", n, s);
            if (what.empty())
                what = c.rc == 0 || c.err.find("Invalid job id") != std::string::npos
                           ? "no task queued or running (finished)"
                           : "squeue: " + trim(c.err);
        }
        lines.push_back(fmt::format("job {} (submission {}, {} points in {} tasks): {}", id,
                                    j.at("submission").get<int>(), j.at("points").get<size_t>(),
                                    j.at("tasks").get<size_t>(), what));
    }
    return lines;
}

}  // namespace sweep
