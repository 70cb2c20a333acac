// SPDX-License-Identifier: MIT
// Shape rules for data-movement and reduction operators. Opset differences (ONNX Changelog):
// Squeeze/Unsqueeze/Split/ReduceSum take axes/split as inputs from opset 13, Slice from 10, Pad
// from 11, Clip from 11; Resize takes (roi, scales, sizes) from 11 and (scales) in 10.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "shape_internal.h"

namespace drv::ir::shape {
namespace {

std::vector<int64_t> ints_attr_or_input(const Ctx& c, const char* attr, size_t input, bool* present) {
    if (c.node.attrs.has(attr)) {
        *present = true;
        return attr_ints(c.node.attrs, attr, {});
    }
    if (c.has(input)) {
        *present = true;
        return constant_ints(c.g, c.node.input(input), c.node.label() + " " + attr);
    }
    *present = false;
    return {};
}

void reshape(const Ctx& c) {
    const Value& x = c.in(0);
    auto target = constant_ints(c.g, c.node.input(1), c.node.label() + " shape");
    bool allowzero = attr_int(c.node.attrs, "allowzero", 0) != 0;
    int64_t known = 1, infer = -1;
    for (size_t i = 0; i < target.size(); ++i) {
        if (target[i] == 0 && !allowzero) {
            if (i >= x.shape.size()) c.fail("shape entry 0 at " + std::to_string(i) + " beyond input rank");
            target[i] = x.shape[i];
        }
        if (target[i] == -1) {
            if (infer >= 0) c.fail("more than one -1 in target shape");
            infer = static_cast<int64_t>(i);
        } else if (target[i] < 0) {
            c.fail("invalid target dimension " + std::to_string(target[i]));
        } else if (__builtin_mul_overflow(known, target[i], &known)) {
            // A product past int64 would wrap (to 0 for 2^32 x 2^32 x 4) and pass as an empty tensor.
            c.fail("target shape " + shape_to_string(target) + ": element count overflows 64 bits");
        }
    }
    int64_t total = x.numel();
    if (infer >= 0) {
        if (known == 0 || total % known != 0) c.fail("cannot infer -1: " + std::to_string(total) + " elements");
        target[static_cast<size_t>(infer)] = total / known;
    } else if (known != total) {
        c.fail("target shape " + shape_to_string(target) + " has " + std::to_string(known) + " elements, input '" + x.name + "' " + x.shape_str() + " has " + std::to_string(total));
    }
    c.set(0, x.dtype, target);
}

void flatten(const Ctx& c) {
    const Value& x = c.in(0);
    int64_t r = static_cast<int64_t>(x.shape.size());
    int64_t axis = attr_int(c.node.attrs, "axis", 1);
    if (axis < 0) axis += r;
    if (axis < 0 || axis > r) c.fail("axis out of range");
    int64_t a = 1, b = 1;
    for (int64_t i = 0; i < r; ++i) (i < axis ? a : b) *= x.shape[static_cast<size_t>(i)];
    c.set(0, x.dtype, {a, b});
}

void transpose(const Ctx& c) {
    const Value& x = c.in(0);
    size_t r = x.shape.size();
    std::vector<int64_t> perm(r);
    for (size_t i = 0; i < r; ++i) perm[i] = static_cast<int64_t>(r - 1 - i);
    perm = attr_ints(c.node.attrs, "perm", perm);
    std::vector<int64_t> sorted = perm;
    std::sort(sorted.begin(), sorted.end());
    for (size_t i = 0; i < r; ++i)
        if (sorted.size() != r || sorted[i] != static_cast<int64_t>(i)) c.fail("perm is not a permutation of 0.." + std::to_string(r - 1));
    std::vector<int64_t> out(r);
    for (size_t i = 0; i < r; ++i) out[i] = x.shape[static_cast<size_t>(perm[i])];
    c.set(0, x.dtype, out);
}

void concat_of(const Ctx& c, const std::vector<size_t>& idx) {
    if (idx.empty()) c.fail("needs at least one input");
    const Value& first = c.in(idx[0]);
    int64_t axis = normalize_axis(attr_int(c.node.attrs, "axis", 0), first.shape.size(), c);
    std::vector<int64_t> out = first.shape;
    for (size_t k = 1; k < idx.size(); ++k) {
        const Value& v = c.in(idx[k]);
        if (v.shape.size() != out.size()) c.fail("input '" + v.name + "' rank differs");
        for (size_t d = 0; d < out.size(); ++d)
            if (static_cast<int64_t>(d) != axis && v.shape[d] != out[d]) c.fail("input '" + v.name + "' " + v.shape_str() + " mismatches " + first.shape_str() + " off the concat axis");
        out[static_cast<size_t>(axis)] += v.shape[static_cast<size_t>(axis)];
    }
    c.set(0, first.dtype, out);
}

void concat(const Ctx& c) {
    std::vector<size_t> idx(c.node.inputs.size());
    std::iota(idx.begin(), idx.end(), 0);
    concat_of(c, idx);
}

void qlinear_concat(const Ctx& c) {  // seed 002: Y_scale, Y_zp, then (X, X_scale, X_zp) triples
    std::vector<size_t> idx;
    for (size_t i = 2; i < c.node.inputs.size(); i += 3) idx.push_back(i);
    concat_of(c, idx);
}

void split(const Ctx& c) {
    const Value& x = c.in(0);
    int64_t axis = normalize_axis(attr_int(c.node.attrs, "axis", 0), x.shape.size(), c);
    int64_t dim = x.shape[static_cast<size_t>(axis)];
    bool present = false;
    auto parts = ints_attr_or_input(c, "split", 1, &present);
    size_t n = c.node.outputs.size();
    if (!present) {
        int64_t each = (dim + static_cast<int64_t>(n) - 1) / static_cast<int64_t>(n);
        for (size_t i = 0; i < n; ++i) parts.push_back(std::min(each, dim - each * static_cast<int64_t>(i)));
    }
    if (parts.size() != n || std::accumulate(parts.begin(), parts.end(), int64_t{0}) != dim)
        c.fail("split sizes do not sum to dim " + std::to_string(dim) + " over " + std::to_string(n) + " outputs");
    for (size_t i = 0; i < n; ++i) {
        auto s = x.shape;
        s[static_cast<size_t>(axis)] = parts[i];
        c.set(i, x.dtype, s);
    }
}

void slice(const Ctx& c) {
    const Value& x = c.in(0);
    std::vector<int64_t> starts, ends, axes, steps;
    if (c.node.attrs.has("starts")) {  // opset < 10
        starts = attr_ints(c.node.attrs, "starts", {});
        ends = attr_ints(c.node.attrs, "ends", {});
        axes = attr_ints(c.node.attrs, "axes", {});
    } else {
        starts = constant_ints(c.g, c.node.input(1), c.node.label() + " starts");
        ends = constant_ints(c.g, c.node.input(2), c.node.label() + " ends");
        if (c.has(3)) axes = constant_ints(c.g, c.node.input(3), c.node.label() + " axes");
        if (c.has(4)) steps = constant_ints(c.g, c.node.input(4), c.node.label() + " steps");
    }
    if (axes.empty())
        for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
    if (steps.empty()) steps.assign(starts.size(), 1);
    if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
        c.fail("starts/ends/axes/steps lengths differ");
    auto out = x.shape;
    for (size_t i = 0; i < starts.size(); ++i) {
        size_t a = static_cast<size_t>(normalize_axis(axes[i], x.shape.size(), c));
        int64_t d = x.shape[a], st = steps[i];
        if (st == 0) c.fail("step 0");
        auto clampi = [&](int64_t v, bool is_start) {
            if (v < 0) v += d;
            if (st > 0) return std::clamp<int64_t>(v, 0, d);
            return std::clamp<int64_t>(v, is_start ? 0 : -1, d - 1);
        };
        int64_t s = clampi(starts[i], true), e = clampi(ends[i], false);
        // ceil(|e - s| / |step|) without overflow for steps near INT64_MIN/MAX (issue 23).
        const uint64_t mag = st > 0 ? static_cast<uint64_t>(st) : static_cast<uint64_t>(-(st + 1)) + 1;
        const int64_t span = st > 0 ? e - s : s - e;
        out[a] = span <= 0 ? 0 : static_cast<int64_t>(1 + static_cast<uint64_t>(span - 1) / mag);
    }
    c.set(0, x.dtype, out);
}

void squeeze(const Ctx& c) {
    const Value& x = c.in(0);
    bool present = false;
    auto axes = ints_attr_or_input(c, "axes", 1, &present);
    std::vector<bool> drop(x.shape.size(), false);
    if (!present) {
        for (size_t i = 0; i < x.shape.size(); ++i) drop[i] = x.shape[i] == 1;
    }
    for (int64_t a : axes) {
        size_t k = static_cast<size_t>(normalize_axis(a, x.shape.size(), c));
        if (x.shape[k] != 1) c.fail("cannot squeeze axis " + std::to_string(a) + " of size " + std::to_string(x.shape[k]));
        drop[k] = true;
    }
    std::vector<int64_t> out;
    for (size_t i = 0; i < x.shape.size(); ++i)
        if (!drop[i]) out.push_back(x.shape[i]);
    c.set(0, x.dtype, out);
}

void unsqueeze(const Ctx& c) {
    const Value& x = c.in(0);
    bool present = false;
    auto axes = ints_attr_or_input(c, "axes", 1, &present);
    if (!present) c.fail("axes are required");
    size_t r = x.shape.size() + axes.size();
    std::vector<bool> ins(r, false);
    for (int64_t a : axes) {
        size_t k = static_cast<size_t>(normalize_axis(a, r, c));
        if (ins[k]) c.fail("duplicate axis");
        ins[k] = true;
    }
    std::vector<int64_t> out;
    size_t j = 0;
    for (size_t i = 0; i < r; ++i) out.push_back(ins[i] ? 1 : x.shape[j++]);
    c.set(0, x.dtype, out);
}

void pad(const Ctx& c) {
    const Value& x = c.in(0);
    bool present = false;
    auto pads = ints_attr_or_input(c, "pads", 1, &present);
    size_t r = x.shape.size();
    std::vector<int64_t> axes;
    if (c.has(3)) axes = constant_ints(c.g, c.node.input(3), c.node.label() + " axes");
    else for (size_t i = 0; i < r; ++i) axes.push_back(static_cast<int64_t>(i));
    if (pads.size() != 2 * axes.size()) c.fail("pads has " + std::to_string(pads.size()) + " entries, expected " + std::to_string(2 * axes.size()));
    auto out = x.shape;
    for (size_t i = 0; i < axes.size(); ++i) {
        size_t a = static_cast<size_t>(normalize_axis(axes[i], r, c));
        out[a] += pads[i] + pads[i + axes.size()];
    }
    c.set(0, x.dtype, out);
}

void resize(const Ctx& c) {
    const Value& x = c.in(0);
    std::vector<float> scales;
    std::vector<int64_t> sizes;
    // ONNX Resize / Upsample: mode is one of "nearest", "linear", "cubic" ("bilinear" in Upsample-7).
    const std::string mode = attr_string(c.node.attrs, "mode", "nearest");
    if (mode != "nearest" && mode != "linear" && mode != "cubic" && mode != "bilinear")
        c.fail("mode '" + mode + "' is not an ONNX Resize mode (nearest, linear, cubic)");
    bool v10 = c.node.op_type == "Upsample" || c.g.opset("") < 11;
    size_t scales_idx = v10 ? 1 : 2;
    if (c.node.attrs.has("scales")) {
        auto it = c.node.attrs.all().find("scales");
        if (auto* f = std::get_if<std::vector<float>>(&it->second)) scales = *f;
    } else if (!v10 && c.has(3)) {
        sizes = constant_ints(c.g, c.node.input(3), c.node.label() + " sizes");
    } else if (c.has(scales_idx)) {
        const Value* s = c.g.find_value(c.node.input(scales_idx));
        if (!s || !s->is_constant() || s->data->dtype() != num::DType::F32)
            c.fail("scales must be a constant float tensor");
        scales.assign(s->data->data<float>(), s->data->data<float>() + s->data->numel());
    }
    std::vector<int64_t> out = x.shape;
    if (!sizes.empty()) {
        if (sizes.size() != out.size()) c.fail("sizes rank mismatch");
        out = sizes;
    } else {
        if (scales.size() != out.size()) c.fail("scales (" + std::to_string(scales.size()) + ") do not match input rank " + std::to_string(out.size()));
        for (size_t i = 0; i < out.size(); ++i) {
            // onnxruntime (upsamplebase.h ScalesValidation): a scale must be greater than 0. A NaN,
            // infinite or huge one would leave int64 (the cast is undefined there).
            const double d = std::floor(static_cast<double>(out[i]) * static_cast<double>(scales[i]));
            if (!(scales[i] > 0) || !std::isfinite(d) || d >= 0x1p62)
                c.fail("scales[" + std::to_string(i) + "] = " + std::to_string(scales[i]) + " gives no valid output dim " +
                       "(a scale must be a finite number greater than 0)");
            out[i] = static_cast<int64_t>(d);
        }
    }
    c.set(0, x.dtype, out);
}

void expand(const Ctx& c) {
    auto target = constant_ints(c.g, c.node.input(1), c.node.label() + " shape");
    c.set(0, c.in(0).dtype, broadcast_shapes(c.in(0).shape, target, c.node.label()));
}

void tile(const Ctx& c) {
    auto reps = constant_ints(c.g, c.node.input(1), c.node.label() + " repeats");
    auto out = c.in(0).shape;
    if (reps.size() != out.size()) c.fail("repeats length differs from input rank");
    for (size_t i = 0; i < out.size(); ++i) {
        // ONNX Tile: repeats are non-negative; the product must stay a representable dim.
        if (reps[i] < 0) c.fail("repeats[" + std::to_string(i) + "] = " + std::to_string(reps[i]) + " is negative");
        if (out[i] >= 0 && __builtin_mul_overflow(out[i], reps[i], &out[i]))
            c.fail("output dim " + std::to_string(i) + " overflows int64 (repeats " + std::to_string(reps[i]) + ")");
    }
    c.set(0, c.in(0).dtype, out);
}

void gather(const Ctx& c) {
    const Value& x = c.in(0);
    const Value& idx = c.in(1);
    size_t a = static_cast<size_t>(normalize_axis(attr_int(c.node.attrs, "axis", 0), x.shape.size(), c));
    // ONNX Gather: "all index values are expected to be within bounds [-s, s-1] along axis of size s;
    // it is an error if any of the index values are out of bounds" - known when the indices are constant.
    if (idx.is_constant() && (idx.data->dtype() == num::DType::I64 || idx.data->dtype() == num::DType::I32)) {
        const int64_t s = x.shape[a];
        for (int64_t j : constant_ints(c.g, idx.name, c.node.label()))
            if (j < -s || j >= s)
                c.fail("index " + std::to_string(j) + " out of bounds [" + std::to_string(-s) + ", " + std::to_string(s - 1) +
                       "] along axis " + std::to_string(a) + " of '" + x.name + "' " + x.shape_str());
    }
    std::vector<int64_t> out(x.shape.begin(), x.shape.begin() + static_cast<long>(a));
    out.insert(out.end(), idx.shape.begin(), idx.shape.end());
    out.insert(out.end(), x.shape.begin() + static_cast<long>(a) + 1, x.shape.end());
    c.set(0, x.dtype, out);
}

void gather_elements(const Ctx& c) { c.set(0, c.in(0).dtype, c.in(1).shape); }

void gather_nd(const Ctx& c) {
    const Value& x = c.in(0);
    const Value& idx = c.in(1);
    int64_t b = attr_int(c.node.attrs, "batch_dims", 0);
    if (idx.shape.empty()) c.fail("indices must have rank >= 1");
    // ONNX GatherND: 0 <= batch_dims < min(rank(data), rank(indices)).
    if (b < 0 || b >= static_cast<int64_t>(std::min(x.shape.size(), idx.shape.size())))
        c.fail("batch_dims " + std::to_string(b) + " out of range [0, min(rank(data), rank(indices)))");
    int64_t last = idx.shape.back();
    if (last < 1 || b + last > static_cast<int64_t>(x.shape.size())) c.fail("indices last dim out of range");
    std::vector<int64_t> out(idx.shape.begin(), idx.shape.end() - 1);
    out.insert(out.end(), x.shape.begin() + b + last, x.shape.end());
    c.set(0, x.dtype, out);
}

void constant_of_shape(const Ctx& c) {
    auto s = constant_ints(c.g, c.node.input(0), c.node.label() + " shape");
    num::DType dt = num::DType::F32;
    auto it = c.node.attrs.all().find("value");
    if (it != c.node.attrs.all().end())
        if (auto* t = std::get_if<num::Tensor>(&it->second)) dt = t->dtype();
    c.set(0, dt, s);
}

void depth_space(const Ctx& c) {
    const Value& x = c.in(0);
    int64_t b = attr_int(c.node.attrs, "blocksize", 0);
    if (x.shape.size() != 4 || b <= 0) c.fail("needs a 4-D input and positive blocksize");
    auto s = x.shape;
    // blocksize^2 must not overflow (2^32 squared is 0 in int64: a division by zero); a block larger
    // than the dims it divides leaves no output anyway.
    if (b > (int64_t{1} << 31)) c.fail("blocksize " + std::to_string(b) + " is larger than 2^31");
    if (c.node.op_type == "DepthToSpace") {
        if (s[1] % (b * b)) c.fail("channels not divisible by blocksize^2");
        c.set(0, x.dtype, {s[0], s[1] / (b * b), s[2] * b, s[3] * b});
    } else {
        if (s[2] % b || s[3] % b) c.fail("spatial dims not divisible by blocksize");
        c.set(0, x.dtype, {s[0], s[1] * b * b, s[2] / b, s[3] / b});
    }
}

std::vector<int64_t> reduced(const Ctx& c, const Value& x, std::vector<int64_t> axes, bool keep, bool noop_empty) {
    std::vector<bool> red(x.shape.size(), axes.empty() && !noop_empty);
    for (int64_t a : axes) red[static_cast<size_t>(normalize_axis(a, x.shape.size(), c))] = true;
    std::vector<int64_t> out;
    for (size_t i = 0; i < x.shape.size(); ++i) {
        if (!red[i]) out.push_back(x.shape[i]);
        else if (keep) out.push_back(1);
    }
    return out;
}

void reduce(const Ctx& c) {
    const Value& x = c.in(0);
    bool present = false;
    // com.microsoft reductions (seed 002) take axes only as an attribute; input 1 is a scale.
    auto axes = c.node.domain.empty() ? ints_attr_or_input(c, "axes", 1, &present)
                                      : attr_ints(c.node.attrs, "axes", {});
    bool keep = attr_int(c.node.attrs, "keepdims", 1) != 0;
    bool noop = attr_int(c.node.attrs, "noop_with_empty_axes", 0) != 0;
    num::DType dt = c.node.op_type == "ReduceSumInteger" ? num::DType::I32 : x.dtype;
    c.set(0, dt, reduced(c, x, axes, keep, noop));
}

void arg_reduce(const Ctx& c) {
    const Value& x = c.in(0);
    int64_t a = attr_int(c.node.attrs, "axis", 0);
    c.set(0, num::DType::I64, reduced(c, x, {a}, attr_int(c.node.attrs, "keepdims", 1) != 0, false));
}

void topk(const Ctx& c) {
    const Value& x = c.in(0);
    int64_t k = c.has(1) ? constant_ints(c.g, c.node.input(1), c.node.label() + " K").at(0) : attr_int(c.node.attrs, "k", -1);
    size_t a = static_cast<size_t>(normalize_axis(attr_int(c.node.attrs, "axis", -1), x.shape.size(), c));
    if (k < 0 || k > x.shape[a]) c.fail("K=" + std::to_string(k) + " out of range");
    auto out = x.shape;
    out[a] = k;
    c.set(0, x.dtype, out);
    c.set(1, num::DType::I64, out);
}

void one_hot(const Ctx& c) {
    const Value& idx = c.in(0);
    int64_t depth = constant_ints(c.g, c.node.input(1), c.node.label() + " depth").at(0);
    auto out = idx.shape;
    size_t r = out.size() + 1;
    size_t a = static_cast<size_t>(normalize_axis(attr_int(c.node.attrs, "axis", -1), r, c));
    out.insert(out.begin() + static_cast<long>(a), depth);
    c.set(0, c.in(2).dtype, out);
}

void range(const Ctx& c) {
    const Value* s = c.g.find_value(c.node.input(0));
    if (!s || !s->is_constant()) c.fail("data-dependent output shape (start/limit/delta must be constant)");
    auto st = constant_ints(c.g, c.node.input(0), "start"), li = constant_ints(c.g, c.node.input(1), "limit"),
         de = constant_ints(c.g, c.node.input(2), "delta");
    if (de.at(0) == 0) c.fail("delta 0");
    int64_t n = std::max<int64_t>(0, (li.at(0) - st.at(0) + de[0] - (de[0] > 0 ? 1 : -1)) / de[0]);
    c.set(0, s->dtype, {n});
}

void data_dependent(const Ctx& c) {
    c.fail("output shape depends on input values; not supported for a static graph");
}

}  // namespace

void add_tensor_rules(std::map<std::string, Rule>& t) {
    t[":Reshape"] = reshape;
    t[":Flatten"] = flatten;
    t[":Transpose"] = transpose;
    t[":Concat"] = concat;
    t["com.microsoft:QLinearConcat"] = qlinear_concat;
    t[":Split"] = split;
    t[":Slice"] = slice;
    t[":Squeeze"] = squeeze;
    t[":Unsqueeze"] = unsqueeze;
    t[":Pad"] = pad;
    t[":Resize"] = resize;
    t[":Upsample"] = resize;
    t[":Expand"] = expand;
    t[":Tile"] = tile;
    t[":Gather"] = gather;
    t[":GatherElements"] = gather_elements;
    t[":GatherND"] = gather_nd;
    t[":ConstantOfShape"] = constant_of_shape;
    t[":DepthToSpace"] = depth_space;
    t[":SpaceToDepth"] = depth_space;
    for (const char* op : {"ReduceMax", "ReduceMin", "ReduceMean", "ReduceSum", "ReduceProd", "ReduceL1", "ReduceL2",
                           "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"})
        t[std::string(":") + op] = reduce;
    t["com.microsoft:ReduceSumInteger"] = reduce;
    t["com.microsoft:QLinearReduceMean"] = reduce;
    t[":ArgMax"] = arg_reduce;
    t[":ArgMin"] = arg_reduce;
    t[":TopK"] = topk;
    t[":OneHot"] = one_hot;
    t[":Range"] = range;
    t[":NonZero"] = data_dependent;
    t[":Unique"] = data_dependent;
}

}  // namespace drv::ir::shape
