// SPDX-License-Identifier: MIT
// com.microsoft QGemm (seed 002 #14): Y = alpha * (A - a_zp)(B - b_zp) + C with int32 C in the
// accumulator domain; quantized output when y_scale is given, float otherwise.
#include "numerics/gemm.h"
#include "qcommon.h"
#include "qwide.h"

namespace num::ops {
namespace {

// 8-bit matrix, optionally transposed, as a row-major copy of bytes.
std::vector<uint8_t> maybe_transposed(const Tensor& t, bool trans) {
    const int64_t r = t.dim(0), c = t.dim(1);
    std::vector<uint8_t> v(t.raw(), t.raw() + t.numel());
    if (!trans) return v;
    for (int64_t i = 0; i < r; ++i)
        for (int64_t j = 0; j < c; ++j) v[static_cast<size_t>(j * r + i)] = t.raw()[i * c + j];
    return v;
}

Outputs qgemm_op(const Attributes& at, const Inputs& in) {
    const std::string op = "QGemm";
    const Tensor& a = need(in, 0, op);
    const Tensor& b = need(in, 3, op);
    if (const Tensor* z = opt(in, 8); needs_wide(a.dtype(), b.dtype(), z ? z->dtype() : a.dtype(), qbits_attr(at, op)))
        return qgemm_wide(at, in);
    if (a.rank() != 2 || b.rank() != 2) fail(op, "A and B must be 2-D");
    const bool ta = at.get_int("transA", 0) != 0, tb = at.get_int("transB", 0) != 0;
    const float alpha = at.get_float("alpha", 1.0f);
    const int64_t M = ta ? a.dim(1) : a.dim(0), K = ta ? a.dim(0) : a.dim(1), N = tb ? b.dim(0) : b.dim(1);
    if ((tb ? b.dim(1) : b.dim(0)) != K) fail(op, "inner dimensions differ");
    const float a_scale = scalar_f32(need(in, 1, op), op);
    const int32_t a_zp = scalar_zp(opt(in, 2), op);
    const Tensor& bst = need(in, 4, op);
    expect_dtype(bst, DType::F32, op, "b_scale");
    std::vector<float> b_scale = float_values(bst);
    std::vector<int32_t> b_zp = zp_values(opt(in, 5), 1);
    if ((b_scale.size() != 1 && static_cast<int64_t>(b_scale.size()) != N) ||
        (b_zp.size() != 1 && static_cast<int64_t>(b_zp.size()) != N))
        fail(op, "b_scale / b_zero_point must be scalar or [N]");
    const std::vector<uint8_t> av = maybe_transposed(a, ta), bv = maybe_transposed(b, tb);
    Q8Operand A, B;
    A.data = av.data();
    A.is_signed = a.dtype() == DType::I8;
    A.ld = K;
    A.zp = {a_zp};
    B.data = bv.data();
    B.is_signed = b.dtype() == DType::I8;
    B.ld = N;
    B.zp = b_zp;
    std::vector<int32_t> acc(static_cast<size_t>(M * N));
    qgemm(M, N, K, A, B, acc.data(), N);
    if (const Tensor* c = opt(in, 6)) {
        expect_dtype(*c, DType::I32, op, "C");
        const std::vector<int64_t> os{M, N};
        if (broadcast_shape(c->shape(), os, op) != os) fail(op, "C must broadcast to (M, N)");
        const std::vector<int64_t> sc = broadcast_strides(c->shape(), os), sz(2, 0);
        for_each_broadcast2(os, sc, sz, [&](int64_t o, int64_t ic, int64_t) { acc[static_cast<size_t>(o)] += c->data<int32_t>()[ic]; });
    }
    auto bscale = [&](int64_t j) { return b_scale[b_scale.size() > 1 ? static_cast<size_t>(j) : 0]; };
    const Tensor* ys = opt(in, 7);
    if (!ys) {
        Tensor y(DType::F32, {M, N});
        for (int64_t i = 0; i < M * N; ++i)
            y.data<float>()[i] = static_cast<float>(acc[static_cast<size_t>(i)]) * (alpha * a_scale * bscale(i % N));
        return single(std::move(y));
    }
    const float y_scale = scalar_f32(*ys, op);
    const Tensor* yz = opt(in, 8);
    const int32_t y_zp = scalar_zp(yz, op);
    const DType yd = yz ? yz->dtype() : a.dtype();
    Tensor y(yd, {M, N});
    dispatch_q8(yd, op, [&](auto tag) {
        using T = decltype(tag);
        for (int64_t i = 0; i < M * N; ++i)
            y.data<T>()[i] = requant_one<T>(acc[static_cast<size_t>(i)], alpha * a_scale * bscale(i % N) / y_scale, y_zp);
        return 0;
    });
    return single(std::move(y));
}

}  // namespace

void register_qgemm(OpTable& t) { t["com.microsoft:QGemm"] = qgemm_op; }

}  // namespace num::ops
