// SPDX-License-Identifier: MIT
// More TFLite builtins: SPLIT (axis tensor first), SPLIT_V, PACK, UNPACK, GATHER (batch_dims 0),
// ARG_MAX / ARG_MIN (first extremum, int32 or int64 out), PRELU (float; alpha broadcast to the input)
// and TILE. All but PRELU move or compare codes, so int8 needs no arithmetic: outputs keep the input's
// quantization (TFLite requires it for these ops).
#include <cstring>

#include "tfl_common.h"

namespace num::tfl {
namespace {

/// Copies [outer][axis_in][inner] slices [begin, begin + count) of x into y ([outer][count][inner]).
void copy_axis(const Tensor& x, int axis, int64_t begin, int64_t count, Tensor& y) {
    const size_t e = dtype_size(x.dtype());
    const int64_t outer = ops::prod(x.shape(), 0, size_t(axis)), inner = ops::prod(x.shape(), size_t(axis) + 1);
    const int64_t n = x.dim(axis);
    for (int64_t o = 0; o < outer; ++o)
        std::memcpy(y.raw() + size_t(o * count * inner) * e, x.raw() + size_t((o * n + begin) * inner) * e, size_t(count * inner) * e);
}

Tensor like(const Attributes& a, const Tensor& x, std::vector<int64_t> shape) {
    Tensor y = make_out(a, x.dtype(), std::move(shape));
    if (y.quant.empty()) y.quant = x.quant;
    return y;
}

Outputs split(const Attributes& a, const Inputs& in, bool v) {
    const std::string op = v ? "SPLIT_V" : "SPLIT";
    // SPLIT: (axis, input); SPLIT_V: (input, size_splits, axis)
    const Tensor& x = ops::need(in, v ? 0 : 1, op);
    const std::vector<int64_t> ax = ops::int_values(ops::need(in, v ? 2 : 0, op), op);
    if (ax.size() != 1) ops::fail(op, "axis must be a scalar");
    const int axis = ops::norm_axis(ax[0], x.rank(), op);
    const int64_t dim = x.dim(axis);
    std::vector<int64_t> sizes;
    if (v) {
        sizes = ops::int_values(ops::need(in, 1, op), op);
        int64_t known = 0, unknown = -1;
        for (size_t i = 0; i < sizes.size(); ++i) {
            if (sizes[i] == -1 && unknown < 0) unknown = int64_t(i);
            else if (sizes[i] < 0) ops::fail(op, "bad size_splits");
            else known += sizes[i];
        }
        if (unknown >= 0) sizes[size_t(unknown)] = dim - known;
        known = 0;
        for (int64_t s : sizes) known += s;
        if (known != dim || sizes.empty()) ops::fail(op, "size_splits do not sum to the axis size");
    } else {
        const int64_t n = a.get_int("num_splits", 1);
        if (n < 1 || dim % n != 0) ops::fail(op, "num_splits must divide the axis size");
        sizes.assign(size_t(n), dim / n);
    }
    Outputs out;
    int64_t begin = 0;
    for (int64_t s : sizes) {
        std::vector<int64_t> shape = x.shape();
        shape[size_t(axis)] = s;
        Tensor y = like(a, x, shape);
        copy_axis(x, axis, begin, s, y);
        out.push_back(std::move(y));
        begin += s;
    }
    return out;
}

Outputs pack(const Attributes& a, const Inputs& in) {
    const std::string op = "PACK";
    if (in.empty() || !in[0]) ops::fail(op, "no inputs");
    const Tensor& x0 = *in[0];
    const int axis = ops::norm_axis(a.get_int("axis", 0), x0.rank() + 1, op);
    std::vector<int64_t> shape = x0.shape();
    shape.insert(shape.begin() + axis, int64_t(in.size()));
    Tensor y = like(a, x0, shape);
    const size_t e = dtype_size(x0.dtype());
    const int64_t outer = ops::prod(x0.shape(), 0, size_t(axis)), inner = ops::prod(x0.shape(), size_t(axis));
    const int64_t inner_n = int64_t(x0.numel()) / std::max<int64_t>(outer, 1);
    (void)inner;
    for (size_t k = 0; k < in.size(); ++k) {
        if (!in[k] || in[k]->shape() != x0.shape() || in[k]->dtype() != x0.dtype()) ops::fail(op, "inputs differ in shape or type");
        for (int64_t o = 0; o < outer; ++o)
            std::memcpy(y.raw() + size_t((o * int64_t(in.size()) + int64_t(k)) * inner_n) * e, in[k]->raw() + size_t(o * inner_n) * e, size_t(inner_n) * e);
    }
    return ops::single(std::move(y));
}

Outputs unpack(const Attributes& a, const Inputs& in) {
    const std::string op = "UNPACK";
    const Tensor& x = ops::need(in, 0, op);
    const int axis = ops::norm_axis(a.get_int("axis", 0), x.rank(), op);
    std::vector<int64_t> shape = x.shape();
    shape.erase(shape.begin() + axis);
    Outputs out;
    for (int64_t k = 0; k < x.dim(axis); ++k) {
        Tensor y = like(a, x, shape);
        copy_axis(x, axis, k, 1, y);
        out.push_back(std::move(y));
    }
    return out;
}

Outputs gather(const Attributes& a, const Inputs& in) {
    const std::string op = "GATHER";
    const Tensor& x = ops::need(in, 0, op);
    const std::vector<int64_t> idx = ops::int_values(ops::need(in, 1, op), op);
    if (a.get_int("batch_dims", 0) != 0) ops::fail(op, "batch_dims must be 0");
    const int axis = ops::norm_axis(a.get_int("axis", 0), x.rank(), op);
    std::vector<int64_t> shape(x.shape().begin(), x.shape().begin() + axis);
    for (int64_t d : in[1]->shape()) shape.push_back(d);
    shape.insert(shape.end(), x.shape().begin() + axis + 1, x.shape().end());
    Tensor y = like(a, x, shape);
    const size_t e = dtype_size(x.dtype());
    const int64_t outer = ops::prod(x.shape(), 0, size_t(axis)), inner = ops::prod(x.shape(), size_t(axis) + 1), n = x.dim(axis);
    for (int64_t o = 0; o < outer; ++o)
        for (size_t k = 0; k < idx.size(); ++k) {
            if (idx[k] < 0 || idx[k] >= n) ops::fail(op, "index " + std::to_string(idx[k]) + " out of range [0, " + std::to_string(n) + ")");
            std::memcpy(y.raw() + size_t((o * int64_t(idx.size()) + int64_t(k)) * inner) * e, x.raw() + size_t((o * n + idx[k]) * inner) * e, size_t(inner) * e);
        }
    return ops::single(std::move(y));
}

Outputs arg(const Attributes& a, const Inputs& in, bool mx) {
    const std::string op = mx ? "ARG_MAX" : "ARG_MIN";
    const Tensor& x = ops::need(in, 0, op);
    const std::vector<int64_t> ax = ops::int_values(ops::need(in, 1, op), op);
    if (ax.size() != 1) ops::fail(op, "axis must be a scalar");
    const int axis = ops::norm_axis(ax[0], x.rank(), op);
    std::vector<int64_t> shape = x.shape();
    shape.erase(shape.begin() + axis);
    const DType od = out_dtype(a, DType::I64);
    if (od != DType::I32 && od != DType::I64) ops::fail(op, "output must be int32 or int64");
    Tensor y(od, shape);
    const int64_t outer = ops::prod(x.shape(), 0, size_t(axis)), inner = ops::prod(x.shape(), size_t(axis) + 1), n = x.dim(axis);
    std::vector<float> v(x.numel());
    if (x.dtype() == DType::F32) std::memcpy(v.data(), x.raw(), x.nbytes());
    else {
        const std::vector<int32_t> c = codes(x);
        for (size_t i = 0; i < c.size(); ++i) v[i] = float(c[i]);
    }
    for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
            int64_t best = 0;
            for (int64_t k = 1; k < n; ++k) {
                const float c = v[size_t((o * n + k) * inner + i)], b = v[size_t((o * n + best) * inner + i)];
                if (mx ? c > b : c < b) best = k;
            }
            if (od == DType::I32) y.data<int32_t>()[o * inner + i] = int32_t(best);
            else y.data<int64_t>()[o * inner + i] = best;
        }
    return ops::single(std::move(y));
}

Outputs prelu(const Attributes& a, const Inputs& in) {
    const std::string op = "PRELU";
    const Tensor& x = ops::need(in, 0, op);
    const Tensor& al = ops::need(in, 1, op);
    if (x.dtype() != DType::F32 || al.dtype() != DType::F32) ops::fail(op, "float32 only here (quantized PRELU: no kernel yet)");
    const auto sa = ops::contiguous_strides(x.shape()), sb = ops::broadcast_strides(al.shape(), x.shape());
    Tensor y = make_out(a, DType::F32, x.shape());
    ops::for_each_broadcast2(x.shape(), sa, sb, [&](int64_t o, int64_t i, int64_t j) {
        const float v = x.data<float>()[i];
        y.data<float>()[o] = v >= 0.0f ? v : v * al.data<float>()[j];
    });
    return ops::single(std::move(y));
}

Outputs tile(const Attributes& a, const Inputs& in) {
    const std::string op = "TILE";
    const Tensor& x = ops::need(in, 0, op);
    const std::vector<int64_t> m = ops::int_values(ops::need(in, 1, op), op);
    if (int(m.size()) != x.rank()) ops::fail(op, "multiples must have one entry per axis");
    std::vector<int64_t> shape = x.shape();
    for (size_t d = 0; d < shape.size(); ++d) {
        if (m[d] < 0) ops::fail(op, "negative multiple");
        shape[d] *= m[d];
    }
    Tensor y = like(a, x, shape);
    const size_t e = dtype_size(x.dtype());
    const auto xs = ops::contiguous_strides(x.shape()), ys = ops::contiguous_strides(shape);
    for (size_t o = 0; o < y.numel(); ++o) {
        int64_t rem = int64_t(o), i = 0;
        for (size_t d = 0; d < shape.size(); ++d) {
            const int64_t c = rem / ys[d];
            rem %= ys[d];
            i += (c % x.dim(int(d))) * xs[d];
        }
        std::memcpy(y.raw() + o * e, x.raw() + size_t(i) * e, e);
    }
    return ops::single(std::move(y));
}

}  // namespace

void register_more(ops::OpTable& t) {
    t["tflite:SPLIT"] = [](const Attributes& a, const Inputs& in) { return split(a, in, false); };
    t["tflite:SPLIT_V"] = [](const Attributes& a, const Inputs& in) { return split(a, in, true); };
    t["tflite:PACK"] = pack;
    t["tflite:UNPACK"] = unpack;
    t["tflite:GATHER"] = gather;
    t["tflite:ARG_MAX"] = [](const Attributes& a, const Inputs& in) { return arg(a, in, true); };
    t["tflite:ARG_MIN"] = [](const Attributes& a, const Inputs& in) { return arg(a, in, false); };
    t["tflite:PRELU"] = prelu;
    t["tflite:TILE"] = tile;
}

}  // namespace num::tfl
