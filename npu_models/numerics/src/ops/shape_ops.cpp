// SPDX-License-Identifier: MIT
// Shape and data-movement operators for any element type: Reshape, Flatten, Squeeze, Unsqueeze,
// Identity, Concat, Split, Slice, Shape, Cast.
#include <cmath>
#include <cstring>

#include "op_common.h"

namespace num::ops {
namespace {

Tensor with_shape(const Tensor& x, std::vector<int64_t> shape, const std::string& op) {
    if (prod(shape) != static_cast<int64_t>(x.numel())) fail(op, "element count changes: " + x.shape_str());
    Tensor y = same_type_like(x, std::move(shape));
    if (x.nbytes()) std::memcpy(y.raw(), x.raw(), x.nbytes());
    return y;
}

Outputs reshape(const Attributes& a, const Inputs& in) {
    const Tensor& x = need(in, 0, "Reshape");
    std::vector<int64_t> s = opt(in, 1) ? int_values(*in[1], "Reshape") : a.get_ints("shape", {});
    const bool allowzero = a.get_int("allowzero", 0) != 0;
    int64_t known = 1, neg = -1;
    for (size_t i = 0; i < s.size(); ++i) {
        if (s[i] == 0 && !allowzero) {
            if (i >= x.shape().size()) fail("Reshape", "0 refers past the input rank");
            s[i] = x.shape()[i];
        }
        if (s[i] == -1) {
            if (neg >= 0) fail("Reshape", "more than one -1");
            neg = static_cast<int64_t>(i);
        } else if (s[i] < 0) {
            fail("Reshape", "negative dimension");
        } else {
            known *= s[i];
        }
    }
    if (neg >= 0) s[static_cast<size_t>(neg)] = known ? static_cast<int64_t>(x.numel()) / known : 0;
    return single(with_shape(x, s, "Reshape"));
}

Outputs flatten(const Attributes& a, const Inputs& in) {
    const Tensor& x = need(in, 0, "Flatten");
    const int64_t ax = a.get_int("axis", 1);
    const int r = x.rank();
    if (ax < -r || ax > r) fail("Flatten", "axis out of range");
    const size_t k = static_cast<size_t>(ax < 0 ? ax + r : ax);
    return single(with_shape(x, {prod(x.shape(), 0, k), prod(x.shape(), k)}, "Flatten"));
}

std::vector<int64_t> axes_arg(const Attributes& a, const Inputs& in, const std::string& op) {
    return opt(in, 1) ? int_values(*in[1], op) : a.get_ints("axes", {});
}

Outputs squeeze(const Attributes& a, const Inputs& in) {
    const Tensor& x = need(in, 0, "Squeeze");
    std::vector<int64_t> axes = axes_arg(a, in, "Squeeze");
    std::vector<bool> drop(x.shape().size(), false);
    if (axes.empty())
        for (size_t i = 0; i < drop.size(); ++i) drop[i] = x.shape()[i] == 1;
    for (int64_t ax : axes) {
        const int d = norm_axis(ax, x.rank(), "Squeeze");
        if (x.dim(d) != 1) fail("Squeeze", "cannot squeeze a dim of size " + std::to_string(x.dim(d)));
        drop[static_cast<size_t>(d)] = true;
    }
    std::vector<int64_t> s;
    for (size_t i = 0; i < drop.size(); ++i)
        if (!drop[i]) s.push_back(x.shape()[i]);
    return single(with_shape(x, s, "Squeeze"));
}

Outputs unsqueeze(const Attributes& a, const Inputs& in) {
    const Tensor& x = need(in, 0, "Unsqueeze");
    const std::vector<int64_t> axes = axes_arg(a, in, "Unsqueeze");
    const int r = x.rank() + static_cast<int>(axes.size());
    std::vector<bool> ins(static_cast<size_t>(r), false);
    for (int64_t ax : axes) {
        const int d = norm_axis(ax, r, "Unsqueeze");
        if (ins[static_cast<size_t>(d)]) fail("Unsqueeze", "duplicate axis");
        ins[static_cast<size_t>(d)] = true;
    }
    std::vector<int64_t> s;
    size_t j = 0;
    for (int i = 0; i < r; ++i) s.push_back(ins[static_cast<size_t>(i)] ? 1 : x.shape()[j++]);
    return single(with_shape(x, s, "Unsqueeze"));
}

Outputs identity(const Attributes&, const Inputs& in) { return single(need(in, 0, "Identity")); }

// Copies `count` rows of `row_bytes` from src (stride src_stride) to dst (stride dst_stride).
void copy_rows(const uint8_t* src, int64_t src_stride, uint8_t* dst, int64_t dst_stride, int64_t count, int64_t row_bytes) {
    for (int64_t i = 0; i < count; ++i) std::memcpy(dst + i * dst_stride, src + i * src_stride, static_cast<size_t>(row_bytes));
}

Outputs concat(const Attributes& a, const Inputs& in) {
    const Tensor& x0 = need(in, 0, "Concat");
    const int ax = norm_axis(a.get_int("axis", 0), x0.rank(), "Concat");
    std::vector<int64_t> os = x0.shape();
    os[static_cast<size_t>(ax)] = 0;
    for (size_t i = 0; i < in.size(); ++i) {
        const Tensor& x = need(in, i, "Concat");
        if (x.dtype() != x0.dtype() || x.rank() != x0.rank()) fail("Concat", "inputs must share type and rank");
        for (int d = 0; d < x.rank(); ++d)
            if (d != ax && x.dim(d) != x0.dim(d)) fail("Concat", "non-axis dims differ");
        os[static_cast<size_t>(ax)] += x.dim(ax);
    }
    Tensor y = same_type_like(x0, os);
    const int64_t es = static_cast<int64_t>(dtype_size(x0.dtype()));
    const int64_t outer = prod(os, 0, static_cast<size_t>(ax)), inner = prod(os, static_cast<size_t>(ax) + 1) * es;
    int64_t off = 0;
    for (const Tensor* x : in) {
        const int64_t rb = x->dim(ax) * inner;
        copy_rows(x->raw(), rb, y.raw() + off, os[static_cast<size_t>(ax)] * inner, outer, rb);
        off += rb;
    }
    return single(std::move(y));
}

// Split: sizes from input 1, the "split" attribute, or num_outputs equal parts (ONNX-18 rule:
// the last part is smaller when the dim does not divide).
Outputs split(const Attributes& a, const Inputs& in) {
    const Tensor& x = need(in, 0, "Split");
    const int ax = norm_axis(a.get_int("axis", 0), x.rank(), "Split");
    const int64_t dim = x.dim(ax);
    std::vector<int64_t> sizes = opt(in, 1) ? int_values(*in[1], "Split") : a.get_ints("split", {});
    if (sizes.empty()) {
        const int64_t n = a.get_int("num_outputs", 0);
        if (n < 1) fail("Split", "needs split sizes or num_outputs (importer: pass the node's output count as num_outputs)");
        const int64_t part = (dim + n - 1) / n;
        for (int64_t i = 0; i < n; ++i) sizes.push_back(std::max<int64_t>(0, std::min(part, dim - i * part)));
    }
    int64_t total = 0;
    for (int64_t s : sizes) total += s;
    if (total != dim) fail("Split", "split sizes do not sum to the axis length");
    const int64_t es = static_cast<int64_t>(dtype_size(x.dtype()));
    const int64_t outer = prod(x.shape(), 0, static_cast<size_t>(ax)), inner = prod(x.shape(), static_cast<size_t>(ax) + 1) * es;
    Outputs out;
    int64_t off = 0;
    for (int64_t s : sizes) {
        std::vector<int64_t> os = x.shape();
        os[static_cast<size_t>(ax)] = s;
        Tensor y = same_type_like(x, os);
        copy_rows(x.raw() + off, dim * inner, y.raw(), s * inner, outer, s * inner);
        off += s * inner;
        out.push_back(std::move(y));
    }
    return out;
}

Outputs shape_op(const Attributes& a, const Inputs& in) {
    const Tensor& x = need(in, 0, "Shape");
    const int r = x.rank();
    int64_t start = a.get_int("start", 0), end = a.get_int("end", r);
    start = std::min<int64_t>(r, std::max<int64_t>(0, start < 0 ? start + r : start));
    end = std::min<int64_t>(r, std::max<int64_t>(0, end < 0 ? end + r : end));
    Tensor y(DType::I64, {std::max<int64_t>(0, end - start)});
    for (int64_t i = start; i < end; ++i) y.data<int64_t>()[i - start] = x.dim(static_cast<int>(i));
    return single(std::move(y));
}

}  // namespace

void register_shape(OpTable& t) {
    t[":Reshape"] = reshape;
    t[":Flatten"] = flatten;
    t[":Squeeze"] = squeeze;
    t[":Unsqueeze"] = unsqueeze;
    t[":Identity"] = identity;
    t[":Concat"] = concat;
    t[":Split"] = split;
    t[":Shape"] = shape_op;
}

}  // namespace num::ops
