// SPDX-License-Identifier: MIT
// com.microsoft QLinear element-wise operators (seed 002 #7-#11, #13), with onnxruntime's float
// arithmetic: QLinearAdd/QLinearMul compute in float and quantize; the unary ops (Sigmoid,
// LeakyRelu) and QLinearConcat's requantization are 256-entry tables built by
// dequantize -> fp32 function -> QuantizeLinear.
#include <cmath>

#include "qcommon.h"

namespace num::ops {
namespace {

struct QParams {
    float scale = 1.0f;
    int32_t zp = 0;
};

QParams qparams(const Inputs& in, size_t scale_idx, size_t zp_idx, const std::string& op) {
    return {scalar_f32(need(in, scale_idx, op), op), scalar_zp(opt(in, zp_idx), op)};
}

// Table indexed by the raw byte of the input code.
template <typename T, typename F>
std::vector<T> build_lut(QParams x, QParams y, F f) {
    std::vector<T> lut(256);
    for (int v = 0; v < 256; ++v) {
        const T code = static_cast<T>(v);  // uint8 v, or int8 with the same bit pattern
        const float r = static_cast<float>(static_cast<int32_t>(code) - x.zp) * x.scale;
        lut[static_cast<size_t>(v)] = quantize_one<T>(f(r), y.scale, y.zp);
    }
    return lut;
}

template <typename F>
Outputs apply_lut(const Tensor& x, QParams xp, QParams yp, const std::string& op, F f) {
    Tensor y(x.dtype(), x.shape());
    dispatch_q8(x.dtype(), op, [&](auto tag) {
        using T = decltype(tag);
        const std::vector<T> lut = build_lut<T>(xp, yp, f);
        for (size_t i = 0; i < x.numel(); ++i) y.data<T>()[i] = lut[x.data<uint8_t>()[i]];
        return 0;
    });
    return {std::move(y)};
}

Outputs qlinear_sigmoid(const Attributes&, const Inputs& in) {
    const std::string op = "QLinearSigmoid";
    return apply_lut(need(in, 0, op), qparams(in, 1, 2, op), qparams(in, 3, 4, op), op,
                     [](float r) { return 1.0f / (1.0f + std::exp(-r)); });
}

Outputs qlinear_leaky_relu(const Attributes& a, const Inputs& in) {
    const std::string op = "QLinearLeakyRelu";
    const float alpha = a.get_float("alpha", 0.01f);
    return apply_lut(need(in, 0, op), qparams(in, 1, 2, op), qparams(in, 3, 4, op), op,
                     [alpha](float r) { return r >= 0.0f ? r : alpha * r; });
}

// QLinearMul as onnxruntime's x86 kernel: RNE(float((a - za) * (b - zb)) * (sa * sb / sc)) + zc,
// saturated. The int product is exact in float, so one rounding.
template <typename T>
T qmul_one(int32_t va, int32_t vb, float ratio, int32_t zc) {
    return quantize_one<T>(static_cast<float>(va * vb) * ratio, 1.0f, zc);
}

// QLinearAdd as onnxruntime's AVX2 kernel (mlas qladd): with ra = sa/sc, rb = sb/sc and
// fixed = zc - (ra*za + rb*zb) in float, v = fma(a, ra, fma(b, rb, fixed)) on the raw codes; when
// one operand is constant along the innermost (broadcast) span its term is folded into `fixed`
// first (plain multiply and add). Then RNE and saturation. Matched bit-exactly against onnxruntime
// 1.30 (tests/oracle qlinearadd_* cases cover the general, scalar-A and scalar-B variants).
struct QAdd {
    float ra, rb, fixed;
    bool a_const, b_const;
    float apply(float a, float b) const {
        if (a_const) return std::fma(b, rb, fixed + a * ra);
        if (b_const) return std::fma(a, ra, fixed + b * rb);
        return std::fma(a, ra, std::fma(b, rb, fixed));
    }
};

// QLinearAdd / QLinearMul: inputs A, A_scale, A_zp, B, B_scale, B_zp, C_scale, C_zp.
template <bool kMul>
Outputs qlinear_binary(const Attributes&, const Inputs& in) {
    const std::string op = kMul ? "QLinearMul" : "QLinearAdd";
    const Tensor& a = need(in, 0, op);
    const Tensor& b = need(in, 3, op);
    if (a.dtype() != b.dtype()) fail(op, "A and B types differ");
    const QParams ap = qparams(in, 1, 2, op), bp = qparams(in, 4, 5, op), cp = qparams(in, 6, 7, op);
    const std::vector<int64_t> os = broadcast_shape(a.shape(), b.shape(), op);
    const std::vector<int64_t> sa = broadcast_strides(a.shape(), os), sb = broadcast_strides(b.shape(), os);
    QAdd add;
    add.ra = ap.scale / cp.scale;
    add.rb = bp.scale / cp.scale;
    add.fixed = static_cast<float>(cp.zp) - (add.ra * static_cast<float>(ap.zp) + add.rb * static_cast<float>(bp.zp));
    add.a_const = a.numel() == 1 || (!os.empty() && sa.back() == 0 && a.shape() != b.shape());
    add.b_const = !add.a_const && (b.numel() == 1 || (!os.empty() && sb.back() == 0 && a.shape() != b.shape()));
    const float mul_ratio = ap.scale * bp.scale / cp.scale;
    Tensor y(a.dtype(), os);
    dispatch_q8(a.dtype(), op, [&](auto tag) {
        using T = decltype(tag);
        const T* pa = a.data<T>();
        const T* pb = b.data<T>();
        T* py = y.data<T>();
        for_each_broadcast2(os, sa, sb, [&](int64_t o, int64_t ia, int64_t ib) {
            if (kMul) {
                py[o] = qmul_one<T>(static_cast<int32_t>(pa[ia]) - ap.zp, static_cast<int32_t>(pb[ib]) - bp.zp, mul_ratio, cp.zp);
            } else {
                py[o] = quantize_one<T>(add.apply(static_cast<float>(pa[ia]), static_cast<float>(pb[ib])), 1.0f, 0);
            }
        });
        return 0;
    });
    return {std::move(y)};
}

// QLinearConcat: Y_scale, Y_zp, then (tensor, scale, zp) triples.
Outputs qlinear_concat(const Attributes& a, const Inputs& in) {
    const std::string op = "QLinearConcat";
    if (in.size() < 5 || (in.size() - 2) % 3 != 0) fail(op, "expects Y_scale, Y_zero_point and (X, scale, zp) triples");
    const QParams yp = qparams(in, 0, 1, op);
    const Tensor& x0 = need(in, 2, op);
    const int ax = norm_axis(a.get_int("axis", 0), x0.rank(), op);
    std::vector<int64_t> os = x0.shape();
    os[static_cast<size_t>(ax)] = 0;
    for (size_t i = 2; i < in.size(); i += 3) {
        const Tensor& x = need(in, i, op);
        if (x.dtype() != x0.dtype() || x.rank() != x0.rank()) fail(op, "inputs must share type and rank");
        for (int d = 0; d < x.rank(); ++d)
            if (d != ax && x.dim(d) != x0.dim(d)) fail(op, "non-axis dims differ");
        os[static_cast<size_t>(ax)] += x.dim(ax);
    }
    const DType yd = opt(in, 1) ? in[1]->dtype() : x0.dtype();
    if (yd != x0.dtype()) fail(op, "mixed 8-bit types are not supported");
    Tensor y(yd, os);
    const int64_t outer = prod(os, 0, static_cast<size_t>(ax)), inner = prod(os, static_cast<size_t>(ax) + 1);
    int64_t offset = 0;
    dispatch_q8(yd, op, [&](auto tag) {
        using T = decltype(tag);
        for (size_t i = 2; i < in.size(); i += 3) {
            const Tensor& x = *in[i];
            const QParams xp = qparams(in, i + 1, i + 2, op);
            const bool same = xp.scale == yp.scale && xp.zp == yp.zp;
            const std::vector<T> lut = build_lut<T>(xp, yp, [](float r) { return r; });
            const int64_t chunk = x.dim(ax) * inner;
            for (int64_t o = 0; o < outer; ++o) {
                const T* src = x.data<T>() + o * chunk;
                T* dst = y.data<T>() + o * os[static_cast<size_t>(ax)] * inner + offset;
                for (int64_t j = 0; j < chunk; ++j) dst[j] = same ? src[j] : lut[static_cast<uint8_t>(src[j])];
            }
            offset += chunk;
        }
        return 0;
    });
    return {std::move(y)};
}

// QLinearReduceMean (seed 002 #9): dequantize, fp32 mean, quantize.
Outputs qlinear_reduce_mean(const Attributes& a, const Inputs& in) {
    const std::string op = "QLinearReduceMean";
    const Tensor& x = need(in, 0, op);
    const QParams xp = qparams(in, 1, 2, op), yp = qparams(in, 3, 4, op);
    const Reduction r = plan_reduction(x.shape(), a.get_ints("axes", {}), a.get_int("keepdims", 1) != 0, false, op);
    Tensor y(x.dtype(), r.out_shape);
    dispatch_q8(x.dtype(), op, [&](auto tag) {
        using T = decltype(tag);
        std::vector<float> acc(y.numel(), 0.0f);
        for_each_broadcast2(x.shape(), contiguous_strides(x.shape()), r.out_strides, [&](int64_t, int64_t i, int64_t o) {
            acc[static_cast<size_t>(o)] += static_cast<float>(static_cast<int32_t>(x.data<T>()[i]) - xp.zp) * xp.scale;
        });
        for (size_t o = 0; o < acc.size(); ++o)
            y.data<T>()[o] = quantize_one<T>(acc[o] / static_cast<float>(r.count), yp.scale, yp.zp);
        return 0;
    });
    return {std::move(y)};
}

}  // namespace

void register_qlinear(OpTable& t) {
    t["com.microsoft:QLinearAdd"] = qlinear_binary<false>;
    t["com.microsoft:QLinearMul"] = qlinear_binary<true>;
    t["com.microsoft:QLinearSigmoid"] = qlinear_sigmoid;
    t["com.microsoft:QLinearLeakyRelu"] = qlinear_leaky_relu;
    t["com.microsoft:QLinearConcat"] = qlinear_concat;
    t["com.microsoft:QLinearReduceMean"] = qlinear_reduce_mean;
}

}  // namespace num::ops
