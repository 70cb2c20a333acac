// SPDX-License-Identifier: MIT
// The graph rewrites onnxruntime's CPU execution provider (x86-64) applies to a QDQ model before its
// QDQ fusions, mirrored so that the fused graph the reference executor runs computes what
// onnxruntime computes (core/optimizer/qdq_transformer: ensure_unique_dq_for_node_unit.cc,
// qdq_propagation.cc, weight_bias_quantization.cc, qdq_s8_to_u8.cc). All but the weight/bias
// quantization are exact rewrites; that one changes values exactly as onnxruntime does (verified with
// onnxruntime-node in tests/unit/compiler/qdq_conventions_test and the convention e2e tests).
#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "numerics/ops.h"
#include "qdq_internal.h"

namespace drv::ir::qdq {

namespace {

/// (node, input slot) pairs reading each value; hashed (looked up, never iterated: the order of
/// the rewrites is the node order).
using Edges = std::unordered_map<std::string, std::vector<std::pair<size_t, size_t>>>;
Edges edges_of(const Graph& g) {
    Edges e;
    e.reserve(g.nodes().size() * 2);
    for (size_t i = 0; i < g.nodes().size(); ++i)
        for (size_t k = 0; k < g.nodes()[i].inputs.size(); ++k)
            if (!g.nodes()[i].inputs[k].empty()) e[g.nodes()[i].inputs[k]].push_back({i, k});
    return e;
}

/// `base`, or `base_K` with the least K >= 1 not taken. `next` (optional) remembers, per base,
/// where the previous search ended: every earlier candidate is taken, so the search resumes there
/// and N names from one base cost N lookups, not N^2 / 2 (issue 23: a DQ shared by 10^5 consumers).
std::string unique_value(const Graph& g, const std::string& base, std::map<std::string, int>* next = nullptr) {
    int k = next ? (*next)[base] : 0;
    std::string s = k ? base + "_" + std::to_string(k) : base;
    for (; g.find_value(s); s = base + "_" + std::to_string(++k)) {
    }
    if (next) (*next)[base] = k + 1;
    return s;
}

bool is_output(const Graph& g, const std::string& v) {
    return std::find(g.outputs().begin(), g.outputs().end(), v) != g.outputs().end();
}

Value& add_like(Graph& g, const std::string& name, const Value& like, num::DType dt) {
    Value v;
    v.name = name;
    v.dtype = dt;
    v.shape = like.shape;
    v.shape_known = like.shape_known;
    return g.add_value(std::move(v));
}

/// Builds the new node list: `before[i]` inserted ahead of node i, `after[i]` right behind it.
/// Nothing to insert leaves the list as it is (no copy of 10^6 nodes per pass, issue 23).
void splice(Graph& g, std::map<size_t, std::vector<Node>>& before, std::map<size_t, std::vector<Node>>& after) {
    if (before.empty() && after.empty()) return;
    size_t added = 0;
    for (const auto& [i, ns] : before) added += ns.size();
    for (const auto& [i, ns] : after) added += ns.size();
    std::vector<Node> out;
    out.reserve(g.nodes().size() + added);
    auto b = before.begin(), a = after.begin();
    for (size_t i = 0; i < g.nodes().size(); ++i) {
        if (b != before.end() && b->first == i) {
            for (auto& n : b->second) out.push_back(std::move(n));
            ++b;
        }
        out.push_back(std::move(g.nodes()[i]));
        if (a != after.end() && a->first == i) {
            for (auto& n : a->second) out.push_back(std::move(n));
            ++a;
        }
    }
    g.nodes() = std::move(out);
}

/// Q/DQ with constant scalar scale and zero point (or none): what propagation may copy.
bool scalar_params(const Graph& g, const Node& n) {
    num::QuantParams p;
    return quant_params_of(g, n, 0, p) && !p.per_axis();
}

bool can_propagate(const Graph& g, const Node& n) {
    if (!n.domain.empty()) return false;
    static const std::set<std::string> k{"Reshape", "Transpose", "Squeeze", "Unsqueeze", "Slice"};
    return k.count(n.op_type) || (n.op_type == "MaxPool" && g.opset("") >= 12 && n.outputs.size() == 1);
}

}  // namespace

bool ensure_unique_dq(Graph& g) {
    auto edges = edges_of(g);
    std::map<size_t, std::vector<Node>> before, after;
    std::unordered_set<std::string> names;
    names.reserve(g.nodes().size() * 2);
    for (const auto& n : g.nodes()) names.insert(n.name);
    std::map<std::string, int> next_value, next_name;  // resume points of the name searches
    for (size_t i = 0; i < g.nodes().size(); ++i) {
        if (!is_dq(g.nodes()[i]) || g.nodes()[i].outputs.size() != 1) continue;
        auto eit = edges.find(g.nodes()[i].outputs[0]);
        const bool out = is_output(g, g.nodes()[i].outputs[0]);
        if (eit == edges.end() || eit->second.empty() || (eit->second.size() == 1 && !out)) continue;
        const auto& es = eit->second;
        const Node dq = g.nodes()[i];  // copied: the consumers below are edited
        // The original serves the first consumer unless it is also a graph output.
        for (size_t k = out ? 0 : 1; k < es.size(); ++k) {
            Node d = dq;
            int& s = next_name[dq.name];  // every earlier suffix is taken: resume the search there
            d.name = s ? dq.name + "/duplicated_" + std::to_string(s) : dq.name + "/duplicated";
            for (; names.count(d.name); d.name = dq.name + "/duplicated_" + std::to_string(++s)) {
            }
            ++s;
            names.insert(d.name);
            d.outputs = {unique_value(g, dq.outputs[0] + "/duplicated", &next_value)};
            add_like(g, d.outputs[0], g.value(dq.outputs[0]), g.value(dq.outputs[0]).dtype);
            g.nodes()[es[k].first].inputs[es[k].second] = d.outputs[0];
            before[es[k].first].push_back(std::move(d));
        }
    }
    splice(g, before, after);
    return !before.empty();
}

namespace {

/// Inserts Q (params of `like`) after value `v`'s producer and one DQ per listed edge; returns the
/// new DQ outputs in edge order. A graph-output edge (node == SIZE_MAX) keeps the name `v` on its
/// DQ: the producer's output is renamed.
std::vector<std::string> insert_qdq(Graph& g, const std::string& v, const Node& like,
                                    const std::vector<std::pair<size_t, size_t>>& to, bool graph_output,
                                    std::map<size_t, std::vector<Node>>& after, size_t producer) {
    std::string src = v;
    Node& p = g.nodes()[producer];
    if (graph_output) {  // rename the producer's output; the final DQ takes the graph output's name
        src = unique_value(g, v + "_pre_q");
        add_like(g, src, g.value(v), g.value(v).dtype);
        for (auto& o : p.outputs)
            if (o == v) o = src;
    }
    const num::DType qdt = g.value(like.outputs[0]).dtype == num::DType::F32 ? g.value(like.input(0)).dtype
                                                                              : g.value(like.outputs[0]).dtype;
    Node q;
    q.name = unique_value(g, v + "_q");
    q.op_type = "QuantizeLinear";
    q.domain = like.domain;
    q.inputs = {src, like.input(1), like.input(2)};
    q.outputs = {unique_value(g, v + "_q_to_dq")};
    add_like(g, q.outputs[0], g.value(src), qdt);
    std::vector<Node> ns{q};
    std::vector<std::string> outs;
    for (size_t k = 0; k < to.size() + (graph_output ? 1 : 0); ++k) {
        Node d;
        d.name = unique_value(g, v + "_dq" + (k ? std::to_string(k) : ""));
        d.op_type = "DequantizeLinear";
        d.domain = like.domain;
        d.inputs = {q.outputs[0], like.input(1), like.input(2)};
        d.outputs = {k < to.size() ? unique_value(g, v + "_post_dq" + (k ? std::to_string(k) : "")) : v};
        if (k < to.size()) {
            add_like(g, d.outputs[0], g.value(src), num::DType::F32);
            g.nodes()[to[k].first].inputs[to[k].second] = d.outputs[0];
        }
        outs.push_back(d.outputs[0]);
        ns.push_back(std::move(d));
    }
    for (auto& n : ns) after[producer].push_back(std::move(n));
    return outs;
}

}  // namespace

bool propagate_qdq(Graph& g) {
    // The edge map is rebuilt after a change only (the backward rounds start from the forward
    // rounds' last map): each rebuild is a pass over the whole graph (issue 23).
    bool any = false;
    Edges edges = edges_of(g);
    // DQ forward: DQ -> (Reshape|Transpose|...)* -> X becomes DQ -> P -> Q -> DQ -> X.
    for (bool changed = true; changed;) {
        changed = false;
        std::map<size_t, std::vector<Node>> before, after;
        std::set<size_t> touched;
        for (size_t i = 0; i < g.nodes().size() && !changed; ++i) {
            const Node& dq = g.nodes()[i];
            if (!is_dq(dq) || !scalar_params(g, dq) || is_output(g, dq.outputs[0])) continue;
            const auto& es = edges[dq.outputs[0]];
            if (es.size() != 1 || es[0].second != 0) continue;
            size_t p = es[0].first;
            // Walk the chain of propagating nodes; insert after the first one whose consumers are
            // not all Q already (one insertion per round keeps the edge map simple).
            while (can_propagate(g, g.nodes()[p]) && !touched.count(p)) {
                const std::string& out = g.nodes()[p].outputs[0];
                const auto& next = edges[out];
                const bool gout = is_output(g, out);
                if (gout && !next.empty()) break;  // onnxruntime stops at an output that is also read
                std::vector<std::pair<size_t, size_t>> to;
                for (const auto& e : next)
                    if (!is_q(g.nodes()[e.first])) to.push_back(e);
                if (to.empty() && !gout) break;
                insert_qdq(g, out, dq, to, gout, after, p);
                touched.insert(p);
                changed = true;
                break;
            }
        }
        if (changed) {
            splice(g, before, after);
            edges = edges_of(g);
            any = true;
        }
    }
    // Q backward: X -> P(propagating)* -> Q becomes X -> Q -> DQ -> P -> ... -> Q.
    for (bool changed = true; changed;) {
        changed = false;
        std::unordered_map<std::string, size_t> producer;
        producer.reserve(g.nodes().size() * 2);
        for (size_t i = 0; i < g.nodes().size(); ++i)
            for (const auto& o : g.nodes()[i].outputs) producer[o] = i;
        std::map<size_t, std::vector<Node>> before, after;
        for (size_t i = 0; i < g.nodes().size() && !changed; ++i) {
            const Node& q = g.nodes()[i];
            if (!is_q(q) || !scalar_params(g, q)) continue;
            std::string v = q.input(0);
            auto single = [&](const std::string& val) {
                auto pit = producer.find(val);
                return pit != producer.end() && edges[val].size() == 1 && !is_output(g, val);
            };
            if (!single(v)) continue;
            size_t p = producer.at(v);  // must propagate; its input 0 edge gets the pair
            while (can_propagate(g, g.nodes()[p])) {
                const std::string in = g.nodes()[p].input(0);
                auto pit = producer.find(in);
                if (pit == producer.end() || !single(in)) break;  // graph input, initializer or fan-out
                if (is_dq(g.nodes()[pit->second])) break;
                if (g.value(in).dtype != num::DType::F32) break;
                insert_qdq(g, in, q, {{p, 0}}, false, after, pit->second);
                changed = true;
                break;
            }
        }
        if (changed) {
            splice(g, before, after);
            edges = edges_of(g);
            any = true;
        }
    }
    return any;
}

namespace {

/// Conv/ConvTranspose/Gemm output reaches a QuantizeLinear through Relu/Clip only, no branching
/// (weight_bias_quantization.cc, IsNoBranchPathToQuantizeLinear).
bool path_to_q(const Graph& g, const Edges& edges, size_t i) {
    const Node* cur = &g.nodes()[i];
    for (int guard = 0; guard < 64; ++guard) {
        if (cur->outputs.size() != 1) return false;
        auto it = edges.find(cur->outputs[0]);
        std::set<size_t> users;
        if (it != edges.end())
            for (const auto& e : it->second) users.insert(e.first);
        if (users.size() != 1) return false;
        const Node& c = g.nodes()[*users.begin()];
        if (is_q(c)) return true;
        if (!c.domain.empty() || (c.op_type != "Relu" && c.op_type != "Clip")) return false;
        cur = &c;
    }
    return false;
}

num::Tensor run1(const std::string& op, const std::vector<const num::Tensor*>& in, const num::Attributes& a = {}) {
    return std::move(num::run_op(op, a, in).at(0));
}

/// onnxruntime's GetQuantizationParameter<int8_t> (core/util/qmath.h): the range widened to hold 0,
/// scale = (max - min) / 255, zero point = RoundHalfToEven(clamp(-128 - min / scale)).
void int8_params(const num::Tensor& w, float& scale, int8_t& zp) {
    float lo = 0.0f, hi = 0.0f;
    for (size_t k = 0; k < w.numel(); ++k) {
        lo = std::min(lo, w.data<float>()[k]);
        hi = std::max(hi, w.data<float>()[k]);
    }
    scale = hi == lo ? 1.0f : (hi - lo) / 255.0f;
    const float z = std::max(-128.0f, std::min(127.0f, -128.0f - lo / scale));
    zp = static_cast<int8_t>(std::nearbyint(z));
}

std::string add_const(Graph& g, const std::string& base, num::Tensor t, std::map<std::string, int>* next = nullptr) {
    Value v;
    v.name = unique_value(g, base, next);
    v.dtype = t.dtype();
    v.shape = t.shape();
    v.shape_known = true;
    v.data = std::move(t);
    return g.add_value(std::move(v)).name;
}

}  // namespace

bool quantize_weight_bias(Graph& g) {
    auto edges = edges_of(g);
    std::unordered_map<std::string, size_t> producer;
    producer.reserve(g.nodes().size() * 2);
    for (size_t i = 0; i < g.nodes().size(); ++i)
        for (const auto& o : g.nodes()[i].outputs) producer[o] = i;
    auto prod = [&](const std::string& v) -> const Node* {
        auto it = producer.find(v);
        return it == producer.end() ? nullptr : &g.nodes()[it->second];
    };
    std::map<size_t, std::vector<Node>> before, after;
    for (size_t i = 0; i < g.nodes().size(); ++i) {
        const Node& cand = g.nodes()[i];
        if (!cand.domain.empty() || (cand.op_type != "Conv" && cand.op_type != "ConvTranspose" && cand.op_type != "Gemm"))
            continue;
        const Node n = cand;  // copied: g's values and node i's inputs change below
        const Node* dq0 = prod(n.input(0));
        const Value* xs = dq0 && is_dq(*dq0) ? g.find_value(dq0->input(1)) : nullptr;
        if (!xs || !xs->is_constant() || xs->data->numel() != 1 || xs->data->dtype() != num::DType::F32) continue;
        if (!path_to_q(g, edges, i)) continue;
        const Node* dq1 = prod(n.input(1));
        if (dq1 && !is_dq(*dq1)) continue;
        const Value& wv = g.value(n.input(1));
        if (!dq1 && (!wv.is_constant() || wv.dtype != num::DType::F32)) continue;
        const Value* bv = n.has_input(2) ? g.find_value(n.input(2)) : nullptr;
        if (bv && (!bv->is_constant() || bv->dtype != num::DType::F32 || bv->shape.size() != 1)) continue;
        const int64_t bias_size = bv ? bv->shape[0] : -1;
        if (dq1 && bias_size < 0) continue;
        bool per_tensor = true;
        if (dq1) {
            // float32 as the x scale (the Mul of x_scale * w_scale needs one type; onnx_loader_fuzz
            // found a weight scale of another type throwing out of the import).
            const Value* ws = g.find_value(dq1->input(1));
            if (!ws || !ws->is_constant() || ws->data->dtype() != num::DType::F32) continue;
            if (ws->data->numel() != 1 || ws->shape.size() > 1) {
                per_tensor = false;
                if (ws->shape.size() != 1 || ws->shape[0] != bias_size) continue;
                if (attr_int(dq1->attrs, "block_size", 0) != 0) continue;
                int64_t axis = attr_int(dq1->attrs, "axis", 1);
                if (axis < 0) axis += static_cast<int64_t>(g.value(dq1->input(0)).shape.size());
                const int64_t expected = n.op_type == "Gemm" ? (attr_int(n.attrs, "transB", 0) == 0 ? 1 : 0) : 0;
                if (axis != expected) continue;
            }
        }
        std::string w_scale;
        if (!dq1) {  // float weight: per-tensor int8, quantized as onnxruntime quantizes it
            // A timing-only import has no weight contents: same structure, placeholder values.
            float s = 1.0f;
            int8_t z = 0;
            if (!wv.contents_unspecified) int8_params(*wv.data, s, z);
            num::Tensor st(num::DType::F32, {}), zt(num::DType::I8, {});
            st.data<float>()[0] = s;
            zt.data<int8_t>()[0] = z;
            w_scale = add_const(g, n.name + "_weight_scale", st);
            const std::string w_zp = add_const(g, n.name + "_weight_zp", zt);
            num::Tensor wq = wv.contents_unspecified
                                 ? num::Tensor::uninitialized(num::DType::I8, wv.shape)
                                 : run1("QuantizeLinear", {&*wv.data, &*g.value(w_scale).data, &*g.value(w_zp).data});
            const std::string wq_name = add_const(g, n.name + "_weight_q", std::move(wq));
            g.value(wq_name).contents_unspecified = wv.contents_unspecified;
            Node d;
            d.name = n.name + "_weight_dq";
            d.op_type = "DequantizeLinear";
            d.inputs = {wq_name, w_scale, w_zp};
            d.outputs = {unique_value(g, n.name + "_weight_dq")};
            add_like(g, d.outputs[0], wv, num::DType::F32);
            g.nodes()[i].inputs[1] = d.outputs[0];
            before[i].push_back(std::move(d));
        } else {
            w_scale = dq1->input(1);
        }
        if (bias_size >= 0) {
            // bias_scale = x_scale * w_scale; int32(Round(bias / bias_scale)), all in float32 as the
            // inserted Mul/Div/Round/Cast compute it; then constant-folded.
            num::Tensor bs;
            num::Tensor bq = quantize_bias(*xs->data, *g.value(w_scale).data, *bv->data, &bs);
            const std::string bs_name = add_const(g, n.name + "_bias_scale", std::move(bs));
            const std::string bq_name = add_const(g, n.name + "_bias_int32", std::move(bq));
            Node d;
            d.name = n.name + "_bias_dq";
            d.op_type = "DequantizeLinear";
            d.inputs = {bq_name, bs_name};
            if (!per_tensor) d.attrs.set("axis", int64_t{0});
            d.outputs = {unique_value(g, n.name + "_bias_dq")};
            add_like(g, d.outputs[0], *bv, num::DType::F32);
            g.nodes()[i].inputs[2] = d.outputs[0];
            before[i].push_back(std::move(d));
        }
    }
    splice(g, before, after);
    return !before.empty();
}

void s8_to_u8(Graph& g) {
    auto edges = edges_of(g);
    std::map<std::string, int> next_name;  // one base name for every pair: resume its search
    for (size_t i = 0; i < g.nodes().size(); ++i) {
        Node& q = g.nodes()[i];
        if (!is_q(q) || q.inputs.size() < 3 || q.input(2).empty() || is_output(g, q.outputs[0])) continue;
        const auto& es = edges[q.outputs[0]];
        if (es.size() != 1) continue;
        Node& dq = g.nodes()[es[0].first];
        if (!is_dq(dq) || es[0].second != 0 || dq.inputs.size() < 3 || dq.input(2).empty()) continue;
        const Value* qz = g.find_value(q.input(2));
        const Value* dz = g.find_value(dq.input(2));
        if (!qz || !dz || !qz->is_constant() || !dz->is_constant() || qz->dtype != num::DType::I8 ||
            dz->dtype != num::DType::I8 || qz->data->numel() != 1 || dz->data->numel() != 1)
            continue;
        const int zq = qz->data->data<int8_t>()[0] + 128, zd = dz->data->data<int8_t>()[0] + 128;
        if (zq != zd) continue;
        num::Tensor z(num::DType::U8, qz->shape);
        z.data<uint8_t>()[0] = static_cast<uint8_t>(zq);
        const std::string zn = add_const(g, "qdq_s8_to_u8_zp_conversion", std::move(z), &next_name);
        q.inputs[2] = zn;
        dq.inputs[2] = zn;
        Value& t = g.value(q.outputs[0]);
        t.dtype = num::DType::U8;
        t.quant = num::QuantParams();
    }
}

}  // namespace drv::ir::qdq

namespace drv::ir {

num::Tensor quantize_bias(const num::Tensor& x_scale, const num::Tensor& w_scale, const num::Tensor& bias,
                          num::Tensor* bias_scale) {
    // The Mul / Div / Round nodes onnxruntime inserts, evaluated by the same operators.
    num::Tensor bs = std::move(num::run_op("Mul", {}, {&x_scale, &w_scale}).at(0));
    const num::Tensor quotient = std::move(num::run_op("Div", {}, {&bias, &bs}).at(0));
    const num::Tensor q = std::move(num::run_op("Round", {}, {&quotient}).at(0));
    num::Tensor bq(num::DType::I32, q.shape());
    for (size_t k = 0; k < q.numel(); ++k) {
        const double v = q.data<float>()[k];
        bq.data<int32_t>()[k] = std::isfinite(v) ? static_cast<int32_t>(std::clamp(v, -2147483648.0, 2147483647.0)) : 0;
    }
    if (bias_scale) *bias_scale = std::move(bs);
    return bq;
}

}  // namespace drv::ir
