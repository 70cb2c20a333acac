// SPDX-License-Identifier: MIT
// QuantizeLinear / DequantizeLinear (per tensor and per axis), DynamicQuantizeLinear, MulInteger
// and ReduceSumInteger (seed 002 #1-#4): q = saturate(RNE(x / scale) + zp), r = (q - zp) * scale.
#include <cmath>

#include "qcommon.h"
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

namespace num::ops {

void dynamic_quant_params(const float* x, size_t n, float& scale, uint8_t& zp) {
    float lo = 0.0f, hi = 0.0f;  // range always includes zero
    for (size_t i = 0; i < n; ++i) {
        lo = std::min(lo, x[i]);
        hi = std::max(hi, x[i]);
    }
    scale = hi == lo ? 1.0f : (hi - lo) / 255.0f;
    const float z = std::min(255.0f, std::max(0.0f, 0.0f - lo / scale));
    zp = static_cast<uint8_t>(rne_small(z));
}

namespace {

// Per-tensor or per-axis parameters resolved to "index of the parameter for element i".
struct AxisParams {
    int64_t inner = 1, count = 1;  // element i uses parameter (i / inner) % count
    size_t at(size_t i) const { return count == 1 ? 0 : static_cast<size_t>((static_cast<int64_t>(i) / inner) % count); }
};

AxisParams axis_params(const Tensor& x, const Tensor& scale, const Tensor* zp, const Attributes& a, const std::string& op) {
    expect_dtype(scale, DType::F32, op, "scale");
    AxisParams p;
    if (zp && zp->numel() != scale.numel()) fail(op, "scale and zero point must have the same shape");
    if (scale.numel() == 1 && scale.rank() <= 1) return p;
    if (scale.rank() != 1) fail(op, "scale must be a scalar or 1-D (blocked quantization is not supported)");
    const int ax = norm_axis(a.get_int("axis", 1), x.rank(), op);
    if (x.dim(ax) != static_cast<int64_t>(scale.numel())) fail(op, "per-axis scale length must equal x.shape[axis]");
    p.count = x.dim(ax);
    p.inner = prod(x.shape(), static_cast<size_t>(ax) + 1);
    return p;
}

#if defined(__x86_64__) && defined(__GNUC__)
/// quantize_row for 8-bit outputs, 16 values per step with the same IEEE operations (division,
/// NaN -> 0, clamp, the magic-constant RNE, truncation of an integral value): the same bytes.
/// Returns the values done (a multiple of 16; quantize_row does the rest).
template <typename T>
__attribute__((target("avx512f,avx512bw,avx512vl"))) size_t quantize_row_avx512(const float* x, size_t n, float scale,
                                                                                int32_t zp, QRange r, T* y) {
    static_assert(sizeof(T) == 1, "8-bit outputs");
    const __m512 s = _mm512_set1_ps(scale), lo = _mm512_set1_ps(static_cast<float>(r.lo - zp)),
                 hi = _mm512_set1_ps(static_cast<float>(r.hi - zp)), magic = _mm512_set1_ps(12582912.0f);
    const __m512i z = _mm512_set1_epi32(zp);
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512 v = _mm512_div_ps(_mm512_loadu_ps(x + i), s);
        v = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(v, v, _CMP_EQ_OQ), v);  // NaN -> 0
        // maskz forms throughout: GCC 12's -Wmaybe-uninitialized on the unmasked intrinsics.
        v = _mm512_maskz_min_ps(0xFFFF, _mm512_maskz_max_ps(0xFFFF, v, lo), hi);
        v = _mm512_sub_ps(_mm512_add_ps(v, magic), magic);
        const __m512i q = _mm512_add_epi32(_mm512_maskz_cvttps_epi32(0xFFFF, v), z);
        // Inside [r.lo, r.hi] after the clamp: the low byte is the int8 / uint8 value.
        _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i), _mm512_maskz_cvtepi32_epi8(0xFFFF, q));
    }
    return i;
}
#endif

Outputs quantize_linear(const Attributes& a, const Inputs& in) {
    const std::string op = "QuantizeLinear";
    const Tensor& x = need(in, 0, op);
    const Tensor& sc = need(in, 1, op);
    const Tensor* zt = opt(in, 2);
    expect_dtype(x, DType::F32, op, "x");
    const AxisParams p = axis_params(x, sc, zt, a, op);
    const std::vector<int32_t> zp = zp_values(zt, 1);
    const DType yd = zt ? zt->dtype() : DType::U8;  // ONNX: uint8 when the zero point is omitted
    const int64_t qbits = qbits_attr(a, op);
    Tensor y(yd, x.shape());
    dispatch_q16(yd, op, [&](auto tag) {
        using T = decltype(tag);
        const QRange r = qrange<T>(qbits);
        const size_t n = x.numel();
        const float* px = x.data<float>();
        const float* ps = sc.data<float>();
        T* py = y.data<T>();
        if (p.count == 1) {  // per tensor: the parameters once
            size_t done = 0;
#if defined(__x86_64__) && defined(__GNUC__)
            static const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                                       __builtin_cpu_supports("avx512vl");
            if constexpr (sizeof(T) == 1)
                if (avx512) done = quantize_row_avx512<T>(px, n, ps[0], zp[0], r, py);
#endif
            quantize_row<T>(px + done, n - done, ps[0], zp[0], r, py + done);
            return 0;
        }
        for (size_t i = 0; i < n; ++i) {
            const size_t k = p.at(i);
            py[i] = quantize_in<T>(px[i], ps[k], zp[zp.size() > 1 ? k : 0], r);
        }
        return 0;
    });
    return single(std::move(y));
}

Outputs dequantize_linear(const Attributes& a, const Inputs& in) {
    const std::string op = "DequantizeLinear";
    const Tensor& x = need(in, 0, op);
    const Tensor& sc = need(in, 1, op);
    const Tensor* zt = opt(in, 2);
    const AxisParams p = axis_params(x, sc, zt, a, op);
    Tensor y(DType::F32, x.shape());
    float* py = y.data<float>();
    auto run = [&](auto tag) {
        using T = decltype(tag);
        const T* px = x.data<T>();
        const T* pz = zt ? zt->data<T>() : nullptr;
        if (zt && zt->dtype() != x.dtype()) fail(op, "zero point type must match x");
        const size_t n = x.numel();
        const bool zp_axis = zt && zt->numel() > 1;
        const float* ps = sc.data<float>();
        if (p.count == 1) {  // per tensor: the parameters once
            const int32_t z = pz ? static_cast<int32_t>(pz[0]) : 0;
            const float s0 = ps[0];
            for (size_t i = 0; i < n; ++i) py[i] = static_cast<float>(static_cast<int32_t>(px[i]) - z) * s0;
            return;
        }
        for (size_t i = 0; i < n; ++i) {
            const size_t k = p.at(i);
            const int32_t z = pz ? static_cast<int32_t>(pz[zp_axis ? k : 0]) : 0;
            py[i] = static_cast<float>(static_cast<int32_t>(px[i]) - z) * ps[k];
        }
    };
    switch (x.dtype()) {
        case DType::I8: run(int8_t{}); break;
        case DType::U8: run(uint8_t{}); break;
        case DType::I16: run(int16_t{}); break;
        case DType::U16: run(uint16_t{}); break;
        case DType::I32: run(int32_t{}); break;  // QDQ bias tensors, 20-bit weights
        default: fail(op, std::string("unsupported input type ") + dtype_name(x.dtype()));
    }
    return single(std::move(y));
}

Outputs dynamic_quantize_linear(const Attributes&, const Inputs& in) {
    const std::string op = "DynamicQuantizeLinear";
    const Tensor& x = need(in, 0, op);
    expect_dtype(x, DType::F32, op, "x");
    float scale = 1.0f;
    uint8_t zp = 0;
    dynamic_quant_params(x.data<float>(), x.numel(), scale, zp);
    Tensor y(DType::U8, x.shape()), ys(DType::F32, {}), yz(DType::U8, {});
    for (size_t i = 0; i < x.numel(); ++i) y.data<uint8_t>()[i] = quantize_one<uint8_t>(x.data<float>()[i], scale, zp);
    ys.data<float>()[0] = scale;
    yz.data<uint8_t>()[0] = zp;
    Outputs out;
    out.push_back(std::move(y));
    out.push_back(std::move(ys));
    out.push_back(std::move(yz));
    return out;
}

int32_t q8_value(const Tensor& t, int64_t i) {
    return t.dtype() == DType::I8 ? t.data<int8_t>()[i] : static_cast<int32_t>(t.data<uint8_t>()[i]);
}

Outputs mul_integer(const Attributes&, const Inputs& in) {
    const std::string op = "MulInteger";
    const Tensor& a = need(in, 0, op);
    const Tensor& b = need(in, 2, op);
    if (!is_q8(a.dtype()) || !is_q8(b.dtype())) fail(op, "A and B must be int8/uint8");
    const int32_t za = scalar_zp(opt(in, 1), op), zb = scalar_zp(opt(in, 3), op);
    const std::vector<int64_t> os = broadcast_shape(a.shape(), b.shape(), op);
    Tensor y(DType::I32, os);
    for_each_broadcast2(os, broadcast_strides(a.shape(), os), broadcast_strides(b.shape(), os),
                        [&](int64_t o, int64_t ia, int64_t ib) {
                            y.data<int32_t>()[o] = (q8_value(a, ia) - za) * (q8_value(b, ib) - zb);
                        });
    return single(std::move(y));
}

// Sum of raw 8-bit codes. Output is int32 for both signednesses (no uint32 DType; a uint8 sum
// over fewer than 2^23 elements is the same value).
Outputs reduce_sum_integer(const Attributes& a, const Inputs& in) {
    const std::string op = "ReduceSumInteger";
    const Tensor& x = need(in, 0, op);
    if (!is_q8(x.dtype())) fail(op, "data must be int8/uint8");
    const Reduction r = plan_reduction(x.shape(), a.get_ints("axes", {}), a.get_int("keepdims", 1) != 0, false, op);
    Tensor y(DType::I32, r.out_shape);
    const std::vector<int64_t> cs = contiguous_strides(x.shape());
    for_each_broadcast2(x.shape(), cs, r.out_strides,
                        [&](int64_t, int64_t i, int64_t o) { y.data<int32_t>()[o] += q8_value(x, i); });
    return single(std::move(y));
}

}  // namespace

void register_quant(OpTable& t) {
    t[":QuantizeLinear"] = quantize_linear;
    t[":DequantizeLinear"] = dequantize_linear;
    // com.microsoft QuantizeLinear/DequantizeLinear resolve here too (registry fallback); a 1-D
    // scale without `axis` uses axis 1, the only sensible reading of the v1 schema.
    t[":DynamicQuantizeLinear"] = dynamic_quantize_linear;
    t["com.microsoft:MulInteger"] = mul_integer;
    t["com.microsoft:ReduceSumInteger"] = reduce_sum_integer;
}

}  // namespace num::ops
