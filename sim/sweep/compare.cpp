// SPDX-License-Identifier: MIT
#include "compare.h"

#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "html_kit.h"
#include "hw/profile.h"
#include "merge.h"
#include "runner.h"

namespace sweep {

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

namespace {

constexpr int kExitProblem = 1;
constexpr int kExitBadInput = 2;

std::vector<std::string> split(const std::string& s) {
    std::vector<std::string> v;
    size_t pos = 0;
    while (pos <= s.size()) {
        const size_t next = std::min(s.find(',', pos), s.size());
        if (next > pos) v.push_back(s.substr(pos, next - pos));
        pos = next + 1;
    }
    return v;
}

/// One row of the comparison (a point and what its report says).
struct Row {
    const MergedPoint* m;
    std::string params;  ///< "k=v k2=v2"
};

std::string params_of(const Point& p) {
    std::string s;
    for (const auto& [k, v] : p.params) s += (s.empty() ? "" : " ") + k + "=" + v;
    return s;
}

double npu_share(const PointSummary& s) {
    return s.latency_ps ? 100.0 * static_cast<double>(s.npu_ps) / static_cast<double>(s.latency_ps) : 0.0;
}
double mib(uint64_t b) { return static_cast<double>(b) / (1024.0 * 1024.0); }

std::string table(const std::vector<Row>& rows, bool any_params) {
    size_t wp = 8, wm = 9, wk = 6, wc = 11;
    for (const Row& r : rows) {
        wp = std::max(wp, r.m->point->platform.size());
        wm = std::max(wm, r.m->point->core_mask.size());
        wk = std::max(wk, r.params.size());
        if (r.m->summary) wc = std::max(wc, r.m->summary->calibration.size());
    }
    std::string o =
        fmt::format("{:<{}} {:<{}} {}{:>11} {:>12} {:>8} {:>9} {:>10} {:>10}  {:<{}}  {}\n", "platform", wp,
                    "core mask", wm, any_params ? fmt::format("{:<{}} ", "params", wk) : "", "latency_ms",
                    "inference_ms", "FPS", "NPU share", "DDR rd MiB", "DDR wr MiB", "calibration", wc, "status");
    for (const Row& r : rows) {
        const Point& p = *r.m->point;
        const std::string pc = any_params ? fmt::format("{:<{}} ", r.params, wk) : "";
        if (!r.m->summary) {
            o += fmt::format("{:<{}} {:<{}} {}{:>11} {:>12} {:>8} {:>9} {:>10} {:>10}  {:<{}}  {}: {}\n", p.platform,
                             wp, p.core_mask, wm, pc, "-", "-", "-", "-", "-", "-", "-", wc, r.m->status, r.m->error);
            continue;
        }
        const PointSummary& s = *r.m->summary;
        o += fmt::format("{:<{}} {:<{}} {}{:>11.3f} {:>12.3f} {:>8.1f} {:>8.1f}% {:>10.2f} {:>10.2f}  {:<{}}  {}\n",
                         p.platform, wp, p.core_mask, wm, pc, s.latency_ms, s.inference_ms, s.inference_fps,
                         npu_share(s), mib(s.ddr_read_bytes), mib(s.ddr_write_bytes), s.calibration, wc,
                         r.m->status == "ok" ? "ok" : r.m->status + (r.m->error.empty() ? "" : ": " + r.m->error));
    }
    return o;
}

std::string csv_cell(const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string o = "\"";
    for (char c : s) o += c == '"' ? std::string("\"\"") : std::string(1, c);
    return o + "\"";
}

std::string csv(const std::vector<Row>& rows) {
    std::string o =
        "model,platform,core_mask,mode,params,status,latency_ms,inference_ms,fps,inference_fps,npu_share_pct,"
        "ddr_read_bytes,ddr_write_bytes,tasks,npu_layers,cpu_layers,calibration,error\n";
    for (const Row& r : rows) {
        const Point& p = *r.m->point;
        o += fmt::format("{},{},{},{},{},{},", csv_cell(p.model), p.platform, p.core_mask, p.mode, csv_cell(r.params),
                         r.m->status);
        if (r.m->summary) {
            const PointSummary& s = *r.m->summary;
            o += fmt::format("{:.6f},{:.6f},{:.3f},{:.3f},{:.3f},{},{},{},{},{},{},", s.latency_ms, s.inference_ms,
                             s.fps, s.inference_fps, npu_share(s), s.ddr_read_bytes, s.ddr_write_bytes, s.tasks,
                             s.npu_layers, s.cpu_layers, csv_cell(s.calibration));
        } else {
            o += ",,,,,,,,,,,";
        }
        o += csv_cell(r.m->error) + "\n";
    }
    return o;
}

ojson rows_json(const std::vector<Row>& rows) {
    ojson a = ojson::array();
    for (const Row& r : rows) {
        const Point& p = *r.m->point;
        ojson x = p.inputs_json();
        x["status"] = r.m->status;
        if (!r.m->error.empty()) x["error"] = r.m->error;
        if (r.m->summary) {
            const PointSummary& s = *r.m->summary;
            x["latency_ms"] = s.latency_ms;
            x["inference_ms"] = s.inference_ms;
            x["fps"] = s.fps;
            x["inference_fps"] = s.inference_fps;
            x["npu_share_pct"] = npu_share(s);
            x["ddr_read_bytes"] = s.ddr_read_bytes;
            x["ddr_write_bytes"] = s.ddr_write_bytes;
            x["tasks"] = s.tasks;
            x["npu_layers"] = s.npu_layers;
            x["cpu_layers"] = s.cpu_layers;
            x["calibration"] = s.calibration;
        }
        a.push_back(x);
    }
    return a;
}

// Bars of inference time and FPS per row (htmlkit's frame, el, fmt).
const char* kCompareScript = R"JS(
(function(){
const D = JSON.parse(document.getElementById('compare-data').textContent);
const rows = D.rows.filter(r => r.status === 'ok' || r.status === 'problem');
const label = r => r.platform + (D.masks > 1 ? ' ' + r.core_mask : '') +
  (Object.keys(r.params).length ? ' ' + Object.entries(r.params).map(([k, v]) => k + '=' + v).join(' ') : '');
const host = document.getElementById('charts');
for (const [key, name] of [['inference_ms', 'inference (ms)'], ['inference_fps', 'inference FPS'],
                           ['ddr_total_mib', 'DDR traffic (MiB)']]) {
  const vals = rows.map(r => key === 'ddr_total_mib' ? (r.ddr_read_bytes + r.ddr_write_bytes) / 1048576 : r[key]);
  const cats = rows.map(label);
  const W = Math.max(360, 46 * rows.length + 80);
  const f = frame(host, 'cmp', name, [], vals, cats, '', name, {W: W, H: 260});
  const bw = Math.max(4, (W - 76) / Math.max(rows.length, 1) * 0.6);
  rows.forEach((r, i) => {
    const x = f.sx(cats[i]) - bw / 2, y = f.sy(vals[i]);
    const b = el('rect', {class: 'cmp-bar', x: x, y: y, width: bw, height: Math.max(0, f.sy(0) - y), fill: '#1f77b4'}, f.svg);
    el('title', {}, b, label(r) + ': ' + fmt(vals[i]));
  });
}
document.body.setAttribute('data-rendered', 'yes');
})();
)JS";

std::string html(const std::string& model, const std::vector<Row>& rows, size_t masks, const std::string& text) {
    ojson d;
    d["model"] = model;
    d["masks"] = masks;
    d["rows"] = rows_json(rows);
    std::string o = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n";
    o += fmt::format("<title>npusim compare {}</title>\n<style>{}</style></head>\n<body>\n", htmlkit::escape(model),
                     htmlkit::kStyle);
    o += fmt::format("<h1>npusim compare: {}</h1>\n<div class=\"charts\" id=\"charts\"></div>\n<pre>{}</pre>\n",
                     htmlkit::escape(model), htmlkit::escape(text));
    o += "<script type=\"application/json\" id=\"compare-data\">" + htmlkit::embed_json(d.dump()) + "</script>\n";
    o += "<script>" + std::string(htmlkit::kHelpers) + "</script>\n";
    o += "<script>" + std::string(kCompareScript) + "</script>\n</body></html>\n";
    return o;
}

bool write_text(const std::string& path, const std::string& text) {
    std::ofstream f(path, std::ios::binary);
    f << text;
    return static_cast<bool>(f);
}

}  // namespace

void add_compare_options(CLI::App& sub, CompareCliOptions& o) {
    sub.add_option("model", o.model, "Model (.onnx or .tflite)")->required();
    sub.add_option("-p,--platform", o.platforms, "SoCs to compare: a,b,c or all (every RKNPU profile)")->required();
    sub.add_option("--core-mask", o.core_masks, "Core masks to compare: auto, 0, 0_1, 0_1_2, ... comma-separated")
        ->capture_default_str();
    sub.add_option("--mode", o.mode, "timing (no data moved) or full (bytes and numerics too)")
        ->check(CLI::IsMember({"full", "timing"}))
        ->capture_default_str();
    sub.add_option("--param", o.params, "Profile parameter values to compare: section.key=v1,v2,... (repeatable)")
        ->allow_extra_args(false);
    sub.add_option("-j,--jobs", o.jobs, "Runs at once (default: the CPUs available)")->check(CLI::Range(1, 4096));
    sub.add_flag("-q,--quiet", o.quiet, "No progress bar");
    sub.add_option("--csv", o.csv_path, "Write the table as CSV");
    sub.add_option("--json", o.json_path, "Write the table as JSON");
    sub.add_option("--html", o.html_path, "Write a self-contained HTML page (bars per row and the table)");
}

int run_compare_cli(const CompareCliOptions& o, std::ostream& out, std::ostream& err) {
    auto fail = [&](int code, const std::string& msg) {
        err << "npusim: error: " << msg << "\n";
        return code;
    };
    std::string tmp;
    try {
        SweepSpec s;
        s.name = "compare " + fs::path(o.model).filename().string();
        s.file = fs::absolute("compare");  // relative model paths resolve against the working folder
        s.models = {fs::absolute(o.model).string()};
        if (o.platforms == "all") {
            for (const std::string& n : hw::list_profiles())
                if (hw::load_named_profile(n).family == "rknpu") s.platforms.push_back(n);
        } else {
            for (std::string n : split(o.platforms)) {
                for (char& c : n) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
                s.platforms.push_back(n);
            }
        }
        if (s.platforms.empty()) return fail(kExitBadInput, "--platform: no platform given (a,b,c or all)");
        for (const std::string& n : s.platforms) {
            try {
                (void)hw::load_named_profile(n);
            } catch (const hw::ProfileError& e) {
                return fail(kExitBadInput, fmt::format("--platform {}: {}", n, e.what()));
            }
        }
        s.core_masks = split(o.core_masks);
        if (s.core_masks.empty()) return fail(kExitBadInput, "--core-mask: no core mask given");
        s.modes = {o.mode};
        apply_param_grids(s, o.params);
        const Expansion ex = expand(s, o.version);
        if (ex.points.empty())
            return fail(kExitBadInput, "nothing to compare: no core mask applies to the platforms given");
        Manifest m;
        m.name = s.name;
        m.npusim_version = o.version;
        for (const ParamAxis& a : s.params) m.param_keys.push_back(a.key);
        m.notes = ex.notes;
        m.points = ex.points;

        std::string templ = (fs::temp_directory_path() / "npusim-compare-XXXXXX").string();
        if (!mkdtemp(templ.data())) return fail(kExitBadInput, "cannot create a temporary folder for the runs");
        tmp = templ;
        const Store store(tmp);
        store.init();
        store.write_manifest(m);
        std::vector<const Point*> todo;
        for (const Point& p : m.points) todo.push_back(&p);
        std::error_code ec;
        const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
        if (ec) return fail(kExitBadInput, "cannot find the npusim binary (/proc/self/exe)");
        RunnerOptions ro;
        ro.exe = exe.string();
        ro.jobs = o.jobs ? o.jobs : available_cpus();
        ro.progress = !o.quiet && isatty(STDERR_FILENO);
        const RunCounts c = run_points(store, todo, ro, err);
        if (c.interrupted) {
            fs::remove_all(tmp, ec);
            return fail(130, "compare interrupted");
        }
        const Merged merged = merge(store, m);
        fs::remove_all(tmp, ec);
        tmp.clear();

        std::vector<Row> rows;
        bool any_params = false;
        for (const MergedPoint& r : merged.rows) {
            rows.push_back(Row{&r, params_of(*r.point)});
            any_params |= !r.point->params.empty();
        }
        std::string text = fmt::format("model {}, mode {}: {} run(s) in {:.2f} s with {} job(s)\n", o.model, o.mode,
                                       c.ran, c.seconds, ro.jobs);
        text += table(rows, any_params);
        text += "FPS: inferences per second (1 / inference); NPU share: NPU time over the latency; calibration: how the "
                "SoC's timing was fitted (npusim platforms -v)\n";
        for (const std::string& n : m.notes) text += "note: " + n + "\n";
        out << text;
        if (!o.csv_path.empty() && !write_text(o.csv_path, csv(rows)))
            return fail(kExitBadInput, fmt::format("cannot write CSV '{}'", o.csv_path));
        if (!o.json_path.empty()) {
            ojson j;
            j["schema"] = "npusim.compare";
            j["schema_version"] = 1;
            j["model"] = o.model;
            j["mode"] = o.mode;
            j["rows"] = rows_json(rows);
            j["notes"] = m.notes;
            if (!write_text(o.json_path, j.dump(2) + "\n"))
                return fail(kExitBadInput, fmt::format("cannot write JSON '{}'", o.json_path));
        }
        if (!o.html_path.empty() && !write_text(o.html_path, html(o.model, rows, s.core_masks.size(), text)))
            return fail(kExitBadInput, fmt::format("cannot write HTML '{}'", o.html_path));
        for (const MergedPoint& r : merged.rows)
            if (r.status != "ok" && !r.error.empty())
                err << fmt::format("npusim: error: {} core mask {}: {}\n", r.point->platform, r.point->core_mask,
                                   r.error);
        return merged.ok == merged.rows.size() ? 0 : kExitProblem;
    } catch (const SweepError& e) {
        if (!tmp.empty()) {
            std::error_code ec;
            fs::remove_all(tmp, ec);
        }
        return fail(kExitBadInput, e.what());
    } catch (const hw::ProfileError& e) {
        return fail(kExitBadInput, e.what());
    }
}

}  // namespace sweep
