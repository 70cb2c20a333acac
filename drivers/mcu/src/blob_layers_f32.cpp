// SPDX-License-Identifier: MIT
// Graph -> MCU blob: float layers and data movement (conv, gemm, activations, softmax, shape ops, BN).
#include <array>

#include "blob_converter.h"

namespace mcu::detail {

void Converter::conv_f32(const Node& n) {
    const uint32_t x = act(n.input(0)), y = act(n.outputs.at(0));
    const num::Tensor& w = cval(n, 1);
    if (w.dtype() != num::DType::F32 || w.rank() != 4) throw ConvertError(n.label() + ": weights must be float [M, C/g, kh, kw]");
    const int64_t M = w.dim(0), Cg = w.dim(1), kh = w.dim(2), kw = w.dim(3);
    const int64_t group = drv::ir::attr_int(n.attrs, "group", 1), cin = t_[x].rec.dims[3];
    const bool dw = group > 1 && group == cin && Cg == 1 && M % cin == 0;
    if (group != 1 && !dw) throw ConvertError(n.label() + ": grouped convolution is neither plain nor depthwise");
    const Geo geo = conv_geo(n, kh, kw);
    std::vector<float> wk(size_t(M * Cg * kh * kw));
    for (int64_t o = 0; o < M; ++o)
        for (int64_t i = 0; i < Cg; ++i)
            for (int64_t ky = 0; ky < kh; ++ky)
                for (int64_t kx = 0; kx < kw; ++kx) {
                    const float v = w.data<float>()[((o * Cg + i) * kh + ky) * kw + kx];
                    if (dw) wk[size_t((ky * kw + kx) * M + o)] = v;
                    else wk[size_t(((o * kh + ky) * kw + kx) * Cg + i)] = v;
                }
    const uint32_t wt = add_const(MK_DT_F32, as_bytes(wk), {int32_t(M), int32_t(kh), int32_t(kw), int32_t(Cg)});
    std::vector<float> bias(size_t(M), 0.0f);
    if (n.has_input(2)) {
        const num::Tensor& b = cval(n, 2);
        std::copy(b.data<float>(), b.data<float>() + M, bias.begin());
    }
    const uint32_t bt = add_const(MK_DT_F32, as_bytes(bias), {1, 1, 1, int32_t(M)});
    const auto& od = t_[y].rec.dims;
    mk_blob_layer& l = layer(n, dw ? MK_OP_DWCONV_F32 : MK_OP_CONV2D_F32, {x, wt, bt}, y, dw ? "dwconv_f32" : "conv2d_f32",
                             uint64_t(od[0]) * od[1] * od[2] * od[3] * uint64_t(kh * kw * Cg));
    const int32_t p[10] = {geo.sh, geo.sw, geo.dh, geo.dw, geo.pt, geo.pl, geo.kh, geo.kw, f2i(-3.4e38f), f2i(3.4e38f)};
    std::copy(p, p + 10, l.p);
}

void Converter::gemm_f32(const Node& n) {
    const bool gemm = n.op_type == "Gemm";
    const float beta = drv::ir::attr_float(n.attrs, "beta", 1.0f);
    if (gemm && (drv::ir::attr_int(n.attrs, "transA", 0) != 0 || drv::ir::attr_float(n.attrs, "alpha", 1.0f) != 1.0f ||
                 (beta != 1.0f && beta != 0.0f)))
        throw ConvertError(n.label() + ": no MCU kernel yet for Gemm with transA = 1, alpha != 1 or beta outside {0, 1}");
    const uint32_t x = act(n.input(0)), y = act(n.outputs.at(0));
    const num::Tensor& w = cval(n, 1);
    if (w.dtype() != num::DType::F32 || w.rank() != 2) throw ConvertError(n.label() + ": B must be a constant float matrix");
    const bool transB = gemm && drv::ir::attr_int(n.attrs, "transB", 0) != 0;
    const int64_t N = transB ? w.dim(0) : w.dim(1), K = transB ? w.dim(1) : w.dim(0);
    std::vector<float> wk(size_t(N * K));
    for (int64_t j = 0; j < N; ++j)
        for (int64_t k = 0; k < K; ++k) wk[size_t(j * K + k)] = transB ? w.data<float>()[j * K + k] : w.data<float>()[k * N + j];
    std::vector<uint32_t> ins{x, add_const(MK_DT_F32, as_bytes(wk), {1, 1, int32_t(N), int32_t(K)})};
    if (gemm && n.has_input(2) && beta == 1.0f) {  // beta = 0: ONNX discards C
        const num::Tensor& b = cval(n, 2);
        if (int64_t(b.numel()) != N) throw ConvertError(n.label() + ": only a per-output bias C[N] is supported");
        ins.push_back(add_const(MK_DT_F32, std::vector<uint8_t>(b.raw(), b.raw() + b.nbytes()), {1, 1, 1, int32_t(N)}));
    }
    mk_blob_layer& l = layer(n, MK_OP_FC_F32, ins, y, "fully_connected_f32", t_[y].rec.bytes / 4 * uint64_t(K));
    l.p[0] = f2i(-3.4e38f);
    l.p[1] = f2i(3.4e38f);
}

void Converter::unary_f32(const Node& n, int op, float alpha, float beta) {
    const uint32_t x = act(n.input(0)), y = act(n.outputs.at(0));
    if (t_[x].rec.dtype != MK_DT_F32) throw ConvertError(n.label() + ": int8 " + n.op_type + " outside a QLinear op is not supported");
    mk_blob_layer& l = layer(n, MK_OP_UNARY_F32, {x}, y, "unary_f32", t_[y].rec.bytes / 4);
    l.p[0] = op;
    l.p[1] = f2i(alpha);
    l.p[2] = f2i(beta);
}

void Converter::binary_f32(const Node& n, int op) {
    const uint32_t a = act(n.input(0)), b = act(n.input(1)), y = act(n.outputs.at(0));
    if (t_[a].rec.dtype != MK_DT_F32 || t_[b].rec.dtype != MK_DT_F32) throw ConvertError(n.label() + ": float inputs expected");
    mk_blob_layer& l = layer(n, MK_OP_BINARY_F32, {a, b}, y, "binary_f32", t_[y].rec.bytes / 4);
    l.p[0] = op;
    bcast(l, n.input(0), n.input(1), n.outputs.at(0));
}

void Converter::softmax(const Node& n, bool log) {
    const Value& v = g_.value(n.input(0), n.label());
    const int64_t axis = drv::ir::attr_int(n.attrs, "axis", -1);
    if (axis != -1 && axis != int64_t(v.shape.size()) - 1) throw ConvertError(n.label() + ": softmax over the last axis only (MindSpore Lite Micro v106 spec Softmax)");
    if (v.shape.size() == 4 && v.shape[2] * v.shape[3] > 1) throw ConvertError(n.label() + ": softmax over W of an NCHW tensor is not supported");
    const uint32_t x = act(n.input(0)), y = act(n.outputs.at(0));
    if (t_[x].rec.dtype != MK_DT_F32) throw ConvertError(n.label() + ": int8 softmax outside QDQ is not supported");
    mk_blob_layer& l = layer(n, MK_OP_SOFTMAX_F32, {x}, y, "softmax_f32", t_[y].rec.bytes / 4);
    l.p[0] = log ? 1 : 0;
}

void Converter::concat(const Node& n) {
    const Value& out = g_.value(n.outputs.at(0), n.label());
    int64_t axis = drv::ir::attr_int(n.attrs, "axis", 1);
    const int64_t r = int64_t(out.shape.size());
    if (axis < 0) axis += r;
    if (n.inputs.size() > MK_BLOB_MAX_IN) throw ConvertError(n.label() + ": more than 4 inputs");
    // Axis in the stored layout: NCHW axis 1 (C) is NHWC axis 3, H is 1, W is 2.
    int64_t saxis = axis;
    std::vector<int32_t> od = dims4(out.shape);
    if (r == 4) saxis = axis == 1 ? 3 : (axis == 2 ? 1 : (axis == 3 ? 2 : 0));
    else saxis = axis + (4 - r);
    const uint32_t y = act(n.outputs.at(0));
    std::vector<uint32_t> ins;
    int32_t outer = 1, inner = 1;
    for (int64_t i = 0; i < saxis; ++i) outer *= od[size_t(i)];
    for (int64_t i = saxis + 1; i < 4; ++i) inner *= od[size_t(i)];
    for (const auto& in : n.inputs) {
        const uint32_t t = act(in);
        if (t_[t].rec.dtype != t_[y].rec.dtype) throw ConvertError(n.label() + ": mixed dtypes");
        if (t_[t].rec.dtype == MK_DT_S8 && (t_[t].rec.scale != t_[y].rec.scale || t_[t].rec.zero_point != t_[y].rec.zero_point))
            throw ConvertError(n.label() + ": int8 concat needs equal quantization on all inputs");
        ins.push_back(t);
    }
    mk_blob_layer& l = layer(n, MK_OP_CONCAT, ins, y, "concat");
    l.p[0] = outer;
    l.p[1] = inner;
    l.p[2] = int32_t(mk_elem(t_[y].rec.dtype));
    for (size_t k = 0; k < ins.size(); ++k) l.p[3 + k] = t_[ins[k]].rec.dims[saxis];
}

void Converter::argmax(const Node& n) {
    const Value& v = g_.value(n.input(0), n.label());
    const int64_t axis = drv::ir::attr_int(n.attrs, "axis", 0);
    if (!(axis == -1 || axis == int64_t(v.shape.size()) - 1) || v.shape.size() == 4)
        throw ConvertError(n.label() + ": " + n.op_type + " over the last axis of a rank <= 3 tensor only");
    if (drv::ir::attr_int(n.attrs, "select_last_index", 0) != 0) throw ConvertError(n.label() + ": select_last_index=1 is not supported");
    const uint32_t x = act(n.input(0)), y = act(n.outputs.at(0));
    const bool mn = n.op_type == "ArgMin";
    layer(n, mn ? MK_OP_ARGMIN : MK_OP_ARGMAX, {x}, y, mn ? "argmin" : "argmax");
}

int stored_axis(int64_t a, size_t r);

/// ONNX Gather of constant indices: mk_gather over the stored axis. 1-D indices keep the rank (and the
/// NHWC storage of a rank-4 tensor); other index ranks only where input and output are stored row-major
/// (rank <= 3), where the flat result is the same.
void Converter::gather(const Node& n) {
    const Value& xv = g_.value(n.input(0), n.label());
    const Value& iv = g_.value(n.input(1), n.label());
    const Value& ov = g_.value(n.outputs.at(0), n.label());
    if (!iv.is_constant()) throw ConvertError(n.label() + ": no MCU kernel yet for Gather of runtime indices");
    const size_t r = xv.shape.size();
    if (r == 0 || r > 4 || (iv.data->rank() != 1 && (r == 4 || ov.shape.size() > 3)))
        throw ConvertError(n.label() + ": no MCU kernel yet for this Gather (1-D indices, or tensors of rank <= 3)");
    int64_t axis = drv::ir::attr_int(n.attrs, "axis", 0);
    if (axis < 0) axis += int64_t(r);
    if (axis < 0 || axis >= int64_t(r)) throw ConvertError(n.label() + ": axis out of range");
    const uint32_t x = act(n.input(0)), y = act(n.outputs.at(0));
    t_[y].rec.scale = t_[x].rec.scale;
    t_[y].rec.zero_point = t_[x].rec.zero_point;
    const int sa = stored_axis(axis, r);
    const std::array<int32_t, 4> d{t_[x].rec.dims[0], t_[x].rec.dims[1], t_[x].rec.dims[2], t_[x].rec.dims[3]};  // add_const grows t_
    int32_t outer = 1, inner = 1;
    for (int j = 0; j < sa; ++j) outer *= d[j];
    for (int j = sa + 1; j < 4; ++j) inner *= d[j];
    std::vector<int32_t> idx;
    for (int64_t k : const_ints(n, 1)) {
        if (k < -int64_t(d[sa]) || k >= d[sa]) throw ConvertError(n.label() + ": index " + std::to_string(k) + " out of range");
        idx.push_back(int32_t(k < 0 ? k + d[sa] : k));
    }
    if (idx.empty() || uint64_t(outer) * idx.size() * uint64_t(inner) != t_[y].rec.bytes / mk_elem(t_[y].rec.dtype))
        throw ConvertError(n.label() + ": output size differs from the gather's");
    const uint32_t it = add_const(MK_DT_S32, as_bytes(idx), {1, 1, 1, int32_t(idx.size())});
    mk_blob_layer& l = layer(n, MK_OP_GATHER, {x, it}, y, "gather");
    const int32_t p[5] = {outer, d[sa], inner, int32_t(idx.size()), int32_t(mk_elem(t_[x].rec.dtype))};
    std::copy(p, p + 5, l.p);
}

/// ONNX Tile by constant repeats (rank <= 4, the stored axes).
void Converter::tile(const Node& n) {
    const Value& xv = g_.value(n.input(0), n.label());
    const size_t r = xv.shape.size();
    const std::vector<int64_t> rep = const_ints(n, 1);
    if (rep.size() != r || r == 0 || r > 4) throw ConvertError(n.label() + ": repeats must have one entry per axis (rank <= 4)");
    const uint32_t x = act(n.input(0)), y = act(n.outputs.at(0));
    t_[y].rec.scale = t_[x].rec.scale;
    t_[y].rec.zero_point = t_[x].rec.zero_point;
    mk_blob_layer& l = layer(n, MK_OP_TILE, {x}, y, "tile");
    for (int j = 0; j < 4; ++j) l.p[j] = 1;
    for (size_t a = 0; a < r; ++a) {
        if (rep[a] <= 0) throw ConvertError(n.label() + ": no MCU kernel yet for Tile with a repeat <= 0");
        l.p[stored_axis(int64_t(a), r)] = int32_t(rep[a]);
    }
    for (int j = 0; j < 4; ++j)
        if (int64_t(t_[x].rec.dims[j]) * l.p[j] != t_[y].rec.dims[j]) throw ConvertError(n.label() + ": output shape differs from the tile's");
    l.p[4] = int32_t(mk_elem(t_[x].rec.dtype));
}

int stored_axis(int64_t a, size_t r) {
    if (r == 4) {
        static const int kMap[4] = {0, 3, 1, 2};
        return kMap[a];
    }
    return int(a + int64_t(4 - r));
}

std::vector<int64_t> Converter::const_ints(const Node& n, size_t i) const {
    const num::Tensor& t = cval(n, i);
    std::vector<int64_t> v(t.numel());
    for (size_t k = 0; k < v.size(); ++k)
        v[k] = t.dtype() == num::DType::I64 ? t.data<int64_t>()[k] : t.data<int32_t>()[k];
    return v;
}

void Converter::transpose(const Node& n) {
    const Value& in = g_.value(n.input(0), n.label());
    const size_t r = in.shape.size();
    std::vector<int64_t> perm = drv::ir::attr_ints(n.attrs, "perm", {});
    if (perm.empty())
        for (size_t i = 0; i < r; ++i) perm.push_back(int64_t(r - 1 - i));
    const Value& outv = g_.value(n.outputs.at(0), n.label());
    if (r > 4 || outv.shape.size() != r) throw ConvertError(n.label() + ": rank > 4 transpose");
    const uint32_t x = act(n.input(0)), y = act(n.outputs.at(0));
    t_[y].rec.scale = t_[x].rec.scale;
    t_[y].rec.zero_point = t_[x].rec.zero_point;
    // out_stored[j] = in_stored[q[j]]: the output's stored axis j holds logical axis perm[logical(j)].
    int32_t q[4] = {0, 1, 2, 3};
    for (int j = 0; j < 4; ++j) {
        int64_t logical_out = -1;
        for (size_t a = 0; a < r; ++a)
            if (stored_axis(int64_t(a), r) == j) logical_out = int64_t(a);
        q[j] = logical_out < 0 ? j : stored_axis(perm[size_t(logical_out)], r);
    }
    mk_blob_layer& l = layer(n, MK_OP_TRANSPOSE, {x}, y, "transpose");
    for (int j = 0; j < 4; ++j) l.p[j] = q[j];
    l.p[4] = int32_t(mk_elem(t_[x].rec.dtype));
}

void Converter::pad(const Node& n) {
    const Value& in = g_.value(n.input(0), n.label());
    const size_t r = in.shape.size();
    if (drv::ir::attr_string(n.attrs, "mode", "constant") != "constant") throw ConvertError(n.label() + ": only constant padding");
    const std::vector<int64_t> pads = n.has_input(1) ? const_ints(n, 1) : drv::ir::attr_ints(n.attrs, "pads", {});
    if (pads.size() != 2 * r || (n.has_input(3) && !n.input(3).empty())) throw ConvertError(n.label() + ": pads must cover every axis (no 'axes' input)");
    const uint32_t x = act(n.input(0)), y = act(n.outputs.at(0));
    t_[y].rec.scale = t_[x].rec.scale;
    t_[y].rec.zero_point = t_[x].rec.zero_point;
    std::vector<uint8_t> value(mk_elem(t_[x].rec.dtype), 0);
    if (n.has_input(2)) {
        const num::Tensor& v = cval(n, 2);
        std::memcpy(value.data(), v.raw(), std::min(value.size(), v.nbytes()));
    }
    mk_blob_layer& l = layer(n, MK_OP_PAD, {x, add_const(t_[x].rec.dtype, value, {1, 1, 1, 1})}, y, "pad");
    for (size_t a = 0; a < r; ++a) {
        if (pads[a] < 0 || pads[a + r] < 0) throw ConvertError(n.label() + ": negative pads are not supported");
        l.p[stored_axis(int64_t(a), r)] = int32_t(pads[a]);
        l.p[4 + stored_axis(int64_t(a), r)] = int32_t(pads[a + r]);
    }
    l.p[8] = int32_t(mk_elem(t_[x].rec.dtype));
}

void Converter::slice(const Node& n) {
    const Value& in = g_.value(n.input(0), n.label());
    const size_t r = in.shape.size();
    const std::vector<int64_t> starts = const_ints(n, 1), ends = const_ints(n, 2);
    std::vector<int64_t> axes = n.has_input(3) ? const_ints(n, 3) : std::vector<int64_t>();
    std::vector<int64_t> steps = n.has_input(4) ? const_ints(n, 4) : std::vector<int64_t>(starts.size(), 1);
    if (axes.empty())
        for (size_t i = 0; i < starts.size(); ++i) axes.push_back(int64_t(i));
    const uint32_t x = act(n.input(0)), y = act(n.outputs.at(0));
    t_[y].rec.scale = t_[x].rec.scale;
    t_[y].rec.zero_point = t_[x].rec.zero_point;
    mk_blob_layer& l = layer(n, MK_OP_SLICE, {x}, y, "slice");
    for (int j = 0; j < 4; ++j) {
        l.p[j] = 0;      // begin
        l.p[4 + j] = 1;  // step
    }
    for (size_t k = 0; k < axes.size(); ++k) {
        const int64_t a = axes[k] < 0 ? axes[k] + int64_t(r) : axes[k];
        const int64_t dim = in.shape[size_t(a)], st = steps[k];
        if (st == 0) throw ConvertError(n.label() + ": step 0");
        int64_t b = starts[k] < 0 ? starts[k] + dim : starts[k];
        b = st > 0 ? std::clamp<int64_t>(b, 0, dim) : std::clamp<int64_t>(b, 0, dim - 1);
        const int j = stored_axis(a, r);
        l.p[j] = int32_t(b);
        l.p[4 + j] = int32_t(st);
    }
    (void)ends;  // the output shape (shape inference) fixes the element count per axis
}

void Converter::resize(const Node& n) {
    const Value& in = g_.value(n.input(0), n.label());
    const Value& outv = g_.value(n.outputs.at(0), n.label());
    if (in.shape.size() != 4 || in.shape[0] != outv.shape[0] || in.shape[1] != outv.shape[1])
        throw ConvertError(n.label() + ": Resize of H/W of a 4-D tensor only (MindSpore Lite Micro v106 spec: N/C scale 1)");
    const std::string mode = drv::ir::attr_string(n.attrs, "mode", "nearest");
    const std::string ct = drv::ir::attr_string(n.attrs, "coordinate_transformation_mode", "half_pixel");
    const std::string nm = drv::ir::attr_string(n.attrs, "nearest_mode", "round_prefer_floor");
    if (mode != "nearest" && mode != "linear") throw ConvertError(n.label() + ": mode " + mode + " not supported (MindSpore Lite Micro v106 spec: nearest, linear)");
    if (mode == "nearest" && nm != "round_prefer_floor" && nm != "round_prefer_ceil" && nm != "floor")
        throw ConvertError(n.label() + ": no MCU kernel yet for nearest_mode " + nm + " (MindSpore Lite Micro v106 spec: round_prefer_floor, round_prefer_ceil, floor)");
    const int coord = ct == "half_pixel" ? 0 : ct == "align_corners" ? 1 : ct == "asymmetric" ? 2 : -1;
    if (coord < 0) throw ConvertError(n.label() + ": coordinate_transformation_mode " + ct + " not supported");
    const uint32_t x = act(n.input(0)), y = act(n.outputs.at(0));
    if (t_[x].rec.dtype != MK_DT_F32) throw ConvertError(n.label() + ": int8 Resize is not supported (MindSpore Lite Micro v106 spec: int8 without scales)");
    mk_blob_layer& l = layer(n, MK_OP_RESIZE_F32, {x}, y, "resize_f32", t_[y].rec.bytes / 4);
    l.p[0] = mode == "linear" ? 1 : nm == "round_prefer_ceil" ? 2 : nm == "floor" ? 3 : 0;
    l.p[1] = coord;
}

void Converter::reduce(const Node& n, int op) {
    const Value& in = g_.value(n.input(0), n.label());
    const size_t r = in.shape.size();
    std::vector<int64_t> axes = n.has_input(1) ? const_ints(n, 1) : drv::ir::attr_ints(n.attrs, "axes", {});
    if (axes.empty()) throw ConvertError(n.label() + ": empty axes (reduce all) is not supported (MindSpore Lite Micro v106 spec)");
    std::vector<int> st;
    for (int64_t a : axes) st.push_back(stored_axis(a < 0 ? a + int64_t(r) : a, r));
    std::sort(st.begin(), st.end());
    for (size_t k = 1; k < st.size(); ++k)
        if (st[k] != st[k - 1] + 1) throw ConvertError(n.label() + ": reduced axes must be adjacent in the NHWC layout");
    const uint32_t x = act(n.input(0)), y = act(n.outputs.at(0));
    if (t_[x].rec.dtype != MK_DT_F32) throw ConvertError(n.label() + ": int8 reductions outside QLinear ops are not supported");
    const auto& d = t_[x].rec.dims;
    int32_t outer = 1, axis = 1, inner = 1;
    for (int j = 0; j < 4; ++j) (j < st.front() ? outer : j > st.back() ? inner : axis) *= d[j];
    mk_blob_layer& l = layer(n, MK_OP_REDUCE_F32, {x}, y, "reduce_f32", t_[x].rec.bytes / 4);
    l.p[0] = op;
    l.p[1] = outer;
    l.p[2] = axis;
    l.p[3] = inner;
}

void Converter::gap_f32(const Node& n) {
    const uint32_t x = act(n.input(0)), y = act(n.outputs.at(0));
    if (t_[x].rec.dtype != MK_DT_F32) throw ConvertError(n.label() + ": float input expected");
    const auto& d = t_[x].rec.dims;
    mk_blob_layer& l = layer(n, MK_OP_REDUCE_F32, {x}, y, "reduce_f32", t_[x].rec.bytes / 4);
    l.p[0] = MK_RED_MEAN;
    l.p[1] = d[0];
    l.p[2] = d[1] * d[2];
    l.p[3] = d[3];
}

uint32_t Converter::scratch_f32(uint32_t floats) {
    Tens t;
    t.rec.dtype = MK_DT_F32;
    t.rec.storage = MK_ST_ARENA;
    t.rec.bytes = floats * 4u;
    t.rec.dims[0] = t.rec.dims[1] = t.rec.dims[2] = 1;
    t.rec.dims[3] = int32_t(floats);
    t_.push_back(std::move(t));
    return uint32_t(t_.size() - 1);
}

// Inference BatchNormalization folded at conversion time into y = x * a + b per channel
// (a = gamma / sqrt(var + eps), b = beta - mean * a, in double), run as two broadcast fp32 layers.
void Converter::batchnorm(const Node& n) {
    const Value& xv = g_.value(n.input(0), n.label());
    if (xv.shape.size() != 4 && xv.shape.size() != 2) throw ConvertError(n.label() + ": BatchNormalization on NCHW or NC only");
    const uint32_t x = act(n.input(0)), y = act(n.outputs.at(0));
    if (t_[x].rec.dtype != MK_DT_F32) throw ConvertError(n.label() + ": float input expected");
    const int64_t C = xv.shape[1];
    const float eps = drv::ir::attr_float(n.attrs, "epsilon", 1e-5f);
    const num::Tensor &g = cval(n, 1), &bt = cval(n, 2), &mu = cval(n, 3), &var = cval(n, 4);
    for (const num::Tensor* p : {&g, &bt, &mu, &var})  // issue 23: these were read past their end
        if (p->dtype() != num::DType::F32 || int64_t(p->numel()) != C)
            throw ConvertError(n.label() + ": scale, B, mean and var must be float32[" + std::to_string(C) + "], got " +
                               num::dtype_name(p->dtype()) + " " + p->shape_str());
    std::vector<float> a(static_cast<size_t>(C)), b(static_cast<size_t>(C));
    for (int64_t c = 0; c < C; ++c) {
        const double ac = double(g.data<float>()[c]) / std::sqrt(double(var.data<float>()[c]) + double(eps));
        a[size_t(c)] = float(ac);
        b[size_t(c)] = float(double(bt.data<float>()[c]) - double(mu.data<float>()[c]) * ac);
    }
    const uint32_t at = add_const(MK_DT_F32, as_bytes(a), {1, 1, 1, int32_t(C)});
    const uint32_t bt_i = add_const(MK_DT_F32, as_bytes(b), {1, 1, 1, int32_t(C)});
    Tens tmp;
    tmp.rec = t_[y].rec;
    tmp.rec.storage = MK_ST_ARENA;
    t_.push_back(std::move(tmp));
    const uint32_t mid = uint32_t(t_.size() - 1);
    auto strides = [&](mk_blob_layer& l) {
        const auto& d = t_[y].rec.dims;
        const int32_t nat[4] = {d[1] * d[2] * d[3], d[2] * d[3], d[3], 1};
        for (int i = 0; i < 4; ++i) {
            l.p[5 + i] = nat[i];
            l.p[9 + i] = i == 3 ? 1 : 0;
        }
    };
    mk_blob_layer& l1 = layer(n, MK_OP_BINARY_F32, {x, at}, mid, "binary_f32", t_[y].rec.bytes / 4);
    l1.p[0] = MK_BIN_MUL;
    strides(l1);
    mk_blob_layer& l2 = layer(n, MK_OP_BINARY_F32, {mid, bt_i}, y, "binary_f32", t_[y].rec.bytes / 4);
    l2.p[0] = MK_BIN_ADD;
    strides(l2);
}


}  // namespace mcu::detail
