// SPDX-License-Identifier: MIT
// Strict loader for the operator-spec DB files (SG-8.3 item 4: unknown keys are errors, every
// message names the file and the JSON path).
#include "checker/spec_db.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "npusim/datadir.h"

namespace drv::check {

using nlohmann::json;

namespace {

constexpr int kSchemaVersion = 1;

/// A JSON object being read: remembers which keys were consumed so leftovers are reported.
class Obj {
   public:
    Obj(const json& j, std::string file, std::string path) : j_(j), file_(std::move(file)), path_(std::move(path)) {
        if (!j_.is_object()) fail(path_, "expected an object");
    }
    [[noreturn]] void fail(const std::string& path, const std::string& what) const {
        throw SpecError(file_ + ": " + path + ": " + what);
    }
    std::string at(const std::string& key) const { return path_ + "." + key; }
    const json* get(const std::string& key) {
        seen_.insert(key);
        auto it = j_.find(key);
        return it == j_.end() ? nullptr : &*it;
    }
    const json& need(const std::string& key) {
        const json* v = get(key);
        if (!v) fail(path_, "missing required key '" + key + "'");
        return *v;
    }
    std::string str(const std::string& key, const std::string& dflt = {}, bool required = false) {
        const json* v = required ? &need(key) : get(key);
        if (!v) return dflt;
        if (!v->is_string()) fail(at(key), "expected a string");
        return v->get<std::string>();
    }
    bool boolean(const std::string& key, bool dflt) {
        const json* v = get(key);
        if (!v) return dflt;
        if (!v->is_boolean()) fail(at(key), "expected true or false");
        return v->get<bool>();
    }
    double number(const std::string& key, double dflt, bool* present = nullptr) {
        const json* v = get(key);
        if (present) *present = v != nullptr;
        if (!v) return dflt;
        if (!v->is_number()) fail(at(key), "expected a number");
        return v->get<double>();
    }
    std::vector<std::string> strs(const std::string& key) {
        std::vector<std::string> out;
        const json* v = get(key);
        if (!v) return out;
        if (!v->is_array()) fail(at(key), "expected an array of strings");
        for (size_t i = 0; i < v->size(); ++i) {
            if (!(*v)[i].is_string()) fail(at(key) + "[" + std::to_string(i) + "]", "expected a string");
            out.push_back((*v)[i].get<std::string>());
        }
        return out;
    }
    std::vector<int64_t> ints(const std::string& key) {
        std::vector<int64_t> out;
        const json* v = get(key);
        if (!v) return out;
        if (!v->is_array()) fail(at(key), "expected an array of integers");
        for (size_t i = 0; i < v->size(); ++i) {
            if (!(*v)[i].is_number_integer()) fail(at(key) + "[" + std::to_string(i) + "]", "expected an integer");
            out.push_back((*v)[i].get<int64_t>());
        }
        return out;
    }
    Expr expr(const std::string& key) {
        std::string t = str(key);
        if (t.empty()) return {};
        try {
            return Expr::parse(t);
        } catch (const ExprError& e) {
            fail(at(key), e.what());
        }
    }
    /// Throws on keys that were never asked for.
    void done() const {
        for (auto it = j_.begin(); it != j_.end(); ++it)
            if (!seen_.count(it.key())) fail(at(it.key()), "unknown key");
    }
    const std::string& file() const { return file_; }
    const std::string& path() const { return path_; }

   private:
    const json& j_;
    std::string file_, path_;
    std::set<std::string> seen_;
};

const std::map<std::string, RuleKind>& kind_table() {
    static const std::map<std::string, RuleKind> t = {
        {"interval", RuleKind::Interval}, {"set", RuleKind::Set},           {"rank", RuleKind::Rank},
        {"dtype", RuleKind::Dtype},       {"quant", RuleKind::Quant},       {"broadcast", RuleKind::Broadcast},
        {"alignment", RuleKind::Alignment}, {"constant", RuleKind::Constant}, {"formula", RuleKind::Formula},
        {"fused", RuleKind::Fused},       {"opset", RuleKind::Opset},       {"target", RuleKind::Target},
        {"status", RuleKind::Status},     {"note", RuleKind::Note}};
    return t;
}

Source read_source(Obj& o, const std::string& key, const Source& dflt) {
    const json* v = o.get(key);
    if (!v) return dflt;
    Obj s(*v, o.file(), o.at(key));
    Source src;
    src.seed = s.str("seed", dflt.seed);
    src.section = s.str("section", {}, true);
    s.done();
    if (src.seed.empty()) s.fail(o.at(key), "no seed file given");
    return src;
}

void require(Obj& o, bool ok, const std::string& key, const std::string& what) {
    if (!ok) o.fail(o.at(key), what);
}

/// The tensor selectors rule_eval.cpp's select_tensors reads: "in*", "out*", "in0", "out1", "in1+"
/// (from input 1 on); N has 1..3 digits, so the evaluator's conversion cannot fail or overflow.
bool valid_selector(const std::string& sel) {
    const size_t p = sel.compare(0, 3, "out") == 0 ? 3 : sel.compare(0, 2, "in") == 0 ? 2 : 0;
    if (p == 0) return false;
    std::string rest = sel.substr(p);
    if (rest == "*") return true;
    if (!rest.empty() && rest.back() == '+') rest.pop_back();
    return !rest.empty() && rest.size() <= 3 &&
           std::all_of(rest.begin(), rest.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
}

Rule read_rule(const json& j, const std::string& file, const std::string& path, const Source& dflt_src) {
    Obj o(j, file, path);
    Rule r;
    std::string kind = o.str("kind", {}, true);
    auto it = kind_table().find(kind);
    if (it == kind_table().end()) o.fail(o.at("kind"), "unknown rule kind '" + kind + "'");
    r.kind = it->second;
    r.param = o.str("param");
    r.value = o.expr("value");
    r.when = o.expr("when");
    r.expr = o.expr("expr");
    r.tensor = o.str("tensor");
    if (!r.tensor.empty() && !valid_selector(r.tensor))
        o.fail(o.at("tensor"), "tensor selector '" + r.tensor + "' is not in*, out*, inN, outN, inN+ or outN+ (N < 1000)");
    r.min = o.number("min", 0, &r.has_min);
    r.max = o.number("max", 0, &r.has_max);
    r.min_open = o.boolean("min_open", false);
    r.max_open = o.boolean("max_open", false);
    if (const json* v = o.get("values")) {
        if (!v->is_array()) o.fail(o.at("values"), "expected an array");
        for (size_t i = 0; i < v->size(); ++i) {
            const json& e = (*v)[i];
            if (e.is_number()) r.values.push_back(EVal::of(e.get<double>()));
            else if (e.is_string()) r.values.push_back(EVal::of(e.get<std::string>()));
            else o.fail(o.at("values") + "[" + std::to_string(i) + "]", "expected a number or string");
        }
    }
    r.ranks = o.ints("ranks");
    r.dtypes = o.strs("dtypes");
    r.granularity = o.strs("granularity");
    r.bits = o.ints("bits");
    r.patterns = o.strs("patterns");
    r.dims = o.str("dims");
    r.multiple = static_cast<int64_t>(o.number("multiple", 0));
    r.targets = o.strs("targets");
    r.status = o.str("status");
    r.message = o.str("message", {}, true);
    r.source = read_source(o, "source", dflt_src);
    o.done();
    switch (r.kind) {
        case RuleKind::Interval:
            require(o, !r.value.empty(), "value", "interval rule needs 'value'");
            require(o, r.has_min || r.has_max, "min", "interval rule needs 'min' or 'max'");
            break;
        case RuleKind::Set:
        case RuleKind::Fused:
            require(o, !r.values.empty(), "values", "set rule needs 'values'");
            require(o, r.kind == RuleKind::Fused || !r.value.empty(), "value", "set rule needs 'value'");
            break;
        case RuleKind::Rank: require(o, !r.ranks.empty() && !r.tensor.empty(), "ranks", "needs 'tensor' and 'ranks'"); break;
        case RuleKind::Dtype: require(o, !r.dtypes.empty() && !r.tensor.empty(), "dtypes", "needs 'tensor' and 'dtypes'"); break;
        case RuleKind::Quant:
            require(o, !r.tensor.empty() && (!r.granularity.empty() || !r.bits.empty()), "granularity",
                    "needs 'tensor' and 'granularity' or 'bits'");
            break;
        case RuleKind::Broadcast: require(o, !r.patterns.empty(), "patterns", "broadcast rule needs 'patterns'"); break;
        case RuleKind::Alignment:
            require(o, !r.value.empty() && r.multiple > 0, "multiple", "needs 'value' and 'multiple' > 0");
            break;
        case RuleKind::Constant: require(o, !r.tensor.empty(), "tensor", "constant rule needs 'tensor'"); break;
        case RuleKind::Formula: require(o, !r.expr.empty(), "expr", "formula rule needs 'expr'"); break;
        case RuleKind::Opset: require(o, r.has_min || r.has_max, "min", "opset rule needs 'min' or 'max'"); break;
        case RuleKind::Target: require(o, !r.targets.empty(), "targets", "target rule needs 'targets'"); break;
        case RuleKind::Status: require(o, !r.status.empty(), "status", "status rule needs 'status'"); break;
        case RuleKind::Note: break;
    }
    return r;
}

std::map<std::string, Expr> read_bind(Obj& o, const std::string& key) {
    std::map<std::string, Expr> out;
    const json* v = o.get(key);
    if (!v) return out;
    if (!v->is_object()) o.fail(o.at(key), "expected an object of name -> expression");
    for (auto it = v->begin(); it != v->end(); ++it) {
        if (!it->is_string()) o.fail(o.at(key) + "." + it.key(), "expected an expression string");
        try {
            out[it.key()] = Expr::parse(it->get<std::string>());
        } catch (const ExprError& e) {
            o.fail(o.at(key) + "." + it.key(), e.what());
        }
    }
    return out;
}

std::vector<Rule> read_rules(Obj& o, const std::string& key, const Source& src) {
    std::vector<Rule> out;
    const json* v = o.get(key);
    if (!v) return out;
    if (!v->is_array()) o.fail(o.at(key), "expected an array of rules");
    for (size_t i = 0; i < v->size(); ++i)
        out.push_back(read_rule((*v)[i], o.file(), o.at(key) + "[" + std::to_string(i) + "]", src));
    return out;
}

OpSpec read_op(const json& j, const std::string& file, const std::string& path, const std::string& seed) {
    Obj o(j, file, path);
    OpSpec op;
    op.name = o.str("name", {}, true);
    op.heading = o.str("heading", {}, true);
    op.seed = o.str("seed", seed);
    op.framework = o.str("framework");
    op.inherits = o.str("inherits");
    if (const json* m = o.get("match")) {
        if (!m->is_array()) o.fail(o.at("match"), "expected an array");
        for (size_t i = 0; i < m->size(); ++i) {
            Obj mo((*m)[i], file, o.at("match") + "[" + std::to_string(i) + "]");
            Match mm;
            mm.op_type = mo.str("op_type", {}, true);
            mm.domain = mo.str("domain");
            mm.when = mo.expr("when");
            mm.then = mo.strs("then");
            mo.done();
            op.match.push_back(std::move(mm));
        }
    }
    op.bind = read_bind(o, "bind");
    Source src{op.seed, op.heading};
    op.rules = read_rules(o, "rules", src);
    op.training = read_rules(o, "training", src);
    o.done();
    return op;
}

void read_platform_body(Obj& o, PlatformSpec& p) {
    p.id = o.str("platform", {}, true);
    p.aliases = o.strs("aliases");
    p.toolchain = o.str("toolchain", {}, true);
    p.seed = o.str("seed", {}, true);
    p.section = o.str("section");
    p.engine = o.str("engine", "NPU");
    p.cpu_fallback = o.boolean("cpu_fallback", false);
    p.cpu_fallback_note = o.str("cpu_fallback_note");
    p.static_shapes = o.boolean("static_shapes", true);
    p.tables_in_seed = o.boolean("tables_in_seed", true);
    p.unlisted = o.str("unlisted", p.cpu_fallback ? "cpu_fallback" : "unsupported");
    if (p.unlisted != "cpu_fallback" && p.unlisted != "unsupported" && p.unlisted != "not_in_seed")
        o.fail(o.at("unlisted"), "expected cpu_fallback, unsupported or not_in_seed");
    p.note = o.str("note");
    p.targets = o.strs("targets");
    p.quant_bits_default = static_cast<int64_t>(o.number("quant_bits_default", 8));
    p.bind = read_bind(o, "bind");
    if (const json* v = o.get("dtype_conversions")) {
        if (!v->is_object()) o.fail(o.at("dtype_conversions"), "expected an object");
        Obj c(*v, o.file(), o.at("dtype_conversions"));
        for (auto it = v->begin(); it != v->end(); ++it) p.dtype_conversions[it.key()] = c.strs(it.key());
        c.done();
    }
    if (const json* v = o.get("ops")) {
        if (!v->is_array()) o.fail(o.at("ops"), "expected an array");
        for (size_t i = 0; i < v->size(); ++i)
            p.ops.push_back(read_op((*v)[i], o.file(), o.at("ops") + "[" + std::to_string(i) + "]", p.seed));
    }
    if (const json* v = o.get("uncovered")) {
        if (!v->is_array()) o.fail(o.at("uncovered"), "expected an array");
        for (size_t i = 0; i < v->size(); ++i) {
            Obj u((*v)[i], o.file(), o.at("uncovered") + "[" + std::to_string(i) + "]");
            Uncovered uc;
            uc.heading = u.str("heading", {}, true);
            uc.reason = u.str("reason", {}, true);
            uc.source = read_source(u, "source", Source{p.seed, uc.heading});
            u.done();
            p.uncovered.push_back(std::move(uc));
        }
    }
}

void validate_refs(const Obj& o, const PlatformSpec& p) {
    std::set<std::string> names;
    for (size_t i = 0; i < p.ops.size(); ++i) {
        const OpSpec& op = p.ops[i];
        std::string at = o.at("ops") + "[" + std::to_string(i) + "]";
        if (!names.insert(op.name + "|" + op.framework).second) o.fail(at, "duplicate op '" + op.name + "'");
    }
    for (size_t i = 0; i < p.ops.size(); ++i) {
        const OpSpec& op = p.ops[i];
        if (!op.inherits.empty() && !p.find_op(op.inherits))
            o.fail(o.at("ops") + "[" + std::to_string(i) + "].inherits", "unknown base op '" + op.inherits + "'");
    }
}

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

}  // namespace

const char* rule_kind_name(RuleKind k) {
    for (const auto& [name, kind] : kind_table())
        if (kind == k) return name.c_str();
    return "?";
}

std::string document_title(const std::string& seed) {
    // The vendor documents the spec DB encodes, by the number of their file ("001_....txt").
    static const std::map<std::string, std::string> titles = {
        {"000", "MindSpore Lite Micro v106 operator spec"}, {"001", "RKNN Compiler V2.3.2 operator spec"},
        {"002", "onnxruntime quantization operator schemas"}, {"003", "uranus-tnpuv2 operator list"},
        {"004", "RKNN2 V2.5.0 RV1103B/RV1106B reference"}};
    const auto it = titles.find(seed.substr(0, 3));
    return it == titles.end() ? seed : it->second;
}

std::string Source::text() const {
    const std::string s = document_title(seed);
    return section.empty() ? s : s + " §" + section;
}

const OpSpec* PlatformSpec::find_op(const std::string& name) const {
    for (const auto& op : ops)
        if (op.name == name) return &op;
    return nullptr;
}

std::vector<const Rule*> PlatformSpec::effective_rules(const OpSpec& op) const {
    std::vector<const Rule*> out;
    for (const auto& [r, owner] : effective_rules_with_owner(op)) out.push_back(r);
    return out;
}

std::vector<std::pair<const Rule*, const OpSpec*>> PlatformSpec::effective_rules_with_owner(const OpSpec& op) const {
    std::vector<std::pair<const Rule*, const OpSpec*>> out;
    const OpSpec* cur = &op;
    std::set<const OpSpec*> seen;
    while (cur && seen.insert(cur).second) {
        for (const auto& r : cur->rules) out.emplace_back(&r, cur);
        if (cur->inherits.empty()) break;
        const OpSpec* base = nullptr;
        for (const auto& o : ops)
            if (o.name == cur->inherits && o.framework == cur->framework) base = &o;
        cur = base ? base : find_op(cur->inherits);
    }
    return out;
}

PlatformSpec SpecDb::parse(const std::string& text, const std::string& file) {
    json j;
    try {
        j = json::parse(text);
    } catch (const json::exception& e) {
        throw SpecError(file + ": invalid JSON: " + e.what());
    }
    Obj o(j, file, "$");
    double ver = o.number("schema_version", -1);
    if (ver != kSchemaVersion)
        o.fail("$.schema_version", "expected " + std::to_string(kSchemaVersion) + ", got " + EVal::of(ver).text());
    PlatformSpec p;
    p.file = file;
    read_platform_body(o, p);
    o.done();
    validate_refs(o, p);
    return p;
}

PlatformSpec SpecDb::load_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw SpecError(path + ": cannot open");
    std::ostringstream ss;
    ss << in.rdbuf();
    return parse(ss.str(), path);
}

SpecDb SpecDb::load_dir(const std::string& dir) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) throw SpecError(dir + ": spec directory not found");
    std::vector<std::string> files;
    for (const auto& e : fs::directory_iterator(dir, ec))
        if (e.path().extension() == ".json") files.push_back(e.path().string());
    std::sort(files.begin(), files.end());
    if (files.empty()) throw SpecError(dir + ": no *.json spec files");
    SpecDb db;
    for (const auto& f : files) db.add(load_file(f));
    return db;
}

void SpecDb::add(PlatformSpec p) {
    for (const auto& q : platforms_)
        if (lower(q.id) == lower(p.id))
            throw SpecError(p.file + ": platform '" + p.id + "' already defined in " + q.file);
    platforms_.push_back(std::move(p));
    std::sort(platforms_.begin(), platforms_.end(),
              [](const PlatformSpec& a, const PlatformSpec& b) { return a.id < b.id; });
}

const PlatformSpec* SpecDb::find(const std::string& name) const {
    std::string n = lower(name);
    for (const auto& p : platforms_) {
        if (lower(p.id) == n) return &p;
        for (const auto& a : p.aliases)
            if (lower(a) == n) return &p;
    }
    return nullptr;
}

std::vector<std::string> SpecDb::ids() const {
    std::vector<std::string> out;
    for (const auto& p : platforms_) out.push_back(p.id);
    return out;
}

std::string default_specs_dir() {
    return npusim::data_path("specs", "NPUSIM_SPECS_DIR");
}

}  // namespace drv::check
