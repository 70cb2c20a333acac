// SPDX-License-Identifier: MIT
// com.microsoft QLinear element-wise operators (seed 002 #7-#11, #13), with onnxruntime's float
// arithmetic: QLinearAdd/QLinearMul compute in float and quantize; the unary ops (Sigmoid,
// LeakyRelu) and QLinearConcat's requantization are 256-entry tables built by
// dequantize -> fp32 function -> QuantizeLinear; QLinearSoftmax follows onnxruntime's kernel.
#include <cmath>
#include <limits>
#include <type_traits>

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

// Table indexed by the raw bits of the input code (256 entries for 8-bit data, 65536 for 16-bit).
template <typename T>
using RawOf = std::make_unsigned_t<T>;

template <typename T, typename F>
std::vector<T> build_lut(QParams x, QParams y, F f, QRange r) {
    std::vector<T> lut(size_t{1} << (8 * sizeof(T)));
    for (size_t v = 0; v < lut.size(); ++v) {
        const T code = static_cast<T>(static_cast<RawOf<T>>(v));  // the same bit pattern as T
        const float x_real = static_cast<float>(static_cast<int32_t>(code) - x.zp) * x.scale;
        lut[v] = quantize_in<T>(f(x_real), y.scale, y.zp, r);
    }
    return lut;
}

template <typename F>
Outputs apply_lut(const Tensor& x, QParams xp, QParams yp, const std::string& op, int64_t qbits, F f) {
    Tensor y(x.dtype(), x.shape());
    dispatch_q16(x.dtype(), op, [&](auto tag) {
        using T = decltype(tag);
        const std::vector<T> lut = build_lut<T>(xp, yp, f, qrange<T>(qbits));
        const RawOf<T>* px = x.data<RawOf<T>>();
        for (size_t i = 0; i < x.numel(); ++i) y.data<T>()[i] = lut[px[i]];
        return 0;
    });
    return single(std::move(y));
}

Outputs qlinear_sigmoid(const Attributes& a, const Inputs& in) {
    const std::string op = "QLinearSigmoid";
    return apply_lut(need(in, 0, op), qparams(in, 1, 2, op), qparams(in, 3, 4, op), op, qbits_attr(a, op),
                     [](float r) { return 1.0f / (1.0f + std::exp(-r)); });
}

Outputs qlinear_leaky_relu(const Attributes& a, const Inputs& in) {
    const std::string op = "QLinearLeakyRelu";
    const float alpha = a.get_float("alpha", 0.01f);
    return apply_lut(need(in, 0, op), qparams(in, 1, 2, op), qparams(in, 3, 4, op), op, qbits_attr(a, op),
                     [alpha](float r) { return r >= 0.0f ? r : alpha * r; });
}

// QLinearAdd as onnxruntime's AVX2 kernel (mlas qladd): with ra = sa/sc, rb = sb/sc and
// fixed = zc - (ra*za + rb*zb) in float, v = fma(a, ra, fma(b, rb, fixed)) on the raw codes; when
// one operand is constant along the innermost (broadcast) run its term is folded into `fixed`
// first (plain multiply and add). Then RNE and saturation. Matched bit-exactly against onnxruntime
// 1.30 (tests/oracle qlinearadd_* cases cover the general, scalar-A and scalar-B variants).
struct QAdd {
    float ra, rb, fixed;
};

// The span kernels only call std::fma and add the rounding constant: nothing the compiler could
// contract differently, so the FMA-target clone and the portable one give identical results.
// [lo, hi]: the output grid (the container's range unless _qbits narrows it).
template <typename T>
inline T qadd_store(float v, float lo, float hi) {
    constexpr float kMagic = 12582912.0f;
    v = v < lo ? lo : v;  // compare-select form: vectorises to max/min
    v = v > hi ? hi : v;
    return static_cast<T>(static_cast<int32_t>((v + kMagic) - kMagic));
}

template <typename T>
inline void qadd_span_body(const T* a, const T* b, T* y, int64_t n, int mode, float ra, float rb, float fixed, float lo,
                           float hi) {
    if (mode == 1) {  // A constant (folded into fixed)
        for (int64_t i = 0; i < n; ++i) y[i] = qadd_store<T>(std::fma(static_cast<float>(b[i]), rb, fixed), lo, hi);
    } else if (mode == 2) {  // B constant (folded into fixed)
        for (int64_t i = 0; i < n; ++i) y[i] = qadd_store<T>(std::fma(static_cast<float>(a[i]), ra, fixed), lo, hi);
    } else {
        for (int64_t i = 0; i < n; ++i)
            y[i] = qadd_store<T>(std::fma(static_cast<float>(a[i]), ra, std::fma(static_cast<float>(b[i]), rb, fixed)), lo,
                                 hi);
    }
}

#if defined(__x86_64__)
template <typename T>
__attribute__((target("avx2,fma"))) void qadd_span_fma(const T* a, const T* b, T* y, int64_t n, int mode, float ra, float rb,
                                                  float fixed, float lo, float hi) {
    qadd_span_body(a, b, y, n, mode, ra, rb, fixed, lo, hi);
}
#endif

template <typename T>
void qadd_span(const T* a, const T* b, T* y, int64_t n, int mode, float ra, float rb, float fixed, QRange r) {
    const float lo = static_cast<float>(r.lo), hi = static_cast<float>(r.hi);
#if defined(__x86_64__)
    static const bool fma = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    if (fma) return qadd_span_fma(a, b, y, n, mode, ra, rb, fixed, lo, hi);
#endif
    qadd_span_body(a, b, y, n, mode, ra, rb, fixed, lo, hi);
}

// QLinearMul as onnxruntime's x86 kernel: RNE(float((a - za) * (b - zb)) * (sa * sb / sc)) + zc,
// saturated. The int product is exact in float, so one rounding.
template <typename T>
void qmul_span(const T* a, int64_t as, const T* b, int64_t bs, T* y, int64_t n, int32_t za, int32_t zb, float ratio, int32_t zc,
               QRange r) {
    // 16-bit codes: the product needs up to 33 bits, so it is formed in int64 (exact in float below 2^24).
    for (int64_t i = 0; i < n; ++i)
        y[i] = quantize_in<T>(static_cast<float>((int64_t{a[i * as]} - za) * (int64_t{b[i * bs]} - zb)) * ratio, 1.0f, zc, r);
}

// QLinearAdd / QLinearMul: inputs A, A_scale, A_zp, B, B_scale, B_zp, C_scale, C_zp.
template <bool kMul>
Outputs qlinear_binary(const Attributes& attrs, const Inputs& in) {
    const std::string op = kMul ? "QLinearMul" : "QLinearAdd";
    const Tensor& a = need(in, 0, op);
    const Tensor& b = need(in, 3, op);
    if (a.dtype() != b.dtype()) fail(op, "A and B types differ");
    const QParams ap = qparams(in, 1, 2, op), bp = qparams(in, 4, 5, op), cp = qparams(in, 6, 7, op);
    const std::vector<int64_t> os = broadcast_shape(a.shape(), b.shape(), op);
    const std::vector<int64_t> sa = broadcast_strides(a.shape(), os), sb = broadcast_strides(b.shape(), os);
    QAdd q;
    q.ra = ap.scale / cp.scale;
    q.rb = bp.scale / cp.scale;
    q.fixed = static_cast<float>(cp.zp) - (q.ra * static_cast<float>(ap.zp) + q.rb * static_cast<float>(bp.zp));
    const float mul_ratio = ap.scale * bp.scale / cp.scale;
    const int64_t qbits = qbits_attr(attrs, op);
    Tensor y = Tensor::uninitialized(a.dtype(), os);
    dispatch_q16(a.dtype(), op, [&](auto tag) {
        using T = decltype(tag);
        const QRange r = qrange<T>(qbits);
        for_each_broadcast_rows(os, sa, sb, [&](int64_t o, int64_t ia, int64_t ib, int64_t n, int64_t as, int64_t bs) {
            const T* pa = a.data<T>() + ia;
            const T* pb = b.data<T>() + ib;
            T* py = y.data<T>() + o;
            if (kMul) {
                qmul_span(pa, as, pb, bs, py, n, ap.zp, bp.zp, mul_ratio, cp.zp, r);
            } else if (as == 0 && bs != 0) {
                qadd_span(pa, pb, py, n, 1, q.ra, q.rb, q.fixed + static_cast<float>(pa[0]) * q.ra, r);
            } else if (bs == 0) {
                qadd_span(pa, pb, py, n, 2, q.ra, q.rb, q.fixed + static_cast<float>(pb[0]) * q.rb, r);
            } else {
                qadd_span(pa, pb, py, n, 0, q.ra, q.rb, q.fixed, r);
            }
        });
        return 0;
    });
    return single(std::move(y));
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
    if (yd != x0.dtype()) fail(op, "mixed input/output types are not supported");
    Tensor y(yd, os);
    const int64_t outer = prod(os, 0, static_cast<size_t>(ax)), inner = prod(os, static_cast<size_t>(ax) + 1);
    int64_t offset = 0;
    const int64_t qbits = qbits_attr(a, op);
    dispatch_q16(yd, op, [&](auto tag) {
        using T = decltype(tag);
        for (size_t i = 2; i < in.size(); i += 3) {
            const Tensor& x = *in[i];
            const QParams xp = qparams(in, i + 1, i + 2, op);
            const bool same = xp.scale == yp.scale && xp.zp == yp.zp;
            const std::vector<T> lut = build_lut<T>(xp, yp, [](float r) { return r; }, qrange<T>(qbits));
            const int64_t chunk = x.dim(ax) * inner;
            for (int64_t o = 0; o < outer; ++o) {
                const T* src = x.data<T>() + o * chunk;
                T* dst = y.data<T>() + o * os[static_cast<size_t>(ax)] * inner + offset;
                for (int64_t j = 0; j < chunk; ++j) dst[j] = same ? src[j] : lut[static_cast<RawOf<T>>(src[j])];
            }
            offset += chunk;
        }
        return 0;
    });
    return single(std::move(y));
}

// QLinearReduceMean (seed 002 #9): dequantize, fp32 mean, quantize.
Outputs qlinear_reduce_mean(const Attributes& a, const Inputs& in) {
    const std::string op = "QLinearReduceMean";
    const Tensor& x = need(in, 0, op);
    const QParams xp = qparams(in, 1, 2, op), yp = qparams(in, 3, 4, op);
    const Reduction r = plan_reduction(x.shape(), a.get_ints("axes", {}), a.get_int("keepdims", 1) != 0, false, op);
    Tensor y(x.dtype(), r.out_shape);
    const int64_t qbits = qbits_attr(a, op);
    dispatch_q16(x.dtype(), op, [&](auto tag) {
        using T = decltype(tag);
        const QRange qr = qrange<T>(qbits);
        std::vector<float> acc(y.numel(), 0.0f);
        for_each_broadcast2(x.shape(), contiguous_strides(x.shape()), r.out_strides, [&](int64_t, int64_t i, int64_t o) {
            acc[static_cast<size_t>(o)] += static_cast<float>(static_cast<int32_t>(x.data<T>()[i]) - xp.zp) * xp.scale;
        });
        for (size_t o = 0; o < acc.size(); ++o)
            y.data<T>()[o] = quantize_in<T>(acc[o] / static_cast<float>(r.count), yp.scale, yp.zp, qr);
        return 0;
    });
    return single(std::move(y));
}

// QLinearSoftmax (com.microsoft; onnxruntime's QDQ rewrite of DQ -> Softmax -> Q and the QOperator
// format's op) as onnxruntime's CPU kernel computes it (contrib_ops/cpu/quantization/
// qlinear_softmax.cc): a 256-entry float table T[d] = exp((d - 255 + b) * x_scale) over the code
// distance d = 255 + x - max(row) (b = max(0, ln(FLT_MAX / D) - 5) / x_scale keeps the row sum
// in float range), the row sum in float in element order, and y = RNE(T * floor(1 / y_scale) / sum)
// + y_zp saturated to the type. floor(1 / y_scale) is 256 for onnxruntime's quantizer's 1/256 but
// 254 for a y_scale of 1/255 (1 / float(1/255) = 254.99998): a float Softmax + QuantizeLinear then
// differs, which is why the reference follows the kernel. Attribute `opset` (required, the fused
// Softmax's since-version): below 13 the row is the flattened block from `axis` (default 1), else
// the one axis (default -1). Matched bit-exactly against onnxruntime 1.30 (tests/oracle
// qlinearsoftmax_* cases, including int8 rows whose top value saturates at 127).
Outputs qlinear_softmax(const Attributes& a, const Inputs& in) {
    const std::string op = "QLinearSoftmax";
    const Tensor& x = need(in, 0, op);
    if (!a.find("opset")) fail(op, "attribute 'opset' is required (the opset of the Softmax it replaces)");
    const bool legacy = a.get_int("opset", 13) < 13;
    if (x.rank() == 0) fail(op, "input must have rank >= 1");
    const int ax = norm_axis(a.get_int("axis", legacy ? 1 : -1), x.rank(), op);
    const QParams xp = qparams(in, 1, 2, op), yp = qparams(in, 3, 4, op);
    if (!(xp.scale > 0.0f) || !(yp.scale > 0.0f)) fail(op, "scales must be positive");
    const int64_t outer = prod(x.shape(), 0, static_cast<size_t>(ax));
    const int64_t n = legacy ? prod(x.shape(), static_cast<size_t>(ax)) : x.dim(ax);
    const int64_t inner = legacy ? 1 : prod(x.shape(), static_cast<size_t>(ax) + 1);
    Tensor y(x.dtype(), x.shape());
    if (x.numel() == 0) return single(std::move(y));
    double shift = std::log(static_cast<double>(std::numeric_limits<float>::max() / static_cast<float>(n)));
    shift = std::max(0.0, shift - 5.0) / static_cast<double>(xp.scale);
    float table[256];
    for (int d = 0; d < 256; ++d)
        table[d] = static_cast<float>(std::exp((static_cast<double>(d) - 255.0 + shift) * static_cast<double>(xp.scale)));
    const float ys = std::floor(1.0f / yp.scale);
    dispatch_q8(x.dtype(), op, [&](auto tag) {
        using T = decltype(tag);
        const float hi = static_cast<float>(std::numeric_limits<T>::max());
        for (int64_t o = 0; o < outer; ++o)
            for (int64_t i = 0; i < inner; ++i) {
                const T* p = x.data<T>() + o * n * inner + i;
                T* q = y.data<T>() + o * n * inner + i;
                int32_t m = p[0];
                for (int64_t k = 1; k < n; ++k) m = std::max<int32_t>(m, p[k * inner]);
                float sum = 0.0f;
                for (int64_t k = 0; k < n; ++k) sum += table[255 + p[k * inner] - m];
                for (int64_t k = 0; k < n; ++k) {
                    // The quotient is >= 0; inf (a one-element row: T * 256 overflows) saturates.
                    float v = std::nearbyint(table[255 + p[k * inner] - m] * ys / sum) + static_cast<float>(yp.zp);
                    v = std::min(v, hi);
                    q[k * inner] = static_cast<T>(static_cast<int32_t>(v));
                }
            }
        return 0;
    });
    return single(std::move(y));
}

}  // namespace

void register_qlinear(OpTable& t) {
    t["com.microsoft:QLinearAdd"] = qlinear_binary<false>;
    t["com.microsoft:QLinearMul"] = qlinear_binary<true>;
    t["com.microsoft:QLinearSigmoid"] = qlinear_sigmoid;
    t["com.microsoft:QLinearLeakyRelu"] = qlinear_leaky_relu;
    t["com.microsoft:QLinearConcat"] = qlinear_concat;
    t["com.microsoft:QLinearReduceMean"] = qlinear_reduce_mean;
    t["com.microsoft:QLinearSoftmax"] = qlinear_softmax;
}

}  // namespace num::ops
