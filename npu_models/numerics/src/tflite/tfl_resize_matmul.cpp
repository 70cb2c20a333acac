// SPDX-License-Identifier: MIT
// TFLite RESIZE_NEAREST_NEIGHBOR, RESIZE_BILINEAR, BATCH_MATMUL and TRANSPOSE_CONV (NHWC), float32
// and int8, with the arithmetic of TFLite's reference kernels (tensorflow/tensorflow
// tensorflow/lite/kernels/internal/reference/{resize_nearest_neighbor,resize_bilinear,batch_matmul,
// transpose_conv}.h and reference/integer_ops/transpose_conv.h):
//  - nearest: scale in/out (align_corners: (in-1)/(out-1)), offset 0.5 with half_pixel_centers,
//    index = align_corners ? round((o + offset) * scale) : floor((o + offset) * scale), clamped;
//    codes are copied (input and output share the quantization);
//  - bilinear float: (o + 0.5) * scale - 0.5 (half_pixel_centers) or o * scale, bounds floor/ceil
//    clamped, the four-term weighted sum; int8: the 10-bit fixed-point form (ResizeBilinearInteger),
//    sum of four products with weights in 1/1024, rounded half away from zero by 2^20;
//  - BATCH_MATMUL: lhs (adj_x: transposed) x rhs (adj_y: transposed) over broadcast batch dims; int8:
//    exact sum of (x - zx)(y - zy), MultiplyByQuantizedMultiplier(s_x s_y / s_out), + zp, saturated;
//  - TRANSPOSE_CONV (inputs output_shape, filter [OC, KH, KW, IC], input, optional bias): padding as
//    ComputePaddingHeightWidth of a forward conv over the output size, scatter of every input pixel
//    through the filter, bias, then (int8) per-channel requantization and the fused activation range.
#include <cstring>

#include "tfl_common.h"

namespace num::tfl {
namespace {

using ops::fail;
using ops::need;
using ops::opt;

/// Output H, W of a resize from its constant size input [2].
void resize_size(const Tensor& x, const Tensor& size, const std::string& op, int64_t& oh, int64_t& ow) {
    if (x.rank() != 4) fail(op, "input must be 4-D NHWC");
    const std::vector<int64_t> s = ops::int_values(size, op);
    if (s.size() != 2 || s[0] <= 0 || s[1] <= 0) fail(op, "size must be two positive values [new_height, new_width]");
    oh = s[0], ow = s[1];
}

int64_t nearest_index(int64_t o, int64_t in, int64_t out, bool align, bool half) {
    const float scale = (align && out > 1) ? static_cast<float>(in - 1) / static_cast<float>(out - 1)
                                           : static_cast<float>(in) / static_cast<float>(out);
    const float offset = half ? 0.5f : 0.0f;
    const float v = (static_cast<float>(o) + offset) * scale;
    int64_t i = std::min<int64_t>(align ? static_cast<int64_t>(std::round(v)) : static_cast<int64_t>(std::floor(v)), in - 1);
    if (half) i = std::max<int64_t>(0, i);
    return i;
}

Outputs resize_nearest(const Attributes& a, const Inputs& in) {
    const std::string op = "RESIZE_NEAREST_NEIGHBOR";
    const Tensor& x = need(in, 0, op);
    int64_t oh = 0, ow = 0;
    resize_size(x, need(in, 1, op), op, oh, ow);
    const bool align = a.get_int("align_corners", 0) != 0, half = a.get_int("half_pixel_centers", 0) != 0;
    const int64_t N = x.dim(0), H = x.dim(1), W = x.dim(2), C = x.dim(3);
    Tensor y = make_out(a, x.dtype(), {N, oh, ow, C});
    const size_t e = dtype_size(x.dtype());
    for (int64_t n = 0; n < N; ++n)
        for (int64_t oy = 0; oy < oh; ++oy) {
            const int64_t iy = nearest_index(oy, H, oh, align, half);
            for (int64_t ox = 0; ox < ow; ++ox) {
                const int64_t ix = nearest_index(ox, W, ow, align, half);
                std::memcpy(y.raw() + static_cast<size_t>(((n * oh + oy) * ow + ox) * C) * e,
                            x.raw() + static_cast<size_t>(((n * H + iy) * W + ix) * C) * e, static_cast<size_t>(C) * e);
            }
        }
    return ops::single(std::move(y));
}

Outputs resize_bilinear(const Attributes& a, const Inputs& in) {
    const std::string op = "RESIZE_BILINEAR";
    const Tensor& x = need(in, 0, op);
    int64_t oh = 0, ow = 0;
    resize_size(x, need(in, 1, op), op, oh, ow);
    const bool align = a.get_int("align_corners", 0) != 0, half = a.get_int("half_pixel_centers", 0) != 0;
    if (align && half) fail(op, "align_corners and half_pixel_centers are exclusive");
    const int64_t N = x.dim(0), H = x.dim(1), W = x.dim(2), C = x.dim(3);
    Tensor y = make_out(a, x.dtype(), {N, oh, ow, C});
    if (x.dtype() == DType::F32) {
        auto scale_of = [&](int64_t i, int64_t o) {
            return (align && o > 1) ? static_cast<float>(i - 1) / static_cast<float>(o - 1) : static_cast<float>(i) / static_cast<float>(o);
        };
        const float hs = scale_of(H, oh), ws = scale_of(W, ow);
        auto interp = [&](int64_t v, float scale, int64_t size, float& s, int64_t& lo, int64_t& hi) {
            s = half ? (static_cast<float>(v) + 0.5f) * scale - 0.5f : static_cast<float>(v) * scale;
            lo = std::max<int64_t>(static_cast<int64_t>(std::floor(s)), 0);
            hi = std::min<int64_t>(static_cast<int64_t>(std::ceil(s)), size - 1);
        };
        const float* X = x.data<float>();
        for (int64_t n = 0; n < N; ++n)
            for (int64_t oy = 0; oy < oh; ++oy) {
                float iy = 0;
                int64_t y0 = 0, y1 = 0;
                interp(oy, hs, H, iy, y0, y1);
                for (int64_t ox = 0; ox < ow; ++ox) {
                    float ix = 0;
                    int64_t x0 = 0, x1 = 0;
                    interp(ox, ws, W, ix, x0, x1);
                    const float dy = iy - static_cast<float>(y0), dx = ix - static_cast<float>(x0);
                    for (int64_t c = 0; c < C; ++c) {
                        auto at = [&](int64_t yy, int64_t xx) { return X[((n * H + yy) * W + xx) * C + c]; };
                        y.data<float>()[((n * oh + oy) * ow + ox) * C + c] =
                            at(y0, x0) * (1 - dy) * (1 - dx) + at(y1, x0) * dy * (1 - dx) + at(y0, x1) * (1 - dy) * dx + at(y1, x1) * dy * dx;
                    }
                }
            }
        return ops::single(std::move(y));
    }
    if (x.dtype() != DType::I8) fail(op, std::string("input type ") + dtype_name(x.dtype()) + " (float32 or int8)");
    auto scale10 = [&](int64_t i, int64_t o) {
        if (align && o > 1) return static_cast<int32_t>(((1 << 10) * (i - 1) + (o - 1) / 2) / (o - 1));
        return static_cast<int32_t>(((1 << 10) * i + o / 2) / o);
    };
    const int32_t hs = scale10(H, oh), ws = scale10(W, ow);
    auto interp = [&](int64_t v, int32_t scale, int64_t size, int32_t& s, int32_t& lo, int32_t& hi) {
        s = half ? static_cast<int32_t>(v) * scale + scale / 2 - (1 << 9) : static_cast<int32_t>(v) * scale;
        lo = std::max(s / (1 << 10), 0);  // C++ division: toward zero
        hi = std::min(static_cast<int32_t>((s + (1 << 10) - 1) / (1 << 10)), static_cast<int32_t>(size - 1));
    };
    const int8_t* X = x.data<int8_t>();
    for (int64_t n = 0; n < N; ++n)
        for (int64_t oy = 0; oy < oh; ++oy) {
            int32_t iy = 0, y0 = 0, y1 = 0;
            interp(oy, hs, H, iy, y0, y1);
            for (int64_t ox = 0; ox < ow; ++ox) {
                int32_t ix = 0, x0 = 0, x1 = 0;
                interp(ox, ws, W, ix, x0, x1);
                const int64_t wy1 = iy - (1 << 10) * y0, wy0 = (1 << 10) - wy1, wx1 = ix - (1 << 10) * x0, wx0 = (1 << 10) - wx1;
                for (int64_t c = 0; c < C; ++c) {
                    auto at = [&](int64_t yy, int64_t xx) { return static_cast<int64_t>(X[((n * H + yy) * W + xx) * C + c]); };
                    const int64_t s20 = at(y0, x0) * wy0 * wx0 + at(y1, x0) * wy1 * wx0 + at(y0, x1) * wy0 * wx1 + at(y1, x1) * wy1 * wx1;
                    const int64_t round = s20 > 0 ? (1 << 19) : -(1 << 19);
                    y.data<int8_t>()[((n * oh + oy) * ow + ox) * C + c] = static_cast<int8_t>((s20 + round) / (1 << 20));
                }
            }
        }
    return ops::single(std::move(y));
}

Outputs batch_matmul(const Attributes& a, const Inputs& in) {
    const std::string op = "BATCH_MATMUL";
    const Tensor& x = need(in, 0, op);
    const Tensor& w = need(in, 1, op);
    if (x.rank() < 2 || w.rank() < 2 || x.rank() > 5 || w.rank() > 5) fail(op, "operands must have rank 2..5");
    const bool ax = a.get_int("adj_x", 0) != 0, ay = a.get_int("adj_y", 0) != 0;
    const int64_t M = ax ? x.dim(-1) : x.dim(-2), K = ax ? x.dim(-2) : x.dim(-1);
    const int64_t K2 = ay ? w.dim(-1) : w.dim(-2), N = ay ? w.dim(-2) : w.dim(-1);
    if (K != K2) fail(op, "inner dimensions differ: " + x.shape_str() + " x " + w.shape_str());
    const std::vector<int64_t> xb(x.shape().begin(), x.shape().end() - 2), wb(w.shape().begin(), w.shape().end() - 2);
    std::vector<int64_t> ob = ops::broadcast_shape(xb, wb, op), oshape = ob;
    oshape.push_back(M);
    oshape.push_back(N);
    const std::vector<int64_t> sx = ops::broadcast_strides(xb, ob), sw = ops::broadcast_strides(wb, ob);
    const int64_t batches = ops::prod(ob);
    const std::vector<int64_t> ostr = ops::contiguous_strides(ob);
    auto base = [&](int64_t b, const std::vector<int64_t>& s) {  // batch index -> operand batch index
        int64_t r = 0;
        for (size_t d = 0; d < ob.size(); ++d) r += ((b / ostr[d]) % ob[d]) * s[d];
        return r;
    };
    auto xi = [&](int64_t m, int64_t k) { return ax ? k * M + m : m * K + k; };
    auto wi = [&](int64_t k, int64_t n) { return ay ? n * K + k : k * N + n; };
    const int64_t xs = M * K, ws = K * N;
    if (x.dtype() == DType::F32) {
        if (w.dtype() != DType::F32) fail(op, "operands must have the same type");
        Tensor y = make_out(a, DType::F32, oshape);
        for (int64_t b = 0; b < batches; ++b) {
            const float* X = x.data<float>() + base(b, sx) * xs;
            const float* Wt = w.data<float>() + base(b, sw) * ws;
            for (int64_t m = 0; m < M; ++m)
                for (int64_t n = 0; n < N; ++n) {
                    float acc = 0.0f;
                    for (int64_t k = 0; k < K; ++k) acc += X[xi(m, k)] * Wt[wi(k, n)];
                    y.data<float>()[(b * M + m) * N + n] = acc;
                }
        }
        return ops::single(std::move(y));
    }
    if (x.dtype() != DType::I8 || w.dtype() != DType::I8) fail(op, "quantized operands must both be int8");
    const Q xq = quant_of(x, op, "lhs"), wq = quant_of(w, op, "rhs"), yq = out_quant(a, op);
    if (yq.scale.empty() || xq.scale.size() != 1 || wq.scale.size() != 1) fail(op, "int8 operands and output must be quantized per tensor");
    const QuantizedMultiplier qm = quantize_multiplier(static_cast<double>(xq.s()) * static_cast<double>(wq.s()) / static_cast<double>(yq.s()));
    int32_t lo = -128, hi = 127;
    act_range_q("NONE", DType::I8, yq.s(), yq.z(), lo, hi, op);
    const std::vector<int32_t> xc = codes(x), wc = codes(w);
    std::vector<int32_t> yc(static_cast<size_t>(batches * M * N));
    for (int64_t b = 0; b < batches; ++b) {
        const int32_t* X = xc.data() + base(b, sx) * xs;
        const int32_t* Wt = wc.data() + base(b, sw) * ws;
        for (int64_t m = 0; m < M; ++m)
            for (int64_t n = 0; n < N; ++n) {
                int32_t acc = 0;
                for (int64_t k = 0; k < K; ++k) acc += (X[xi(m, k)] - xq.z()) * (Wt[wi(k, n)] - wq.z());
                const int32_t v = multiply_by_quantized_multiplier(acc, qm) + yq.z();
                yc[static_cast<size_t>((b * M + m) * N + n)] = std::min(std::max(v, lo), hi);
            }
    }
    Tensor y = make_out(a, DType::I8, oshape);
    store_codes(y, yc);
    return ops::single(std::move(y));
}

Outputs transpose_conv(const Attributes& a, const Inputs& in) {
    const std::string op = "TRANSPOSE_CONV";
    const std::vector<int64_t> os = ops::int_values(need(in, 0, op), op);
    const Tensor& w = need(in, 1, op);
    const Tensor& x = need(in, 2, op);
    const Tensor* bias = opt(in, 3);
    if (os.size() != 4 || x.rank() != 4 || w.rank() != 4) fail(op, "output_shape [4], filter [OC, KH, KW, IC] and a 4-D NHWC input");
    const int64_t N = x.dim(0), H = x.dim(1), W = x.dim(2), IC = x.dim(3);
    const int64_t OC = w.dim(0), KH = w.dim(1), KW = w.dim(2);
    if (w.dim(3) != IC || os[0] != N || os[3] != OC || os[1] <= 0 || os[2] <= 0)
        fail(op, "output_shape " + std::to_string(os[1]) + "x" + std::to_string(os[2]) + ", filter " + w.shape_str() + " and input " + x.shape_str() + " disagree");
    if (bias && static_cast<int64_t>(bias->numel()) != OC) fail(op, "bias must have OC values");
    const int64_t OH = os[1], OW = os[2], sh = a.get_int("stride_h", 1), sw = a.get_int("stride_w", 1);
    const std::string padding = a.get_string("padding", "SAME");
    int64_t conv_h = 0, conv_w = 0, pt = 0, pl = 0;  // the forward conv over the output size
    pad_1d(padding, OH, KH, sh, 1, conv_h, pt, op);
    pad_1d(padding, OW, KW, sw, 1, conv_w, pl, op);
    const std::string act = fused(a);
    const std::vector<int64_t> oshape{N, OH, OW, OC};
    // scatter(acc, input value index, filter value index) in the reference kernels' loop order
    auto scatter = [&](auto&& add) {
        for (int64_t n = 0; n < N; ++n)
            for (int64_t iy = 0; iy < H; ++iy)
                for (int64_t ix = 0; ix < W; ++ix)
                    for (int64_t ic = 0; ic < IC; ++ic)
                        for (int64_t ky = 0; ky < KH; ++ky)
                            for (int64_t kx = 0; kx < KW; ++kx)
                                for (int64_t oc = 0; oc < OC; ++oc) {
                                    const int64_t oy = iy * sh - pt + ky, ox = ix * sw - pl + kx;
                                    if (oy < 0 || oy >= OH || ox < 0 || ox >= OW) continue;
                                    add(((n * OH + oy) * OW + ox) * OC + oc, ((n * H + iy) * W + ix) * IC + ic, ((oc * KH + ky) * KW + kx) * IC + ic);
                                }
    };
    if (x.dtype() == DType::F32) {
        float lo = 0, hi = 0;
        act_range_f(act, lo, hi, op);
        Tensor y = make_out(a, DType::F32, oshape);
        float* Y = y.data<float>();
        std::fill(Y, Y + y.numel(), 0.0f);
        scatter([&](int64_t o, int64_t i, int64_t f) { Y[o] += x.data<float>()[i] * w.data<float>()[f]; });
        for (size_t o = 0; o < y.numel(); ++o) {
            const float v = Y[o] + (bias ? bias->data<float>()[o % static_cast<size_t>(OC)] : 0.0f);
            Y[o] = std::min(std::max(v, lo), hi);
        }
        return ops::single(std::move(y));
    }
    if (x.dtype() != DType::I8 || w.dtype() != DType::I8) fail(op, "quantized input and filter must be int8");
    if (bias && bias->dtype() != DType::I32) fail(op, "quantized bias must be int32");
    const Q xq = quant_of(x, op, "input"), wq = quant_of(w, op, "filter"), yq = out_quant(a, op);
    if (yq.scale.empty()) fail(op, "quantized output without quantization parameters");
    if (wq.scale.size() != 1 && static_cast<int64_t>(wq.scale.size()) != OC) fail(op, "filter scales must be per tensor or per output channel");
    std::vector<QuantizedMultiplier> mult;
    for (int64_t c = 0; c < OC; ++c) {
        if (wq.z(static_cast<size_t>(c)) != 0) fail(op, "int8 filters must be symmetric (zero point 0)");
        mult.push_back(quantize_multiplier(static_cast<double>(xq.s()) * static_cast<double>(wq.s(static_cast<size_t>(c))) / static_cast<double>(yq.s())));
    }
    int32_t lo = 0, hi = 0;
    act_range_q(act, DType::I8, yq.s(), yq.z(), lo, hi, op);
    const std::vector<int32_t> xc = codes(x), wc = codes(w);
    std::vector<int32_t> acc(static_cast<size_t>(N * OH * OW * OC), 0);
    scatter([&](int64_t o, int64_t i, int64_t f) { acc[static_cast<size_t>(o)] += (xc[static_cast<size_t>(i)] - xq.z()) * wc[static_cast<size_t>(f)]; });
    for (size_t o = 0; o < acc.size(); ++o) {
        const size_t oc = o % static_cast<size_t>(OC);
        int32_t v = acc[o] + (bias ? bias->data<int32_t>()[oc] : 0);
        v = multiply_by_quantized_multiplier(v, mult[oc]) + yq.z();
        acc[o] = std::min(std::max(v, lo), hi);
    }
    Tensor y = make_out(a, DType::I8, oshape);
    store_codes(y, acc);
    return ops::single(std::move(y));
}

}  // namespace

void register_resize_matmul(ops::OpTable& t) {
    t["tflite:RESIZE_NEAREST_NEIGHBOR"] = resize_nearest;
    t["tflite:RESIZE_BILINEAR"] = resize_bilinear;
    t["tflite:BATCH_MATMUL"] = batch_matmul;
    t["tflite:TRANSPOSE_CONV"] = transpose_conv;
}

}  // namespace num::tfl
