// SPDX-License-Identifier: MIT
// Unary element-wise operators (activations and math): fp32, evaluated per element in float with
// the C library's functions; onnxruntime uses its own vectorised approximations (MLAS logistic,
// tanh, erf), hence the oracle tests' relative tolerance on these.
#include <algorithm>
#include <cmath>
#include <limits>

#include "op_common.h"

namespace num::ops {
namespace {

template <typename F>
OpFn unary(const std::string& op, F f) {
    return [op, f](const Attributes& a, const Inputs& in) -> Outputs {
        const Tensor& x = need(in, 0, op);
        expect_dtype(x, DType::F32, op, "X");
        Tensor y(DType::F32, x.shape());
        const float* px = x.data<float>();
        float* py = y.data<float>();
        const auto g = f(a);  // attribute binding
        for (size_t i = 0; i < x.numel(); ++i) py[i] = g(px[i]);
        return single(std::move(y));
    };
}

float softplus(float x) { return x > 0.0f ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)); }
float sigmoid(float x) { return x >= 0.0f ? 1.0f / (1.0f + std::exp(-x)) : std::exp(x) / (1.0f + std::exp(x)); }
float gelu_erf(float x) { return 0.5f * x * (1.0f + std::erf(x * static_cast<float>(M_SQRT1_2))); }
float gelu_tanh(float x) {
    const float k = 0.7978845608028654f;  // sqrt(2/pi)
    return 0.5f * x * (1.0f + std::tanh(k * (x + 0.044715f * x * x * x)));
}

// Relu on raw 8-bit codes too (onnxruntime registers int8 Relu, opset 14).
Outputs relu(const Attributes&, const Inputs& in) {
    const Tensor& x = need(in, 0, "Relu");
    Tensor y(x.dtype(), x.shape());
    if (x.dtype() == DType::F32) {
        for (size_t i = 0; i < x.numel(); ++i) y.data<float>()[i] = std::max(x.data<float>()[i], 0.0f);
    } else if (x.dtype() == DType::I8) {
        for (size_t i = 0; i < x.numel(); ++i) y.data<int8_t>()[i] = std::max<int8_t>(x.data<int8_t>()[i], 0);
    } else if (x.dtype() == DType::I16) {
        for (size_t i = 0; i < x.numel(); ++i) y.data<int16_t>()[i] = std::max<int16_t>(x.data<int16_t>()[i], 0);
    } else if (x.dtype() == DType::U8 || x.dtype() == DType::U16) {
        y = x;
    } else {
        fail("Relu", std::string("unsupported type ") + dtype_name(x.dtype()));
    }
    return single(std::move(y));
}

template <typename T>
void clip_typed(const Tensor& x, const Inputs& in, const Attributes& a, Tensor& y) {
    T lo = std::numeric_limits<T>::lowest(), hi = std::numeric_limits<T>::max();
    if (a.has("min")) lo = static_cast<T>(a.get_float("min", 0.0f));  // opset 6 attributes
    if (a.has("max")) hi = static_cast<T>(a.get_float("max", 0.0f));
    if (const Tensor* m = opt(in, 1)) lo = m->data<T>()[0];
    if (const Tensor* m = opt(in, 2)) hi = m->data<T>()[0];
    for (size_t i = 0; i < x.numel(); ++i) {
        const T v = x.data<T>()[i];
        y.data<T>()[i] = std::min(std::max(v, lo), hi);  // min > max gives max everywhere (ONNX Clip-11+)
    }
}

Outputs clip(const Attributes& a, const Inputs& in) {
    const Tensor& x = need(in, 0, "Clip");
    for (size_t i = 1; i < 3; ++i)
        if (opt(in, i) && (opt(in, i)->dtype() != x.dtype() || opt(in, i)->numel() != 1))
            fail("Clip", "min/max must be scalars of the input type");
    Tensor y(x.dtype(), x.shape());
    switch (x.dtype()) {
        case DType::F32: clip_typed<float>(x, in, a, y); break;
        case DType::I8: clip_typed<int8_t>(x, in, a, y); break;
        case DType::U8: clip_typed<uint8_t>(x, in, a, y); break;
        case DType::I16: clip_typed<int16_t>(x, in, a, y); break;
        case DType::U16: clip_typed<uint16_t>(x, in, a, y); break;
        case DType::I32: clip_typed<int32_t>(x, in, a, y); break;
        case DType::I64: clip_typed<int64_t>(x, in, a, y); break;
        default: fail("Clip", std::string("unsupported type ") + dtype_name(x.dtype()));
    }
    return single(std::move(y));
}

// com.microsoft FastGelu: tanh approximation of GELU(x + bias).
Outputs fast_gelu(const Attributes&, const Inputs& in) {
    const Tensor& x = need(in, 0, "FastGelu");
    expect_dtype(x, DType::F32, "FastGelu", "X");
    const Tensor* b = opt(in, 1);
    Tensor y(DType::F32, x.shape());
    const size_t nb = b ? b->numel() : 1;
    for (size_t i = 0; i < x.numel(); ++i) y.data<float>()[i] = gelu_tanh(x.data<float>()[i] + (b ? b->data<float>()[i % nb] : 0.0f));
    return single(std::move(y));
}

auto no_attr(float (*f)(float)) {
    return [f](const Attributes&) { return f; };
}

}  // namespace

void register_activation(OpTable& t) {
    t[":Relu"] = relu;
    t[":Clip"] = clip;
    t[":Sigmoid"] = unary("Sigmoid", no_attr(sigmoid));
    t[":Tanh"] = unary("Tanh", no_attr([](float x) { return std::tanh(x); }));
    t[":Softplus"] = unary("Softplus", no_attr(softplus));
    t[":Mish"] = unary("Mish", no_attr([](float x) { return x * std::tanh(softplus(x)); }));
    t[":Exp"] = unary("Exp", no_attr([](float x) { return std::exp(x); }));
    t[":Log"] = unary("Log", no_attr([](float x) { return std::log(x); }));
    t[":Sqrt"] = unary("Sqrt", no_attr([](float x) { return std::sqrt(x); }));
    t[":Erf"] = unary("Erf", no_attr([](float x) { return std::erf(x); }));
    t[":Abs"] = unary("Abs", no_attr([](float x) { return std::fabs(x); }));
    t[":Neg"] = unary("Neg", no_attr([](float x) { return -x; }));
    t[":Reciprocal"] = unary("Reciprocal", no_attr([](float x) { return 1.0f / x; }));
    t[":Floor"] = unary("Floor", no_attr([](float x) { return std::floor(x); }));
    t[":Ceil"] = unary("Ceil", no_attr([](float x) { return std::ceil(x); }));
    t[":Softsign"] = unary("Softsign", no_attr([](float x) { return x / (1.0f + std::fabs(x)); }));
    t[":LeakyRelu"] = unary("LeakyRelu", [](const Attributes& a) {
        const float al = a.get_float("alpha", 0.01f);
        return [al](float x) { return x < 0.0f ? al * x : x; };
    });
    t[":Elu"] = unary("Elu", [](const Attributes& a) {
        const float al = a.get_float("alpha", 1.0f);
        return [al](float x) { return x < 0.0f ? al * (std::exp(x) - 1.0f) : x; };
    });
    t[":Selu"] = unary("Selu", [](const Attributes& a) {
        const float al = a.get_float("alpha", 1.67326319217681884765625f), ga = a.get_float("gamma", 1.05070102214813232421875f);
        return [al, ga](float x) { return x <= 0.0f ? ga * (al * std::exp(x) - al) : ga * x; };
    });
    t[":HardSigmoid"] = unary("HardSigmoid", [](const Attributes& a) {
        const float al = a.get_float("alpha", 0.2f), be = a.get_float("beta", 0.5f);
        return [al, be](float x) { return std::max(0.0f, std::min(1.0f, al * x + be)); };
    });
    t[":HardSwish"] = unary("HardSwish", no_attr([](float x) { return x * std::max(0.0f, std::min(1.0f, x / 6.0f + 0.5f)); }));
    t[":Gelu"] = unary("Gelu", [](const Attributes& a) {
        return a.get_string("approximate", "none") == "tanh" ? gelu_tanh : gelu_erf;
    });
    t["com.microsoft:Gelu"] = unary("Gelu", no_attr(gelu_erf));
    t["com.microsoft:FastGelu"] = fast_gelu;
}

}  // namespace num::ops
