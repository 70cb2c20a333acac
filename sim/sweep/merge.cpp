// SPDX-License-Identifier: MIT
#include "merge.h"

#include <fmt/format.h>

namespace sweep {

using ojson = nlohmann::ordered_json;

Merged merge(const Store& store, const Manifest& m) {
    Merged out;
    out.name = m.name;
    out.npusim_version = m.npusim_version;
    out.param_keys = m.param_keys;
    out.notes = m.notes;
    for (const Point& p : m.points) {
        MergedPoint row;
        row.point = &p;
        const std::optional<PointResult> r = store.load(p);
        if (!r) {
            row.status = "missing";
            ++out.missing;
            out.rows.push_back(std::move(row));
            continue;
        }
        row.status = r->status;
        row.exit_code = r->exit_code;
        row.error = r->error;
        if (!r->report.is_null()) {
            try {
                row.summary = summarize_report(r->report);
            } catch (const SweepError& e) {
                row.status = "failed";
                row.error += (row.error.empty() ? "" : "; ") + std::string(e.what());
            }
        }
        if (row.status == "ok") ++out.ok;
        if (row.status == "problem") ++out.problem;
        if (row.status == "failed") ++out.failed;
        out.rows.push_back(std::move(row));
    }
    return out;
}

std::string merged_json(const Merged& m) {
    ojson j;
    j["format"] = "npusim-sweep-results";
    j["version"] = 1;
    j["name"] = m.name;
    j["npusim"] = m.npusim_version;
    j["param_keys"] = m.param_keys;
    j["counts"] = {
        {"points", m.rows.size()}, {"ok", m.ok}, {"problem", m.problem}, {"failed", m.failed}, {"missing", m.missing}};
    j["notes"] = m.notes;
    ojson pts = ojson::array();
    for (const MergedPoint& r : m.rows) {
        ojson x;
        x["index"] = r.point->index;
        x["id"] = r.point->id;
        const ojson inputs = r.point->inputs_json();
        for (const auto& [k, v] : inputs.items()) x[k] = v;
        x["status"] = r.status;
        x["exit_code"] = r.exit_code;
        x["error"] = r.error;
        if (r.summary) {
            const PointSummary& s = *r.summary;
            x["totals"] = {{"latency_ps", s.latency_ps},
                           {"latency_ms", s.latency_ms},
                           {"fps", s.fps},
                           {"npu_ps", s.npu_ps},
                           {"cpu_ps", s.cpu_ps},
                           {"ddr_read_bytes", s.ddr_read_bytes},
                           {"ddr_write_bytes", s.ddr_write_bytes},
                           {"macs", s.macs},
                           {"macs_padded", s.macs_padded},
                           {"tasks", s.tasks},
                           {"weight_bytes", s.weight_bytes},
                           {"arena_bytes", s.arena_bytes},
                           {"npu_layers", s.npu_layers},
                           {"cpu_layers", s.cpu_layers}};
            ojson layers = ojson::array();
            for (const LayerSummary& l : s.layers)
                layers.push_back({{"name", l.name},
                                  {"op", l.op},
                                  {"unit", l.unit},
                                  {"bound", l.bound},
                                  {"time_us", l.time_us},
                                  {"cycles", l.cycles},
                                  {"macs", l.macs},
                                  {"ddr_read_bytes", l.ddr_read_bytes},
                                  {"ddr_write_bytes", l.ddr_write_bytes},
                                  {"mac_utilisation", l.mac_utilisation}});
            x["layers"] = layers;
        }
        pts.push_back(x);
    }
    j["points"] = pts;
    return j.dump(1) + "\n";
}

namespace {

std::string csv_field(const std::string& s) {
    if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
    std::string q = "\"";
    for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
}

}  // namespace

std::string merged_csv(const Merged& m) {
    std::vector<std::string> head{"index", "id", "model", "platform", "core_mask", "mode"};
    for (const std::string& k : m.param_keys) head.push_back(k);
    for (const char* h : {"status",
                          "exit_code",
                          "latency_ps",
                          "latency_ms",
                          "fps",
                          "npu_ps",
                          "cpu_ps",
                          "ddr_read_bytes",
                          "ddr_write_bytes",
                          "macs",
                          "macs_padded",
                          "tasks",
                          "npu_layers",
                          "cpu_layers",
                          "layers_compute_bound",
                          "layers_memory_bound",
                          "layers_overhead_bound",
                          "layers_host",
                          "top_layer",
                          "top_layer_share",
                          "error"})
        head.push_back(h);
    std::string out;
    for (size_t i = 0; i < head.size(); ++i) out += (i ? "," : "") + csv_field(head[i]);
    out += "\n";
    for (const MergedPoint& r : m.rows) {
        const Point& p = *r.point;
        std::vector<std::string> f{std::to_string(p.index), p.id, p.model, p.platform, p.core_mask, p.mode};
        for (const std::string& k : m.param_keys) {
            std::string v;
            for (const auto& [pk, pv] : p.params)
                if (pk == k) v = pv;
            f.push_back(v);
        }
        f.push_back(r.status);
        f.push_back(r.status == "missing" ? "" : std::to_string(r.exit_code));
        if (r.summary) {
            const PointSummary& s = *r.summary;
            for (const std::string& v :
                 {std::to_string(s.latency_ps), fmt::format("{}", s.latency_ms), fmt::format("{}", s.fps),
                  std::to_string(s.npu_ps), std::to_string(s.cpu_ps), std::to_string(s.ddr_read_bytes),
                  std::to_string(s.ddr_write_bytes), std::to_string(s.macs), std::to_string(s.macs_padded),
                  std::to_string(s.tasks), std::to_string(s.npu_layers), std::to_string(s.cpu_layers),
                  std::to_string(s.bound_counts[0]), std::to_string(s.bound_counts[1]),
                  std::to_string(s.bound_counts[2]), std::to_string(s.bound_counts[3]), s.top_layer,
                  fmt::format("{:.4f}", s.top_layer_share)})
                f.push_back(v);
        } else {
            for (int i = 0; i < 18; ++i) f.emplace_back();
        }
        f.push_back(r.error);
        for (size_t i = 0; i < f.size(); ++i) out += (i ? "," : "") + csv_field(f[i]);
        out += "\n";
    }
    return out;
}

}  // namespace sweep
