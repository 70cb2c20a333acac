// SPDX-License-Identifier: MIT
// Graph -> MCU blob: float layers and data movement (conv, gemm, activations, softmax, shape ops, GRU, BN).
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
    if (axis != -1 && axis != int64_t(v.shape.size()) - 1) throw ConvertError(n.label() + ": softmax over the last axis only (seed 000 Softmax)");
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
        throw ConvertError(n.label() + ": ArgMax over the last axis of a rank <= 3 tensor only");
    if (drv::ir::attr_int(n.attrs, "select_last_index", 0) != 0) throw ConvertError(n.label() + ": select_last_index=1 is not supported");
    const uint32_t x = act(n.input(0)), y = act(n.outputs.at(0));
    layer(n, MK_OP_ARGMAX, {x}, y, "argmax");
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
        throw ConvertError(n.label() + ": Resize of H/W of a 4-D tensor only (seed 000: N/C scale 1)");
    const std::string mode = drv::ir::attr_string(n.attrs, "mode", "nearest");
    const std::string ct = drv::ir::attr_string(n.attrs, "coordinate_transformation_mode", "half_pixel");
    const std::string nm = drv::ir::attr_string(n.attrs, "nearest_mode", "round_prefer_floor");
    if (mode != "nearest" && mode != "linear") throw ConvertError(n.label() + ": mode " + mode + " not supported (seed 000: nearest, linear)");
    if (mode == "nearest" && nm != "round_prefer_floor") throw ConvertError(n.label() + ": nearest_mode " + nm + " not supported");
    const int coord = ct == "half_pixel" ? 0 : ct == "align_corners" ? 1 : ct == "asymmetric" ? 2 : -1;
    if (coord < 0) throw ConvertError(n.label() + ": coordinate_transformation_mode " + ct + " not supported");
    const uint32_t x = act(n.input(0)), y = act(n.outputs.at(0));
    if (t_[x].rec.dtype != MK_DT_F32) throw ConvertError(n.label() + ": int8 Resize is not supported (seed 000: int8 without scales)");
    mk_blob_layer& l = layer(n, MK_OP_RESIZE_F32, {x}, y, "resize_f32", t_[y].rec.bytes / 4);
    l.p[0] = mode == "nearest" ? 0 : 1;
    l.p[1] = coord;
}

void Converter::reduce(const Node& n, int op) {
    const Value& in = g_.value(n.input(0), n.label());
    const size_t r = in.shape.size();
    std::vector<int64_t> axes = n.has_input(1) ? const_ints(n, 1) : drv::ir::attr_ints(n.attrs, "axes", {});
    if (axes.empty()) throw ConvertError(n.label() + ": empty axes (reduce all) is not supported (seed 000)");
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

void Converter::gru(const Node& n) {
    // ONNX GRU, forward, linear_before_reset = 1 (PyTorch export), batch 1, no sequence_lens /
    // initial_h (seed 000 GRU: float only, sequence_lens not supported).
    const Value& xv = g_.value(n.input(0), n.label());
    if (drv::ir::attr_string(n.attrs, "direction", "forward") != "forward") throw ConvertError(n.label() + ": only direction=forward");
    if (drv::ir::attr_int(n.attrs, "linear_before_reset", 0) != 1) throw ConvertError(n.label() + ": only linear_before_reset=1 is implemented");
    if (n.attrs.has("activations") || n.attrs.has("clip") || drv::ir::attr_int(n.attrs, "layout", 0) != 0)
        throw ConvertError(n.label() + ": activations/clip/layout are not configurable (seed 000 GRU)");
    if (n.has_input(4) || n.has_input(5)) throw ConvertError(n.label() + ": sequence_lens / initial_h are not supported");
    if (xv.shape.size() != 3 || xv.shape[1] != 1) throw ConvertError(n.label() + ": X must be [T, 1, I] (batch 1)");
    const int64_t H = drv::ir::attr_int(n.attrs, "hidden_size", 0), T = xv.shape[0];
    const uint32_t x = act(n.input(0));
    if (t_[x].rec.dtype != MK_DT_F32) throw ConvertError(n.label() + ": GRU is float only (seed 000)");
    auto cbytes = [&](size_t i) {
        const num::Tensor& c = cval(n, i);
        return std::vector<uint8_t>(c.raw(), c.raw() + c.nbytes());
    };
    const uint32_t w = add_const(MK_DT_F32, cbytes(1), {1, 1, int32_t(3 * H), int32_t(xv.shape[2])});
    const uint32_t r = add_const(MK_DT_F32, cbytes(2), {1, 1, int32_t(3 * H), int32_t(H)});
    const uint32_t b = n.has_input(3) ? add_const(MK_DT_F32, cbytes(3), {1, 1, 1, int32_t(6 * H)})
                                      : add_const(MK_DT_F32, std::vector<uint8_t>(size_t(24 * H), 0), {1, 1, 1, int32_t(6 * H)});
    const bool want_y = !n.outputs.empty() && !n.outputs[0].empty();
    uint32_t y;
    if (want_y) {
        y = act(n.outputs[0]);
    } else {
        y = scratch_f32(uint32_t(T * H));
        t_[y].rec.dims[1] = int32_t(T);
        t_[y].rec.dims[3] = int32_t(H);
    }
    const uint32_t scr = scratch_f32(uint32_t(7 * H));
    mk_blob_layer& l = layer(n, MK_OP_GRU_F32, {x, w, r, b}, y, "gru_f32", uint64_t(T) * uint64_t(3 * H) * uint64_t(xv.shape[2] + H));
    l.p[0] = int32_t(H);
    l.p[1] = int32_t(scr);
    t_[scr].first = std::min(t_[scr].first, int(layers_.size() - 1));
    t_[scr].last = std::max(t_[scr].last, int(layers_.size() - 1));
    if (n.outputs.size() > 1 && !n.outputs[1].empty()) {  // Y_h = the last step of Y
        const uint32_t yh = act(n.outputs[1]);
        mk_blob_layer& c = layer(n, MK_OP_COPY, {y}, yh, "copy");
        c.p[0] = int32_t((T - 1) * H * 4);
    }
}

// ONNX LSTM as seed 000 lists it (float only; sequence_lens and P not supported; direction forward;
// activations, clip, input_forget, layout not configurable), batch 1, zero initial state.
void Converter::lstm(const Node& n) {
    const Value& xv = g_.value(n.input(0), n.label());
    if (drv::ir::attr_string(n.attrs, "direction", "forward") != "forward") throw ConvertError(n.label() + ": no MCU kernel yet for LSTM direction other than forward");
    if (n.attrs.has("activations") || n.attrs.has("clip") || drv::ir::attr_int(n.attrs, "input_forget", 0) != 0 ||
        drv::ir::attr_int(n.attrs, "layout", 0) != 0)
        throw ConvertError(n.label() + ": activations/clip/input_forget/layout are not configurable (seed 000 LSTM)");
    if (n.has_input(4) || n.has_input(5) || n.has_input(6) || n.has_input(7))
        throw ConvertError(n.label() + ": no MCU kernel yet for LSTM sequence_lens / initial_h / initial_c / P");
    if (xv.shape.size() != 3 || xv.shape[1] != 1) throw ConvertError(n.label() + ": no MCU kernel yet for LSTM X other than [T, 1, I] (batch 1)");
    const int64_t H = drv::ir::attr_int(n.attrs, "hidden_size", 0), T = xv.shape[0], I = xv.shape[2];
    const uint32_t x = act(n.input(0));
    if (t_[x].rec.dtype != MK_DT_F32) throw ConvertError(n.label() + ": LSTM is float only (seed 000)");
    const num::Tensor& W = cval(n, 1);
    const num::Tensor& R = cval(n, 2);
    if (H <= 0 || W.dtype() != num::DType::F32 || R.dtype() != num::DType::F32 || int64_t(W.numel()) != 4 * H * I || int64_t(R.numel()) != 4 * H * H)
        throw ConvertError(n.label() + ": W must be float32 [1, 4H, I] and R [1, 4H, H]");
    const uint32_t w = add_const(MK_DT_F32, std::vector<uint8_t>(W.raw(), W.raw() + W.nbytes()), {1, 1, int32_t(4 * H), int32_t(I)});
    const uint32_t r = add_const(MK_DT_F32, std::vector<uint8_t>(R.raw(), R.raw() + R.nbytes()), {1, 1, int32_t(4 * H), int32_t(H)});
    std::vector<uint8_t> bias(size_t(32 * H), 0);
    if (n.has_input(3)) {
        const num::Tensor& B = cval(n, 3);
        if (B.dtype() != num::DType::F32 || int64_t(B.numel()) != 8 * H) throw ConvertError(n.label() + ": B must be float32 [1, 8H]");
        std::memcpy(bias.data(), B.raw(), bias.size());
    }
    const uint32_t b = add_const(MK_DT_F32, bias, {1, 1, 1, int32_t(8 * H)});
    const bool want_y = !n.outputs.empty() && !n.outputs[0].empty();
    uint32_t y;
    if (want_y) {
        y = act(n.outputs[0]);
    } else {
        y = scratch_f32(uint32_t(T * H));
        t_[y].rec.dims[1] = int32_t(T);
        t_[y].rec.dims[3] = int32_t(H);
    }
    const uint32_t st = scratch_f32(uint32_t(6 * H));
    mk_blob_layer& l = layer(n, MK_OP_LSTM_F32, {x, w, r, b}, y, "lstm_f32", uint64_t(T) * uint64_t(4 * H) * uint64_t(I + H));
    l.p[0] = int32_t(H);
    l.p[1] = int32_t(st);
    t_[st].first = std::min(t_[st].first, int(layers_.size() - 1));
    t_[st].last = std::max(t_[st].last, int(layers_.size() - 1));
    if (n.outputs.size() > 1 && !n.outputs[1].empty()) {  // Y_h = the last step of Y
        const uint32_t yh = act(n.outputs[1]);
        mk_blob_layer& c = layer(n, MK_OP_COPY, {y}, yh, "copy");
        c.p[0] = int32_t((T - 1) * H * 4);
    }
    if (n.outputs.size() > 2 && !n.outputs[2].empty()) throw ConvertError(n.label() + ": no MCU kernel yet for the LSTM Y_c output");
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
