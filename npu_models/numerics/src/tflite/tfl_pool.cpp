// SPDX-License-Identifier: MIT
// TFLite AVERAGE_POOL_2D / MAX_POOL_2D (NHWC, padded positions excluded), MEAN / SUM / REDUCE_MAX /
// REDUCE_MIN over constant axes, SOFTMAX and LOG_SOFTMAX over the last axis.
//  * int8 average pool: integer window sum, divided by the count rounded half away from zero
//    (reference_integer_ops/pooling.h); input and output share the quantization.
//  * int8 MEAN/SUM: exact sum of (x - zx), then MultiplyByQuantizedMultiplier with
//    s_x / (s_y * count) (SUM: s_x / s_y), + zy (the requantizing mean of the optimized kernels).
//  * int8 SOFTMAX: TFLite's look-up-table softmax (optimized_ops, PopulateSoftmaxLookupTable):
//    table[255 - d] = expf(-s_x * beta * d) for d in [0, 255]; per row the float sum of the entries,
//    inv = 1 / (sum * s_y), q = TfLiteRound(entry * inv) + zy, clamped.
#include "tfl_common.h"

namespace num::tfl {
namespace {

Outputs pool(const Attributes& a, const Inputs& in, bool max, const std::string& op) {
    const Tensor& x = ops::need(in, 0, op);
    if (x.rank() != 4) ops::fail(op, "input must be 4-D NHWC");
    const int64_t N = x.dim(0), H = x.dim(1), W = x.dim(2), C = x.dim(3);
    const int64_t fh = a.get_int("filter_height", 1), fw = a.get_int("filter_width", 1);
    const int64_t sh = a.get_int("stride_h", 1), sw = a.get_int("stride_w", 1);
    int64_t oh = 0, ow = 0, pt = 0, pl = 0;
    const std::string pad = a.get_string("padding", "VALID");
    pad_1d(pad, H, fh, sh, 1, oh, pt, op);
    pad_1d(pad, W, fw, sw, 1, ow, pl, op);
    const std::vector<int64_t> oshape{N, oh, ow, C};
    const bool fl = x.dtype() == DType::F32;
    std::vector<int32_t> xc;
    int32_t lo = 0, hi = 0;
    float flo = 0, fhi = 0;
    Q qx;
    if (fl) {
        act_range_f(fused(a), flo, fhi, op);
    } else {
        if (x.dtype() != DType::I8 && x.dtype() != DType::U8) ops::fail(op, "type not supported");
        qx = quant_of(x, op, "input");
        const Q qy = out_quant(a, op);
        if (!qy.scale.empty() && (qy.s() != qx.s() || qy.z() != qx.z()))
            ops::fail(op, "quantized input and output must share scale and zero point");
        act_range_q(fused(a), x.dtype(), qx.s(), qx.z(), lo, hi, op);
        xc = codes(x);
    }
    Tensor y = make_out(a, x.dtype(), oshape);
    std::vector<int32_t> yc(fl ? 0 : static_cast<size_t>(N * oh * ow * C));
    for (int64_t b = 0; b < N; ++b)
        for (int64_t oy = 0; oy < oh; ++oy)
            for (int64_t ox = 0; ox < ow; ++ox)
                for (int64_t c = 0; c < C; ++c) {
                    const int64_t y0 = std::max<int64_t>(0, oy * sh - pt), y1 = std::min(H, oy * sh - pt + fh);
                    const int64_t x0 = std::max<int64_t>(0, ox * sw - pl), x1 = std::min(W, ox * sw - pl + fw);
                    const int64_t o = ((b * oh + oy) * ow + ox) * C + c;
                    const int64_t count = (y1 - y0) * (x1 - x0);
                    if (fl) {
                        float acc = max ? -std::numeric_limits<float>::infinity() : 0.0f;
                        for (int64_t iy = y0; iy < y1; ++iy)
                            for (int64_t ix = x0; ix < x1; ++ix) {
                                const float v = x.data<float>()[((b * H + iy) * W + ix) * C + c];
                                acc = max ? std::max(acc, v) : acc + v;
                            }
                        if (!max) acc = count > 0 ? acc / static_cast<float>(count) : 0.0f;
                        y.data<float>()[o] = std::min(std::max(acc, flo), fhi);
                    } else {
                        int32_t acc = max ? INT32_MIN : 0;
                        for (int64_t iy = y0; iy < y1; ++iy)
                            for (int64_t ix = x0; ix < x1; ++ix) {
                                const int32_t v = xc[static_cast<size_t>(((b * H + iy) * W + ix) * C + c)];
                                acc = max ? std::max(acc, v) : acc + v;
                            }
                        if (!max) {
                            const int32_t n = static_cast<int32_t>(std::max<int64_t>(count, 1));
                            acc = acc > 0 ? (acc + n / 2) / n : (acc - n / 2) / n;
                        }
                        yc[static_cast<size_t>(o)] = std::min(std::max(acc, lo), hi);
                    }
                }
    if (!fl) store_codes(y, yc);
    return ops::single(std::move(y));
}

Outputs reduce(const Attributes& a, const Inputs& in, const std::string& op) {
    const Tensor& x = ops::need(in, 0, op);
    const Tensor& ax = ops::need(in, 1, op);
    std::vector<int64_t> axes = ops::int_values(ax, op);
    if (axes.empty()) ops::fail(op, "empty axes");
    for (auto& v : axes) v = ops::norm_axis(v, x.rank(), op);
    const bool keep = a.get_int("keep_dims", 0) != 0;
    const ops::Reduction r = ops::plan_reduction(x.shape(), axes, keep, false, op);
    const int64_t on = ops::prod(r.out_shape);
    const auto zero = std::vector<int64_t>(x.shape().size(), 0);
    if (x.dtype() == DType::F32) {
        std::vector<float> acc(static_cast<size_t>(on), op == "REDUCE_MAX" ? -std::numeric_limits<float>::infinity()
                                                       : op == "REDUCE_MIN" ? std::numeric_limits<float>::infinity() : 0.0f);
        ops::for_each_broadcast2(x.shape(), ops::contiguous_strides(x.shape()), r.out_strides, [&](int64_t, int64_t i, int64_t o) {
            const float v = x.data<float>()[i];
            float& d = acc[static_cast<size_t>(o)];
            d = op == "REDUCE_MAX" ? std::max(d, v) : op == "REDUCE_MIN" ? std::min(d, v) : d + v;
        });
        Tensor y = make_out(a, DType::F32, r.out_shape);
        for (int64_t i = 0; i < on; ++i)
            y.data<float>()[i] = op == "MEAN" ? acc[static_cast<size_t>(i)] / static_cast<float>(r.count) : acc[static_cast<size_t>(i)];
        return ops::single(std::move(y));
    }
    if (x.dtype() != DType::I8 && x.dtype() != DType::U8) ops::fail(op, "type not supported");
    const Q qx = quant_of(x, op, "input"), qy = out_quant(a, op);
    if (qy.scale.empty()) ops::fail(op, "quantized output without quantization parameters");
    const DType yd = out_dtype(a, x.dtype());
    int32_t lo = 0, hi = 0;
    code_range(yd, lo, hi);
    const std::vector<int32_t> xc = codes(x);
    const bool mm = op == "REDUCE_MAX" || op == "REDUCE_MIN";
    std::vector<int32_t> acc(static_cast<size_t>(on), op == "REDUCE_MAX" ? INT32_MIN : op == "REDUCE_MIN" ? INT32_MAX : 0);
    ops::for_each_broadcast2(x.shape(), ops::contiguous_strides(x.shape()), r.out_strides, [&](int64_t, int64_t i, int64_t o) {
        const int32_t v = xc[static_cast<size_t>(i)];
        int32_t& d = acc[static_cast<size_t>(o)];
        d = op == "REDUCE_MAX" ? std::max(d, v) : op == "REDUCE_MIN" ? std::min(d, v) : d + (v - qx.z());
    });
    std::vector<int32_t> yc(acc.size());
    if (mm) {
        if (qx.s() != qy.s() || qx.z() != qy.z()) ops::fail(op, "quantized input and output must share scale and zero point");
        yc = acc;
    } else {
        const double real = static_cast<double>(qx.s()) / (static_cast<double>(qy.s()) * (op == "MEAN" ? static_cast<double>(r.count) : 1.0));
        const QuantizedMultiplier m = quantize_multiplier(real);
        for (size_t i = 0; i < acc.size(); ++i) yc[i] = std::min(std::max(multiply_by_quantized_multiplier(acc[i], m) + qy.z(), lo), hi);
    }
    Tensor y = make_out(a, yd, r.out_shape);
    store_codes(y, yc);
    return ops::single(std::move(y));
}

Outputs softmax(const Attributes& a, const Inputs& in, bool log, const std::string& op) {
    const Tensor& x = ops::need(in, 0, op);
    if (x.rank() < 1) ops::fail(op, "input must have rank >= 1");
    const float beta = a.get_float("beta", 1.0f);
    const int64_t cols = x.dim(-1), rows = cols > 0 ? static_cast<int64_t>(x.numel()) / cols : 0;
    if (x.dtype() == DType::F32) {
        Tensor y = make_out(a, DType::F32, x.shape());
        for (int64_t r = 0; r < rows; ++r) {
            const float* p = x.data<float>() + r * cols;
            float* q = y.data<float>() + r * cols;
            float mx = p[0];
            for (int64_t c = 1; c < cols; ++c) mx = std::max(mx, p[c]);
            float sum = 0.0f;
            for (int64_t c = 0; c < cols; ++c) sum += std::exp((p[c] - mx) * (log ? 1.0f : beta));
            for (int64_t c = 0; c < cols; ++c)
                q[c] = log ? (p[c] - mx) - std::log(sum) : std::exp((p[c] - mx) * beta) / sum;
        }
        return ops::single(std::move(y));
    }
    if (x.dtype() != DType::I8 && x.dtype() != DType::U8) ops::fail(op, "type not supported");
    if (log) ops::fail(op, "quantized LOG_SOFTMAX is not supported");
    const Q qx = quant_of(x, op, "input"), qy = out_quant(a, op);
    if (qy.scale.empty()) ops::fail(op, "quantized output without quantization parameters");
    const DType yd = out_dtype(a, x.dtype());
    int32_t lo = 0, hi = 0;
    code_range(yd, lo, hi);
    float table[256];
    const float scale = -qx.s() * beta;
    for (int32_t v = 0; v <= 255; ++v) table[255 - v] = std::exp(scale * static_cast<float>(v));
    const std::vector<int32_t> xc = codes(x);
    std::vector<int32_t> yc(xc.size());
    for (int64_t r = 0; r < rows; ++r) {
        const int32_t* p = xc.data() + r * cols;
        int32_t mx = p[0];
        for (int64_t c = 1; c < cols; ++c) mx = std::max(mx, p[c]);
        float sum = 0.0f;
        for (int64_t c = 0; c < cols; ++c) sum += table[255 + p[c] - mx];
        const float inv = 1.0f / (sum * qy.s());
        for (int64_t c = 0; c < cols; ++c)
            yc[static_cast<size_t>(r * cols + c)] = std::min(std::max(round_away(table[255 + p[c] - mx] * inv) + qy.z(), lo), hi);
    }
    Tensor y = make_out(a, yd, x.shape());
    store_codes(y, yc);
    return ops::single(std::move(y));
}

}  // namespace

void register_pool(ops::OpTable& t) {
    t["tflite:AVERAGE_POOL_2D"] = [](const Attributes& a, const Inputs& in) { return pool(a, in, false, "AVERAGE_POOL_2D"); };
    t["tflite:MAX_POOL_2D"] = [](const Attributes& a, const Inputs& in) { return pool(a, in, true, "MAX_POOL_2D"); };
    for (const char* op : {"MEAN", "SUM", "REDUCE_MAX", "REDUCE_MIN"}) {
        const std::string name(op);
        t["tflite:" + name] = [name](const Attributes& a, const Inputs& in) { return reduce(a, in, name); };
    }
    t["tflite:SOFTMAX"] = [](const Attributes& a, const Inputs& in) { return softmax(a, in, false, "SOFTMAX"); };
    t["tflite:LOG_SOFTMAX"] = [](const Attributes& a, const Inputs& in) { return softmax(a, in, true, "LOG_SOFTMAX"); };
}

}  // namespace num::tfl
