// SPDX-License-Identifier: MIT
// Shared operator helpers (see op_common.h).
#include <algorithm>

#include "op_common.h"
#include "qcommon.h"

namespace num::ops {

void fail(const std::string& op, const std::string& msg) { throw OpError(op + ": " + msg); }

const Tensor& need(const Inputs& in, size_t i, const std::string& op) {
    if (i >= in.size() || in[i] == nullptr) fail(op, "missing required input " + std::to_string(i));
    return *in[i];
}

const Tensor* opt(const Inputs& in, size_t i) { return i < in.size() ? in[i] : nullptr; }

void expect_dtype(const Tensor& t, DType d, const std::string& op, const char* what) {
    if (t.dtype() != d)
        fail(op, std::string(what) + " must be " + dtype_name(d) + ", got " + dtype_name(t.dtype()));
}

bool is_q8(DType d) { return d == DType::I8 || d == DType::U8; }
bool is_q16(DType d) { return is_q8(d) || d == DType::I16 || d == DType::U16; }

int norm_axis(int64_t axis, int rank, const std::string& op) {
    if (axis < -rank || axis >= rank)
        fail(op, "axis " + std::to_string(axis) + " out of range for rank " + std::to_string(rank));
    return static_cast<int>(axis < 0 ? axis + rank : axis);
}

std::vector<int64_t> int_values(const Tensor& t, const std::string& op) {
    std::vector<int64_t> v(t.numel());
    if (t.dtype() == DType::I64) std::copy(t.data<int64_t>(), t.data<int64_t>() + v.size(), v.begin());
    else if (t.dtype() == DType::I32) std::copy(t.data<int32_t>(), t.data<int32_t>() + v.size(), v.begin());
    else fail(op, std::string("expected an int32/int64 tensor, got ") + dtype_name(t.dtype()));
    return v;
}

float scalar_f32(const Tensor& t, const std::string& op) {
    expect_dtype(t, DType::F32, op, "scale");
    if (t.numel() != 1) fail(op, "scale must be a scalar, got " + t.shape_str());
    return t.data<float>()[0];
}

// Zero points of 8/16-bit data and of int32 (20-bit weights in an int32 container) tensors.
static int32_t q8_at(const Tensor& t, size_t i) {
    switch (t.dtype()) {
        case DType::I8: return t.data<int8_t>()[i];
        case DType::U8: return t.data<uint8_t>()[i];
        case DType::I16: return t.data<int16_t>()[i];
        case DType::U16: return t.data<uint16_t>()[i];
        default: return t.data<int32_t>()[i];
    }
}

int32_t scalar_zp(const Tensor* t, const std::string& op) {
    if (!t) return 0;
    if (!is_q16(t->dtype()) && t->dtype() != DType::I32)
        fail(op, std::string("zero point must be int8/uint8/int16/uint16, got ") + dtype_name(t->dtype()));
    if (t->numel() != 1) fail(op, "zero point must be a scalar, got " + t->shape_str());
    return q8_at(*t, 0);
}

int64_t qbits_attr(const Attributes& a, const std::string& op) {
    const int64_t b = a.get_int("_qbits", 0);
    if (b != 0 && (b < 2 || b > 16)) fail(op, "_qbits must be in [2, 16], got " + std::to_string(b));
    return b;
}

std::vector<float> float_values(const Tensor& t) {
    return std::vector<float>(t.data<float>(), t.data<float>() + t.numel());
}

std::vector<int32_t> zp_values(const Tensor* t, size_t n_default) {
    if (!t) return std::vector<int32_t>(n_default, 0);
    std::vector<int32_t> v(t->numel());
    for (size_t i = 0; i < v.size(); ++i) v[i] = q8_at(*t, i);
    return v;
}

std::vector<int64_t> broadcast_shape(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                                     const std::string& op) {
    const size_t r = std::max(a.size(), b.size());
    std::vector<int64_t> out(r);
    for (size_t i = 0; i < r; ++i) {
        const int64_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
        const int64_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
        if (da != db && da != 1 && db != 1)
            fail(op, "shapes are not broadcastable (dim " + std::to_string(i) + ": " + std::to_string(da) + " vs " +
                         std::to_string(db) + ")");
        out[i] = da == 1 ? db : da;
    }
    return out;
}

std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& shape) {
    std::vector<int64_t> s(shape.size(), 1);
    for (size_t i = shape.size(); i-- > 1;) s[i - 1] = s[i] * shape[i];
    return s;
}

std::vector<int64_t> broadcast_strides(const std::vector<int64_t>& in, const std::vector<int64_t>& out) {
    std::vector<int64_t> s(out.size(), 0);
    const std::vector<int64_t> cs = contiguous_strides(in);
    const size_t off = out.size() - in.size();
    for (size_t i = 0; i < in.size(); ++i) s[off + i] = in[i] == 1 ? 0 : cs[i];
    return s;
}

int64_t prod(const std::vector<int64_t>& v, size_t from, size_t to) {
    int64_t p = 1;
    for (size_t i = from; i < std::min(to, v.size()); ++i) p *= v[i];
    return p;
}

std::vector<int64_t> ints_or(const Attributes& a, const char* name, size_t n, int64_t dflt) {
    std::vector<int64_t> v = a.get_ints(name, {});
    if (v.empty()) v.assign(n, dflt);
    return v;
}

Tensor same_type_like(const Tensor& t, std::vector<int64_t> shape) {
    Tensor o = Tensor::uninitialized(t.dtype(), std::move(shape));  // callers write every element
    o.quant = t.quant;
    return o;
}

}  // namespace num::ops
