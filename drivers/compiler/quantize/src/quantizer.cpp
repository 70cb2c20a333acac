// SPDX-License-Identifier: MIT
// Quantization planner (quantizer.h): which nodes get an integer form, which Relu/Clip fold into
// their producer's quantization, which tensors are quantized, which share parameters (data
// movement, Concat), the calibrated ranges and the resulting scales and zero points.
#include "compiler/quantize/quantizer.h"

#include <algorithm>
#include <cmath>
#include <functional>

#include "numerics/ops.h"
#include "quantize_internal.h"

namespace drv::quant {

using detail::Clamp;
using detail::Kind;
using detail::NodePlan;
using detail::Plan;

namespace {

bool is_act(const ir::Graph& g, const std::string& name) {
    const ir::Value* v = g.find_value(name);
    return v && !v->is_constant() && v->dtype == num::DType::F32;
}
const num::Tensor* f32_const(const ir::Graph& g, const std::string& name) {
    const ir::Value* v = g.find_value(name);
    return v && v->is_constant() && v->dtype == num::DType::F32 ? &*v->data : nullptr;
}
bool is_f32(const ir::Graph& g, const std::string& name) { return is_act(g, name) || f32_const(g, name); }

const std::set<std::string> kDirect{"MaxPool",   "Reshape", "Flatten", "Transpose", "Squeeze",
                                    "Unsqueeze", "Slice",   "Gather",  "Identity",  "Resize"};
/// Quantized with their own output parameters. Besides onnxruntime's QLinear ops (LeakyRelu,
/// Sigmoid), the element-wise functions the NPU runs as one DPU LUT (HardSwish, HardSigmoid, Tanh,
/// Elu, Softplus): RKNN-Toolkit2 quantizes them as it quantizes every op it runs on the NPU, and left
/// float they would keep float the data movement after them (MobileNetV3's head: HardSwish ->
/// Flatten -> Gemm).
const std::set<std::string> kUnary{"GlobalAveragePool", "AveragePool", "LeakyRelu", "Sigmoid", "BatchNormalization",
                                   "HardSwish",         "HardSigmoid", "Tanh",      "Elu",     "Softplus"};

/// Clip bounds (opset >= 11: constant inputs 1/2; earlier: attributes); false when not constant.
bool clip_bounds(const ir::Graph& g, const ir::Node& n, Clamp& c) {
    c = Clamp{};
    if (n.op_type == "Relu") {
        c.lo = 0;
        return true;
    }
    if (g.opset("") < 11) {
        c.lo = ir::attr_float(n.attrs, "min", -3.4028234663852886e38f);
        c.hi = ir::attr_float(n.attrs, "max", 3.4028234663852886e38f);
        return true;
    }
    for (size_t i = 1; i <= 2; ++i) {
        if (!n.has_input(i)) continue;
        const num::Tensor* t = f32_const(g, n.input(i));
        if (!t || t->numel() != 1) return false;
        (i == 1 ? c.lo : c.hi) = t->data<float>()[0];
    }
    return true;
}

NodePlan classify(const ir::Graph& g, const ir::Node& n) {
    NodePlan p;
    p.outputs0 = n.outputs.empty() ? std::string() : n.outputs[0];
    p.label = n.op_type;
    auto floating = [&](const std::string& why) {
        p.kind = Kind::Float;
        p.reason = why;
        return p;
    };
    if (!n.domain.empty()) return floating("domain " + n.domain);
    const std::string& op = n.op_type;
    if (n.outputs.empty() || !is_act(g, n.outputs[0])) return floating("output is not float");
    if (op == "Conv" || op == "ConvTranspose" || op == "Gemm" || op == "MatMul") {
        if (!is_act(g, n.input(0))) return floating("data input is not a float activation");
        const num::Tensor* w = f32_const(g, n.input(1));
        if (op == "MatMul" && !w && is_act(g, n.input(1))) {
            p.kind = Kind::Binary;
            p.data_inputs = {0, 1};
            return p;
        }
        if (!w) return floating("weight is not a float constant");
        const bool conv = op == "Conv" || op == "ConvTranspose";
        if (conv && w->rank() < 3) return floating("weight rank");
        if (!conv && w->rank() != 2) return floating("weight is not a matrix");
        // ConvTranspose weights are [Cin, Cout / group, k...]: the output channels along axis 1, all
        // of them only without groups (RKNN-Toolkit2 quantizes deconvolutions per channel alike).
        if (op == "ConvTranspose" && ir::attr_int(n.attrs, "group", 1) != 1) return floating("grouped ConvTranspose");
        const bool tb = op == "Gemm" && ir::attr_int(n.attrs, "transB", 0) != 0;
        const int64_t channels = op == "Conv" ? w->dim(0) : op == "ConvTranspose" ? w->dim(1) : tb ? w->dim(0) : w->dim(1);
        if (op == "Gemm" &&
            (ir::attr_float(n.attrs, "alpha", 1.f) != 1.f || ir::attr_float(n.attrs, "beta", 1.f) != 1.f))
            return floating("alpha or beta is not 1");
        if (n.has_input(2)) {
            const num::Tensor* b = op == "MatMul" ? nullptr : f32_const(g, n.input(2));
            if (!b || b->rank() != 1 || b->dim(0) != channels)
                return floating("bias is not a constant per output channel");
        }
        p.kind = Kind::Weighted;
        p.data_inputs = {0};
        p.weight_axis = op == "Conv" ? 0 : op == "ConvTranspose" ? 1 : tb ? 0 : 1;
        return p;
    }
    if (op == "Add" || op == "Mul") {
        if (!is_f32(g, n.input(0)) || !is_f32(g, n.input(1))) return floating("input is not float");
        if (!is_act(g, n.input(0)) && !is_act(g, n.input(1))) return floating("both inputs are constant");
        p.kind = Kind::Binary;
        p.data_inputs = {0, 1};
        return p;
    }
    if (op == "Concat") {
        for (size_t i = 0; i < n.inputs.size(); ++i) {
            if (!is_f32(g, n.input(i))) return floating("input is not float");
            p.data_inputs.push_back(i);
        }
        p.kind = Kind::Concat;
        return p;
    }
    if (!is_act(g, n.input(0))) return floating("data input is not a float activation");
    p.data_inputs = {0};
    if (kUnary.count(op)) {
        if (op == "BatchNormalization" && n.outputs.size() > 1) return floating("training-mode outputs");
        p.kind = Kind::Unary;
        return p;
    }
    if (kDirect.count(op)) {
        if (op == "Resize" && ir::attr_string(n.attrs, "mode", "nearest") != "nearest") return floating("not nearest");
        if (op == "MaxPool" && n.outputs.size() > 1 && !n.outputs[1].empty()) return floating("Indices output");
        p.kind = Kind::Direct;
        return p;
    }
    Clamp c;
    if ((op == "Relu" || op == "Clip") && clip_bounds(g, n, c)) {
        p.kind = Kind::Unary;  // may become RemovedClamp
        return p;
    }
    return floating("no integer form");
}

/// Relu/Clip whose input is the single-use output of a quantized node: the producer writes the
/// activation's output instead (onnxruntime QDQRemovableActivation, asymmetric activations).
void remove_clamps(const ir::Graph& g, const Scheme& s, Plan& plan) {
    std::map<std::string, size_t> writer;  // tensor -> node writing it in the QDQ graph
    for (size_t i = 0; i < g.nodes().size(); ++i)
        if (!g.nodes()[i].outputs.empty()) writer[g.nodes()[i].outputs[0]] = i;
    for (size_t i = 0; i < g.nodes().size(); ++i) {
        const ir::Node& n = g.nodes()[i];
        Clamp c;
        if ((n.op_type != "Relu" && n.op_type != "Clip") || !n.domain.empty() || !clip_bounds(g, n, c)) continue;
        if (s.activations.symmetric || c.lo > 0 || c.hi < 0 || plan.nodes[i].kind != Kind::Unary) continue;
        const std::string x = n.input(0);
        auto w = writer.find(x);
        if (w == writer.end()) continue;
        NodePlan& prod = plan.nodes[w->second];
        if (prod.kind != Kind::Weighted && prod.kind != Kind::Binary && prod.kind != Kind::Unary &&
            prod.kind != Kind::Concat)
            continue;
        if (g.consumers(x).size() != 1 || std::count(g.outputs().begin(), g.outputs().end(), x)) continue;
        const std::string y = n.outputs[0];
        Clamp prev = plan.clamps.count(x) ? plan.clamps[x] : Clamp{};
        plan.clamps.erase(x);
        plan.clamps[y] = Clamp{std::max(prev.lo, c.lo), std::min(prev.hi, c.hi)};
        prod.outputs0 = y;
        prod.label += "+" + n.op_type;
        plan.nodes[i].kind = Kind::RemovedClamp;
        writer[y] = w->second;
    }
}

/// Marks the quantized activations and constant activations (see quantizer.h).
void mark_tensors(const ir::Graph& g, Plan& plan, size_t& quantized_nodes) {
    for (size_t i = 0; i < g.nodes().size(); ++i) {
        const ir::Node& n = g.nodes()[i];
        NodePlan& p = plan.nodes[i];
        if (p.kind != Kind::Weighted && p.kind != Kind::Binary && p.kind != Kind::Concat && p.kind != Kind::Unary)
            continue;
        if (p.kind == Kind::Unary && (n.op_type == "Relu" || n.op_type == "Clip")) continue;  // below, like Direct
        for (size_t k : p.data_inputs) (is_act(g, n.input(k)) ? plan.quantized : plan.const_acts).insert(n.input(k));
        plan.quantized.insert(p.outputs0);
    }
    for (size_t i = 0; i < g.nodes().size(); ++i) {  // data movement and kept clamps follow their input
        const ir::Node& n = g.nodes()[i];
        NodePlan& p = plan.nodes[i];
        const bool follows =
            p.kind == Kind::Direct || (p.kind == Kind::Unary && (n.op_type == "Relu" || n.op_type == "Clip"));
        if (!follows) continue;
        if (!plan.quantized.count(n.input(0))) {
            p.kind = Kind::Float;
            p.reason = "input is not quantized";
            continue;
        }
        plan.quantized.insert(p.outputs0);
    }
    for (const NodePlan& p : plan.nodes) quantized_nodes += p.kind != Kind::Float && p.kind != Kind::RemovedClamp;
}

/// Union-find over tensor names for parameter sharing.
class Groups {
   public:
    std::string find(const std::string& t) {
        auto it = parent_.find(t);
        if (it == parent_.end() || it->second == t) return t;
        return it->second = find(it->second);
    }
    void unite(const std::string& keep, const std::string& other) { parent_[find(other)] = find(keep); }

   private:
    std::map<std::string, std::string> parent_;
};

/// Scale/zero point for [lo, hi] that keep the grid inside `c` (so the fold's Relu/Clip removal
/// stays exact): onnxruntime's parameters, the scale then lowered until the covered range fits.
ScaleZp fit_params(double lo, double hi, const Clamp& c, const IntGrid& grid) {
    ScaleZp p = scale_zp(lo, hi, grid);
    for (int iter = 0; iter < 64; ++iter) {
        double a, b;
        covered_range(p, grid, a, b);
        if (a >= c.lo && b <= c.hi) break;
        double s = p.scale;
        if (a < c.lo && grid.qmin() - p.zero_point < 0)
            s = std::min(s, c.lo / static_cast<double>(grid.qmin() - p.zero_point));
        if (b > c.hi && grid.qmax() - p.zero_point > 0)
            s = std::min(s, c.hi / static_cast<double>(grid.qmax() - p.zero_point));
        float fs = static_cast<float>(s);
        if (fs >= p.scale) fs = std::nextafter(p.scale, 0.0f);
        p.scale = fs;
    }
    return p;
}

void plan_ranges(const ir::Graph& g, const CalibrationSet& cal, const QuantizeOptions& o, Plan& plan) {
    const auto stats = collect_stats(g, cal, plan.quantized, o.method != CalibrationMethod::MinMax);
    for (const std::string& t : plan.quantized) {
        auto it = stats.find(t);
        if (it == stats.end()) throw QuantizeError("tensor '" + t + "' was not computed on the calibration inputs");
        double lo, hi;
        choose_range(it->second, o.method, o.scheme.activations, lo, hi);
        lo = std::min(lo, 0.0), hi = std::max(hi, 0.0);
        if (hi - lo < 1e-6) hi = lo + 1e-3;  // constant (dead) tensors: keep a usable scale
        plan.obs_min[t] = it->second.min, plan.obs_max[t] = it->second.max;
        plan.range_lo[t] = lo, plan.range_hi[t] = hi;
    }
    Groups groups;
    std::map<std::string, std::pair<double, double>> grange;  // root -> union range
    std::map<std::string, Clamp> gclamp;                      // root -> intersected clamp
    for (const std::string& t : plan.quantized) {
        grange[t] = {plan.range_lo[t], plan.range_hi[t]};
        gclamp[t] = plan.clamps.count(t) ? plan.clamps.at(t) : Clamp{};
    }
    auto merge = [&](const std::string& a, const std::string& b, bool checked) {
        const std::string ra = groups.find(a), rb = groups.find(b);
        if (ra == rb) return;
        const double lo = std::min(grange[ra].first, grange[rb].first),
                     hi = std::max(grange[ra].second, grange[rb].second);
        const Clamp c{std::max(gclamp[ra].lo, gclamp[rb].lo), std::min(gclamp[ra].hi, gclamp[rb].hi)};
        if (checked && (lo < c.lo || hi > c.hi)) return;  // sharing would make a fused Relu/Clip inexact
        groups.unite(ra, rb);
        grange[ra] = {lo, hi};
        gclamp[ra] = c;
    };
    for (size_t i = 0; i < g.nodes().size(); ++i) {
        const ir::Node& n = g.nodes()[i];
        const NodePlan& p = plan.nodes[i];
        if (p.kind == Kind::Direct) merge(n.input(0), p.outputs0, false);
        if (p.kind == Kind::Concat && o.scheme.share_concat_params)
            for (size_t k : p.data_inputs)
                if (plan.quantized.count(n.input(k))) merge(p.outputs0, n.input(k), true);
    }
    std::map<std::string, std::vector<std::string>> members;
    for (const std::string& t : plan.quantized) members[groups.find(t)].push_back(t);
    for (auto& [root, list] : members) {
        const ScaleZp params = fit_params(grange[root].first, grange[root].second, gclamp[root], o.scheme.activations);
        plan.shared_groups += list.size() > 1;
        for (const std::string& t : list) plan.params[t] = params;
    }
    // shared_with: the first member in graph order (graph inputs, then node outputs).
    std::vector<std::string> order(g.inputs().begin(), g.inputs().end());
    for (const NodePlan& p : plan.nodes) order.push_back(p.outputs0);
    std::map<std::string, std::string> first;
    for (const std::string& t : order) {
        if (!plan.quantized.count(t)) continue;
        const std::string r = groups.find(t);
        if (!first.count(r))
            first[r] = t;
        else
            plan.shared_with[t] = first[r];
    }
    for (const std::string& c : plan.const_acts) {  // constants: their own data range
        TensorStats s;
        const num::Tensor& t = *g.value(c).data;
        s.min = s.max = 0;
        for (size_t k = 0; k < t.numel(); ++k)
            s.min = std::min(s.min, double{t.data<float>()[k]}), s.max = std::max(s.max, double{t.data<float>()[k]});
        plan.obs_min[c] = plan.range_lo[c] = s.min;
        plan.obs_max[c] = plan.range_hi[c] = s.max;
        plan.params[c] = scale_zp(s.min, s.max, o.scheme.activations);
    }
}

void label_tensors(const ir::Graph& g, Plan& plan) {
    for (const std::string& in : g.inputs()) plan.producer[in] = "", plan.op[in] = "input";
    for (size_t i = 0; i < g.nodes().size(); ++i) {
        const NodePlan& p = plan.nodes[i];
        if (p.kind == Kind::RemovedClamp || p.outputs0.empty()) continue;
        plan.producer[p.outputs0] = g.nodes()[i].name;
        plan.op[p.outputs0] = p.label;
    }
}

}  // namespace

std::string quantized_reason(const ir::Graph& g) {
    static const std::set<std::string> kQuantOps{"QuantizeLinear", "DequantizeLinear",     "DynamicQuantizeLinear",
                                                 "ConvInteger",    "MatMulInteger",        "QGemm",
                                                 "MulInteger",     "DynamicQuantizeMatMul"};
    for (const ir::Node& n : g.nodes())
        if (kQuantOps.count(n.op_type) || n.op_type.rfind("QLinear", 0) == 0 || n.op_type.rfind("Quantized", 0) == 0)
            return "node " + n.label() + " is a quantization operator";
    for (const auto& [name, v] : g.values())
        if (v.is_quantized()) return "tensor '" + name + "' has quantization parameters";
    return {};
}

QuantizeResult quantize_model(const ir::Graph& g, const CalibrationSet& cal, const QuantizeOptions& o) {
    const std::string why = quantized_reason(g);
    if (!why.empty()) throw QuantizeError("the model is already quantized: " + why);
    for (const ir::Node& n : g.nodes())
        if (!num::op_supported(n.op_type, n.domain))
            throw QuantizeError("node " + n.label() + ": the reference operator library has no " +
                                (n.domain.empty() ? std::string("ai.onnx") : n.domain) + ":" + n.op_type +
                                ", so the model cannot be calibrated");
    if (cal.samples.empty()) throw CalibrationError("--calibration: no sample");
    Plan plan;
    for (const ir::Node& n : g.nodes()) {
        plan.nodes.push_back(classify(g, n));
        if (std::find(o.exclude_nodes.begin(), o.exclude_nodes.end(), n.name) != o.exclude_nodes.end()) {
            plan.nodes.back().kind = Kind::Float;
            plan.nodes.back().reason = "excluded (nodes_to_exclude)";
        }
    }
    remove_clamps(g, o.scheme, plan);
    QuantizeResult r;
    mark_tensors(g, plan, r.quantized_nodes);
    plan_ranges(g, cal, o, plan);
    label_tensors(g, plan);
    r.qdq = detail::build_qdq_graph(g, plan, o.scheme, r.weights, r.biases);
    std::vector<std::string> order(g.inputs().begin(), g.inputs().end());
    for (const NodePlan& p : plan.nodes)
        if (p.kind != Kind::RemovedClamp) order.push_back(p.outputs0);
    for (const std::string& t : order) {
        if (!plan.quantized.count(t)) continue;
        QuantizedTensor q;
        q.name = t;
        q.quantized = detail::q_output(t);
        q.producer = plan.producer.count(t) ? plan.producer.at(t) : std::string();
        q.op = plan.op.count(t) ? plan.op.at(t) : std::string("?");
        q.grid = o.scheme.activations;
        q.params = plan.params.at(t);
        q.observed_min = plan.obs_min.at(t), q.observed_max = plan.obs_max.at(t);
        q.range_lo = plan.range_lo.at(t), q.range_hi = plan.range_hi.at(t);
        if (plan.shared_with.count(t)) q.shared_with = plan.shared_with.at(t);
        r.tensors.push_back(std::move(q));
    }
    for (size_t i = 0; i < g.nodes().size(); ++i) {
        const NodePlan& p = plan.nodes[i];
        r.removed_activations += p.kind == Kind::RemovedClamp;
        if (p.kind == Kind::Float) r.float_nodes.push_back(g.nodes()[i].label() + " (" + p.reason + ")");
    }
    r.shared_groups = plan.shared_groups;
    r.scheme = o.scheme.name();
    r.method = method_name(o.method);
    r.calibration = cal.describe();
    r.seeded_calibration = cal.seeded_default;
    return r;
}

}  // namespace drv::quant
