// SPDX-License-Identifier: MIT
// Node -> spec operator matching (fused chains first), rule evaluation and verdicts.
#include "checker/checker.h"

#include <algorithm>
#include <map>

#include "node_context.h"
#include "rule_eval.h"

namespace drv::check {

namespace {

struct Candidate {
    const OpSpec* op;
    const Match* match;
};

/// Candidates per IR op_type, most specific first: fused chains, conditional matches, plain ones.
std::map<std::string, std::vector<Candidate>> index_ops(const PlatformSpec& p) {
    std::map<std::string, std::vector<Candidate>> idx;
    for (int pass = 0; pass < 3; ++pass) {
        for (const auto& op : p.ops) {
            for (const auto& m : op.match) {
                int prio = !m.then.empty() ? 0 : (!m.when.empty() ? 1 : 2);
                if (prio == pass) idx[m.domain + "|" + m.op_type].push_back({&op, &m});
            }
        }
    }
    return idx;
}

std::vector<const std::map<std::string, Expr>*> binds_for(const PlatformSpec& p, const OpSpec& op) {
    std::vector<const std::map<std::string, Expr>*> out;
    const OpSpec* cur = &op;
    for (int depth = 0; cur && depth < 8; ++depth) {
        out.push_back(&cur->bind);
        cur = cur->inherits.empty() ? nullptr : p.find_op(cur->inherits);
    }
    out.push_back(&p.bind);
    return out;
}

/// Consumer node indices of every value, built once per check (Graph::consumers scans every node:
/// one call per node made the check quadratic in graph size, issue 23).
std::map<std::string, std::vector<size_t>> consumers_of(const ir::Graph& g) {
    std::map<std::string, std::vector<size_t>> users;
    for (size_t i = 0; i < g.nodes().size(); ++i) {
        const auto& ins = g.nodes()[i].inputs;
        for (size_t k = 0; k < ins.size(); ++k)
            if (std::find(ins.begin(), ins.begin() + static_cast<std::ptrdiff_t>(k), ins[k]) == ins.begin() + static_cast<std::ptrdiff_t>(k))
                users[ins[k]].push_back(i);  // once per node, as Graph::consumers counts
    }
    return users;
}

/// The single consumer of n's only output, when n's output is not a graph output.
int sole_consumer(const ir::Graph& g, const std::map<std::string, std::vector<size_t>>& users, const ir::Node& n) {
    if (n.outputs.size() != 1) return -1;
    const auto& outs = g.outputs();
    if (std::find(outs.begin(), outs.end(), n.outputs[0]) != outs.end()) return -1;
    const auto it = users.find(n.outputs[0]);
    return it != users.end() && it->second.size() == 1 ? static_cast<int>(it->second[0]) : -1;
}

void require_static_shapes(const ir::Graph& g, const PlatformSpec& p) {
    for (const auto& n : g.nodes()) {
        for (const auto* names : {&n.inputs, &n.outputs}) {
            for (const auto& name : *names) {
                if (name.empty()) continue;
                const ir::Value* v = g.find_value(name);
                if (!v) throw CheckError(n.label() + ": tensor '" + name + "' is not defined in the graph");
                bool dynamic = !v->shape_known ||
                               std::any_of(v->shape.begin(), v->shape.end(), [](int64_t d) { return d < 0; });
                if (dynamic)
                    throw CheckError(n.label() + ": tensor '" + name + "' has a dynamic shape (" + v->shape_str() +
                                     "); " + p.toolchain + " (" + p.id +
                                     ") needs static shapes: fix them with --input-shape");
            }
        }
    }
}

}  // namespace

const char* verdict_name(Verdict v, const PlatformSpec& p) {
    switch (v) {
        case Verdict::Target: return p.engine == "MCU" ? "MCU" : "NPU";
        case Verdict::Fused: return "fused";
        case Verdict::CpuFallback: return "CPU fallback";
        case Verdict::Unsupported: return "unsupported";
        case Verdict::NotInSeed: return "outside the documented operator tables";
    }
    return "?";
}

size_t CheckResult::count(Verdict v) const {
    return static_cast<size_t>(std::count_if(nodes.begin(), nodes.end(), [v](const NodeResult& n) { return n.verdict == v; }));
}

Verdict CheckResult::overall() const {
    // Severity: a definite "unsupported" outranks "not in the seed" (unknown), which outranks a
    // CPU fallback.
    auto rank = [](Verdict v) {
        switch (v) {
            case Verdict::Target:
            case Verdict::Fused: return 0;
            case Verdict::CpuFallback: return 1;
            case Verdict::NotInSeed: return 2;
            case Verdict::Unsupported: return 3;
        }
        return 3;
    };
    Verdict worst = Verdict::Target;
    for (const auto& n : nodes)
        if (rank(n.verdict) > rank(worst)) worst = n.verdict;
    return worst;
}

std::string dtype_spec_name(num::DType t) {
    switch (t) {
        case num::DType::F32: return "float32";
        case num::DType::F16: return "float16";
        case num::DType::I8: return "int8";
        case num::DType::U8: return "uint8";
        case num::DType::I16: return "int16";
        case num::DType::U16: return "uint16";
        case num::DType::I32: return "int32";
        case num::DType::I64: return "int64";
        case num::DType::Bool: return "bool";
    }
    return "?";
}

CheckResult check_graph(const ir::Graph& g, const PlatformSpec& spec, const CheckOptions& opts) {
    CheckResult res;
    res.platform = spec.id;
    std::vector<size_t> order;
    try {
        order = g.topological_order();
    } catch (const ir::GraphError& e) {
        throw CheckError(std::string("invalid graph: ") + e.what());
    }
    if (spec.static_shapes) require_static_shapes(g, spec);
    const auto idx = index_ops(spec);
    const auto users = consumers_of(g);
    std::vector<int> fused_into(g.nodes().size(), -1);
    std::vector<NodeResult> by_node(g.nodes().size());
    for (size_t ni : order) {
        const ir::Node& n = g.nodes()[ni];
        NodeResult& nr = by_node[ni];
        nr.node = n.name;
        nr.op_type = n.op_type;
        if (fused_into[ni] >= 0) {
            const NodeResult& head = by_node[static_cast<size_t>(fused_into[ni])];
            nr.verdict = head.verdict == Verdict::Target ? Verdict::Fused : head.verdict;
            nr.fused_into = head.node;
            nr.spec_op = head.spec_op;
            nr.heading = head.heading;
            nr.reason = "fused into " + head.node + " (" + head.spec_op + ")";
            continue;
        }
        if (!spec.tables_in_seed) {
            nr.verdict = Verdict::NotInSeed;
            nr.reason = spec.note;
            continue;
        }
        NodeContext ctx(g, n, spec, opts);
        auto it = idx.find(n.domain + "|" + n.op_type);
        const Candidate* chosen = nullptr;
        int succ = -1;
        if (it != idx.end()) {
            for (const auto& c : it->second) {
                ctx.set_binds(binds_for(spec, *c.op));
                if (!c.match->then.empty()) {
                    int s = sole_consumer(g, users, n);
                    if (s < 0 || fused_into[static_cast<size_t>(s)] >= 0) continue;
                    const auto& t = c.match->then;
                    if (std::find(t.begin(), t.end(), g.nodes()[static_cast<size_t>(s)].op_type) == t.end()) continue;
                    succ = s;
                }
                if (!c.match->when.empty()) {
                    EVal w = c.match->when.eval(ctx);
                    if (!w.is_num() || w.num == 0) {
                        succ = -1;
                        continue;
                    }
                }
                chosen = &c;
                break;
            }
        }
        if (!chosen) {
            if (spec.unlisted == "not_in_seed") {
                nr.verdict = Verdict::NotInSeed;
                nr.reason = n.op_type + " is not in the part of the " + spec.id +
                            " operator table that the vendor document contains (" + spec.note + ")";
            } else {
                nr.verdict = spec.unlisted == "cpu_fallback" ? Verdict::CpuFallback : Verdict::Unsupported;
                nr.reason = n.op_type + " is not in the " + spec.id + " operator table (" + spec.toolchain + ")";
            }
            continue;
        }
        nr.spec_op = chosen->op->name;
        nr.heading = chosen->op->heading;
        ctx.set_binds(binds_for(spec, *chosen->op));
        if (succ >= 0) ctx.set_fused_act(g.nodes()[static_cast<size_t>(succ)].op_type);
        for (const auto& [r, owner] : spec.effective_rules_with_owner(*chosen->op)) {
            if (auto v = evaluate_rule(*r, ctx, spec)) nr.violations.push_back({r, *v, owner->name});
        }
        if (!nr.violations.empty()) {
            nr.verdict = spec.cpu_fallback ? Verdict::CpuFallback : Verdict::Unsupported;
        } else if (succ >= 0) {
            fused_into[static_cast<size_t>(succ)] = static_cast<int>(ni);
        }
    }
    for (size_t ni : order) res.nodes.push_back(std::move(by_node[ni]));
    return res;
}

}  // namespace drv::check
