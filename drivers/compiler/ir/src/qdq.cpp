// SPDX-License-Identifier: MIT
// QDQ folding and the onnxruntime-equivalent fusion of DQ -> op -> Q units. The unit shapes follow
// onnxruntime's QDQ selectors (core/optimizer/qdq_transformer: Conv, MatMul, Gemm, binary,
// variadic (Concat), unary, pools, "drop QDQ" data movement) and its Relu/Clip-into-Q rules
// (ReluQuantFusion: Q zero point == qmin; ClipQuantFusion: Q range inside the Clip range).
#include "compiler/ir/qdq.h"

#include <cmath>
#include <limits>
#include <set>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "qdq_internal.h"

namespace drv::ir {

namespace {

using qdq::is_dq;
using qdq::is_q;
bool is_int8ish(num::DType d) { return d == num::DType::I8 || d == num::DType::U8; }
/// Weight containers a fused QLinearConv/QLinearMatMul takes: 8-bit, 16-bit, and int32 (the
/// 20-bit weights of seed 003's tnpuv2 Conv2D).
bool is_int_weight(num::DType d) {
    return is_int8ish(d) || d == num::DType::I16 || d == num::DType::U16 || d == num::DType::I32;
}

std::vector<int32_t> ints_as_i32(const num::Tensor& t) {
    std::vector<int32_t> v(t.numel());
    for (size_t i = 0; i < v.size(); ++i) {
        switch (t.dtype()) {
            case num::DType::I8: v[i] = t.data<int8_t>()[i]; break;
            case num::DType::U8: v[i] = t.data<uint8_t>()[i]; break;
            case num::DType::I16: v[i] = t.data<int16_t>()[i]; break;
            case num::DType::U16: v[i] = t.data<uint16_t>()[i]; break;
            case num::DType::I32: v[i] = t.data<int32_t>()[i]; break;
            default: throw GraphError("zero point of dtype " + std::string(num::dtype_name(t.dtype())));
        }
    }
    return v;
}

struct Units {
    Graph& g;
    // Hashed: looked up per node, never iterated (issue 23: ordered string maps of 10^6 values).
    std::unordered_map<std::string, size_t> producer;  // value -> node index
    std::unordered_map<std::string, size_t> uses;      // value -> number of consuming node inputs
    std::unordered_set<std::string> graph_outputs;

    bool x86_64 = false;
    explicit Units(Graph& graph, bool x86) : g(graph), x86_64(x86) { refresh(); }
    void refresh() {
        producer.clear();
        uses.clear();
        producer.reserve(g.nodes().size() * 2);
        uses.reserve(g.nodes().size() * 2);
        for (size_t i = 0; i < g.nodes().size(); ++i) {
            for (const auto& o : g.nodes()[i].outputs) producer[o] = i;
            for (const auto& in : g.nodes()[i].inputs)
                if (!in.empty()) ++uses[in];
        }
        graph_outputs = std::unordered_set<std::string>(g.outputs().begin(), g.outputs().end());
    }
    const Node* prod(const std::string& v) const {
        auto it = producer.find(v);
        return it == producer.end() ? nullptr : &g.nodes()[it->second];
    }
    /// Output consumed by exactly one node input and not a graph output.
    bool single_use(const std::string& v) const {
        auto it = uses.find(v);
        return it != uses.end() && it->second == 1 && !graph_outputs.count(v);
    }
    const Node* dq_input(const Node& n, size_t i) const {
        if (!n.has_input(i)) return nullptr;
        const Node* p = prod(n.input(i));
        return p && is_dq(*p) ? p : nullptr;
    }
};

/// Q/DQ inputs (x, scale, zp) as the triple a QLinear op expects; zp may be "".
std::vector<std::string> triple(const Node& qdq) { return {qdq.input(0), qdq.input(1), qdq.input(2)}; }

bool same_quant(const Graph& g, const Node& a, const Node& b) {
    num::QuantParams qa, qb;
    return quant_params_of(g, a, 0, qa) && quant_params_of(g, b, 0, qb) && qa.scale == qb.scale &&
           qa.zero_point == qb.zero_point && g.value(a.input(0)).dtype == g.value(b.outputs[0]).dtype;
}

bool range_inside(const Graph& g, const Node& q, float lo, float hi) {
    num::QuantParams p;
    if (!quant_params_of(g, q, 0, p) || p.per_axis()) return false;
    num::DType dt = g.value(q.outputs[0]).dtype;
    // The Q's grid: its container, narrowed by `_qbits` (numerics README) when set.
    const bool is16 = dt == num::DType::I16 || dt == num::DType::U16;
    const bool sgn = dt == num::DType::I8 || dt == num::DType::I16;
    int64_t bits = is16 ? 16 : 8;
    if (const int64_t qb = attr_int(q.attrs, "_qbits", 0); qb > 0 && qb < bits) bits = qb;
    const double qmin = sgn ? -std::ldexp(1.0, static_cast<int>(bits) - 1) : 0;
    const double qmax = sgn ? std::ldexp(1.0, static_cast<int>(bits) - 1) - 1 : std::ldexp(1.0, static_cast<int>(bits)) - 1;
    double lower = p.scale[0] * (qmin - p.zero_point[0]), upper = p.scale[0] * (qmax - p.zero_point[0]);
    const double eps = std::numeric_limits<float>::epsilon();
    return lo - lower <= eps && upper - hi <= eps;
}

bool clip_bounds(const Graph& g, const Node& n, float& lo, float& hi) {
    lo = -std::numeric_limits<float>::infinity();
    hi = std::numeric_limits<float>::infinity();
    if (n.op_type == "Relu") {
        lo = 0;
        return true;
    }
    if (g.opset("") < 11) {
        lo = attr_float(n.attrs, "min", lo);
        hi = attr_float(n.attrs, "max", hi);
        return true;
    }
    for (size_t i = 1; i <= 2; ++i) {
        if (!n.has_input(i)) continue;
        const Value* v = g.find_value(n.input(i));
        if (!v || !v->is_constant() || v->data->dtype() != num::DType::F32 || v->data->numel() != 1) return false;
        (i == 1 ? lo : hi) = v->data->data<float>()[0];
    }
    return true;
}

/// Relu/Clip -> Q where the Q already clamps to a sub-range: bypass the Relu/Clip.
bool remove_clamp_before_q(Units& u, size_t qi) {
    Node& q = u.g.nodes()[qi];
    const Node* p = u.prod(q.input(0));
    if (!p || !p->domain.empty() || (p->op_type != "Relu" && p->op_type != "Clip") || !u.single_use(p->outputs[0])) return false;
    float lo, hi;
    if (!clip_bounds(u.g, *p, lo, hi) || !range_inside(u.g, q, lo, hi)) return false;
    // The index follows the one rewired edge (no node is added or removed until remove_dead_nodes):
    // a full refresh per removed clamp made the import quadratic in graph size (issue 23).
    --u.uses[q.inputs[0]];
    q.inputs[0] = p->input(0);
    ++u.uses[q.inputs[0]];
    return true;
}

Node fused(const Node& p, const std::string& op, const std::string& domain, std::vector<std::string> inputs,
           const Node& q) {
    Node n;
    n.name = p.name;
    n.op_type = op;
    n.domain = domain;
    n.inputs = std::move(inputs);
    n.outputs = {q.outputs[0]};
    n.attrs = p.attrs;
    // A narrowed output grid (`_qbits` on the QuantizeLinear) belongs to the fused op's output.
    if (const num::AttrValue* b = q.attrs.find("_qbits")) n.attrs.set("_qbits", *b);
    return n;
}

/// Builds the fused node for the unit DQ... -> p -> q, or returns false.
bool fuse_unit(const Units& u, const Node& p, const Node& q, Node& out) {
    const std::string& op = p.op_type;
    num::DType yt = u.g.value(q.outputs[0]).dtype;
    auto dq = [&](size_t i) { return u.dq_input(p, i); };
    auto act_ok = [&](const Node* d) { return d && u.g.value(d->input(0)).dtype == yt; };
    std::vector<std::string> qy{q.input(1), q.input(2)};
    if (!p.domain.empty()) return false;
    if (op == "Conv" || op == "MatMul") {
        const Node *x = dq(0), *w = dq(1);
        if (!act_ok(x) || !w || !is_int_weight(u.g.value(w->input(0)).dtype)) return false;
        // onnxruntime on x86-64 does not run int8-activation Conv/MatMul units as integer ops
        // (QDQIsInt8Allowed() is false off ARM): they stay DQ -> float op -> Q.
        if (u.x86_64 && yt == num::DType::I8) return false;
        auto in = triple(*x);
        for (auto& s : triple(*w)) in.push_back(s);
        in.insert(in.end(), qy.begin(), qy.end());
        if (op == "Conv" && p.has_input(2)) {
            const Node* b = dq(2);
            if (!b || u.g.value(b->input(0)).dtype != num::DType::I32) return false;
            in.push_back(b->input(0));
        } else if (op == "MatMul" && p.inputs.size() > 2) {
            return false;
        }
        out = fused(p, op == "Conv" ? "QLinearConv" : "QLinearMatMul", "", in, q);
        return true;
    }
    if (op == "Gemm") {
        const Node *a = dq(0), *b = dq(1);
        if (!act_ok(a) || !b || attr_float(p.attrs, "beta", 1.0f) != 1.0f) return false;
        auto in = triple(*a);
        for (auto& s : triple(*b)) in.push_back(s);
        if (p.has_input(2)) {
            const Node* c = dq(2);
            if (!c || u.g.value(c->input(0)).dtype != num::DType::I32) return false;
            in.push_back(c->input(0));
        } else {
            in.push_back("");
        }
        in.insert(in.end(), qy.begin(), qy.end());
        out = fused(p, "QGemm", "com.microsoft", in, q);
        out.attrs = num::Attributes();
        out.attrs.set("alpha", attr_float(p.attrs, "alpha", 1.0f));
        out.attrs.set("transA", attr_int(p.attrs, "transA", 0));
        out.attrs.set("transB", attr_int(p.attrs, "transB", 0));
        return true;
    }
    if (op == "Add" || op == "Mul") {
        const Node *a = dq(0), *b = dq(1);
        if (!act_ok(a) || !act_ok(b)) return false;
        auto in = triple(*a);
        for (auto& s : triple(*b)) in.push_back(s);
        in.insert(in.end(), qy.begin(), qy.end());
        out = fused(p, op == "Add" ? "QLinearAdd" : "QLinearMul", "com.microsoft", in, q);
        return true;
    }
    if (op == "GlobalAveragePool" || op == "AveragePool" || op == "LeakyRelu" || op == "Sigmoid") {
        const Node* x = dq(0);
        if (!act_ok(x)) return false;
        auto in = triple(*x);
        in.insert(in.end(), qy.begin(), qy.end());
        static const std::map<std::string, std::string> kName{{"GlobalAveragePool", "QLinearGlobalAveragePool"},
                                                              {"AveragePool", "QLinearAveragePool"},
                                                              {"LeakyRelu", "QLinearLeakyRelu"},
                                                              {"Sigmoid", "QLinearSigmoid"}};
        out = fused(p, kName.at(op), "com.microsoft", in, q);
        if (op == "GlobalAveragePool") out.attrs.set("channels_last", int64_t{0});
        return true;
    }
    if (op == "Softmax") {
        // onnxruntime's UnaryOpQDQRules fuse it too (QLinearSoftmax, whose kernel differs from a
        // float Softmax + QuantizeLinear: numerics README), with attribute `opset` = the Softmax's
        // since-version (qdq_actions.cc UnaryReplaceWithQLinear::ExtraAttributes). 8-bit only (its
        // UnarySelector refuses 16-bit types; the kernel takes uint8/int8), and not onto a narrowed
        // grid (`_qbits`, which the kernel cannot express).
        const Node* x = dq(0);
        if (!act_ok(x) || !is_int8ish(yt) || q.attrs.find("_qbits")) return false;
        auto in = triple(*x);
        in.insert(in.end(), qy.begin(), qy.end());
        out = fused(p, "QLinearSoftmax", "com.microsoft", in, q);
        const int64_t opset = u.g.opset("");
        out.attrs.set("opset", opset >= 13 ? int64_t{13} : (opset >= 11 ? int64_t{11} : int64_t{1}));
        return true;
    }
    if (op == "Concat") {
        std::vector<std::string> in = qy;
        for (size_t i = 0; i < p.inputs.size(); ++i) {
            const Node* x = dq(i);
            if (!act_ok(x)) return false;
            for (auto& s : triple(*x)) in.push_back(s);
        }
        out = fused(p, "QLinearConcat", "com.microsoft", in, q);
        return true;
    }
    static const std::set<std::string> kDrop{"MaxPool", "Reshape", "Transpose", "Squeeze", "Unsqueeze",
                                             "Flatten", "Slice", "Gather", "Identity", "Resize"};
    if (kDrop.count(op)) {
        const Node* x = dq(0);
        if (!x || !same_quant(u.g, *x, q)) return false;
        if (op == "Resize" && attr_string(p.attrs, "mode", "nearest") != "nearest") return false;
        if (op == "MaxPool" && p.outputs.size() > 1 && !p.outputs[1].empty()) return false;
        out = p;
        out.inputs[0] = x->input(0);
        out.outputs = {q.outputs[0]};
        return true;
    }
    return false;
}

/// Records `p` on value `name` unless it already carries different parameters (two different
/// quantizations of one tensor: the first stays, the nodes stay explicit).
void record(Graph& g, const std::string& name, const num::QuantParams& p) {
    Value* v = g.find_value(name);
    if (!v || !v->shape_known || p.empty()) return;
    if (!v->quant.empty() && (v->quant.scale != p.scale || v->quant.zero_point != p.zero_point)) return;
    v->quant = p;
    if (v->is_constant()) v->data->quant = p;
}

/// Quantization of the (x, scale, zero point) triple at inputs [x_at, x_at + 2] of a QLinear op;
/// per-axis scales apply along `axis`.
bool triple_params(const Graph& g, const Node& n, size_t s_at, int axis, num::QuantParams& p) {
    Node view;
    view.name = n.name;
    view.op_type = n.op_type;
    view.inputs = {"", n.input(s_at), n.input(s_at + 1)};
    view.attrs.set("axis", static_cast<int64_t>(axis));
    return quant_params_of(g, view, 0, p);
}

/// The quantized tensors of the QOperator format (seed 002 signatures): (value, scale index, axis).
std::vector<std::tuple<std::string, size_t, int>> qoperator_tensors(const Node& n) {
    const std::string& op = n.op_type;
    const std::string y = n.outputs.empty() ? std::string() : n.outputs[0];
    if (op == "QLinearConv" || op == "QLinearMatMul")
        return {{n.input(0), 1, 1}, {n.input(3), 4, op == "QLinearConv" ? 0 : 1}, {y, 6, 1}};
    if (op == "QLinearAdd" || op == "QLinearMul") return {{n.input(0), 1, 1}, {n.input(3), 4, 1}, {y, 6, 1}};
    if (op == "QGemm") {
        std::vector<std::tuple<std::string, size_t, int>> t{{n.input(0), 1, 1}, {n.input(3), 4, 0}};
        if (n.has_input(7)) t.push_back({y, 7, 1});
        return t;
    }
    if (op == "QLinearGlobalAveragePool" || op == "QLinearAveragePool" || op == "QLinearSigmoid" ||
        op == "QLinearLeakyRelu" || op == "QLinearSoftmax" || op == "QLinearReduceMean")
        return {{n.input(0), 1, 1}, {y, 3, 1}};
    if (op == "QLinearConcat") {
        std::vector<std::tuple<std::string, size_t, int>> t{{y, 0, 1}};
        for (size_t k = 2; k + 2 < n.inputs.size() + 1; k += 3) t.push_back({n.input(k), k + 1, 1});
        return t;
    }
    return {};
}

/// Data-movement ops whose int8 output carries its input's quantization (onnxruntime runs them on
/// the quantized tensor in the QOperator format).
bool keeps_quant(const Node& n) {
    static const std::set<std::string> k{"MaxPool", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose",
                                         "Identity", "Slice", "Resize", "Gather", "Split", "DepthToSpace",
                                         "SpaceToDepth", "Upsample"};
    return n.domain.empty() && k.count(n.op_type);
}

void annotate(Graph& g) {
    for (const auto& n : g.nodes()) {
        if (is_q(n) || is_dq(n)) {
            const std::string& qname = is_q(n) ? n.outputs[0] : n.input(0);
            const Value* v = g.find_value(qname);
            num::QuantParams p;
            if (v && v->shape_known && quant_params_of(g, n, v->shape.size(), p)) record(g, qname, p);
            continue;
        }
        for (const auto& [name, s_at, axis] : qoperator_tensors(n)) {
            num::QuantParams p;
            const Value* v = g.find_value(name);
            if (!v || !is_int8ish(v->dtype) || !triple_params(g, n, s_at, axis, p)) continue;
            record(g, name, p);
        }
    }
    // Through data movement, in node order (the graph is sorted): output = input quantization.
    for (const auto& n : g.nodes()) {
        if (!keeps_quant(n) || !n.has_input(0)) continue;
        const Value* x = g.find_value(n.input(0));
        if (!x || !is_int8ish(x->dtype) || x->quant.empty() || x->quant.per_axis()) continue;
        for (const auto& o : n.outputs) {
            const Value* y = o.empty() ? nullptr : g.find_value(o);
            if (y && y->dtype == x->dtype && y->quant.empty()) record(g, o, x->quant);
        }
    }
}

}  // namespace

bool quant_params_of(const Graph& g, const Node& qdq, size_t rank, num::QuantParams& out) {
    const Value* s = g.find_value(qdq.input(1));
    if (!s || !s->is_constant() || s->data->dtype() != num::DType::F32) return false;
    num::QuantParams p;
    p.scale.assign(s->data->data<float>(), s->data->data<float>() + s->data->numel());
    if (p.scale.empty()) throw GraphError(qdq.label() + ": empty scale");
    for (float f : p.scale)
        if (!(f > 0.0f) || !std::isfinite(f)) throw GraphError(qdq.label() + ": scale must be positive and finite");
    if (qdq.has_input(2)) {
        const Value* z = g.find_value(qdq.input(2));
        if (!z || !z->is_constant()) return false;
        p.zero_point = ints_as_i32(*z->data);
        if (p.zero_point.size() != p.scale.size()) throw GraphError(qdq.label() + ": scale and zero point sizes differ");
    } else {
        p.zero_point.assign(p.scale.size(), 0);
    }
    if (p.scale.size() > 1) {
        int64_t axis = attr_int(qdq.attrs, "axis", 1);
        if (rank && axis < 0) axis += static_cast<int64_t>(rank);
        p.axis = static_cast<int>(axis);
    }
    out = std::move(p);
    return true;
}

namespace {
void remove_clamps(Units& u) {
    for (size_t i = 0; i < u.g.nodes().size(); ++i)
        if (is_q(u.g.nodes()[i])) remove_clamp_before_q(u, i);
    // The use counts follow every bypass; node indices change only when nodes go.
    if (u.g.remove_dead_nodes()) u.refresh();
}
}  // namespace

void remove_clamps_before_q(Graph& g) {
    Units u(g, false);
    remove_clamps(u);
}

void fold_qdq(Graph& g, bool rewrite, bool x86_64, bool ort_rewrites) {
    if (rewrite && ort_rewrites) {  // onnxruntime's rewrites ahead of its QDQ fusions (qdq_ort.cpp), in its order
        qdq::ensure_unique_dq(g);
        bool changed = qdq::propagate_qdq(g);
        changed |= qdq::quantize_weight_bias(g);
        if (changed) qdq::ensure_unique_dq(g);  // else a no-op: the first made every DQ single-use
        if (x86_64) qdq::s8_to_u8(g);
        g.sort_topologically();
    }
    annotate(g);
    if (!rewrite) return;
    Units u(g, x86_64);
    remove_clamps(u);
    std::vector<bool> erase(g.nodes().size(), false);
    for (size_t qi = 0; qi < g.nodes().size(); ++qi) {
        const Node& q = g.nodes()[qi];
        if (!is_q(q) || !u.prod(q.input(0))) continue;
        size_t pi = u.producer.at(q.input(0));
        const Node& p = g.nodes()[pi];
        if (p.outputs.size() != 1 && p.op_type != "MaxPool") continue;
        if (!u.single_use(q.input(0)) || erase[pi]) continue;
        Node f;
        if (!fuse_unit(u, p, q, f)) continue;
        g.nodes()[pi] = std::move(f);
        erase[qi] = true;
    }
    std::vector<Node> kept;
    kept.reserve(g.nodes().size());
    for (size_t i = 0; i < g.nodes().size(); ++i)
        if (!erase[i]) kept.push_back(std::move(g.nodes()[i]));
    g.nodes() = std::move(kept);
    g.remove_dead_nodes();
    g.sort_topologically();
}

}  // namespace drv::ir
