// SPDX-License-Identifier: MIT
// Pooling: MaxPool (fp32/int8/uint8), AveragePool, GlobalAveragePool, GlobalMaxPool and the
// com.microsoft QLinearAveragePool / QLinearGlobalAveragePool with onnxruntime's arithmetic.
#include <cmath>
#include <limits>

#include "numerics/requant.h"
#include "qcommon.h"

namespace num::ops {
namespace {

struct PoolGeom {
    int64_t nc = 0, h = 1, w = 1, oh = 1, ow = 1;
    int64_t k[2] = {1, 1}, s[2] = {1, 1}, d[2] = {1, 1}, pb[2] = {0, 0}, pe[2] = {0, 0};
    std::vector<int64_t> out_shape;
};

int64_t pool_out(int64_t in, int64_t k, int64_t s, int64_t d, int64_t& pb, int64_t& pe, const std::string& ap,
                 bool ceil_mode) {
    const int64_t ek = (k - 1) * d + 1;
    if (ap == "VALID") {
        pb = pe = 0;
        return (in - ek) / s + 1;
    }
    if (ap == "SAME_UPPER" || ap == "SAME_LOWER") {
        const int64_t out = (in + s - 1) / s;
        const int64_t total = std::max<int64_t>(0, (out - 1) * s + ek - in);
        pb = ap == "SAME_UPPER" ? total / 2 : total - total / 2;
        pe = total - pb;
        return out;
    }
    const int64_t span = in + pb + pe - ek;
    int64_t out = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
    if (ceil_mode && (out - 1) * s >= in + pb) --out;  // last window must start inside input or left pad
    return out;
}

PoolGeom pool_geometry(const Tensor& x, const Attributes& a, const std::string& op) {
    if (x.rank() != 3 && x.rank() != 4) fail(op, "only 1-D and 2-D pooling is supported, X is " + x.shape_str());
    const size_t sp = static_cast<size_t>(x.rank() - 2);
    PoolGeom g;
    g.nc = x.dim(0) * x.dim(1);
    g.h = sp == 2 ? x.dim(2) : 1;
    g.w = x.dim(-1);
    const std::vector<int64_t> ks = a.get_ints("kernel_shape", {});
    if (ks.size() != sp) fail(op, "kernel_shape must have one entry per spatial dim");
    const std::vector<int64_t> st = ints_or(a, "strides", sp, 1), dl = ints_or(a, "dilations", sp, 1);
    const std::vector<int64_t> pads = ints_or(a, "pads", 2 * sp, 0);
    if (st.size() != sp || dl.size() != sp || pads.size() != 2 * sp) fail(op, "strides/dilations/pads rank mismatch");
    const std::string ap = a.get_string("auto_pad", "NOTSET");
    const bool ceil_mode = a.get_int("ceil_mode", 0) != 0;
    const int64_t ins[2] = {g.h, g.w};
    int64_t outs[2] = {1, 1};
    for (size_t i = 2 - sp; i < 2; ++i) {
        const size_t j = i - (2 - sp);
        g.k[i] = ks[j];
        g.s[i] = st[j];
        g.d[i] = dl[j];
        g.pb[i] = pads[j];
        g.pe[i] = pads[j + sp];
        if (g.k[i] < 1 || g.s[i] < 1 || g.d[i] < 1) fail(op, "kernel, strides and dilations must be >= 1");
        outs[i] = pool_out(ins[i], g.k[i], g.s[i], g.d[i], g.pb[i], g.pe[i], ap, ceil_mode);
        if (outs[i] < 1) fail(op, "output would be empty");
    }
    g.oh = outs[0];
    g.ow = outs[1];
    g.out_shape = {x.dim(0), x.dim(1)};
    if (sp == 2) g.out_shape.push_back(g.oh);
    g.out_shape.push_back(g.ow);
    return g;
}

// One pooling window: valid taps are ky in [ky0, ky1) x kx in [kx0, kx1) at input offset
// base + (y0 + ky*dy) * w + (x0 + kx*dx); `padded` is the tap count of the window clipped to the
// padded extent (the count_include_pad divisor, onnxruntime rule).
struct Window {
    int64_t base, y0, x0, ky0, ky1, kx0, kx1, padded;
    int64_t taps() const { return std::max<int64_t>(0, ky1 - ky0) * std::max<int64_t>(0, kx1 - kx0); }
};

// Calls f(out_index, window, reduce) where reduce(g, op, init) folds op over the valid taps in
// row-major order (the order the float sums must follow to match onnxruntime bit-for-bit).
template <typename F>
void for_each_window(const PoolGeom& g, F f) {
    auto first_in = [](int64_t start, int64_t d) { return start >= 0 ? 0 : (-start + d - 1) / d; };
    auto end_in = [](int64_t start, int64_t d, int64_t size, int64_t k) {
        return std::min(k, start >= size ? 0 : (size - start + d - 1) / d);
    };
    for (int64_t p = 0; p < g.nc; ++p)
        for (int64_t oy = 0; oy < g.oh; ++oy)
            for (int64_t ox = 0; ox < g.ow; ++ox) {
                Window w;
                w.base = p * g.h * g.w;
                w.y0 = oy * g.s[0] - g.pb[0];
                w.x0 = ox * g.s[1] - g.pb[1];
                w.ky0 = first_in(w.y0, g.d[0]);
                w.ky1 = end_in(w.y0, g.d[0], g.h, g.k[0]);
                w.kx0 = first_in(w.x0, g.d[1]);
                w.kx1 = end_in(w.x0, g.d[1], g.w, g.k[1]);
                const int64_t yend = std::min(w.y0 + (g.k[0] - 1) * g.d[0] + 1, g.h + g.pe[0]);
                const int64_t xend = std::min(w.x0 + (g.k[1] - 1) * g.d[1] + 1, g.w + g.pe[1]);
                w.padded = ((yend - w.y0 + g.d[0] - 1) / g.d[0]) * ((xend - w.x0 + g.d[1] - 1) / g.d[1]);
                f((p * g.oh + oy) * g.ow + ox, w);
            }
}

template <typename T, typename Acc, typename Op>
Acc fold_window(const PoolGeom& g, const Window& w, const T* x, Acc acc, Op op) {
    for (int64_t ky = w.ky0; ky < w.ky1; ++ky) {
        const T* row = x + w.base + (w.y0 + ky * g.d[0]) * g.w + w.x0;
        for (int64_t kx = w.kx0; kx < w.kx1; ++kx) acc = op(acc, row[kx * g.d[1]]);
    }
    return acc;
}

// Max is separable: per output row, first the column-wise max over the valid kernel rows
// (contiguous, vectorisable), then the row-wise max over the valid kernel columns.
template <typename T>
void max_pool_typed(const PoolGeom& g, const Tensor& x, Tensor& y) {
    const T* px = x.data<T>();
    T* py = y.data<T>();
    std::vector<T> colmax(static_cast<size_t>(g.w));
    for (int64_t p = 0; p < g.nc; ++p) {
        const T* plane = px + p * g.h * g.w;
        for (int64_t oy = 0; oy < g.oh; ++oy) {
            const int64_t y0 = oy * g.s[0] - g.pb[0];
            std::fill(colmax.begin(), colmax.end(), std::numeric_limits<T>::lowest());
            for (int64_t ky = 0; ky < g.k[0]; ++ky) {
                const int64_t iy = y0 + ky * g.d[0];
                if (iy < 0 || iy >= g.h) continue;
                const T* row = plane + iy * g.w;
                for (int64_t ix = 0; ix < g.w; ++ix) colmax[static_cast<size_t>(ix)] = row[ix] > colmax[static_cast<size_t>(ix)] ? row[ix] : colmax[static_cast<size_t>(ix)];
            }
            T* out = py + (p * g.oh + oy) * g.ow;
            for (int64_t ox = 0; ox < g.ow; ++ox) {
                const int64_t x0 = ox * g.s[1] - g.pb[1];
                T m = std::numeric_limits<T>::lowest();
                for (int64_t kx = 0; kx < g.k[1]; ++kx) {
                    const int64_t ix = x0 + kx * g.d[1];
                    if (ix >= 0 && ix < g.w) m = colmax[static_cast<size_t>(ix)] > m ? colmax[static_cast<size_t>(ix)] : m;
                }
                out[ox] = m;
            }
        }
    }
}

Outputs max_pool(const Attributes& a, const Inputs& in) {
    const Tensor& x = need(in, 0, "MaxPool");
    if (a.get_int("storage_order", 0) != 0) fail("MaxPool", "storage_order=1 is not supported");
    const PoolGeom g = pool_geometry(x, a, "MaxPool");
    Tensor y = same_type_like(x, g.out_shape);
    switch (x.dtype()) {
        case DType::F32: max_pool_typed<float>(g, x, y); break;
        case DType::I8: max_pool_typed<int8_t>(g, x, y); break;
        case DType::U8: max_pool_typed<uint8_t>(g, x, y); break;
        case DType::I16: max_pool_typed<int16_t>(g, x, y); break;
        case DType::U16: max_pool_typed<uint16_t>(g, x, y); break;
        default: fail("MaxPool", std::string("unsupported type ") + dtype_name(x.dtype()));
    }
    return single(std::move(y));
}

Outputs avg_pool(const Attributes& a, const Inputs& in) {
    const Tensor& x = need(in, 0, "AveragePool");
    expect_dtype(x, DType::F32, "AveragePool", "X");
    const PoolGeom g = pool_geometry(x, a, "AveragePool");
    const bool include_pad = a.get_int("count_include_pad", 0) != 0;
    Tensor y(DType::F32, g.out_shape);
    for_each_window(g, [&](int64_t o, const Window& w) {
        const float s = fold_window(g, w, x.data<float>(), 0.0f, [](float acc, float v) { return acc + v; });
        const int64_t cnt = include_pad ? w.padded : w.taps();
        y.data<float>()[o] = cnt > 0 ? s / static_cast<float>(cnt) : 0.0f;
    });
    return single(std::move(y));
}

// Global pools over all spatial dims of [N, C, ...].
template <bool kMax>
Outputs global_pool(const Attributes&, const Inputs& in) {
    const std::string op = kMax ? "GlobalMaxPool" : "GlobalAveragePool";
    const Tensor& x = need(in, 0, op);
    expect_dtype(x, DType::F32, op, "X");
    if (x.rank() < 3) fail(op, "X must be [N, C, spatial...]");
    std::vector<int64_t> os(x.shape().begin(), x.shape().begin() + 2);
    os.resize(x.shape().size(), 1);
    const int64_t planes = x.dim(0) * x.dim(1), sz = prod(x.shape(), 2);
    Tensor y(DType::F32, os);
    for (int64_t p = 0; p < planes; ++p) {
        const float* src = x.data<float>() + p * sz;
        float acc = kMax ? -std::numeric_limits<float>::infinity() : 0.0f;
        for (int64_t i = 0; i < sz; ++i) acc = kMax ? std::max(acc, src[i]) : acc + src[i];
        y.data<float>()[p] = kMax ? acc : acc / static_cast<float>(sz);
    }
    return single(std::move(y));
}

// QLinearAveragePool, as onnxruntime computes it: dequantize each input to float
// (x_scale * (x - x_zp)), sum the window in row-major order in float, divide by the count,
// QuantizeLinear (divide by y_scale, RNE, + zp, saturate).
Outputs qlinear_avg_pool(const Attributes& a, const Inputs& in) {
    const std::string op = "QLinearAveragePool";
    const Tensor& x = need(in, 0, op);
    if (a.get_int("channels_last", 0) != 0) fail(op, "channels_last=1 is not supported");
    const float xs = scalar_f32(need(in, 1, op), op), ys = scalar_f32(need(in, 3, op), op);
    const int32_t xz = scalar_zp(opt(in, 2), op), yz = scalar_zp(opt(in, 4), op);
    const PoolGeom g = pool_geometry(x, a, op);
    const bool include_pad = a.get_int("count_include_pad", 0) != 0;
    const int64_t qbits = qbits_attr(a, op);
    Tensor y(x.dtype(), g.out_shape);
    dispatch_q16(x.dtype(), op, [&](auto tag) {
        using T = decltype(tag);
        const QRange r = qrange<T>(qbits);
        std::vector<float> deq(x.numel());
        for (size_t i = 0; i < deq.size(); ++i) deq[i] = xs * static_cast<float>(static_cast<int32_t>(x.data<T>()[i]) - xz);
        for_each_window(g, [&](int64_t o, const Window& w) {
            const float s = fold_window(g, w, deq.data(), 0.0f, [](float acc, float v) { return acc + v; });
            const int64_t cnt = include_pad ? w.padded : w.taps();
            y.data<T>()[o] = quantize_in<T>(cnt > 0 ? s / static_cast<float>(cnt) : 0.0f, ys, yz, r);
        });
        return 0;
    });
    return single(std::move(y));
}

// QLinearGlobalAveragePool, as onnxruntime computes it: exact int32 sum of (x - x_zp) per
// channel, then the shared requantization with scale x_scale / (y_scale * spatial_size).
Outputs qlinear_global_avg_pool(const Attributes& a, const Inputs& in) {
    const std::string op = "QLinearGlobalAveragePool";
    const Tensor& x = need(in, 0, op);
    if (x.rank() < 3) fail(op, "X must be [N, C, spatial...] (or channels-last)");
    const bool cl = a.get_int("channels_last", 0) != 0;
    const float xs = scalar_f32(need(in, 1, op), op), ys = scalar_f32(need(in, 3, op), op);
    const int32_t xz = scalar_zp(opt(in, 2), op), yz = scalar_zp(opt(in, 4), op);
    const int64_t n = x.dim(0), c = cl ? x.dim(-1) : x.dim(1);
    const int64_t sz = static_cast<int64_t>(x.numel()) / std::max<int64_t>(1, n * c);
    std::vector<int64_t> os(x.shape().size(), 1);
    os[0] = n;
    os[cl ? os.size() - 1 : 1] = c;
    Tensor y(x.dtype(), os);
    const float scale = xs / (ys * static_cast<float>(sz));
    const int64_t qbits = qbits_attr(a, op);
    dispatch_q16(x.dtype(), op, [&](auto tag) {
        using T = decltype(tag);
        const QRange r = qrange<T>(qbits);
        const T* px = x.data<T>();
        for (int64_t b = 0; b < n; ++b)
            for (int64_t ch = 0; ch < c; ++ch) {
                int64_t acc = 0;
                for (int64_t i = 0; i < sz; ++i) acc += cl ? px[(b * sz + i) * c + ch] : px[(b * c + ch) * sz + i];
                acc -= int64_t{xz} * sz;
                if constexpr (sizeof(T) == 1) {
                    y.data<T>()[b * c + ch] = requant_in<T>(static_cast<int32_t>(acc), scale, yz, r);
                } else {
                    // 16-bit sums exceed float's 24-bit mantissa: the same scaling in double.
                    const double v = static_cast<double>(acc) * static_cast<double>(scale);
                    y.data<T>()[b * c + ch] = static_cast<T>(saturate(round_half_even(v) + yz, r.lo, r.hi));
                }
            }
        return 0;
    });
    return single(std::move(y));
}

}  // namespace

void register_pool(OpTable& t) {
    t[":MaxPool"] = max_pool;
    t[":AveragePool"] = avg_pool;
    t[":GlobalAveragePool"] = global_pool<false>;
    t[":GlobalMaxPool"] = global_pool<true>;
    t["com.microsoft:QLinearAveragePool"] = qlinear_avg_pool;
    t["com.microsoft:QLinearGlobalAveragePool"] = qlinear_global_avg_pool;
}

}  // namespace num::ops
