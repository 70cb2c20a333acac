// SPDX-License-Identifier: MIT
// Strided data movement for any element type: Transpose, Slice, Pad (constant/reflect/edge/wrap)
// and Cast between the numeric types.
#include <cmath>
#include <cstring>

#include "op_common.h"

namespace num::ops {
namespace {

// y[o] = x[base + sum idx_d * strides_d] over y's shape, element-size generic.
template <typename E>
void gather_typed(const Tensor& x, int64_t base, const std::vector<int64_t>& strides, Tensor& y) {
    const E* px = x.data<E>() + base;
    E* py = y.data<E>();
    const std::vector<int64_t> zero(strides.size(), 0);
    for_each_broadcast2(y.shape(), strides, zero, [&](int64_t o, int64_t i, int64_t) { py[o] = px[i]; });
}

void strided_gather(const Tensor& x, int64_t base, const std::vector<int64_t>& strides, Tensor& y) {
    switch (dtype_size(x.dtype())) {
        case 1: gather_typed<uint8_t>(x, base, strides, y); break;
        case 2: gather_typed<uint16_t>(x, base, strides, y); break;
        case 4: gather_typed<uint32_t>(x, base, strides, y); break;
        default: gather_typed<uint64_t>(x, base, strides, y); break;
    }
}

Outputs transpose(const Attributes& a, const Inputs& in) {
    const Tensor& x = need(in, 0, "Transpose");
    const size_t r = x.shape().size();
    std::vector<int64_t> perm = a.get_ints("perm", {});
    if (perm.empty())
        for (size_t i = 0; i < r; ++i) perm.push_back(static_cast<int64_t>(r - 1 - i));
    if (perm.size() != r) fail("Transpose", "perm must list every axis");
    std::vector<bool> seen(r, false);
    const std::vector<int64_t> cs = contiguous_strides(x.shape());
    std::vector<int64_t> os(r), st(r);
    for (size_t i = 0; i < r; ++i) {
        const size_t p = static_cast<size_t>(norm_axis(perm[i], static_cast<int>(r), "Transpose"));
        if (seen[p]) fail("Transpose", "perm repeats an axis");
        seen[p] = true;
        os[i] = x.shape()[p];
        st[i] = cs[p];
    }
    Tensor y = same_type_like(x, os);
    strided_gather(x, 0, st, y);
    return single(std::move(y));
}

Outputs slice(const Attributes& a, const Inputs& in) {
    const Tensor& x = need(in, 0, "Slice");
    const int r = x.rank();
    std::vector<int64_t> starts, ends, axes, steps;
    if (opt(in, 1)) {  // opset >= 10
        starts = int_values(need(in, 1, "Slice"), "Slice");
        ends = int_values(need(in, 2, "Slice"), "Slice");
        if (opt(in, 3)) axes = int_values(*in[3], "Slice");
        if (opt(in, 4)) steps = int_values(*in[4], "Slice");
    } else {
        starts = a.get_ints("starts", {});
        ends = a.get_ints("ends", {});
        axes = a.get_ints("axes", {});
    }
    if (axes.empty())
        for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
    if (steps.empty()) steps.assign(starts.size(), 1);
    if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
        fail("Slice", "starts/ends/axes/steps lengths differ");
    std::vector<int64_t> os = x.shape(), st = contiguous_strides(x.shape());
    const std::vector<int64_t> cs = st;
    int64_t base = 0;
    for (size_t i = 0; i < starts.size(); ++i) {
        const int d = norm_axis(axes[i], r, "Slice");
        const int64_t dim = x.dim(d), step = steps[i];
        if (step == 0) fail("Slice", "step 0");
        int64_t s = starts[i] < 0 ? starts[i] + dim : starts[i];
        int64_t e = ends[i] < 0 ? ends[i] + dim : ends[i];
        if (step > 0) {
            s = std::min(std::max<int64_t>(s, 0), dim);
            e = std::min(std::max<int64_t>(e, 0), dim);
        } else {
            s = std::min(std::max<int64_t>(s, 0), dim - 1);
            e = std::min(std::max<int64_t>(e, -1), dim - 1);
        }
        // Element count ceil(|e - s| / |step|) without overflow for steps near INT64_MIN/MAX.
        const uint64_t mag = step > 0 ? static_cast<uint64_t>(step) : static_cast<uint64_t>(-(step + 1)) + 1;
        const int64_t span = step > 0 ? e - s : s - e;
        const int64_t n = span <= 0 ? 0 : static_cast<int64_t>(1 + static_cast<uint64_t>(span - 1) / mag);
        os[static_cast<size_t>(d)] = n;
        base += s * cs[static_cast<size_t>(d)];
        st[static_cast<size_t>(d)] = n > 1 ? step * cs[static_cast<size_t>(d)] : 0;  // one element: step unused
    }
    Tensor y = same_type_like(x, os);
    if (y.numel()) strided_gather(x, base, st, y);
    return single(std::move(y));
}

// Source index along one dim for a padded position, or -1 for the constant value.
int64_t pad_src(int64_t o, int64_t before, int64_t dim, const std::string& mode) {
    int64_t i = o - before;
    if (i >= 0 && i < dim) return i;
    if (mode == "constant" || dim == 0) return -1;
    if (mode == "edge") return i < 0 ? 0 : dim - 1;
    if (mode == "wrap") return ((i % dim) + dim) % dim;
    if (dim == 1) return 0;  // reflect
    const int64_t period = 2 * (dim - 1);
    i = ((i % period) + period) % period;
    return i < dim ? i : period - i;
}

template <typename E>
void pad_typed(const Tensor& x, const std::vector<int64_t>& before, const std::string& mode, E value, Tensor& y) {
    const size_t r = x.shape().size();
    std::vector<std::vector<int64_t>> maps(r);
    const std::vector<int64_t> cs = contiguous_strides(x.shape());
    for (size_t d = 0; d < r; ++d)
        for (int64_t o = 0; o < y.shape()[d]; ++o) {
            const int64_t s = pad_src(o, before[d], x.shape()[d], mode);
            maps[d].push_back(s < 0 ? -1 : s * cs[d]);
        }
    std::vector<int64_t> idx(r, 0);
    const E* px = x.data<E>();
    E* py = y.data<E>();
    for (size_t o = 0; o < y.numel(); ++o) {
        int64_t src = 0;
        for (size_t d = 0; d < r && src >= 0; ++d) src = maps[d][static_cast<size_t>(idx[d])] < 0 ? -1 : src + maps[d][static_cast<size_t>(idx[d])];
        py[o] = src < 0 ? value : px[src];
        for (size_t d = r; d-- > 0;) {
            if (++idx[d] < y.shape()[d]) break;
            idx[d] = 0;
        }
    }
}

Outputs pad(const Attributes& a, const Inputs& in) {
    const Tensor& x = need(in, 0, "Pad");
    const int r = x.rank();
    const std::string mode = a.get_string("mode", "constant");
    if (mode != "constant" && mode != "reflect" && mode != "edge" && mode != "wrap") fail("Pad", "unknown mode " + mode);
    std::vector<int64_t> p = opt(in, 1) ? int_values(*in[1], "Pad") : a.get_ints("pads", {});
    std::vector<int64_t> axes;
    if (opt(in, 3)) axes = int_values(*in[3], "Pad");
    else
        for (int i = 0; i < r; ++i) axes.push_back(i);
    if (p.size() != 2 * axes.size()) fail("Pad", "pads must have 2 entries per padded axis");
    std::vector<int64_t> before(static_cast<size_t>(r), 0), os = x.shape();
    for (size_t i = 0; i < axes.size(); ++i) {
        const size_t d = static_cast<size_t>(norm_axis(axes[i], r, "Pad"));
        before[d] = p[i];
        os[d] += p[i] + p[i + axes.size()];
        if (os[d] < 0) fail("Pad", "negative output size");
        if (mode == "reflect" && (p[i] >= x.shape()[d] || p[i + axes.size()] >= x.shape()[d]) && x.shape()[d] > 1)
            fail("Pad", "reflect padding must be smaller than the dim");
    }
    Tensor y = same_type_like(x, os);
    const Tensor* cv = opt(in, 2);
    if (cv && cv->dtype() != x.dtype()) fail("Pad", "constant_value type must match the input");
    switch (x.dtype()) {
        case DType::F32: pad_typed<float>(x, before, mode, cv ? cv->data<float>()[0] : a.get_float("value", 0.0f), y); break;
        case DType::I8: pad_typed<int8_t>(x, before, mode, cv ? cv->data<int8_t>()[0] : int8_t{0}, y); break;
        case DType::U8: pad_typed<uint8_t>(x, before, mode, cv ? cv->data<uint8_t>()[0] : uint8_t{0}, y); break;
        case DType::I16: pad_typed<int16_t>(x, before, mode, cv ? cv->data<int16_t>()[0] : int16_t{0}, y); break;
        case DType::U16: pad_typed<uint16_t>(x, before, mode, cv ? cv->data<uint16_t>()[0] : uint16_t{0}, y); break;
        case DType::I32: pad_typed<int32_t>(x, before, mode, cv ? cv->data<int32_t>()[0] : 0, y); break;
        case DType::I64: pad_typed<int64_t>(x, before, mode, cv ? cv->data<int64_t>()[0] : 0, y); break;
        default: fail("Pad", std::string("unsupported type ") + dtype_name(x.dtype()));
    }
    return single(std::move(y));
}

template <typename S, typename D>
void cast_typed(const Tensor& x, Tensor& y) {
    for (size_t i = 0; i < x.numel(); ++i) {
        const S v = x.data<S>()[i];
        if constexpr (std::is_floating_point<S>::value && !std::is_floating_point<D>::value) {
            y.data<D>()[i] = std::isfinite(v) ? static_cast<D>(v) : D{0};  // C++ UB otherwise
        } else {
            y.data<D>()[i] = static_cast<D>(v);
        }
    }
}

template <typename S>
void cast_from(const Tensor& x, Tensor& y) {
    switch (y.dtype()) {
        case DType::F32: cast_typed<S, float>(x, y); break;
        case DType::I8: cast_typed<S, int8_t>(x, y); break;
        case DType::U8: cast_typed<S, uint8_t>(x, y); break;
        case DType::I32: cast_typed<S, int32_t>(x, y); break;
        case DType::I64: cast_typed<S, int64_t>(x, y); break;
        case DType::Bool: cast_typed<S, bool>(x, y); break;
        default: fail("Cast", std::string("unsupported target ") + dtype_name(y.dtype()));
    }
}

// ONNX TensorProto data type numbers.
DType onnx_dtype(int64_t t) {
    switch (t) {
        case 1: return DType::F32;
        case 2: return DType::U8;
        case 3: return DType::I8;
        case 6: return DType::I32;
        case 7: return DType::I64;
        case 9: return DType::Bool;
        default: fail("Cast", "unsupported 'to' type " + std::to_string(t));
    }
}

Outputs cast(const Attributes& a, const Inputs& in) {
    const Tensor& x = need(in, 0, "Cast");
    Tensor y(onnx_dtype(a.get_int("to", 1)), x.shape());
    switch (x.dtype()) {
        case DType::F32: cast_from<float>(x, y); break;
        case DType::I8: cast_from<int8_t>(x, y); break;
        case DType::U8: cast_from<uint8_t>(x, y); break;
        case DType::I32: cast_from<int32_t>(x, y); break;
        case DType::I64: cast_from<int64_t>(x, y); break;
        case DType::Bool: cast_from<bool>(x, y); break;
        default: fail("Cast", std::string("unsupported source ") + dtype_name(x.dtype()));
    }
    return single(std::move(y));
}

}  // namespace

void register_layout(OpTable& t) {
    t[":Transpose"] = transpose;
    t[":Slice"] = slice;
    t[":Pad"] = pad;
    t[":Cast"] = cast;
}

}  // namespace num::ops
