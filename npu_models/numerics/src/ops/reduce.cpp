// SPDX-License-Identifier: MIT
// Reductions (ReduceMean/Max/Min/Sum/Prod, ArgMax/ArgMin), Softmax/LogSoftmax and inference
// BatchNormalization, fp32.
#include <cmath>
#include <limits>

#include "op_common.h"

namespace num::ops {

Reduction plan_reduction(const std::vector<int64_t>& shape, std::vector<int64_t> axes, bool keepdims,
                         bool noop_with_empty_axes, const std::string& op) {
    const int r = static_cast<int>(shape.size());
    std::vector<bool> red(shape.size(), false);
    if (axes.empty() && !noop_with_empty_axes) red.assign(shape.size(), true);
    for (int64_t a : axes) red[static_cast<size_t>(norm_axis(a, r, op))] = true;
    Reduction p;
    std::vector<int64_t> kept;  // output shape with keepdims
    for (size_t d = 0; d < shape.size(); ++d) {
        kept.push_back(red[d] ? 1 : shape[d]);
        if (red[d]) p.count *= shape[d];
        if (!red[d] || keepdims) p.out_shape.push_back(red[d] ? 1 : shape[d]);
    }
    p.out_strides = contiguous_strides(kept);
    for (size_t d = 0; d < shape.size(); ++d)
        if (red[d]) p.out_strides[d] = 0;
    return p;
}

std::vector<int64_t> reduction_axes(const Attributes& a, const Inputs& in, const std::string& op) {
    if (const Tensor* t = opt(in, 1)) return int_values(*t, op);
    return a.get_ints("axes", {});
}

namespace {

enum class Red { Mean, Max, Min, Sum, Prod };

OpFn reduce_op(const std::string& op, Red kind) {
    return [op, kind](const Attributes& a, const Inputs& in) -> Outputs {
        const Tensor& x = need(in, 0, op);
        expect_dtype(x, DType::F32, op, "data");
        const Reduction r = plan_reduction(x.shape(), reduction_axes(a, in, op), a.get_int("keepdims", 1) != 0,
                                           a.get_int("noop_with_empty_axes", 0) != 0, op);
        Tensor y(DType::F32, r.out_shape);
        float init = 0.0f;
        if (kind == Red::Max) init = -std::numeric_limits<float>::infinity();
        if (kind == Red::Min) init = std::numeric_limits<float>::infinity();
        if (kind == Red::Prod) init = 1.0f;
        float* py = y.data<float>();
        std::fill(py, py + y.numel(), init);
        const float* px = x.data<float>();
        for_each_broadcast2(x.shape(), contiguous_strides(x.shape()), r.out_strides, [&](int64_t, int64_t i, int64_t o) {
            switch (kind) {
                case Red::Max: py[o] = std::max(py[o], px[i]); break;
                case Red::Min: py[o] = std::min(py[o], px[i]); break;
                case Red::Prod: py[o] *= px[i]; break;
                default: py[o] += px[i]; break;
            }
        });
        if (kind == Red::Mean)
            for (size_t o = 0; o < y.numel(); ++o) py[o] /= static_cast<float>(r.count);
        return single(std::move(y));
    };
}

template <bool kMax>
Outputs arg_op(const Attributes& a, const Inputs& in) {
    const std::string op = kMax ? "ArgMax" : "ArgMin";
    const Tensor& x = need(in, 0, op);
    expect_dtype(x, DType::F32, op, "data");
    const int ax = norm_axis(a.get_int("axis", 0), x.rank(), op);
    const bool keep = a.get_int("keepdims", 1) != 0, last = a.get_int("select_last_index", 0) != 0;
    const int64_t outer = prod(x.shape(), 0, static_cast<size_t>(ax)), n = x.dim(ax);
    const int64_t inner = prod(x.shape(), static_cast<size_t>(ax) + 1);
    std::vector<int64_t> os = x.shape();
    if (keep) os[static_cast<size_t>(ax)] = 1;
    else os.erase(os.begin() + ax);
    Tensor y(DType::I64, os);
    for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
            const float* p = x.data<float>() + o * n * inner + i;
            int64_t best = 0;
            for (int64_t k = 1; k < n; ++k) {
                const float v = p[k * inner], b = p[best * inner];
                const bool better = kMax ? (v > b || (last && v == b)) : (v < b || (last && v == b));
                if (better) best = k;
            }
            y.data<int64_t>()[o * inner + i] = best;
        }
    return single(std::move(y));
}

// Softmax over `axis` (opset 13). With attribute "_onnx_opset" < 13 the input is coerced to 2-D at
// `axis` (default 1) and the softmax runs over the flattened trailing block, as opset 1-12 define.
template <bool kLog>
Outputs softmax(const Attributes& a, const Inputs& in) {
    const std::string op = kLog ? "LogSoftmax" : "Softmax";
    const Tensor& x = need(in, 0, op);
    expect_dtype(x, DType::F32, op, "input");
    const bool legacy = a.get_int("_onnx_opset", 13) < 13;
    const int ax = norm_axis(a.get_int("axis", legacy ? 1 : -1), x.rank(), op);
    const int64_t outer = prod(x.shape(), 0, static_cast<size_t>(ax));
    const int64_t n = legacy ? prod(x.shape(), static_cast<size_t>(ax)) : x.dim(ax);
    const int64_t inner = legacy ? 1 : prod(x.shape(), static_cast<size_t>(ax) + 1);
    Tensor y(DType::F32, x.shape());
    for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
            const float* p = x.data<float>() + o * n * inner + i;
            float* q = y.data<float>() + o * n * inner + i;
            float m = -std::numeric_limits<float>::infinity();
            for (int64_t k = 0; k < n; ++k) m = std::max(m, p[k * inner]);
            float s = 0.0f;
            for (int64_t k = 0; k < n; ++k) s += std::exp(p[k * inner] - m);
            const float ls = std::log(s);
            for (int64_t k = 0; k < n; ++k) q[k * inner] = kLog ? p[k * inner] - m - ls : std::exp(p[k * inner] - m) / s;
        }
    return single(std::move(y));
}

// y = scale * (x - mean) / sqrt(var + epsilon) + B, per channel (dim 1), inference mode.
Outputs batch_norm(const Attributes& a, const Inputs& in) {
    const std::string op = "BatchNormalization";
    const Tensor& x = need(in, 0, op);
    expect_dtype(x, DType::F32, op, "X");
    if (a.get_int("training_mode", 0) != 0) fail(op, "training_mode is not supported");
    if (x.rank() < 2) fail(op, "X must be [N, C, ...]");
    const int64_t c = x.dim(1), inner = prod(x.shape(), 2), n = x.dim(0);
    const float eps = a.get_float("epsilon", 1e-5f);
    const Tensor* p[4];
    for (size_t i = 0; i < 4; ++i) {
        p[i] = &need(in, i + 1, op);
        if (p[i]->dtype() != DType::F32 || static_cast<int64_t>(p[i]->numel()) != c) fail(op, "scale/B/mean/var must be float[C]");
    }
    Tensor y(DType::F32, x.shape());
    for (int64_t ch = 0; ch < c; ++ch) {
        const float sc = p[0]->data<float>()[ch] / std::sqrt(p[3]->data<float>()[ch] + eps);
        const float sh = p[1]->data<float>()[ch] - p[2]->data<float>()[ch] * sc;
        for (int64_t b = 0; b < n; ++b) {
            const float* src = x.data<float>() + (b * c + ch) * inner;
            float* dst = y.data<float>() + (b * c + ch) * inner;
            for (int64_t i = 0; i < inner; ++i) dst[i] = src[i] * sc + sh;
        }
    }
    return single(std::move(y));
}

}  // namespace

void register_reduce(OpTable& t) {
    t[":ReduceMean"] = reduce_op("ReduceMean", Red::Mean);
    t[":ReduceMax"] = reduce_op("ReduceMax", Red::Max);
    t[":ReduceMin"] = reduce_op("ReduceMin", Red::Min);
    t[":ReduceSum"] = reduce_op("ReduceSum", Red::Sum);
    t[":ReduceProd"] = reduce_op("ReduceProd", Red::Prod);
    t[":ArgMax"] = arg_op<true>;
    t[":ArgMin"] = arg_op<false>;
    t[":Softmax"] = softmax<false>;
    t[":LogSoftmax"] = softmax<true>;
    t[":BatchNormalization"] = batch_norm;
}

}  // namespace num::ops
