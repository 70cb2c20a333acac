// SPDX-License-Identifier: MIT
// One function per rule kind; all data-driven (see rule_eval.h).
#include "rule_eval.h"

#include <algorithm>

namespace drv::check {

namespace {

std::string join(const std::vector<std::string>& v, const char* sep = ", ") {
    std::string s;
    for (size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + v[i];
    return s;
}

std::string set_text(const std::vector<EVal>& vals) {
    std::vector<std::string> t;
    for (const auto& v : vals) t.push_back(v.is_num() ? v.text() : v.str);
    return "{" + join(t) + "}";
}

std::string plain(const EVal& v) { return v.is_num() ? v.text() : v.str; }

std::string label(const Rule& r, const Expr& e) { return r.param.empty() ? e.text() : r.param; }

/// Tensors a rule names: "in0", "out1", "in*" (every present input), "out*", "in1..": from 1 on.
std::vector<std::pair<std::string, const ir::Value*>> select_tensors(const std::string& sel, const NodeContext& c) {
    std::vector<std::pair<std::string, const ir::Value*>> out;
    bool is_out = sel.compare(0, 3, "out") == 0;
    std::string rest = sel.substr(is_out ? 3 : 2);
    const auto& names = is_out ? c.node().outputs : c.node().inputs;
    size_t lo = 0, hi = names.size();
    if (rest == "*") {
    } else if (rest.size() > 1 && rest.compare(rest.size() - 1, 1, "+") == 0) {
        lo = static_cast<size_t>(std::stoul(rest.substr(0, rest.size() - 1)));
    } else {
        lo = static_cast<size_t>(std::stoul(rest));
        hi = lo + 1;
    }
    for (size_t i = lo; i < hi && i < names.size(); ++i) {
        const ir::Value* v = c.tensor(is_out, i);
        if (v) out.emplace_back(std::string(is_out ? "output " : "input ") + std::to_string(i) + " '" + v->name + "'", v);
    }
    return out;
}

std::optional<std::string> eval_interval(const Rule& r, const NodeContext& c) {
    EVal v = r.value.eval(c);
    if (!v.is_num()) return std::nullopt;
    bool lo_bad = r.has_min && (r.min_open ? v.num <= r.min : v.num < r.min);
    bool hi_bad = r.has_max && (r.max_open ? v.num >= r.max : v.num > r.max);
    if (!lo_bad && !hi_bad) return std::nullopt;
    std::string range = std::string(r.has_min ? (r.min_open ? "(" : "[") : "(") +
                        (r.has_min ? EVal::of(r.min).text() : "-inf") + ", " +
                        (r.has_max ? EVal::of(r.max).text() : "inf") + (r.has_max ? (r.max_open ? ")" : "]") : ")");
    return label(r, r.value) + " = " + v.text() + " outside " + range;
}

std::optional<std::string> eval_set(const Rule& r, const NodeContext& c) {
    EVal v = r.value.empty() ? c.lookup("fused_act") : r.value.eval(c);
    if (!v.defined()) return std::nullopt;
    for (const auto& a : r.values) {
        if (a.kind != v.kind) continue;
        if (a.is_num() ? a.num == v.num : a.str == v.str) return std::nullopt;
    }
    std::string name = r.value.empty() ? "fused activation" : label(r, r.value);
    return name + " = " + plain(v) + " not in " + set_text(r.values);
}

std::optional<std::string> eval_rank(const Rule& r, const NodeContext& c) {
    for (const auto& [what, v] : select_tensors(r.tensor, c)) {
        if (!v->shape_known) continue;
        auto rank = static_cast<int64_t>(v->shape.size());
        if (std::find(r.ranks.begin(), r.ranks.end(), rank) != r.ranks.end()) continue;
        std::vector<std::string> t;
        for (auto k : r.ranks) t.push_back(std::to_string(k));
        return "rank of " + what + " = " + std::to_string(rank) + " (" + v->shape_str() + "), allowed {" + join(t) + "}";
    }
    return std::nullopt;
}

bool dtype_allowed(const std::string& dt, const Rule& r, const PlatformSpec& p) {
    auto ok = [&](const std::string& d) { return std::find(r.dtypes.begin(), r.dtypes.end(), d) != r.dtypes.end(); };
    if (ok(dt)) return true;
    auto it = p.dtype_conversions.find(dt);
    if (it == p.dtype_conversions.end()) return false;
    return std::any_of(it->second.begin(), it->second.end(), ok);
}

std::optional<std::string> eval_dtype(const Rule& r, const NodeContext& c, const PlatformSpec& p) {
    for (const auto& [what, v] : select_tensors(r.tensor, c)) {
        std::string dt = dtype_spec_name(v->dtype);
        if (dtype_allowed(dt, r, p)) continue;
        return "dtype of " + what + " = " + dt + ", allowed {" + join(r.dtypes) + "}";
    }
    return std::nullopt;
}

std::optional<std::string> eval_quant(const Rule& r, const NodeContext& c) {
    for (const auto& [what, v] : select_tensors(r.tensor, c)) {
        if (!v->is_quantized()) continue;
        std::string g = v->quant.per_axis() ? "per-channel" : "per-layer";
        if (!r.granularity.empty() && std::find(r.granularity.begin(), r.granularity.end(), g) == r.granularity.end())
            return what + " is quantized " + g + ", allowed {" + join(r.granularity) + "}";
        int64_t bits = c.bits_of(*v);
        if (!r.bits.empty() && std::find(r.bits.begin(), r.bits.end(), bits) == r.bits.end()) {
            std::vector<std::string> t;
            for (auto b : r.bits) t.push_back(std::to_string(b));
            return "quantization bit width of " + what + " = " + std::to_string(bits) + ", allowed {" + join(t) + "}";
        }
    }
    return std::nullopt;
}

/// The broadcast mask of `in` against `out`: one letter of `dims` where the dim is kept, '1' where
/// it is broadcast; "scalar" for one-element inputs; empty when not a broadcast (shape mismatch).
std::string broadcast_mask(const ir::Value& in, const ir::Value& out, const std::string& dims) {
    if (in.numel() == 1 && out.numel() != 1) return "scalar";
    size_t r = out.shape.size();
    std::string letters = dims.size() == r ? dims : std::string(r, 'x');
    std::string m;
    for (size_t i = 0; i < r; ++i) {
        size_t off = r - in.shape.size();
        int64_t d = i < off ? 1 : in.shape[i - off];
        if (d == out.shape[i]) m += letters[i];
        else if (d == 1) m += '1';
        else return {};
    }
    return m;
}

std::optional<std::string> eval_broadcast(const Rule& r, const NodeContext& c) {
    const ir::Value* out = c.tensor(true, 0);
    if (!out || !out->shape_known) return std::nullopt;
    for (const auto& [what, v] : select_tensors(r.tensor.empty() ? "in*" : r.tensor, c)) {
        if (!v->shape_known || v->shape == out->shape || v->shape.size() > out->shape.size()) continue;
        std::string dims = r.dims.empty() ? std::string("bchw") : r.dims;
        std::string m = broadcast_mask(*v, *out, dims);
        if (m.empty() || m == dims.substr(0, m.size())) continue;
        if (std::find(r.patterns.begin(), r.patterns.end(), m) != r.patterns.end()) continue;
        if (m != "scalar" && m.find('1') == std::string::npos) continue;  // rank extension only
        return what + " (" + v->shape_str() + ") broadcasts to " + out->shape_str() + " as '" + m +
               "', allowed {" + join(r.patterns) + "}";
    }
    return std::nullopt;
}

std::optional<std::string> eval_alignment(const Rule& r, const NodeContext& c) {
    EVal v = r.value.eval(c);
    if (!v.is_num()) return std::nullopt;
    auto iv = static_cast<int64_t>(v.num);
    if (iv % r.multiple == 0) return std::nullopt;
    return label(r, r.value) + " = " + v.text() + " is not a multiple of " + std::to_string(r.multiple);
}

std::optional<std::string> eval_constant(const Rule& r, const NodeContext& c) {
    for (const auto& [what, v] : select_tensors(r.tensor, c))
        if (!v->is_constant()) return what + " is not an offline constant (must be an initializer)";
    return std::nullopt;
}

std::optional<std::string> eval_formula(const Rule& r, const NodeContext& c) {
    EVal v = r.expr.eval(c);
    if (!v.is_num() || v.num != 0) return std::nullopt;
    std::string vals;
    for (const auto& id : r.expr.identifiers()) {
        EVal x = c.lookup(id);
        vals += (vals.empty() ? "" : ", ") + id + "=" + plain(x);
    }
    return r.message + ": got " + vals;
}

std::optional<std::string> eval_opset(const Rule& r, const NodeContext& c) {
    EVal v = c.lookup("opset");
    if (!v.is_num() || v.num == 0) return std::nullopt;
    if ((r.has_min && v.num < r.min) || (r.has_max && v.num > r.max))
        return "opset = " + v.text() + " outside [" + (r.has_min ? EVal::of(r.min).text() : "-") + ", " +
               (r.has_max ? EVal::of(r.max).text() : "-") + "]";
    return std::nullopt;
}

std::optional<std::string> eval_target(const Rule& r, const PlatformSpec& p) {
    for (const auto& t : p.targets)
        if (std::find(r.targets.begin(), r.targets.end(), t) != r.targets.end()) return std::nullopt;
    return "only on targets {" + join(r.targets) + "}, platform " + p.id + " targets {" + join(p.targets) + "}";
}

}  // namespace

std::optional<std::string> evaluate_rule(const Rule& r, const NodeContext& c, const PlatformSpec& p) {
    if (!r.when.empty()) {
        EVal w = r.when.eval(c);
        if (!w.is_num() || w.num == 0) return std::nullopt;
    }
    switch (r.kind) {
        case RuleKind::Interval: return eval_interval(r, c);
        case RuleKind::Set:
        case RuleKind::Fused: return eval_set(r, c);
        case RuleKind::Rank: return eval_rank(r, c);
        case RuleKind::Dtype: return eval_dtype(r, c, p);
        case RuleKind::Quant: return eval_quant(r, c);
        case RuleKind::Broadcast: return eval_broadcast(r, c);
        case RuleKind::Alignment: return eval_alignment(r, c);
        case RuleKind::Constant: return eval_constant(r, c);
        case RuleKind::Formula: return eval_formula(r, c);
        case RuleKind::Opset: return eval_opset(r, c);
        case RuleKind::Target: return eval_target(r, p);
        case RuleKind::Status:
            if (r.status == "unsupported") return std::string("operator is unsupported on ") + p.id;
            return std::nullopt;
        case RuleKind::Note: return std::nullopt;
    }
    return std::nullopt;
}

}  // namespace drv::check
