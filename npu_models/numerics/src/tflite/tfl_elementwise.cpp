// SPDX-License-Identifier: MIT
// TFLite element-wise operators on NHWC tensors with numpy broadcasting. Quantized arithmetic:
//  * ADD/SUB (int8/uint8): TFLite's general add: left_shift 20, both inputs scaled by
//    s_i / (2 max(s_a, s_b)), the sum by 2 max(s_a, s_b) / (2^20 s_y), each step
//    MultiplyByQuantizedMultiplier (reference_integer_ops/add.h);
//  * MUL: (a - za)(b - zb) through one multiplier s_a s_b / s_y;
//  * RELU/RELU6/RELU_N1_TO_1: requantize (x - zx) by s_x / s_y, clamp to the activation range
//    (reference_ops ReluX); LEAKY_RELU: identity and alpha multipliers;
//  * every other unary op: TFLite's look-up-table construction (kernels/internal/common.h
//    LUTPopulate): f(s_x (q - zx)) in float, TfLiteRound(f * (1 / s_y)) + zy, clamped.
// Float ops compute in float32.
#include <functional>

#include "tfl_common.h"

namespace num::tfl {
namespace {

using FloatFn = std::function<float(float)>;

float sigmoid(float v) { return 1.0f / (1.0f + std::exp(-v)); }

Outputs binary(const Attributes& a, const Inputs& in, const std::string& op) {
    const Tensor& x = ops::need(in, 0, op);
    const Tensor& z = ops::need(in, 1, op);
    if (x.dtype() != z.dtype()) ops::fail(op, "inputs have different types");
    const auto oshape = ops::broadcast_shape(x.shape(), z.shape(), op);
    const auto sa = ops::broadcast_strides(x.shape(), oshape), sb = ops::broadcast_strides(z.shape(), oshape);
    if (x.dtype() == DType::F32) {
        float lo = 0, hi = 0;
        act_range_f(fused(a), lo, hi, op);
        Tensor y = make_out(a, DType::F32, oshape);
        const float *xp = x.data<float>(), *zp = z.data<float>();
        float* yp = y.data<float>();
        ops::for_each_broadcast2(oshape, sa, sb, [&](int64_t o, int64_t i, int64_t j) {
            const float u = xp[i], v = zp[j];
            float r = 0.0f;
            if (op == "ADD") r = u + v;
            else if (op == "SUB") r = u - v;
            else if (op == "MUL") r = u * v;
            else if (op == "DIV") r = u / v;
            else if (op == "MAXIMUM") r = std::max(u, v);
            else if (op == "MINIMUM") r = std::min(u, v);
            else if (op == "SQUARED_DIFFERENCE") r = (u - v) * (u - v);
            yp[o] = std::min(std::max(r, lo), hi);
        });
        return ops::single(std::move(y));
    }
    if (x.dtype() != DType::I8 && x.dtype() != DType::U8) ops::fail(op, std::string("type ") + dtype_name(x.dtype()) + " is not supported");
    const Q qa = quant_of(x, op, "input 0"), qb = quant_of(z, op, "input 1"), qy = out_quant(a, op);
    if (qy.scale.empty()) ops::fail(op, "quantized output without quantization parameters");
    if (qa.scale.size() != 1 || qb.scale.size() != 1) ops::fail(op, "per-channel quantized activations are not supported");
    const DType yd = out_dtype(a, x.dtype());
    int32_t lo = 0, hi = 0;
    act_range_q(fused(a), yd, qy.s(), qy.z(), lo, hi, op);
    const std::vector<int32_t> ac = codes(x), bc = codes(z);
    std::vector<int32_t> yc(static_cast<size_t>(ops::prod(oshape)));
    std::function<int32_t(int32_t, int32_t)> f;
    if (op == "ADD" || op == "SUB") {
        const int left = 20;
        const double twice_max = 2.0 * std::max(static_cast<double>(qa.s()), static_cast<double>(qb.s()));
        const QuantizedMultiplier m1 = quantize_multiplier(static_cast<double>(qa.s()) / twice_max);
        const QuantizedMultiplier m2 = quantize_multiplier(static_cast<double>(qb.s()) / twice_max);
        const QuantizedMultiplier mo = quantize_multiplier(twice_max / (static_cast<double>(1 << left) * static_cast<double>(qy.s())));
        const bool sub = op == "SUB";
        f = [=](int32_t u, int32_t v) {
            const int32_t s1 = multiply_by_quantized_multiplier((u - qa.z()) * (1 << left), m1);
            const int32_t s2 = multiply_by_quantized_multiplier((v - qb.z()) * (1 << left), m2);
            return multiply_by_quantized_multiplier(sub ? s1 - s2 : s1 + s2, mo) + qy.z();
        };
    } else if (op == "MUL") {
        const QuantizedMultiplier m = quantize_multiplier(static_cast<double>(qa.s()) * static_cast<double>(qb.s()) / static_cast<double>(qy.s()));
        f = [=](int32_t u, int32_t v) { return multiply_by_quantized_multiplier((u - qa.z()) * (v - qb.z()), m) + qy.z(); };
    } else if (op == "MAXIMUM" || op == "MINIMUM") {
        if (qa.s() != qy.s() || qb.s() != qy.s() || qa.z() != qy.z() || qb.z() != qy.z())
            ops::fail(op, "quantized inputs and output must share scale and zero point");
        const bool mx = op == "MAXIMUM";
        f = [=](int32_t u, int32_t v) { return mx ? std::max(u, v) : std::min(u, v); };
    } else {  // DIV, SQUARED_DIFFERENCE: in float on the dequantized values
        const float inv = 1.0f / qy.s();
        const bool div = op == "DIV";
        f = [=](int32_t u, int32_t v) {
            const float du = qa.s() * static_cast<float>(u - qa.z()), dv = qb.s() * static_cast<float>(v - qb.z());
            const float r = div ? du / dv : (du - dv) * (du - dv);
            return round_away(r * inv) + qy.z();
        };
    }
    ops::for_each_broadcast2(oshape, sa, sb, [&](int64_t o, int64_t i, int64_t j) {
        yc[static_cast<size_t>(o)] = std::min(std::max(f(ac[static_cast<size_t>(i)], bc[static_cast<size_t>(j)]), lo), hi);
    });
    Tensor y = make_out(a, yd, oshape);
    store_codes(y, yc);
    return ops::single(std::move(y));
}

/// Float function of each unary op (also the source of the quantized look-up tables).
FloatFn float_fn(const std::string& op, const Attributes& a) {
    if (op == "RELU") return [](float v) { return std::max(v, 0.0f); };
    if (op == "RELU6") return [](float v) { return std::min(std::max(v, 0.0f), 6.0f); };
    if (op == "RELU_N1_TO_1") return [](float v) { return std::min(std::max(v, -1.0f), 1.0f); };
    if (op == "LOGISTIC") return sigmoid;
    if (op == "TANH") return [](float v) { return std::tanh(v); };
    if (op == "HARD_SWISH") return [](float v) { return v * std::min(std::max(v + 3.0f, 0.0f), 6.0f) / 6.0f; };
    if (op == "LEAKY_RELU") {
        const float al = a.get_float("alpha", 0.2f);
        return [al](float v) { return v >= 0.0f ? v : v * al; };
    }
    if (op == "ELU") return [](float v) { return v >= 0.0f ? v : std::exp(v) - 1.0f; };
    if (op == "ABS") return [](float v) { return std::fabs(v); };
    if (op == "NEG") return [](float v) { return -v; };
    if (op == "EXP") return [](float v) { return std::exp(v); };
    if (op == "LOG") return [](float v) { return std::log(v); };
    if (op == "SQRT") return [](float v) { return std::sqrt(v); };
    if (op == "RSQRT") return [](float v) { return 1.0f / std::sqrt(v); };
    if (op == "SIN") return [](float v) { return std::sin(v); };
    if (op == "COS") return [](float v) { return std::cos(v); };
    if (op == "SQUARE") return [](float v) { return v * v; };
    if (op == "FLOOR") return [](float v) { return std::floor(v); };
    if (op == "CEIL") return [](float v) { return std::ceil(v); };
    if (op == "ROUND") return [](float v) { return std::nearbyint(v); };  // TFLite ROUND: half to even
    if (op == "GELU") {
        if (a.get_int("approximate", 0) != 0)
            return [](float v) { return 0.5f * v * (1.0f + std::tanh(0.7978845608f * (v + 0.044715f * v * v * v))); };
        return [](float v) { return 0.5f * v * (1.0f + std::erf(v * 0.70710678f)); };
    }
    return nullptr;
}

Outputs unary(const Attributes& a, const Inputs& in, const std::string& op) {
    const Tensor& x = ops::need(in, 0, op);
    const FloatFn fn = float_fn(op, a);
    if (x.dtype() == DType::F32) {
        Tensor y = make_out(a, DType::F32, x.shape());
        for (size_t i = 0; i < x.numel(); ++i) y.data<float>()[i] = fn(x.data<float>()[i]);
        return ops::single(std::move(y));
    }
    if (x.dtype() != DType::I8 && x.dtype() != DType::U8) ops::fail(op, std::string("type ") + dtype_name(x.dtype()) + " is not supported");
    const Q qx = quant_of(x, op, "input"), qy = out_quant(a, op);
    if (qy.scale.empty() || qx.scale.size() != 1) ops::fail(op, "per-tensor input and output quantization required");
    const DType yd = out_dtype(a, x.dtype());
    int32_t qlo = 0, qhi = 0;
    code_range(yd, qlo, qhi);
    std::function<int32_t(int32_t)> f;
    if (op == "RELU" || op == "RELU6" || op == "RELU_N1_TO_1") {
        const QuantizedMultiplier m = quantize_multiplier(static_cast<double>(qx.s()) / static_cast<double>(qy.s()));
        int32_t lo = 0, hi = 0;
        act_range_q(op, yd, qy.s(), qy.z(), lo, hi, op);
        f = [=](int32_t q) { return std::min(std::max(multiply_by_quantized_multiplier(q - qx.z(), m) + qy.z(), lo), hi); };
    } else if (op == "LEAKY_RELU") {
        const double al = static_cast<double>(a.get_float("alpha", 0.2f));
        const QuantizedMultiplier mid = quantize_multiplier(static_cast<double>(qx.s()) / static_cast<double>(qy.s()));
        const QuantizedMultiplier mal = quantize_multiplier(al * static_cast<double>(qx.s()) / static_cast<double>(qy.s()));
        f = [=](int32_t q) {
            const int32_t d = q - qx.z();
            return multiply_by_quantized_multiplier(d, d >= 0 ? mid : mal) + qy.z();
        };
    } else {
        const float inv = 1.0f / qy.s();
        f = [=](int32_t q) {
            const float v = fn(qx.s() * static_cast<float>(q - qx.z()));
            const float r = std::round(v * inv);
            if (!(r == r)) return qlo;  // NaN (log/sqrt of a negative code): lowest code
            if (r > 1e9f) return qhi;
            if (r < -1e9f) return qlo;
            return static_cast<int32_t>(r) + qy.z();
        };
    }
    int32_t lo = 0, hi = 0;
    code_range(x.dtype(), lo, hi);
    std::vector<int32_t> lut(static_cast<size_t>(hi - lo + 1));
    for (int32_t q = lo; q <= hi; ++q) lut[static_cast<size_t>(q - lo)] = std::min(std::max(f(q), qlo), qhi);
    std::vector<int32_t> xc = codes(x);
    for (auto& v : xc) v = lut[static_cast<size_t>(v - lo)];
    Tensor y = make_out(a, yd, x.shape());
    store_codes(y, xc);
    return ops::single(std::move(y));
}

}  // namespace

void register_elementwise(ops::OpTable& t) {
    for (const char* op : {"ADD", "SUB", "MUL", "DIV", "MAXIMUM", "MINIMUM", "SQUARED_DIFFERENCE"}) {
        const std::string name(op);
        t["tflite:" + name] = [name](const Attributes& a, const Inputs& in) { return binary(a, in, name); };
    }
    for (const char* op : {"RELU", "RELU6", "RELU_N1_TO_1", "LOGISTIC", "TANH", "HARD_SWISH", "LEAKY_RELU", "ELU", "ABS",
                           "NEG", "EXP", "LOG", "SQRT", "RSQRT", "SIN", "COS", "SQUARE", "FLOOR", "CEIL", "ROUND", "GELU"}) {
        const std::string name(op);
        t["tflite:" + name] = [name](const Attributes& a, const Inputs& in) { return unary(a, in, name); };
    }
}

}  // namespace num::tfl
