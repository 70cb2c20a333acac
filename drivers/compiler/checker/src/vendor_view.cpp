// SPDX-License-Identifier: MIT
// The graph as the vendor toolchain's checker sees it (check_model in checker.h): the fused integer
// ops of the QDQ rewrite turned back into the ONNX ops the spec DB describes, Q/DQ folded into
// quantized tensors, uint8 activations shown as the int8 RKNN stores (zero point - 128), then the
// graph rewrites the vendor compiler applies before its operator checks, each named on the nodes it
// touches: Identity removed, Flatten/Squeeze/Unsqueeze as Reshape, decomposed SiLU / HardSwish / GELU
// recognised, Gemm/MatMul with a constant B as a 1x1 Conv, BatchNormalization after a Conv folded,
// Div/Sub by a constant as Mul/Add, scalar-constant Add/Mul folded into a preceding Conv or run as a
// per-tensor affine (BatchNormalization). Conv + activation fusions are the spec's own fused
// operators (ConvolutionRelu, ...), matched by the rule engine.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "checker/checker.h"

namespace drv::check {

namespace {

constexpr size_t kStandInAbove = 4096;  // constants above this many elements keep only their shape

struct WNode {
    ir::Node node;
    std::vector<size_t> sources;  // source node indices; [0] is the one the results are reported on
    bool dead = false;
};

bool is_int(num::DType t) {
    return t == num::DType::I8 || t == num::DType::U8 || t == num::DType::I16 || t == num::DType::U16 ||
           t == num::DType::I32;
}

class Builder {
   public:
    explicit Builder(const ir::Graph& src) : src_(src), rewrites_(src.nodes().size()), folded_(src.nodes().size(), -1) {
        for (const auto& [name, val] : src.values()) {
            ir::Value c = val;
            if (val.is_constant() && val.data->numel() > kStandInAbove) c.data = num::Tensor(val.dtype, {1});
            g_.add_value(std::move(c));
        }
        for (size_t i = 0; i < src.nodes().size(); ++i) w_.push_back({src.nodes()[i], {i}, false});
    }

    VendorGraph build();

   private:
    const ir::Graph& src_;
    ir::Graph g_;  // values only; nodes live in w_
    std::vector<WNode> w_;
    std::vector<std::vector<std::string>> rewrites_;  // per source node
    std::vector<int> folded_;                         // per source node: source node it was folded into
    std::map<std::string, std::string> ren_;          // removed value -> the value standing for it
    std::map<size_t, std::string> folded_reason_;     // source node -> why it was folded (Q/DQ)

    // ---- graph access ----------------------------------------------------------------------
    std::map<std::string, size_t> producers() const {
        std::map<std::string, size_t> p;
        for (size_t i = 0; i < w_.size(); ++i)
            if (!w_[i].dead)
                for (const auto& o : w_[i].node.outputs) p[o] = i;
        return p;
    }
    std::map<std::string, std::vector<size_t>> consumers() const {
        std::map<std::string, std::vector<size_t>> c;
        for (size_t i = 0; i < w_.size(); ++i)
            if (!w_[i].dead)
                for (const auto& in : w_[i].node.inputs)
                    if (!in.empty()) c[in].push_back(i);
        return c;
    }
    /// `reader` is the one node reading v, which is not a graph output.
    bool sole_reader(const std::map<std::string, std::vector<size_t>>& cons, const std::string& v, size_t reader) const {
        auto c = cons.find(v);
        return c != cons.end() && c->second.size() == 1 && c->second[0] == reader && !graph_output(v);
    }
    std::vector<int64_t> shape_of(const std::string& v) const {
        const ir::Value* x = g_.find_value(v);
        return x ? x->shape : std::vector<int64_t>{};
    }
    bool graph_output(const std::string& v) const {
        return std::find(src_.outputs().begin(), src_.outputs().end(), v) != src_.outputs().end();
    }
    const num::Tensor* constant(const std::string& v) const {
        const ir::Value* x = g_.find_value(v);
        return x && x->is_constant() ? &*x->data : nullptr;
    }
    /// Scalar float value of a (small) constant, or NaN.
    double scalar(const std::string& v) const {
        const num::Tensor* t = constant(v);
        if (!t || t->numel() != 1) return std::nan("");
        switch (t->dtype()) {
            case num::DType::F32: return t->data<float>()[0];
            case num::DType::I8: return t->data<int8_t>()[0];
            case num::DType::U8: return t->data<uint8_t>()[0];
            case num::DType::I32: return t->data<int32_t>()[0];
            case num::DType::I64: return static_cast<double>(t->data<int64_t>()[0]);
            default: return std::nan("");
        }
    }
    void note(const WNode& n, const std::string& what) {
        for (size_t s : n.sources) rewrites_[s].push_back(what);
    }
    /// Node `gone` is absorbed by `into`: its sources report through into's primary source.
    void absorb(size_t gone, size_t into, const std::string& what, bool record = true) {
        if (record) {
            note(w_[gone], what);
            note(w_[into], what);
        } else {
            for (size_t s : w_[gone].sources) folded_reason_.emplace(s, what);  // the first reason stays
        }
        for (size_t s : w_[gone].sources) {
            folded_[s] = static_cast<int>(w_[into].sources[0]);
            w_[into].sources.push_back(s);
        }
        w_[gone].dead = true;
    }
    void rename_inputs() {
        auto res = [&](std::string v) {
            for (int guard = 0; guard < 64; ++guard) {
                auto it = ren_.find(v);
                if (it == ren_.end()) break;
                v = it->second;
            }
            return v;
        };
        for (auto& n : w_)
            for (auto& in : n.node.inputs)
                if (!in.empty()) in = res(in);
        for (auto& o : outputs_) o = res(o);
    }
    std::vector<std::string> outputs_;

    // ---- phases ------------------------------------------------------------------------------
    void back_map();
    void fold_qdq();
    void show_int8();
    void remove_identity();
    void views_as_reshape();
    void exmatmul_operands();
    void channel_shuffle();
    void nearest_resize_modes();
    void layer_norm();
    void activations();
    void gemm_as_conv();
    void fold_bn();
    void const_div_sub();
    void scalar_eltwise();

    bool silu(size_t i, const std::map<std::string, size_t>& prod, const std::map<std::string, std::vector<size_t>>& cons);
    bool hardswish(size_t i, const std::map<std::string, size_t>& prod, const std::map<std::string, std::vector<size_t>>& cons);
    bool gelu(size_t i, const std::map<std::string, size_t>& prod, const std::map<std::string, std::vector<size_t>>& cons);
    std::string new_value(const std::string& base, num::DType dt, std::vector<int64_t> shape, const num::QuantParams& q,
                          bool constant);
};

std::string Builder::new_value(const std::string& base, num::DType dt, std::vector<int64_t> shape,
                               const num::QuantParams& q, bool constant) {
    std::string name = base;
    for (int k = 1; g_.find_value(name); ++k) name = base + "_" + std::to_string(k);
    ir::Value v;
    v.name = name;
    v.dtype = dt;
    v.shape = std::move(shape);
    v.shape_known = true;
    v.quant = q;
    if (constant) {
        v.data = num::Tensor(dt, {1});
        v.data->quant = q;
    }
    g_.add_value(std::move(v));
    return name;
}

// The QDQ rewrite's fused ops as the ONNX op the spec describes, with the inputs it names.
void Builder::back_map() {
    static const std::map<std::string, std::pair<std::string, std::vector<size_t>>> back = {
        {"QLinearConv", {"Conv", {0, 3, 8}}},
        {"QLinearMatMul", {"MatMul", {0, 3}}},
        {"com.microsoft.QLinearConv", {"Conv", {0, 3, 8}}},
        {"com.microsoft.QLinearMatMul", {"MatMul", {0, 3}}},
        {"com.microsoft.QLinearAdd", {"Add", {0, 3}}},
        {"com.microsoft.QLinearMul", {"Mul", {0, 3}}},
        {"com.microsoft.QGemm", {"Gemm", {0, 3, 6}}},
        {"com.microsoft.QLinearGlobalAveragePool", {"GlobalAveragePool", {0}}},
        {"com.microsoft.QLinearAveragePool", {"AveragePool", {0}}},
        {"com.microsoft.QLinearSigmoid", {"Sigmoid", {0}}},
        {"com.microsoft.QLinearLeakyRelu", {"LeakyRelu", {0}}},
        {"com.microsoft.QLinearSoftmax", {"Softmax", {0}}},
        {"npusim.QLinearSub", {"Sub", {0, 3}}},  // the RKNPU compiler's two-tensor units (issue 15)
        {"npusim.QLinearConvTranspose", {"ConvTranspose", {0, 3, 8}}},
        {"npusim.QLinearMax", {"Max", {0, 3}}},
        {"npusim.QLinearMin", {"Min", {0, 3}}},
    };
    for (auto& w : w_) {
        ir::Node& n = w.node;
        const std::string key = n.domain.empty() ? n.op_type : n.domain + "." + n.op_type;
        if (auto it = back.find(key); it != back.end()) {
            const ir::Node orig = n;
            n.op_type = it->second.first;
            n.domain.clear();
            n.inputs.clear();
            for (size_t k : it->second.second)
                if (orig.has_input(k)) n.inputs.push_back(orig.input(k));
        } else if (key == "com.microsoft.QLinearConcat") {
            const ir::Node orig = n;
            n.op_type = "Concat";
            n.domain.clear();
            n.inputs.clear();
            for (size_t k = 2; k < orig.inputs.size(); k += 3) n.inputs.push_back(orig.inputs[k]);
        }
    }
}

// Q/DQ pairs with constant parameters fold into quantized tensors (as check::quantized_view).
void Builder::fold_qdq() {
    const auto prod = producers();
    const auto cons = consumers();
    std::map<std::string, const ir::Value*> quantize_to;
    for (size_t i = 0; i < w_.size(); ++i) {
        ir::Node& n = w_[i].node;
        if (!n.domain.empty() || n.outputs.size() != 1 || n.inputs.empty()) continue;
        const bool dq = n.op_type == "DequantizeLinear", q = n.op_type == "QuantizeLinear";
        if (!dq && !q) continue;
        const ir::Value* iv = g_.find_value(dq ? n.inputs[0] : n.outputs[0]);
        if (!iv || !is_int(iv->dtype) || !iv->is_quantized()) continue;
        ren_[n.outputs[0]] = n.inputs[0];
        if (q) quantize_to[n.inputs[0]] = iv;
        // Reported through the op it feeds (DQ) or the op whose output it quantizes (Q).
        int into = -1;
        if (q) {
            auto p = prod.find(n.inputs[0]);
            if (p != prod.end()) into = static_cast<int>(p->second);
        }
        if (into < 0) {
            auto c = cons.find(n.outputs[0]);
            if (c != cons.end() && !c->second.empty()) into = static_cast<int>(c->second[0]);
        }
        const std::string what = dq ? "DequantizeLinear folded into a quantized tensor"
                                    : "QuantizeLinear folded into a quantized tensor";
        if (into >= 0) {
            absorb(i, static_cast<size_t>(into), what, false);  // a representation, not a vendor rewrite
        } else {
            for (size_t src : w_[i].sources) folded_reason_[src] = what;
            w_[i].dead = true;
        }
    }
    for (const auto& [name, qv] : quantize_to) {
        ir::Value& v = g_.value(name);
        v.dtype = qv->dtype;
        v.quant = qv->quant;
    }
    rename_inputs();
}

// RKNN stores asymmetric uint8 as int8 shifted by -128 (same real values).
void Builder::show_int8() {
    for (const auto& [name, val] : src_.values()) {
        ir::Value& c = g_.value(name);
        if (!c.is_constant() && c.dtype == num::DType::U8 && c.is_quantized()) {
            c.dtype = num::DType::I8;
            for (auto& z : c.quant.zero_point) z -= 128;
        }
    }
}

void Builder::remove_identity() {
    for (size_t i = 0; i < w_.size(); ++i) {
        WNode& w = w_[i];
        if (w.dead || !w.node.domain.empty() || w.node.inputs.empty()) continue;
        const bool dropout = w.node.op_type == "Dropout" && (w.node.outputs.size() < 2 || w.node.outputs[1].empty());
        if (w.node.op_type != "Identity" && !dropout) continue;
        if (graph_output(w.node.outputs[0])) continue;
        ren_[w.node.outputs[0]] = w.node.inputs[0];
        note(w, w.node.op_type + " removed");
        w.dead = true;
    }
    rename_inputs();
}

void Builder::views_as_reshape() {
    for (auto& w : w_) {
        ir::Node& n = w.node;
        if (w.dead || !n.domain.empty()) continue;
        if (n.op_type != "Flatten" && n.op_type != "Squeeze" && n.op_type != "Unsqueeze") continue;
        note(w, n.op_type + " -> Reshape");
        n.op_type = "Reshape";
        n.inputs.resize(1);
        n.attrs = num::Attributes();
    }
}

// x * Sigmoid(x) -> Swish (exSwish, SiLU).
bool Builder::silu(size_t i, const std::map<std::string, size_t>& prod, const std::map<std::string, std::vector<size_t>>& cons) {
    ir::Node& m = w_[i].node;
    for (int side = 0; side < 2; ++side) {
        auto p = prod.find(m.input(static_cast<size_t>(side)));
        if (p == prod.end()) continue;
        const WNode& s = w_[p->second];
        if (s.node.op_type != "Sigmoid" || s.node.input(0) != m.input(static_cast<size_t>(1 - side))) continue;
        if (cons.at(s.node.outputs[0]).size() != 1 || graph_output(s.node.outputs[0])) continue;
        const std::string x = s.node.input(0);
        absorb(p->second, i, "x * Sigmoid(x) -> exSwish (SiLU)");
        m.op_type = "Swish";
        m.inputs = {x};
        return true;
    }
    return false;
}

// x * Clip(x + 3, 0, 6) / 6 (or * 1/6, either order), x * HardSigmoid(x) -> HardSwish.
bool Builder::hardswish(size_t i, const std::map<std::string, size_t>& prod,
                        const std::map<std::string, std::vector<size_t>>& cons) {
    ir::Node& top = w_[i].node;
    auto node_of = [&](const std::string& v) -> WNode* {
        auto p = prod.find(v);
        return p == prod.end() ? nullptr : &w_[p->second];
    };
    auto single = [&](const WNode* n) {
        return n && cons.count(n->node.outputs[0]) && cons.at(n->node.outputs[0]).size() == 1 &&
               !graph_output(n->node.outputs[0]);
    };
    auto near = [](double a, double b) { return std::isfinite(a) && std::fabs(a - b) <= 1e-3 * std::fabs(b); };
    // Clip(x + 3, 0, 6) -> x, or "" when `c` is not that.
    auto relu6_x_plus_3 = [&](WNode* c) -> std::string {
        if (!single(c) || c->node.op_type != "Clip") return "";
        const double lo = c->node.has_input(1) ? scalar(c->node.input(1)) : c->node.attrs.get_float("min", -1e9f);
        const double hi = c->node.has_input(2) ? scalar(c->node.input(2)) : c->node.attrs.get_float("max", 1e9f);
        if (!near(lo + 1, 1) || !near(hi, 6)) return "";
        WNode* a = node_of(c->node.input(0));
        if (!single(a) || a->node.op_type != "Add") return "";
        for (int s = 0; s < 2; ++s)
            if (near(scalar(a->node.input(static_cast<size_t>(s))), 3)) return a->node.input(static_cast<size_t>(1 - s));
        return "";
    };
    // Dividing by 6: Div(v, 6) or Mul(v, 1/6) -> v.
    auto by_six = [&](const ir::Node& n) -> std::string {
        if (n.op_type == "Div" && near(scalar(n.input(1)), 6)) return n.input(0);
        if (n.op_type == "Mul")
            for (int s = 0; s < 2; ++s)
                if (near(scalar(n.input(static_cast<size_t>(s))), 1.0 / 6)) return n.input(static_cast<size_t>(1 - s));
        return "";
    };
    std::vector<size_t> parts;
    std::string x;
    auto idx = [&](const WNode* n) { return static_cast<size_t>(n - w_.data()); };
    if (top.op_type == "Mul") {
        for (int s = 0; s < 2 && x.empty(); ++s) {
            const std::string other = top.input(static_cast<size_t>(1 - s));
            WNode* hs = node_of(top.input(static_cast<size_t>(s)));
            if (single(hs) && hs->node.op_type == "HardSigmoid" && hs->node.input(0) == other &&
                near(hs->node.attrs.get_float("alpha", 0.2f), 1.0 / 6) && near(hs->node.attrs.get_float("beta", 0.5f), 0.5)) {
                x = other, parts = {idx(hs)};
            } else if (single(hs)) {  // x * (Clip(x + 3, 0, 6) / 6)
                const std::string c = by_six(hs->node);
                WNode* clip = c.empty() ? nullptr : node_of(c);
                if (clip && relu6_x_plus_3(clip) == other)
                    x = other, parts = {idx(node_of(clip->node.input(0))), idx(clip), idx(hs)};
            }
        }
    }
    if (x.empty()) {  // (x * Clip(x + 3, 0, 6)) / 6
        const std::string m = by_six(top);
        WNode* mul = m.empty() ? nullptr : node_of(m);
        if (single(mul) && mul->node.op_type == "Mul")
            for (int s = 0; s < 2 && x.empty(); ++s) {
                WNode* clip = node_of(mul->node.input(static_cast<size_t>(s)));
                const std::string other = mul->node.input(static_cast<size_t>(1 - s));
                if (clip && relu6_x_plus_3(clip) == other)
                    x = other, parts = {idx(node_of(clip->node.input(0))), idx(clip), idx(mul)};
            }
    }
    if (x.empty()) return false;
    for (size_t p : parts) absorb(p, i, "x * Clip(x + 3, 0, 6) / 6 -> HardSwish");
    top.op_type = "HardSwish";
    top.inputs = {x};
    top.attrs = num::Attributes();
    return true;
}

// 0.5 * x * (1 + Erf(x / sqrt(2))) -> Gelu (exGelu), as torch.onnx exports nn.GELU().
bool Builder::gelu(size_t i, const std::map<std::string, size_t>& prod, const std::map<std::string, std::vector<size_t>>& cons) {
    ir::Node& top = w_[i].node;
    if (top.op_type != "Mul") return false;
    auto node_of = [&](const std::string& v) -> WNode* {
        auto p = prod.find(v);
        return p == prod.end() ? nullptr : &w_[p->second];
    };
    auto single = [&](const WNode* n) {
        return n && cons.count(n->node.outputs[0]) && cons.at(n->node.outputs[0]).size() == 1 &&
               !graph_output(n->node.outputs[0]);
    };
    auto near = [](double a, double b) { return std::isfinite(a) && std::fabs(a - b) <= 1e-3 * std::fabs(b); };
    auto idx = [&](const WNode* n) { return static_cast<size_t>(n - w_.data()); };
    // 1 + Erf(x / sqrt 2) -> x
    auto one_plus_erf = [&](WNode* a, std::vector<size_t>& parts) -> std::string {
        if (!single(a) || a->node.op_type != "Add") return "";
        for (int s = 0; s < 2; ++s) {
            if (!near(scalar(a->node.input(static_cast<size_t>(1 - s))), 1)) continue;
            WNode* e = node_of(a->node.input(static_cast<size_t>(s)));
            if (!single(e) || e->node.op_type != "Erf") continue;
            WNode* d = node_of(e->node.input(0));
            if (!single(d)) continue;
            const bool div = d->node.op_type == "Div" && near(scalar(d->node.input(1)), std::sqrt(2.0));
            const bool mul = d->node.op_type == "Mul" && near(scalar(d->node.input(1)), 1 / std::sqrt(2.0));
            if (!div && !mul) continue;
            parts = {idx(d), idx(e), idx(a)};
            return d->node.input(0);
        }
        return "";
    };
    for (int s = 0; s < 2; ++s) {
        std::vector<size_t> parts;
        const std::string l = top.input(static_cast<size_t>(s)), r = top.input(static_cast<size_t>(1 - s));
        if (near(scalar(r), 0.5)) {  // (x * (1 + erf)) * 0.5
            WNode* m = node_of(l);
            if (!single(m) || m->node.op_type != "Mul") continue;
            for (int t = 0; t < 2; ++t) {
                const std::string x = one_plus_erf(node_of(m->node.input(static_cast<size_t>(t))), parts);
                if (x.empty() || x != m->node.input(static_cast<size_t>(1 - t))) continue;
                parts.push_back(idx(m));
                for (size_t p : parts) absorb(p, i, "0.5 * x * (1 + Erf(x / sqrt 2)) -> exGelu");
                top.op_type = "Gelu";
                top.inputs = {x};
                return true;
            }
        } else {  // (x * 0.5) * (1 + erf)
            WNode* h = node_of(l);
            if (!single(h) || h->node.op_type != "Mul") continue;
            const std::string x = one_plus_erf(node_of(r), parts);
            if (x.empty()) continue;
            const bool half = (h->node.input(0) == x && near(scalar(h->node.input(1)), 0.5)) ||
                              (h->node.input(1) == x && near(scalar(h->node.input(0)), 0.5));
            if (!half) continue;
            parts.push_back(idx(h));
            for (size_t p : parts) absorb(p, i, "0.5 * x * (1 + Erf(x / sqrt 2)) -> exGelu");
            top.op_type = "Gelu";
            top.inputs = {x};
            return true;
        }
    }
    return false;
}

void Builder::activations() {
    for (bool changed = true; changed;) {
        changed = false;
        const auto prod = producers();
        const auto cons = consumers();
        for (size_t i = 0; i < w_.size() && !changed; ++i) {
            if (w_[i].dead || !w_[i].node.domain.empty()) continue;
            const std::string& op = w_[i].node.op_type;
            if (op != "Mul" && op != "Div") continue;
            changed = hardswish(i, prod, cons) || gelu(i, prod, cons) || (op == "Mul" && silu(i, prod, cons));
        }
    }
}

// MatMul of two activations in the seed's exMatMul form (A [1,K,1,N], B [1,K,1,M], Y [1,N,M]) as
// a PyTorch export of [batch, channels, time] code writes Q^T K: A through Reshape to [1,K,N] and
// Transpose (0, 2, 1), B through Reshape to [1,K,M]. The operands' Reshape / Transpose (layout only:
// exMatMul reads A transposed) fold into the MatMul. ASSUMPTION (not public): RKNN's exMatMul
// absorbs them the same way.
void Builder::exmatmul_operands() {
    auto prod = producers();
    const auto cons = consumers();
    auto only = [&](const std::string& v, size_t reader) { return sole_reader(cons, v, reader); };
    auto shape = [&](const std::string& v) { return shape_of(v); };
    auto reshape_of_4d = [&](const std::string& v3, size_t reader, int& at) {  // Reshape [1,C,1,W] -> [1,C,W]
        auto p = prod.find(v3);
        if (p == prod.end() || w_[p->second].node.op_type != "Reshape" || !only(v3, reader)) return false;
        const auto s4 = shape(w_[p->second].node.input(0)), s3 = shape(v3);
        at = static_cast<int>(p->second);
        return s4.size() == 4 && s3.size() == 3 && s4[0] == 1 && s4[2] == 1 && s3[0] == 1 && s3[1] == s4[1] &&
               s3[2] == s4[3];
    };
    for (size_t i = 0; i < w_.size(); ++i) {
        const ir::Node& n = w_[i].node;
        if (w_[i].dead || !n.domain.empty() || n.op_type != "MatMul" || n.inputs.size() != 2 || constant(n.input(1)))
            continue;
        auto t = prod.find(n.input(0));
        if (t == prod.end() || !only(n.input(0), i)) continue;
        const ir::Node& tr = w_[t->second].node;
        if (tr.op_type != "Transpose" || tr.attrs.get_ints("perm", {}) != std::vector<int64_t>{0, 2, 1}) continue;
        int ra = -1, rb = -1;
        if (!reshape_of_4d(tr.input(0), t->second, ra) || !reshape_of_4d(n.input(1), i, rb)) continue;
        const std::string what = "Reshape / Transpose of exMatMul's operands folded into it (A [1,K,1,N], B [1,K,1,M])";
        for (size_t gone : {t->second, static_cast<size_t>(ra), static_cast<size_t>(rb)}) absorb(gone, i, what, false);
        note(w_[i], what);
        prod = producers();
    }
}

// The channel shuffle of ShuffleNet (PyTorch's channel_shuffle: view [1,g,C/g,H,W], transpose(1, 2),
// view [1,C,H,W]) as the one channel permutation it is: a Gather along axis 1 with constant indices,
// output channel c g + k = input channel k C/g + c. ASSUMPTION (not public): RKNN's graph optimiser
// turns the rank-5 Reshape / Transpose / Reshape into one rank-4 op the same way (A-SHUFFLE in
// drivers/compiler/rknpu/COMPILER.md); its single ops keep their rank-4 rules.
void Builder::channel_shuffle() {
    auto prod = producers();
    const auto cons = consumers();
    auto only = [&](const std::string& v, size_t reader) { return sole_reader(cons, v, reader); };
    auto shape = [&](const std::string& v) { return shape_of(v); };
    for (size_t i = 0; i < w_.size(); ++i) {
        ir::Node& n = w_[i].node;
        if (w_[i].dead || !n.domain.empty() || n.op_type != "Reshape" || n.inputs.empty() || n.outputs.size() != 1) continue;
        auto t = prod.find(n.input(0));
        if (t == prod.end() || !only(n.input(0), i)) continue;
        const ir::Node& tr = w_[t->second].node;
        if (tr.op_type != "Transpose" || !tr.domain.empty() ||
            tr.attrs.get_ints("perm", {}) != std::vector<int64_t>{0, 2, 1, 3, 4})
            continue;
        auto r = prod.find(tr.input(0));
        if (r == prod.end() || !only(tr.input(0), t->second)) continue;
        const ir::Node& r1 = w_[r->second].node;
        if (r1.op_type != "Reshape" || !r1.domain.empty() || r1.inputs.empty()) continue;
        const auto s4 = shape(r1.input(0)), s5 = shape(tr.input(0)), y = shape(n.outputs[0]);
        if (s4.size() != 4 || s5.size() != 5 || y != s4 || s4[0] != 1 || s5[0] != 1 || s5[1] * s5[2] != s4[1] ||
            s5[3] != s4[2] || s5[4] != s4[3])
            continue;
        const std::string x = r1.input(0);
        const std::string what = "channel shuffle (Reshape / Transpose / Reshape) as one channel permutation (Gather, axis 1)";
        const size_t rt = t->second, rr = r->second;
        absorb(rr, i, what, false);
        absorb(rt, i, what, false);
        note(w_[i], what);
        const std::string idx = new_value(n.name + "/shuffle_indices", num::DType::I64, {s4[1]}, {}, true);
        n.op_type = "Gather";
        n.inputs = {x, idx};
        n.attrs = num::Attributes();
        n.attrs.set("axis", int64_t{1});
        prod = producers();
    }
}

// A nearest Resize by integer factors as PyTorch exports nn.Upsample / F.interpolate (mode
// nearest: coordinate_transformation_mode asymmetric, nearest_mode floor) picks input floor(o / s),
// exactly what half_pixel with round_prefer_floor picks: with o = q s + r (0 <= r < s),
// (o + 0.5) / s - 0.5 = q + (2r + 1 - s) / (2s), whose fraction lies strictly inside (-1/2, 1/2),
// so it rounds to q. The Resize is the seed's mode with other attribute spellings; ASSUMPTION (not
// public, A-NEAREST in drivers/compiler/rknpu/COMPILER.md): RKNN's converter treats it so (its model zoo
// runs PyTorch-exported YOLOv5 / YOLOv8, whose upsamples are these, on the NPU).
void Builder::nearest_resize_modes() {
    const int64_t opset = src_.opset("");
    for (auto& w : w_) {
        ir::Node& n = w.node;
        if (w.dead || !n.domain.empty() || n.op_type != "Resize" || n.inputs.empty() || n.outputs.size() != 1) continue;
        if (opset < 11 || n.attrs.get_string("mode", "nearest") != "nearest") continue;
        if (n.attrs.get_string("coordinate_transformation_mode", "half_pixel") != "asymmetric" ||
            n.attrs.get_string("nearest_mode", "round_prefer_floor") != "floor")
            continue;
        const auto in = shape_of(n.input(0)), out = shape_of(n.outputs[0]);
        if (in.size() != 4 || out.size() != 4 || in[0] != out[0] || in[1] != out[1]) continue;
        bool integer = true;
        for (size_t d = 2; d < 4; ++d) integer = integer && in[d] > 0 && out[d] >= in[d] && out[d] % in[d] == 0;
        if (!integer) continue;
        n.attrs.set("coordinate_transformation_mode", std::string("half_pixel"));
        n.attrs.set("nearest_mode", std::string("round_prefer_floor"));
        note(w, "nearest Resize by integer factors: asymmetric / floor picks the pixels half_pixel / round_prefer_floor "
                "picks (the seed's mode)");
    }
}

// The layer norm PyTorch exports before opset 17 (torch.nn.LayerNorm / hand-written over axis 1):
// (x - ReduceMean(x)) / Sqrt(ReduceMean(Pow(x - ReduceMean(x), 2)) + eps), both ReduceMeans over
// the same axes -> LayerNormalization (the seed's exNorm, axes [1] or [1,2,3] read as axis 1), the
// affine Mul / Add after it left as they are.
void Builder::layer_norm() {
    const auto prod = producers();
    const auto cons = consumers();
    auto node_of = [&](const std::string& v, const char* op) -> int {
        auto p = prod.find(v);
        return p != prod.end() && !w_[p->second].dead && w_[p->second].node.op_type == op && w_[p->second].node.domain.empty()
                   ? static_cast<int>(p->second)
                   : -1;
    };
    auto readers = [&](const std::string& v) {
        auto c = cons.find(v);
        return graph_output(v) || c == cons.end() ? size_t{0} : c->second.size();
    };
    auto near = [](double a, double b) { return std::isfinite(a) && std::fabs(a - b) <= 1e-6 * std::fabs(b); };
    for (size_t i = 0; i < w_.size(); ++i) {
        const ir::Node& div = w_[i].node;
        if (w_[i].dead || !div.domain.empty() || div.op_type != "Div") continue;
        const int sq = node_of(div.input(1), "Sqrt"), sub = node_of(div.input(0), "Sub");
        if (sq < 0 || sub < 0 || readers(div.input(1)) != 1 || readers(div.input(0)) != 2) continue;
        const int add = node_of(w_[static_cast<size_t>(sq)].node.input(0), "Add");
        if (add < 0 || readers(w_[static_cast<size_t>(add)].node.outputs[0]) != 1) continue;
        const ir::Node& a = w_[static_cast<size_t>(add)].node;
        const int k = std::isfinite(scalar(a.input(1))) ? 0 : 1;  // Add(var, eps) either way round
        const double eps = scalar(a.input(static_cast<size_t>(1 - k)));
        const int var = node_of(a.input(static_cast<size_t>(k)), "ReduceMean");
        if (!(eps > 0) || var < 0 || readers(a.input(static_cast<size_t>(k))) != 1) continue;
        const int pw = node_of(w_[static_cast<size_t>(var)].node.input(0), "Pow");
        if (pw < 0 || readers(w_[static_cast<size_t>(var)].node.input(0)) != 1) continue;
        const ir::Node& pn = w_[static_cast<size_t>(pw)].node;
        const ir::Node& sn = w_[static_cast<size_t>(sub)].node;
        if (pn.input(0) != div.input(0) || !near(scalar(pn.input(1)), 2.0)) continue;
        const int mean = node_of(sn.input(1), "ReduceMean");
        if (mean < 0 || readers(sn.input(1)) != 1 || w_[static_cast<size_t>(mean)].node.input(0) != sn.input(0)) continue;
        const auto axes = w_[static_cast<size_t>(mean)].node.attrs.get_ints("axes", {});
        if (axes.empty() || axes != w_[static_cast<size_t>(var)].node.attrs.get_ints("axes", {})) continue;
        const std::string x = sn.input(0);
        const ir::Value* xv = g_.find_value(x);
        const int64_t rank = xv ? static_cast<int64_t>(xv->shape.size()) : 0;
        const int64_t axis = axes[0] < 0 ? axes[0] + rank : axes[0];
        const std::string what = "ReduceMean / Sub / Pow / ReduceMean / Add / Sqrt / Div -> LayerNormalization (exNorm)";
        for (int gone : {mean, sub, pw, var, add, sq}) absorb(static_cast<size_t>(gone), i, what, false);
        note(w_[i], what);  // once per covered node
        ir::Node& top = w_[i].node;
        top.op_type = "LayerNormalization";
        top.inputs = {x};
        top.attrs = num::Attributes();
        top.attrs.set("axis", axis);
        top.attrs.set("epsilon", static_cast<float>(eps));
    }
}

// Gemm / MatMul with a constant 2-D B on a 2-D A -> Conv 1x1 on [N, K, 1, 1] (RKNN runs fully
// connected layers as convolutions). An activation reading the product then reads the conv's 4-D
// output, as in the converted graph: it fuses (ConvolutionRelu, ...) or is checked on [N, M, 1, 1]
// (a classifier's Gemm -> Relu / HardSwish -> Gemm, not a rank-2 tensor the rank rules refuse).
void Builder::gemm_as_conv() {
    static const std::set<std::string> kAct{"Relu",    "Clip",        "LeakyRelu", "PRelu", "Sigmoid", "Tanh",
                                            "HardSwish", "HardSigmoid", "Elu",       "Softplus", "Mish", "Gelu"};
    std::map<std::string, std::string> to4;
    for (auto& w : w_) {
        ir::Node& n = w.node;
        if (w.dead || !n.domain.empty() || (n.op_type != "Gemm" && n.op_type != "MatMul")) continue;
        const ir::Value* a = g_.find_value(n.input(0));
        const ir::Value* b = g_.find_value(n.input(1));
        const ir::Value* y = n.outputs.empty() ? nullptr : g_.find_value(n.outputs[0]);
        if (!a || !b || !y || !b->is_constant() || b->shape.size() != 2 || a->shape.size() != 2) continue;
        const bool gemm = n.op_type == "Gemm";
        if (gemm && (n.attrs.get_int("transA", 0) != 0 || n.attrs.get_float("alpha", 1.0f) != 1.0f)) continue;
        if (gemm && n.has_input(2) && n.attrs.get_float("beta", 1.0f) != 1.0f) continue;
        const bool tb = gemm && n.attrs.get_int("transB", 0) != 0;
        const int64_t N = a->shape[0], K = a->shape[1], M = tb ? b->shape[0] : b->shape[1];
        if ((tb ? b->shape[1] : b->shape[0]) != K) continue;
        num::QuantParams wq = b->quant;
        if (wq.per_axis()) wq.axis = 0;
        const std::string a4 = new_value(a->name + "/nchw", a->dtype, {N, K, 1, 1}, a->quant, false);
        const std::string w4 = new_value(b->name + "/oihw", b->dtype, {M, K, 1, 1}, wq, true);
        const std::string y4 = new_value(y->name + "/nchw", y->dtype, {N, M, 1, 1}, y->quant, false);
        note(w, n.op_type + " with constant B -> 1x1 Conv");
        std::vector<std::string> ins{a4, w4};
        if (gemm && n.has_input(2)) ins.push_back(n.input(2));
        n.op_type = "Conv";
        n.inputs = ins;
        n.outputs = {y4};
        n.attrs = num::Attributes();
        n.attrs.set("kernel_shape", std::vector<int64_t>{1, 1});
        to4[y->name] = y4;
    }
    for (auto& w : w_) {
        if (w.dead || !w.node.domain.empty() || !kAct.count(w.node.op_type) || w.node.inputs.empty()) continue;
        auto it = to4.find(w.node.inputs[0]);
        if (it != to4.end()) w.node.inputs[0] = it->second;
    }
}

void Builder::fold_bn() {
    const auto prod = producers();
    const auto cons = consumers();
    for (size_t i = 0; i < w_.size(); ++i) {
        WNode& bn = w_[i];
        if (bn.dead || bn.node.op_type != "BatchNormalization" || !bn.node.domain.empty()) continue;
        bool params = true;
        for (size_t k = 1; k <= 4; ++k) params &= constant(bn.node.input(k)) != nullptr;
        auto p = prod.find(bn.node.input(0));
        if (!params || p == prod.end() || w_[p->second].node.op_type != "Conv") continue;
        const std::string c = bn.node.input(0);
        if (cons.at(c).size() != 1 || graph_output(c)) continue;
        w_[p->second].node.outputs = bn.node.outputs;
        absorb(i, p->second, "BatchNormalization folded into Conv");
    }
}

void Builder::const_div_sub() {
    for (auto& w : w_) {
        ir::Node& n = w.node;
        if (w.dead || !n.domain.empty() || (n.op_type != "Div" && n.op_type != "Sub")) continue;
        if (!constant(n.input(1)) || constant(n.input(0))) continue;
        note(w, n.op_type == "Div" ? "Div by a constant -> Mul" : "Sub of a constant -> Add");
        n.op_type = n.op_type == "Div" ? "Mul" : "Add";
    }
}

void Builder::scalar_eltwise() {
    const auto prod = producers();
    const auto cons = consumers();
    for (size_t i = 0; i < w_.size(); ++i) {
        WNode& w = w_[i];
        ir::Node& n = w.node;
        if (w.dead || !n.domain.empty() || (n.op_type != "Add" && n.op_type != "Mul")) continue;
        int k = -1;
        for (int s = 0; s < 2; ++s) {
            const num::Tensor* t = constant(n.input(static_cast<size_t>(s)));
            const ir::Value* v = g_.find_value(n.input(static_cast<size_t>(s)));
            if (t && v && v->numel() == 1 && !constant(n.input(static_cast<size_t>(1 - s)))) k = s;
        }
        if (k < 0) continue;
        const std::string x = n.input(static_cast<size_t>(1 - k));
        auto p = prod.find(x);
        if (p != prod.end() && w_[p->second].node.op_type == "Conv" && cons.at(x).size() == 1 && !graph_output(x)) {
            w_[p->second].node.outputs = n.outputs;
            absorb(i, p->second, n.op_type + " of a scalar constant folded into Conv");
            continue;
        }
        const ir::Value& xv = g_.value(x);
        const int64_t c = xv.shape.size() >= 2 ? xv.shape[1] : 1;
        note(w, n.op_type + " of a scalar constant -> per-tensor affine (BatchNormalization)");
        std::vector<std::string> ins{x};
        for (const char* prm : {"scale", "bias", "mean", "var"})
            ins.push_back(new_value(n.name + "/" + prm, num::DType::F32, {c}, {}, true));
        n.op_type = "BatchNormalization";
        n.inputs = ins;
        n.attrs = num::Attributes();
        n.attrs.set("epsilon", 1e-5f);
    }
}

VendorGraph Builder::build() {
    outputs_ = src_.outputs();
    back_map();
    fold_qdq();
    show_int8();
    remove_identity();
    views_as_reshape();
    exmatmul_operands();
    channel_shuffle();
    nearest_resize_modes();
    layer_norm();
    activations();
    gemm_as_conv();
    fold_bn();
    const_div_sub();
    scalar_eltwise();
    rename_inputs();
    VendorGraph v;
    v.rewrites = rewrites_;
    v.folded_reason.assign(src_.nodes().size(), "");
    for (const auto& [k, why] : folded_reason_) v.folded_reason[k] = why;
    v.folded_into = folded_;
    v.vendor_node.assign(src_.nodes().size(), -1);
    for (const auto& [name, val] : g_.values()) v.graph.add_value(val);
    for (auto& w : w_) {
        if (w.dead) continue;
        v.vendor_node[w.sources[0]] = static_cast<int>(v.primary.size());
        v.primary.push_back(w.sources[0]);
        v.graph.add_node(std::move(w.node));
    }
    v.graph.inputs() = src_.inputs();
    v.graph.outputs() = outputs_;
    for (const auto& [d, ver] : src_.opsets()) v.graph.set_opset(d, ver);
    return v;
}

}  // namespace

VendorGraph vendor_graph(const ir::Graph& g) { return Builder(g).build(); }

CheckResult check_model(const ir::Graph& g, const PlatformSpec& spec, const CheckOptions& opts) {
    const VendorGraph v = vendor_graph(g);
    CheckResult vr = check_graph(v.graph, spec, opts);
    std::map<std::string, const NodeResult*> by_name;
    for (const auto& r : vr.nodes) by_name[r.node] = &r;
    CheckResult out;
    out.platform = vr.platform;
    for (size_t s = 0; s < g.nodes().size(); ++s) {
        const ir::Node& n = g.nodes()[s];
        NodeResult r;
        int vi = v.vendor_node[s];
        size_t head = s;
        for (int guard = 0; vi < 0 && v.folded_into[head] >= 0 && guard < 64; ++guard) {
            head = static_cast<size_t>(v.folded_into[head]);
            vi = v.vendor_node[head];
        }
        const NodeResult* hr = vi >= 0 ? by_name.at(v.graph.nodes()[static_cast<size_t>(vi)].name) : nullptr;
        if (vi >= 0 && head == s) {
            r = *hr;
        } else if (hr) {  // folded away by a rewrite: reported through the node it went into
            r.spec_op = hr->spec_op;
            r.heading = hr->heading;
            r.fused_into = g.nodes()[head].name;
            r.verdict = hr->verdict == Verdict::Target ? Verdict::Fused : hr->verdict;
            const std::string why = !v.folded_reason[s].empty() ? v.folded_reason[s]
                                    : v.rewrites[s].empty()     ? std::string("folded")
                                                                : v.rewrites[s].back();
            r.reason = why + " (into " + r.fused_into + ")";
        } else {  // a Q/DQ pair between graph input and output, nothing left to report through
            r.verdict = Verdict::Fused;
            r.reason = !v.folded_reason[s].empty() ? v.folded_reason[s] : std::string("folded");
        }
        r.node = n.name;
        r.op_type = n.domain.empty() ? n.op_type : n.domain + "." + n.op_type;
        r.rewrites = v.rewrites[s];
        out.nodes.push_back(std::move(r));
    }
    return out;
}

}  // namespace drv::check
