// SPDX-License-Identifier: MIT
// Graph -> MCU blob for TFLite builtins (domain "tflite"). The tensors are NHWC already and the
// filters have the kernels' layouts (CONV_2D OHWI, DEPTHWISE_CONV_2D [1][KH][KW][C], FULLY_CONNECTED
// [N][K]), so weights are stored as they are. int8 layers use TFLite's arithmetic
// (numerics/tflite_quant.h: QuantizeMultiplier pairs and MultiplyByQuantizedMultiplier, TFLite's add,
// round-half-away pooling/quantize, the look-up-table softmax), bit-exact with the reference
// executor's tflite operators; element-wise int8 functions are 256-entry tables made by running the
// reference operator on every code. Anything else is refused with "no MCU kernel yet".
#include <array>
#include <set>

#include "blob_converter.h"
#include "numerics/tflite_quant.h"

namespace mcu::detail {

namespace {

std::string act_of(const Node& n) { return drv::ir::attr_string(n.attrs, "fused_activation_function", "NONE"); }

ConvertError no_kernel(const Node& n, const std::string& what) {
    return ConvertError(n.label() + ": no MCU kernel yet for " + what);
}

}  // namespace

/// Data movement keeps the codes: an int8 output quantized unlike its input has no kernel.
void Converter::copy_quant_or_refuse(const Node& n, uint32_t x, uint32_t y) {
    if (t_[x].rec.dtype != t_[y].rec.dtype) throw no_kernel(n, n.op_type + " changing the type");
    if (t_[x].rec.dtype == MK_DT_S8 && (t_[x].rec.scale != t_[y].rec.scale || t_[x].rec.zero_point != t_[y].rec.zero_point))
        throw no_kernel(n, "a requantizing " + n.op_type);
}

void Converter::same_quant(uint32_t from, uint32_t to) {
    t_[to].rec.scale = t_[from].rec.scale;
    t_[to].rec.zero_point = t_[from].rec.zero_point;
}

/// Fused RELU/RELU6 after a float layer without its own clamp: an in-place unary layer.
void Converter::clamp_f32(const Node& n, uint32_t t, const std::string& act) {
    if (act == "NONE") return;
    if (act != "RELU" && act != "RELU6") throw no_kernel(n, "float fused activation " + act);
    mk_blob_layer& l = layer(n, MK_OP_UNARY_F32, {t}, t, "unary_f32", t_[t].rec.bytes / 4);
    l.p[0] = act == "RELU" ? MK_UN_RELU : MK_UN_RELU6;
}

void Converter::tfl_conv(const Node& n, bool dw) {
    const Value& xv = g_.value(n.input(0), n.label());
    const Value& wv = g_.value(n.input(1), n.label());
    if (!wv.is_constant()) throw ConvertError(n.label() + ": the filter must be an offline constant");
    const num::Tensor& w = *wv.data;
    if (xv.shape.size() != 4 || w.rank() != 4) throw ConvertError(n.label() + ": input and filter must be 4-D");
    const int64_t cin = xv.shape[3], kh = w.dim(1), kw = w.dim(2);
    const int64_t cout = dw ? w.dim(3) : w.dim(0);
    if (dw ? w.dim(0) != 1 || cout % cin != 0 : w.dim(3) != cin)
        throw no_kernel(n, dw ? "this depthwise filter shape" : "grouped CONV_2D (filter channels " + std::to_string(w.dim(3)) + " of " + std::to_string(cin) + ")");
    int64_t oh = 0, ow = 0, pt = 0, pl = 0;
    const std::string pad = drv::ir::attr_string(n.attrs, "padding", "SAME");
    const int64_t sh = drv::ir::attr_int(n.attrs, "stride_h", 1), sw = drv::ir::attr_int(n.attrs, "stride_w", 1);
    const int64_t dh = drv::ir::attr_int(n.attrs, "dilation_h_factor", 1), dwf = drv::ir::attr_int(n.attrs, "dilation_w_factor", 1);
    if (!num::tfl::padding_1d(pad, xv.shape[1], kh, sh, dh, oh, pt) || !num::tfl::padding_1d(pad, xv.shape[2], kw, sw, dwf, ow, pl))
        throw ConvertError(n.label() + ": bad padding/stride/dilation");
    const uint32_t x = act(n.input(0)), y = act(n.outputs.at(0));
    if (t_[y].rec.dims[1] != oh || t_[y].rec.dims[2] != ow || t_[y].rec.dims[3] != cout)
        throw ConvertError(n.label() + ": output shape differs from the convolution's " + std::to_string(oh) + "x" + std::to_string(ow));
    const uint64_t macs = uint64_t(t_[y].rec.bytes / mk_elem(t_[y].rec.dtype)) * uint64_t(kh * kw * (dw ? 1 : cin));
    std::vector<uint8_t> wbytes(w.raw(), w.raw() + w.nbytes());
    const std::vector<int32_t> wd{dw ? 1 : int32_t(cout), int32_t(kh), int32_t(kw), dw ? int32_t(cout) : int32_t(cin)};
    if (t_[x].rec.dtype == MK_DT_F32) {
        if (w.dtype() != num::DType::F32) throw ConvertError(n.label() + ": float input with a non-float filter");
        const uint32_t wt = add_const(MK_DT_F32, wbytes, wd);
        std::vector<float> bias(size_t(cout), 0.0f);
        if (n.has_input(2)) {
            const num::Tensor& b = cval(n, 2);
            if (b.dtype() != num::DType::F32 || int64_t(b.numel()) != cout) throw ConvertError(n.label() + ": bias must be float32[" + std::to_string(cout) + "]");
            std::copy(b.data<float>(), b.data<float>() + cout, bias.begin());
        }
        const uint32_t bt = add_const(MK_DT_F32, as_bytes(bias), {1, 1, 1, int32_t(cout)});
        const std::string a = act_of(n);
        if (a != "NONE" && a != "RELU" && a != "RELU6" && a != "RELU_N1_TO_1") throw no_kernel(n, "fused activation " + a);
        mk_blob_layer& l = layer(n, dw ? MK_OP_DWCONV_F32 : MK_OP_CONV2D_F32, {x, wt, bt}, y, dw ? "dwconv_f32" : "conv2d_f32", macs);
        const float lo = a == "NONE" ? -INFINITY : (a == "RELU_N1_TO_1" ? -1.0f : 0.0f);
        const float hi = a == "RELU6" ? 6.0f : (a == "RELU_N1_TO_1" ? 1.0f : INFINITY);
        const int32_t p[10] = {int32_t(sh), int32_t(sw), int32_t(dh), int32_t(dwf), int32_t(pt), int32_t(pl), int32_t(kh), int32_t(kw), f2i(lo), f2i(hi)};
        std::copy(p, p + 10, l.p);
        return;
    }
    if (t_[x].rec.dtype != MK_DT_S8 || w.dtype() != num::DType::I8) throw no_kernel(n, "this type combination (int8 or float32 only)");
    const auto& wq = wv.quant;
    if (wq.empty() || (wq.scale.size() != 1 && int64_t(wq.scale.size()) != cout)) throw ConvertError(n.label() + ": filter quantization must be per tensor or per output channel");
    for (int32_t z : wq.zero_point)
        if (z != 0) throw ConvertError(n.label() + ": int8 filters must be symmetric (zero point 0)");
    const uint32_t wt = add_const(MK_DT_S8, wbytes, wd);
    std::vector<int32_t> bias(size_t(cout), 0);
    if (n.has_input(2)) {
        const num::Tensor& b = cval(n, 2);
        if (b.dtype() != num::DType::I32 || int64_t(b.numel()) != cout) throw ConvertError(n.label() + ": bias must be int32[" + std::to_string(cout) + "]");
        std::copy(b.data<int32_t>(), b.data<int32_t>() + cout, bias.begin());
    }
    const uint32_t bt = add_const(MK_DT_S32, as_bytes(bias), {1, 1, 1, int32_t(cout)});
    std::vector<int32_t> mult(static_cast<size_t>(cout)), sh_e(static_cast<size_t>(cout));
    for (int64_t c = 0; c < cout; ++c) {
        const double real = double(t_[x].rec.scale) * double(wq.scale[wq.scale.size() > 1 ? size_t(c) : 0]) / double(t_[y].rec.scale);
        const num::tfl::QuantizedMultiplier q = num::tfl::quantize_multiplier(real);
        mult[size_t(c)] = q.multiplier;
        sh_e[size_t(c)] = q.shift;
    }
    const uint32_t mt = add_const(MK_DT_S32, as_bytes(mult), {1, 1, 1, int32_t(cout)});
    const uint32_t st = add_const(MK_DT_S32, as_bytes(sh_e), {1, 1, 1, int32_t(cout)});
    int32_t lo = -128, hi = 127;
    if (!num::tfl::activation_range(act_of(n), t_[y].rec.scale, t_[y].rec.zero_point, lo, hi)) throw no_kernel(n, "fused activation " + act_of(n));
    mk_blob_layer& l = layer(n, dw ? MK_OP_DWCONV_S8 : MK_OP_CONV2D_S8, {x, wt, bt, mt}, y, dw ? "dwconv_s8" : "conv2d_s8", macs);
    const int32_t p[12] = {int32_t(sh), int32_t(sw), int32_t(dh), int32_t(dwf), int32_t(pt), int32_t(pl), int32_t(kh), int32_t(kw), lo, hi, int32_t(st), 2};
    std::copy(p, p + 12, l.p);
}

void Converter::tfl_fc(const Node& n) {
    const Value& wv = g_.value(n.input(1), n.label());
    if (!wv.is_constant() || wv.data->rank() != 2) throw ConvertError(n.label() + ": the filter must be a constant 2-D [N, K] tensor");
    if (drv::ir::attr_string(n.attrs, "weights_format", "DEFAULT") != "DEFAULT") throw no_kernel(n, "weights_format other than DEFAULT");
    const num::Tensor& w = *wv.data;
    const int64_t N = w.dim(0), K = w.dim(1);
    const uint32_t x = act(n.input(0)), y = act(n.outputs.at(0));
    const uint64_t rows = K > 0 ? (t_[x].rec.bytes / mk_elem(t_[x].rec.dtype)) / uint64_t(K) : 0;
    if (rows * uint64_t(N) != t_[y].rec.bytes / mk_elem(t_[y].rec.dtype)) throw ConvertError(n.label() + ": output size differs from rows x N");
    std::vector<uint8_t> wbytes(w.raw(), w.raw() + w.nbytes());
    const std::string a = act_of(n);
    if (t_[x].rec.dtype == MK_DT_F32) {
        const uint32_t wt = add_const(MK_DT_F32, wbytes, {1, 1, int32_t(N), int32_t(K)});
        std::vector<uint32_t> ins{x, wt};
        if (n.has_input(2)) {
            const num::Tensor& b = cval(n, 2);
            if (b.dtype() != num::DType::F32 || int64_t(b.numel()) != N) throw ConvertError(n.label() + ": bias must be float32[N]");
            ins.push_back(add_const(MK_DT_F32, std::vector<uint8_t>(b.raw(), b.raw() + b.nbytes()), {1, 1, 1, int32_t(N)}));
        }
        if (a != "NONE" && a != "RELU" && a != "RELU6" && a != "RELU_N1_TO_1") throw no_kernel(n, "fused activation " + a);
        mk_blob_layer& l = layer(n, MK_OP_FC_F32, ins, y, "fully_connected_f32", rows * uint64_t(N * K));
        l.p[0] = f2i(a == "NONE" ? -INFINITY : (a == "RELU_N1_TO_1" ? -1.0f : 0.0f));
        l.p[1] = f2i(a == "RELU6" ? 6.0f : (a == "RELU_N1_TO_1" ? 1.0f : INFINITY));
        return;
    }
    if (t_[x].rec.dtype != MK_DT_S8 || w.dtype() != num::DType::I8) throw no_kernel(n, "this type combination (int8 or float32 only)");
    const auto& wq = wv.quant;
    if (wq.empty() || (wq.scale.size() != 1 && int64_t(wq.scale.size()) != N)) throw ConvertError(n.label() + ": filter quantization must be per tensor or per output channel");
    for (int32_t z : wq.zero_point)
        if (z != 0) throw ConvertError(n.label() + ": int8 filters must be symmetric (zero point 0)");
    const uint32_t wt = add_const(MK_DT_S8, wbytes, {1, 1, int32_t(N), int32_t(K)});
    std::vector<int32_t> bias(static_cast<size_t>(N), 0), mult(static_cast<size_t>(N)), sh(static_cast<size_t>(N));
    if (n.has_input(2)) {
        const num::Tensor& b = cval(n, 2);
        if (b.dtype() != num::DType::I32 || int64_t(b.numel()) != N) throw ConvertError(n.label() + ": bias must be int32[N]");
        std::copy(b.data<int32_t>(), b.data<int32_t>() + N, bias.begin());
    }
    for (int64_t j = 0; j < N; ++j) {
        const auto q = num::tfl::quantize_multiplier(double(t_[x].rec.scale) * double(wq.scale[wq.scale.size() > 1 ? size_t(j) : 0]) / double(t_[y].rec.scale));
        mult[size_t(j)] = q.multiplier;
        sh[size_t(j)] = q.shift;
    }
    const uint32_t bt = add_const(MK_DT_S32, as_bytes(bias), {1, 1, 1, int32_t(N)});
    const uint32_t mt = add_const(MK_DT_S32, as_bytes(mult), {1, 1, 1, int32_t(N)});
    const uint32_t st = add_const(MK_DT_S32, as_bytes(sh), {1, 1, 1, int32_t(N)});
    int32_t lo = -128, hi = 127;
    if (!num::tfl::activation_range(a, t_[y].rec.scale, t_[y].rec.zero_point, lo, hi)) throw no_kernel(n, "fused activation " + a);
    mk_blob_layer& l = layer(n, MK_OP_FC_S8, {x, wt, bt, mt}, y, "fully_connected_s8", rows * uint64_t(N * K));
    l.p[0] = lo;
    l.p[1] = hi;
    l.p[2] = int32_t(st);
    l.p[3] = 2;
}

void Converter::tfl_binary(const Node& n) {
    const std::string& op = n.op_type;
    const uint32_t a = act(n.input(0)), b = act(n.input(1)), y = act(n.outputs.at(0));
    const std::string fa = act_of(n);
    // Broadcast strides over the (right-aligned) stored dims.
    auto strides = [&](uint32_t t, int32_t* st) {
        int32_t acc = 1;
        for (int i = 3; i >= 0; --i) {
            const int32_t d = t_[t].rec.dims[i], od = t_[y].rec.dims[i];
            if (d != od && d != 1) throw ConvertError(n.label() + ": operands do not broadcast");
            st[i] = d == 1 && od != 1 ? 0 : acc;
            acc *= d;
        }
    };
    if (t_[a].rec.dtype == MK_DT_F32) {
        const int bop = op == "ADD" ? MK_BIN_ADD : op == "SUB" ? MK_BIN_SUB : op == "MUL" ? MK_BIN_MUL : op == "DIV" ? MK_BIN_DIV
                        : op == "MAXIMUM" ? MK_BIN_MAX : op == "MINIMUM" ? MK_BIN_MIN : -1;
        if (bop < 0) throw no_kernel(n, "float " + op);
        mk_blob_layer& l = layer(n, MK_OP_BINARY_F32, {a, b}, y, "binary_f32", t_[y].rec.bytes / 4);
        l.p[0] = bop;
        strides(a, &l.p[5]);
        strides(b, &l.p[9]);
        clamp_f32(n, y, fa);
        return;
    }
    if (t_[a].rec.dtype != MK_DT_S8 || t_[b].rec.dtype != MK_DT_S8) throw no_kernel(n, op + " on these types");
    if (op != "ADD" && op != "SUB" && op != "MUL" && op != "MAXIMUM" && op != "MINIMUM") throw no_kernel(n, "int8 " + op);
    int32_t lo = -128, hi = 127;
    if (!num::tfl::activation_range(fa, t_[y].rec.scale, t_[y].rec.zero_point, lo, hi)) throw no_kernel(n, "fused activation " + fa);
    if (op == "MAXIMUM" || op == "MINIMUM") {  // TFLite: the codes, inputs and output sharing the quantization
        for (uint32_t t : {a, b})
            if (t_[t].rec.scale != t_[y].rec.scale || t_[t].rec.zero_point != t_[y].rec.zero_point)
                throw no_kernel(n, "int8 " + op + " with inputs quantized unlike the output");
        mk_blob_layer& l = layer(n, MK_OP_MINMAX_S8, {a, b}, y, "minmax_s8", t_[y].rec.bytes);
        l.p[0] = op == "MAXIMUM";
        l.p[1] = lo;
        l.p[2] = hi;
        strides(a, &l.p[5]);
        strides(b, &l.p[9]);
        return;
    }
    const double sa = t_[a].rec.scale, sb = t_[b].rec.scale, sy = t_[y].rec.scale;
    mk_blob_layer& l = layer(n, op == "MUL" ? MK_OP_MUL_S8 : MK_OP_ADD_S8, {a, b}, y, op == "MUL" ? "mul_s8" : "add_s8", t_[y].rec.bytes);
    if (op == "MUL") {
        const auto q = num::tfl::quantize_multiplier(sa * sb / sy);
        l.p[0] = q.multiplier;
        l.p[1] = q.shift;
        l.p[2] = lo;
        l.p[3] = hi;
        l.p[13] = 1;
    } else {
        const double twice_max = 2.0 * std::max(sa, sb);
        const auto q1 = num::tfl::quantize_multiplier(sa / twice_max), q2 = num::tfl::quantize_multiplier(sb / twice_max);
        const auto qo = num::tfl::quantize_multiplier(twice_max / (double(1 << 20) * sy));
        l.p[3] = lo;
        l.p[4] = hi;
        l.p[13] = op == "SUB" ? 2 : 1;
        const int32_t m[6] = {q1.multiplier, q1.shift, q2.multiplier, q2.shift, qo.multiplier, qo.shift};
        std::copy(m, m + 6, &l.p[14]);
    }
    strides(a, &l.p[5]);
    strides(b, &l.p[9]);
}

void Converter::tfl_pool(const Node& n, bool max) {
    const uint32_t x = act(n.input(0)), y = act(n.outputs.at(0));
    const auto& d = t_[x].rec.dims;
    const int64_t fh = drv::ir::attr_int(n.attrs, "filter_height", 1), fw = drv::ir::attr_int(n.attrs, "filter_width", 1);
    const int64_t sh = drv::ir::attr_int(n.attrs, "stride_h", 1), sw = drv::ir::attr_int(n.attrs, "stride_w", 1);
    int64_t oh = 0, ow = 0, pt = 0, pl = 0;
    const std::string pad = drv::ir::attr_string(n.attrs, "padding", "VALID");
    if (!num::tfl::padding_1d(pad, d[1], fh, sh, 1, oh, pt) || !num::tfl::padding_1d(pad, d[2], fw, sw, 1, ow, pl))
        throw ConvertError(n.label() + ": bad padding/stride/filter");
    const bool s8 = t_[x].rec.dtype == MK_DT_S8;
    int32_t lo = -128, hi = 127;
    const std::string fa = act_of(n);
    if (s8) {
        if (t_[x].rec.scale != t_[y].rec.scale || t_[x].rec.zero_point != t_[y].rec.zero_point)
            throw no_kernel(n, "int8 pooling with different input and output quantization");
        if (!num::tfl::activation_range(fa, t_[y].rec.scale, t_[y].rec.zero_point, lo, hi)) throw no_kernel(n, "fused activation " + fa);
    } else if (t_[x].rec.dtype != MK_DT_F32) {
        throw no_kernel(n, "this type");
    }
    const uint32_t op = s8 ? (max ? MK_OP_MAXPOOL_S8 : MK_OP_AVGPOOL_S8) : (max ? MK_OP_MAXPOOL_F32 : MK_OP_AVGPOOL_F32);
    mk_blob_layer& l = layer(n, op, {x}, y, max ? "max_pool" : "avg_pool", uint64_t(t_[y].rec.bytes / mk_elem(t_[y].rec.dtype)) * uint64_t(fh * fw));
    const int32_t p[9] = {int32_t(fh), int32_t(fw), int32_t(sh), int32_t(sw), int32_t(pt), int32_t(pl), lo, hi, 1};
    std::copy(p, p + 9, l.p);
    if (!s8) clamp_f32(n, y, fa);
}

void Converter::tfl_mean(const Node& n) {
    const Value& xv = g_.value(n.input(0), n.label());
    std::vector<int64_t> axes = const_ints(n, 1);
    const size_t r = xv.shape.size();
    std::vector<int> st;
    for (int64_t ax : axes) {
        if (ax < -int64_t(r) || ax >= int64_t(r)) throw ConvertError(n.label() + ": axis out of range");
        st.push_back(int(ax < 0 ? ax + int64_t(r) : ax) + int(4 - r));
    }
    std::sort(st.begin(), st.end());
    st.erase(std::unique(st.begin(), st.end()), st.end());
    const uint32_t x = act(n.input(0)), y = act(n.outputs.at(0));
    if (st.empty()) throw ConvertError(n.label() + ": empty axes");
    for (size_t k = 1; k < st.size(); ++k)
        if (st[k] != st[k - 1] + 1) throw no_kernel(n, "MEAN over non-adjacent axes");
    const auto& d = t_[x].rec.dims;
    if (t_[x].rec.dtype == MK_DT_F32) {
        int32_t outer = 1, axis = 1, inner = 1;
        for (int j = 0; j < 4; ++j) (j < st.front() ? outer : j > st.back() ? inner : axis) *= d[j];
        mk_blob_layer& l = layer(n, MK_OP_REDUCE_F32, {x}, y, "reduce_f32", t_[x].rec.bytes / 4);
        l.p[0] = MK_RED_MEAN;
        l.p[1] = outer;
        l.p[2] = axis;
        l.p[3] = inner;
        return;
    }
    if (t_[x].rec.dtype != MK_DT_S8) throw no_kernel(n, "MEAN on this type");
    if (st != std::vector<int>{1, 2} || r != 4) return tfl_reduce(n);  // other adjacent axes: the int8 reduce kernel
    const int32_t hw = d[1] * d[2];
    const auto q = num::tfl::quantize_multiplier(double(t_[x].rec.scale) / (double(t_[y].rec.scale) * double(hw)));
    mk_blob_layer& l = layer(n, MK_OP_GAP_S8, {x}, y, "global_avg_pool_s8", t_[x].rec.bytes);
    l.p[0] = q.multiplier;
    l.p[1] = q.shift;
    l.p[2] = 0;
    l.p[3] = 1;
}

void Converter::tfl_softmax(const Node& n) {
    const uint32_t x = act(n.input(0)), y = act(n.outputs.at(0));
    const float beta = drv::ir::attr_float(n.attrs, "beta", 1.0f);
    if (t_[x].rec.dtype == MK_DT_F32) {
        if (beta != 1.0f) throw no_kernel(n, "float SOFTMAX with beta != 1");
        mk_blob_layer& l = layer(n, MK_OP_SOFTMAX_F32, {x}, y, "softmax_f32", t_[y].rec.bytes / 4);
        l.p[0] = n.op_type == "LOG_SOFTMAX" ? 1 : 0;
        return;
    }
    if (t_[x].rec.dtype != MK_DT_S8 || n.op_type != "SOFTMAX") throw no_kernel(n, "int8 " + n.op_type);
    // The reference operator's own table construction (numerics tfl_pool.cpp, PopulateSoftmaxLookupTable).
    std::vector<float> table(256);
    const float scale = -t_[x].rec.scale * beta;
    for (int32_t v = 0; v <= 255; ++v) table[size_t(255 - v)] = std::exp(scale * static_cast<float>(v));
    const uint32_t tt = add_const(MK_DT_F32, as_bytes(table), {1, 1, 1, 256});
    layer(n, MK_OP_SOFTMAX_LUT_S8, {x, tt}, y, "softmax_lut_s8", t_[y].rec.bytes);
}

void Converter::tfl_unary(const Node& n) {
    const std::string& op = n.op_type;
    const uint32_t x = act(n.input(0)), y = act(n.outputs.at(0));
    if (t_[x].rec.dtype == MK_DT_S8 && t_[y].rec.dtype == MK_DT_S8) {
        // The reference operator (num::run_op, domain tflite) applied to all 256 codes.
        num::Tensor all(num::DType::I8, {256});
        for (int i = 0; i < 256; ++i) all.data<int8_t>()[i] = int8_t(i - 128);
        all.quant.scale = {t_[x].rec.scale};
        all.quant.zero_point = {t_[x].rec.zero_point};
        const num::Tensor lut = num::run_op(op, n.attrs, {&all}, n.domain).at(0);
        const uint32_t lt = add_const(MK_DT_S8, std::vector<uint8_t>(lut.raw(), lut.raw() + 256), {1, 1, 1, 256});
        layer(n, MK_OP_LUT_S8, {x, lt}, y, "lut_s8", t_[y].rec.bytes);
        return;
    }
    if (t_[x].rec.dtype != MK_DT_F32) throw no_kernel(n, op + " on this type");
    static const std::map<std::string, int> kUn{{"RELU", MK_UN_RELU},       {"RELU6", MK_UN_RELU6},     {"LEAKY_RELU", MK_UN_LEAKY_RELU},
                                                {"HARD_SWISH", MK_UN_HARD_SWISH}, {"LOGISTIC", MK_UN_SIGMOID}, {"TANH", MK_UN_TANH},
                                                {"ELU", MK_UN_ELU},         {"ABS", MK_UN_ABS},         {"NEG", MK_UN_NEG},
                                                {"EXP", MK_UN_EXP},         {"SQRT", MK_UN_SQRT},       {"RSQRT", MK_UN_RSQRT},
                                                {"SQUARE", MK_UN_SQUARE},   {"FLOOR", MK_UN_FLOOR},     {"CEIL", MK_UN_CEIL},
                                                {"ROUND", MK_UN_ROUND},     {"LOG", MK_UN_LOG},         {"SIN", MK_UN_SIN},
                                                {"COS", MK_UN_COS}};
    if (op == "GELU") {  // approximate: the tanh form
        mk_blob_layer& l = layer(n, MK_OP_UNARY_F32, {x}, y, "unary_f32", t_[y].rec.bytes / 4);
        l.p[0] = drv::ir::attr_int(n.attrs, "approximate", 0) ? MK_UN_GELU_TANH : MK_UN_GELU;
        return;
    }
    if (op == "RELU_N1_TO_1") {  // min(max(x, -1), 1): a clip
        mk_blob_layer& l = layer(n, MK_OP_UNARY_F32, {x}, y, "unary_f32", t_[y].rec.bytes / 4);
        l.p[0] = MK_UN_CLIP;
        l.p[1] = f2i(-1.0f);
        l.p[2] = f2i(1.0f);
        return;
    }
    auto it = kUn.find(op);
    if (it == kUn.end()) throw no_kernel(n, "float " + op);
    mk_blob_layer& l = layer(n, MK_OP_UNARY_F32, {x}, y, "unary_f32", t_[y].rec.bytes / 4);
    l.p[0] = it->second;
    l.p[1] = f2i(op == "LEAKY_RELU" ? drv::ir::attr_float(n.attrs, "alpha", 0.2f) : 1.0f);
}

void Converter::tfl_copy(const Node& n) {
    const uint32_t x = act(n.input(0)), y = act(n.outputs.at(0));
    if (t_[x].rec.bytes != t_[y].rec.bytes) throw ConvertError(n.label() + ": input and output sizes differ");
    if (t_[x].rec.dtype == MK_DT_S8 && (t_[x].rec.scale != t_[y].rec.scale || t_[x].rec.zero_point != t_[y].rec.zero_point))
        throw no_kernel(n, "a requantizing " + n.op_type);
    layer(n, MK_OP_COPY, {x}, y, "copy");
}

void Converter::tfl_concat(const Node& n) {
    const Value& out = g_.value(n.outputs.at(0), n.label());
    const int64_t r = int64_t(out.shape.size());
    int64_t axis = drv::ir::attr_int(n.attrs, "axis", 0);
    if (axis < 0) axis += r;
    if (axis < 0 || axis >= r) throw ConvertError(n.label() + ": axis out of range");
    if (n.inputs.size() > MK_BLOB_MAX_IN) throw no_kernel(n, "CONCATENATION of more than 4 inputs");
    const uint32_t y = act(n.outputs.at(0));
    const int saxis = int(axis + (4 - r));
    int32_t outer = 1, inner = 1;
    for (int i = 0; i < saxis; ++i) outer *= t_[y].rec.dims[i];
    for (int i = saxis + 1; i < 4; ++i) inner *= t_[y].rec.dims[i];
    std::vector<uint32_t> ins;
    for (const auto& in : n.inputs) {
        const uint32_t t = act(in);
        if (t_[t].rec.dtype != t_[y].rec.dtype) throw ConvertError(n.label() + ": mixed types");
        if (t_[t].rec.dtype == MK_DT_S8 && (t_[t].rec.scale != t_[y].rec.scale || t_[t].rec.zero_point != t_[y].rec.zero_point))
            throw no_kernel(n, "int8 CONCATENATION with requantizing inputs");
        ins.push_back(t);
    }
    if (act_of(n) != "NONE") throw no_kernel(n, "CONCATENATION with a fused activation");
    mk_blob_layer& l = layer(n, MK_OP_CONCAT, ins, y, "concat");
    l.p[0] = outer;
    l.p[1] = inner;
    l.p[2] = int32_t(mk_elem(t_[y].rec.dtype));
    for (size_t k = 0; k < ins.size(); ++k) l.p[3 + k] = t_[ins[k]].rec.dims[saxis];
}

void Converter::tfl_pad(const Node& n) {
    const Value& xv = g_.value(n.input(0), n.label());
    const size_t r = xv.shape.size();
    const std::vector<int64_t> pads = const_ints(n, 1);
    if (pads.size() != 2 * r) throw ConvertError(n.label() + ": paddings must be [rank, 2]");
    const uint32_t x = act(n.input(0)), y = act(n.outputs.at(0));
    same_quant(x, y);
    std::vector<uint8_t> value(mk_elem(t_[x].rec.dtype), 0);
    if (n.op_type == "PADV2" && n.has_input(2)) {
        const num::Tensor& v = cval(n, 2);
        if (v.nbytes() != value.size()) throw ConvertError(n.label() + ": constant_values must be one element of the input type");
        std::memcpy(value.data(), v.raw(), value.size());
    } else if (t_[x].rec.dtype == MK_DT_S8) {
        value[0] = uint8_t(int8_t(t_[x].rec.zero_point));  // TFLite PAD: the real value 0
    }
    mk_blob_layer& l = layer(n, MK_OP_PAD, {x, add_const(t_[x].rec.dtype, value, {1, 1, 1, 1})}, y, "pad");
    for (size_t a = 0; a < r; ++a) {
        if (pads[2 * a] < 0 || pads[2 * a + 1] < 0) throw ConvertError(n.label() + ": negative padding");
        const size_t j = a + (4 - r);
        l.p[j] = int32_t(pads[2 * a]);
        l.p[4 + j] = int32_t(pads[2 * a + 1]);
    }
    l.p[8] = int32_t(mk_elem(t_[x].rec.dtype));
}

void Converter::tfl_quantize(const Node& n) {
    const uint32_t x = act(n.input(0)), y = act(n.outputs.at(0));
    if (n.op_type == "DEQUANTIZE") {
        if (t_[x].rec.dtype != MK_DT_S8 || t_[y].rec.dtype != MK_DT_F32) throw no_kernel(n, "DEQUANTIZE of this type");
        layer(n, MK_OP_DEQUANTIZE, {x}, y, "dequantize", t_[y].rec.bytes / 4);
        return;
    }
    if (t_[x].rec.dtype == MK_DT_F32 && t_[y].rec.dtype == MK_DT_S8) {
        mk_blob_layer& l = layer(n, MK_OP_QUANTIZE, {x}, y, "quantize", t_[y].rec.bytes);
        l.p[0] = 1;
        return;
    }
    if (t_[x].rec.dtype == MK_DT_S8 && t_[y].rec.dtype == MK_DT_S8) return tfl_unary(n);  // requantize: a table
    throw no_kernel(n, "QUANTIZE of this type");
}

void Converter::tfl_transpose(const Node& n) {
    const Value& xv = g_.value(n.input(0), n.label());
    const std::vector<int64_t> perm = const_ints(n, 1);
    const size_t r = xv.shape.size();
    if (perm.size() != r) throw ConvertError(n.label() + ": perm length differs from the rank");
    const uint32_t x = act(n.input(0)), y = act(n.outputs.at(0));
    same_quant(x, y);
    mk_blob_layer& l = layer(n, MK_OP_TRANSPOSE, {x}, y, "transpose");
    for (int j = 0; j < 4; ++j) l.p[j] = j;
    for (size_t a = 0; a < r; ++a) {
        const int64_t p = perm[a] < 0 ? perm[a] + int64_t(r) : perm[a];
        if (p < 0 || p >= int64_t(r)) throw ConvertError(n.label() + ": bad perm");
        l.p[a + (4 - r)] = int32_t(p + int64_t(4 - r));
    }
    l.p[4] = int32_t(mk_elem(t_[x].rec.dtype));
}

void Converter::tfl_slice(const Node& n) {
    const Value& xv = g_.value(n.input(0), n.label());
    const size_t r = xv.shape.size();
    const bool strided = n.op_type == "STRIDED_SLICE";
    if (strided && (drv::ir::attr_int(n.attrs, "shrink_axis_mask", 0) || drv::ir::attr_int(n.attrs, "ellipsis_mask", 0) ||
                    drv::ir::attr_int(n.attrs, "new_axis_mask", 0)))
        throw no_kernel(n, "STRIDED_SLICE with shrink/ellipsis/new-axis masks");
    const std::vector<int64_t> begin = const_ints(n, 1);
    const std::vector<int64_t> steps = strided ? const_ints(n, 3) : std::vector<int64_t>(r, 1);
    if (begin.size() != r || steps.size() != r) throw ConvertError(n.label() + ": begin/strides must cover every axis");
    const int64_t bm = drv::ir::attr_int(n.attrs, "begin_mask", 0);
    const uint32_t x = act(n.input(0)), y = act(n.outputs.at(0));
    same_quant(x, y);
    mk_blob_layer& l = layer(n, MK_OP_SLICE, {x}, y, "slice");
    for (int j = 0; j < 4; ++j) {
        l.p[j] = 0;
        l.p[4 + j] = 1;
    }
    for (size_t a = 0; a < r; ++a) {
        const int64_t dim = xv.shape[a], st = steps[a];
        if (st == 0) throw ConvertError(n.label() + ": stride 0");
        int64_t b = ((bm >> a) & 1) ? (st > 0 ? 0 : dim - 1) : begin[a];
        if (b < 0) b += dim;
        b = st > 0 ? std::clamp<int64_t>(b, 0, dim) : std::clamp<int64_t>(b, 0, dim - 1);
        l.p[a + (4 - r)] = int32_t(b);
        l.p[4 + a + (4 - r)] = int32_t(st);
    }
}

/// SPLIT / SPLIT_V / UNPACK: one slice layer per output (UNPACK through a keep-dims scratch tensor, as
/// the slice kernel reads the output's stored dims).
void Converter::tfl_split(const Node& n) {
    const std::string& op = n.op_type;
    const size_t xi = op == "SPLIT" ? 1 : 0;
    const Value& xv = g_.value(n.input(xi), n.label());
    const size_t r = xv.shape.size();
    int64_t axis = op == "UNPACK" ? drv::ir::attr_int(n.attrs, "axis", 0) : const_ints(n, op == "SPLIT" ? 0 : 2).at(0);
    if (axis < 0) axis += int64_t(r);
    if (axis < 0 || axis >= int64_t(r)) throw ConvertError(n.label() + ": axis out of range");
    const uint32_t x = act(n.input(xi));
    const int saxis = int(axis) + int(4 - r);
    int64_t begin = 0;
    for (const auto& oname : n.outputs) {
        if (oname.empty()) continue;
        const Value& ov = g_.value(oname, n.label());
        const uint32_t y = act(oname);
        same_quant(x, y);
        const int64_t count = op == "UNPACK" ? 1 : ov.shape[size_t(axis)];
        uint32_t dst = y;
        if (op == "UNPACK") {  // a keep-dims image of the output, then a byte copy
            Tens tmp;
            tmp.rec = t_[x].rec;
            tmp.rec.storage = MK_ST_ARENA;
            tmp.rec.dims[saxis] = 1;
            tmp.rec.bytes = t_[y].rec.bytes;
            t_.push_back(std::move(tmp));
            dst = uint32_t(t_.size() - 1);
        }
        if (op != "UNPACK") {
            std::vector<int32_t> want(t_[x].rec.dims, t_[x].rec.dims + 4);
            want[size_t(saxis)] = int32_t(count);
            if (!std::equal(want.begin(), want.end(), t_[y].rec.dims)) throw ConvertError(n.label() + ": output shape does not match the split");
        }
        mk_blob_layer& l = layer(n, MK_OP_SLICE, {x}, dst, "slice");
        for (int j = 0; j < 4; ++j) {
            l.p[j] = j == saxis ? int32_t(begin) : 0;
            l.p[4 + j] = 1;
        }
        if (dst != y) layer(n, MK_OP_COPY, {dst}, y, "copy");
        begin += count;
    }
}

void Converter::tfl_pack(const Node& n) {
    const Value& x0 = g_.value(n.input(0), n.label());
    const int64_t r = int64_t(x0.shape.size());
    int64_t axis = drv::ir::attr_int(n.attrs, "axis", 0);
    if (axis < 0) axis += r + 1;
    if (axis < 0 || axis > r) throw ConvertError(n.label() + ": axis out of range");
    if (n.inputs.size() > MK_BLOB_MAX_IN) throw no_kernel(n, "PACK of more than 4 inputs");
    const uint32_t y = act(n.outputs.at(0));
    int32_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= int32_t(x0.shape[size_t(d)]);
    for (int64_t d = axis; d < r; ++d) inner *= int32_t(x0.shape[size_t(d)]);
    std::vector<uint32_t> ins;
    for (const auto& in : n.inputs) {
        const uint32_t t = act(in);
        if (t_[t].rec.dtype == MK_DT_S8 && (t_[t].rec.scale != t_[y].rec.scale || t_[t].rec.zero_point != t_[y].rec.zero_point))
            throw no_kernel(n, "int8 PACK with requantizing inputs");
        ins.push_back(t);
    }
    mk_blob_layer& l = layer(n, MK_OP_CONCAT, ins, y, "concat");
    l.p[0] = outer;
    l.p[1] = inner;
    l.p[2] = int32_t(mk_elem(t_[y].rec.dtype));
    for (size_t k = 0; k < ins.size(); ++k) l.p[3 + k] = 1;
}

void Converter::tfl_argmax(const Node& n) {
    const Value& xv = g_.value(n.input(0), n.label());
    int64_t axis = const_ints(n, 1).at(0);
    if (axis < 0) axis += int64_t(xv.shape.size());
    if (axis != int64_t(xv.shape.size()) - 1) throw no_kernel(n, n.op_type + " other than over the last axis");
    const uint32_t x = act(n.input(0)), y = act(n.outputs.at(0));
    if (t_[x].rec.dtype == MK_DT_S32) throw no_kernel(n, n.op_type + " of int32");
    const bool mn = n.op_type == "ARG_MIN";
    layer(n, mn ? MK_OP_ARGMIN : MK_OP_ARGMAX, {x}, y, mn ? "argmin" : "argmax");
}

void Converter::tfl_prelu(const Node& n) {
    const uint32_t x = act(n.input(0)), y = act(n.outputs.at(0));
    const num::Tensor& a = cval(n, 1);
    const int32_t C = t_[x].rec.dims[3];
    if (t_[x].rec.dtype != MK_DT_F32 || a.dtype() != num::DType::F32) throw no_kernel(n, "quantized PRELU");
    if (a.numel() != 1 && int32_t(a.numel()) != C) throw no_kernel(n, "PRELU with an alpha other than one value or one per channel");
    const uint32_t at = add_const(MK_DT_F32, std::vector<uint8_t>(a.raw(), a.raw() + a.nbytes()), {1, 1, 1, int32_t(a.numel())});
    layer(n, MK_OP_PRELU_F32, {x, at}, y, "prelu_f32", t_[y].rec.bytes / 4);
}

/// SUM / REDUCE_MAX / REDUCE_MIN (float and int8) and int8 MEAN beyond H and W, over adjacent axes.
void Converter::tfl_reduce(const Node& n) {
    const Value& xv = g_.value(n.input(0), n.label());
    const size_t r = xv.shape.size();
    std::vector<int> st;
    for (int64_t ax : const_ints(n, 1)) {
        if (ax < -int64_t(r) || ax >= int64_t(r)) throw ConvertError(n.label() + ": axis out of range");
        st.push_back(int(ax < 0 ? ax + int64_t(r) : ax) + int(4 - r));
    }
    std::sort(st.begin(), st.end());
    st.erase(std::unique(st.begin(), st.end()), st.end());
    if (st.empty()) throw ConvertError(n.label() + ": empty axes");
    for (size_t k = 1; k < st.size(); ++k)
        if (st[k] != st[k - 1] + 1) throw no_kernel(n, n.op_type + " over non-adjacent axes");
    const uint32_t x = act(n.input(0)), y = act(n.outputs.at(0));
    const auto& d = t_[x].rec.dims;
    int32_t outer = 1, axis = 1, inner = 1;
    for (int j = 0; j < 4; ++j) (j < st.front() ? outer : j > st.back() ? inner : axis) *= d[j];
    if (uint64_t(outer) * uint64_t(inner) != t_[y].rec.bytes / mk_elem(t_[y].rec.dtype)) throw ConvertError(n.label() + ": output size differs from the reduction's");
    const int red = n.op_type == "MEAN" ? MK_RED_MEAN : n.op_type == "SUM" ? MK_RED_SUM : n.op_type == "REDUCE_MAX" ? MK_RED_MAX : MK_RED_MIN;
    if (t_[x].rec.dtype == MK_DT_F32) {
        mk_blob_layer& l = layer(n, MK_OP_REDUCE_F32, {x}, y, "reduce_f32", t_[x].rec.bytes / 4);
        l.p[0] = red;
        l.p[1] = outer;
        l.p[2] = axis;
        l.p[3] = inner;
        return;
    }
    if (t_[x].rec.dtype != MK_DT_S8 || t_[y].rec.dtype != MK_DT_S8) throw no_kernel(n, n.op_type + " on this type");
    mk_blob_layer& l = layer(n, MK_OP_REDUCE_S8, {x}, y, "reduce_s8", t_[x].rec.bytes);
    l.p[0] = red;
    l.p[1] = outer;
    l.p[2] = axis;
    l.p[3] = inner;
    if (red == MK_RED_MAX || red == MK_RED_MIN) {  // the codes: TFLite requires one quantization
        if (t_[x].rec.scale != t_[y].rec.scale || t_[x].rec.zero_point != t_[y].rec.zero_point)
            throw no_kernel(n, "int8 " + n.op_type + " with an output quantized unlike the input");
        return;
    }
    // Exact sum of (x - zx), MultiplyByQuantizedMultiplier with s_x / (s_y [* count]) (num::tfl reduce).
    const double real = double(t_[x].rec.scale) / (double(t_[y].rec.scale) * (red == MK_RED_MEAN ? double(axis) : 1.0));
    const num::tfl::QuantizedMultiplier q = num::tfl::quantize_multiplier(real);
    l.p[4] = q.multiplier;
    l.p[5] = q.shift;
}

/// GATHER of constant indices (batch_dims 0) along any axis: one row copy per index.
void Converter::tfl_gather(const Node& n) {
    const Value& xv = g_.value(n.input(0), n.label());
    if (!g_.value(n.input(1), n.label()).is_constant()) throw no_kernel(n, "GATHER of runtime indices");
    if (drv::ir::attr_int(n.attrs, "batch_dims", 0) != 0) throw no_kernel(n, "GATHER with batch_dims != 0");
    const std::vector<int64_t> idx = const_ints(n, 1);
    const int64_t r = int64_t(xv.shape.size());
    int64_t axis = drv::ir::attr_int(n.attrs, "axis", 0);
    if (axis < 0) axis += r;
    if (axis < 0 || axis >= r || r > 4) throw ConvertError(n.label() + ": axis out of range");
    const uint32_t x = act(n.input(0)), y = act(n.outputs.at(0));
    copy_quant_or_refuse(n, x, y);
    const int saxis = int(axis) + int(4 - r);
    const std::array<int32_t, 4> d{t_[x].rec.dims[0], t_[x].rec.dims[1], t_[x].rec.dims[2], t_[x].rec.dims[3]};  // add_const grows t_
    int32_t outer = 1, inner = 1;
    for (int j = 0; j < saxis; ++j) outer *= d[j];
    for (int j = saxis + 1; j < 4; ++j) inner *= d[j];
    std::vector<int32_t> iv;
    for (int64_t k : idx) {
        if (k < 0 || k >= d[saxis]) throw ConvertError(n.label() + ": index " + std::to_string(k) + " out of range [0, " + std::to_string(d[saxis]) + ")");
        iv.push_back(int32_t(k));
    }
    if (iv.empty() || uint64_t(outer) * iv.size() * uint64_t(inner) != t_[y].rec.bytes / mk_elem(t_[y].rec.dtype))
        throw ConvertError(n.label() + ": output size differs from the gather's");
    const uint32_t it = add_const(MK_DT_S32, as_bytes(iv), {1, 1, 1, int32_t(iv.size())});
    mk_blob_layer& l = layer(n, MK_OP_GATHER, {x, it}, y, "gather");
    const int32_t p[5] = {outer, d[saxis], inner, int32_t(iv.size()), int32_t(mk_elem(t_[x].rec.dtype))};
    std::copy(p, p + 5, l.p);
}

/// TILE by constant multiples, rank <= 4.
void Converter::tfl_tile(const Node& n) {
    const Value& xv = g_.value(n.input(0), n.label());
    const std::vector<int64_t> m = const_ints(n, 1);
    const size_t r = xv.shape.size();
    if (m.size() != r || r > 4) throw ConvertError(n.label() + ": multiples must have one entry per axis (rank <= 4)");
    const uint32_t x = act(n.input(0)), y = act(n.outputs.at(0));
    copy_quant_or_refuse(n, x, y);
    mk_blob_layer& l = layer(n, MK_OP_TILE, {x}, y, "tile");
    for (int j = 0; j < 4; ++j) l.p[j] = 1;
    for (size_t a = 0; a < r; ++a) {
        if (m[a] <= 0) throw no_kernel(n, "TILE with a multiple <= 0");
        l.p[a + (4 - r)] = int32_t(m[a]);
    }
    for (int j = 0; j < 4; ++j)
        if (int64_t(t_[x].rec.dims[j]) * l.p[j] != t_[y].rec.dims[j]) throw ConvertError(n.label() + ": output shape differs from the tile's");
    l.p[4] = int32_t(mk_elem(t_[x].rec.dtype));
}

void Converter::tfl_node(const Node& n) {
    const std::string& op = n.op_type;
    if (op == "CONV_2D") return tfl_conv(n, false);
    if (op == "DEPTHWISE_CONV_2D") return tfl_conv(n, true);
    if (op == "FULLY_CONNECTED") return tfl_fc(n);
    if (op == "ADD" || op == "SUB" || op == "MUL" || op == "DIV" || op == "MAXIMUM" || op == "MINIMUM") return tfl_binary(n);
    if (op == "AVERAGE_POOL_2D") return tfl_pool(n, false);
    if (op == "MAX_POOL_2D") return tfl_pool(n, true);
    if (op == "MEAN") return tfl_mean(n);
    if (op == "SOFTMAX" || op == "LOG_SOFTMAX") return tfl_softmax(n);
    if (op == "RESHAPE" || op == "SQUEEZE" || op == "EXPAND_DIMS") return tfl_copy(n);
    if (op == "CONCATENATION") return tfl_concat(n);
    if (op == "PAD" || op == "PADV2") return tfl_pad(n);
    if (op == "QUANTIZE" || op == "DEQUANTIZE") return tfl_quantize(n);
    if (op == "TRANSPOSE") return tfl_transpose(n);
    if (op == "SLICE" || op == "STRIDED_SLICE") return tfl_slice(n);
    if (op == "SPLIT" || op == "SPLIT_V" || op == "UNPACK") return tfl_split(n);
    if (op == "PACK") return tfl_pack(n);
    if (op == "ARG_MAX" || op == "ARG_MIN") return tfl_argmax(n);
    if (op == "PRELU") return tfl_prelu(n);
    if (op == "SUM" || op == "REDUCE_MAX" || op == "REDUCE_MIN") return tfl_reduce(n);
    if (op == "RESIZE_NEAREST_NEIGHBOR" || op == "RESIZE_BILINEAR") return tfl_resize(n, op == "RESIZE_BILINEAR");
    if (op == "BATCH_MATMUL") return tfl_batch_matmul(n);
    if (op == "TRANSPOSE_CONV") return tfl_transpose_conv(n);
    if (op == "GATHER") return tfl_gather(n);
    if (op == "TILE") return tfl_tile(n);
    static const std::set<std::string> kUnary{"RELU", "RELU6", "RELU_N1_TO_1", "LOGISTIC", "TANH", "HARD_SWISH", "LEAKY_RELU",
                                              "ELU", "ABS", "NEG", "EXP", "LOG", "SQRT", "RSQRT", "SIN", "COS", "SQUARE",
                                              "FLOOR", "CEIL", "ROUND", "GELU"};
    if (kUnary.count(op)) return tfl_unary(n);
    throw ConvertError(n.label() + ": no MCU kernel yet for TFLite " + op);
}

}  // namespace mcu::detail
