// SPDX-License-Identifier: MIT
// Model compiler, phase 0: the graph it partitions (UnitGraph, compiler_internal.h). A QDQ unit
// onnxruntime runs in float (x86 int8 activations, a Relu/Clip its Q does not make redundant, a float
// bias it could not quantize) is still one integer operation for the NPU, as for the vendor
// compiler: the unit becomes the fused op the lowerings read (QLinearConv / QGemm / QLinearMatMul /
// QLinearAdd / QLinearMul / QLinearGlobalAveragePool / QLinearConcat), while the layer keeps the
// unit's own nodes as its reference (the runtime's CPU fallback and isolated check run those, so the
// NPU is compared with what onnxruntime computes). Exact integer bounds replace the Relu/Clip:
// Q(clip(v, lo, hi)) = clamp(Q(v), Q(lo), Q(hi)) since Q is monotonic.
#include "compiler/ir/qdq.h"
#include "compiler_internal.h"
#include "compiler/ir/shape_inference.h"

namespace drv::rknpu::compiler_detail {

namespace {

bool is_q(const ir::Node& n) { return n.op_type == "QuantizeLinear" && (n.domain.empty() || n.domain == "com.microsoft"); }
bool is_dq(const ir::Node& n) {
    return n.op_type == "DequantizeLinear" && (n.domain.empty() || n.domain == "com.microsoft");
}

/// Per-tensor constant scale (and zero point, or none) of a Q/DQ node.
bool per_tensor(const ir::Graph& g, const ir::Node& n) {
    num::QuantParams p;
    try {
        return ir::quant_params_of(g, n, 0, p) && !p.per_axis();
    } catch (const ir::GraphError&) {
        return false;
    }
}

/// A weight DQ whose scales are per tensor or along the output-channel axis `want` of the op reading
/// it (Conv: 0; Gemm: 0 with transB, else 1; MatMul: 1): the lowerings read one scale per output.
bool weight_axis_ok(const ir::Graph& g, const ir::Node& dq, int want) {
    const ir::Value* w = g.find_value(dq.input(0));
    num::QuantParams p;
    try {
        if (!w || !ir::quant_params_of(g, dq, w->shape.size(), p)) return false;
    } catch (const ir::GraphError&) {
        return false;
    }
    return !p.per_axis() || p.axis == want;
}

int out_axis(const ir::Node& op) {
    if (op.op_type == "Gemm") return ir::attr_int(op.attrs, "transB", 0) != 0 ? 0 : 1;
    return op.op_type == "MatMul" || op.op_type == "ConvTranspose" ? 1 : 0;  // ConvTranspose: [Cin, Cout/g, kh, kw]
}

}  // namespace

/// Slopes of a LeakyRelu (its alpha) or a PRelu whose slope is a constant float scalar or one value
/// per channel ([C,1,1] / [1,C,1,1]; ONNX broadcasting puts a 1-D slope on W, not on channels).
bool prelu_slopes(const ir::Graph& g, const ir::Node& n, std::vector<float>& slopes) {
    slopes.clear();
    if (!n.domain.empty()) return false;
    if (n.op_type == "LeakyRelu") {
        slopes = {ir::attr_float(n.attrs, "alpha", 0.01f)};
    } else if (n.op_type == "PRelu" && n.inputs.size() == 2) {
        const ir::Value* s = g.find_value(n.input(1));
        if (!s || !s->is_constant() || s->data->dtype() != num::DType::F32 || s->data->numel() == 0) return false;
        const auto& d = s->data->shape();
        const size_t c = s->data->numel();
        const bool per_tensor = c == 1;
        const bool per_channel = (d.size() == 3 && d[1] == 1 && d[2] == 1) ||
                                 (d.size() == 4 && d[0] == 1 && d[2] == 1 && d[3] == 1);
        if (!per_tensor && !per_channel) return false;
        slopes.assign(s->data->data<float>(), s->data->data<float>() + c);
    } else {
        return false;
    }
    for (float a : slopes)
        if (!std::isfinite(a)) return false;
    return true;
}

/// Real interval a Relu / Clip keeps; false when its bounds are not constant scalars.
bool clamp_of(const ir::Graph& g, const ir::Node& n, float& lo, float& hi) {
    if (n.op_type == "Relu") {
        lo = std::max(lo, 0.0f);
        return true;
    }
    if (n.op_type != "Clip") return false;
    float a = -std::numeric_limits<float>::infinity(), b = std::numeric_limits<float>::infinity();
    if (g.opset("") < 11) {
        a = ir::attr_float(n.attrs, "min", a);
        b = ir::attr_float(n.attrs, "max", b);
    } else {
        for (size_t k = 1; k <= 2; ++k) {
            if (!n.has_input(k)) continue;
            const ir::Value* v = g.find_value(n.input(k));
            if (!v || !v->is_constant() || v->data->dtype() != num::DType::F32 || v->data->numel() != 1) return false;
            (k == 1 ? a : b) = v->data->data<float>()[0];
        }
    }
    if (a > b) a = b;  // ONNX Clip-11: min > max gives max everywhere
    lo = std::max(lo, a);
    hi = std::min(hi, b);
    return true;
}

UnitGraph::UnitGraph(const ir::Graph& ref) : ref_(ref) {
    const auto& rn = ref.nodes();
    std::map<std::string, size_t> prod;
    std::map<std::string, size_t> uses;
    for (size_t i = 0; i < rn.size(); ++i) {
        for (const auto& o : rn[i].outputs) prod[o] = i;
        for (const auto& in : rn[i].inputs)
            if (!in.empty()) ++uses[in];
    }
    for (const auto& o : ref.outputs()) ++uses[o];  // a graph output is one more use
    producer_ = prod;
    uses_ = uses;
    for (size_t i = 0; i < rn.size(); ++i)
        for (const auto& in : rn[i].inputs)
            if (!in.empty() && (ref_consumers_[in].empty() || ref_consumers_[in].back() != i)) ref_consumers_[in].push_back(i);
    std::vector<bool> claimed(rn.size(), false);
    std::map<size_t, ir::Node> fused;           // op node index -> fused node
    std::map<size_t, std::vector<size_t>> unit;  // op node index -> member nodes
    std::map<size_t, std::string> how;
    for (size_t i = 0; i < rn.size(); ++i)
        if (is_q(rn[i])) fuse(i, claimed, fused, unit, how);
    for (size_t i = 0; i < rn.size(); ++i)
        if (!claimed[i]) fuse_float_out(i, claimed, fused, unit, how);
    for (size_t i = 0; i < rn.size(); ++i)
        if (!claimed[i]) fold_const_dq(i, claimed, fused, unit, how);
    for (size_t i = 0; i < rn.size(); ++i) {
        if (auto f = fused.find(i); f != fused.end()) {
            nodes_.push_back(f->second);
            members_.push_back(unit.at(i));
            rewrites_.push_back({how.at(i)});
        } else if (!claimed[i]) {
            nodes_.push_back(rn[i]);
            members_.push_back({i});
            rewrites_.push_back({});
        }
        // A convolution's auto_pad (seed 001 puts no constraint on it; MaxPool / AveragePool accept
        // only NOTSET, which the checker keeps): the checker and the lowerings read explicit pads,
        // the reference nodes keep auto_pad (the same computation).
        if (!fused.count(i) && claimed[i]) continue;  // a member of another node's unit: nothing pushed
        const std::string& t = nodes_.back().op_type;
        if ((t == "Conv" || t == "QLinearConv" || t == "ConvInteger") && ir::make_pads_explicit(ref_, nodes_.back()))
            rewrites_.back().push_back("auto_pad " + ir::attr_string(rn[i].attrs, "auto_pad", "") + " as explicit pads");
    }
    index();
}

void UnitGraph::index() {
    producer_.clear();
    consumers_.clear();
    for (size_t i = 0; i < nodes_.size(); ++i) {
        for (const auto& o : nodes_[i].outputs) producer_[o] = i;
        for (const auto& in : nodes_[i].inputs)
            if (!in.empty()) consumers_[in].push_back(i);
    }
    for (auto& [v, c] : consumers_) c.erase(std::unique(c.begin(), c.end()), c.end());
}

bool UnitGraph::fuse(size_t qi, std::vector<bool>& claimed, std::map<size_t, ir::Node>& fused,
                     std::map<size_t, std::vector<size_t>>& unit, std::map<size_t, std::string>& how) {
    const auto& rn = ref_.nodes();
    const ir::Node& q = rn[qi];
    const ir::Value* yv = ref_.find_value(q.outputs[0]);
    if (claimed[qi] || !yv || !is_q8(yv->dtype) || !per_tensor(ref_, q)) return false;
    // Uses of a value: node inputs plus graph outputs.
    auto uses = [&](const std::string& v) {
        auto it = uses_.find(v);
        return it == uses_.end() ? size_t{0} : it->second;
    };
    auto prod = [&](const std::string& v) -> int {
        auto it = producer_.find(v);
        return it == producer_.end() ? -1 : static_cast<int>(it->second);
    };
    // Walk back through Relu/Clip (single use each) to the op.
    std::vector<size_t> acts;
    float lo = -std::numeric_limits<float>::infinity(), hi = std::numeric_limits<float>::infinity();
    std::string v = q.input(0);
    int p = prod(v);
    // Several QuantizeLinear of one value with the same parameters (TensorRT style: one input
    // quantizer per consumer) are one output: the others become aliases of the first.
    std::vector<size_t> qs{qi};
    {
        num::QuantParams mine;
        ir::quant_params_of(ref_, q, 0, mine);
        auto rc = ref_consumers_.find(v);
        for (size_t k : rc == ref_consumers_.end() ? std::vector<size_t>{} : rc->second) {
            if (k == qi || !is_q(rn[k]) || rn[k].input(0) != v || claimed[k]) continue;
            num::QuantParams other;
            const ir::Value* ov = ref_.find_value(rn[k].outputs[0]);
            if (!per_tensor(ref_, rn[k]) || !ir::quant_params_of(ref_, rn[k], 0, other) || other.scale != mine.scale ||
                other.zero_point != mine.zero_point || !ov || ov->dtype != yv->dtype)
                return false;
            qs.push_back(k);
        }
    }
    if (uses(v) != qs.size()) return false;
    auto single_use = [&](const std::string& val) { return uses(val) == 1; };
    while (p >= 0 && rn[static_cast<size_t>(p)].domain.empty() && (v == q.input(0) || single_use(v)) &&
           (rn[static_cast<size_t>(p)].op_type == "Relu" || rn[static_cast<size_t>(p)].op_type == "Clip")) {
        if (!clamp_of(ref_, rn[static_cast<size_t>(p)], lo, hi)) return false;
        acts.insert(acts.begin(), static_cast<size_t>(p));
        v = rn[static_cast<size_t>(p)].input(0);
        p = prod(v);
    }
    // A LeakyRelu / PRelu with constant slopes straight before the Q (onnxruntime's QDQ form of a
    // conv with the activation fused into its quantization: DQ -> Conv -> LeakyRelu -> Q), issue 15.
    std::vector<float> slopes;
    if (acts.empty() && p >= 0 && !claimed[static_cast<size_t>(p)] && uses(v) == qs.size() &&
        prelu_slopes(ref_, rn[static_cast<size_t>(p)], slopes)) {
        acts.push_back(static_cast<size_t>(p));
        v = rn[static_cast<size_t>(p)].input(0);
        p = prod(v);
        if (p < 0 || (rn[static_cast<size_t>(p)].op_type != "Conv" && rn[static_cast<size_t>(p)].op_type != "ConvTranspose"))
            return false;
    }
    if (p < 0 || claimed[static_cast<size_t>(p)]) return false;
    if (acts.empty() ? uses(v) != qs.size() : uses(v) != 1) return false;
    const ir::Node& op = rn[static_cast<size_t>(p)];
    static const std::set<std::string> kOps{"Conv", "ConvTranspose", "Gemm", "MatMul", "Add", "Mul", "Sub", "Max", "Min",
                                            "GlobalAveragePool", "Concat"};
    // Data movement between a DQ and a Q of the same quantization in the device's int8 domain (a
    // uint8 zero point z and an int8 one z - 128 are the same bytes on the NPU): the op on the
    // quantized tensor, as onnxruntime's drop-QDQ units, also where it kept them in float for a
    // uint8/int8 mismatch.
    static const std::set<std::string> kMove{"MaxPool", "Resize", "Reshape", "Flatten", "Squeeze", "Unsqueeze",
                                             "Transpose", "Slice", "Identity", "GlobalMaxPool", "Gather", "Pad",
                                             "Expand", "Tile"};
    // Split (issue 15): DQ -> Split -> one Q per output, every Q of the input's quantization (the
    // device's int8 domain): the split on the quantized tensor, as onnxruntime's QDQ Split unit.
    if (op.domain.empty() && op.op_type == "Split" && acts.empty() && qs.size() == 1) {
        const int d = prod(op.input(0));
        if (d < 0 || !is_dq(rn[static_cast<size_t>(d)]) || claimed[static_cast<size_t>(d)] || uses(op.input(0)) != 1)
            return false;
        const ir::Node& dq = rn[static_cast<size_t>(d)];
        const ir::Value* xv = ref_.find_value(dq.input(0));
        num::QuantParams a;
        if (!xv || xv->is_constant() || !is_q8(xv->dtype) || !per_tensor(ref_, dq) || !ir::quant_params_of(ref_, dq, 0, a))
            return false;
        for (size_t k = 1; k < op.inputs.size(); ++k) {
            const ir::Value* c = op.input(k).empty() ? nullptr : ref_.find_value(op.input(k));
            if (c && !c->is_constant()) return false;
        }
        auto device_zp = [](num::DType t, int32_t z) { return t == num::DType::U8 ? z - 128 : z; };
        std::vector<size_t> members{static_cast<size_t>(d), static_cast<size_t>(p)};
        ir::Node f = op;
        f.inputs[0] = dq.input(0);
        for (size_t k = 0; k < op.outputs.size(); ++k) {
            const std::string& o = op.outputs[k];
            auto rc = ref_consumers_.find(o);
            if (o.empty() || uses(o) != 1 || rc == ref_consumers_.end() || rc->second.size() != 1) return false;
            const size_t qk = rc->second[0];
            const ir::Value* ov = ref_.find_value(rn[qk].outputs[0]);
            num::QuantParams b;
            if (!is_q(rn[qk]) || claimed[qk] || !ov || !is_q8(ov->dtype) || !per_tensor(ref_, rn[qk]) ||
                !ir::quant_params_of(ref_, rn[qk], 0, b) || a.scale != b.scale ||
                device_zp(xv->dtype, a.zero_point[0]) != device_zp(ov->dtype, b.zero_point[0]))
                return false;
            f.outputs[k] = rn[qk].outputs[0];
            members.push_back(qk);
        }
        std::sort(members.begin(), members.end());
        for (size_t m : members) claimed[m] = true;
        how[static_cast<size_t>(p)] = "QDQ unit DequantizeLinear -> Split -> QuantizeLinear on the quantized tensor";
        unit[static_cast<size_t>(p)] = members;
        fused[static_cast<size_t>(p)] = std::move(f);
        return true;
    }
    if (op.domain.empty() && kMove.count(op.op_type) && acts.empty() && op.outputs.size() == 1) {
        const int d = prod(op.input(0));
        if (d < 0 || !is_dq(rn[static_cast<size_t>(d)]) || claimed[static_cast<size_t>(d)] || uses(op.input(0)) != 1)
            return false;
        const ir::Node& dq = rn[static_cast<size_t>(d)];
        const ir::Value* xv = ref_.find_value(dq.input(0));
        num::QuantParams a, b;
        if (!xv || xv->is_constant() || !is_q8(xv->dtype) || !per_tensor(ref_, dq) ||
            !ir::quant_params_of(ref_, dq, 0, a) || !ir::quant_params_of(ref_, q, 0, b) || a.scale != b.scale)
            return false;
        auto device_zp = [](num::DType t, int32_t z) { return t == num::DType::U8 ? z - 128 : z; };
        if (device_zp(xv->dtype, a.zero_point[0]) != device_zp(yv->dtype, b.zero_point[0])) return false;
        // Resize nearest moves codes; linear (bilinear, lower_resize.cpp) interpolates them with its
        // input's quantization (onnxruntime's QDQ Resize unit shares it): both run on the quantized tensor.
        if (op.op_type == "Resize" && ir::attr_string(op.attrs, "mode", "nearest") != "nearest" &&
            ir::attr_string(op.attrs, "mode", "nearest") != "linear")
            return false;
        for (size_t k = 1; k < op.inputs.size(); ++k) {
            const ir::Value* c = op.input(k).empty() ? nullptr : ref_.find_value(op.input(k));
            if (c && !c->is_constant()) return false;
        }
        ir::Node f = op;
        f.inputs[0] = dq.input(0);
        f.outputs.clear();
        for (size_t k : qs) f.outputs.push_back(rn[k].outputs[0]);
        // Outputs 1.. are further identical quantizers (TensorRT style), not MaxPool's Indices.
        if (qs.size() > 1) f.attrs.set("npusim_alias_outputs", int64_t{1});
        std::vector<size_t> members{static_cast<size_t>(d), static_cast<size_t>(p)};
        members.insert(members.end(), qs.begin(), qs.end());
        std::sort(members.begin(), members.end());
        for (size_t m : members) claimed[m] = true;
        how[static_cast<size_t>(p)] = "QDQ unit DequantizeLinear -> " + op.op_type + " -> QuantizeLinear on the quantized tensor";
        unit[static_cast<size_t>(p)] = members;
        fused[static_cast<size_t>(p)] = std::move(f);
        return true;
    }
    if (!op.domain.empty() || !kOps.count(op.op_type) || op.outputs.size() != 1) return false;
    const bool conv_like =
        op.op_type == "Conv" || op.op_type == "ConvTranspose" || op.op_type == "Gemm" || op.op_type == "MatMul";
    if (!acts.empty() && !conv_like) return false;  // the DPU-only lowerings have no activation stage
    std::vector<size_t> members = acts;
    members.push_back(static_cast<size_t>(p));
    members.insert(members.end(), qs.begin(), qs.end());
    // An activation input: a per-tensor DQ of a non-constant int8/uint8 tensor, read only here.
    auto act_dq = [&](size_t k, std::vector<std::string>& triple) {
        const int d = prod(op.input(k));
        if (d < 0 || !is_dq(rn[static_cast<size_t>(d)]) || claimed[static_cast<size_t>(d)] || uses(op.input(k)) != 1)
            return false;
        const ir::Node& dq = rn[static_cast<size_t>(d)];
        const ir::Value* xv = ref_.find_value(dq.input(0));
        if (!xv || xv->is_constant() || !is_q8(xv->dtype) || !per_tensor(ref_, dq)) return false;
        triple = {dq.input(0), dq.input(1), dq.input(2)};
        members.push_back(static_cast<size_t>(d));
        return true;
    };
    // A weight: a DQ of a constant int8 tensor (per tensor or per output channel).
    auto weight_dq = [&](size_t k, std::vector<std::string>& triple) {
        const int d = prod(op.input(k));
        if (d < 0 || !is_dq(rn[static_cast<size_t>(d)]) || claimed[static_cast<size_t>(d)] || uses(op.input(k)) != 1)
            return false;
        const ir::Node& dq = rn[static_cast<size_t>(d)];
        const ir::Value* wv = ref_.find_value(dq.input(0));
        if (!wv || !wv->is_constant() || wv->dtype != num::DType::I8 || !weight_axis_ok(ref_, dq, out_axis(op))) return false;
        triple = {dq.input(0), dq.input(1), dq.input(2)};
        members.push_back(static_cast<size_t>(d));
        return true;
    };
    ir::Node f;
    f.name = op.name;
    f.attrs = op.attrs;
    f.outputs.clear();
    for (size_t k : qs) f.outputs.push_back(rn[k].outputs[0]);
    const std::vector<std::string> qy{q.input(1), q.input(2)};
    std::vector<std::string> x, w;
    std::string desc;
    if (conv_like) {
        if (!act_dq(0, x) || !weight_dq(1, w)) return false;
        f.inputs = x;
        f.inputs.insert(f.inputs.end(), w.begin(), w.end());
        std::string bias;
        if (op.op_type != "MatMul" && op.has_input(2)) {
            const int d = prod(op.input(2));
            if (d >= 0 && is_dq(rn[static_cast<size_t>(d)]) && uses(op.input(2)) == 1) {
                const ir::Value* bv = ref_.find_value(rn[static_cast<size_t>(d)].input(0));
                if (!bv || !bv->is_constant() || bv->dtype != num::DType::I32) return false;
                bias = bv->name;
                members.push_back(static_cast<size_t>(d));
            } else {
                // onnxruntime adds it in float (it runs this unit in float): kept float, not
                // rounded to an int32 of scale x_scale * w_scale (ConvOp::float_ref).
                const ir::Value* bv = ref_.find_value(op.input(2));
                if (!bv || !bv->is_constant() || bv->dtype != num::DType::F32) return false;
                bias = bv->name;
                desc = ", float bias";
            }
        }
        // onnxruntime runs the unit in float: Q(float op), which the lowering reproduces without
        // QLinearConv's float32 multiplier and int32 bias (ConvOp::float_ref).
        f.attrs.set("npusim_float_ref", int64_t{1});
        if (op.op_type == "Conv" || op.op_type == "ConvTranspose") {
            // ConvTranspose (issue 15): QLinearConv's operand order under npusim's own domain
            // (onnxruntime's CPU provider has no QLinearConvTranspose); the checker maps it back.
            f.op_type = op.op_type == "Conv" ? "QLinearConv" : "QLinearConvTranspose";
            if (op.op_type == "ConvTranspose") f.domain = "npusim";
            f.inputs.insert(f.inputs.end(), qy.begin(), qy.end());
            if (!bias.empty()) f.inputs.push_back(bias);
        } else if (op.op_type == "MatMul") {
            f.op_type = "QLinearMatMul";
            f.inputs.insert(f.inputs.end(), qy.begin(), qy.end());
        } else {
            if (ir::attr_float(op.attrs, "beta", 1.0f) != 1.0f) return false;
            f.op_type = "QGemm";
            f.domain = "com.microsoft";
            f.inputs.push_back(bias);
            f.inputs.insert(f.inputs.end(), qy.begin(), qy.end());
            f.attrs = num::Attributes();
            f.attrs.set("alpha", ir::attr_float(op.attrs, "alpha", 1.0f));
            f.attrs.set("transA", ir::attr_int(op.attrs, "transA", 0));
            f.attrs.set("transB", ir::attr_int(op.attrs, "transB", 0));
        }
        if (!slopes.empty()) {
            f.attrs.set("npusim_prelu_slopes", slopes);
        } else if (!acts.empty()) {
            f.attrs.set("npusim_clip_lo", lo);
            f.attrs.set("npusim_clip_hi", hi);
        }
    } else if (op.op_type == "Add" || op.op_type == "Mul") {
        std::vector<std::string> b;
        if (!act_dq(0, x) || !act_dq(1, b)) return false;
        f.op_type = op.op_type == "Add" ? "QLinearAdd" : "QLinearMul";
        f.domain = "com.microsoft";
        f.inputs = x;
        f.inputs.insert(f.inputs.end(), b.begin(), b.end());
        f.inputs.insert(f.inputs.end(), qy.begin(), qy.end());
    } else if (op.op_type == "Sub" || op.op_type == "Max" || op.op_type == "Min") {
        // Two 4-D int8 activations (issue 15): QLinearAdd's operand layout (a, as, az, b, bs, bz, ys,
        // yz) under npusim's own domain (onnxruntime has no QLinearSub/Max/Min); the checker maps it
        // back to the ONNX op. A scalar or constant operand stays in float for the LUT (lower_act.cpp).
        std::vector<std::string> b;
        if (op.inputs.size() != 2) return false;
        for (size_t k = 0; k < 2; ++k) {
            const ir::Value* iv = ref_.find_value(op.input(k));
            if (!iv || iv->shape.size() != 4) return false;
        }
        if (!act_dq(0, x) || !act_dq(1, b)) return false;
        f.op_type = "QLinear" + op.op_type;
        f.domain = "npusim";
        f.inputs = x;
        f.inputs.insert(f.inputs.end(), b.begin(), b.end());
        f.inputs.insert(f.inputs.end(), qy.begin(), qy.end());
    } else if (op.op_type == "GlobalAveragePool") {
        if (!act_dq(0, x)) return false;
        f.op_type = "QLinearGlobalAveragePool";
        f.domain = "com.microsoft";
        f.inputs = x;
        f.inputs.insert(f.inputs.end(), qy.begin(), qy.end());
        f.attrs.set("channels_last", int64_t{0});
    } else {  // Concat
        f.op_type = "QLinearConcat";
        f.domain = "com.microsoft";
        f.inputs = qy;
        for (size_t k = 0; k < op.inputs.size(); ++k) {
            if (!act_dq(k, x)) return false;
            f.inputs.insert(f.inputs.end(), x.begin(), x.end());
        }
    }
    std::sort(members.begin(), members.end());
    members.erase(std::unique(members.begin(), members.end()), members.end());
    for (size_t m : members) claimed[m] = true;
    std::string chain;
    for (size_t a : acts) chain += " -> " + rn[a].op_type;
    how[static_cast<size_t>(p)] = "QDQ unit DequantizeLinear -> " + op.op_type + chain + " -> QuantizeLinear as " +
                                  f.op_type + desc;
    unit[static_cast<size_t>(p)] = members;
    fused[static_cast<size_t>(p)] = std::move(f);
    return true;
}

bool UnitGraph::fuse_float_out(size_t i, std::vector<bool>& claimed, std::map<size_t, ir::Node>& fused,
                               std::map<size_t, std::vector<size_t>>& unit, std::map<size_t, std::string>& how) {
    const auto& rn = ref_.nodes();
    const ir::Node& op = rn[i];
    if (!op.domain.empty() || (op.op_type != "Conv" && op.op_type != "Gemm") || op.outputs.size() != 1) return false;
    const ir::Value* yv = ref_.find_value(op.outputs[0]);
    if (!yv || yv->dtype != num::DType::F32) return false;
    auto uses = [&](const std::string& v) {
        auto it = uses_.find(v);
        return it == uses_.end() ? size_t{0} : it->second;
    };
    // The DQ producing input k, read only here: of a non-constant per-tensor int8/uint8 tensor
    // (activation) or of a constant int8 / int32 tensor (weights / bias).
    auto dq_of = [&](size_t k, bool constant, num::DType want) -> int {
        if (!op.has_input(k)) return -1;
        auto it = producer_.find(op.input(k));
        if (it == producer_.end() || claimed[it->second] || !is_dq(rn[it->second]) || uses(op.input(k)) != 1) return -1;
        const ir::Node& dq = rn[it->second];
        const ir::Value* v = ref_.find_value(dq.input(0));
        if (!v || v->is_constant() != constant) return -1;
        if (constant ? v->dtype != want : (!is_q8(v->dtype) || !per_tensor(ref_, dq))) return -1;
        return static_cast<int>(it->second);
    };
    const int dx = dq_of(0, false, num::DType::I8), dw = dq_of(1, true, num::DType::I8);
    if (dx < 0 || dw < 0) return false;
    const ir::Node &qx = rn[static_cast<size_t>(dx)], &qw = rn[static_cast<size_t>(dw)];
    if (!weight_axis_ok(ref_, qw, out_axis(op))) return false;
    std::vector<size_t> members{static_cast<size_t>(dx), static_cast<size_t>(dw), i};
    std::string bias;
    if (op.has_input(2)) {
        if (const int db = dq_of(2, true, num::DType::I32); db >= 0) {
            bias = rn[static_cast<size_t>(db)].input(0);
            members.push_back(static_cast<size_t>(db));
        } else {
            const ir::Value* bv = ref_.find_value(op.input(2));
            if (!bv || !bv->is_constant() || bv->dtype != num::DType::F32) return false;
            bias = op.input(2);
        }
    }
    ir::Node f;
    f.name = op.name;
    f.outputs = op.outputs;
    f.inputs = {qx.input(0), qx.input(1), qx.input(2), qw.input(0), qw.input(1), qw.input(2)};
    if (op.op_type == "Conv") {
        f.op_type = "QLinearConv";
        f.attrs = op.attrs;
        f.inputs.insert(f.inputs.end(), {"", ""});  // no y_scale / y_zero_point: the output stays float
        if (!bias.empty()) f.inputs.push_back(bias);
    } else {
        if (ir::attr_float(op.attrs, "beta", 1.0f) != 1.0f && !bias.empty()) return false;
        f.op_type = "QGemm";
        f.domain = "com.microsoft";
        if (!bias.empty()) f.inputs.push_back(bias);
        f.attrs.set("alpha", ir::attr_float(op.attrs, "alpha", 1.0f));
        f.attrs.set("transA", ir::attr_int(op.attrs, "transA", 0));
        f.attrs.set("transB", ir::attr_int(op.attrs, "transB", 0));
    }
    f.attrs.set("npusim_float_out", int64_t{1});
    std::sort(members.begin(), members.end());
    for (size_t m : members) claimed[m] = true;
    how[i] = "QDQ unit DequantizeLinear -> " + op.op_type + " with no QuantizeLinear as " + f.op_type +
             " with a float output (" + (bias.empty() ? "no" : num::dtype_name(ref_.find_value(bias)->dtype)) + " bias)";
    unit[i] = members;
    fused[i] = std::move(f);
    return true;
}

const ir::Value* UnitGraph::find_value(const std::string& name) const {
    auto it = extra_.find(name);
    return it != extra_.end() ? &it->second : ref_.find_value(name);
}

const ir::Value& UnitGraph::value(const std::string& name) const {
    const ir::Value* v = find_value(name);
    if (!v) throw ir::GraphError("unknown value '" + name + "'");
    return *v;
}

int UnitGraph::producer(const std::string& v) const {
    auto it = producer_.find(v);
    return it == producer_.end() ? -1 : static_cast<int>(it->second);
}

std::vector<size_t> UnitGraph::consumers(const std::string& v) const {
    auto it = consumers_.find(v);
    return it == consumers_.end() ? std::vector<size_t>{} : it->second;
}

bool UnitGraph::fold_const_dq(size_t i, std::vector<bool>& claimed, std::map<size_t, ir::Node>& fused,
                              std::map<size_t, std::vector<size_t>>& unit, std::map<size_t, std::string>& how) {
    const auto& rn = ref_.nodes();
    const ir::Node& op = rn[i];
    if (!op.domain.empty() || op.inputs.size() != 2 || op.outputs.size() != 1 ||
        (op.op_type != "Add" && op.op_type != "Sub" && op.op_type != "Mul" && op.op_type != "Div"))
        return false;
    auto dq_of = [&](const std::string& v) -> int {
        auto it = producer_.find(v);
        if (it == producer_.end() || claimed[it->second] || !is_dq(rn[it->second])) return -1;
        return static_cast<int>(it->second);
    };
    for (size_t k = 0; k < 2; ++k) {
        const int d = dq_of(op.input(k)), a = dq_of(op.input(1 - k));
        if (d < 0 || a < 0) continue;
        const ir::Node& dq = rn[static_cast<size_t>(d)];
        const ir::Value* cv = ref_.find_value(dq.input(0));
        const ir::Value* av = ref_.find_value(rn[static_cast<size_t>(a)].input(0));
        const ir::Value* ov = ref_.find_value(dq.outputs.at(0));
        auto u = uses_.find(op.input(k));
        if (!cv || !cv->is_constant() || !is_q8(cv->dtype) || !av || av->is_constant() || !ov ||
            !per_tensor(ref_, dq) || u == uses_.end() || u->second != 1 || cv->data->numel() < 2)
            continue;
        num::QuantParams qp;
        if (!ir::quant_params_of(ref_, dq, 0, qp) || qp.scale.size() != 1 || qp.zero_point.size() != 1) continue;
        const num::Tensor& q = *cv->data;
        num::Tensor t(num::DType::F32, q.shape());
        float* out = t.data<float>();
        for (size_t e = 0; e < q.numel(); ++e) {
            const int32_t code = q.dtype() == num::DType::U8 ? int32_t{q.data<uint8_t>()[e]} : int32_t{q.data<int8_t>()[e]};
            out[e] = static_cast<float>(code - qp.zero_point[0]) * qp.scale[0];  // DequantizeLinear in float32
        }
        ir::Value c;
        c.name = dq.outputs.at(0) + "/npusim_const";
        c.dtype = num::DType::F32;
        c.shape = ov->shape;
        c.shape_known = true;
        c.data = std::move(t);
        ir::Node f = op;
        f.inputs[k] = c.name;
        extra_.emplace(c.name, std::move(c));
        claimed[static_cast<size_t>(d)] = claimed[i] = true;
        unit[i] = {std::min(static_cast<size_t>(d), i), std::max(static_cast<size_t>(d), i)};
        how[i] = "DequantizeLinear of a constant folded into a float constant (onnxruntime runs the " + op.op_type +
                 " in float)";
        fused[i] = std::move(f);
        return true;
    }
    return false;
}

ir::Graph UnitGraph::checker_graph() const {
    ir::Graph g;
    auto add = [&](const ir::Value& val) {
        ir::Value c;
        c.name = val.name;
        c.dtype = val.dtype;
        c.shape = val.shape;
        c.shape_known = val.shape_known;
        c.quant = val.quant;
        if (val.is_constant()) c.data = val.data->numel() <= 4096 ? *val.data : num::Tensor(val.dtype, {1});
        g.add_value(std::move(c));
    };
    for (const auto& [name, val] : ref_.values()) add(val);
    for (const auto& [name, val] : extra_) add(val);
    for (const auto& n : nodes_) g.add_node(n);
    g.inputs() = ref_.inputs();
    g.outputs() = ref_.outputs();
    for (const auto& [d, ver] : ref_.opsets()) g.set_opset(d, ver);
    return g;
}

}  // namespace drv::rknpu::compiler_detail
