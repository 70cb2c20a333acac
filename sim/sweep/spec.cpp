// SPDX-License-Identifier: MIT
// Sweep spec parsing (JSON, YAML via yaml-cpp when built with it), parameter grids, expansion.
#include "spec.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "compiler/rknpu/model.h"
#include "hw/profile.h"
#include "sha256.h"
#include "yaml_json.h"

namespace sweep {

using ojson = nlohmann::ordered_json;
namespace fs = std::filesystem;

namespace {

constexpr size_t kMaxAxisValues = 1000000;
constexpr size_t kMaxPoints = 10000000;

[[noreturn]] void bad(const fs::path& file, const std::string& where, const std::string& what) {
    throw SweepError(fmt::format("{}, {} in '{}'", what, where, file.string()));
}

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

/// A string or a list of strings (a single string stands for a one-element list).
std::vector<std::string> strings(const ojson& v, const fs::path& file, const std::string& where) {
    std::vector<std::string> out;
    if (v.is_string()) return {v.get<std::string>()};
    if (!v.is_array()) bad(file, where, "expected a string or a list of strings");
    for (const auto& x : v) {
        if (!x.is_string()) bad(file, where, fmt::format("expected strings, got {}", x.dump()));
        out.push_back(x.get<std::string>());
    }
    if (out.empty()) bad(file, where, "empty list");
    return out;
}

double number(const ojson& v, const fs::path& file, const std::string& where) {
    if (!v.is_number()) bad(file, where, fmt::format("expected a number, got {}", v.dump()));
    return v.get<double>();
}

std::vector<double> range_values(double from, double to, double step, const std::string& where,
                                 const std::function<void(const std::string&)>& fail) {
    if (!std::isfinite(from) || !std::isfinite(to) || !std::isfinite(step)) fail("range bounds must be finite");
    if (step == 0 || (to - from) * step < 0)
        fail(fmt::format("step {} does not lead from {} to {}", number_text(step), number_text(from), number_text(to)));
    const double n = std::floor((to - from) / step * (1 + 1e-12) + 1e-9) + 1;
    if (n > static_cast<double>(kMaxAxisValues)) fail(fmt::format("{} values (limit {})", n, kMaxAxisValues));
    std::vector<double> out;
    for (size_t i = 0; i < static_cast<size_t>(n); ++i)
        out.push_back(std::stod(fmt::format("{:.12g}", from + static_cast<double>(i) * step)));
    (void)where;
    return out;
}

std::vector<double> geometric_values(double from, double to, double factor,
                                     const std::function<void(const std::string&)>& fail) {
    if (!(from > 0) || !(to > 0) || !(factor > 0) || factor == 1 || (to - from) * (factor - 1) < 0)
        fail(fmt::format("factor {} does not lead from {} to {} (positive bounds, factor != 1)", number_text(factor),
                         number_text(from), number_text(to)));
    std::vector<double> out;
    for (double v = from;; v *= factor) {
        const double r = std::stod(fmt::format("{:.12g}", v));
        if (factor > 1 ? r > to * (1 + 1e-12) : r < to * (1 - 1e-12)) break;
        out.push_back(r);
        if (out.size() > kMaxAxisValues) fail(fmt::format("more than {} values", kMaxAxisValues));
    }
    return out;
}

std::vector<std::string> texts(const std::vector<double>& v) {
    std::vector<std::string> out;
    for (double d : v) out.push_back(number_text(d));
    return out;
}

/// One axis of "params": a list of values, a range object or a grid string.
std::vector<std::string> axis_values(const std::string& key, const ojson& v, const fs::path& file) {
    const std::string where = "params." + key;
    auto fail = [&](const std::string& what) { bad(file, where, what); };
    if (v.is_string()) {
        try {
            return parse_grid_text(key, v.get<std::string>());
        } catch (const SweepError& e) {
            bad(file, where, e.what());
        }
    }
    if (v.is_number()) return {v.is_number_integer() ? v.dump() : number_text(v.get<double>())};
    if (v.is_array()) {
        std::vector<std::string> out;
        for (const auto& x : v) {
            if (x.is_string())
                out.push_back(x.get<std::string>());
            else if (x.is_number_integer())
                out.push_back(x.dump());
            else if (x.is_number())
                out.push_back(number_text(x.get<double>()));
            else
                fail(fmt::format("values are numbers or strings, got {}", x.dump()));
        }
        if (out.empty()) fail("empty list");
        return out;
    }
    if (v.is_object()) {
        static const std::set<std::string> known{"from", "to", "step", "count", "factor"};
        for (const auto& [k, x] : v.items())
            if (!known.count(k)) fail(fmt::format("unknown range key '{}' (known: from, to, step, count, factor)", k));
        if (!v.contains("from") || !v.contains("to")) fail("a range needs 'from' and 'to'");
        const double from = number(v["from"], file, where + ".from"), to = number(v["to"], file, where + ".to");
        const int kinds = v.contains("step") + v.contains("count") + v.contains("factor");
        if (kinds != 1) fail("a range takes exactly one of 'step', 'count', 'factor'");
        if (v.contains("step"))
            return texts(range_values(from, to, number(v["step"], file, where + ".step"), where, fail));
        if (v.contains("factor"))
            return texts(geometric_values(from, to, number(v["factor"], file, where + ".factor"), fail));
        const ojson& c = v["count"];
        if (!c.is_number_integer() || c.get<int64_t>() < 1 || c.get<uint64_t>() > kMaxAxisValues)
            fail(fmt::format("count must be an integer 1..{}", kMaxAxisValues));
        const auto n = c.get<size_t>();
        if (n == 1) return texts({from});
        std::vector<double> out;
        for (size_t i = 0; i < n; ++i)
            out.push_back(std::stod(
                fmt::format("{:.12g}", from + (to - from) * static_cast<double>(i) / static_cast<double>(n - 1))));
        return texts(out);
    }
    bad(file, where, fmt::format("expected a list, a range object or a grid string, got {}", v.dump()));
}

RunOptions parse_options(const ojson& v, const fs::path& file) {
    RunOptions o;
    if (!v.is_object()) bad(file, "options", "expected an object");
    for (const auto& [k, x] : v.items()) {
        const std::string where = "options." + k;
        auto flag = [&]() {
            if (!x.is_boolean()) bad(file, where, "expected true or false");
            return x.get<bool>();
        };
        if (k == "seed") {
            if (!x.is_number_unsigned()) bad(file, where, "expected a non-negative integer");
            o.seed = x.get<uint64_t>();
        } else if (k == "cpu_nodes") {
            o.cpu_nodes = strings(x, file, where);
        } else if (k == "input_shapes") {
            o.input_shapes = strings(x, file, where);
        } else if (k == "no_compare") {
            o.no_compare = flag();
        } else if (k == "expect_exact") {
            o.expect_exact = flag();
        } else if (k == "verify_tiling") {
            o.verify_tiling = flag();
        } else {
            bad(file, where,
                "unknown option (known: seed, cpu_nodes, input_shapes, no_compare, expect_exact, verify_tiling)");
        }
    }
    return o;
}

}  // namespace

std::string number_text(double v) {
    if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 1e18)
        return fmt::format("{}", static_cast<int64_t>(v));
    return fmt::format("{}", v);
}

ojson RunOptions::to_json() const {
    ojson j;
    j["seed"] = seed;
    j["cpu_nodes"] = cpu_nodes;
    j["input_shapes"] = input_shapes;
    j["no_compare"] = no_compare;
    j["expect_exact"] = expect_exact;
    j["verify_tiling"] = verify_tiling;
    return j;
}

std::vector<std::string> parse_grid_text(const std::string& key, const std::string& grid) {
    auto fail = [&](const std::string& what) {
        throw SweepError(fmt::format("grid '{}' for {}: {}", grid, key, what));
    };
    auto num = [&](const std::string& t) {
        char* end = nullptr;
        const double d = std::strtod(t.c_str(), &end);
        if (t.empty() || *end != '\0' || !std::isfinite(d)) fail(fmt::format("'{}' is not a number", t));
        return d;
    };
    if (grid.empty()) fail("empty");
    std::vector<std::string> parts;
    if (grid.find(':') != std::string::npos) {
        std::stringstream ss(grid);
        for (std::string p; std::getline(ss, p, ':');) parts.push_back(p);
        if (parts.size() != 3) fail("a range is from:to:step or from:to:xFACTOR");
        const double from = num(parts[0]), to = num(parts[1]);
        if (!parts[2].empty() && (parts[2][0] == 'x' || parts[2][0] == '*'))
            return texts(geometric_values(from, to, num(parts[2].substr(1)), fail));
        return texts(range_values(from, to, num(parts[2]), key, fail));
    }
    std::stringstream ss(grid);
    std::vector<std::string> out;
    for (std::string p; std::getline(ss, p, ',');) {
        if (p.empty()) fail("empty value in the list");
        out.push_back(p);
    }
    return out;
}

void apply_param_grids(SweepSpec& s, const std::vector<std::string>& assignments) {
    for (const std::string& a : assignments) {
        const size_t eq = a.find('=');
        if (eq == std::string::npos || eq == 0)
            throw SweepError(fmt::format("--param '{}': expected section.key=GRID (v1,v2,... or from:to:step)", a));
        const std::string key = a.substr(0, eq);
        std::vector<std::string> values = parse_grid_text(key, a.substr(eq + 1));
        auto it = std::find_if(s.params.begin(), s.params.end(), [&](const ParamAxis& x) { return x.key == key; });
        if (it != s.params.end())
            it->values = std::move(values);
        else
            s.params.push_back({key, std::move(values)});
    }
}

SweepSpec parse_spec(const ojson& doc, const fs::path& file) {
    if (!doc.is_object()) bad(file, "top level", "expected an object (models, platforms, ...)");
    SweepSpec s;
    s.file = fs::absolute(file).lexically_normal();
    s.name = file.stem().string();
    for (const auto& [k, v] : doc.items()) {
        if (k == "name") {
            if (!v.is_string() || v.get<std::string>().empty()) bad(file, k, "expected a non-empty string");
            s.name = v.get<std::string>();
        } else if (k == "models") {
            s.models = strings(v, file, k);
        } else if (k == "platforms") {
            if (v.is_string() && v.get<std::string>() == "all")
                s.platforms = hw::list_profiles();
            else
                s.platforms = strings(v, file, k);
        } else if (k == "core_masks") {
            s.core_masks = strings(v, file, k);
        } else if (k == "modes") {
            s.modes = strings(v, file, k);
            for (const std::string& m : s.modes)
                if (m != "full" && m != "timing") bad(file, k, fmt::format("unknown mode '{}' (full, timing)", m));
        } else if (k == "params") {
            if (!v.is_object()) bad(file, k, "expected an object: \"section.key\": values");
            for (const auto& [pk, pv] : v.items()) s.params.push_back({pk, axis_values(pk, pv, file)});
        } else if (k == "options") {
            s.options = parse_options(v, file);
        } else if (k == "results") {
            if (!v.is_string() || v.get<std::string>().empty()) bad(file, k, "expected a folder name");
            s.results = v.get<std::string>();
        } else {
            bad(file, k, "unknown key (known: name, models, platforms, core_masks, modes, params, options, results)");
        }
    }
    if (s.models.empty()) bad(file, "models", "missing: list the model files (.onnx, .tflite)");
    if (s.platforms.empty()) bad(file, "platforms", "missing: list profile names (see `npusim platforms`) or \"all\"");
    for (std::string& p : s.platforms)
        if (p.find('/') == std::string::npos && fs::path(p).extension() != ".json") p = lower(p);
    return s;
}

SweepSpec load_spec(const std::string& path) {
    // A spec is a small regular file: /dev/zero or a FIFO would be read until memory runs out.
    std::error_code ec;
    if (fs::exists(path, ec) && !fs::is_regular_file(path, ec))
        throw SweepError(fmt::format("sweep spec '{}' is not a regular file", path));
    if (fs::exists(path, ec) && fs::file_size(path, ec) > (64u << 20))
        throw SweepError(fmt::format("sweep spec '{}' is larger than 64 MiB", path));
    std::ifstream f(path, std::ios::binary);
    if (!f) throw SweepError(fmt::format("cannot read sweep spec '{}'", path));
    std::stringstream ss;
    ss << f.rdbuf();
    const std::string ext = lower(fs::path(path).extension().string());
    ojson doc;
    if (ext == ".yaml" || ext == ".yml") {
        doc = yaml_to_json(ss.str(), path);
    } else if (ext == ".json") {
        try {
            doc = ojson::parse(ss.str());
        } catch (const ojson::parse_error& e) {
            throw SweepError(fmt::format("sweep spec '{}' is not valid JSON ({})", path, e.what()));
        }
    } else {
        throw SweepError(
            fmt::format("sweep spec '{}': unknown format '{}' (expected .json, .yaml or .yml)", path, ext));
    }
    return parse_spec(doc, path);
}

std::vector<std::string> Point::run_args(const std::string& report_path) const {
    std::vector<std::string> a{"run", "--mode", mode, "--core-mask", core_mask};
    if (profile_file.empty()) {
        a.insert(a.end(), {"--platform", platform});
    } else {
        a.insert(a.end(), {"--profile", profile_file});
    }
    for (const auto& [k, v] : params) a.insert(a.end(), {"--param", k + "=" + v});
    a.insert(a.end(), {"--seed", std::to_string(options.seed)});
    for (const std::string& n : options.cpu_nodes) a.insert(a.end(), {"--cpu-node", n});
    for (const std::string& n : options.input_shapes) a.insert(a.end(), {"--input-shape", n});
    if (options.no_compare) a.push_back("--no-compare");
    if (options.expect_exact) a.push_back("--expect-exact");
    if (options.verify_tiling) a.push_back("--verify-tiling");
    a.insert(a.end(), {"--quiet", "--report", report_path, model_path});
    return a;
}

ojson Point::inputs_json() const {
    ojson j;
    j["model"] = model;
    j["platform"] = platform;
    j["core_mask"] = core_mask;
    j["mode"] = mode;
    ojson p = ojson::object();
    for (const auto& [k, v] : params) p[k] = v;
    j["params"] = p;
    j["options"] = options.to_json();
    return j;
}

Expansion expand(const SweepSpec& s, const std::string& npusim_version) {
    Expansion ex;
    const fs::path base = s.file.parent_path();
    struct Model {
        std::string written, path, name, sha;
    };
    std::vector<Model> models;
    for (const std::string& m : s.models) {
        fs::path p = fs::path(m).is_absolute() ? fs::path(m) : base / m;
        p = p.lexically_normal();
        std::error_code ec;
        if (!fs::is_regular_file(p, ec))
            throw SweepError(fmt::format(
                "model '{}' not found, models in '{}' (paths are relative to the spec's folder)", m, s.file.string()));
        const std::string ext = p.extension().string();
        if (ext != ".onnx" && ext != ".tflite")
            throw SweepError(fmt::format("model '{}': unknown format '{}', models in '{}' (expected .onnx or .tflite)",
                                         m, ext, s.file.string()));
        try {
            models.push_back({m, p.string(), p.filename().string(), sha256_file(p.string())});
        } catch (const std::runtime_error& e) {
            throw SweepError(e.what());
        }
    }
    struct Platform {
        hw::SocProfile soc;
        std::string file, sha;  ///< file: set when named by file
    };
    std::vector<Platform> plats;
    for (const std::string& name : s.platforms) {
        Platform p;
        const bool is_file = name.find('/') != std::string::npos || fs::path(name).extension() == ".json";
        const std::string arg = is_file && fs::path(name).is_relative() ? (base / name).string() : name;
        try {
            p.soc = hw::load_profile_arg(arg);
            p.sha = sha256_file(p.soc.file);
        } catch (const std::exception& e) {
            throw SweepError(fmt::format("platform '{}', platforms in '{}': {}", name, s.file.string(), e.what()));
        }
        if (is_file) p.file = fs::absolute(arg).lexically_normal().string();
        plats.push_back(std::move(p));
    }

    // The parameter grid: every combination, the last axis varying fastest.
    size_t combos = 1;
    for (const ParamAxis& a : s.params) {
        if (a.values.empty()) throw SweepError(fmt::format("--param {}: no values", a.key));
        combos *= a.values.size();
        if (combos > kMaxPoints)
            throw SweepError(fmt::format("parameter grid too large (limit {} points)", kMaxPoints));
    }
    auto combo = [&](size_t c) {
        std::vector<std::pair<std::string, std::string>> out(s.params.size());
        for (size_t k = s.params.size(); k-- > 0;) {
            const ParamAxis& a = s.params[k];
            out[k] = {a.key, a.values[c % a.values.size()]};
            c /= a.values.size();
        }
        return out;
    };

    std::set<std::string> used_masks, ids;
    std::map<std::string, std::vector<std::string>> left_out;  // core mask -> platforms without those cores
    for (const Model& m : models) {
        for (const Platform& p : plats) {
            std::vector<std::string> masks;
            for (const std::string& mask : s.core_masks) {
                try {
                    drv::rknpu::parse_core_mask(mask, p.soc);
                    masks.push_back(mask);
                    used_masks.insert(mask);
                } catch (const std::invalid_argument&) {
                    if (&m == &models.front()) left_out[mask].push_back(p.soc.name);
                }
            }
            if (&m == &models.front())  // parameter values are checked once per platform
                for (size_t c = 0; c < combos; ++c) {
                    std::vector<std::string> assigns;
                    for (const auto& [k, v] : combo(c)) assigns.push_back(k + "=" + v);
                    hw::SocProfile q = p.soc;
                    try {
                        hw::apply_param_overrides(q, assigns);
                    } catch (const hw::ProfileError& e) {
                        throw SweepError(
                            fmt::format("{} on {}, params in '{}'", e.what(), p.soc.name, s.file.string()));
                    }
                }
            for (const std::string& mask : masks)
                for (const std::string& mode : s.modes)
                    for (size_t c = 0; c < combos; ++c) {
                        const auto params = combo(c);
                        Point pt;
                        pt.index = ex.points.size();
                        pt.model = m.written;
                        pt.model_path = m.path;
                        pt.platform = p.soc.name;
                        pt.profile_file = p.file;
                        pt.core_mask = mask;
                        pt.mode = mode;
                        pt.params = params;
                        pt.options = s.options;
                        ojson key;
                        key["npusim"] = npusim_version;
                        key["model"] = {{"name", m.name}, {"sha256", m.sha}};
                        key["profile"] = {{"name", p.soc.name}, {"sha256", p.sha}};
                        key["core_mask"] = mask;
                        key["mode"] = mode;
                        ojson pj = ojson::array();
                        for (const auto& [k, v] : params) pj.push_back({k, v});
                        key["params"] = pj;
                        key["options"] = s.options.to_json();
                        pt.key = key;
                        pt.id = sha256_hex(key.dump()).substr(0, 16);
                        if (!ids.insert(pt.id).second)
                            throw SweepError(
                                fmt::format("point {} ({} on {}, core mask {}) appears twice, in '{}' "
                                            "(a model, platform or value listed twice?)",
                                            pt.index, m.written, p.soc.name, mask, s.file.string()));
                        ex.points.push_back(std::move(pt));
                        if (ex.points.size() > kMaxPoints)
                            throw SweepError(fmt::format("sweep too large (limit {} points)", kMaxPoints));
                    }
        }
    }
    for (const std::string& mask : s.core_masks)
        if (left_out.count(mask) && used_masks.count(mask)) {
            std::string names;
            for (const std::string& n : left_out[mask]) names += (names.empty() ? "" : ", ") + n;
            ex.notes.push_back(fmt::format("core mask {} left out on {} (too few cores)", mask, names));
        }
    for (const std::string& mask : s.core_masks)
        if (!used_masks.count(mask))
            throw SweepError(fmt::format("core mask '{}' is valid on none of the platforms, core_masks in '{}'", mask,
                                         s.file.string()));
    return ex;
}

}  // namespace sweep
