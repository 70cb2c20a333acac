// SPDX-License-Identifier: MIT
// Binary element-wise operators with numpy multidirectional broadcasting: Add, Sub, Mul, Div,
// Pow, Max, Min (variadic Max/Min/Sum/Mean folded pairwise), PRelu, comparison and Where.
#include <cmath>
#include <limits>
#include <type_traits>

#include "op_common.h"

namespace num::ops {
namespace {

template <typename T, typename F>
Tensor binary_typed(const Tensor& a, const Tensor& b, DType out_dt, const std::string& op, F f) {
    const std::vector<int64_t> os = broadcast_shape(a.shape(), b.shape(), op);
    using R = decltype(f(T{}, T{}));
    Tensor y(out_dt, os);
    const T* pa = a.data<T>();
    const T* pb = b.data<T>();
    R* py = y.data<R>();
    const int64_t n = static_cast<int64_t>(y.numel());
    if (a.shape() == b.shape()) {
        for (int64_t i = 0; i < n; ++i) py[i] = f(pa[i], pb[i]);
    } else if (b.numel() == 1 && static_cast<int64_t>(a.numel()) == n) {
        const T s = pb[0];
        for (int64_t i = 0; i < n; ++i) py[i] = f(pa[i], s);
    } else {
        for_each_broadcast2(os, broadcast_strides(a.shape(), os), broadcast_strides(b.shape(), os),
                            [&](int64_t o, int64_t ia, int64_t ib) { py[o] = f(pa[ia], pb[ib]); });
    }
    return y;
}

// Dispatch on the (shared) input type for arithmetic ops on float/int32/int64.
template <typename F>
Tensor arith(const Tensor& a, const Tensor& b, const std::string& op, F f) {
    if (a.dtype() != b.dtype()) fail(op, "input types differ");
    switch (a.dtype()) {
        case DType::F32: return binary_typed<float>(a, b, DType::F32, op, [&](float x, float y) { return static_cast<float>(f(x, y)); });
        case DType::I32: return binary_typed<int32_t>(a, b, DType::I32, op, [&](int32_t x, int32_t y) { return static_cast<int32_t>(f(x, y)); });
        case DType::I64: return binary_typed<int64_t>(a, b, DType::I64, op, [&](int64_t x, int64_t y) { return static_cast<int64_t>(f(x, y)); });
        default: fail(op, std::string("unsupported type ") + dtype_name(a.dtype()));
    }
}

/// Integer + - * in two's complement (unsigned arithmetic: no signed-overflow UB); floats as is.
template <typename T, typename F>
T wrapping(T x, T y, F f) {
    if constexpr (std::is_integral<T>::value) {
        using U = typename std::make_unsigned<T>::type;
        return static_cast<T>(f(static_cast<U>(x), static_cast<U>(y)));
    } else {
        return f(x, y);
    }
}

template <typename F>
OpFn binary_op(const std::string& op, F f) {
    return [op, f](const Attributes&, const Inputs& in) -> Outputs {
        return single(arith(need(in, 0, op), need(in, 1, op), op, f));
    };
}

// Variadic (Max, Min, Sum, Mean): fold pairwise with broadcasting.
template <typename F>
OpFn variadic_op(const std::string& op, F f, bool mean) {
    return [op, f, mean](const Attributes&, const Inputs& in) -> Outputs {
        Tensor acc = need(in, 0, op);
        for (size_t i = 1; i < in.size(); ++i) acc = arith(acc, need(in, i, op), op, f);
        if (mean) {
            expect_dtype(acc, DType::F32, op, "inputs");
            for (size_t i = 0; i < acc.numel(); ++i) acc.data<float>()[i] /= static_cast<float>(in.size());
        }
        return single(std::move(acc));
    };
}

Outputs int_div_guard(const Attributes&, const Inputs& in) {
    const Tensor& a = need(in, 0, "Div");
    const Tensor& b = need(in, 1, "Div");
    if (a.dtype() != DType::F32) {
        if (a.dtype() == DType::I64)
            for (size_t i = 0; i < b.numel(); ++i)
                if (b.data<int64_t>()[i] == 0) fail("Div", "integer division by zero");
        if (a.dtype() == DType::I32)
            for (size_t i = 0; i < b.numel(); ++i)
                if (b.data<int32_t>()[i] == 0) fail("Div", "integer division by zero");
    }
    // The one integer quotient that does not fit (INT_MIN / -1) is an error, not a trap.
    return single(arith(a, b, "Div", [](auto x, auto y) {
        using T = decltype(x);
        if constexpr (std::is_integral<T>::value)
            if (y == T(-1) && x == std::numeric_limits<T>::min()) fail("Div", "integer quotient overflows (MIN / -1)");
        return x / y;
    }));
}

Outputs prelu(const Attributes&, const Inputs& in) {
    const Tensor& x = need(in, 0, "PRelu");
    const Tensor& s = need(in, 1, "PRelu");
    expect_dtype(x, DType::F32, "PRelu", "X");
    expect_dtype(s, DType::F32, "PRelu", "slope");
    // Slope broadcasts unidirectionally to X.
    return single(binary_typed<float>(x, s, DType::F32, "PRelu", [](float v, float k) { return v < 0.0f ? v * k : v; }));
}

template <typename Cmp>
OpFn compare_op(const std::string& op, Cmp cmp) {
    return [op, cmp](const Attributes&, const Inputs& in) -> Outputs {
        const Tensor& a = need(in, 0, op);
        const Tensor& b = need(in, 1, op);
        if (a.dtype() != b.dtype()) fail(op, "input types differ");
        auto g = [&](auto x, auto y) { return static_cast<uint8_t>(cmp(x, y) ? 1 : 0); };
        switch (a.dtype()) {
            case DType::F32: return single(binary_typed<float>(a, b, DType::Bool, op, g));
            case DType::I32: return single(binary_typed<int32_t>(a, b, DType::Bool, op, g));
            case DType::I64: return single(binary_typed<int64_t>(a, b, DType::Bool, op, g));
            default: fail(op, std::string("unsupported type ") + dtype_name(a.dtype()));
        }
    };
}

// Pow as onnxruntime computes it (core/providers/cpu/math/element_wise_ops.cc): a scalar exponent of
// 2 or 3 is a product (x * x, x * x * x), any other exponent std::pow. glibc's powf(x, 2) is not
// always the correctly rounded x * x (79 of 100000 uniform [0, 2) values differ; onnxruntime-node
// 1.30 matches the products on all of them).
Outputs pow_op(const Attributes&, const Inputs& in) {
    const std::string op = "Pow";
    const Tensor& x = need(in, 0, op);
    const Tensor& e = need(in, 1, op);
    if (x.dtype() == DType::F32 && e.dtype() == DType::F32 && e.numel() == 1) {
        const float k = e.data<float>()[0];
        if (k == 2.0f || k == 3.0f) {
            Tensor y(DType::F32, x.shape());
            for (size_t i = 0; i < x.numel(); ++i) {
                const float v = x.data<float>()[i];
                y.data<float>()[i] = k == 2.0f ? v * v : v * v * v;
            }
            return single(std::move(y));
        }
    }
    return single(arith(x, e, op, [](auto a, auto b) { return std::pow(a, b); }));
}

}  // namespace

void register_elementwise(OpTable& t) {
    t[":Add"] = binary_op("Add", [](auto x, auto y) { return wrapping(x, y, [](auto p, auto q) { return p + q; }); });
    t[":Sub"] = binary_op("Sub", [](auto x, auto y) { return wrapping(x, y, [](auto p, auto q) { return p - q; }); });
    t[":Mul"] = binary_op("Mul", [](auto x, auto y) { return wrapping(x, y, [](auto p, auto q) { return p * q; }); });
    t[":Div"] = int_div_guard;
    t[":Pow"] = pow_op;
    t[":Max"] = variadic_op("Max", [](auto x, auto y) { return x > y ? x : y; }, false);
    t[":Min"] = variadic_op("Min", [](auto x, auto y) { return x < y ? x : y; }, false);
    t[":Sum"] = variadic_op("Sum", [](auto x, auto y) { return x + y; }, false);
    t[":Mean"] = variadic_op("Mean", [](auto x, auto y) { return x + y; }, true);
    t[":PRelu"] = prelu;
    t[":Equal"] = compare_op("Equal", [](auto x, auto y) { return x == y; });
    t[":Less"] = compare_op("Less", [](auto x, auto y) { return x < y; });
    t[":Greater"] = compare_op("Greater", [](auto x, auto y) { return x > y; });
    t[":GreaterOrEqual"] = compare_op("GreaterOrEqual", [](auto x, auto y) { return x >= y; });
    t[":LessOrEqual"] = compare_op("LessOrEqual", [](auto x, auto y) { return x <= y; });
}

}  // namespace num::ops
