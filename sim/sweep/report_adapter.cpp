// SPDX-License-Identifier: MIT
#include "report_adapter.h"

#include <fmt/format.h>

#include "spec.h"

namespace sweep {

namespace {

const nlohmann::json& field(const nlohmann::json& j, const char* key, const std::string& where) {
    if (!j.is_object() || !j.contains(key))
        throw SweepError(fmt::format("run report lacks '{}{}'", where.empty() ? "" : where + ".", key));
    return j[key];
}

uint64_t u64(const nlohmann::json& j, const char* key, const std::string& where = "") {
    const nlohmann::json& v = field(j, key, where);
    if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<int64_t>() >= 0))
        throw SweepError(fmt::format("run report field '{}{}' is not a count", where.empty() ? "" : where + ".", key));
    return v.get<uint64_t>();
}

double f64(const nlohmann::json& j, const char* key, const std::string& where = "") {
    const nlohmann::json& v = field(j, key, where);
    if (!v.is_number())
        throw SweepError(fmt::format("run report field '{}{}' is not a number", where.empty() ? "" : where + ".", key));
    return v.get<double>();
}

std::string str(const nlohmann::json& j, const char* key, const std::string& where = "") {
    const nlohmann::json& v = field(j, key, where);
    if (!v.is_string())
        throw SweepError(fmt::format("run report field '{}{}' is not a string", where.empty() ? "" : where + ".", key));
    return v.get<std::string>();
}

}  // namespace

char bound_letter(const std::string& bound) {
    if (bound == "compute") return 'c';
    if (bound == "memory") return 'm';
    if (bound == "overhead") return 'o';
    if (bound == "host") return 'h';
    return '-';
}

PointSummary summarize_report(const nlohmann::json& r) {
    PointSummary s;
    const nlohmann::json& t = field(r, "totals", "");
    s.latency_ps = u64(t, "latency_ps", "totals");
    s.latency_ms = f64(t, "latency_ms", "totals");
    if (t.contains("inference_ms")) s.inference_ms = f64(t, "inference_ms", "totals");
    s.fps = f64(t, "fps", "totals");
    s.npu_ps = u64(t, "npu_ps", "totals");
    if (t.contains("inference_fps")) s.inference_fps = f64(t, "inference_fps", "totals");
    if (r.contains("calibration")) s.calibration = str(field(r, "calibration", ""), "status", "calibration");
    s.cpu_ps = u64(t, "cpu_ps", "totals");
    s.ddr_read_bytes = u64(t, "ddr_read_bytes", "totals");
    s.ddr_write_bytes = u64(t, "ddr_write_bytes", "totals");
    s.tasks = u64(t, "tasks", "totals");
    s.weight_bytes = u64(t, "weight_bytes", "totals");
    s.arena_bytes = u64(t, "arena_bytes", "totals");
    s.npu_layers = u64(t, "npu_layers", "totals");
    s.cpu_layers = u64(t, "cpu_layers", "totals");
    const nlohmann::json& layers = field(r, "layers", "");
    if (!layers.is_array()) throw SweepError("run report field 'layers' is not a list");
    double sum_us = 0, top_us = -1;
    for (size_t i = 0; i < layers.size(); ++i) {
        const nlohmann::json& l = layers[i];
        const std::string where = fmt::format("layers[{}]", i);
        LayerSummary x;
        x.name = str(l, "name", where);
        x.op = str(l, "op", where);
        x.unit = str(l, "unit", where);
        x.bound = str(l, "bound", where);
        x.time_us = f64(l, "time_us", where);
        x.mac_utilisation = f64(l, "mac_utilisation", where);
        x.cycles = u64(field(l, "cycles", where), "total", where + ".cycles");
        x.macs = u64(l, "macs", where);
        x.macs_padded = u64(l, "macs_padded", where);
        x.ddr_read_bytes = u64(l, "ddr_read_bytes", where);
        x.ddr_write_bytes = u64(l, "ddr_write_bytes", where);
        // The report has no MAC totals: the layers' sums (every MAC is in one layer). Padded MACs
        // (channels rounded up to the SoC's atoms) are what the MAC array executes.
        s.macs += x.macs;
        s.macs_padded += x.macs_padded;
        sum_us += x.time_us;
        if (x.time_us > top_us) top_us = x.time_us, s.top_layer = x.name;
        const char b = bound_letter(x.bound);
        if (b == 'c') ++s.bound_counts[0];
        if (b == 'm') ++s.bound_counts[1];
        if (b == 'o') ++s.bound_counts[2];
        if (b == 'h') ++s.bound_counts[3];
        s.layers.push_back(std::move(x));
    }
    s.top_layer_share = sum_us > 0 ? top_us / sum_us : 0;
    return s;
}

}  // namespace sweep
