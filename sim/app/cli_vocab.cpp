// SPDX-License-Identifier: MIT
// The CLI vocabulary (cli_vocab.h).
#include "app/cli_vocab.h"

#include <algorithm>
#include <cctype>
#include <stdexcept>

#include <fmt/format.h>

#include "hw/profile.h"
#include "hw/tnpuv2/profile.h"
#include "mcu/mcu_target.h"

namespace sim::cli {

namespace {

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

}  // namespace

size_t edit_distance(const std::string& a0, const std::string& b0) {
    const std::string a = lower(a0), b = lower(b0);
    std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
        cur[0] = i;
        for (size_t j = 1; j <= b.size(); ++j)
            cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
        std::swap(prev, cur);
    }
    return prev[b.size()];
}

std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates) {
    std::string best;
    size_t best_d = std::max<size_t>(2, word.size() / 3) + 1;
    for (const std::string& c : candidates) {
        const size_t d = edit_distance(word, c);
        if (d < best_d) best_d = d, best = c;
    }
    return best;
}

std::vector<std::string> platform_names() {
    std::vector<std::string> names = hw::list_profiles();
    for (const mcu::McuTarget& t : mcu::all_targets()) names.push_back(t.name);
    names.push_back("tnpuv2");  // hwdesc/tnpuv2 (its own profile format)
    return names;
}

std::string canonical_platform(const std::string& name) {
    const std::vector<std::string> names = platform_names();
    const std::string n = lower(name);
    if (std::find(names.begin(), names.end(), n) != names.end()) return n;
    if (const mcu::McuTarget* t = mcu::find_target(n)) return t->name;
    if (hw::tnpuv2::is_platform_name(n)) return "tnpuv2";
    // Operator-table names: RK3566_RK3568 -> rk3566, RV1103B_RV1106B -> rv1106b (no rv1103b profile).
    if (n.find('_') != std::string::npos) {
        size_t pos = 0;
        for (size_t next; pos <= n.size(); pos = next + 1) {
            next = std::min(n.find('_', pos), n.size());
            const std::string part = n.substr(pos, next - pos);
            if (std::find(names.begin(), names.end(), part) != names.end()) return part;
        }
    }
    std::string known;
    for (const std::string& k : names) known += (known.empty() ? "" : ", ") + k;
    const std::string near = did_you_mean(n, names);
    throw std::invalid_argument(fmt::format("unknown platform '{}', --platform ({}known: {})", name,
                                            near.empty() ? "" : "did you mean " + near + "? ", known));
}

const char* run_kind_name(unsigned kind) {
    switch (kind) {
        case kLayerRun: return "layer runs (a .json layer description or the bundled example)";
        case kNpuModelRun: return "NPU model runs";
        case kMcuRun: return "MCU runs";
        case kReferenceRun: return "reference runs (--reference)";
        case kTnpuv2Run: return "tnpuv2 runs";
    }
    return "this run";
}

const std::vector<OptionScope>& run_option_scopes() {
    constexpr unsigned L = kLayerRun, N = kNpuModelRun, M = kMcuRun, R = kReferenceRun, T = kTnpuv2Run;
    static const std::vector<OptionScope> t = {
        {"--platform", L | N | M | T},
        {"--cores", L, "NPU model runs choose cores with --core-mask auto|0|1|2|0_1|0_1_2"},
        {"--mode", L | N | T, "MCU and reference runs always move the data"},
        {"--trace", L | N | M | T},
        {"--report", L | N | M | T},
        {"--vcd", L | N | M | T},
        {"--csv", N},
        {"--html", N},
        {"--profile", L | N | T},
        {"--param", L | N | T},
        {"--dump-regcmd", L | T},
        {"--sram", L},
        {"--input", N | M | R | T},
        {"--output", N | M | R | T},
        {"--output-dir", N | M | R},
        {"--expect", N | M | R},
        {"--atol", N | M | R},
        {"--rtol", N | M | R},
        {"--input-shape", N | M | R | T},
        {"--seed", N | M | R | T},
        {"--core-mask", N | T, "layer runs take --cores 0,1,2 (one copy of the layer per core)"},
        {"--cpu-node", N},
        {"--dump-layers", N | T},
        {"--verify-tiling", N},
        {"--expect-exact", N | T},
        {"--no-compare", N | T},
        {"--repeat", N},
        {"--compile-cache", N},
        {"--rtl", L | N},
        {"--rtl-vcd", L | N},
        {"--keep-qdq", R},
        {"--requant", M},
        {"--skip-check", M},
        {"--quantize", N | M, "tnpuv2 quantizes float models at --bits"},
        {"--calibration", N | M | T},
        {"--calibration-method", N | M | T},
        {"--bits", T},
        {"--weight-bits", T},
    };
    return t;
}

std::string inapplicable_option(const CLI::App& run, unsigned kind, const std::string& where) {
    for (const OptionScope& s : run_option_scopes()) {
        const CLI::Option* opt = run.get_option_no_throw(s.option);
        if (!opt || opt->count() == 0 || (s.kinds & kind)) continue;
        std::string applies;
        for (unsigned k : {kLayerRun, kNpuModelRun, kMcuRun, kReferenceRun, kTnpuv2Run})
            if (s.kinds & k) applies += std::string(applies.empty() ? "" : "; ") + run_kind_name(k);
        return fmt::format("{} does not apply to {}, npusim run {} (it applies to {}{})", s.option, run_kind_name(kind),
                           where, applies, s.hint ? std::string("; ") + s.hint : std::string());
    }
    return {};
}

std::string parse_error_text(CLI::App& app, const CLI::ParseError& e) {
    std::string msg = e.what();
    if (msg.find("subcommand is required") != std::string::npos) {
        std::vector<std::string> subs;
        for (const CLI::App* sc : app.get_subcommands({})) subs.push_back(sc->get_name());
        const std::vector<std::string> rest = app.remaining(true);
        if (rest.empty()) return "no subcommand, npusim (see npusim --help)";
        const std::string near = did_you_mean(rest.front(), subs);
        return fmt::format("unknown subcommand '{}', npusim ({}see npusim --help)", rest.front(),
                           near.empty() ? "" : "did you mean " + near + "? ");
    }
    // CLI11's ConversionError reads "Could not convert: --epochs = -1": say what the option takes.
    if (dynamic_cast<const CLI::ConversionError*>(&e) && msg.rfind("Could not convert: ", 0) == 0) {
        const std::string rest = msg.substr(19);
        const size_t eq = rest.find(" = ");
        if (eq != std::string::npos) {
            const std::string name = rest.substr(0, eq), value = rest.substr(eq + 3);
            std::string type;
            for (CLI::App* sc : app.get_subcommands())
                for (const CLI::Option* o : sc->get_options())
                    if (o->check_name(name)) type = o->get_type_name();
            for (const CLI::Option* o : app.get_options())
                if (o->check_name(name)) type = o->get_type_name();
            const std::string want = type == "UINT"    ? "a non-negative integer"
                                     : type == "INT"   ? "an integer"
                                     : type == "FLOAT" ? "a number"
                                                       : (type.empty() ? std::string("another value") : type);
            return fmt::format("{}: '{}' is not {} (see --help)", name, value, want);
        }
    }
    // CLI11's ExtrasError carries the app's name as its name: tell it by type.
    if (!dynamic_cast<const CLI::ExtrasError*>(&e)) return msg;
    // The subcommand the unknown arguments were given to, and its option names.
    CLI::App* sub = &app;
    const std::vector<CLI::App*> subs = app.get_subcommands();
    if (!subs.empty()) sub = subs.front();
    std::vector<std::string> names;
    for (const CLI::Option* o : sub->get_options()) {
        for (const std::string& l : o->get_lnames()) names.push_back("--" + l);
        for (const std::string& s : o->get_snames()) names.push_back("-" + s);
    }
    std::vector<std::string> extra = sub->remaining();
    if (extra.empty()) extra = app.remaining(true);
    if (extra.empty() && msg.find(": ") != std::string::npos) {  // CLI11 lists them after the colon
        std::string rest = msg.substr(msg.find(": ") + 2);
        for (size_t pos = 0; pos < rest.size();) {
            const size_t next = std::min(rest.find(' ', pos), rest.size());
            if (next > pos) extra.push_back(rest.substr(pos, next - pos));
            pos = next + 1;
        }
    }
    for (const std::string& x : extra) {
        const std::string where = sub == &app ? std::string("npusim") : "npusim " + sub->get_name();
        if (x.size() > 1 && x[0] == '-') {
            const std::string opt = x.substr(0, x.find('='));
            const std::string near = did_you_mean(opt, names);
            return fmt::format("unknown option '{}', {} ({}see {} --help)", opt, where,
                               near.empty() ? "" : "did you mean " + near + "? ", where);
        }
        return fmt::format("unexpected argument '{}', {} (see {} --help)", x, where, where);
    }
    return msg;
}

}  // namespace sim::cli
