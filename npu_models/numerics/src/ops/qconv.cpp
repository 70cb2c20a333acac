// SPDX-License-Identifier: MIT
// 8-bit convolutions: QLinearConv (requantized output) and ConvInteger (int32 output). im2col pads
// with the input zero point so padded taps contribute exactly zero, then the exact qgemm.
#include "conv_geom.h"
#include "numerics/gemm.h"
#include "qcommon.h"
#include "qwide.h"
#include "scratch.h"

namespace num::ops {
namespace {

// Calls sink(n, group, acc[Mg x P]) with the exact int32 sums (x - x_zp)(w - w_zp), or, when
// rq_for(n, group) returns a requantization, lets the GEMM write the 8-bit output directly.
template <typename Sink, typename RqFor>
void conv_q8(const ConvGeom& g, const Tensor& x, int32_t x_zp, const Tensor& w, const std::vector<int32_t>& w_zp,
             Sink sink, RqFor rq_for) {
    const int64_t K = g.k(), P = g.p(), mg = g.mg();
    thread_local Scratch<int32_t> acc_buf;  // reused: no page faults or zeroing per call
    int32_t* acc = acc_buf.get(static_cast<size_t>(mg * P));
    const uint8_t pad = static_cast<uint8_t>(x_zp);  // raw byte of the zero point (int8 or uint8)
    for (int64_t n = 0; n < g.n; ++n)
        for (int64_t gr = 0; gr < g.group; ++gr) {
            const uint8_t* xs = x.data<uint8_t>() + (n * g.c + gr * g.cg()) * g.h * g.w;
            Q8Operand A;
            A.data = w.data<uint8_t>() + gr * mg * K;
            A.is_signed = w.dtype() == DType::I8;
            A.ld = K;
            if (w_zp.size() > 1) A.zp.assign(w_zp.begin() + gr * mg, w_zp.begin() + (gr + 1) * mg);
            else A.zp = {w_zp.empty() ? 0 : w_zp[0]};
            const bool x_signed = x.dtype() == DType::I8;
            const QGemmRequant* rq = rq_for(n, gr);
            if (g.pointwise()) {
                Q8Operand B;
                B.data = xs;
                B.is_signed = x_signed;
                B.ld = P;
                B.zp = {x_zp};
                if (rq) qgemm_requant(mg, P, K, A, B, *rq);
                else qgemm(mg, P, K, A, B, acc, P);
            } else {
                // im2col rows go straight into the GEMM packer (no K x P column matrix).
                qgemm_rows(mg, P, K, A, [&](int64_t k, uint8_t* dst) { im2col_row(g, xs, pad, k, dst); }, x_signed, {x_zp},
                           rq ? nullptr : acc, P, rq);
            }
            if (!rq) sink(n, gr, acc);
        }
}

std::vector<int32_t> checked_w_zp(const Tensor* t, int64_t m, const std::string& op) {
    std::vector<int32_t> v = zp_values(t, 1);
    if (v.size() != 1 && static_cast<int64_t>(v.size()) != m) fail(op, "w_zero_point must be scalar or [M]");
    return v;
}

Outputs qlinear_conv(const Attributes& a, const Inputs& in) {
    const std::string op = "QLinearConv";
    const Tensor& x = need(in, 0, op);
    const Tensor& w = need(in, 3, op);
    if (const Tensor* z = opt(in, 7); needs_wide(x.dtype(), w.dtype(), z ? z->dtype() : x.dtype(), qbits_attr(a, op)))
        return qlinear_conv_wide(a, in);
    const ConvGeom g = conv_geometry(x, w, a, op);
    const float x_scale = scalar_f32(need(in, 1, op), op);
    const int32_t x_zp = scalar_zp(opt(in, 2), op);
    const Tensor& ws = need(in, 4, op);
    expect_dtype(ws, DType::F32, op, "w_scale");
    const std::vector<float> w_scale = float_values(ws);
    if (w_scale.size() != 1 && static_cast<int64_t>(w_scale.size()) != g.m) fail(op, "w_scale must be scalar or [M]");
    const std::vector<int32_t> w_zp = checked_w_zp(opt(in, 5), g.m, op);
    const float y_scale = scalar_f32(need(in, 6, op), op);
    const Tensor* yz = opt(in, 7);
    const int32_t y_zp = scalar_zp(yz, op);
    const Tensor* bias = opt(in, 8);
    if (bias && (bias->dtype() != DType::I32 || static_cast<int64_t>(bias->numel()) != g.m)) fail(op, "B must be int32[M]");
    std::vector<float> scale(static_cast<size_t>(g.m));
    for (int64_t m = 0; m < g.m; ++m) scale[static_cast<size_t>(m)] = x_scale * w_scale[w_scale.size() > 1 ? static_cast<size_t>(m) : 0] / y_scale;
    const DType yd = yz ? yz->dtype() : x.dtype();
    Tensor y = Tensor::uninitialized(yd, conv_out_shape(g));
    const int64_t P = g.p(), mg = g.mg();
    if (!is_q8(yd)) fail(op, "y_zero_point must be int8/uint8");
    // The GEMM requantizes each group's rows straight into y (onnxruntime's arithmetic, qcommon.h).
    QGemmRequant rq;
    rq.zp = y_zp;
    rq.out_signed = yd == DType::I8;
    rq.ldo = P;
    conv_q8(
        g, x, x_zp, w, w_zp, [](int64_t, int64_t, const int32_t*) {},
        [&](int64_t n, int64_t gr) {
            rq.scale = scale.data() + gr * mg;
            rq.bias = bias ? bias->data<int32_t>() + gr * mg : nullptr;
            rq.out = y.raw() + (n * g.m + gr * mg) * P;
            return &rq;
        });
    return single(std::move(y));
}

Outputs conv_integer(const Attributes& a, const Inputs& in) {
    const std::string op = "ConvInteger";
    const Tensor& x = need(in, 0, op);
    const Tensor& w = need(in, 1, op);
    if (!is_q8(x.dtype()) || !is_q8(w.dtype())) fail(op, "x and w must be int8/uint8");
    const ConvGeom g = conv_geometry(x, w, a, op);
    const int32_t x_zp = scalar_zp(opt(in, 2), op);
    const std::vector<int32_t> w_zp = checked_w_zp(opt(in, 3), g.m, op);
    Tensor y(DType::I32, conv_out_shape(g));
    const int64_t P = g.p(), mg = g.mg();
    conv_q8(
        g, x, x_zp, w, w_zp,
        [&](int64_t n, int64_t gr, const int32_t* acc) {
            std::copy(acc, acc + mg * P, y.data<int32_t>() + (n * g.m + gr * mg) * P);
        },
        [](int64_t, int64_t) -> const QGemmRequant* { return nullptr; });
    return single(std::move(y));
}

}  // namespace

void register_qconv(OpTable& t) {
    t["com.microsoft:QLinearConv"] = qlinear_conv;
    t[":QLinearConv"] = qlinear_conv;
    t[":ConvInteger"] = conv_integer;
}

}  // namespace num::ops
