// SPDX-License-Identifier: MIT
// Constant folding during shape inference, as onnxruntime's ConstantFolding does before it
// executes a graph: a node whose inputs are all constants is run once with num::run_op (the same
// operator library the reference executor would run it with, so folding changes no value) and its
// outputs become constants. Shape and Size need only the input's shape. Exported models compute
// Reshape targets with Shape -> Gather -> Unsqueeze -> Concat chains, masks with ConstantOfShape /
// Range / Expand / Where, and weights of fake-quantized models with QuantizeLinear of a float
// initializer; all of these fold here. DequantizeLinear is never folded (onnxruntime keeps it: it is
// what the QDQ fusions key on), nor are outputs above kMaxFoldElements (the executor computes them).
#include <algorithm>
#include <cstring>
#include <set>

#include "numerics/ops.h"
#include "shape_internal.h"

namespace drv::ir::shape {
namespace {

/// Folded outputs larger than this stay computed at run time (memory of the constant table).
constexpr int64_t kMaxFoldElements = int64_t{1} << 24;

num::Tensor int_tensor(const std::vector<int64_t>& shape, const std::vector<int64_t>& v) {
    num::Tensor t(num::DType::I64, shape);
    for (size_t i = 0; i < v.size() && i < t.numel(); ++i) t.data<int64_t>()[i] = v[i];
    return t;
}

/// Ops folded from their input's shape alone.
bool fold_from_shape(Graph& g, const Node& n, Value& out) {
    if (n.op_type == "Shape") {
        const Value& x = g.value(n.input(0));
        const int64_t r = static_cast<int64_t>(x.shape.size());
        int64_t s = attr_int(n.attrs, "start", 0), e = attr_int(n.attrs, "end", r);
        if (s < 0) s += r;
        if (e < 0) e += r;
        s = std::clamp<int64_t>(s, 0, r);
        e = std::clamp<int64_t>(e, 0, r);
        out.data = int_tensor(out.shape, std::vector<int64_t>(x.shape.begin() + s, x.shape.begin() + std::max(s, e)));
        return true;
    }
    if (n.op_type == "Size") {
        out.data = int_tensor({}, {g.value(n.input(0)).numel()});
        return true;
    }
    return false;
}

/// Ops never folded: their output is not a function of the inputs (random), the QDQ structure
/// depends on them staying (DequantizeLinear), or they are control flow.
bool never_folded(const std::string& op) {
    static const std::set<std::string> k{"DequantizeLinear", "RandomNormal", "RandomUniform", "RandomNormalLike",
                                         "RandomUniformLike", "Multinomial", "Bernoulli", "If", "Loop", "Scan"};
    return k.count(op) != 0;
}

}  // namespace

bool try_fold(Graph& g, size_t index) {
    const Node& n = g.nodes()[index];
    if (!n.domain.empty() || n.outputs.empty() || !n.subgraphs.empty() || never_folded(n.op_type)) return false;
    for (const auto& o : n.outputs) {
        const Value* v = o.empty() ? nullptr : g.find_value(o);
        if (!v || !v->shape_known || v->numel() < 0 || v->numel() > kMaxFoldElements) return false;
        if (std::find(g.outputs().begin(), g.outputs().end(), o) != g.outputs().end()) return false;
    }
    bool folded = false;
    if (n.outputs.size() == 1 && (n.op_type == "Shape" || n.op_type == "Size")) {
        folded = fold_from_shape(g, n, g.value(n.outputs[0]));
    } else {
        std::vector<const num::Tensor*> in;
        bool unspecified = false;
        for (const auto& name : n.inputs) {
            if (name.empty()) {
                in.push_back(nullptr);
                continue;
            }
            const Value& v = g.value(name);
            if (!v.is_constant()) return false;
            unspecified |= v.contents_unspecified;
            in.push_back(&*v.data);
        }
        if (!num::op_supported(n.op_type, n.domain)) return false;
        if (unspecified) {  // timing-only import: the result has a shape, contents nobody reads
            for (const auto& o : n.outputs) {
                Value& v = g.value(o);
                v.data = num::Tensor::uninitialized(v.dtype, v.shape);
                v.contents_unspecified = true;
            }
            g.nodes().erase(g.nodes().begin() + static_cast<long>(index));
            return true;
        }
        num::Attributes attrs = n.attrs;
        if (n.op_type == "Split" && !attrs.has("split") && !n.has_input(1))
            attrs.set("num_outputs", static_cast<int64_t>(n.outputs.size()));
        if ((n.op_type == "Softmax" || n.op_type == "LogSoftmax") && g.opset("") < 13)
            attrs.set("_onnx_opset", g.opset(""));
        std::vector<num::Tensor> out;
        try {
            out = num::run_op(n.op_type, attrs, in, n.domain);
        } catch (const num::OpError& e) {
            throw GraphError(n.label() + ": " + e.what());
        }
        if (out.size() < n.outputs.size()) return false;
        for (size_t k = 0; k < n.outputs.size(); ++k) {
            Value& v = g.value(n.outputs[k]);
            if (out[k].dtype() != v.dtype || out[k].shape() != v.shape)
                throw GraphError(n.label() + ": folding output '" + v.name + "' gave " + num::dtype_name(out[k].dtype()) +
                                 " " + out[k].shape_str() + ", shape inference said " + num::dtype_name(v.dtype) + " " +
                                 v.shape_str());
        }
        for (size_t k = 0; k < n.outputs.size(); ++k) {
            out[k].quant = num::QuantParams();
            g.value(n.outputs[k]).data = std::move(out[k]);
        }
        folded = true;
    }
    if (!folded) return false;
    // Keep the node list free of folded nodes: the outputs are now constant values.
    g.nodes().erase(g.nodes().begin() + static_cast<long>(index));
    return true;
}

}  // namespace drv::ir::shape
