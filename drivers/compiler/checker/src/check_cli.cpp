// SPDX-License-Identifier: MIT
// `npusim check`: load the spec DB and the model(s), check, print per-node verdicts with the
// violated rules (text or JSON) or the model x platform matrix, map the result to an exit code.
#include <algorithm>
#include <exception>
#include <filesystem>
#include <iomanip>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "checker/checker.h"
#include "checker/cli.h"
#include "compiler/model_loader.h"

namespace drv::check {

namespace {

int exit_for(Verdict v) {
    switch (v) {
        case Verdict::Target:
        case Verdict::Fused: return kExitOk;
        case Verdict::CpuFallback: return kExitCpuFallback;
        case Verdict::Unsupported: return kExitUnsupported;
        case Verdict::NotInSeed: return kExitNotInSeed;
    }
    return kExitUnsupported;
}

/// Combines exit codes across models/platforms: unsupported outranks "not in the seed", which
/// outranks a CPU fallback; a model that could not be checked outranks everything.
int worse(int a, int b) {
    auto rank = [](int c) {
        switch (c) {
            case kExitOk: return 0;
            case kExitCpuFallback: return 1;
            case kExitNotInSeed: return 2;
            case kExitUnsupported: return 3;
            default: return 4;
        }
    };
    return rank(b) > rank(a) ? b : a;
}

std::string citation(const PlatformSpec& p, const NodeResult& n, const Violation& v) {
    std::string via = (!n.spec_op.empty() && n.spec_op != v.op) ? " (via " + n.spec_op + ")" : "";
    return p.id + " " + v.op + via + ", " + v.rule->source.text();
}

/// One node's line(s): vendor verdict, violated rules, rewrites, and npusim's placement when known.
void print_node(const NodeResult& n, const PlatformSpec& p, const NodePlacement* pl, std::ostream& out) {
    out << n.node << " (" << n.op_type << "): " << verdict_name(n.verdict, p);
    if (!n.spec_op.empty() && n.verdict != Verdict::Fused) out << " [" << n.spec_op << "]";
    if (!n.reason.empty()) out << " - " << n.reason;
    if (pl) {
        out << " -> npusim: " << pl->unit;
        if (pl->unit == "CPU") out << " (" << (pl->note.empty() ? pl->reason : pl->note) << ")";
        else if (pl->layer != n.node) out << " (layer " << pl->layer << ")";
    }
    out << "\n";
    for (const auto& v : n.violations)
        out << "  " << n.node << " (" << n.op_type << "): " << v.text << " \u2014 " << citation(p, n, v) << "\n";
    for (const auto& rw : n.rewrites) out << "  " << n.node << " rewrite: " << rw << "\n";
}

void print_text(const CheckResult& r, const PlatformSpec& p, const std::string& model, std::ostream& out,
                const std::vector<NodePlacement>* placed = nullptr) {
    out << "model " << model << " on " << p.id << " (" << p.toolchain << ", " << Source{p.seed, p.section}.text()
        << ")\n";
    for (size_t k = 0; k < r.nodes.size(); ++k) print_node(r.nodes[k], p, placed ? &(*placed)[k] : nullptr, out);
    out << "summary: " << r.nodes.size() << " nodes: " << r.count(Verdict::Target) << " " << verdict_name(Verdict::Target, p)
        << ", " << r.count(Verdict::Fused) << " fused, " << r.count(Verdict::CpuFallback) << " CPU fallback, "
        << r.count(Verdict::Unsupported) << " unsupported";
    if (r.count(Verdict::NotInSeed)) out << ", " << r.count(Verdict::NotInSeed) << " outside the operator tables of " << p.toolchain;
    out << "\n";
    if (placed) {
        size_t npu = 0, view = 0, rule = 0, lowering = 0, forced = 0;
        for (const auto& q : *placed) {
            npu += q.unit == "NPU", view += q.unit == "view";
            rule += q.unit == "CPU" && q.reason == "vendor rule";
            lowering += q.unit == "CPU" && q.reason == "no NPU lowering yet";
            forced += q.unit == "CPU" && q.reason == "forced";
        }
        out << "npusim: " << npu << " nodes in NPU layers, " << view << " in views, " << rule + lowering + forced
            << " on the CPU (" << rule << " by the vendor rules, " << lowering << " with no NPU lowering in npusim yet"
            << (forced ? ", " + std::to_string(forced) + " forced" : std::string()) << ")\n";
    }
    if (!p.cpu_fallback_note.empty() && r.count(Verdict::CpuFallback)) out << "note: " << p.cpu_fallback_note << "\n";
}

nlohmann::json to_json(const CheckResult& r, const PlatformSpec& p, const std::string& model,
                       const std::vector<NodePlacement>* placed = nullptr) {
    nlohmann::json j;
    j["model"] = model;
    j["platform"] = p.id;
    j["toolchain"] = p.toolchain;
    j["nodes"] = nlohmann::json::array();
    for (size_t k = 0; k < r.nodes.size(); ++k) {
        const NodeResult& n = r.nodes[k];
        nlohmann::json jn{{"name", n.node}, {"op_type", n.op_type}, {"verdict", verdict_name(n.verdict, p)},
                          {"spec_op", n.spec_op}, {"heading", n.heading}, {"reason", n.reason}};
        if (!n.fused_into.empty()) jn["fused_into"] = n.fused_into;
        jn["violations"] = nlohmann::json::array();
        for (const auto& v : n.violations)
            jn["violations"].push_back({{"kind", rule_kind_name(v.rule->kind)}, {"text", v.text},
                                        {"op", v.op}, {"message", v.rule->message},
                                        {"seed", v.rule->source.seed}, {"section", v.rule->source.section}});
        if (placed) {
            const NodePlacement& q = (*placed)[k];
            jn["rewrites"] = n.rewrites;
            jn["npusim"] = {{"unit", q.unit}, {"layer", q.layer}, {"reason", q.reason}, {"note", q.note}};
        }
        j["nodes"].push_back(std::move(jn));
    }
    j["summary"] = {{"nodes", r.nodes.size()},
                    {"target", r.count(Verdict::Target)},
                    {"fused", r.count(Verdict::Fused)},
                    {"cpu_fallback", r.count(Verdict::CpuFallback)},
                    {"unsupported", r.count(Verdict::Unsupported)},
                    {"not_in_seed", r.count(Verdict::NotInSeed)},
                    {"verdict", verdict_name(r.overall(), p)}};
    return j;
}

std::string cell(const CheckResult& r, const PlatformSpec& p) {
    if (!p.tables_in_seed) return "no-tables";
    std::string c;
    auto add = [&](const char* tag, Verdict v) {
        if (size_t k = r.count(v)) c += (c.empty() ? "" : "+") + std::string(tag) + std::to_string(k);
    };
    add("UNSUP:", Verdict::Unsupported);
    add("CPU:", Verdict::CpuFallback);
    add("NOTAB:", Verdict::NotInSeed);
    return c.empty() ? "OK" : c;
}

int run_matrix(const SpecDb& db, const std::vector<std::pair<std::string, ir::Graph>>& models,
               const CheckCliOptions& opts, std::ostream& out) {
    CheckOptions co;
    co.quant_bits = opts.quant_bits;
    co.weight_bits = opts.weight_bits;
    size_t w0 = 5;
    for (const auto& m : models) w0 = std::max(w0, m.first.size());
    nlohmann::json j = nlohmann::json::array();
    if (!opts.json) {
        out << std::left << std::setw(static_cast<int>(w0)) << "model";
        for (const auto& p : db.platforms()) out << "  " << std::setw(static_cast<int>(std::max<size_t>(p.id.size(), 9))) << p.id;
        out << "\n";
    }
    int worst = kExitOk;
    for (const auto& [name, g] : models) {
        if (!opts.json) out << std::left << std::setw(static_cast<int>(w0)) << name;
        for (const auto& p : db.platforms()) {
            std::string c;
            try {
                // RKNPU platforms: the compiler's vendor verdicts (as single-platform check reports).
                std::optional<std::vector<NodePlacement>> placed;
                if (opts.placement && !opts.prepare && p.tables_in_seed) placed = opts.placement(name, p.id, p);
                CheckResult r;
                if (placed) {
                    r.platform = p.id;
                    for (const auto& q : *placed) r.nodes.push_back(q.vendor);
                } else {
                    r = check_graph(g, p, co);
                }
                c = cell(r, p);
                if (p.tables_in_seed) worst = worse(worst, exit_for(r.overall()));
            } catch (const std::exception&) {
                c = "error";
                worst = worse(worst, kExitModelError);
            }
            if (opts.json) j.push_back({{"model", name}, {"platform", p.id}, {"result", c}});
            else out << "  " << std::setw(static_cast<int>(std::max<size_t>(p.id.size(), 9))) << c;
        }
        if (!opts.json) out << "\n";
    }
    if (opts.json) out << j.dump(2) << "\n";
    else out << "legend: OK = every node on the NPU/MCU; CPU:n = n nodes fall back to the CPU; UNSUP:n = n nodes "
                "unsupported; NOTAB:n = n nodes whose operator is outside the part of the vendor's operator table npusim has; "
                "no-tables = the vendor documents have no operator tables for the platform; error = model not checkable\n";
    return worst;
}

}  // namespace

int run_check_cli(const CheckCliOptions& opts, std::ostream& out, std::ostream& err) {
    if (opts.models.empty()) {
        err << "npusim: error: no model given\n";
        return kExitUsage;
    }
    if (!opts.all_platforms && opts.platform.empty()) {
        err << "npusim: error: --platform P or --all-platforms is required\n";
        return kExitUsage;
    }
    SpecDb db;
    try {
        db = SpecDb::load_dir(opts.specs_dir.empty() ? default_specs_dir() : opts.specs_dir);
    } catch (const SpecError& e) {
        err << "npusim: error: spec DB error: " << e.what() << "\n";
        return kExitSpecError;
    }
    const PlatformSpec* plat = nullptr;
    if (!opts.all_platforms) {
        plat = db.find(opts.platform);
        if (!plat) {
            std::string known;
            for (const auto& id : db.ids()) known += (known.empty() ? "" : ", ") + id;
            err << "npusim: error: unknown platform '" << opts.platform << "', npusim check --platform (known platforms: " << known
                << ")\n";
            return kExitUsage;
        }
    }
    for (const std::string& m : opts.models)  // cli.md: a missing file is bad input (2), as on `npusim run`
        if (!std::filesystem::exists(m)) {
            err << "npusim: error: model file '" << m << "' not found, npusim check\n";
            return kExitUsage;
        }
    importer::ImportOptions io;
    io.qdq = importer::QdqMode::Fold;
    try {
        for (const auto& s : opts.input_shapes) importer::parse_input_shape(s, io);
    } catch (const std::exception& e) {
        err << "npusim: error: cannot load model: " << e.what() << "\n";
        return kExitModelError;
    }
    // RKNPU platforms: the compiler's own per-node decision (vendor rules + rewrites + what it can
    // lower), the same one `npusim run` executes. Other platforms: the rule engine on the graph.
    std::vector<std::optional<std::vector<NodePlacement>>> placed(opts.models.size());
    if (!opts.all_platforms && opts.placement && !opts.prepare) {
        for (size_t k = 0; k < opts.models.size(); ++k) {
            try {
                placed[k] = opts.placement(opts.models[k], opts.platform, *plat);
            } catch (const std::exception& e) {
                err << "npusim: error: cannot load model: " << e.what() << "\n";
                return kExitModelError;
            }
        }
    }
    std::vector<std::pair<std::string, ir::Graph>> models;
    try {
        for (size_t k = 0; k < opts.models.size(); ++k) {
            if (placed[k]) {
                models.emplace_back(opts.models[k], ir::Graph());
                continue;
            }
            ir::Graph g = importer::load_model(opts.models[k], io);
            models.emplace_back(opts.models[k],
                                quantized_view(opts.prepare ? opts.prepare(opts.models[k], std::move(g)) : g));
        }
    } catch (const std::exception& e) {
        err << "npusim: error: cannot load model: " << e.what() << "\n";
        return kExitModelError;
    }
    if (opts.all_platforms) return run_matrix(db, models, opts, out);
    CheckOptions co;
    co.quant_bits = opts.quant_bits;
    co.weight_bits = opts.weight_bits;
    int worst = kExitOk;
    nlohmann::json all = nlohmann::json::array();
    for (size_t k = 0; k < models.size(); ++k) {
        const auto& [name, g] = models[k];
        try {
            CheckResult r;
            if (placed[k]) {
                r.platform = plat->id;
                for (const auto& q : *placed[k]) r.nodes.push_back(q.vendor);
            } else {
                r = check_graph(g, *plat, co);
            }
            if (opts.engine_refusals && plat->engine == "MCU") {
                for (const auto& [node, why] : opts.engine_refusals(name, g)) {
                    auto it = std::find_if(r.nodes.begin(), r.nodes.end(), [&](const NodeResult& x) { return x.node == node; });
                    if (node.empty() || it == r.nodes.end()) {
                        NodeResult m;
                        m.node = node.empty() ? name : node;
                        m.op_type = node.empty() ? "model" : "?";
                        m.verdict = Verdict::Unsupported;
                        m.reason = why;
                        r.nodes.insert(r.nodes.begin(), m);
                    } else if (it->verdict == Verdict::Target || it->verdict == Verdict::Fused) {
                        it->verdict = Verdict::Unsupported;
                        it->reason = why;
                    }
                }
            }
            const std::vector<NodePlacement>* pl = placed[k] ? &*placed[k] : nullptr;
            if (opts.json) all.push_back(to_json(r, *plat, name, pl));
            else print_text(r, *plat, name, out, pl);
            worst = worse(worst, exit_for(r.overall()));
        } catch (const CheckError& e) {
            err << "npusim: error: " << name << ": " << e.what() << "\n";
            worst = worse(worst, kExitModelError);
        }
    }
    if (opts.json) out << (all.size() == 1 ? all[0] : all).dump(2) << "\n";
    return worst;
}

}  // namespace drv::check
