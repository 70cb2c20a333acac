// SPDX-License-Identifier: MIT
// MatMul-family operators: MatMul and Gemm (fp32), QLinearMatMul, MatMulInteger, QGemm,
// MatMulIntegerToFloat and DynamicQuantizeMatMul (8-bit, exact int32 accumulation via qgemm).
#include "numerics/gemm.h"
#include "qcommon.h"
#include "qwide.h"

namespace num::ops {
namespace {

// numpy matmul shape rules: batch dims broadcast, 1-D operands promoted and the added dim dropped.
struct MatMulPlan {
    int64_t m = 0, k = 0, n = 0;
    std::vector<int64_t> out_shape;
    std::vector<int64_t> a_off, b_off;  // element offsets of each batch's matrix
};

MatMulPlan plan_matmul(std::vector<int64_t> as, std::vector<int64_t> bs, const std::string& op) {
    if (as.empty() || bs.empty()) fail(op, "operands must have rank >= 1");
    const bool a1 = as.size() == 1, b1 = bs.size() == 1;
    if (a1) as.insert(as.begin(), 1);
    if (b1) bs.push_back(1);
    MatMulPlan p;
    p.m = as[as.size() - 2];
    p.k = as.back();
    p.n = bs.back();
    if (bs[bs.size() - 2] != p.k) fail(op, "inner dimensions differ (" + std::to_string(p.k) + " vs " + std::to_string(bs[bs.size() - 2]) + ")");
    const std::vector<int64_t> ab(as.begin(), as.end() - 2), bb(bs.begin(), bs.end() - 2);
    const std::vector<int64_t> ob = broadcast_shape(ab, bb, op);
    const std::vector<int64_t> sa = broadcast_strides(ab, ob), sb = broadcast_strides(bb, ob);
    for_each_broadcast2(ob, sa, sb, [&](int64_t, int64_t ia, int64_t ib) {
        p.a_off.push_back(ia * p.m * p.k);
        p.b_off.push_back(ib * p.k * p.n);
    });
    if (ob.empty()) {
        p.a_off = {0};
        p.b_off = {0};
    }
    p.out_shape = ob;
    if (!a1) p.out_shape.push_back(p.m);
    if (!b1) p.out_shape.push_back(p.n);
    return p;
}

Outputs matmul_f32(const Attributes&, const Inputs& in) {
    const std::string op = "MatMul";
    const Tensor& a = need(in, 0, op);
    const Tensor& b = need(in, 1, op);
    expect_dtype(a, DType::F32, op, "A");
    expect_dtype(b, DType::F32, op, "B");
    const MatMulPlan p = plan_matmul(a.shape(), b.shape(), op);
    Tensor y(DType::F32, p.out_shape);
    for (size_t i = 0; i < p.a_off.size(); ++i)
        sgemm(p.m, p.n, p.k, a.data<float>() + p.a_off[i], p.k, b.data<float>() + p.b_off[i], p.n,
              y.data<float>() + static_cast<int64_t>(i) * p.m * p.n, p.n);
    return single(std::move(y));
}

template <typename T>
std::vector<T> transposed(const T* src, int64_t rows, int64_t cols) {
    std::vector<T> t(static_cast<size_t>(rows * cols));
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c) t[static_cast<size_t>(c * rows + r)] = src[r * cols + c];
    return t;
}

Outputs gemm_f32(const Attributes& at, const Inputs& in) {
    const std::string op = "Gemm";
    const Tensor& a = need(in, 0, op);
    const Tensor& b = need(in, 1, op);
    const Tensor* c = opt(in, 2);
    expect_dtype(a, DType::F32, op, "A");
    expect_dtype(b, DType::F32, op, "B");
    if (a.rank() != 2 || b.rank() != 2) fail(op, "A and B must be 2-D");
    const bool ta = at.get_int("transA", 0) != 0, tb = at.get_int("transB", 0) != 0;
    const float alpha = at.get_float("alpha", 1.0f), beta = at.get_float("beta", 1.0f);
    const int64_t M = ta ? a.dim(1) : a.dim(0), K = ta ? a.dim(0) : a.dim(1);
    const int64_t N = tb ? b.dim(0) : b.dim(1);
    if ((tb ? b.dim(1) : b.dim(0)) != K) fail(op, "inner dimensions differ");
    const std::vector<float> av = ta ? transposed(a.data<float>(), K, M) : float_values(a);
    const std::vector<float> bv = tb ? transposed(b.data<float>(), N, K) : float_values(b);
    Tensor y(DType::F32, {M, N});
    float* yd = y.data<float>();
    sgemm(M, N, K, av.data(), K, bv.data(), N, yd, N);
    if (alpha != 1.0f)
        for (int64_t i = 0; i < M * N; ++i) yd[i] *= alpha;
    if (c && beta != 0.0f) {
        expect_dtype(*c, DType::F32, op, "C");
        const std::vector<int64_t> os{M, N};
        if (broadcast_shape(c->shape(), os, op) != os) fail(op, "C must broadcast to (M, N)");
        const std::vector<int64_t> sc = broadcast_strides(c->shape(), os), sz(2, 0);
        for_each_broadcast2(os, sc, sz, [&](int64_t o, int64_t ic, int64_t) { yd[o] += beta * c->data<float>()[ic]; });
    }
    return single(std::move(y));
}

Q8Operand q8_operand(const Tensor& t, int64_t offset_elems, int64_t ld, std::vector<int32_t> zp) {
    Q8Operand o;
    o.data = t.raw() + offset_elems;
    o.is_signed = t.dtype() == DType::I8;
    o.ld = ld;
    o.zp = zp.empty() ? std::vector<int32_t>{0} : std::move(zp);
    return o;
}

// Runs the batched exact integer matmul, calling sink(batch, acc[M x N]).
template <typename Sink>
void matmul_q8(const Tensor& a, int32_t a_zp, const Tensor& b, const std::vector<int32_t>& b_zp, const MatMulPlan& p,
               Sink sink) {
    std::vector<int32_t> acc(static_cast<size_t>(p.m * p.n));
    for (size_t i = 0; i < p.a_off.size(); ++i) {
        qgemm(p.m, p.n, p.k, q8_operand(a, p.a_off[i], p.k, {a_zp}), q8_operand(b, p.b_off[i], p.n, b_zp), acc.data(), p.n);
        sink(static_cast<int64_t>(i), acc.data());
    }
}

std::vector<int32_t> col_zp(const Tensor* t, int64_t n, const std::string& op) {
    std::vector<int32_t> v = zp_values(t, 1);
    if (v.size() != 1 && static_cast<int64_t>(v.size()) != n) fail(op, "b zero point must be scalar or [N]");
    return v;
}

std::vector<float> col_scale(const Tensor& t, int64_t n, const std::string& op) {
    expect_dtype(t, DType::F32, op, "b scale");
    std::vector<float> v = float_values(t);
    if (v.size() != 1 && static_cast<int64_t>(v.size()) != n) fail(op, "b scale must be scalar or [N]");
    if (v.size() == 1) v.assign(static_cast<size_t>(n), v[0]);
    return v;
}

Outputs qlinear_matmul(const Attributes& at, const Inputs& in) {
    const std::string op = "QLinearMatMul";
    const Tensor& a = need(in, 0, op);
    const Tensor& b = need(in, 3, op);
    if (const Tensor* z = opt(in, 7); needs_wide(a.dtype(), b.dtype(), z ? z->dtype() : a.dtype(), qbits_attr(at, op)))
        return qlinear_matmul_wide(at, in);
    const MatMulPlan p = plan_matmul(a.shape(), b.shape(), op);
    const float a_scale = scalar_f32(need(in, 1, op), op);
    const int32_t a_zp = scalar_zp(opt(in, 2), op);
    const std::vector<float> b_scale = col_scale(need(in, 4, op), p.n, op);
    const std::vector<int32_t> b_zp = col_zp(opt(in, 5), p.n, op);
    const float y_scale = scalar_f32(need(in, 6, op), op);
    const Tensor* yz = opt(in, 7);
    const int32_t y_zp = scalar_zp(yz, op);
    std::vector<float> scale(static_cast<size_t>(p.n));
    for (size_t j = 0; j < scale.size(); ++j) scale[j] = a_scale * b_scale[j] / y_scale;
    const DType yd = yz ? yz->dtype() : a.dtype();
    Tensor y(yd, p.out_shape);
    dispatch_q8(yd, op, [&](auto tag) {
        using T = decltype(tag);
        matmul_q8(a, a_zp, b, b_zp, p, [&](int64_t bi, const int32_t* acc) {
            T* out = y.data<T>() + bi * p.m * p.n;
            for (int64_t i = 0; i < p.m * p.n; ++i)
                out[i] = requant_one<T>(acc[i], scale[static_cast<size_t>(i % p.n)], y_zp);
        });
        return 0;
    });
    return single(std::move(y));
}

Outputs matmul_integer(const Attributes&, const Inputs& in) {
    const std::string op = "MatMulInteger";
    const Tensor& a = need(in, 0, op);
    const Tensor& b = need(in, 1, op);
    if (!is_q8(a.dtype()) || !is_q8(b.dtype())) fail(op, "A and B must be int8/uint8");
    const MatMulPlan p = plan_matmul(a.shape(), b.shape(), op);
    const int32_t a_zp = scalar_zp(opt(in, 2), op);
    const std::vector<int32_t> b_zp = col_zp(opt(in, 3), p.n, op);
    Tensor y(DType::I32, p.out_shape);
    matmul_q8(a, a_zp, b, b_zp, p, [&](int64_t bi, const int32_t* acc) {
        std::copy(acc, acc + p.m * p.n, y.data<int32_t>() + bi * p.m * p.n);
    });
    return single(std::move(y));
}

// MatMulIntegerToFloat: Y = float(acc) * (a_scale * b_scale[n]) + bias[n].
Outputs integer_to_float(const Tensor& a, float a_scale, int32_t a_zp, const Tensor& b, const Tensor& b_scale_t,
                         const Tensor* b_zp_t, const Tensor* bias, const std::string& op) {
    const MatMulPlan p = plan_matmul(a.shape(), b.shape(), op);
    const std::vector<float> b_scale = col_scale(b_scale_t, p.n, op);
    const std::vector<int32_t> b_zp = col_zp(b_zp_t, p.n, op);
    if (bias && (bias->dtype() != DType::F32 || static_cast<int64_t>(bias->numel()) != p.n)) fail(op, "bias must be float[N]");
    std::vector<float> scale(static_cast<size_t>(p.n));
    for (size_t j = 0; j < scale.size(); ++j) scale[j] = a_scale * b_scale[j];
    Tensor y(DType::F32, p.out_shape);
    matmul_q8(a, a_zp, b, b_zp, p, [&](int64_t bi, const int32_t* acc) {
        float* out = y.data<float>() + bi * p.m * p.n;
        for (int64_t i = 0; i < p.m * p.n; ++i) {
            const size_t j = static_cast<size_t>(i % p.n);
            out[i] = static_cast<float>(acc[i]) * scale[j] + (bias ? bias->data<float>()[j] : 0.0f);
        }
    });
    return single(std::move(y));
}

Outputs matmul_integer_to_float(const Attributes&, const Inputs& in) {
    const std::string op = "MatMulIntegerToFloat";
    const Tensor& a = need(in, 0, op);
    const Tensor& b = need(in, 1, op);
    if (!is_q8(a.dtype()) || !is_q8(b.dtype())) fail(op, "A and B must be int8/uint8");
    return integer_to_float(a, scalar_f32(need(in, 2, op), op), scalar_zp(opt(in, 4), op), b, need(in, 3, op), opt(in, 5),
                            opt(in, 6), op);
}

Outputs dynamic_quantize_matmul(const Attributes&, const Inputs& in) {
    const std::string op = "DynamicQuantizeMatMul";
    const Tensor& a = need(in, 0, op);
    const Tensor& b = need(in, 1, op);
    expect_dtype(a, DType::F32, op, "A");
    if (!is_q8(b.dtype())) fail(op, "B must be int8/uint8");
    float a_scale = 1.0f;
    uint8_t a_zp = 0;
    dynamic_quant_params(a.data<float>(), a.numel(), a_scale, a_zp);
    Tensor aq(DType::U8, a.shape());
    for (size_t i = 0; i < a.numel(); ++i) aq.data<uint8_t>()[i] = quantize_one<uint8_t>(a.data<float>()[i], a_scale, a_zp);
    return integer_to_float(aq, a_scale, a_zp, b, need(in, 2, op), opt(in, 3), opt(in, 4), op);
}

}  // namespace

void register_qgemm(OpTable& t);

void register_matmul(OpTable& t) {
    t[":MatMul"] = matmul_f32;
    t[":Gemm"] = gemm_f32;
    t[":QLinearMatMul"] = qlinear_matmul;
    t[":MatMulInteger"] = matmul_integer;
    t["com.microsoft:MatMulIntegerToFloat"] = matmul_integer_to_float;
    t["com.microsoft:DynamicQuantizeMatMul"] = dynamic_quantize_matmul;
    register_qgemm(t);
}

}  // namespace num::ops
