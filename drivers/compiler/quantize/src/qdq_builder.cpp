// SPDX-License-Identifier: MIT
// QDQ graph construction from a quantization plan (quantize_internal.h): QuantizeLinear ->
// DequantizeLinear after every quantized activation, DequantizeLinear in front of int8 weights,
// int32 biases and constant activations, consumers rewired to the DequantizeLinear outputs,
// names and placement as onnxruntime's QDQ quantizer writes them.
#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "quantize_internal.h"

namespace drv::quant::detail {

namespace {

class Builder {
   public:
    Builder(const ir::Graph& g, const Plan& plan, const Scheme& s) : g_(g), plan_(plan), s_(s) {
        for (const auto& [name, v] : g.values()) used_.insert(name);
        for (const ir::Node& n : g.nodes()) used_.insert(n.name);
        // Per-axis QuantizeLinear/DequantizeLinear need ai.onnx opset 13; below it the com.microsoft
        // versions (same semantics, any opset) are what onnxruntime runs.
        // 16-bit (and int32-weight) Q/DQ are ai.onnx only from opset 21; onnxruntime runs the
        // com.microsoft ones at any opset (its quantizer's use_qdq_contrib_ops for QInt16).
        const bool wide = s.activations.bits > 8 || s.weights.bits > 8;
        qdq_domain_ = g.opset("") >= (wide ? 21 : 13) ? "" : "com.microsoft";
    }

    ir::Graph build(size_t& weights, size_t& biases) {
        for (const auto& [name, v] : g_.values()) out_.add_value(v);
        for (const auto& [d, ver] : g_.opsets()) out_.set_opset(d, ver);
        if (!qdq_domain_.empty() && out_.opset("com.microsoft") == 0) out_.set_opset("com.microsoft", 1);
        out_.inputs() = g_.inputs();
        out_.outputs() = g_.outputs();
        for (const std::string& in : g_.inputs())
            if (plan_.quantized.count(in)) emit_qdq(in, in);
        for (size_t i = 0; i < g_.nodes().size(); ++i) emit_node(i);
        out_.remove_dead_nodes();  // drops the float weights and the removed activations' values
        out_.validate();
        weights = weights_.size();
        biases = biases_;
        return std::move(out_);
    }

   private:
    const ir::Graph& g_;
    const Plan& plan_;
    const Scheme& s_;
    ir::Graph out_;
    std::string qdq_domain_;
    std::set<std::string> used_;
    std::map<std::string, std::string> weights_;   // weight name + axis -> DequantizeLinear output
    std::map<std::string, std::string> const_dq_;  // constant activation -> DequantizeLinear output
    std::map<std::string, std::vector<float>> w_scales_;
    size_t biases_ = 0;

    std::string fresh(const std::string& base) {
        std::string n = base;
        for (int k = 1; used_.count(n); ++k) n = base + "_" + std::to_string(k);
        used_.insert(n);
        return n;
    }

    void add_tensor(const std::string& name, num::DType dt, const std::vector<int64_t>& shape) {
        ir::Value v;
        v.name = name;
        v.dtype = dt;
        v.shape = shape;
        v.shape_known = true;
        out_.add_value(std::move(v));
    }
    void add_const(const std::string& name, num::Tensor t) {
        ir::Value v;
        v.name = name;
        v.dtype = t.dtype();
        v.shape = t.shape();
        v.shape_known = true;
        v.data = std::move(t);
        out_.add_value(std::move(v));
    }
    /// Scale / zero-point initializers: scalars for one parameter, 1-D for per-channel ones.
    std::pair<std::string, std::string> params(const std::string& base, const std::vector<float>& scales,
                                               const std::vector<int32_t>& zps, num::DType zt, bool per_axis,
                                               const std::string& scale_suffix = "_scale",
                                               const std::string& zp_suffix = "_zero_point") {
        const std::vector<int64_t> shape =
            per_axis ? std::vector<int64_t>{static_cast<int64_t>(scales.size())} : std::vector<int64_t>{};
        num::Tensor st(num::DType::F32, shape), zt_(zt, shape);
        for (size_t k = 0; k < scales.size(); ++k) {
            st.data<float>()[k] = scales[k];
            store_code(zt_, k, zps[k]);
        }
        const std::string sn = fresh(base + scale_suffix), zn = fresh(base + zp_suffix);
        add_const(sn, std::move(st));
        add_const(zn, std::move(zt_));
        return {sn, zn};
    }
    void qdq_node(const std::string& op, const std::string& name, std::vector<std::string> in, const std::string& out,
                  int axis = -1) {
        ir::Node n;
        n.op_type = op;
        n.domain = qdq_domain_;
        n.name = fresh(name);
        n.inputs = std::move(in);
        n.outputs = {out};
        if (axis >= 0) n.attrs.set("axis", int64_t{axis});
        out_.add_node(std::move(n));
    }

    /// Q -> DQ for activation `t`, whose float value is `src` (t itself, or t_QuantizeLinear_Input for
    /// a graph output); the DequantizeLinear writes dq_name(t).
    void emit_qdq(const std::string& t, const std::string& src) {
        const ScaleZp& p = plan_.params.at(t);
        const ir::Value& v = g_.value(t);
        const auto [sn, zn] = params(t, {p.scale}, {p.zero_point}, s_.activations.dtype(), false);
        const std::string q = q_output(t);
        used_.insert(q);
        add_tensor(q, s_.activations.dtype(), v.shape);
        qdq_node("QuantizeLinear", t + "_QuantizeLinear", {src, sn, zn}, q);
        const std::string dq = dq_name(t);
        if (dq != t) add_tensor(dq, num::DType::F32, v.shape);
        qdq_node("DequantizeLinear", t + "_DequantizeLinear", {q, sn, zn}, dq);
    }
    bool is_graph_output(const std::string& t) const {
        return std::find(g_.outputs().begin(), g_.outputs().end(), t) != g_.outputs().end();
    }
    std::string dq_name(const std::string& t) const { return is_graph_output(t) ? t : dq_output(t); }

    std::string weight_dq(const ir::Node& n, int axis) {
        const std::string w = n.input(1);
        const std::string key = w + "#" + std::to_string(axis);
        if (auto it = weights_.find(key); it != weights_.end()) return it->second;
        std::vector<float> sc;
        std::vector<int32_t> zp;
        // Depthwise convolutions may take their own weight grid (Scheme::depthwise_weights).
        const ir::Value& wv = g_.value(w);
        const bool dw = n.op_type == "Conv" && wv.shape.size() == 4 && wv.shape[1] == 1 &&
                        ir::attr_int(n.attrs, "group", 1) == wv.shape[0] && wv.shape[0] > 1;
        const IntGrid& grid = dw && s_.depthwise_weights.bits ? s_.depthwise_weights : s_.weights;
        num::Tensor q = quantize_weight(*wv.data, grid, s_.per_channel_weights, axis, sc, zp);
        const std::vector<int64_t> shape = q.shape();
        const std::string qn = fresh(w + "_quantized");
        add_const(qn, std::move(q));
        const bool per_axis = s_.per_channel_weights && sc.size() > 1;
        const auto [sn, zn] = params(w, sc, zp, grid.dtype(), per_axis);
        const std::string out = fresh(w + "_DequantizeLinear_Output");
        add_tensor(out, num::DType::F32, shape);
        qdq_node("DequantizeLinear", w + "_DequantizeLinear", {qn, sn, zn}, out, per_axis ? axis : -1);
        w_scales_[out] = sc;
        return weights_[key] = out;
    }

    std::string bias_dq(const ir::Node& n, const std::string& w_dq, int axis) {
        const std::string b = n.input(2);
        std::vector<float> bs;
        num::Tensor q = quantize_bias(*g_.value(b).data, plan_.params.at(n.input(0)).scale, w_scales_.at(w_dq), bs);
        const std::vector<int64_t> shape = q.shape();
        const std::string qn = fresh(b + "_quantized");
        add_const(qn, std::move(q));
        const bool per_axis = bs.size() > 1;
        const auto [sn, zn] = params(qn, bs, std::vector<int32_t>(bs.size(), 0), num::DType::I32, per_axis);
        const std::string out = fresh(b + "_DequantizeLinear_Output");
        add_tensor(out, num::DType::F32, shape);
        qdq_node("DequantizeLinear", b + "_DequantizeLinear", {qn, sn, zn}, out, per_axis ? 0 : -1);
        ++biases_;
        (void)axis;
        return out;
    }

    std::string const_act_dq(const std::string& c) {
        if (auto it = const_dq_.find(c); it != const_dq_.end()) return it->second;
        const ScaleZp& p = plan_.params.at(c);
        const num::Tensor& t = *g_.value(c).data;
        num::Tensor q(s_.activations.dtype(), t.shape());
        for (size_t k = 0; k < t.numel(); ++k) store_code(q, k, quantize_value(t.data<float>()[k], p, s_.activations));
        const std::string qn = fresh(c + "_quantized");
        add_const(qn, std::move(q));
        const auto [sn, zn] = params(c, {p.scale}, {p.zero_point}, s_.activations.dtype(), false);
        const std::string out = fresh(c + "_DequantizeLinear_Output");
        add_tensor(out, num::DType::F32, t.shape());
        qdq_node("DequantizeLinear", c + "_DequantizeLinear", {qn, sn, zn}, out);
        return const_dq_[c] = out;
    }

    void emit_node(size_t i) {
        const ir::Node& n = g_.nodes()[i];
        const NodePlan& p = plan_.nodes[i];
        if (p.kind == Kind::RemovedClamp) return;
        ir::Node m = n;
        for (size_t k = 0; k < m.inputs.size(); ++k) {
            const std::string& in = n.inputs[k];
            if (in.empty()) continue;
            const bool data = std::find(p.data_inputs.begin(), p.data_inputs.end(), k) != p.data_inputs.end();
            if (plan_.quantized.count(in))
                m.inputs[k] = dq_name(in);  // every reader of a quantized tensor reads its DequantizeLinear
            else if (data && p.kind != Kind::Float && plan_.const_acts.count(in))
                m.inputs[k] = const_act_dq(in);
        }
        if (p.kind == Kind::Weighted) {
            m.inputs[1] = weight_dq(n, p.weight_axis);
            if (n.has_input(2)) m.inputs[2] = bias_dq(n, m.inputs[1], p.weight_axis);
        }
        const std::string y = p.outputs0;
        std::string src = y;
        if (!m.outputs.empty()) {
            if (plan_.quantized.count(y) && is_graph_output(y)) {
                src = fresh(y + "_QuantizeLinear_Input");
                add_tensor(src, num::DType::F32, g_.value(y).shape);
            }
            m.outputs[0] = src;
        }
        // The further outputs of a multi-output node (Split) that a quantized reader reads.
        std::vector<std::pair<std::string, std::string>> more;
        for (size_t k = 1; k < m.outputs.size(); ++k) {
            const std::string yk = m.outputs[k];
            if (yk.empty() || !plan_.quantized.count(yk)) continue;
            std::string sk = yk;
            if (is_graph_output(yk)) {
                sk = fresh(yk + "_QuantizeLinear_Input");
                add_tensor(sk, num::DType::F32, g_.value(yk).shape);
                m.outputs[k] = sk;
            }
            more.emplace_back(yk, sk);
        }
        out_.add_node(std::move(m));
        if (plan_.quantized.count(y)) emit_qdq(y, src);
        for (const auto& [yk, sk] : more) emit_qdq(yk, sk);
    }
};

}  // namespace

ir::Graph build_qdq_graph(const ir::Graph& g, const Plan& plan, const Scheme& scheme, size_t& weights, size_t& biases) {
    return Builder(g, plan, scheme).build(weights, biases);
}

}  // namespace drv::quant::detail
