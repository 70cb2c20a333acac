// SPDX-License-Identifier: MIT
// `npusim check`: load the spec DB and the model(s), check, print per-node verdicts with the
// violated rules (text or JSON) or the model x platform matrix, map the result to an exit code.
#include <algorithm>
#include <exception>
#include <iomanip>
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

void print_text(const CheckResult& r, const PlatformSpec& p, const std::string& model, std::ostream& out) {
    out << "model " << model << " on " << p.id << " (" << p.toolchain << ", " << Source{p.seed, p.section}.text()
        << ")\n";
    for (const auto& n : r.nodes) {
        out << n.node << " (" << n.op_type << "): " << verdict_name(n.verdict, p);
        if (!n.spec_op.empty() && n.verdict != Verdict::Fused) out << " [" << n.spec_op << "]";
        if (!n.reason.empty()) out << " - " << n.reason;
        out << "\n";
        for (const auto& v : n.violations)
            out << "  " << n.node << " (" << n.op_type << "): " << v.text << " \u2014 " << citation(p, n, v) << "\n";
    }
    out << "summary: " << r.nodes.size() << " nodes: " << r.count(Verdict::Target) << " " << verdict_name(Verdict::Target, p)
        << ", " << r.count(Verdict::Fused) << " fused, " << r.count(Verdict::CpuFallback) << " CPU fallback, "
        << r.count(Verdict::Unsupported) << " unsupported";
    if (r.count(Verdict::NotInSeed)) out << ", " << r.count(Verdict::NotInSeed) << " not in the seed";
    out << "\n";
    if (!p.cpu_fallback_note.empty() && r.count(Verdict::CpuFallback)) out << "note: " << p.cpu_fallback_note << "\n";
}

nlohmann::json to_json(const CheckResult& r, const PlatformSpec& p, const std::string& model) {
    nlohmann::json j;
    j["model"] = model;
    j["platform"] = p.id;
    j["toolchain"] = p.toolchain;
    j["nodes"] = nlohmann::json::array();
    for (const auto& n : r.nodes) {
        nlohmann::json jn{{"name", n.node}, {"op_type", n.op_type}, {"verdict", verdict_name(n.verdict, p)},
                          {"spec_op", n.spec_op}, {"heading", n.heading}, {"reason", n.reason}};
        if (!n.fused_into.empty()) jn["fused_into"] = n.fused_into;
        jn["violations"] = nlohmann::json::array();
        for (const auto& v : n.violations)
            jn["violations"].push_back({{"kind", rule_kind_name(v.rule->kind)}, {"text", v.text},
                                        {"op", v.op}, {"message", v.rule->message},
                                        {"seed", v.rule->source.seed}, {"section", v.rule->source.section}});
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
    if (!p.tables_in_seed) return "no-seed";
    std::string c;
    auto add = [&](const char* tag, Verdict v) {
        if (size_t k = r.count(v)) c += (c.empty() ? "" : "+") + std::string(tag) + std::to_string(k);
    };
    add("UNSUP:", Verdict::Unsupported);
    add("CPU:", Verdict::CpuFallback);
    add("NS:", Verdict::NotInSeed);
    return c.empty() ? "OK" : c;
}

int run_matrix(const SpecDb& db, const std::vector<std::pair<std::string, ir::Graph>>& models,
               const CheckCliOptions& opts, std::ostream& out) {
    CheckOptions co;
    co.quant_bits = opts.quant_bits;
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
                CheckResult r = check_graph(g, p, co);
                c = cell(r, p);
                if (p.tables_in_seed) worst = worse(worst, exit_for(r.overall()));
            } catch (const CheckError&) {
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
                "unsupported; NS:n = n nodes whose operator is outside the part of the table the seed contains; no-seed = the "
                "platform has no operator tables in the seed; error = model not checkable\n";
    return worst;
}

}  // namespace

int run_check_cli(const CheckCliOptions& opts, std::ostream& out, std::ostream& err) {
    if (opts.models.empty()) {
        err << "npusim check: no model given\n";
        return kExitUsage;
    }
    if (!opts.all_platforms && opts.platform.empty()) {
        err << "npusim check: --platform P or --all-platforms is required\n";
        return kExitUsage;
    }
    SpecDb db;
    try {
        db = SpecDb::load_dir(opts.specs_dir.empty() ? default_specs_dir() : opts.specs_dir);
    } catch (const SpecError& e) {
        err << "npusim check: spec DB error: " << e.what() << "\n";
        return kExitSpecError;
    }
    const PlatformSpec* plat = nullptr;
    if (!opts.all_platforms) {
        plat = db.find(opts.platform);
        if (!plat) {
            std::string known;
            for (const auto& id : db.ids()) known += (known.empty() ? "" : ", ") + id;
            err << "npusim check: unknown platform '" << opts.platform << "'; known platforms: " << known << "\n";
            return kExitUsage;
        }
    }
    importer::ImportOptions io;
    io.qdq = importer::QdqMode::Fold;
    std::vector<std::pair<std::string, ir::Graph>> models;
    try {
        for (const auto& s : opts.input_shapes) importer::parse_input_shape(s, io);
        for (const auto& m : opts.models) {
            ir::Graph g = importer::load_model(m, io);
            models.emplace_back(m, quantized_view(opts.prepare ? opts.prepare(m, std::move(g)) : g));
        }
    } catch (const std::exception& e) {
        err << "npusim check: cannot load model: " << e.what() << "\n";
        return kExitModelError;
    }
    if (opts.all_platforms) return run_matrix(db, models, opts, out);
    CheckOptions co;
    co.quant_bits = opts.quant_bits;
    int worst = kExitOk;
    nlohmann::json all = nlohmann::json::array();
    for (const auto& [name, g] : models) {
        try {
            CheckResult r = check_graph(g, *plat, co);
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
            if (opts.json) all.push_back(to_json(r, *plat, name));
            else print_text(r, *plat, name, out);
            worst = worse(worst, exit_for(r.overall()));
        } catch (const CheckError& e) {
            err << "npusim check: " << name << ": " << e.what() << "\n";
            worst = worse(worst, kExitModelError);
        }
    }
    if (opts.json) out << (all.size() == 1 ? all[0] : all).dump(2) << "\n";
    return worst;
}

}  // namespace drv::check
