// SPDX-License-Identifier: MIT
// Shape/dtype rules, one small function per operator family (ONNX operator docs for opsets 7-17,
// seed 002 for the com.microsoft quantization ops). Rules see the node's input Values and write
// the output Values' dtype and shape; constant folding lives in constant_folding.cpp.
#include "compiler/ir/shape_inference.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>

#include "shape_internal.h"

namespace drv::ir {

std::vector<int64_t> broadcast_shapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                                      const std::string& what) {
    size_t r = std::max(a.size(), b.size());
    std::vector<int64_t> out(r);
    for (size_t i = 0; i < r; ++i) {
        int64_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
        int64_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
        if (da != db && da != 1 && db != 1)
            throw GraphError(what + ": shapes " + shape_to_string(a) + " and " + shape_to_string(b) +
                             " do not broadcast");
        out[i] = da == 1 ? db : da;
    }
    return out;
}

std::vector<int64_t> constant_ints(const Graph& g, const std::string& value, const std::string& what) {
    const Value* v = g.find_value(value);
    if (!v || !v->is_constant())
        throw GraphError(what + ": input '" + value + "' must be a constant (fold it or fix it with --input-shape)");
    const num::Tensor& t = *v->data;
    std::vector<int64_t> out(t.numel());
    if (t.dtype() == num::DType::I64) {
        std::copy(t.data<int64_t>(), t.data<int64_t>() + t.numel(), out.begin());
    } else if (t.dtype() == num::DType::I32) {
        std::copy(t.data<int32_t>(), t.data<int32_t>() + t.numel(), out.begin());
    } else {
        throw GraphError(what + ": input '" + value + "' must be int32/int64, got " + num::dtype_name(t.dtype()));
    }
    return out;
}

namespace shape {

int64_t normalize_axis(int64_t axis, size_t rank, const Ctx& c) {
    int64_t r = static_cast<int64_t>(rank);
    if (axis < -r || axis >= r)
        throw GraphError(c.node.label() + ": axis " + std::to_string(axis) + " out of range for rank " +
                         std::to_string(rank));
    return axis < 0 ? axis + r : axis;
}

const Value& Ctx::in(size_t i) const {
    if (!node.has_input(i)) throw GraphError(node.label() + ": required input " + std::to_string(i) + " is missing");
    const Value& v = g.value(node.input(i), node.label());
    if (!v.shape_known)
        throw GraphError(node.label() + ": shape of input '" + v.name + "' is unknown");
    return v;
}

void Ctx::set(size_t i, num::DType dt, std::vector<int64_t> shape) const {
    if (i >= node.outputs.size() || node.outputs[i].empty()) return;
    int64_t n = 1;
    for (int64_t d : shape) {
        if (d < 0) throw GraphError(node.label() + ": output '" + node.outputs[i] + "' gets a negative dimension " + shape_to_string(shape));
        if (d && n > kMaxTensorElements / d)
            throw GraphError(node.label() + ": output '" + node.outputs[i] + "' shape " + shape_to_string(shape) +
                             " has more than 2^31 elements (limit of the importer)");
        n *= d;
    }
    Value& v = g.get_or_add_value(node.outputs[i]);
    v.dtype = dt;
    v.shape = std::move(shape);
    v.shape_known = true;
}

void Ctx::fail(const std::string& what) const { throw GraphError(node.label() + ": " + what); }

namespace {

void same_as_input0(const Ctx& c) { c.set(0, c.in(0).dtype, c.in(0).shape); }

void dropout(const Ctx& c) {
    same_as_input0(c);
    c.set(1, num::DType::Bool, c.in(0).shape);
}

void cast(const Ctx& c) {
    int64_t to = attr_int(c.node.attrs, "to", -1);
    num::DType dt = onnx_dtype(to, c);
    c.set(0, dt, c.in(0).shape);
}

void broadcast_n(const Ctx& c, num::DType dt, std::vector<size_t> idx) {
    std::vector<int64_t> s = c.in(idx[0]).shape;
    for (size_t k = 1; k < idx.size(); ++k) s = broadcast_shapes(s, c.in(idx[k]).shape, c.node.label());
    c.set(0, dt, s);
}

/// ONNX type constraint "T" shared by inputs `idx` (Add, Equal, Max ...: one type for all).
void same_type(const Ctx& c, const std::vector<size_t>& idx) {
    for (size_t k = 1; k < idx.size(); ++k)
        if (c.in(idx[k]).dtype != c.in(idx[0]).dtype)
            c.fail(std::string("inputs must have one type (ONNX type constraint T): '") + c.in(idx[0]).name + "' is " +
                   num::dtype_name(c.in(idx[0]).dtype) + ", '" + c.in(idx[k]).name + "' is " +
                   num::dtype_name(c.in(idx[k]).dtype));
}

void binary(const Ctx& c) {
    same_type(c, {0, 1});
    broadcast_n(c, c.in(0).dtype, {0, 1});
}
void power(const Ctx& c) { broadcast_n(c, c.in(0).dtype, {0, 1}); }  // Pow: T and T1 may differ
void compare(const Ctx& c) {
    same_type(c, {0, 1});
    broadcast_n(c, num::DType::Bool, {0, 1});
}
void variadic(const Ctx& c) {
    std::vector<size_t> idx;
    for (size_t i = 0; i < c.node.inputs.size(); ++i) idx.push_back(i);
    if (idx.empty()) c.fail("needs at least one input");
    same_type(c, idx);
    broadcast_n(c, c.in(0).dtype, idx);
}

/// Inputs `idx` are 1-D of `n` elements (BatchNormalization's scale/B/mean/var, InstanceNormalization's
/// scale/B: "1-D tensor of size C").
void per_channel_inputs(const Ctx& c, std::vector<size_t> idx, int64_t n, const char* what) {
    for (size_t i : idx) {
        if (!c.has(i)) continue;
        const Value& v = c.in(i);
        if (v.shape.size() != 1 || v.shape[0] != n)
            c.fail(std::string(what) + " input '" + v.name + "' must be 1-D [" + std::to_string(n) + "] (the input's " +
                   "channels), got " + v.shape_str());
    }
}

void batch_norm(const Ctx& c) {
    const Value& x = c.in(0);
    if (x.shape.size() < 2) c.fail("input must have rank >= 2 (N, C, ...), got " + x.shape_str());
    for (size_t i = 1; i <= 4; ++i) (void)c.in(i);  // all five inputs are required
    per_channel_inputs(c, {1, 2, 3, 4}, x.shape[1], "scale/B/mean/var");
    same_as_input0(c);
    for (size_t i = 1; i < c.node.outputs.size() && i < 3; ++i) c.set(i, c.in(i + 2).dtype, c.in(i + 2).shape);
}

void instance_norm(const Ctx& c) {
    const Value& x = c.in(0);
    if (x.shape.size() < 3) c.fail("input must have rank >= 3 (N, C, D1, ...), got " + x.shape_str());
    (void)c.in(1);
    (void)c.in(2);
    per_channel_inputs(c, {1, 2}, x.shape[1], "scale/B");
    same_as_input0(c);
}

/// Softmax / LogSoftmax / Hardmax: the axis attribute names a dimension of the input.
void softmax_like(const Ctx& c) {
    if (c.node.attrs.has("axis")) (void)normalize_axis(attr_int(c.node.attrs, "axis", -1), c.in(0).shape.size(), c);
    same_as_input0(c);
}
void where(const Ctx& c) { broadcast_n(c, c.in(1).dtype, {0, 1, 2}); }
void qlinear_binary(const Ctx& c) { broadcast_n(c, c.in(0).dtype, {0, 3}); }
void mul_integer(const Ctx& c) { broadcast_n(c, num::DType::I32, {0, 2}); }

/// QuantizeLinear / DequantizeLinear parameters (ONNX operator docs, seed 002): y_scale a scalar (or a
/// one-element vector: per tensor, as onnxruntime reads it) or a 1-D vector of x.shape[axis] elements
/// (per axis); the zero point, when given, has the scale's shape. Blocked quantization (block_size,
/// opset 21) has other shapes and is left to the executor.
void quant_params(const Ctx& c) {
    if (c.node.attrs.has("block_size")) return;
    const Value& x = c.in(0);
    const Value& s = c.in(1);
    int64_t n = 1;
    for (int64_t d : s.shape) n *= d;
    if (n != 1) {
        if (s.shape.size() != 1)
            c.fail("scale '" + s.name + "' must be a scalar or 1-D (per axis), got " + s.shape_str());
        const int64_t axis = normalize_axis(attr_int(c.node.attrs, "axis", 1), x.shape.size(), c);
        if (s.shape[0] != x.shape[static_cast<size_t>(axis)])
            c.fail("per-axis scale '" + s.name + "' has " + std::to_string(s.shape[0]) + " elements, input '" + x.name +
                   "' " + x.shape_str() + " has " + std::to_string(x.shape[static_cast<size_t>(axis)]) + " along axis " +
                   std::to_string(axis));
    }
    if (c.has(2)) {
        const Value& z = c.in(2);
        int64_t nz = 1;
        for (int64_t d : z.shape) nz *= d;
        if (nz != n) c.fail("zero point '" + z.name + "' " + z.shape_str() + " must have the scale's shape " + s.shape_str());
    }
}

void quantize_linear(const Ctx& c) {
    quant_params(c);
    num::DType dt = num::DType::U8;
    if (c.node.has_input(2)) dt = c.in(2).dtype;
    c.set(0, dt, c.in(0).shape);
}
void dequantize_linear(const Ctx& c) {
    quant_params(c);
    c.set(0, num::DType::F32, c.in(0).shape);
}
void qlinear_unary(const Ctx& c) { c.set(0, c.in(0).dtype, c.in(0).shape); }

void shape_op(const Ctx& c) {
    int64_t r = static_cast<int64_t>(c.in(0).shape.size());
    int64_t start = attr_int(c.node.attrs, "start", 0), end = attr_int(c.node.attrs, "end", r);
    if (start < 0) start += r;
    if (end < 0) end += r;
    start = std::clamp<int64_t>(start, 0, r);
    end = std::clamp<int64_t>(end, 0, r);
    c.set(0, num::DType::I64, {std::max<int64_t>(0, end - start)});
}

void size_op(const Ctx& c) { c.set(0, num::DType::I64, {}); }

}  // namespace

num::DType onnx_dtype(int64_t code, const Ctx& c) {
    // TensorProto.DataType codes (onnx.proto).
    switch (code) {
        case 1: return num::DType::F32;
        case 2: return num::DType::U8;
        case 3: return num::DType::I8;
        case 4: return num::DType::U16;
        case 5: return num::DType::I16;
        case 6: return num::DType::I32;
        case 7: return num::DType::I64;
        case 9: return num::DType::Bool;
        case 10: return num::DType::F16;
        default: c.fail("unsupported data type code " + std::to_string(code)); return num::DType::F32;
    }
}

const std::map<std::string, Rule>& rules() {
    static const std::map<std::string, Rule> table = [] {
        std::map<std::string, Rule> t;
        for (const char* op : {"Relu", "Sigmoid", "Tanh", "Abs", "Neg", "Exp", "Log", "Sqrt", "Ceil", "Floor", "Round",
                               "Sin", "Cos", "Tan", "Erf", "Elu", "Selu", "Celu", "LeakyRelu", "HardSigmoid",
                               "HardSwish", "Softplus", "Softsign", "ThresholdedRelu", "Gelu", "Not", "Identity",
                               "Clip", "Reciprocal", "LpNormalization", "CumSum", "Trilu", "Sign",
                               "ScatterND", "ScatterElements", "Scatter", "ReverseSequence", "Mish", "Swish"})
            t[std::string(":") + op] = same_as_input0;
        t[":LayerNormalization"] = same_as_input0;
        for (const char* op : {"Softmax", "LogSoftmax", "Hardmax"}) t[std::string(":") + op] = softmax_like;
        t[":BatchNormalization"] = batch_norm;
        t[":InstanceNormalization"] = instance_norm;
        t[":Dropout"] = dropout;
        t[":Cast"] = cast;
        for (const char* op : {"Add", "Sub", "Mul", "Div", "Mod", "BitShift", "PRelu", "And", "Or", "Xor"})
            t[std::string(":") + op] = binary;
        t[":Pow"] = power;
        for (const char* op : {"And", "Or", "Xor", "Equal", "Greater", "Less", "GreaterOrEqual", "LessOrEqual"})
            t[std::string(":") + op] = compare;
        for (const char* op : {"Max", "Min", "Sum", "Mean"}) t[std::string(":") + op] = variadic;
        t[":Where"] = where;
        t[":Shape"] = shape_op;
        t[":Size"] = size_op;
        t[":QuantizeLinear"] = quantize_linear;
        t[":DequantizeLinear"] = dequantize_linear;
        t["com.microsoft:QuantizeLinear"] = quantize_linear;
        t["com.microsoft:DequantizeLinear"] = dequantize_linear;
        t["com.microsoft:QLinearAdd"] = qlinear_binary;
        t["com.microsoft:QLinearMul"] = qlinear_binary;
        t["com.microsoft:MulInteger"] = mul_integer;
        t["com.microsoft:QLinearLeakyRelu"] = qlinear_unary;
        t["com.microsoft:QLinearSigmoid"] = qlinear_unary;
        t["com.microsoft:QLinearSoftmax"] = qlinear_unary;
        add_nn_rules(t);
        add_tensor_rules(t);
        return t;
    }();
    return table;
}

}  // namespace shape

bool has_shape_rule(const std::string& op_type, const std::string& domain) {
    return shape::rules().count(domain + ":" + op_type) != 0;
}

std::vector<std::string> shape_rule_ops() {
    std::vector<std::string> out;
    for (const auto& [k, r] : shape::rules()) out.push_back(k);
    return out;
}

bool make_pads_explicit(const Graph& g, Node& n) {
    // ONNX's auto_pad: SAME_UPPER / SAME_LOWER pad the input so that out = ceil(in / stride):
    // total = max(0, (out - 1) stride + (k - 1) dilation + 1 - in), SAME_UPPER with the odd one at
    // the end (begin = total / 2), SAME_LOWER at the beginning; VALID pads nothing. ConvTranspose's
    // auto_pad is defined on its output and is left as it is.
    static const std::set<std::string> kOps{"Conv", "QLinearConv", "ConvInteger", "MaxPool", "AveragePool", "LpPool"};
    const bool ms = n.domain == "com.microsoft" && n.op_type == "QLinearConv";
    if ((!n.domain.empty() && !ms) || !kOps.count(n.op_type)) return false;
    const std::string mode = attr_string(n.attrs, "auto_pad", "NOTSET");
    if (mode != "SAME_UPPER" && mode != "SAME_LOWER" && mode != "VALID") return false;
    const Value* x = n.has_input(0) ? g.find_value(n.input(0)) : nullptr;
    if (!x || !x->shape_known || x->shape.size() < 3) return false;
    const size_t sp = x->shape.size() - 2;
    std::vector<int64_t> k = attr_ints(n.attrs, "kernel_shape", {});
    if (k.empty()) {
        const size_t w_idx = n.op_type == "QLinearConv" ? 3 : 1;
        const Value* w = n.op_type != "MaxPool" && n.op_type != "AveragePool" && n.op_type != "LpPool" && n.has_input(w_idx)
                             ? g.find_value(n.input(w_idx))
                             : nullptr;
        if (!w || !w->shape_known || w->shape.size() != sp + 2) return false;
        k.assign(w->shape.begin() + 2, w->shape.end());
    }
    const std::vector<int64_t> st = attr_ints(n.attrs, "strides", std::vector<int64_t>(sp, 1));
    const std::vector<int64_t> dl = attr_ints(n.attrs, "dilations", std::vector<int64_t>(sp, 1));
    if (k.size() != sp || st.size() != sp || dl.size() != sp) return false;
    std::vector<int64_t> pads(2 * sp, 0);
    for (size_t i = 0; i < sp && mode != "VALID"; ++i) {
        const int64_t in = x->shape[i + 2];
        if (in <= 0 || st[i] <= 0 || dl[i] <= 0 || k[i] <= 0) return false;
        const int64_t out = (in + st[i] - 1) / st[i];
        const int64_t total = std::max<int64_t>(0, (out - 1) * st[i] + (k[i] - 1) * dl[i] + 1 - in);
        pads[i] = mode == "SAME_UPPER" ? total / 2 : total - total / 2;
        pads[i + sp] = total - pads[i];
    }
    n.attrs.set("pads", pads);
    n.attrs.set("auto_pad", std::string("NOTSET"));
    return true;
}

void infer_shapes(Graph& g) {
    g.sort_topologically();
    const auto& table = shape::rules();
    std::map<std::string, int> folded;  // op type -> nodes folded into constants
    for (size_t i = 0; i < g.nodes().size();) {
        if (g.nodes()[i].op_type == "If" && g.nodes()[i].domain.empty()) {
            shape::inline_if(g, i);  // the chosen branch's nodes now start at i
            continue;
        }
        const Node& n = g.nodes()[i];
        auto it = table.find(n.domain + ":" + n.op_type);
        if (it == table.end())
            throw GraphError("node " + n.label() + ": operator " + (n.domain.empty() ? "ai.onnx" : n.domain) + ":" +
                             n.op_type + " is not supported by the importer");
        shape::Ctx c{g, n};
        it->second(c);
        for (const auto& o : n.outputs) {
            if (o.empty()) continue;
            const Value* v = g.find_value(o);
            if (!v || !v->shape_known)
                throw GraphError("node " + n.label() + ": output '" + o + "' shape could not be inferred");
        }
        const std::string op = n.op_type;
        if (shape::try_fold(g, i)) ++folded[op];  // a folded node is erased; i then names the next one
        else ++i;
    }
    if (!folded.empty()) {
        std::string s = "constant subgraph folded:";
        for (const auto& [op, k] : folded) s += " " + std::to_string(k) + " " + op + ",";
        s.pop_back();
        g.rewrites().push_back(s);
    }
}

}  // namespace drv::ir
