// SPDX-License-Identifier: MIT
// Folding of constant shape arithmetic during shape inference. Exported models compute Reshape
// targets with Shape -> Gather -> Unsqueeze -> Concat chains; these are folded here (integer and
// data-movement ops only, so no floating-point result depends on this code). Float compute is
// never folded: the reference executor and the NPU see it as written.
#include <algorithm>
#include <cstring>
#include <set>

#include "shape_internal.h"

namespace drv::ir::shape {
namespace {

bool is_int(num::DType d) { return d == num::DType::I64 || d == num::DType::I32; }

std::vector<int64_t> ints_of(const num::Tensor& t) {
    std::vector<int64_t> out(t.numel());
    for (size_t i = 0; i < out.size(); ++i)
        out[i] = t.dtype() == num::DType::I64 ? t.data<int64_t>()[i] : t.data<int32_t>()[i];
    return out;
}

num::Tensor int_tensor(num::DType dt, const std::vector<int64_t>& shape, const std::vector<int64_t>& v) {
    num::Tensor t(dt, shape);
    for (size_t i = 0; i < v.size() && i < t.numel(); ++i) {
        if (dt == num::DType::I64) t.data<int64_t>()[i] = v[i];
        else t.data<int32_t>()[i] = static_cast<int32_t>(v[i]);
    }
    return t;
}

/// Ops whose output equals input 0's bytes with a new shape.
bool is_view(const std::string& op) {
    static const std::set<std::string> k{"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity"};
    return k.count(op) != 0;
}

bool fold_node(Graph& g, const Node& n, const std::vector<const num::Tensor*>& in, Value& out) {
    const std::string& op = n.op_type;
    if (op == "Shape") {
        const Value& x = g.value(n.input(0));
        int64_t r = static_cast<int64_t>(x.shape.size());
        int64_t s = attr_int(n.attrs, "start", 0), e = attr_int(n.attrs, "end", r);
        if (s < 0) s += r;
        if (e < 0) e += r;
        s = std::clamp<int64_t>(s, 0, r);
        e = std::clamp<int64_t>(e, 0, r);
        std::vector<int64_t> v(x.shape.begin() + s, x.shape.begin() + std::max(s, e));
        out.data = int_tensor(num::DType::I64, out.shape, v);
        return true;
    }
    if (in.empty() || !in[0]) return false;
    if (is_view(op)) {
        num::Tensor t(in[0]->dtype(), out.shape);
        if (t.nbytes() != in[0]->nbytes()) return false;
        std::memcpy(t.raw(), in[0]->raw(), t.nbytes());
        t.quant = in[0]->quant;
        out.data = std::move(t);
        return true;
    }
    if (!is_int(in[0]->dtype())) return false;
    auto a = ints_of(*in[0]);
    if (op == "Cast" && is_int(out.dtype)) {
        out.data = int_tensor(out.dtype, out.shape, a);
        return true;
    }
    if (op == "Concat") {
        std::vector<int64_t> v;
        for (const auto* t : in) {
            if (!t || !is_int(t->dtype()) || t->rank() > 1) return false;
            auto b = ints_of(*t);
            v.insert(v.end(), b.begin(), b.end());
        }
        out.data = int_tensor(out.dtype, out.shape, v);
        return true;
    }
    if (op == "Gather" && in.size() > 1 && in[1] && is_int(in[1]->dtype()) && in[0]->rank() == 1) {
        auto idx = ints_of(*in[1]);
        std::vector<int64_t> v;
        for (int64_t i : idx) {
            if (i < 0) i += static_cast<int64_t>(a.size());
            if (i < 0 || i >= static_cast<int64_t>(a.size())) throw GraphError(n.label() + ": constant index out of range");
            v.push_back(a[static_cast<size_t>(i)]);
        }
        out.data = int_tensor(out.dtype, out.shape, v);
        return true;
    }
    static const std::set<std::string> kArith{"Add", "Sub", "Mul", "Div"};
    if (kArith.count(op) && in.size() == 2 && in[1] && is_int(in[1]->dtype())) {
        auto b = ints_of(*in[1]);
        size_t nout = 1;
        for (int64_t d : out.shape) nout *= static_cast<size_t>(d);
        if (out.shape.size() > 1 || (a.size() != nout && a.size() != 1) || (b.size() != nout && b.size() != 1)) return false;
        std::vector<int64_t> v(nout);
        for (size_t i = 0; i < nout; ++i) {
            int64_t x = a[a.size() == 1 ? 0 : i], y = b[b.size() == 1 ? 0 : i];
            if (op == "Div" && y == 0) throw GraphError(n.label() + ": constant division by zero");
            v[i] = op == "Add" ? x + y : op == "Sub" ? x - y : op == "Mul" ? x * y : x / y;
        }
        out.data = int_tensor(out.dtype, out.shape, v);
        return true;
    }
    return false;
}

}  // namespace

bool try_fold(Graph& g, size_t index) {
    const Node& n = g.nodes()[index];
    if (!n.domain.empty() || n.outputs.size() != 1) return false;
    std::vector<const num::Tensor*> in;
    for (const auto& name : n.inputs) {
        if (name.empty()) {
            in.push_back(nullptr);
            continue;
        }
        const Value& v = g.value(name);
        if (!v.is_constant() && n.op_type != "Shape") return false;
        in.push_back(v.is_constant() ? &*v.data : nullptr);
    }
    Value& out = g.value(n.outputs[0]);
    if (!fold_node(g, n, in, out)) return false;
    // Keep the node list free of folded nodes: the output is now a constant value.
    g.nodes().erase(g.nodes().begin() + static_cast<long>(index));
    return true;
}

}  // namespace drv::ir::shape
