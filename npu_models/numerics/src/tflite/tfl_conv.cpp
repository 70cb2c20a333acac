// SPDX-License-Identifier: MIT
// TFLite CONV_2D (filter OHWI, grouped when the filter has fewer input channels), DEPTHWISE_CONV_2D
// (filter [1, KH, KW, Cin * depth_multiplier]) and FULLY_CONNECTED (filter [N, K]) on NHWC tensors,
// float32 and quantized (int8 per-tensor/per-channel with symmetric weights, uint8 per-tensor with a
// weight zero point). Quantized: exact int32 sum of (x - x_zp) * (w - w_zp) + bias, then
// MultiplyByQuantizedMultiplier with real = x_scale * w_scale[c] / y_scale (in double, as TFLite's
// PopulateConvolutionQuantizationParams), + y_zp, clamped to the fused activation's range.
#include "tfl_common.h"

namespace num::tfl {
namespace {

struct ConvGeo {
    int64_t n, ih, iw, ic, oh, ow, oc, kh, kw, sh, sw, dh, dw, pt, pl;
    int64_t groups = 1, dm = 0;  ///< dm > 0: depthwise with this multiplier
};

/// Per-output-channel requantization and the activation range of a quantized conv/FC.
struct QOut {
    std::vector<QuantizedMultiplier> mult;
    std::vector<int32_t> w_off;
    int32_t x_off = 0, y_zp = 0, lo = 0, hi = 0;
};

QOut qout(const Attributes& a, const Tensor& x, const Tensor& w, int64_t channels, DType yd, const std::string& op) {
    const Q xq = quant_of(x, op, "input"), wq = quant_of(w, op, "filter"), yq = out_quant(a, op);
    if (yq.scale.empty()) ops::fail(op, "quantized output without quantization parameters");
    if (wq.scale.size() != 1 && static_cast<int64_t>(wq.scale.size()) != channels)
        ops::fail(op, "filter has " + std::to_string(wq.scale.size()) + " scales for " + std::to_string(channels) + " output channels");
    QOut q;
    q.x_off = -xq.z();
    q.y_zp = yq.z();
    for (int64_t c = 0; c < channels; ++c) {
        const size_t cc = static_cast<size_t>(c);
        q.mult.push_back(quantize_multiplier(static_cast<double>(xq.s()) * static_cast<double>(wq.s(cc)) / static_cast<double>(yq.s())));
        q.w_off.push_back(-wq.z(cc));
        if (w.dtype() == DType::I8 && wq.z(cc) != 0) ops::fail(op, "int8 filters must be symmetric (zero point 0)");
    }
    act_range_q(fused(a), yd, yq.s(), q.y_zp, q.lo, q.hi, op);
    return q;
}

ConvGeo geometry(const Attributes& a, const Tensor& x, const Tensor& w, bool depthwise, const std::string& op) {
    if (x.rank() != 4 || w.rank() != 4) ops::fail(op, "input and filter must be 4-D (NHWC / OHWI)");
    ConvGeo g{};
    g.n = x.dim(0), g.ih = x.dim(1), g.iw = x.dim(2), g.ic = x.dim(3);
    g.kh = w.dim(1), g.kw = w.dim(2);
    g.sh = a.get_int("stride_h", 1), g.sw = a.get_int("stride_w", 1);
    g.dh = a.get_int("dilation_h_factor", 1), g.dw = a.get_int("dilation_w_factor", 1);
    if (depthwise) {
        if (w.dim(0) != 1) ops::fail(op, "filter must be [1, KH, KW, C*multiplier]");
        g.oc = w.dim(3);
        if (g.ic <= 0 || g.oc % g.ic != 0) ops::fail(op, "filter channels " + std::to_string(g.oc) + " are not a multiple of the input channels " + std::to_string(g.ic));
        g.dm = g.oc / g.ic;
    } else {
        g.oc = w.dim(0);
        if (w.dim(3) <= 0 || g.ic % w.dim(3) != 0) ops::fail(op, "input channels " + std::to_string(g.ic) + " are not a multiple of the filter's " + std::to_string(w.dim(3)));
        g.groups = g.ic / w.dim(3);
        if (g.oc % g.groups != 0) ops::fail(op, "output channels not divisible by the groups");
    }
    const std::string pad = a.get_string("padding", "SAME");
    pad_1d(pad, g.ih, g.kh, g.sh, g.dh, g.oh, g.pt, op);
    pad_1d(pad, g.iw, g.kw, g.sw, g.dw, g.ow, g.pl, op);
    return g;
}

/// Index of filter element (output channel oc, ky, kx, input-channel-in-group i) and the input
/// channel it reads.
inline void tap(const ConvGeo& g, int64_t oc, int64_t ky, int64_t kx, int64_t i, int64_t& widx, int64_t& ic) {
    if (g.dm > 0) {
        ic = oc / g.dm;
        widx = (ky * g.kw + kx) * g.oc + oc;
    } else {
        const int64_t icg = g.ic / g.groups, ocg = g.oc / g.groups;
        ic = (oc / ocg) * icg + i;
        widx = ((oc * g.kh + ky) * g.kw + kx) * icg + i;
    }
}

template <typename Acc, typename FX, typename FW, typename Fin>
void conv_loop(const ConvGeo& g, FX xv, FW wv, Fin finish) {
    const int64_t taps_c = g.dm > 0 ? 1 : g.ic / g.groups;
    for (int64_t b = 0; b < g.n; ++b)
        for (int64_t oy = 0; oy < g.oh; ++oy)
            for (int64_t ox = 0; ox < g.ow; ++ox)
                for (int64_t oc = 0; oc < g.oc; ++oc) {
                    Acc acc = 0;
                    for (int64_t ky = 0; ky < g.kh; ++ky) {
                        const int64_t iy = oy * g.sh - g.pt + ky * g.dh;
                        if (iy < 0 || iy >= g.ih) continue;
                        for (int64_t kx = 0; kx < g.kw; ++kx) {
                            const int64_t ix = ox * g.sw - g.pl + kx * g.dw;
                            if (ix < 0 || ix >= g.iw) continue;
                            for (int64_t i = 0; i < taps_c; ++i) {
                                int64_t widx = 0, ic = 0;
                                tap(g, oc, ky, kx, i, widx, ic);
                                acc += xv(((b * g.ih + iy) * g.iw + ix) * g.ic + ic, oc) * wv(widx, oc);
                            }
                        }
                    }
                    finish(((b * g.oh + oy) * g.ow + ox) * g.oc + oc, oc, acc);
                }
}

Outputs conv(const Attributes& a, const Inputs& in, bool depthwise, const std::string& op) {
    const Tensor& x = ops::need(in, 0, op);
    const Tensor& w = ops::need(in, 1, op);
    const Tensor* bias = ops::opt(in, 2);
    const ConvGeo g = geometry(a, x, w, depthwise, op);
    if (bias && static_cast<int64_t>(bias->numel()) != g.oc) ops::fail(op, "bias must have one value per output channel");
    const std::vector<int64_t> oshape{g.n, g.oh, g.ow, g.oc};
    if (x.dtype() == DType::F32) {
        ops::expect_dtype(w, DType::F32, op, "filter");
        float lo = 0, hi = 0;
        act_range_f(fused(a), lo, hi, op);
        Tensor y = make_out(a, DType::F32, oshape);
        const float* xp = x.data<float>();
        const float* wp = w.data<float>();
        conv_loop<float>(g, [&](int64_t i, int64_t) { return xp[i]; }, [&](int64_t i, int64_t) { return wp[i]; },
                         [&](int64_t o, int64_t oc, float acc) {
                             if (bias) acc += bias->data<float>()[oc];
                             y.data<float>()[o] = std::min(std::max(acc, lo), hi);
                         });
        return ops::single(std::move(y));
    }
    if (x.dtype() != DType::I8 && x.dtype() != DType::U8) ops::fail(op, std::string("input type ") + dtype_name(x.dtype()) + " is not supported (float32, int8, uint8)");
    if (w.dtype() != DType::I8 && w.dtype() != DType::U8) ops::fail(op, "quantized filters must be int8 or uint8");
    if (bias && bias->dtype() != DType::I32) ops::fail(op, "quantized bias must be int32");
    const DType yd = out_dtype(a, x.dtype());
    const QOut q = qout(a, x, w, g.oc, yd, op);
    const std::vector<int32_t> xc = codes(x), wc = codes(w);
    std::vector<int32_t> yc(static_cast<size_t>(g.n * g.oh * g.ow * g.oc));
    conv_loop<int32_t>(
        g, [&](int64_t i, int64_t) { return xc[static_cast<size_t>(i)] + q.x_off; },
        [&](int64_t i, int64_t oc) { return wc[static_cast<size_t>(i)] + q.w_off[static_cast<size_t>(oc)]; },
        [&](int64_t o, int64_t oc, int32_t acc) {
            if (bias) acc += bias->data<int32_t>()[oc];
            const int32_t v = multiply_by_quantized_multiplier(acc, q.mult[static_cast<size_t>(oc)]) + q.y_zp;
            yc[static_cast<size_t>(o)] = std::min(std::max(v, q.lo), q.hi);
        });
    Tensor y = make_out(a, yd, oshape);
    store_codes(y, yc);
    return ops::single(std::move(y));
}

Outputs fully_connected(const Attributes& a, const Inputs& in) {
    const std::string op = "FULLY_CONNECTED";
    const Tensor& x = ops::need(in, 0, op);
    const Tensor& w = ops::need(in, 1, op);
    const Tensor* bias = ops::opt(in, 2);
    if (w.rank() != 2) ops::fail(op, "filter must be 2-D [N, K]");
    if (a.get_string("weights_format", "DEFAULT") != "DEFAULT") ops::fail(op, "only weights_format DEFAULT is supported");
    const int64_t N = w.dim(0), K = w.dim(1);
    const int64_t total = static_cast<int64_t>(x.numel());
    if (K <= 0 || total % K != 0) ops::fail(op, "input " + x.shape_str() + " cannot be flattened to rows of " + std::to_string(K));
    const int64_t rows = total / K;
    std::vector<int64_t> oshape{rows, N};
    if (a.get_int("keep_num_dims", 0) != 0) {
        oshape = x.shape();
        oshape.back() = N;
    }
    if (bias && static_cast<int64_t>(bias->numel()) != N) ops::fail(op, "bias must have N values");
    if (x.dtype() == DType::F32) {
        float lo = 0, hi = 0;
        act_range_f(fused(a), lo, hi, op);
        Tensor y = make_out(a, DType::F32, oshape);
        for (int64_t r = 0; r < rows; ++r)
            for (int64_t n = 0; n < N; ++n) {
                float acc = 0.0f;
                for (int64_t k = 0; k < K; ++k) acc += x.data<float>()[r * K + k] * w.data<float>()[n * K + k];
                if (bias) acc += bias->data<float>()[n];
                y.data<float>()[r * N + n] = std::min(std::max(acc, lo), hi);
            }
        return ops::single(std::move(y));
    }
    if (x.dtype() != DType::I8 && x.dtype() != DType::U8) ops::fail(op, std::string("input type ") + dtype_name(x.dtype()) + " is not supported");
    if (bias && bias->dtype() != DType::I32) ops::fail(op, "quantized bias must be int32");
    const DType yd = out_dtype(a, x.dtype());
    const QOut q = qout(a, x, w, N, yd, op);
    const std::vector<int32_t> xc = codes(x), wc = codes(w);
    std::vector<int32_t> yc(static_cast<size_t>(rows * N));
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t n = 0; n < N; ++n) {
            int32_t acc = 0;
            const int32_t wo = q.w_off[static_cast<size_t>(n)];
            for (int64_t k = 0; k < K; ++k)
                acc += (xc[static_cast<size_t>(r * K + k)] + q.x_off) * (wc[static_cast<size_t>(n * K + k)] + wo);
            if (bias) acc += bias->data<int32_t>()[n];
            const int32_t v = multiply_by_quantized_multiplier(acc, q.mult[static_cast<size_t>(n)]) + q.y_zp;
            yc[static_cast<size_t>(r * N + n)] = std::min(std::max(v, q.lo), q.hi);
        }
    Tensor y = make_out(a, yd, oshape);
    store_codes(y, yc);
    return ops::single(std::move(y));
}

}  // namespace

void register_conv(ops::OpTable& t) {
    t["tflite:CONV_2D"] = [](const Attributes& a, const Inputs& in) { return conv(a, in, false, "CONV_2D"); };
    t["tflite:DEPTHWISE_CONV_2D"] = [](const Attributes& a, const Inputs& in) { return conv(a, in, true, "DEPTHWISE_CONV_2D"); };
    t["tflite:FULLY_CONNECTED"] = fully_connected;
}

}  // namespace num::tfl
