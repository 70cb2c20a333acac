// SPDX-License-Identifier: MIT
// TFLite data-movement and conversion operators: RESHAPE, SQUEEZE, EXPAND_DIMS, CONCATENATION, PAD,
// PADV2, TRANSPOSE, SLICE, STRIDED_SLICE (no ellipsis/new-axis masks), QUANTIZE and DEQUANTIZE.
// QUANTIZE: TfLiteRound(x / scale) + zp (AffineQuantize); int8 -> int8 requantizes with
// s_in / s_out through MultiplyByQuantizedMultiplier. DEQUANTIZE: float(double(scale) * (q - zp)),
// float16 -> float32 exactly.
#include <cstring>

#include "tfl_common.h"

namespace num::tfl {
namespace {

Tensor relabel(const Attributes& a, const Tensor& x, std::vector<int64_t> shape, const std::string& op) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    if (n != static_cast<int64_t>(x.numel())) ops::fail(op, "new shape has " + std::to_string(n) + " elements, input " + std::to_string(x.numel()));
    Tensor y = make_out(a, x.dtype(), std::move(shape));
    if (y.quant.empty()) y.quant = x.quant;
    if (x.nbytes()) std::memcpy(y.raw(), x.raw(), x.nbytes());
    return y;
}

Outputs reshape(const Attributes& a, const Inputs& in) {
    const std::string op = "RESHAPE";
    const Tensor& x = ops::need(in, 0, op);
    std::vector<int64_t> s = ops::opt(in, 1) ? ops::int_values(*in[1], op) : a.get_ints("new_shape", {});
    int64_t known = 1, unknown = -1;
    for (size_t i = 0; i < s.size(); ++i) {
        if (s[i] == -1) {
            if (unknown >= 0) ops::fail(op, "more than one -1 in the new shape");
            unknown = static_cast<int64_t>(i);
        } else if (s[i] < 0) {
            ops::fail(op, "negative dimension in the new shape");
        } else {
            known *= s[i];
        }
    }
    if (unknown >= 0) {
        if (known == 0 || static_cast<int64_t>(x.numel()) % known != 0) ops::fail(op, "cannot infer the -1 dimension");
        s[static_cast<size_t>(unknown)] = static_cast<int64_t>(x.numel()) / known;
    }
    return ops::single(relabel(a, x, s, op));
}

Outputs squeeze(const Attributes& a, const Inputs& in) {
    const std::string op = "SQUEEZE";
    const Tensor& x = ops::need(in, 0, op);
    std::vector<int64_t> dims = a.get_ints("squeeze_dims", {});
    std::vector<bool> drop(static_cast<size_t>(x.rank()), dims.empty());
    if (!dims.empty())
        for (int64_t d : dims) drop[static_cast<size_t>(ops::norm_axis(d, x.rank(), op))] = true;
    std::vector<int64_t> s;
    for (int i = 0; i < x.rank(); ++i) {
        if (drop[static_cast<size_t>(i)] && x.dim(i) == 1) continue;
        if (drop[static_cast<size_t>(i)] && !dims.empty()) ops::fail(op, "squeezed dimension " + std::to_string(i) + " is not 1");
        s.push_back(x.dim(i));
    }
    return ops::single(relabel(a, x, s, op));
}

Outputs expand_dims(const Attributes& a, const Inputs& in) {
    const std::string op = "EXPAND_DIMS";
    const Tensor& x = ops::need(in, 0, op);
    const std::vector<int64_t> ax = ops::int_values(ops::need(in, 1, op), op);
    if (ax.size() != 1) ops::fail(op, "axis must be a scalar");
    const int axis = ops::norm_axis(ax[0], x.rank() + 1, op);
    std::vector<int64_t> s = x.shape();
    s.insert(s.begin() + axis, 1);
    return ops::single(relabel(a, x, s, op));
}

Outputs concatenation(const Attributes& a, const Inputs& in) {
    const std::string op = "CONCATENATION";
    if (in.empty() || !in[0]) ops::fail(op, "no inputs");
    const Tensor& x0 = *in[0];
    const int axis = ops::norm_axis(a.get_int("axis", 0), x0.rank(), op);
    std::vector<int64_t> s = x0.shape();
    s[static_cast<size_t>(axis)] = 0;
    for (const Tensor* t : in) {
        if (!t || t->rank() != x0.rank() || t->dtype() != x0.dtype()) ops::fail(op, "inputs differ in rank or type");
        for (int d = 0; d < x0.rank(); ++d)
            if (d != axis && t->dim(d) != x0.dim(d)) ops::fail(op, "inputs differ outside the concatenation axis");
        s[static_cast<size_t>(axis)] += t->dim(axis);
    }
    Tensor y = make_out(a, x0.dtype(), s);
    const bool q = is_quant_type(x0.dtype());
    if (q) {
        const Q qy = out_quant(a, op);
        for (const Tensor* t : in) {
            const Q qt = quant_of(*t, op, "input");
            if (!qy.scale.empty() && (qt.s() != qy.s() || qt.z() != qy.z()))
                ops::fail(op, "quantized inputs must share the output's scale and zero point");
        }
        if (y.quant.empty()) y.quant = x0.quant;
    }
    const int64_t outer = ops::prod(s, 0, static_cast<size_t>(axis));
    const size_t elem = dtype_size(x0.dtype());
    const int64_t inner = ops::prod(s, static_cast<size_t>(axis) + 1);
    size_t off = 0;
    for (int64_t o = 0; o < outer; ++o)
        for (const Tensor* t : in) {
            const size_t n = static_cast<size_t>(t->dim(axis) * inner) * elem;
            std::memcpy(y.raw() + off, t->raw() + static_cast<size_t>(o) * n, n);
            off += n;
        }
    const std::string act = fused(a);
    if (act != "NONE") {
        if (x0.dtype() == DType::F32) {
            float lo = 0, hi = 0;
            act_range_f(act, lo, hi, op);
            for (size_t i = 0; i < y.numel(); ++i) y.data<float>()[i] = std::min(std::max(y.data<float>()[i], lo), hi);
        } else {
            int32_t lo = 0, hi = 0;
            act_range_q(act, y.dtype(), y.quant.scale.at(0), y.quant.zero_point.empty() ? 0 : y.quant.zero_point[0], lo, hi, op);
            std::vector<int32_t> c = codes(y);
            for (auto& v : c) v = std::min(std::max(v, lo), hi);
            store_codes(y, c);
        }
    }
    return ops::single(std::move(y));
}

Outputs pad(const Attributes& a, const Inputs& in, bool v2) {
    const std::string op = v2 ? "PADV2" : "PAD";
    const Tensor& x = ops::need(in, 0, op);
    const std::vector<int64_t> p = ops::int_values(ops::need(in, 1, op), op);
    const int r = x.rank();
    if (static_cast<int>(p.size()) != 2 * r) ops::fail(op, "paddings must be [rank, 2]");
    std::vector<int64_t> s(static_cast<size_t>(r));
    for (int d = 0; d < r; ++d) {
        if (p[static_cast<size_t>(2 * d)] < 0 || p[static_cast<size_t>(2 * d + 1)] < 0) ops::fail(op, "negative padding");
        s[static_cast<size_t>(d)] = x.dim(d) + p[static_cast<size_t>(2 * d)] + p[static_cast<size_t>(2 * d + 1)];
    }
    Tensor y = make_out(a, x.dtype(), s);
    if (y.quant.empty()) y.quant = x.quant;
    const size_t e = dtype_size(x.dtype());
    std::vector<uint8_t> value(e, 0);
    if (v2 && ops::opt(in, 2)) {
        if (in[2]->dtype() != x.dtype() || in[2]->numel() != 1) ops::fail(op, "constant_values must be one value of the input type");
        std::memcpy(value.data(), in[2]->raw(), e);
    } else if (is_quant_type(x.dtype())) {
        std::vector<int32_t> z{y.quant.zero_point.empty() ? 0 : y.quant.zero_point[0]};
        Tensor one(x.dtype(), {1});
        store_codes(one, z);
        std::memcpy(value.data(), one.raw(), e);
    }
    for (size_t i = 0; i < y.numel(); ++i) std::memcpy(y.raw() + i * e, value.data(), e);
    const auto xs = ops::contiguous_strides(x.shape()), ys = ops::contiguous_strides(s);
    for (size_t i = 0; i < x.numel(); ++i) {
        int64_t rem = static_cast<int64_t>(i), o = 0;
        for (int d = 0; d < r; ++d) {
            const int64_t c = rem / xs[static_cast<size_t>(d)];
            rem %= xs[static_cast<size_t>(d)];
            o += (c + p[static_cast<size_t>(2 * d)]) * ys[static_cast<size_t>(d)];
        }
        std::memcpy(y.raw() + static_cast<size_t>(o) * e, x.raw() + i * e, e);
    }
    return ops::single(std::move(y));
}

Outputs transpose(const Attributes& a, const Inputs& in) {
    const std::string op = "TRANSPOSE";
    const Tensor& x = ops::need(in, 0, op);
    const std::vector<int64_t> perm = ops::int_values(ops::need(in, 1, op), op);
    const int r = x.rank();
    if (static_cast<int>(perm.size()) != r) ops::fail(op, "perm length differs from the rank");
    std::vector<int64_t> s(static_cast<size_t>(r));
    std::vector<bool> seen(static_cast<size_t>(r), false);
    for (int d = 0; d < r; ++d) {
        const int p = ops::norm_axis(perm[static_cast<size_t>(d)], r, op);
        if (seen[static_cast<size_t>(p)]) ops::fail(op, "perm is not a permutation");
        seen[static_cast<size_t>(p)] = true;
        s[static_cast<size_t>(d)] = x.dim(p);
    }
    Tensor y = make_out(a, x.dtype(), s);
    if (y.quant.empty()) y.quant = x.quant;
    const size_t e = dtype_size(x.dtype());
    const auto xs = ops::contiguous_strides(x.shape()), ys = ops::contiguous_strides(s);
    for (size_t o = 0; o < y.numel(); ++o) {
        int64_t rem = static_cast<int64_t>(o), i = 0;
        for (int d = 0; d < r; ++d) {
            const int64_t c = rem / ys[static_cast<size_t>(d)];
            rem %= ys[static_cast<size_t>(d)];
            i += c * xs[static_cast<size_t>(perm[static_cast<size_t>(d)] < 0 ? perm[static_cast<size_t>(d)] + r : perm[static_cast<size_t>(d)])];
        }
        std::memcpy(y.raw() + o * e, x.raw() + static_cast<size_t>(i) * e, e);
    }
    return ops::single(std::move(y));
}

/// SLICE (begin, size) and STRIDED_SLICE (begin, end, strides, begin/end/shrink masks).
Outputs slice(const Attributes& a, const Inputs& in, bool strided) {
    const std::string op = strided ? "STRIDED_SLICE" : "SLICE";
    const Tensor& x = ops::need(in, 0, op);
    const int r = x.rank();
    const std::vector<int64_t> b = ops::int_values(ops::need(in, 1, op), op);
    const std::vector<int64_t> e2 = ops::int_values(ops::need(in, 2, op), op);
    std::vector<int64_t> st(static_cast<size_t>(r), 1);
    if (strided) {
        st = ops::int_values(ops::need(in, 3, op), op);
        if (a.get_int("ellipsis_mask", 0) != 0 || a.get_int("new_axis_mask", 0) != 0) ops::fail(op, "ellipsis and new-axis masks are not supported");
        if (a.get_int("offset", 0) != 0) ops::fail(op, "offset=true is not supported");
    }
    if (static_cast<int>(b.size()) != r || static_cast<int>(e2.size()) != r || static_cast<int>(st.size()) != r) ops::fail(op, "begin/end/strides must have one entry per axis");
    const int64_t bm = a.get_int("begin_mask", 0), em = a.get_int("end_mask", 0), sm = a.get_int("shrink_axis_mask", 0);
    std::vector<int64_t> start(static_cast<size_t>(r)), count(static_cast<size_t>(r)), shape;
    for (int d = 0; d < r; ++d) {
        const size_t u = static_cast<size_t>(d);
        const int64_t dim = x.dim(d);
        int64_t s0 = b[u], step = st[u];
        if (step == 0) ops::fail(op, "stride 0");
        if (!strided) {
            if (s0 < 0 || s0 > dim) ops::fail(op, "begin out of range");
            const int64_t n = e2[u] == -1 ? dim - s0 : e2[u];
            if (n < 0 || s0 + n > dim) ops::fail(op, "size out of range");
            start[u] = s0, count[u] = n, st[u] = 1;
            shape.push_back(n);
            continue;
        }
        auto clampi = [&](int64_t v, bool is_begin) {
            if (v < 0) v += dim;
            if (step > 0) return std::min(std::max<int64_t>(v, 0), dim);
            return std::min(std::max<int64_t>(v, -1), dim - 1) + (is_begin ? 0 : 0);
        };
        if ((sm >> d) & 1) {
            int64_t v = s0 < 0 ? s0 + dim : s0;
            if (v < 0 || v >= dim) ops::fail(op, "shrink index out of range");
            start[u] = v, count[u] = 1, st[u] = 1;
            continue;
        }
        int64_t lo = ((bm >> d) & 1) ? (step > 0 ? 0 : dim - 1) : clampi(s0, true);
        int64_t hi = ((em >> d) & 1) ? (step > 0 ? dim : -1) : clampi(e2[u], false);
        int64_t n = step > 0 ? (hi > lo ? (hi - lo + step - 1) / step : 0) : (lo > hi ? (lo - hi + (-step) - 1) / (-step) : 0);
        start[u] = lo, count[u] = n;
        shape.push_back(n);
    }
    int64_t total = 1;
    for (int64_t c : count) total *= c;
    Tensor y = make_out(a, x.dtype(), shape);
    if (y.quant.empty()) y.quant = x.quant;
    const size_t e = dtype_size(x.dtype());
    const auto xs = ops::contiguous_strides(x.shape()), cs = ops::contiguous_strides(count);
    for (int64_t o = 0; o < total; ++o) {
        int64_t rem = o, i = 0;
        for (int d = 0; d < r; ++d) {
            const size_t u = static_cast<size_t>(d);
            const int64_t c = rem / cs[u];
            rem %= cs[u];
            i += (start[u] + c * st[u]) * xs[u];
        }
        std::memcpy(y.raw() + static_cast<size_t>(o) * e, x.raw() + static_cast<size_t>(i) * e, e);
    }
    return ops::single(std::move(y));
}

float half_to_float(uint16_t h) {
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu, man = h & 0x3ffu, bits = 0;
    if (exp == 0) {
        if (man == 0) {
            bits = sign;
        } else {  // subnormal: normalise
            int e = -1;
            do {
                ++e;
                man <<= 1;
            } while ((man & 0x400u) == 0);
            bits = sign | (static_cast<uint32_t>(127 - 15 - e) << 23) | ((man & 0x3ffu) << 13);
        }
    } else if (exp == 31) {
        bits = sign | 0x7f800000u | (man << 13);
    } else {
        bits = sign | ((exp + 127 - 15) << 23) | (man << 13);
    }
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}

Outputs quantize(const Attributes& a, const Inputs& in) {
    const std::string op = "QUANTIZE";
    const Tensor& x = ops::need(in, 0, op);
    const Q qy = out_quant(a, op);
    const DType yd = out_dtype(a, DType::I8);
    if (!is_quant_type(yd) || qy.scale.size() != 1) ops::fail(op, "output must be a per-tensor quantized integer tensor");
    int32_t lo = 0, hi = 0;
    code_range(yd, lo, hi);
    std::vector<int32_t> yc(x.numel());
    if (x.dtype() == DType::F32) {
        for (size_t i = 0; i < yc.size(); ++i) {
            const float r = std::round(x.data<float>()[i] / qy.s());
            yc[i] = r >= static_cast<float>(hi - qy.z()) ? hi : r <= static_cast<float>(lo - qy.z()) ? lo : static_cast<int32_t>(r) + qy.z();
        }
    } else if (is_quant_type(x.dtype())) {
        const Q qx = quant_of(x, op, "input");
        const QuantizedMultiplier m = quantize_multiplier(static_cast<double>(qx.s()) / static_cast<double>(qy.s()));
        const std::vector<int32_t> xc = codes(x);
        for (size_t i = 0; i < yc.size(); ++i) yc[i] = std::min(std::max(multiply_by_quantized_multiplier(xc[i] - qx.z(), m) + qy.z(), lo), hi);
    } else {
        ops::fail(op, std::string("input type ") + dtype_name(x.dtype()) + " is not supported");
    }
    Tensor y = make_out(a, yd, x.shape());
    store_codes(y, yc);
    return ops::single(std::move(y));
}

Outputs dequantize(const Attributes& a, const Inputs& in) {
    const std::string op = "DEQUANTIZE";
    const Tensor& x = ops::need(in, 0, op);
    Tensor y = make_out(a, DType::F32, x.shape());
    y.quant = {};
    if (x.dtype() == DType::F16) {
        for (size_t i = 0; i < x.numel(); ++i) y.data<float>()[i] = half_to_float(x.data<uint16_t>()[i]);
        return ops::single(std::move(y));
    }
    if (!is_quant_type(x.dtype())) ops::fail(op, std::string("input type ") + dtype_name(x.dtype()) + " is not supported");
    const Q qx = quant_of(x, op, "input");
    const std::vector<int32_t> xc = codes(x);
    const int axis = x.quant.axis;
    const int64_t inner = qx.scale.size() > 1 && axis >= 0 ? ops::prod(x.shape(), static_cast<size_t>(axis) + 1) : 1;
    const int64_t ch = qx.scale.size() > 1 && axis >= 0 ? x.dim(axis) : 1;
    for (size_t i = 0; i < xc.size(); ++i) {
        const size_t c = qx.scale.size() > 1 ? static_cast<size_t>((static_cast<int64_t>(i) / inner) % ch) : 0;
        y.data<float>()[i] = static_cast<float>(static_cast<double>(qx.s(c)) * static_cast<double>(xc[i] - qx.z(c)));
    }
    return ops::single(std::move(y));
}

}  // namespace

void register_shape(ops::OpTable& t) {
    t["tflite:RESHAPE"] = reshape;
    t["tflite:SQUEEZE"] = squeeze;
    t["tflite:EXPAND_DIMS"] = expand_dims;
    t["tflite:CONCATENATION"] = concatenation;
    t["tflite:PAD"] = [](const Attributes& a, const Inputs& in) { return pad(a, in, false); };
    t["tflite:PADV2"] = [](const Attributes& a, const Inputs& in) { return pad(a, in, true); };
    t["tflite:TRANSPOSE"] = transpose;
    t["tflite:SLICE"] = [](const Attributes& a, const Inputs& in) { return slice(a, in, false); };
    t["tflite:STRIDED_SLICE"] = [](const Attributes& a, const Inputs& in) { return slice(a, in, true); };
    t["tflite:QUANTIZE"] = quantize;
    t["tflite:DEQUANTIZE"] = dequantize;
}

}  // namespace num::tfl
