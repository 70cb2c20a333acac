// SPDX-License-Identifier: MIT
// TFLite operator helpers (see tfl_common.h).
#include "tfl_common.h"

#include <cstring>

namespace num::tfl {

bool is_quant_type(DType d) { return d == DType::I8 || d == DType::U8 || d == DType::I16; }

void code_range(DType d, int32_t& lo, int32_t& hi) {
    switch (d) {
        case DType::I8: lo = -128; hi = 127; return;
        case DType::U8: lo = 0; hi = 255; return;
        case DType::I16: lo = -32768; hi = 32767; return;
        default: lo = INT32_MIN; hi = INT32_MAX; return;
    }
}

Q quant_of(const Tensor& t, const std::string& op, const char* what) {
    Q q;
    if (t.quant.empty()) {
        if (is_quant_type(t.dtype())) ops::fail(op, std::string(what) + " is " + dtype_name(t.dtype()) + " without quantization parameters");
        return q;
    }
    q.scale = t.quant.scale;
    q.zp = t.quant.zero_point;
    for (float s : q.scale)
        if (!(s > 0.0f) || !std::isfinite(s)) ops::fail(op, std::string(what) + " has a non-positive or non-finite scale");
    return q;
}

DType out_dtype(const Attributes& a, DType like) {
    const std::string n = a.get_string("_output_dtype", "");
    for (DType d : {DType::F32, DType::F16, DType::I8, DType::U8, DType::I16, DType::U16, DType::I32, DType::I64, DType::Bool})
        if (n == dtype_name(d)) return d;
    return like;
}

Q out_quant(const Attributes& a, const std::string& op) {
    Q q;
    q.scale = a.get_floats("_output_scale", {});
    for (int64_t z : a.get_ints("_output_zero_point", {})) q.zp.push_back(static_cast<int32_t>(z));
    for (float s : q.scale)
        if (!(s > 0.0f) || !std::isfinite(s)) ops::fail(op, "output has a non-positive or non-finite scale");
    return q;
}

Tensor make_out(const Attributes& a, DType d, std::vector<int64_t> shape) {
    Tensor t(d, std::move(shape));
    t.quant.scale = a.get_floats("_output_scale", {});
    for (int64_t z : a.get_ints("_output_zero_point", {})) t.quant.zero_point.push_back(static_cast<int32_t>(z));
    return t;
}

std::vector<int32_t> codes(const Tensor& t) {
    std::vector<int32_t> v(t.numel());
    for (size_t i = 0; i < v.size(); ++i) {
        switch (t.dtype()) {
            case DType::I8: v[i] = t.data<int8_t>()[i]; break;
            case DType::U8: v[i] = t.data<uint8_t>()[i]; break;
            case DType::I16: v[i] = t.data<int16_t>()[i]; break;
            case DType::I32: v[i] = t.data<int32_t>()[i]; break;
            default: v[i] = 0; break;
        }
    }
    return v;
}

void store_codes(Tensor& t, const std::vector<int32_t>& v) {
    for (size_t i = 0; i < v.size() && i < t.numel(); ++i) {
        switch (t.dtype()) {
            case DType::I8: t.data<int8_t>()[i] = static_cast<int8_t>(v[i]); break;
            case DType::U8: t.data<uint8_t>()[i] = static_cast<uint8_t>(v[i]); break;
            case DType::I16: t.data<int16_t>()[i] = static_cast<int16_t>(v[i]); break;
            case DType::I32: t.data<int32_t>()[i] = v[i]; break;
            default: break;
        }
    }
}

std::string fused(const Attributes& a) { return a.get_string("fused_activation_function", "NONE"); }

void act_range_f(const std::string& act, float& lo, float& hi, const std::string& op) {
    lo = -std::numeric_limits<float>::infinity();
    hi = std::numeric_limits<float>::infinity();
    if (act == "NONE") return;
    if (act == "RELU") lo = 0.0f;
    else if (act == "RELU6") lo = 0.0f, hi = 6.0f;
    else if (act == "RELU_N1_TO_1") lo = -1.0f, hi = 1.0f;
    else ops::fail(op, "fused activation " + act + " is not supported");
}

void act_range_q(const std::string& act, DType d, float scale, int32_t zp, int32_t& lo, int32_t& hi,
                 const std::string& op) {
    code_range(d, lo, hi);
    if (!activation_range(act, scale, zp, lo, hi)) ops::fail(op, "fused activation " + act + " is not supported");
}

void pad_1d(const std::string& padding, int64_t in, int64_t k, int64_t stride, int64_t dil, int64_t& out,
            int64_t& before, const std::string& op) {
    if (!padding_1d(padding, in, k, stride, dil, out, before))
        ops::fail(op, "padding " + padding + " with filter " + std::to_string(k) + ", stride " + std::to_string(stride) +
                          ", dilation " + std::to_string(dil) + " (SAME or VALID, all >= 1)");
}

}  // namespace num::tfl
