// SPDX-License-Identifier: MIT
// Internal helpers shared by the operator implementations: input checking, axis handling, numpy
// broadcasting and the per-file registration hooks that run_op() dispatches through.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "numerics/ops.h"

namespace num::ops {

using Inputs = std::vector<const Tensor*>;
using Outputs = std::vector<Tensor>;
using OpFn = std::function<Outputs(const Attributes&, const Inputs&)>;
/// Key is "domain:op" (domain empty for ai.onnx).
using OpTable = std::map<std::string, OpFn>;

// Each source file registers its operators (called once, from registry.cpp).
void register_elementwise(OpTable& t);
void register_activation(OpTable& t);
void register_conv(OpTable& t);
void register_qconv(OpTable& t);
void register_matmul(OpTable& t);
void register_pool(OpTable& t);
void register_quant(OpTable& t);
void register_qlinear(OpTable& t);
void register_shape(OpTable& t);
void register_layout(OpTable& t);
void register_reduce(OpTable& t);
void register_resize(OpTable& t);
void register_rnn(OpTable& t);
void register_index(OpTable& t);
void register_space_norm(OpTable& t);

/// One-output result without copying the tensor (a braced list would copy it).
inline Outputs single(Tensor t) {
    Outputs o;
    o.push_back(std::move(t));
    return o;
}

[[noreturn]] void fail(const std::string& op, const std::string& msg);

/// Required input i; throws OpError when missing.
const Tensor& need(const Inputs& in, size_t i, const std::string& op);
/// Optional input i (nullptr when absent or past the end).
const Tensor* opt(const Inputs& in, size_t i);
void expect_dtype(const Tensor& t, DType d, const std::string& op, const char* what);
bool is_q8(DType d);
/// 8- or 16-bit quantized data (int8, uint8, int16, uint16).
bool is_q16(DType d);

/// Axis in [-rank, rank) -> [0, rank).
int norm_axis(int64_t axis, int rank, const std::string& op);

/// Integer-valued tensor (int32/int64) as int64 values.
std::vector<int64_t> int_values(const Tensor& t, const std::string& op);
/// Scalar float tensor (scale inputs).
float scalar_f32(const Tensor& t, const std::string& op);
/// Scalar zero point of an 8-bit tensor (0 when absent).
int32_t scalar_zp(const Tensor* t, const std::string& op);
/// Per-tensor or per-channel float / zero-point values (size 1 or n).
std::vector<float> float_values(const Tensor& t);
std::vector<int32_t> zp_values(const Tensor* t, size_t n_default);

std::vector<int64_t> broadcast_shape(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                                     const std::string& op);
/// Element strides of `in` laid over `out` (right-aligned; 0 on broadcast dims).
std::vector<int64_t> broadcast_strides(const std::vector<int64_t>& in, const std::vector<int64_t>& out);
std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& shape);
int64_t prod(const std::vector<int64_t>& v, size_t from = 0, size_t to = SIZE_MAX);

/// Calls f(out_index, a_index, b_index) for every output element, innermost dim fastest.
template <typename F>
void for_each_broadcast2(const std::vector<int64_t>& out_shape, const std::vector<int64_t>& sa,
                         const std::vector<int64_t>& sb, F f) {
    const int r = static_cast<int>(out_shape.size());
    const int64_t n = prod(out_shape);
    if (n == 0) return;
    if (r == 0) {
        f(0, 0, 0);
        return;
    }
    std::vector<int64_t> idx(static_cast<size_t>(r), 0);
    const int64_t inner = out_shape.back(), ia_step = sa.back(), ib_step = sb.back();
    int64_t o = 0, ia = 0, ib = 0;
    while (o < n) {
        for (int64_t k = 0; k < inner; ++k) f(o + k, ia + k * ia_step, ib + k * ib_step);
        o += inner;
        // Carry into the outer dims.
        int d = r - 2;
        for (; d >= 0; --d) {
            const size_t du = static_cast<size_t>(d);
            ++idx[du];
            ia += sa[du];
            ib += sb[du];
            if (idx[du] < out_shape[du]) break;
            ia -= sa[du] * idx[du];
            ib -= sb[du] * idx[du];
            idx[du] = 0;
        }
        if (d < 0) break;
    }
}

/// Row-wise variant: f(out_start, a_start, b_start, count, a_step, b_step) once per innermost run;
/// same-shape operands collapse to a single run.
template <typename F>
void for_each_broadcast_rows(const std::vector<int64_t>& out_shape, const std::vector<int64_t>& sa,
                             const std::vector<int64_t>& sb, F f) {
    const int64_t n = prod(out_shape);
    if (n == 0) return;
    const std::vector<int64_t> cs = contiguous_strides(out_shape);
    bool dense = true;  // both operands walk the output contiguously (size-1 dims don't matter)
    for (size_t d = 0; d < out_shape.size(); ++d)
        if (out_shape[d] != 1 && (sa[d] != cs[d] || sb[d] != cs[d])) dense = false;
    if (dense) {
        f(0, 0, 0, n, 1, 1);
        return;
    }
    const int64_t inner = out_shape.back();
    std::vector<int64_t> idx(out_shape.size(), 0);
    int64_t ia = 0, ib = 0;
    for (int64_t o = 0; o < n; o += inner) {
        f(o, ia, ib, inner, sa.back(), sb.back());
        for (size_t d = out_shape.size() - 1; d-- > 0;) {
            ++idx[d];
            ia += sa[d];
            ib += sb[d];
            if (idx[d] < out_shape[d]) break;
            ia -= sa[d] * idx[d];
            ib -= sb[d] * idx[d];
            idx[d] = 0;
        }
    }
}

/// Attribute list with an explicit default; spatial ones are extended to `n` entries.
std::vector<int64_t> ints_or(const Attributes& a, const char* name, size_t n, int64_t dflt);

/// Applies `fn` to a Tensor's data as the matching C++ type (f32, i8, u8, i32, i64, bool/u16/i16/f16
/// by raw width). Used by the data-movement ops that only copy elements.
Tensor same_type_like(const Tensor& t, std::vector<int64_t> shape);

}  // namespace num::ops

namespace num::ops {

/// A reduction over `axes` (empty = all, unless noop_with_empty_axes): the output shape and, for
/// every input dim, the output element stride (0 on reduced dims), for for_each_broadcast2 over
/// the input shape.
struct Reduction {
    std::vector<int64_t> out_shape;
    std::vector<int64_t> out_strides;
    int64_t count = 1;  ///< input elements per output element
};
Reduction plan_reduction(const std::vector<int64_t>& shape, std::vector<int64_t> axes, bool keepdims,
                         bool noop_with_empty_axes, const std::string& op);
/// Axes from input 1 (opset 13/18 style) when present, otherwise from the "axes" attribute.
std::vector<int64_t> reduction_axes(const Attributes& a, const Inputs& in, const std::string& op);

}  // namespace num::ops
