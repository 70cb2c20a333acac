// SPDX-License-Identifier: MIT
// Shape rules for the compute operators: convolutions (float, ConvInteger, QLinearConv), pools,
// MatMul/Gemm and their integer/com.microsoft variants, recurrent layers. Formulas: ONNX operator
// docs (Conv, ConvTranspose, MaxPool "Output shape" sections) and seed 002 input orders.
#include <algorithm>

#include "shape_internal.h"

namespace drv::ir::shape {
namespace {

struct Window {
    std::vector<int64_t> kernel, strides, dilations, pads;  // pads: begin..., end...
};

Window window_attrs(const Ctx& c, size_t spatial, const std::vector<int64_t>& kernel_from_weight) {
    Window w;
    w.kernel = attr_ints(c.node.attrs, "kernel_shape", kernel_from_weight);
    if (w.kernel.size() != spatial) c.fail("kernel_shape has " + std::to_string(w.kernel.size()) + " dims, input has " + std::to_string(spatial) + " spatial dims");
    w.strides = attr_ints(c.node.attrs, "strides", std::vector<int64_t>(spatial, 1));
    w.dilations = attr_ints(c.node.attrs, "dilations", std::vector<int64_t>(spatial, 1));
    w.pads = attr_ints(c.node.attrs, "pads", std::vector<int64_t>(2 * spatial, 0));
    if (w.strides.size() != spatial || w.dilations.size() != spatial || w.pads.size() != 2 * spatial)
        c.fail("strides/dilations/pads do not match " + std::to_string(spatial) + " spatial dims");
    for (size_t i = 0; i < spatial; ++i) {
        if (w.kernel[i] <= 0 || w.strides[i] <= 0 || w.dilations[i] <= 0)
            c.fail("kernel, strides and dilations must be positive");
        if (w.pads[i] < 0 || w.pads[i + spatial] < 0) c.fail("pads must be non-negative");
    }
    return w;
}

std::vector<int64_t> window_out(const Ctx& c, const std::vector<int64_t>& in, const Window& w, bool ceil_mode) {
    std::string auto_pad = attr_string(c.node.attrs, "auto_pad", "NOTSET");
    size_t sp = w.kernel.size();
    std::vector<int64_t> out(sp);
    for (size_t i = 0; i < sp; ++i) {
        int64_t span = (w.kernel[i] - 1) * w.dilations[i] + 1;
        int64_t x = in[i];
        if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
            out[i] = (x + w.strides[i] - 1) / w.strides[i];
        } else if (auto_pad == "VALID") {
            out[i] = (x - span) / w.strides[i] + 1;
            if (x < span) out[i] = 0;
        } else if (auto_pad == "NOTSET") {
            int64_t num = x + w.pads[i] + w.pads[i + sp] - span;
            if (num < 0) c.fail("kernel span " + std::to_string(span) + " exceeds padded input " + std::to_string(x + w.pads[i] + w.pads[i + sp]));
            out[i] = (ceil_mode ? (num + w.strides[i] - 1) / w.strides[i] : num / w.strides[i]) + 1;
            // ONNX: with ceil_mode the last window must start inside the (left-padded) input.
            if (ceil_mode && (out[i] - 1) * w.strides[i] >= x + w.pads[i]) --out[i];
        } else {
            c.fail("unknown auto_pad '" + auto_pad + "'");
        }
        if (out[i] <= 0) c.fail("spatial output dim " + std::to_string(i) + " would be " + std::to_string(out[i]));
    }
    return out;
}

void conv_common(const Ctx& c, size_t x_idx, size_t w_idx, num::DType out_dt) {
    const Value& x = c.in(x_idx);
    const Value& w = c.in(w_idx);
    if (x.shape.size() < 3) c.fail("input '" + x.name + "' must have rank >= 3, has " + x.shape_str());
    if (w.shape.size() != x.shape.size()) c.fail("weight '" + w.name + "' rank differs from input rank");
    int64_t group = attr_int(c.node.attrs, "group", 1);
    if (group <= 0 || x.shape[1] % group != 0 || w.shape[0] % group != 0)
        c.fail("group " + std::to_string(group) + " does not divide channels");
    if (w.shape[1] * group != x.shape[1])
        c.fail("weight '" + w.name + "' expects " + std::to_string(w.shape[1] * group) + " input channels, input has " + std::to_string(x.shape[1]));
    size_t sp = x.shape.size() - 2;
    Window win = window_attrs(c, sp, std::vector<int64_t>(w.shape.begin() + 2, w.shape.end()));
    for (size_t i = 0; i < sp; ++i)
        if (win.kernel[i] != w.shape[i + 2]) c.fail("kernel_shape does not match weight '" + w.name + "' " + w.shape_str());
    std::vector<int64_t> out{x.shape[0], w.shape[0]};
    auto o = window_out(c, std::vector<int64_t>(x.shape.begin() + 2, x.shape.end()), win, false);
    out.insert(out.end(), o.begin(), o.end());
    c.set(0, out_dt, out);
}

/// The bias input `b_idx`, when given: "1-D tensor of size M" (Conv, ConvTranspose; QLinearConv's int32 B).
void conv_bias(const Ctx& c, size_t b_idx, int64_t m) {
    if (!c.has(b_idx)) return;
    const Value& b = c.in(b_idx);
    if (b.shape.size() != 1 || b.shape[0] != m)
        c.fail("bias '" + b.name + "' must be 1-D [" + std::to_string(m) + "] (one per output channel), got " + b.shape_str());
}

void conv(const Ctx& c) {
    conv_common(c, 0, 1, c.in(0).dtype);
    conv_bias(c, 2, c.in(1).shape[0]);
}
void conv_integer(const Ctx& c) { conv_common(c, 0, 1, num::DType::I32); }
void qlinear_conv(const Ctx& c) {
    conv_common(c, 0, 3, c.has(7) ? c.in(7).dtype : c.in(0).dtype);
    conv_bias(c, 8, c.in(3).shape[0]);
}

void conv_transpose(const Ctx& c) {
    const Value& x = c.in(0);
    const Value& w = c.in(1);
    if (x.shape.size() < 3 || w.shape.size() != x.shape.size()) c.fail("input/weight ranks invalid");
    int64_t group = attr_int(c.node.attrs, "group", 1);
    if (w.shape[0] != x.shape[1]) c.fail("weight dim 0 must equal input channels");
    size_t sp = x.shape.size() - 2;
    Window win = window_attrs(c, sp, std::vector<int64_t>(w.shape.begin() + 2, w.shape.end()));
    auto out_pad = attr_ints(c.node.attrs, "output_padding", std::vector<int64_t>(sp, 0));
    auto out_shape = attr_ints(c.node.attrs, "output_shape", {});
    if (!out_shape.empty() && out_shape.size() < sp)
        c.fail("output_shape has " + std::to_string(out_shape.size()) + " values for " + std::to_string(sp) + " spatial dims");
    if (group <= 0 || x.shape[1] % group != 0) c.fail("group " + std::to_string(group) + " does not divide channels");
    conv_bias(c, 2, w.shape[1] * group);
    std::vector<int64_t> out{x.shape[0], w.shape[1] * group};
    for (size_t i = 0; i < sp; ++i) {
        if (!out_shape.empty()) {
            out.push_back(out_shape[out_shape.size() - sp + i]);
            continue;
        }
        int64_t span = (win.kernel[i] - 1) * win.dilations[i] + 1;
        out.push_back(win.strides[i] * (x.shape[i + 2] - 1) + out_pad.at(i) + span - win.pads[i] - win.pads[i + sp]);
    }
    c.set(0, x.dtype, out);
}

void pool(const Ctx& c) {
    const Value& x = c.in(0);
    if (x.shape.size() < 3) c.fail("input must have rank >= 3");
    size_t sp = x.shape.size() - 2;
    if (!c.node.attrs.has("kernel_shape")) c.fail("attribute kernel_shape is required");
    Window win = window_attrs(c, sp, {});
    bool ceil_mode = attr_int(c.node.attrs, "ceil_mode", 0) != 0;
    std::vector<int64_t> out{x.shape[0], x.shape[1]};
    auto o = window_out(c, std::vector<int64_t>(x.shape.begin() + 2, x.shape.end()), win, ceil_mode);
    out.insert(out.end(), o.begin(), o.end());
    c.set(0, x.dtype, out);
    c.set(1, num::DType::I64, out);  // MaxPool Indices
}

void global_pool(const Ctx& c) {
    const Value& x = c.in(0);
    if (x.shape.size() < 3) c.fail("input must have rank >= 3");
    std::vector<int64_t> out(x.shape.size(), 1);
    out[0] = x.shape[0];
    out[1] = x.shape[1];
    c.set(0, x.dtype, out);
}

std::vector<int64_t> matmul_shape(const Ctx& c, const Value& a, const Value& b) {
    if (a.shape.empty() || b.shape.empty()) c.fail("MatMul operands must not be scalars");
    std::vector<int64_t> sa = a.shape, sb = b.shape;
    bool a1 = sa.size() == 1, b1 = sb.size() == 1;
    if (a1) sa.insert(sa.begin(), 1);
    if (b1) sb.push_back(1);
    if (sa.back() != sb[sb.size() - 2])
        c.fail("inner dimensions differ: '" + a.name + "' " + a.shape_str() + " x '" + b.name + "' " + b.shape_str());
    std::vector<int64_t> batch = broadcast_shapes(std::vector<int64_t>(sa.begin(), sa.end() - 2),
                                                  std::vector<int64_t>(sb.begin(), sb.end() - 2), c.node.label());
    if (!a1) batch.push_back(sa[sa.size() - 2]);
    if (!b1) batch.push_back(sb.back());
    return batch;
}

void matmul(const Ctx& c) { c.set(0, c.in(0).dtype, matmul_shape(c, c.in(0), c.in(1))); }
void matmul_integer(const Ctx& c) { c.set(0, num::DType::I32, matmul_shape(c, c.in(0), c.in(1))); }
void matmul_to_float(const Ctx& c) { c.set(0, num::DType::F32, matmul_shape(c, c.in(0), c.in(1))); }
void qlinear_matmul(const Ctx& c) {
    c.set(0, c.has(7) ? c.in(7).dtype : c.in(0).dtype, matmul_shape(c, c.in(0), c.in(3)));
}

std::vector<int64_t> gemm_shape(const Ctx& c, const Value& a, const Value& b) {
    if (a.shape.size() != 2 || b.shape.size() != 2) c.fail("Gemm operands must be 2-D, got " + a.shape_str() + " and " + b.shape_str());
    bool ta = attr_int(c.node.attrs, "transA", 0) != 0, tb = attr_int(c.node.attrs, "transB", 0) != 0;
    int64_t m = ta ? a.shape[1] : a.shape[0], k = ta ? a.shape[0] : a.shape[1];
    int64_t kb = tb ? b.shape[1] : b.shape[0], n = tb ? b.shape[0] : b.shape[1];
    if (k != kb) c.fail("inner dimensions differ (" + std::to_string(k) + " vs " + std::to_string(kb) + ")");
    return {m, n};
}

void gemm(const Ctx& c) {
    auto s = gemm_shape(c, c.in(0), c.in(1));
    if (c.has(2)) broadcast_shapes(s, c.in(2).shape, c.node.label() + " bias C");
    c.set(0, c.in(0).dtype, s);
}

void qgemm(const Ctx& c) {
    auto s = gemm_shape(c, c.in(0), c.in(3));
    num::DType dt = !c.has(7) ? num::DType::F32 : (c.has(8) ? c.in(8).dtype : c.in(0).dtype);
    c.set(0, dt, s);
}

void recurrent(const Ctx& c) {
    const Value& x = c.in(0);
    const Value& w = c.in(1);
    if (x.shape.size() != 3 || w.shape.size() != 3) c.fail("X and W must be 3-D");
    int64_t hidden = attr_int(c.node.attrs, "hidden_size", 0);
    if (hidden <= 0) c.fail("attribute hidden_size must be positive");
    int64_t dirs = w.shape[0];
    const std::string dir = attr_string(c.node.attrs, "direction", "forward");
    if (dirs != (dir == "bidirectional" ? 2 : 1))
        c.fail("W '" + w.name + "' has " + std::to_string(dirs) + " directions, direction '" + dir + "' needs " +
               (dir == "bidirectional" ? "2" : "1"));
    if (c.node.domain.empty()) {  // ONNX layouts: W [D, G*H, I], R [D, G*H, H], B [D, 2*G*H]
        const int64_t gates = c.node.op_type == "LSTM" ? 4 : c.node.op_type == "GRU" ? 3 : 1;
        const int64_t in_size = x.shape[2];  // X is [seq, batch, I] or, layout 1, [batch, seq, I]
        auto want = [&](size_t i, std::vector<int64_t> shape, const char* what) {
            if (!c.has(i)) return;
            const Value& v = c.in(i);
            if (v.shape != shape)
                c.fail(std::string(what) + " '" + v.name + "' must be " + shape_to_string(shape) + ", got " + v.shape_str());
        };
        want(1, {dirs, gates * hidden, in_size}, "W");
        want(2, {dirs, gates * hidden, hidden}, "R");
        want(3, {dirs, 2 * gates * hidden}, "B");
    }
    bool batch_first = attr_int(c.node.attrs, "layout", 0) != 0;
    int64_t seq = batch_first ? x.shape[1] : x.shape[0], batch = batch_first ? x.shape[0] : x.shape[1];
    if (batch_first) {
        c.set(0, x.dtype, {batch, seq, dirs, hidden});
        c.set(1, x.dtype, {batch, dirs, hidden});
        c.set(2, x.dtype, {batch, dirs, hidden});
    } else {
        c.set(0, x.dtype, {seq, dirs, batch, hidden});
        c.set(1, x.dtype, {dirs, batch, hidden});
        c.set(2, x.dtype, {dirs, batch, hidden});
    }
}

void layer_norm(const Ctx& c) {
    const Value& x = c.in(0);
    c.set(0, x.dtype, x.shape);
    int64_t axis = normalize_axis(attr_int(c.node.attrs, "axis", -1), x.shape.size(), c);
    std::vector<int64_t> stat(x.shape.begin(), x.shape.begin() + axis);
    stat.resize(x.shape.size(), 1);
    c.set(1, num::DType::F32, stat);
    c.set(2, num::DType::F32, stat);
}

}  // namespace

void add_nn_rules(std::map<std::string, Rule>& t) {
    t[":Conv"] = conv;
    t[":ConvInteger"] = conv_integer;
    t[":QLinearConv"] = qlinear_conv;
    t[":ConvTranspose"] = conv_transpose;
    t[":MaxPool"] = pool;
    t[":AveragePool"] = pool;
    t[":LpPool"] = pool;
    t["com.microsoft:QLinearAveragePool"] = pool;
    t[":GlobalAveragePool"] = global_pool;
    t[":GlobalMaxPool"] = global_pool;
    t[":GlobalLpPool"] = global_pool;
    t["com.microsoft:QLinearGlobalAveragePool"] = global_pool;
    t[":MatMul"] = matmul;
    t[":MatMulInteger"] = matmul_integer;
    t[":QLinearMatMul"] = qlinear_matmul;
    t["com.microsoft:MatMulIntegerToFloat"] = matmul_to_float;
    t["com.microsoft:DynamicQuantizeMatMul"] = matmul_to_float;
    t[":Gemm"] = gemm;
    t["com.microsoft:QGemm"] = qgemm;
    t[":RNN"] = recurrent;
    t[":GRU"] = recurrent;
    t[":LSTM"] = recurrent;
    t["com.microsoft:DynamicQuantizeLSTM"] = recurrent;
    t[":LayerNormalization"] = layer_norm;
}

}  // namespace drv::ir::shape
