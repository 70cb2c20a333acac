// SPDX-License-Identifier: MIT
#include "app/report.h"
#include "app/report_rollup.h"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace sim {

namespace {
std::string si(uint64_t v) {
    if (v >= 1000000000) return fmt::format("{:.2f}G", v / 1e9);
    if (v >= 1000000) return fmt::format("{:.2f}M", v / 1e6);
    if (v >= 1000) return fmt::format("{:.1f}K", v / 1e3);
    return fmt::format("{}", v);
}
std::string bytes(uint64_t v) {
    if (v >= (1u << 20)) return fmt::format("{:.2f} MiB", v / 1048576.0);
    if (v >= 1024) return fmt::format("{:.1f} KiB", v / 1024.0);
    return fmt::format("{} B", v);
}
}  // namespace

std::string report_text(const RunResult& r) {
    std::string o;
    o += fmt::format("platform {} ({}), mode {}, NPU clock {} MHz\n", r.platform, r.platform_name, r.mode,
                     r.clock_hz / 1000000);
    o += fmt::format("model {}\n\n", r.model);
    o += fmt::format("{:<14} {:<28} {:<12} {:<12} {:>8} {:>5} {:>4} {:>7} {:>7} {:>8} {:>7} {:>6} {:>9} {:>9} {:>10} {:>10} {:>6}  {}\n",
                     "layer", "op", "input", "output", "MACs", "core", "task", "fetch", "dma_rd", "compute", "write",
                     "ovh", "cycles", "time_us", "DDR rd", "DDR wr", "util", "bound");
    for (const LayerReport& l : r.layers)
        o += fmt::format("{:<14} {:<28} {:<12} {:<12} {:>8} {:>5} {:>4} {:>7} {:>7} {:>8} {:>7} {:>6} {:>9} {:>9.3f} {:>10} {:>10} {:>5.1f}%  {}\n",
                         l.name, l.op, l.input_shape, l.output_shape, si(l.macs), l.core, l.tasks, l.fetch_cycles,
                         l.dma_read_cycles, l.compute_cycles, l.write_cycles, l.overhead_cycles, l.total_cycles,
                         l.time_us, bytes(l.ddr_read_bytes), bytes(l.ddr_write_bytes), 100.0 * l.mac_utilisation,
                         l.bound);
    const double us = static_cast<double>(r.total_ps) / 1e6;
    o += fmt::format("\ntotal: {} cycles, {:.3f} us ({:.1f} inferences/s); driver hw_elapse {} ns\n",
                     static_cast<uint64_t>(static_cast<double>(r.total_ps) * static_cast<double>(r.clock_hz) / 1e12 + 0.5),
                     us, us > 0 ? 1e6 / us : 0.0, r.hw_elapse_ns);
    o += "cycles: fetch = regcmd fetch + decode; dma_rd = input/weight/bias loads (overlap compute);\n"
         "        compute = MAC array on padded channels; write = DPU write-back tail; ovh = per-task cost\n";
    if (r.checked) {
        const OutputCheck& c = r.check;
        o += fmt::format("output check vs reference (direct conv, QuantizeLinear round-half-even): {} values, {} equal, "
                         "{} differ by 1 LSB, {} worse, max |diff| {} -> {}\n",
                         c.values, c.equal, c.off_by_one, c.worse, c.max_abs_diff,
                         c.worse ? "MISMATCH" : (c.off_by_one ? "within 1 LSB" : "bit-exact"));
        if (c.off_by_one)
            o += "  1-LSB cause: the NPU requantizes with a 15-bit OUT_CVT multiplier and round-half-up; the\n"
                 "  reference uses the exact real scale and round-half-to-even (ties and scale rounding).\n";
    }
    for (const LayerReport& l : r.layers)
        if (l.sram_read_bytes || l.sram_write_bytes)
            o += fmt::format("{} core {}: NBUF traffic {} read, {} written (not counted as DDR)\n", l.name, l.core,
                             bytes(l.sram_read_bytes), bytes(l.sram_write_bytes));
    const hw::Calibration& cal = r.calibration;
    o += fmt::format("timing trust: calibration {} for {}{}{}\n", cal.status, r.platform,
                     cal.inherits_from.empty() ? "" : " from " + cal.inherits_from,
                     cal.loo_mae_pct < 0 ? std::string()
                                         : fmt::format(" (leave-one-model-out |error| mean {:.1f}%, max {:.1f}%)",
                                                       cal.loo_mae_pct, cal.loo_max_pct));
    if (r.rtl) o += npu::rtl::report_text(r.rtl_tasks, r.rtl_opts);
    for (const std::string& n : r.notes) o += "note: " + n + "\n";
    for (const std::string& e : r.errors) o += "error: " + e + "\n";
    return o;
}

std::string report_json(const RunResult& r) {
    nlohmann::ordered_json j;
    j["platform"] = r.platform;
    j["platform_name"] = r.platform_name;
    j["model"] = r.model;
    j["mode"] = r.mode;
    j["npu_clock_hz"] = r.clock_hz;
    j["total_ps"] = r.total_ps;
    j["hw_elapse_ns"] = r.hw_elapse_ns;
    nlohmann::ordered_json layers = nlohmann::ordered_json::array();
    for (const LayerReport& l : r.layers) {
        nlohmann::ordered_json x;
        x["name"] = l.name;
        x["op"] = l.op;
        x["input_shape"] = l.input_shape;
        x["output_shape"] = l.output_shape;
        x["core"] = l.core;
        x["tasks"] = l.tasks;
        x["macs"] = l.macs;
        x["macs_padded"] = l.macs_padded;
        x["regcmd_entries"] = l.regcmd_entries;
        x["cycles"] = {{"fetch", l.fetch_cycles}, {"dma_read", l.dma_read_cycles}, {"compute", l.compute_cycles},
                       {"write", l.write_cycles}, {"overhead", l.overhead_cycles}, {"total", l.total_cycles}};
        x["time_us"] = l.time_us;
        x["ddr_read_bytes"] = l.ddr_read_bytes;
        x["ddr_write_bytes"] = l.ddr_write_bytes;
        x["sram_read_bytes"] = l.sram_read_bytes;
        x["sram_write_bytes"] = l.sram_write_bytes;
        x["mac_utilisation"] = l.mac_utilisation;
        x["bound"] = l.bound;
        layers.push_back(x);
    }
    j["layers"] = layers;
    if (r.checked)
        j["output_check"] = {{"values", r.check.values}, {"equal", r.check.equal}, {"off_by_one", r.check.off_by_one},
                             {"worse", r.check.worse}, {"max_abs_diff", r.check.max_abs_diff}};
    auto opt = [](double v) { return v < 0 ? nlohmann::ordered_json() : nlohmann::ordered_json(v); };
    j["calibration"] = {{"status", r.calibration.status},
                        {"summary", r.calibration.summary},
                        {"inherits_from", r.calibration.inherits_from},
                        {"fitted", r.calibration.fitted},
                        {"loo_mae_pct", opt(r.calibration.loo_mae_pct)},
                        {"loo_max_pct", opt(r.calibration.loo_max_pct)}};
    if (r.rtl) j["rtl"] = npu::rtl::report_json(r.rtl_tasks, r.rtl_opts);
    j["errors"] = r.errors;
    j["ok"] = r.ok();
    return j.dump(2) + "\n";
}

namespace {

std::string check_verdict(const OutputCheck& c) {
    return c.worse ? "MISMATCH" : (c.off_by_one ? "within 1 LSB" : "bit-exact");
}

nlohmann::ordered_json check_json(const OutputCheck& c) {
    return {{"values", c.values}, {"equal", c.equal}, {"off_by_one", c.off_by_one}, {"worse", c.worse},
            {"max_abs_diff", c.max_abs_diff}};
}

std::string ms(uint64_t ps) { return fmt::format("{:.3f} ms", static_cast<double>(ps) / 1e9); }
std::string us(uint64_t ps) { return fmt::format("{:.1f}", static_cast<double>(ps) / 1e6); }

std::string join(const std::vector<std::string>& v) {
    std::string s;
    for (const std::string& x : v) s += (s.empty() ? "" : ", ") + x;
    return s;
}

/// Multi-core layers: what limits each one's scaling (ModelLayerRow::Scaling).
std::string scaling_text(const ModelRunResult& r) {
    std::string o;
    for (const ModelLayerRow& l : r.layers) {
        const auto& s = l.scaling;
        if (s.cores < 2) continue;
        if (o.empty())
            o += "multi-core scaling (per layer; core time in us: work = task spans summed over the cores, barrier = "
                 "cores waiting for the slowest at the layer's end, split = fixed per-task cost of all its tasks, DDR = "
                 "load time beyond an uncontended DDR):\n";
        o += fmt::format("  {:<24} {} cores busy {:>5.1f}% of the span: work {} over span {}, barrier {}, split {}, DDR {} -> {}\n",
                         l.name, s.cores, 100.0 * s.efficiency, us(s.work_ps), us(s.span_ps), us(s.barrier_ps),
                         us(s.split_ps), us(s.ddr_contention_ps), s.limit);
    }
    return o;
}

std::string pct(double v) { return v < 0 ? std::string("-") : fmt::format("{:.1f}%", v); }

/// How far the timing can be trusted: the profile's calibration (hw::Calibration), overrides,
/// grade counts.
std::string trust_text(const ModelRunResult& r) {
    const hw::Calibration& c = r.calibration;
    std::string o = fmt::format("timing trust: calibration {} for {}", c.status, r.platform);
    if (c.status == "calibrated")
        o += fmt::format(" on {} published rows ({}): fit |error| mean {}, max {}; leave-one-model-out mean {}, max {}",
                         c.rows.size(), c.data, pct(c.fit_mae_pct), pct(c.fit_max_pct), pct(c.loo_mae_pct),
                         pct(c.loo_max_pct));
    else if (c.status == "inherited")
        o += fmt::format(" from {} (no published figures for this SoC; {}'s leave-one-model-out mean {}, max {})",
                         c.inherits_from, c.inherits_from, pct(c.loo_mae_pct), pct(c.loo_max_pct));
    o += "\n";
    if (!c.summary.empty()) o += "  " + c.summary + "\n";
    if (!c.fitted.empty()) o += "  fitted on this SoC: " + join(c.fitted) + "\n";
    for (const auto& [path, why] : c.joint) o += fmt::format("  joint fit: {} ({})\n", path, why);
    for (const auto& [path, why] : c.inherited) o += fmt::format("  inherited: {} ({})\n", path, why);
    for (const hw::CalibrationRow& row : c.rows)
        o += fmt::format("  row {}: published {:.3f} ms, fitted estimate {:+.1f}%, left out of the fit {:+.1f}%\n",
                         row.model, row.published_ms, row.error_pct, row.loo_error_pct);
    if (!r.overridden.empty())
        o += "  overridden with --param (calibration no longer applies to them): " + join(r.overridden) + "\n";
    o += fmt::format("  profile parameters: {} known, {} inferred, {} unknown{}\n", r.grade_known, r.grade_inferred,
                     r.grade_unknown, r.unknown_params.empty() ? "" : " (timing: " + join(r.unknown_params) + ")");
    return o;
}

nlohmann::ordered_json calibration_json(const ModelRunResult& r) {
    const hw::Calibration& c = r.calibration;
    nlohmann::ordered_json j;
    j["status"] = c.status;
    j["summary"] = c.summary;
    j["data"] = c.data;
    j["fit"] = c.fit;
    j["inherits_from"] = c.inherits_from;
    j["fitted"] = c.fitted;
    nlohmann::ordered_json joint = nlohmann::ordered_json::object(), inh = nlohmann::ordered_json::object();
    for (const auto& [path, why] : c.joint) joint[path] = why;
    for (const auto& [path, why] : c.inherited) inh[path] = why;
    j["joint"] = joint;
    j["inherited"] = inh;
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (const hw::CalibrationRow& row : c.rows)
        rows.push_back({{"model", row.model}, {"published_ms", row.published_ms}, {"estimate_ms", row.estimate_ms},
                        {"error_pct", row.error_pct}, {"loo_error_pct", row.loo_error_pct}});
    j["rows"] = rows;
    auto opt = [](double v) { return v < 0 ? nlohmann::ordered_json() : nlohmann::ordered_json(v); };
    j["fit_mae_pct"] = opt(c.fit_mae_pct);
    j["fit_max_pct"] = opt(c.fit_max_pct);
    j["loo_mae_pct"] = opt(c.loo_mae_pct);
    j["loo_max_pct"] = opt(c.loo_max_pct);
    j["overridden"] = r.overridden;
    j["grades"] = {{"known", r.grade_known}, {"inferred", r.grade_inferred}, {"unknown", r.grade_unknown}};
    j["unknown_timing_parameters"] = r.unknown_params;
    return j;
}

}  // namespace

std::string report_text(const ModelRunResult& r) {
    std::string o;
    std::string cores;
    for (int c : r.cores) cores += (cores.empty() ? "" : ",") + std::to_string(c);
    o += fmt::format("platform {} ({}), mode {}, NPU clock {} MHz, core mask {} (cores {})\n", r.platform,
                     r.platform_name, r.mode, r.clock_hz / 1000000, r.core_mask.empty() ? "auto" : r.core_mask,
                     cores.empty() ? "-" : cores);
    o += fmt::format("model {}: {} layers ({} NPU, {} CPU, {} view), {} steps, {} NPU tasks\n\n", r.model,
                     r.layers.size(), r.npu_layers, r.cpu_layers, r.view_layers, r.steps, r.tasks);
    size_t wn = 5, wo = 2, wi = 5, wout = 6;
    for (const ModelLayerRow& l : r.layers) {
        wn = std::max(wn, std::min<size_t>(l.name.size(), 40));
        wo = std::max(wo, std::min<size_t>(l.op.size(), 24));
        wi = std::max(wi, std::min<size_t>(l.input_shape.size(), 24));
        wout = std::max(wout, std::min<size_t>(l.output_shape.size(), 24));
    }
    const bool checked = r.isolated_checked;
    o += fmt::format("{:<{}} {:<{}} {:<4} {:<{}} {:<{}} {:>5} {:>8} {:>9} {:>9} {:>10} {:>10} {:>6}  {:<8} {:<6}{}\n",
                     "layer", wn, "op", wo, "unit", "input", wi, "output", wout, "tasks", "MACs", "cycles", "time_us",
                     "DDR rd", "DDR wr", "util", "bound", "cores", checked ? "  check" : "");
    for (const ModelLayerRow& l : r.layers) {
        std::string chk;
        if (checked && l.fp16_rel_error >= 0)  // fp16: relative error against the stated tolerance
            chk = fmt::format("  {} fp16 rel {:.1e}", l.check.worse ? "MISMATCH" : "ok", l.fp16_rel_error);
        else if (checked)
            chk = l.checked ? fmt::format("  {}{}", check_verdict(l.check),
                                          l.check.off_by_one || l.check.worse
                                              ? fmt::format(" ({} off by 1, {} worse)", l.check.off_by_one, l.check.worse)
                                              : "")
                            : "  -";
        o += fmt::format("{:<{}} {:<{}} {:<4} {:<{}} {:<{}} {:>5} {:>8} {:>9} {:>9.3f} {:>10} {:>10} {:>5.1f}%  {:<8} {:<6}{}\n",
                         l.name, wn, l.op, wo, l.unit, l.input_shape, wi, l.output_shape, wout, l.tasks, si(l.macs),
                         l.total_cycles, l.time_us, bytes(l.ddr_read_bytes), bytes(l.ddr_write_bytes),
                         100.0 * l.mac_utilisation, l.bound, l.cores, chk);
    }
    const double lat_ms = static_cast<double>(r.total_ps) / 1e9;
    const double inf_ms = static_cast<double>(r.inference_ps) / 1e9;
    o += fmt::format("\ntotal: inference {:.3f} ms ({:.1f} FPS; NPU work + CPU layers inside the graph, what the vendor "
                     "runtime's run call measures)\n",
                     inf_ms, inf_ms > 0 ? 1e3 / inf_ms : 0.0);
    o += fmt::format("       latency {:.3f} ms ({:.1f} FPS) end to end = inference + host input/output conversion {}; "
                     "NPU {}, CPU {}\n",
                     lat_ms, lat_ms > 0 ? 1e3 / lat_ms : 0.0, ms(r.host_io_ps), ms(r.npu_ps), ms(r.cpu_ps));
    if (r.repeat > 0)  // --repeat: host CPU time, not deterministic, so only on request
        o += fmt::format("per-inference simulation: {:.2f} ms CPU (best of {} repetitions, mean {:.2f} ms; every "
                         "repetition gave the same outputs and task cycles)\n",
                         r.sim_cpu_ms_best, r.repeat, r.sim_cpu_ms_mean);
    if (r.compile_cache.used)  // the one line a warm run's report has differently from a cold one
        o += r.compile_cache.hit ? fmt::format("compile cache: hit, {} (import and compile skipped)\n", r.compile_cache.file)
                                 : fmt::format("compile cache: miss ({}), compiled and stored {}\n",
                                               r.compile_cache.reason, r.compile_cache.file);
    if (!r.core_busy_ps.empty()) {
        o += "NPU cores busy:";
        for (const auto& [c, ps] : r.core_busy_ps)
            o += fmt::format(" core {} {} ({:.0f}%)", c, ms(ps),
                             r.total_ps ? 100.0 * static_cast<double>(ps) / static_cast<double>(r.total_ps) : 0.0);
        o += " of the latency\n";
    }
    o += fmt::format("DDR traffic: {} read, {} written; {} tasks, regcmd {}, weights {}, arena {}\n",
                     bytes(r.ddr_read_bytes), bytes(r.ddr_write_bytes), r.tasks, bytes(r.regcmd_bytes),
                     bytes(r.weight_bytes), bytes(r.arena_bytes));
    for (const ModelLayerRow& l : r.layers)
        if (l.unit == "CPU" && !l.note.empty()) o += fmt::format("CPU fallback: {} ({}): {}\n", l.name, l.op, l.note);
    // Graph rewrites: the import's, then each layer rewrite with the layers it formed.
    for (const std::string& w : r.rewrites) o += "rewrite: " + w + "\n";
    std::vector<std::pair<std::string, std::vector<std::string>>> by_kind;
    for (const ModelLayerRow& l : r.layers)
        for (const std::string& w : l.rewrites) {
            auto it = std::find_if(by_kind.begin(), by_kind.end(), [&](const auto& k) { return k.first == w; });
            if (it == by_kind.end()) it = by_kind.insert(by_kind.end(), {w, {}});
            it->second.push_back(l.name);
        }
    for (const auto& [w, names] : by_kind) {
        std::string list;
        for (size_t k = 0; k < names.size() && k < 3; ++k) list += (k ? ", " : "") + names[k];
        if (names.size() > 3) list += ", ...";
        o += fmt::format("rewrite: {}: {} layer{} ({})\n", w, names.size(), names.size() == 1 ? "" : "s", list);
    }
    if (r.outputs_checked)
        for (const OutputRow& out : r.outputs) {
            const OutputCheck& c = out.check;
            if (out.fp16_rel_error >= 0) {  // the fp16 path: float differences, no quantization step
                o += fmt::format("output '{}' vs reference executor (float32): {} values, fp16 run: max |diff| {:.3g} = "
                                 "{:.2e} x max |reference|, cosine {:.6f}\n",
                                 out.name, c.values, c.max_abs, out.fp16_rel_error, c.cosine());
                continue;
            }
            // Float outputs without a quantization step compare exactly: no "1 LSB" class to report.
            const std::string step = out.unit == "exact" ? std::string("differ in float")
                                                         : fmt::format("differ by 1 {}", out.unit);
            o += fmt::format("output '{}' vs reference executor: {} values, {} equal, {} {}, {} worse, "
                             "max |diff| {} -> {}\n",
                             out.name, c.values, c.equal, c.off_by_one, step, c.worse, c.max_abs_diff,
                             c.worse ? (r.isolated_checked && r.layers_worse == 0
                                            ? "differs (1-LSB layer differences propagated; layers checked below)"
                                            : "MISMATCH")
                                     : check_verdict(c));
        }
    if (r.isolated_checked) {
        const OutputCheck& c = r.isolated;
        o += fmt::format("isolated per-layer check (device inputs -> reference node): {} NPU layers: {} bit-exact, {} "
                         "within 1 LSB, {} worse; {} values, {} off by 1 ({:.4f}%), max |diff| {} -> {}\n",
                         r.layers_checked, r.layers_exact, r.layers_off_by_one, r.layers_worse, c.values, c.off_by_one,
                         c.values ? 100.0 * static_cast<double>(c.off_by_one) / static_cast<double>(c.values) : 0.0,
                         c.max_abs_diff, check_verdict(c));
        if (c.off_by_one) o += "  1-LSB cause: " + r.one_lsb_cause + "\n";
        size_t n16 = 0, bad16 = 0;
        double worst = 0, rtol = 0;
        std::string worst_name;
        for (const ModelLayerRow& l : r.layers)
            if (l.fp16_rel_error >= 0) {
                ++n16, bad16 += l.check.worse != 0, rtol = l.fp16_rtol;
                if (l.fp16_rel_error >= worst) worst = l.fp16_rel_error, worst_name = l.name;
            }
        if (n16)
            o += fmt::format("  fp16 layers: {} of them ran in fp16, {} outside the tolerance max |diff| < {:.4g} x "
                             "max |reference|; worst relative error {:.2e} ({}); counts above in steps of that "
                             "tolerance / 1.5\n",
                             n16, bad16, rtol, worst, worst_name);
    }
    o += rollup_text(r);
    o += scaling_text(r);
    o += trust_text(r);
    if (r.mode == "timing") o += "timing mode: no data moved, outputs not compared\n";
    if (r.rtl) o += npu::rtl::report_text(r.rtl_tasks, r.rtl_opts, r.rtl_layers);
    for (const std::string& n : r.notes) o += "note: " + n + "\n";
    for (const std::string& e : r.errors) o += "error: " + e + "\n";
    return o;
}

std::string report_json(const ModelRunResult& r) {
    nlohmann::ordered_json j;
    // docs/report-schema.md; a new field keeps the version, a renamed or removed one bumps it.
    j["schema"] = "npusim.model_run";
    j["schema_version"] = kModelReportSchemaVersion;
    j["platform"] = r.platform;
    j["platform_name"] = r.platform_name;
    j["model"] = r.model;
    j["mode"] = r.mode;
    j["core_mask"] = r.core_mask;
    j["cores"] = r.cores;
    j["npu_clock_hz"] = r.clock_hz;
    nlohmann::ordered_json layers = nlohmann::ordered_json::array();
    for (const ModelLayerRow& l : r.layers) {
        nlohmann::ordered_json x;
        x["name"] = l.name;
        x["op"] = l.op;
        x["unit"] = l.unit;
        x["input_shape"] = l.input_shape;
        x["output_shape"] = l.output_shape;
        x["cores"] = l.cores;
        x["tasks"] = l.tasks;
        x["macs"] = l.macs;
        x["macs_padded"] = l.macs_padded;
        x["regcmd_entries"] = l.regcmd_entries;
        x["cycles"] = {{"fetch", l.fetch_cycles}, {"dma_read", l.dma_read_cycles}, {"compute", l.compute_cycles},
                       {"write", l.write_cycles}, {"overhead", l.overhead_cycles}, {"total", l.total_cycles}};
        x["start_ps"] = l.start_ps;
        x["end_ps"] = l.end_ps;
        x["time_us"] = l.time_us;
        x["ddr_read_bytes"] = l.ddr_read_bytes;
        x["ddr_write_bytes"] = l.ddr_write_bytes;
        x["sram_read_bytes"] = l.sram_read_bytes;
        x["sram_write_bytes"] = l.sram_write_bytes;
        x["mac_utilisation"] = l.mac_utilisation;
        x["bound"] = l.bound;
        x["nodes"] = l.nodes;
        if (!l.note.empty()) x["note"] = l.note;
        if (!l.cpu_reason.empty()) x["cpu_reason"] = l.cpu_reason;
        if (!l.rewrites.empty()) x["rewrites"] = l.rewrites;
        if (l.checked) x["isolated_check"] = check_json(l.check);
        if (l.fp16_rel_error >= 0)
            x["fp16_check"] = {{"max_rel_error", l.fp16_rel_error}, {"rtol", l.fp16_rtol}, {"ok", l.check.worse == 0}};
        if (l.host_io) x["host_io"] = true;
        if (l.scaling.cores > 1) {
            const auto& s = l.scaling;
            x["scaling"] = {{"cores", s.cores},       {"work_ps", s.work_ps},
                            {"span_ps", s.span_ps},   {"barrier_ps", s.barrier_ps},
                            {"split_ps", s.split_ps}, {"ddr_contention_ps", s.ddr_contention_ps},
                            {"efficiency", s.efficiency}, {"limit", s.limit}};
        }
        layers.push_back(x);
    }
    j["layers"] = layers;
    const double lat_ms = static_cast<double>(r.total_ps) / 1e9;
    j["totals"] = {{"latency_ps", r.total_ps},
                   {"latency_ms", lat_ms},
                   {"fps", lat_ms > 0 ? 1e3 / lat_ms : 0.0},
                   {"npu_ps", r.npu_ps},
                   {"cpu_ps", r.cpu_ps},
                   {"ddr_read_bytes", r.ddr_read_bytes},
                   {"ddr_write_bytes", r.ddr_write_bytes},
                   {"tasks", r.tasks},
                   {"regcmd_bytes", r.regcmd_bytes},
                   {"weight_bytes", r.weight_bytes},
                   {"arena_bytes", r.arena_bytes},
                   {"steps", r.steps},
                   {"npu_layers", r.npu_layers},
                   {"cpu_layers", r.cpu_layers},
                   {"view_layers", r.view_layers}};
    nlohmann::ordered_json busy = nlohmann::ordered_json::object();
    for (const auto& [c, ps] : r.core_busy_ps) busy[std::to_string(c)] = ps;
    j["totals"]["core_busy_ps"] = busy;
    // The figure to compare with published "inference only" numbers (the vendor runtime's run
    // call: NPU work plus CPU layers inside the graph), beside latency_ms (end to end, with the host
    // input/output conversion host_io_ms).
    const double inf_ms = static_cast<double>(r.inference_ps) / 1e9;
    j["totals"]["inference_ps"] = r.inference_ps;
    j["totals"]["inference_ms"] = inf_ms;
    j["totals"]["inference_fps"] = inf_ms > 0 ? 1e3 / inf_ms : 0.0;
    j["totals"]["host_io_ps"] = r.host_io_ps;
    j["totals"]["host_io_ms"] = static_cast<double>(r.host_io_ps) / 1e9;
    if (r.repeat > 0) {  // --repeat: process CPU time of one inference's simulation (best of N)
        j["totals"]["repeat"] = r.repeat;
        j["totals"]["sim_cpu_ms_per_inference"] = r.sim_cpu_ms_best;
        j["totals"]["sim_cpu_ms_mean"] = r.sim_cpu_ms_mean;
    }
    if (r.compile_cache.used)
        j["compile_cache"] = {{"hit", r.compile_cache.hit}, {"file", r.compile_cache.file},
                              {"reason", r.compile_cache.hit ? std::string() : r.compile_cache.reason}};
    j["calibration"] = calibration_json(r);
    nlohmann::ordered_json ops = nlohmann::ordered_json::array();
    for (const OpRollup& x : op_rollup(r))
        ops.push_back({{"op", x.op}, {"unit", x.unit}, {"layers", x.layers}, {"time_us", x.time_us},
                       {"share_pct", x.share_pct}, {"macs", x.macs}, {"ddr_bytes", x.ddr_bytes}});
    j["op_types"] = ops;
    if (r.outputs_checked) {
        nlohmann::ordered_json outs = nlohmann::ordered_json::array();
        for (const OutputRow& out : r.outputs) {
            nlohmann::ordered_json x = check_json(out.check);
            x["name"] = out.name;
            x["unit"] = out.unit;
            if (out.fp16_rel_error >= 0) x["fp16_max_rel_error"] = out.fp16_rel_error, x["cosine"] = out.check.cosine();
            outs.push_back(x);
        }
        j["outputs"] = outs;
    }
    if (r.isolated_checked) {
        nlohmann::ordered_json x = check_json(r.isolated);
        x["layers"] = r.layers_checked;
        x["layers_exact"] = r.layers_exact;
        x["layers_off_by_one"] = r.layers_off_by_one;
        x["layers_worse"] = r.layers_worse;
        j["isolated_check"] = x;
    }
    if (r.rtl) j["rtl"] = npu::rtl::report_json(r.rtl_tasks, r.rtl_opts, r.rtl_layers);
    j["notes"] = r.notes;
    j["rewrites"] = r.rewrites;
    j["errors"] = r.errors;
    j["ok"] = r.ok();
    return j.dump(2) + "\n";
}

}  // namespace sim
