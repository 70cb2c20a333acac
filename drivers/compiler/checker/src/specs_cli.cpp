// SPDX-License-Identifier: MIT
// `npusim specs`: what the spec DB holds (ops and rules per platform, checked vs documented-only)
// and, with --coverage, every seed operator heading that is not encoded, with the reason.
#include <algorithm>
#include <iomanip>

#include <nlohmann/json.hpp>

#include "checker/cli.h"
#include "checker/spec_db.h"

namespace drv::check {

namespace {

struct Counts {
    size_t ops = 0, rules = 0, checked = 0, notes = 0, training = 0, uncovered = 0;
};

Counts count(const PlatformSpec& p) {
    Counts c;
    c.ops = p.ops.size();
    c.uncovered = p.uncovered.size();
    for (const auto& op : p.ops) {
        c.rules += op.rules.size();
        c.training += op.training.size();
        for (const auto& r : op.rules) (r.kind == RuleKind::Note ? c.notes : c.checked)++;
    }
    return c;
}

void print_summary(const SpecDb& db, std::ostream& out) {
    out << std::left << std::setw(18) << "platform" << std::setw(34) << "toolchain" << std::right << std::setw(5) << "ops"
        << std::setw(7) << "rules" << std::setw(9) << "checked" << std::setw(7) << "notes" << std::setw(10)
        << "training" << std::setw(11) << "uncovered" << "  source\n";
    for (const auto& p : db.platforms()) {
        Counts c = count(p);
        out << std::left << std::setw(18) << p.id << std::setw(34) << p.toolchain << std::right << std::setw(5) << c.ops
            << std::setw(7) << c.rules << std::setw(9) << c.checked << std::setw(7) << c.notes << std::setw(10)
            << c.training << std::setw(11) << c.uncovered << "  " << Source{p.seed, p.section}.text()
            << (p.tables_in_seed ? "" : "  (the document has no operator tables for it)") << "\n";
    }
}

void print_platform(const PlatformSpec& p, std::ostream& out) {
    Counts c = count(p);
    out << p.id << ": " << p.toolchain << " (" << Source{p.seed, p.section}.text() << "), file " << p.file << "\n";
    if (!p.note.empty()) out << "  note: " << p.note << "\n";
    out << "  engine " << p.engine << ", CPU fallback " << (p.cpu_fallback ? "yes" : "no")
        << ", static shapes " << (p.static_shapes ? "required" : "not required") << "\n";
    out << "  " << c.ops << " ops, " << c.rules << " rules (" << c.checked << " checked, " << c.notes
        << " documented only), " << c.training << " training rows, " << c.uncovered << " uncovered headings\n";
    for (const auto& op : p.ops) {
        out << "  " << op.heading << (op.framework.empty() ? "" : " [" + op.framework + "]");
        if (!op.inherits.empty()) out << " (inherits " << op.inherits << ")";
        out << ": " << op.rules.size() << " rules\n";
        for (const auto& r : op.rules)
            out << "    [" << rule_kind_name(r.kind) << "] " << r.message << " (" << r.source.text() << ")\n";
        for (const auto& r : op.training)
            out << "    [training] " << r.message << " (" << r.source.text() << ")\n";
    }
}

void print_coverage(const PlatformSpec& p, std::ostream& out) {
    out << p.id << ": " << p.ops.size() << " headings encoded, " << p.uncovered.size() << " not encoded\n";
    for (const auto& u : p.uncovered) out << "  " << u.heading << ": " << u.reason << " (" << u.source.text() << ")\n";
}

nlohmann::json platform_json(const PlatformSpec& p, bool full) {
    Counts c = count(p);
    nlohmann::json j{{"platform", p.id},       {"toolchain", p.toolchain}, {"seed", p.seed},
                     {"section", p.section},   {"file", p.file},           {"tables_in_seed", p.tables_in_seed},
                     {"ops", c.ops},           {"rules", c.rules},         {"checked_rules", c.checked},
                     {"note_rules", c.notes},  {"training_rows", c.training}};
    j["uncovered"] = nlohmann::json::array();
    for (const auto& u : p.uncovered) j["uncovered"].push_back({{"heading", u.heading}, {"reason", u.reason}});
    if (full) {
        j["op_list"] = nlohmann::json::array();
        for (const auto& op : p.ops) j["op_list"].push_back({{"name", op.name}, {"heading", op.heading},
                                                             {"rules", op.rules.size()}, {"inherits", op.inherits}});
    }
    return j;
}

}  // namespace

int run_specs_cli(const SpecsCliOptions& opts, std::ostream& out, std::ostream& err) {
    SpecDb db;
    try {
        db = SpecDb::load_dir(opts.specs_dir.empty() ? default_specs_dir() : opts.specs_dir);
    } catch (const SpecError& e) {
        err << "npusim: error: spec DB error: " << e.what() << "\n";
        return kExitSpecError;
    }
    std::vector<const PlatformSpec*> sel;
    if (!opts.platform.empty()) {
        const PlatformSpec* p = db.find(opts.platform);
        if (!p) {
            std::string known;
            for (const auto& id : db.ids()) known += (known.empty() ? "" : ", ") + id;
            err << "npusim: error: unknown platform '" << opts.platform << "', npusim specs --platform (known platforms: " << known
                << ")\n";
            return kExitUsage;
        }
        sel.push_back(p);
    } else {
        for (const auto& p : db.platforms()) sel.push_back(&p);
    }
    if (opts.json) {
        nlohmann::json j = nlohmann::json::array();
        for (const auto* p : sel) j.push_back(platform_json(*p, !opts.platform.empty()));
        out << j.dump(2) << "\n";
        return kExitOk;
    }
    if (opts.coverage) {
        for (const auto* p : sel) print_coverage(*p, out);
        return kExitOk;
    }
    if (opts.platform.empty()) print_summary(db, out);
    else print_platform(*sel[0], out);
    return kExitOk;
}

}  // namespace drv::check
