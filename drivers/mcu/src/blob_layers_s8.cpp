// SPDX-License-Identifier: MIT
// Graph -> MCU blob: int8 layers (conv, gemm, pools, eltwise, LUT activations, quantize, concat).
#include "blob_converter.h"

namespace mcu::detail {

void Converter::conv_s8(const Node& n) {
    // QLinearConv: x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, B
    const uint32_t x = act(n.input(0)), y = act(n.outputs.at(0));
    const float xs = cf(n, 1), ys = cf(n, 6);
    const int32_t xz = czp(n, 2), yz = czp(n, 7);
    set_quant(x, xs, xz);
    set_quant(y, ys, yz);
    const num::Tensor& w = cval(n, 3);
    if (w.dtype() != num::DType::I8 || w.rank() != 4) throw ConvertError(n.label() + ": weights must be int8 [M, C/g, kh, kw]");
    if (n.has_input(5)) {
        const num::Tensor& wz = cval(n, 5);
        for (size_t i = 0; i < wz.numel(); ++i)
            if (wz.data<int8_t>()[i] != 0) throw ConvertError(n.label() + ": weight zero points must be 0 (symmetric int8 weights, seed 000 s1.4 rule 8)");
    }
    const int64_t M = w.dim(0), Cg = w.dim(1), kh = w.dim(2), kw = w.dim(3);
    const int64_t group = drv::ir::attr_int(n.attrs, "group", 1);
    const int64_t cin = t_[x].rec.dims[3];
    const bool dw = group > 1 && group == cin && Cg == 1 && M % cin == 0;
    if (group != 1 && !dw) throw ConvertError(n.label() + ": grouped convolution with group=" + std::to_string(group) + " is neither plain nor depthwise");
    const Geo geo = conv_geo(n, kh, kw);
    std::vector<int8_t> wk(size_t(M * Cg * kh * kw));
    const int8_t* src = w.data<int8_t>();
    for (int64_t o = 0; o < M; ++o)
        for (int64_t i = 0; i < Cg; ++i)
            for (int64_t ky = 0; ky < kh; ++ky)
                for (int64_t kx = 0; kx < kw; ++kx) {
                    const int8_t v = src[((o * Cg + i) * kh + ky) * kw + kx];
                    if (dw) wk[size_t((ky * kw + kx) * M + o)] = v;
                    else wk[size_t(((o * kh + ky) * kw + kx) * Cg + i)] = v;
                }
    const uint32_t wt = add_const(MK_DT_S8, as_bytes(wk), {int32_t(M), int32_t(kh), int32_t(kw), int32_t(Cg)});
    std::vector<int32_t> bias(size_t(M), 0);
    if (n.has_input(8)) {
        const num::Tensor& b = cval(n, 8);
        if (b.dtype() != num::DType::I32 || int64_t(b.numel()) != M) throw ConvertError(n.label() + ": bias must be int32[M]");
        std::copy(b.data<int32_t>(), b.data<int32_t>() + M, bias.begin());
    }
    const uint32_t bt = add_const(MK_DT_S32, as_bytes(bias), {1, 1, 1, int32_t(M)});
    const std::vector<float> ws = cfs(n, 4);
    if (ws.size() != 1 && int64_t(ws.size()) != M) throw ConvertError(n.label() + ": w_scale must be scalar or [M]");
    uint32_t rq, shift_t = 0;
    if (opts_.float_requant) {
        std::vector<float> fs(static_cast<size_t>(M));
        for (int64_t m = 0; m < M; ++m) fs[size_t(m)] = xs * ws[ws.size() > 1 ? size_t(m) : 0] / ys;  // num::QLinearConv's expression
        rq = add_const(MK_DT_F32, as_bytes(fs), {1, 1, 1, int32_t(M)});
    } else {
        std::vector<int32_t> mult(static_cast<size_t>(M)), sh(static_cast<size_t>(M));
        for (int64_t m = 0; m < M; ++m) {
            const mk_qscale q = mk_quantize_scale(double(xs) * double(ws[ws.size() > 1 ? size_t(m) : 0]) / double(ys));
            mult[size_t(m)] = q.multiplier;
            sh[size_t(m)] = q.shift;
        }
        rq = add_const(MK_DT_S32, as_bytes(mult), {1, 1, 1, int32_t(M)});
        shift_t = add_const(MK_DT_S32, as_bytes(sh), {1, 1, 1, int32_t(M)});
    }
    const auto& od = t_[y].rec.dims;
    const uint64_t macs = uint64_t(od[0]) * od[1] * od[2] * od[3] * uint64_t(kh * kw * Cg);
    mk_blob_layer& l = layer(n, dw ? MK_OP_DWCONV_S8 : MK_OP_CONV2D_S8, {x, wt, bt, rq}, y, dw ? "dwconv_s8" : "conv2d_s8", macs);
    const int32_t p[12] = {geo.sh, geo.sw, geo.dh, geo.dw, geo.pt, geo.pl, geo.kh, geo.kw, -128, 127, int32_t(shift_t), opts_.float_requant ? 1 : 0};
    std::copy(p, p + 12, l.p);
}

void Converter::gemm_s8(const Node& n, bool qgemm) {
    // QGemm: A, a_scale, a_zp, B, b_scale, b_zp, C, y_scale, y_zp ; QLinearMatMul: a, as, az, b, bs, bz, ys, yz
    const size_t ys_i = qgemm ? 7 : 6, yz_i = qgemm ? 8 : 7;
    if (qgemm && !n.has_input(ys_i)) throw ConvertError(n.label() + ": QGemm with float output is not supported");
    if (qgemm && (drv::ir::attr_int(n.attrs, "transA", 0) != 0 || drv::ir::attr_float(n.attrs, "alpha", 1.0f) != 1.0f))
        throw ConvertError(n.label() + ": transA=1 / alpha != 1 are not supported");
    const uint32_t x = act(n.input(0)), y = act(n.outputs.at(0));
    const float xs = cf(n, 1), ys = cf(n, ys_i);
    const int32_t xz = czp(n, 2), yz = czp(n, yz_i);
    set_quant(x, xs, xz);
    set_quant(y, ys, yz);
    const num::Tensor& w = cval(n, 3);
    if (w.dtype() != num::DType::I8 || w.rank() != 2) throw ConvertError(n.label() + ": B must be a constant int8 matrix");
    if (n.has_input(5)) {
        const num::Tensor& wz = cval(n, 5);
        for (size_t i = 0; i < wz.numel(); ++i)
            if (wz.data<int8_t>()[i] != 0) throw ConvertError(n.label() + ": b zero points must be 0 (symmetric weights)");
    }
    const bool transB = qgemm && drv::ir::attr_int(n.attrs, "transB", 0) != 0;
    const int64_t N = transB ? w.dim(0) : w.dim(1), K = transB ? w.dim(1) : w.dim(0);
    std::vector<int8_t> wk(size_t(N * K));
    for (int64_t j = 0; j < N; ++j)
        for (int64_t k = 0; k < K; ++k) wk[size_t(j * K + k)] = transB ? w.data<int8_t>()[j * K + k] : w.data<int8_t>()[k * N + j];
    const uint32_t wt = add_const(MK_DT_S8, as_bytes(wk), {1, 1, int32_t(N), int32_t(K)});
    std::vector<int32_t> bias(size_t(N), 0);
    if (qgemm && n.has_input(6)) {
        const num::Tensor& b = cval(n, 6);
        if (b.dtype() != num::DType::I32 || int64_t(b.numel()) != N) throw ConvertError(n.label() + ": C must be int32[N]");
        std::copy(b.data<int32_t>(), b.data<int32_t>() + N, bias.begin());
    }
    const uint32_t bt = add_const(MK_DT_S32, as_bytes(bias), {1, 1, 1, int32_t(N)});
    const std::vector<float> ws = cfs(n, 4);
    uint32_t rq, shift_t = 0;
    if (opts_.float_requant) {
        std::vector<float> fs(static_cast<size_t>(N));
        for (int64_t j = 0; j < N; ++j) fs[size_t(j)] = xs * ws[ws.size() > 1 ? size_t(j) : 0] / ys;  // num's expression
        rq = add_const(MK_DT_F32, as_bytes(fs), {1, 1, 1, int32_t(N)});
    } else {
        std::vector<int32_t> mult(static_cast<size_t>(N)), sh(static_cast<size_t>(N));
        for (int64_t j = 0; j < N; ++j) {
            const mk_qscale q = mk_quantize_scale(double(xs) * double(ws[ws.size() > 1 ? size_t(j) : 0]) / double(ys));
            mult[size_t(j)] = q.multiplier;
            sh[size_t(j)] = q.shift;
        }
        rq = add_const(MK_DT_S32, as_bytes(mult), {1, 1, 1, int32_t(N)});
        shift_t = add_const(MK_DT_S32, as_bytes(sh), {1, 1, 1, int32_t(N)});
    }
    const uint64_t rows = t_[y].rec.bytes / uint64_t(N);
    mk_blob_layer& l = layer(n, MK_OP_FC_S8, {x, wt, bt, rq}, y, "fully_connected_s8", rows * uint64_t(N * K));
    l.p[0] = -128;
    l.p[1] = 127;
    l.p[2] = int32_t(shift_t);
    l.p[3] = opts_.float_requant ? 1 : 0;
}

void Converter::pool(const Node& n, bool max, bool s8) {
    const uint32_t x = act(n.input(0)), y = act(n.outputs.at(0));
    if (drv::ir::attr_int(n.attrs, "ceil_mode", 0) != 0) throw ConvertError(n.label() + ": ceil_mode=1 is not supported (seed 000: floor only)");
    if (!max && drv::ir::attr_int(n.attrs, "count_include_pad", 0) != 0) throw ConvertError(n.label() + ": count_include_pad=1 is not supported");
    const auto ks = drv::ir::attr_ints(n.attrs, "kernel_shape", {});
    if (ks.size() != 2) throw ConvertError(n.label() + ": 2-D pooling only");
    const Geo geo = conv_geo(n, ks[0], ks[1]);
    if (geo.dh != 1 || geo.dw != 1) throw ConvertError(n.label() + ": dilated pooling is not supported");
    uint32_t op;
    if (s8) {
        if (!max) {  // QLinearAveragePool: x, xs, xz, ys, yz - the kernel needs equal in/out quantization
            const float xs = cf(n, 1), ys = cf(n, 3);
            const int32_t xz = czp(n, 2), yz = czp(n, 4);
            set_quant(x, xs, xz);
            set_quant(y, ys, yz);
            if (xs != ys || xz != yz) {
                // onnxruntime's QLinearAveragePool (numerics README): dequantize, float sum in row-major
                // window order / count, QuantizeLinear - three layers with the same float operations.
                const auto& id = t_[x].rec.dims;
                const auto& od = t_[y].rec.dims;
                const uint32_t fx = scratch_f32(uint32_t(t_[x].rec.bytes)), fy = scratch_f32(uint32_t(t_[y].rec.bytes));
                std::copy(id, id + 4, t_[fx].rec.dims);
                std::copy(od, od + 4, t_[fy].rec.dims);
                layer(n, MK_OP_DEQUANTIZE, {x}, fx, "dequantize", t_[x].rec.bytes);
                mk_blob_layer& l = layer(n, MK_OP_AVGPOOL_F32, {fx}, fy, "avg_pool", uint64_t(t_[y].rec.bytes) * uint64_t(geo.kh * geo.kw));
                const int32_t p[8] = {geo.kh, geo.kw, geo.sh, geo.sw, geo.pt, geo.pl, 0, 0};
                std::copy(p, p + 8, l.p);
                layer(n, MK_OP_QUANTIZE, {fy}, y, "quantize", t_[y].rec.bytes);
                return;
            }
        } else {
            t_[y].rec.scale = t_[x].rec.scale;
            t_[y].rec.zero_point = t_[x].rec.zero_point;
        }
        op = max ? MK_OP_MAXPOOL_S8 : MK_OP_AVGPOOL_S8;
    } else {
        op = max ? MK_OP_MAXPOOL_F32 : MK_OP_AVGPOOL_F32;
    }
    const auto& od = t_[y].rec.dims;
    mk_blob_layer& l = layer(n, op, {x}, y, max ? "max_pool" : "avg_pool", uint64_t(od[0]) * od[1] * od[2] * od[3] * uint64_t(geo.kh * geo.kw));
    const int32_t p[8] = {geo.kh, geo.kw, geo.sh, geo.sw, geo.pt, geo.pl, -128, 127};
    std::copy(p, p + 8, l.p);
}

void Converter::gap_s8(const Node& n) {
    if (drv::ir::attr_int(n.attrs, "channels_last", 0) != 0) throw ConvertError(n.label() + ": channels_last=1 is not supported");
    const uint32_t x = act(n.input(0)), y = act(n.outputs.at(0));
    const float xs = cf(n, 1), ys = cf(n, 3);
    const int32_t xz = czp(n, 2), yz = czp(n, 4);
    set_quant(x, xs, xz);
    set_quant(y, ys, yz);
    const auto& d = t_[x].rec.dims;
    const int32_t hw = d[1] * d[2];
    mk_blob_layer& l = layer(n, MK_OP_GAP_S8, {x}, y, "global_avg_pool_s8", uint64_t(d[0]) * d[1] * d[2] * d[3]);
    const mk_qscale q = mk_quantize_scale(double(xs) / (double(ys) * hw));
    l.p[0] = q.multiplier;
    l.p[1] = q.shift;
    l.p[2] = opts_.float_requant ? f2i(xs / (ys * static_cast<float>(hw))) : 0;  // num::QLinearGlobalAveragePool's expression
}

void Converter::reshape(const Node& n) {
    const Value& in = g_.value(n.input(0), n.label());
    const Value& out = g_.value(n.outputs.at(0), n.label());
    const uint32_t x = act(n.input(0)), y = act(n.outputs.at(0));
    t_[y].rec.scale = t_[x].rec.scale;
    t_[y].rec.zero_point = t_[x].rec.zero_point;
    const auto& d = t_[x].rec.dims;
    const bool in_nhwc = in.shape.size() == 4 && d[3] > 1 && d[1] * d[2] > 1;
    const bool out_nhwc = out.shape.size() == 4 && out.shape[1] > 1 && out.shape[2] * out.shape[3] > 1;
    if (in_nhwc && out_nhwc && in.shape != out.shape) throw ConvertError(n.label() + ": 4-D to 4-D reshape that changes the layout is not supported");
    if (in_nhwc && !out_nhwc) {  // flatten in ONNX (NCHW) element order
        mk_blob_layer& l = layer(n, MK_OP_TRANSPOSE, {x}, y, "transpose");
        const int32_t p[5] = {0, 3, 1, 2, int32_t(mk_elem(t_[x].rec.dtype))};
        std::copy(p, p + 5, l.p);
        return;
    }
    if (!in_nhwc && out_nhwc) throw ConvertError(n.label() + ": reshape into a 4-D NCHW layout is not supported");
    layer(n, MK_OP_COPY, {x}, y, "copy");
}

void Converter::quantize(const Node& n, bool q) {
    const uint32_t x = act(n.input(0)), y = act(n.outputs.at(0));
    const num::Tensor& s = cval(n, 1);
    if (s.numel() != 1) throw ConvertError(n.label() + ": per-axis (de)quantization of activations is not supported");
    const float sc = s.data<float>()[0];
    const int32_t zp = czp(n, 2);
    set_quant(q ? y : x, sc, zp);
    layer(n, q ? MK_OP_QUANTIZE : MK_OP_DEQUANTIZE, {x}, y, q ? "quantize" : "dequantize", t_[y].rec.bytes / (q ? 1 : 4));
}

void Converter::bcast(mk_blob_layer& l, const std::string& a, const std::string& b, const std::string& out) {
    const auto& os = g_.value(out).shape;
    auto strides = [&](const std::string& name, int32_t* st) {
        std::vector<int64_t> s = g_.value(name).shape;
        while (s.size() < os.size()) s.insert(s.begin(), 1);
        const bool four = os.size() == 4;
        // Element strides of the operand in its stored layout (NHWC for rank 4).
        std::vector<int32_t> dd = dims4(s), od = dims4(os);
        int32_t acc = 1;
        for (int i = 3; i >= 0; --i) {
            st[i] = dd[size_t(i)] == 1 && od[size_t(i)] != 1 ? 0 : acc;
            acc *= dd[size_t(i)];
        }
        (void)four;
    };
    strides(a, &l.p[5]);
    strides(b, &l.p[9]);
}

void Converter::eltwise_s8(const Node& n, bool mul) {
    // QLinearAdd / QLinearMul: A, As, Az, B, Bs, Bz, Cs, Cz
    const uint32_t a = act(n.input(0)), b = act(n.input(3)), y = act(n.outputs.at(0));
    const float as = cf(n, 1), bs = cf(n, 4), ys = cf(n, 6);
    const int32_t az = czp(n, 2), bz = czp(n, 5), yz = czp(n, 7);
    set_quant(a, as, az);
    set_quant(b, bs, bz);
    set_quant(y, ys, yz);
    mk_blob_layer& l = layer(n, mul ? MK_OP_MUL_S8 : MK_OP_ADD_S8, {a, b}, y, mul ? "mul_s8" : "add_s8", t_[y].rec.bytes);
    if (mul) {
        const mk_qscale q = mk_quantize_scale(double(as) * double(bs) / double(ys));
        l.p[0] = q.multiplier;
        l.p[1] = q.shift;
        l.p[2] = -128;
        l.p[3] = 127;
    } else {
        mk_eltwise_s8_params ep;
        mk_add_s8_prepare(as, az, bs, bz, ys, yz, 1, &ep);
        l.p[0] = ep.a_mult;
        l.p[1] = ep.b_mult;
        l.p[2] = ep.left;
        l.p[3] = -128;
        l.p[4] = 127;
    }
    bcast(l, n.input(0), n.input(3), n.outputs.at(0));
}

void Converter::lut_s8(const Node& n) {
    // QLinearSigmoid / QLinearLeakyRelu (x, xs, xz, ys, yz): the table is the reference operator
    // applied to all 256 codes, as the MSLite converter builds Selu's table (seed 000).
    const uint32_t x = act(n.input(0)), y = act(n.outputs.at(0));
    set_quant(x, cf(n, 1), czp(n, 2));
    set_quant(y, cf(n, 3), czp(n, 4));
    num::Tensor all(num::DType::I8, {256});
    for (int i = 0; i < 256; ++i) all.data<int8_t>()[i] = int8_t(i - 128);
    std::vector<const num::Tensor*> ins{&all};
    for (size_t i = 1; i < n.inputs.size(); ++i) ins.push_back(n.has_input(i) ? &cval(n, i) : nullptr);
    const num::Tensor lut = num::run_op(n.op_type, n.attrs, ins, n.domain).at(0);
    const uint32_t lt = add_const(MK_DT_S8, std::vector<uint8_t>(lut.raw(), lut.raw() + 256), {1, 1, 1, 256});
    layer(n, MK_OP_LUT_S8, {x, lt}, y, "lut_s8", t_[y].rec.bytes);
}

void Converter::qconcat(const Node& n) {
    // QLinearConcat: Y_scale, Y_zp, then (X, X_scale, X_zp) per input; equal quantization only.
    const float ys = cf(n, 0);
    const int32_t yz = czp(n, 1);
    Node plain = n;
    plain.inputs.clear();
    for (size_t i = 2; i + 3 <= n.inputs.size(); i += 3) {
        if (cf(n, i + 1) != ys || czp(n, i + 2) != yz) throw ConvertError(n.label() + ": QLinearConcat with requantizing inputs is not supported");
        set_quant(act(n.input(i)), ys, yz);
        plain.inputs.push_back(n.input(i));
    }
    set_quant(act(n.outputs.at(0)), ys, yz);
    concat(plain);
}


}  // namespace mcu::detail
