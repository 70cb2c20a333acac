// SPDX-License-Identifier: MIT
// Graph -> MCU blob: TFLite RESIZE_NEAREST_NEIGHBOR / RESIZE_BILINEAR, BATCH_MATMUL and TRANSPOSE_CONV
// (float32 and int8 with TFLite's arithmetic, numerics/src/tflite/tfl_resize_matmul.cpp), ONNX
// ConvTranspose (float, group 1, pads / auto_pad / output_padding / dilations) and ONNX MatMul of two
// runtime tensors or of rank > 2 (batched, float). Weights of the transposed convolutions are stored
// [OC][KH][KW][IC] (TFLite's layout; ONNX W [IC, OC, KH, KW] is re-laid out here).
#include "blob_converter.h"
#include "numerics/tflite_quant.h"

namespace mcu::detail {
namespace {

ConvertError no_kernel(const Node& n, const std::string& what) { return ConvertError(n.label() + ": no MCU kernel yet for " + what); }

}  // namespace

void Converter::tfl_resize(const Node& n, bool bilinear) {
    const Value& xv = g_.value(n.input(0), n.label());
    const Value& ov = g_.value(n.outputs.at(0), n.label());
    if (xv.shape.size() != 4 || ov.shape.size() != 4 || xv.shape[0] != ov.shape[0] || xv.shape[3] != ov.shape[3])
        throw ConvertError(n.label() + ": resize of H/W of a 4-D NHWC tensor only (seed 000: N and C equal to the input)");
    const std::vector<int64_t> size = const_ints(n, 1);
    if (size.size() != 2 || size[0] != ov.shape[1] || size[1] != ov.shape[2]) throw ConvertError(n.label() + ": size must be a constant [H, W] matching the output");
    const int align = drv::ir::attr_int(n.attrs, "align_corners", 0) != 0, half = drv::ir::attr_int(n.attrs, "half_pixel_centers", 0) != 0;
    if (align && half) throw ConvertError(n.label() + ": align_corners and half_pixel_centers are exclusive");
    const uint32_t x = act(n.input(0)), y = act(n.outputs.at(0));
    if (t_[x].rec.dtype != t_[y].rec.dtype) throw ConvertError(n.label() + ": input and output types differ");
    if (t_[x].rec.dtype == MK_DT_S8) {
        if (t_[x].rec.scale != t_[y].rec.scale || t_[x].rec.zero_point != t_[y].rec.zero_point)
            throw no_kernel(n, "int8 resize that requantizes (TFLite: input and output share the quantization)");
    } else if (t_[x].rec.dtype != MK_DT_F32) {
        throw no_kernel(n, "this resize type");
    }
    mk_blob_layer& l = layer(n, MK_OP_RESIZE_TFL, {x}, y, bilinear ? "resize_bilinear_tfl" : "resize_nearest_tfl",
                             bilinear ? t_[y].rec.bytes / mk_elem(t_[y].rec.dtype) * 4 : 0);
    l.p[0] = bilinear ? 1 : 0;
    l.p[1] = align;
    l.p[2] = half;
}

void Converter::tfl_batch_matmul(const Node& n) {
    const Value& xv = g_.value(n.input(0), n.label());
    const Value& wv = g_.value(n.input(1), n.label());
    const size_t rx = xv.shape.size(), rw = wv.shape.size();
    if (rx < 2 || rw < 2 || rx > 4 || rw > 4) throw ConvertError(n.label() + ": operands of rank 2..4");
    const bool ax = drv::ir::attr_int(n.attrs, "adj_x", 0) != 0, ay = drv::ir::attr_int(n.attrs, "adj_y", 0) != 0;
    const int64_t M = ax ? xv.shape[rx - 1] : xv.shape[rx - 2], K = ax ? xv.shape[rx - 2] : xv.shape[rx - 1];
    const int64_t N = ay ? wv.shape[rw - 2] : wv.shape[rw - 1];
    if ((ay ? wv.shape[rw - 1] : wv.shape[rw - 2]) != K) throw ConvertError(n.label() + ": inner dimensions differ");
    int64_t bx = 1, bw = 1;
    for (size_t i = 0; i + 2 < rx; ++i) bx *= xv.shape[i];
    for (size_t i = 0; i + 2 < rw; ++i) bw *= wv.shape[i];
    const std::vector<int64_t> lx(xv.shape.begin(), xv.shape.end() - 2), lw(wv.shape.begin(), wv.shape.end() - 2);
    // Seed 000 BatchMatmul: no broadcast (leading dims equal); a rank-2 y shared by every batch is the
    // one sharing the kernel also takes (batch stride 0).
    if (lx != lw && !(lw.empty() || bw == 1)) throw no_kernel(n, "BATCH_MATMUL with broadcast batch dims (seed 000: no broadcast)");
    const uint32_t x = act(n.input(0)), w = act(n.input(1)), y = act(n.outputs.at(0));
    if (t_[x].rec.dtype != t_[w].rec.dtype || t_[y].rec.dtype != t_[x].rec.dtype) throw ConvertError(n.label() + ": operand types differ");
    mk_blob_layer& l = layer(n, MK_OP_BATCH_MATMUL, {x, w}, y, "batch_matmul", uint64_t(bx * M * N * K));
    const int32_t p[8] = {int32_t(bx), int32_t(M), int32_t(K), int32_t(N), ax, ay, int32_t(M * K), bw == 1 ? 0 : int32_t(K * N)};
    std::copy(p, p + 8, l.p);
    if (t_[x].rec.dtype == MK_DT_S8) {
        const double real = double(t_[x].rec.scale) * double(t_[w].rec.scale) / double(t_[y].rec.scale);
        const num::tfl::QuantizedMultiplier q = num::tfl::quantize_multiplier(real);
        const int32_t s8[7] = {t_[x].rec.zero_point, t_[w].rec.zero_point, t_[y].rec.zero_point, q.multiplier, q.shift, -128, 127};
        std::copy(s8, s8 + 7, l.p + 8);
    } else if (t_[x].rec.dtype != MK_DT_F32) {
        throw no_kernel(n, "this BATCH_MATMUL type");
    }
}

void Converter::tfl_transpose_conv(const Node& n) {
    const Value& wv = g_.value(n.input(1), n.label());
    const Value& xv = g_.value(n.input(2), n.label());
    const Value& ov = g_.value(n.outputs.at(0), n.label());
    if (!wv.is_constant() || wv.data->rank() != 4 || xv.shape.size() != 4 || ov.shape.size() != 4)
        throw ConvertError(n.label() + ": filter [OC, KH, KW, IC] constant and 4-D NHWC input/output");
    const num::Tensor& w = *wv.data;
    const int64_t OC = w.dim(0), KH = w.dim(1), KW = w.dim(2), IC = w.dim(3);
    if (IC != xv.shape[3] || OC != ov.shape[3]) throw ConvertError(n.label() + ": filter channels do not match the input/output");
    const int64_t sh = drv::ir::attr_int(n.attrs, "stride_h", 1), sw = drv::ir::attr_int(n.attrs, "stride_w", 1);
    const std::string pad = drv::ir::attr_string(n.attrs, "padding", "SAME");
    int64_t ch = 0, cw = 0, pt = 0, pl = 0;  // padding of the forward conv over the output size (TFLite)
    if (!num::tfl::padding_1d(pad, ov.shape[1], KH, sh, 1, ch, pt) || !num::tfl::padding_1d(pad, ov.shape[2], KW, sw, 1, cw, pl))
        throw ConvertError(n.label() + ": bad padding/stride");
    const std::string a = drv::ir::attr_string(n.attrs, "fused_activation_function", "NONE");
    const uint32_t x = act(n.input(2)), y = act(n.outputs.at(0));
    const uint64_t macs = uint64_t(xv.shape[0] * xv.shape[1] * xv.shape[2]) * uint64_t(IC * KH * KW * OC);
    std::vector<uint8_t> wbytes(w.raw(), w.raw() + w.nbytes());
    const std::vector<int32_t> wd{int32_t(OC), int32_t(KH), int32_t(KW), int32_t(IC)};
    if (t_[x].rec.dtype == MK_DT_F32) {
        if (w.dtype() != num::DType::F32) throw ConvertError(n.label() + ": float input with a non-float filter");
        if (a != "NONE" && a != "RELU" && a != "RELU6") throw no_kernel(n, "TRANSPOSE_CONV fused activation " + a);
        std::vector<float> bias(size_t(OC), 0.0f);
        if (n.has_input(3)) {
            const num::Tensor& b = cval(n, 3);
            if (b.dtype() != num::DType::F32 || int64_t(b.numel()) != OC) throw ConvertError(n.label() + ": bias must be float32[OC]");
            std::copy(b.data<float>(), b.data<float>() + OC, bias.begin());
        }
        mk_blob_layer& l = layer(n, MK_OP_TCONV_F32, {x, add_const(MK_DT_F32, wbytes, wd), add_const(MK_DT_F32, as_bytes(bias), {1, 1, 1, int32_t(OC)})},
                                 y, "transpose_conv_f32", macs);
        const float lo = a == "NONE" ? -INFINITY : 0.0f, hi = a == "RELU6" ? 6.0f : INFINITY;
        const int32_t p[10] = {int32_t(sh), int32_t(sw), 1, 1, int32_t(pt), int32_t(pl), int32_t(KH), int32_t(KW), f2i(lo), f2i(hi)};
        std::copy(p, p + 10, l.p);
        return;
    }
    if (t_[x].rec.dtype != MK_DT_S8 || w.dtype() != num::DType::I8) throw no_kernel(n, "TRANSPOSE_CONV of this type (int8 or float32)");
    const auto& wq = wv.quant;
    if (wq.empty() || (wq.scale.size() != 1 && int64_t(wq.scale.size()) != OC)) throw ConvertError(n.label() + ": filter quantization per tensor or per output channel");
    for (int32_t z : wq.zero_point)
        if (z != 0) throw ConvertError(n.label() + ": int8 filters must be symmetric (zero point 0)");
    std::vector<int32_t> bias(static_cast<size_t>(OC), 0), mult(static_cast<size_t>(OC)), shift(static_cast<size_t>(OC));
    if (n.has_input(3)) {
        const num::Tensor& b = cval(n, 3);
        if (b.dtype() != num::DType::I32 || int64_t(b.numel()) != OC) throw ConvertError(n.label() + ": bias must be int32[OC]");
        std::copy(b.data<int32_t>(), b.data<int32_t>() + OC, bias.begin());
    }
    for (int64_t c = 0; c < OC; ++c) {
        const double real = double(t_[x].rec.scale) * double(wq.scale[wq.scale.size() > 1 ? size_t(c) : 0]) / double(t_[y].rec.scale);
        const num::tfl::QuantizedMultiplier q = num::tfl::quantize_multiplier(real);
        mult[size_t(c)] = q.multiplier, shift[size_t(c)] = q.shift;
    }
    int32_t lo = -128, hi = 127;
    if (!num::tfl::activation_range(a, t_[y].rec.scale, t_[y].rec.zero_point, lo, hi)) throw no_kernel(n, "TRANSPOSE_CONV fused activation " + a);
    const uint32_t st = add_const(MK_DT_S32, as_bytes(shift), {1, 1, 1, int32_t(OC)});
    mk_blob_layer& l = layer(n, MK_OP_TCONV_S8,
                             {x, add_const(MK_DT_S8, wbytes, wd), add_const(MK_DT_S32, as_bytes(bias), {1, 1, 1, int32_t(OC)}),
                              add_const(MK_DT_S32, as_bytes(mult), {1, 1, 1, int32_t(OC)})},
                             y, "transpose_conv_s8", macs);
    const int32_t p[12] = {int32_t(sh), int32_t(sw), 1, 1, int32_t(pt), int32_t(pl), int32_t(KH), int32_t(KW), lo, hi, int32_t(st), 2};
    std::copy(p, p + 12, l.p);
}

// ONNX ConvTranspose, group 1 (seed 000), float: output size from the graph's output value (the
// importer's shape inference: stride*(in-1) + output_padding + (k-1)*dilation + 1 - pads), the
// leading pads from pads / auto_pad (SAME_UPPER: total/2 at the start, SAME_LOWER: total - total/2).
void Converter::conv_transpose_f32(const Node& n) {
    const Value& xv = g_.value(n.input(0), n.label());
    const Value& ov = g_.value(n.outputs.at(0), n.label());
    const num::Tensor& w = cval(n, 1);
    if (xv.shape.size() != 4 || ov.shape.size() != 4 || w.rank() != 4) throw ConvertError(n.label() + ": ConvTranspose of 4-D NCHW tensors only (seed 000)");
    if (drv::ir::attr_int(n.attrs, "group", 1) != 1) throw no_kernel(n, "ConvTranspose with group > 1 (seed 000: group 1)");
    if (!drv::ir::attr_ints(n.attrs, "output_shape", {}).empty()) throw no_kernel(n, "ConvTranspose output_shape (seed 000: not supported)");
    if (w.dtype() != num::DType::F32) throw ConvertError(n.label() + ": W must be a float32 constant");
    const int64_t IC = w.dim(0), OC = w.dim(1), KH = w.dim(2), KW = w.dim(3);
    if (IC != xv.shape[1] || OC != ov.shape[1]) throw ConvertError(n.label() + ": W [C_in, C_out, kH, kW] does not match the input/output");
    const auto st = drv::ir::attr_ints(n.attrs, "strides", {1, 1}), dl = drv::ir::attr_ints(n.attrs, "dilations", {1, 1});
    const auto op = drv::ir::attr_ints(n.attrs, "output_padding", {0, 0});
    if (st.size() != 2 || dl.size() != 2 || op.size() != 2) throw ConvertError(n.label() + ": strides, dilations, output_padding need 2 elements");
    const std::string ap = drv::ir::attr_string(n.attrs, "auto_pad", "NOTSET");
    const int64_t k[2] = {KH, KW}, in[2] = {xv.shape[2], xv.shape[3]}, out[2] = {ov.shape[2], ov.shape[3]};
    int64_t lead[2] = {0, 0};
    for (int i = 0; i < 2; ++i) {
        const size_t u = size_t(i);
        const int64_t full = st[u] * (in[i] - 1) + op[u] + (k[i] - 1) * dl[u] + 1;  // before any padding
        int64_t want = full;
        if (ap == "NOTSET") {
            const auto pd = drv::ir::attr_ints(n.attrs, "pads", {0, 0, 0, 0});
            if (pd.size() != 4) throw ConvertError(n.label() + ": pads need 4 elements");
            lead[i] = pd[u];
            want = full - pd[u] - pd[u + 2];
        } else if (ap == "SAME_UPPER" || ap == "SAME_LOWER") {
            want = in[i] * st[u];
            const int64_t total = full - want;
            lead[i] = ap == "SAME_UPPER" ? total / 2 : total - total / 2;
        } else if (ap != "VALID") {
            throw ConvertError(n.label() + ": auto_pad " + ap);
        }
        if (want != out[i]) throw ConvertError(n.label() + ": output size " + std::to_string(out[i]) + " disagrees with the attributes (" + std::to_string(want) + ")");
    }
    const int64_t pt = lead[0], pl = lead[1];
    std::vector<float> wk(size_t(OC * KH * KW * IC));  // [IC][OC][KH][KW] -> [OC][KH][KW][IC]
    for (int64_t i = 0; i < IC; ++i)
        for (int64_t o = 0; o < OC; ++o)
            for (int64_t ky = 0; ky < KH; ++ky)
                for (int64_t kx = 0; kx < KW; ++kx)
                    wk[size_t(((o * KH + ky) * KW + kx) * IC + i)] = w.data<float>()[((i * OC + o) * KH + ky) * KW + kx];
    std::vector<float> bias(size_t(OC), 0.0f);
    if (n.has_input(2)) {
        const num::Tensor& b = cval(n, 2);
        if (b.dtype() != num::DType::F32 || int64_t(b.numel()) != OC) throw ConvertError(n.label() + ": B must be float32[C_out]");
        std::copy(b.data<float>(), b.data<float>() + OC, bias.begin());
    }
    const uint32_t x = act(n.input(0)), y = act(n.outputs.at(0));
    if (t_[x].rec.dtype != MK_DT_F32) throw no_kernel(n, "int8 ConvTranspose outside a float region");
    mk_blob_layer& l = layer(n, MK_OP_TCONV_F32,
                             {x, add_const(MK_DT_F32, as_bytes(wk), {int32_t(OC), int32_t(KH), int32_t(KW), int32_t(IC)}),
                              add_const(MK_DT_F32, as_bytes(bias), {1, 1, 1, int32_t(OC)})},
                             y, "transpose_conv_f32", uint64_t(xv.shape[0] * xv.shape[2] * xv.shape[3]) * uint64_t(IC * OC * KH * KW));
    const int32_t p[10] = {int32_t(st[0]), int32_t(st[1]), int32_t(dl[0]), int32_t(dl[1]), int32_t(pt), int32_t(pl), int32_t(KH), int32_t(KW),
                           f2i(-INFINITY), f2i(INFINITY)};
    std::copy(p, p + 10, l.p);
}

// ONNX MatMul (float) of a runtime B, or of rank > 2 operands: batched over equal leading dims (seed
// 000 Matmul: no broadcast), or with a rank-2 B shared by every batch. Ranks 3/4 are stored as they are
// (the MCU keeps rank < 4 right-aligned; a rank-4 operand is NCHW-permuted, so rank 4 is refused).
void Converter::matmul_rt(const Node& n) {
    const Value& xv = g_.value(n.input(0), n.label());
    const Value& wv = g_.value(n.input(1), n.label());
    const size_t rx = xv.shape.size(), rw = wv.shape.size();
    if (rx < 2 || rw < 2 || rx > 3 || rw > 3) throw no_kernel(n, "MatMul of rank " + std::to_string(std::max(rx, rw)) + " operands (ranks 2 and 3)");
    const int64_t M = xv.shape[rx - 2], K = xv.shape[rx - 1], N = wv.shape[rw - 1];
    if (wv.shape[rw - 2] != K) throw ConvertError(n.label() + ": inner dimensions differ");
    const int64_t bx = rx == 3 ? xv.shape[0] : 1, bw = rw == 3 ? wv.shape[0] : 1;
    if (bw != 1 && bw != bx) throw no_kernel(n, "MatMul with broadcast batch dims (seed 000: no broadcast)");
    const uint32_t x = act(n.input(0)), w = act(n.input(1)), y = act(n.outputs.at(0));
    if (t_[x].rec.dtype != MK_DT_F32 || t_[w].rec.dtype != MK_DT_F32) throw no_kernel(n, "int8 MatMul of runtime tensors");
    mk_blob_layer& l = layer(n, MK_OP_BATCH_MATMUL, {x, w}, y, "batch_matmul", uint64_t(bx * M * N * K));
    const int32_t p[8] = {int32_t(bx), int32_t(M), int32_t(K), int32_t(N), 0, 0, int32_t(M * K), bw == 1 ? 0 : int32_t(K * N)};
    std::copy(p, p + 8, l.p);
}

}  // namespace mcu::detail
