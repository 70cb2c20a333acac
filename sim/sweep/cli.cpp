// SPDX-License-Identifier: MIT
#include "cli.h"

#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <map>
#include <set>

#include "merge.h"
#include "runner.h"
#include "slurm.h"

namespace sweep {

namespace fs = std::filesystem;

namespace {

constexpr int kExitProblem = 1;
constexpr int kExitBadInput = 2;
constexpr int kExitInterrupted = 130;

std::string self_exe() {
    std::error_code ec;
    const fs::path p = fs::read_symlink("/proc/self/exe", ec);
    if (ec) throw SweepError(fmt::format("cannot find the npusim binary (/proc/self/exe: {})", ec.message()));
    return p.string();
}

std::string describe(const Point& p) {
    std::string s = fmt::format("{} on {} core mask {} {}", p.model, p.platform, p.core_mask, p.mode);
    for (const auto& [k, v] : p.params) s += fmt::format(" {}={}", k, v);
    return s;
}

void write_outputs(const Store& store, const Manifest& m, const Merged& merged, std::ostream& out) {
    write_atomic(store.path("sweep.json"), merged_json(merged));
    write_atomic(store.path("sweep.csv"), merged_csv(merged));
    write_atomic(store.path("sweep.html"), merged_html(merged));
    out << fmt::format(
        "merged {} points ({} ok, {} problem, {} failed, {} missing): {}/sweep.csv, sweep.json, "
        "sweep.html\n",
        m.points.size(), merged.ok, merged.problem, merged.failed, merged.missing, store.dir());
}

int collect(const Store& store, const Manifest& m, std::ostream& out) {
    const Merged merged = merge(store, m);
    write_outputs(store, m, merged, out);
    for (const MergedPoint& r : merged.rows)
        if (r.status == "failed" || r.status == "problem")
            out << fmt::format("{} point {} ({}): {}\n", r.status, r.point->id, describe(*r.point), r.error);
    return merged.ok == m.points.size() ? 0 : kExitProblem;
}

int status(const Store& store, const Manifest& m, std::ostream& out) {
    size_t ok = 0, problem = 0, failed = 0, missing = 0;
    std::vector<std::string> bad;
    for (const Point& p : m.points) {
        const auto r = store.load(p);
        if (!r) {
            ++missing;
            continue;
        }
        ok += r->status == "ok";
        problem += r->status == "problem";
        failed += r->status == "failed";
        if (!r->ok()) bad.push_back(fmt::format("  {} {} ({}): {}", r->status, p.id, describe(p), r->error));
    }
    out << fmt::format("sweep {}: {} points: {} done ({} ok, {} problem, {} failed), {} to run\n", m.name,
                       m.points.size(), ok + problem + failed, ok, problem, failed, missing);
    for (const std::string& b : bad) out << b << "\n";
    if (!bad.empty()) out << "rerun them alone: npusim sweep SPEC --only-failed (or --point ID)\n";
    const auto stale = store.stale(m);
    if (!stale.empty())
        out << fmt::format("{} result file(s) in {}/points belong to no point of this sweep (an older spec's)\n",
                           stale.size(), store.dir());
    for (const std::string& l : job_status(store)) out << l << "\n";
    return 0;
}

}  // namespace

void add_sweep_options(CLI::App& sub, SweepCliOptions& o) {
    sub.add_option("spec", o.spec, "Sweep spec (.json, .yaml): models, platforms, core_masks, modes, params, options");
    sub.add_option("-o,--results", o.results,
                   "Results folder (default: the spec's 'results', else SPEC-results beside the spec)");
    sub.add_option("--param", o.params,
                   "Add or replace a grid: section.key=v1,v2,... or from:to:step or from:to:xFACTOR")
        ->allow_extra_args(false);
    sub.add_option("-j,--jobs", o.jobs, "Points run at once (default: the CPUs available)")->check(CLI::Range(1, 4096));
    sub.add_flag("-q,--quiet", o.quiet, "No progress bar");
    sub.add_flag("--list", o.list, "Print the points (id and inputs) and exit");
    sub.add_flag("--status", o.status, "Report which points are done, failed or still to run (and the Slurm jobs)");
    sub.add_flag("--collect", o.collect, "Merge the results into sweep.csv, sweep.json and sweep.html, run nothing");
    sub.add_flag("--only-failed", o.only_failed, "Run again only the points that failed or found a problem");
    sub.add_option("--point", o.points, "Run (again) only this point id, repeatable")->allow_extra_args(false);
    sub.add_flag("--slurm", o.slurm, "Submit the points as a Slurm job array (sbatch) instead of running them here");
    sub.add_option("--partition", o.partition, "--slurm: partition");
    sub.add_option("--time", o.time, "--slurm: time limit of one array task (sbatch --time)");
    sub.add_option("--array-chunk", o.array_chunk, "--slurm: points per array task (default: fit 1000 tasks)")
        ->check(CLI::Range(size_t{1}, size_t{1000000}));
    sub.add_option("--cpus-per-task", o.cpus_per_task,
                   "--slurm: CPUs per array task, points run in parallel (default 1)")
        ->check(CLI::Range(1, 4096));
    sub.add_flag("--wait", o.wait, "--slurm: wait for the job array to finish, then merge");
    sub.add_option("--sbatch-arg", o.sbatch_args,
                   "--slurm: extra sbatch argument, repeatable (--sbatch-arg=--account=X)")
        ->allow_extra_args(false);
    sub.add_option("--slurm-task", o.slurm_task, "(internal) run one array task of a submission")->group("");
}

int run_sweep_cli(const SweepCliOptions& o, std::ostream& out, std::ostream& err) {
    auto fail = [&](const std::string& msg) {
        err << "npusim: error: " << msg << "\n";
        return kExitBadInput;
    };
    try {
        if (!o.slurm_task.empty()) {
            if (o.results.empty()) return fail("--slurm-task needs --results");
            return run_task(Store(fs::absolute(o.results).lexically_normal().string()), o.slurm_task, self_exe(), err);
        }
        // Options that do not apply are errors.
        const int modes = o.list + o.status + o.collect;
        if (modes > 1) return fail("--list, --status and --collect exclude each other");
        if (!o.slurm) {
            for (const auto& [set, name] :
                 std::vector<std::pair<bool, const char*>>{{!o.partition.empty(), "--partition"},
                                                           {!o.time.empty(), "--time"},
                                                           {o.array_chunk > 0, "--array-chunk"},
                                                           {o.cpus_per_task > 0, "--cpus-per-task"},
                                                           {o.wait, "--wait"},
                                                           {!o.sbatch_args.empty(), "--sbatch-arg"}})
                if (set) return fail(fmt::format("{} applies to --slurm submissions only", name));
        } else {
            if (modes) return fail("--slurm submits points; --list, --status and --collect run without it");
            if (o.jobs)
                return fail("-j applies to local runs; give --slurm --cpus-per-task N for parallel points per task");
        }
        if (modes && (o.only_failed || !o.points.empty() || o.jobs))
            return fail("--only-failed, --point and -j choose points to run; --list, --status and --collect run none");

        Manifest m;
        std::string dir = o.results;
        if (o.spec.empty()) {
            if (!o.status && !o.collect)
                return fail("npusim sweep needs a spec file (or --results DIR with --status/--collect)");
            if (dir.empty()) return fail("--status and --collect without a spec need --results DIR");
            if (!o.params.empty()) return fail("--param changes a spec's grid; give the spec");
            m = Store(dir).read_manifest();
        } else {
            SweepSpec s = load_spec(o.spec);
            apply_param_grids(s, o.params);
            const Expansion ex = expand(s, o.version);
            if (ex.points.empty()) return fail(fmt::format("sweep '{}' has no points", o.spec));
            m.name = s.name;
            m.npusim_version = o.version;
            for (const ParamAxis& a : s.params) m.param_keys.push_back(a.key);
            m.notes = ex.notes;
            m.points = ex.points;
            if (dir.empty())
                dir = s.results.empty()
                          ? (s.file.parent_path() / (s.file.stem().string() + "-results")).string()
                          : (fs::path(s.results).is_absolute() ? fs::path(s.results) : s.file.parent_path() / s.results)
                                .string();
        }
        const Store store(fs::absolute(dir).lexically_normal().string());

        if (o.list) {
            for (const Point& p : m.points) out << fmt::format("{:>6} {} {}\n", p.index, p.id, describe(p));
            for (const std::string& n : m.notes) out << "note: " << n << "\n";
            return 0;
        }
        if (o.status) return status(store, m, out);
        if (o.collect) return collect(store, m, out);

        // Run: what is still to do (or what was asked for).
        store.init();
        store.write_manifest(m);
        std::set<std::string> wanted(o.points.begin(), o.points.end());
        for (const std::string& id : wanted)
            if (std::none_of(m.points.begin(), m.points.end(), [&](const Point& p) { return p.id == id; }))
                return fail(fmt::format("--point {}: no such point in this sweep (see --list)", id));
        std::vector<const Point*> todo;
        size_t done = 0;
        for (const Point& p : m.points) {
            const auto r = store.load(p);
            done += r.has_value();
            const bool pick = !wanted.empty() || o.only_failed
                                  ? (wanted.count(p.id) || (o.only_failed && r && !r->ok()))
                                  : !r.has_value();
            if (pick) todo.push_back(&p);
        }
        for (const std::string& n : m.notes) out << "note: " << n << "\n";
        out << fmt::format("sweep {}: {} points, {} done, {} to run{}\n", m.name, m.points.size(), done, todo.size(),
                           o.slurm ? " on Slurm" : "");
        out.flush();
        const std::string exe = self_exe();
        if (o.slurm) {
            if (todo.empty()) return collect(store, m, out);
            SlurmOptions so;
            so.partition = o.partition;
            so.time = o.time;
            so.array_chunk = o.array_chunk;
            so.cpus_per_task = o.cpus_per_task ? o.cpus_per_task : 1;
            so.wait = o.wait;
            so.force = !wanted.empty() || o.only_failed;
            so.sbatch_args = o.sbatch_args;
            const Submission sub = submit(store, m.name, exe, todo, so, out);
            out << fmt::format("submitted job {} ({} tasks)\n", sub.job_id, sub.tasks);
            if (!o.wait) {
                const std::string where = o.spec + (o.results.empty() ? "" : " -o " + o.results);
                out << fmt::format("follow it with: npusim sweep {} --status; merge with: npusim sweep {} --collect\n",
                                   where, where);
                return 0;
            }
            return collect(store, m, out);
        }
        RunnerOptions ro;
        ro.exe = exe;
        ro.jobs = o.jobs ? o.jobs : available_cpus();
        ro.progress = !o.quiet && isatty(STDERR_FILENO);
        const RunCounts c = run_points(store, todo, ro, err);
        out << fmt::format("ran {} points in {:.2f} s ({:.1f} points/s) with {} job(s): {} ok, {} problem, {} failed\n",
                           c.ran, c.seconds, c.seconds > 0 ? static_cast<double>(c.ran) / c.seconds : 0.0, ro.jobs,
                           c.ok, c.problem, c.failed);
        if (c.interrupted) {
            err << fmt::format(
                "npusim: error: sweep interrupted, {} of {} points have results (run the same command to "
                "continue)\n",
                done + c.ran, m.points.size());
            return kExitInterrupted;
        }
        return collect(store, m, out);
    } catch (const SweepError& e) {
        return fail(e.what());
    }
}

}  // namespace sweep
