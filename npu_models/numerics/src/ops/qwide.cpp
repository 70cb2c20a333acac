// SPDX-License-Identifier: MIT
// QLinearConv, QLinearMatMul and QGemm for data wider than 8 bits (16-bit activations, 16-bit or
// 20-bit weights in an int32 container) and for grids narrowed by `_qbits` (4-bit data in an 8-bit
// container, 12/14-bit data in a 16-bit one): the tnpuv2 widths of seed 003, with the seed-002
// arithmetic generalised. Accumulation is exact in int64 ((x - x_zp)(w - w_zp) summed, + int32
// bias); requantization is the 8-bit rule - scale = x_scale * w_scale / y_scale formed in float -
// applied in double (16-bit accumulators exceed float's 24-bit mantissa), rounded half to even,
// + zero point, saturated to the output grid. onnxruntime runs the same QDQ units as
// DequantizeLinear -> float op -> QuantizeLinear; the two agree except on float ties (<= 1 LSB).
#include "qwide.h"

#include <cmath>

#include "conv_geom.h"
#include "numerics/requant.h"
#include "qcommon.h"

namespace num::ops {

int64_t qint_at(const Tensor& t, size_t i) {
    switch (t.dtype()) {
        case DType::I8:
            return t.data<int8_t>()[i];
        case DType::U8:
            return t.data<uint8_t>()[i];
        case DType::I16:
            return t.data<int16_t>()[i];
        case DType::U16:
            return t.data<uint16_t>()[i];
        case DType::I32:
            return t.data<int32_t>()[i];
        default:
            return 0;
    }
}

bool needs_wide(DType x, DType w, DType y, int64_t qbits) { return qbits != 0 || !is_q8(x) || !is_q8(w) || !is_q8(y); }

namespace {

void check_qint(const Tensor& t, const std::string& op, const char* what, bool allow_i32) {
    if (!is_q16(t.dtype()) && !(allow_i32 && t.dtype() == DType::I32))
        fail(op, std::string(what) + " must be int8/uint8/int16/uint16" + (allow_i32 ? "/int32" : "") + ", got " +
                     dtype_name(t.dtype()));
}

/// Requantized output element: double(acc) * double(scale), RNE, + zp, saturated to r.
int64_t requant_wide(int64_t acc, float scale, int32_t zp, QRange r) {
    const double v = static_cast<double>(acc) * static_cast<double>(scale);
    return saturate(round_half_even(v) + zp, r.lo, r.hi);
}

/// Output tensor of dtype d filled from int64 codes.
void store_codes(Tensor& y, const std::vector<int64_t>& v) {
    for (size_t i = 0; i < v.size(); ++i) {
        switch (y.dtype()) {
            case DType::I8:
                y.data<int8_t>()[i] = static_cast<int8_t>(v[i]);
                break;
            case DType::U8:
                y.data<uint8_t>()[i] = static_cast<uint8_t>(v[i]);
                break;
            case DType::I16:
                y.data<int16_t>()[i] = static_cast<int16_t>(v[i]);
                break;
            case DType::U16:
                y.data<uint16_t>()[i] = static_cast<uint16_t>(v[i]);
                break;
            default:
                break;
        }
    }
}

QRange range_of(DType d, int64_t qbits) {
    switch (d) {
        case DType::I8:
            return qrange<int8_t>(qbits);
        case DType::U8:
            return qrange<uint8_t>(qbits);
        case DType::I16:
            return qrange<int16_t>(qbits);
        default:
            return qrange<uint16_t>(qbits);
    }
}

/// Exact conv accumulators acc[n][m][oy][ox] of (x - xz)(w - wz[m]).
std::vector<int64_t> conv_acc(const ConvGeom& g, const Tensor& x, int32_t xz, const Tensor& w,
                              const std::vector<int32_t>& wz) {
    std::vector<int32_t> xv(x.numel());
    for (size_t i = 0; i < xv.size(); ++i) xv[i] = static_cast<int32_t>(qint_at(x, i) - xz);
    const int64_t P = g.p(), K = g.k(), mg = g.mg(), cg = g.cg();
    std::vector<int64_t> acc(static_cast<size_t>(g.n * g.m * P), 0);
    for (int64_t n = 0; n < g.n; ++n)
        for (int64_t m = 0; m < g.m; ++m) {
            const int64_t gr = m / mg;
            int64_t* a = acc.data() + (n * g.m + m) * P;
            const int32_t z = wz[wz.size() > 1 ? static_cast<size_t>(m) : 0];
            for (int64_t c = 0; c < cg; ++c) {
                const int32_t* xc = xv.data() + ((n * g.c) + gr * cg + c) * g.h * g.w;
                for (int64_t ky = 0; ky < g.kh; ++ky)
                    for (int64_t kx = 0; kx < g.kw; ++kx) {
                        const int64_t wi = m * K + (c * g.kh + ky) * g.kw + kx;
                        const int64_t wv = qint_at(w, static_cast<size_t>(wi)) - z;
                        if (wv == 0) continue;
                        const int64_t off = kx * g.dw - g.pl;
                        int64_t lo = off >= 0 ? 0 : (-off + g.sw - 1) / g.sw;
                        int64_t hi = (g.w - off + g.sw - 1) / g.sw;
                        lo = std::min(lo, g.ow);
                        hi = std::max(lo, std::min(hi, g.ow));
                        for (int64_t oy = 0; oy < g.oh; ++oy) {
                            const int64_t iy = oy * g.sh - g.pt + ky * g.dh;
                            if (iy < 0 || iy >= g.h) continue;
                            const int32_t* row = xc + iy * g.w + off;
                            int64_t* ar = a + oy * g.ow;
                            for (int64_t ox = lo; ox < hi; ++ox) ar[ox] += wv * row[ox * g.sw];
                        }
                    }
            }
        }
    return acc;
}

}  // namespace

Outputs qlinear_conv_wide(const Attributes& a, const Inputs& in) {
    const std::string op = "QLinearConv";
    const Tensor& x = need(in, 0, op);
    const Tensor& w = need(in, 3, op);
    check_qint(x, op, "x", false);
    check_qint(w, op, "w", true);
    const ConvGeom g = conv_geometry(x, w, a, op);
    const float x_scale = scalar_f32(need(in, 1, op), op);
    const int32_t x_zp = scalar_zp(opt(in, 2), op);
    const Tensor& ws = need(in, 4, op);
    expect_dtype(ws, DType::F32, op, "w_scale");
    const std::vector<float> w_scale = float_values(ws);
    if (w_scale.size() != 1 && static_cast<int64_t>(w_scale.size()) != g.m) fail(op, "w_scale must be scalar or [M]");
    const std::vector<int32_t> w_zp = zp_values(opt(in, 5), 1);
    if (w_zp.size() != 1 && static_cast<int64_t>(w_zp.size()) != g.m) fail(op, "w_zero_point must be scalar or [M]");
    const float y_scale = scalar_f32(need(in, 6, op), op);
    const Tensor* yz = opt(in, 7);
    const int32_t y_zp = scalar_zp(yz, op);
    const Tensor* bias = opt(in, 8);
    if (bias && (bias->dtype() != DType::I32 || static_cast<int64_t>(bias->numel()) != g.m))
        fail(op, "B must be int32[M]");
    const DType yd = yz ? yz->dtype() : x.dtype();
    if (!is_q16(yd)) fail(op, "y_zero_point must be int8/uint8/int16/uint16");
    const QRange r = range_of(yd, qbits_attr(a, op));
    std::vector<int64_t> acc = conv_acc(g, x, x_zp, w, w_zp);
    const int64_t P = g.p();
    for (int64_t n = 0; n < g.n; ++n)
        for (int64_t m = 0; m < g.m; ++m) {
            const float s = x_scale * w_scale[w_scale.size() > 1 ? static_cast<size_t>(m) : 0] / y_scale;
            const int64_t b = bias ? bias->data<int32_t>()[m] : 0;
            int64_t* p = acc.data() + (n * g.m + m) * P;
            for (int64_t i = 0; i < P; ++i) p[i] = requant_wide(p[i] + b, s, y_zp, r);
        }
    Tensor y(yd, conv_out_shape(g));
    store_codes(y, acc);
    return single(std::move(y));
}

namespace {

/// A [..., M, K] x B [..., K, N] with B's leading dims either absent (rank 2, shared) or equal to
/// A's; 1-D operands follow numpy (promoted, then the added dim removed).
struct WideMatMul {
    int64_t batch = 1, m = 1, k = 1, n = 1;
    bool b_shared = true;
    std::vector<int64_t> out_shape;
};

WideMatMul plan_wide(const std::vector<int64_t>& as, const std::vector<int64_t>& bs, const std::string& op) {
    if (as.empty() || bs.empty()) fail(op, "scalar operands are not supported");
    WideMatMul p;
    std::vector<int64_t> a = as, b = bs;
    const bool a1 = a.size() == 1, b1 = b.size() == 1;
    if (a1) a.insert(a.begin(), 1);
    if (b1) b.push_back(1);
    p.m = a[a.size() - 2];
    p.k = a.back();
    if (b[b.size() - 2] != p.k) fail(op, "inner dimensions differ");
    p.n = b.back();
    const std::vector<int64_t> alead(a.begin(), a.end() - 2), blead(b.begin(), b.end() - 2);
    if (!blead.empty() && blead != alead) fail(op, "B's leading dimensions must be absent or equal to A's");
    p.b_shared = blead.empty();
    p.batch = prod(alead);
    p.out_shape = alead;
    if (!a1) p.out_shape.push_back(p.m);
    if (!b1) p.out_shape.push_back(p.n);
    return p;
}

}  // namespace

Outputs qlinear_matmul_wide(const Attributes& at, const Inputs& in) {
    const std::string op = "QLinearMatMul";
    const Tensor& a = need(in, 0, op);
    const Tensor& b = need(in, 3, op);
    check_qint(a, op, "a", false);
    check_qint(b, op, "b", true);
    const WideMatMul p = plan_wide(a.shape(), b.shape(), op);
    const float a_scale = scalar_f32(need(in, 1, op), op);
    const int32_t a_zp = scalar_zp(opt(in, 2), op);
    const std::vector<float> b_scale = float_values(need(in, 4, op));
    const std::vector<int32_t> b_zp = zp_values(opt(in, 5), 1);
    if ((b_scale.size() != 1 && static_cast<int64_t>(b_scale.size()) != p.n) ||
        (b_zp.size() != 1 && static_cast<int64_t>(b_zp.size()) != p.n))
        fail(op, "b_scale / b_zero_point must be scalar or [N]");
    const float y_scale = scalar_f32(need(in, 6, op), op);
    const Tensor* yz = opt(in, 7);
    const int32_t y_zp = scalar_zp(yz, op);
    const DType yd = yz ? yz->dtype() : a.dtype();
    if (!is_q16(yd)) fail(op, "y_zero_point must be int8/uint8/int16/uint16");
    const QRange r = range_of(yd, qbits_attr(at, op));
    std::vector<int64_t> out(static_cast<size_t>(p.batch * p.m * p.n));
    for (int64_t bi = 0; bi < p.batch; ++bi)
        for (int64_t i = 0; i < p.m; ++i)
            for (int64_t j = 0; j < p.n; ++j) {
                const int32_t bz = b_zp[b_zp.size() > 1 ? static_cast<size_t>(j) : 0];
                int64_t acc = 0;
                const size_t ab = static_cast<size_t>((bi * p.m + i) * p.k);
                const size_t bb = static_cast<size_t>((p.b_shared ? 0 : bi) * p.k * p.n + j);
                for (int64_t k = 0; k < p.k; ++k)
                    acc += (qint_at(a, ab + static_cast<size_t>(k)) - a_zp) *
                           (qint_at(b, bb + static_cast<size_t>(k * p.n)) - bz);
                const float s = a_scale * b_scale[b_scale.size() > 1 ? static_cast<size_t>(j) : 0] / y_scale;
                out[static_cast<size_t>((bi * p.m + i) * p.n + j)] = requant_wide(acc, s, y_zp, r);
            }
    Tensor y(yd, p.out_shape);
    store_codes(y, out);
    return single(std::move(y));
}

Outputs qgemm_wide(const Attributes& at, const Inputs& in) {
    const std::string op = "QGemm";
    const Tensor& a = need(in, 0, op);
    const Tensor& b = need(in, 3, op);
    check_qint(a, op, "A", false);
    check_qint(b, op, "B", true);
    if (a.rank() != 2 || b.rank() != 2) fail(op, "A and B must be 2-D");
    const bool ta = at.get_int("transA", 0) != 0, tb = at.get_int("transB", 0) != 0;
    const float alpha = at.get_float("alpha", 1.0f);
    const int64_t M = ta ? a.dim(1) : a.dim(0), K = ta ? a.dim(0) : a.dim(1), N = tb ? b.dim(0) : b.dim(1);
    if ((tb ? b.dim(1) : b.dim(0)) != K) fail(op, "inner dimensions differ");
    const float a_scale = scalar_f32(need(in, 1, op), op);
    const int32_t a_zp = scalar_zp(opt(in, 2), op);
    const std::vector<float> b_scale = float_values(need(in, 4, op));
    const std::vector<int32_t> b_zp = zp_values(opt(in, 5), 1);
    if ((b_scale.size() != 1 && static_cast<int64_t>(b_scale.size()) != N) ||
        (b_zp.size() != 1 && static_cast<int64_t>(b_zp.size()) != N))
        fail(op, "b_scale / b_zero_point must be scalar or [N]");
    std::vector<int64_t> acc(static_cast<size_t>(M * N), 0);
    for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) {
            const int32_t bz = b_zp[b_zp.size() > 1 ? static_cast<size_t>(j) : 0];
            int64_t s = 0;
            for (int64_t k = 0; k < K; ++k) {
                const size_t ai = static_cast<size_t>(ta ? k * M + i : i * K + k);
                const size_t bi = static_cast<size_t>(tb ? j * K + k : k * N + j);
                s += (qint_at(a, ai) - a_zp) * (qint_at(b, bi) - bz);
            }
            acc[static_cast<size_t>(i * N + j)] = s;
        }
    if (const Tensor* c = opt(in, 6)) {
        expect_dtype(*c, DType::I32, op, "C");
        const std::vector<int64_t> os{M, N};
        if (broadcast_shape(c->shape(), os, op) != os) fail(op, "C must broadcast to (M, N)");
        const std::vector<int64_t> sc = broadcast_strides(c->shape(), os), sz(2, 0);
        for_each_broadcast2(
            os, sc, sz, [&](int64_t o, int64_t ic, int64_t) { acc[static_cast<size_t>(o)] += c->data<int32_t>()[ic]; });
    }
    auto bscale = [&](int64_t j) { return b_scale[b_scale.size() > 1 ? static_cast<size_t>(j) : 0]; };
    const Tensor* ys = opt(in, 7);
    if (!ys) {
        Tensor y(DType::F32, {M, N});
        for (int64_t i = 0; i < M * N; ++i)
            y.data<float>()[i] = static_cast<float>(static_cast<double>(acc[static_cast<size_t>(i)]) *
                                                    static_cast<double>(alpha * a_scale * bscale(i % N)));
        return single(std::move(y));
    }
    const float y_scale = scalar_f32(*ys, op);
    const Tensor* yz = opt(in, 8);
    const int32_t y_zp = scalar_zp(yz, op);
    const DType yd = yz ? yz->dtype() : a.dtype();
    if (!is_q16(yd)) fail(op, "y_zero_point must be int8/uint8/int16/uint16");
    const QRange r = range_of(yd, qbits_attr(at, op));
    for (int64_t i = 0; i < M * N; ++i)
        acc[static_cast<size_t>(i)] =
            requant_wide(acc[static_cast<size_t>(i)], alpha * a_scale * bscale(i % N) / y_scale, y_zp, r);
    Tensor y(yd, {M, N});
    store_codes(y, acc);
    return single(std::move(y));
}

}  // namespace num::ops
