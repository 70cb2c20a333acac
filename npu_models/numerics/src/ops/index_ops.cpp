// SPDX-License-Identifier: MIT
// Indexing and generator operators for any element type (ONNX operator docs, opsets 7-17):
// Gather, Expand, Tile, Where, Range, ConstantOfShape, Size, Round and the boolean ops. Exported
// graphs compute Reshape targets and masks with them; the importer's constant folder and the
// reference executor both run them from here.
#include <cmath>
#include <cstring>
#include <limits>

#include "op_common.h"

namespace num::ops {
namespace {

/// Element count of `shape`, refusing products that do not fit (a crafted shape must not turn
/// into a small allocation and a large write).
int64_t checked_count(const std::vector<int64_t>& shape, const std::string& op) {
    int64_t n = 1;
    for (int64_t d : shape) {
        if (d < 0) fail(op, "negative dimension");
        if (d && n > std::numeric_limits<int64_t>::max() / d) fail(op, "output element count overflows");
        n *= d;
    }
    return n;
}

/// Copies element `src` of x to element `dst` of y (same dtype).
inline void copy_elem(const Tensor& x, int64_t src, Tensor& y, int64_t dst, size_t esz) {
    std::memcpy(y.raw() + static_cast<size_t>(dst) * esz, x.raw() + static_cast<size_t>(src) * esz, esz);
}

Outputs gather(const Attributes& a, const Inputs& in) {
    const Tensor& x = need(in, 0, "Gather");
    const Tensor& idx = need(in, 1, "Gather");
    if (x.rank() == 0) fail("Gather", "data must have rank >= 1");
    const int axis = norm_axis(a.get_int("axis", 0), x.rank(), "Gather");
    const std::vector<int64_t> iv = int_values(idx, "Gather");
    const int64_t dim = x.dim(axis);
    std::vector<int64_t> os(x.shape().begin(), x.shape().begin() + axis);
    os.insert(os.end(), idx.shape().begin(), idx.shape().end());
    os.insert(os.end(), x.shape().begin() + axis + 1, x.shape().end());
    checked_count(os, "Gather");
    const int64_t outer = prod(x.shape(), 0, static_cast<size_t>(axis));
    const int64_t inner = prod(x.shape(), static_cast<size_t>(axis) + 1);
    Tensor y = same_type_like(x, os);
    const size_t esz = dtype_size(x.dtype());
    for (int64_t o = 0; o < outer; ++o)
        for (size_t k = 0; k < iv.size(); ++k) {
            int64_t j = iv[k];
            if (j < -dim || j >= dim)
                fail("Gather", "index " + std::to_string(j) + " out of range for dim " + std::to_string(dim));
            if (j < 0) j += dim;
            const int64_t src = (o * dim + j) * inner, dst = (o * static_cast<int64_t>(iv.size()) + static_cast<int64_t>(k)) * inner;
            std::memcpy(y.raw() + static_cast<size_t>(dst) * esz, x.raw() + static_cast<size_t>(src) * esz,
                        static_cast<size_t>(inner) * esz);
        }
    return single(std::move(y));
}

/// y[i] = x[broadcast index of i] for an output shape x broadcasts to.
Tensor broadcast_to(const Tensor& x, const std::vector<int64_t>& os, const std::string& op) {
    checked_count(os, op);
    Tensor y = same_type_like(x, os);
    const size_t esz = dtype_size(x.dtype());
    const std::vector<int64_t> st = broadcast_strides(x.shape(), os);
    for_each_broadcast2(os, st, st, [&](int64_t o, int64_t ia, int64_t) { copy_elem(x, ia, y, o, esz); });
    return y;
}

Outputs expand(const Attributes&, const Inputs& in) {
    const Tensor& x = need(in, 0, "Expand");
    const std::vector<int64_t> shape = int_values(need(in, 1, "Expand"), "Expand");
    return single(broadcast_to(x, broadcast_shape(x.shape(), shape, "Expand"), "Expand"));
}

Outputs tile(const Attributes&, const Inputs& in) {
    const Tensor& x = need(in, 0, "Tile");
    const std::vector<int64_t> reps = int_values(need(in, 1, "Tile"), "Tile");
    if (reps.size() != x.shape().size()) fail("Tile", "repeats length differs from the input rank");
    std::vector<int64_t> os = x.shape();
    for (size_t i = 0; i < os.size(); ++i) {
        if (reps[i] < 0) fail("Tile", "negative repeat");
        if (reps[i] && os[i] > std::numeric_limits<int64_t>::max() / reps[i]) fail("Tile", "output dimension overflows");
        os[i] *= reps[i];
    }
    checked_count(os, "Tile");
    Tensor y = same_type_like(x, os);
    const size_t esz = dtype_size(x.dtype());
    const std::vector<int64_t> xs = contiguous_strides(x.shape()), ys = contiguous_strides(os);
    const int64_t n = static_cast<int64_t>(y.numel());
    for (int64_t o = 0; o < n; ++o) {
        int64_t rem = o, src = 0;
        for (size_t d = 0; d < os.size(); ++d) {
            const int64_t c = rem / ys[d];
            rem %= ys[d];
            src += (c % x.shape()[d]) * xs[d];
        }
        copy_elem(x, src, y, o, esz);
    }
    return single(std::move(y));
}

Outputs where(const Attributes&, const Inputs& in) {
    const Tensor& c = need(in, 0, "Where");
    const Tensor& x = need(in, 1, "Where");
    const Tensor& z = need(in, 2, "Where");
    expect_dtype(c, DType::Bool, "Where", "condition");
    if (x.dtype() != z.dtype()) fail("Where", "X and Y types differ");
    const std::vector<int64_t> os =
        broadcast_shape(broadcast_shape(c.shape(), x.shape(), "Where"), z.shape(), "Where");
    const Tensor cb = broadcast_to(c, os, "Where"), xb = broadcast_to(x, os, "Where"), zb = broadcast_to(z, os, "Where");
    Tensor y = same_type_like(x, os);
    const size_t esz = dtype_size(x.dtype());
    for (size_t i = 0; i < y.numel(); ++i)
        copy_elem(cb.data<uint8_t>()[i] ? xb : zb, static_cast<int64_t>(i), y, static_cast<int64_t>(i), esz);
    return single(std::move(y));
}

template <typename T>
Tensor range_typed(DType dt, T start, T limit, T delta) {
    if (delta == T{0}) fail("Range", "delta is 0");
    const double n_real = std::ceil((static_cast<double>(limit) - static_cast<double>(start)) / static_cast<double>(delta));
    const double cap = static_cast<double>(std::numeric_limits<int32_t>::max());
    if (!(n_real <= cap)) fail("Range", "more than 2^31 elements");
    const int64_t n = n_real > 0 ? static_cast<int64_t>(n_real) : 0;
    Tensor y(dt, {n});
    for (int64_t i = 0; i < n; ++i) y.data<T>()[i] = static_cast<T>(start + static_cast<T>(i) * delta);
    return y;
}

Outputs range(const Attributes&, const Inputs& in) {
    const Tensor& s = need(in, 0, "Range");
    const Tensor& l = need(in, 1, "Range");
    const Tensor& d = need(in, 2, "Range");
    if (s.numel() != 1 || l.numel() != 1 || d.numel() != 1) fail("Range", "start, limit and delta must be scalars");
    if (s.dtype() != l.dtype() || s.dtype() != d.dtype()) fail("Range", "input types differ");
    switch (s.dtype()) {
        case DType::F32: return single(range_typed<float>(DType::F32, s.data<float>()[0], l.data<float>()[0], d.data<float>()[0]));
        case DType::I32:
            return single(range_typed<int32_t>(DType::I32, s.data<int32_t>()[0], l.data<int32_t>()[0], d.data<int32_t>()[0]));
        case DType::I64:
            return single(range_typed<int64_t>(DType::I64, s.data<int64_t>()[0], l.data<int64_t>()[0], d.data<int64_t>()[0]));
        default: fail("Range", std::string("unsupported type ") + dtype_name(s.dtype()));
    }
}

Outputs constant_of_shape(const Attributes& a, const Inputs& in) {
    const std::vector<int64_t> shape = int_values(need(in, 0, "ConstantOfShape"), "ConstantOfShape");
    checked_count(shape, "ConstantOfShape");
    const AttrValue* v = a.find("value");
    const Tensor* fill = v ? std::get_if<Tensor>(v) : nullptr;
    if (v && (!fill || fill->numel() != 1)) fail("ConstantOfShape", "value must be a one-element tensor");
    Tensor y(fill ? fill->dtype() : DType::F32, shape);  // zero-filled: the default value is float 0
    if (fill) {
        const size_t esz = dtype_size(fill->dtype());
        for (size_t i = 0; i < y.numel(); ++i) std::memcpy(y.raw() + i * esz, fill->raw(), esz);
    }
    return single(std::move(y));
}

Outputs size_op(const Attributes&, const Inputs& in) {
    Tensor y(DType::I64, {});
    y.data<int64_t>()[0] = static_cast<int64_t>(need(in, 0, "Size").numel());
    return single(std::move(y));
}

Outputs round_op(const Attributes&, const Inputs& in) {
    const Tensor& x = need(in, 0, "Round");
    expect_dtype(x, DType::F32, "Round", "X");
    Tensor y(DType::F32, x.shape());
    for (size_t i = 0; i < x.numel(); ++i) y.data<float>()[i] = std::nearbyint(x.data<float>()[i]);  // half to even
    return single(std::move(y));
}

Outputs not_op(const Attributes&, const Inputs& in) {
    const Tensor& x = need(in, 0, "Not");
    expect_dtype(x, DType::Bool, "Not", "X");
    Tensor y(DType::Bool, x.shape());
    for (size_t i = 0; i < x.numel(); ++i) y.data<uint8_t>()[i] = x.data<uint8_t>()[i] ? 0 : 1;
    return single(std::move(y));
}

template <typename F>
OpFn logical(const std::string& op, F f) {
    return [op, f](const Attributes&, const Inputs& in) -> Outputs {
        const Tensor& a = need(in, 0, op);
        const Tensor& b = need(in, 1, op);
        expect_dtype(a, DType::Bool, op.c_str(), "A");
        expect_dtype(b, DType::Bool, op.c_str(), "B");
        const std::vector<int64_t> os = broadcast_shape(a.shape(), b.shape(), op);
        checked_count(os, op);
        Tensor y(DType::Bool, os);
        for_each_broadcast2(os, broadcast_strides(a.shape(), os), broadcast_strides(b.shape(), os),
                            [&](int64_t o, int64_t ia, int64_t ib) {
                                y.data<uint8_t>()[o] = f(a.data<uint8_t>()[ia] != 0, b.data<uint8_t>()[ib] != 0) ? 1 : 0;
                            });
        return single(std::move(y));
    };
}

}  // namespace

void register_index(OpTable& t) {
    t[":Gather"] = gather;
    t[":Expand"] = expand;
    t[":Tile"] = tile;
    t[":Where"] = where;
    t[":Range"] = range;
    t[":ConstantOfShape"] = constant_of_shape;
    t[":Size"] = size_op;
    t[":Round"] = round_op;
    t[":Not"] = not_op;
    t[":And"] = logical("And", [](bool x, bool y) { return x && y; });
    t[":Or"] = logical("Or", [](bool x, bool y) { return x || y; });
    t[":Xor"] = logical("Xor", [](bool x, bool y) { return x != y; });
}

}  // namespace num::ops
