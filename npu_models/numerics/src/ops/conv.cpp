// SPDX-License-Identifier: MIT
// fp32 Conv and ConvTranspose (im2col / col2im around sgemm) and the shared conv geometry.
#include "conv_geom.h"

#include "numerics/gemm.h"

namespace num::ops {
namespace {

void spatial_attrs(ConvGeom& g, const Attributes& a, const std::vector<int64_t>& kernel, const std::string& op) {
    const size_t s = static_cast<size_t>(g.spatial);
    std::vector<int64_t> ks = a.get_ints("kernel_shape", kernel);
    const std::vector<int64_t> st = ints_or(a, "strides", s, 1), dl = ints_or(a, "dilations", s, 1);
    if (ks.size() != s || st.size() != s || dl.size() != s) fail(op, "kernel_shape/strides/dilations rank mismatch");
    g.kh = s == 2 ? ks[0] : 1;
    g.kw = ks[s - 1];
    g.sh = s == 2 ? st[0] : 1;
    g.sw = st[s - 1];
    g.dh = s == 2 ? dl[0] : 1;
    g.dw = dl[s - 1];
    if (g.sh < 1 || g.sw < 1 || g.dh < 1 || g.dw < 1) fail(op, "strides and dilations must be >= 1");
    const std::vector<int64_t> pads = ints_or(a, "pads", 2 * s, 0);
    if (pads.size() != 2 * s) fail(op, "pads must have 2*spatial entries");
    g.pt = s == 2 ? pads[0] : 0;
    g.pl = pads[s - 1];
    g.pb = s == 2 ? pads[2] : 0;
    g.pr = pads[2 * s - 1];
}

void read_input_dims(ConvGeom& g, const Tensor& x, const std::string& op) {
    if (x.rank() != 3 && x.rank() != 4) fail(op, "only 1-D and 2-D convolutions are supported, X is " + x.shape_str());
    g.spatial = x.rank() - 2;
    g.n = x.dim(0);
    g.c = x.dim(1);
    g.h = g.spatial == 2 ? x.dim(2) : 1;
    g.w = x.dim(-1);
}

// ONNX auto_pad for Conv: SAME_* keep ceil(in/stride), split the total padding.
void resolve_auto_pad(int64_t in, int64_t k, int64_t s, int64_t d, const std::string& mode, int64_t& pb, int64_t& pe) {
    if (mode == "VALID") {
        pb = pe = 0;
    } else if (mode == "SAME_UPPER" || mode == "SAME_LOWER") {
        const int64_t out = (in + s - 1) / s;
        const int64_t total = std::max<int64_t>(0, (out - 1) * s + (k - 1) * d + 1 - in);
        pb = mode == "SAME_UPPER" ? total / 2 : total - total / 2;
        pe = total - pb;
    }
}

}  // namespace

ConvGeom conv_geometry(const Tensor& x, const Tensor& w, const Attributes& a, const std::string& op) {
    ConvGeom g;
    read_input_dims(g, x, op);
    if (w.rank() != x.rank()) fail(op, "W rank must equal X rank");
    g.m = w.dim(0);
    g.group = a.get_int("group", 1);
    if (g.group < 1 || g.c % g.group != 0 || g.m % g.group != 0) fail(op, "channels not divisible by group");
    if (w.dim(1) != g.cg()) fail(op, "W dim 1 must be C/group");
    std::vector<int64_t> kernel(w.shape().begin() + 2, w.shape().end());
    spatial_attrs(g, a, kernel, op);
    if (g.kw != w.dim(-1) || (g.spatial == 2 && g.kh != w.dim(2))) fail(op, "kernel_shape does not match W");
    const std::string ap = a.get_string("auto_pad", "NOTSET");
    if (ap != "NOTSET") {
        if (g.spatial == 2) resolve_auto_pad(g.h, g.kh, g.sh, g.dh, ap, g.pt, g.pb);
        resolve_auto_pad(g.w, g.kw, g.sw, g.dw, ap, g.pl, g.pr);
    }
    g.oh = (g.h + g.pt + g.pb - ((g.kh - 1) * g.dh + 1)) / g.sh + 1;
    g.ow = (g.w + g.pl + g.pr - ((g.kw - 1) * g.dw + 1)) / g.sw + 1;
    if (g.oh < 1 || g.ow < 1) fail(op, "output would be empty");
    return g;
}

ConvGeom conv_transpose_geometry(const Tensor& x, const Tensor& w, const Attributes& a, const std::string& op) {
    ConvGeom g;
    read_input_dims(g, x, op);
    if (w.rank() != x.rank() || w.dim(0) != g.c) fail(op, "W must be [C, M/group, k...]");
    g.group = a.get_int("group", 1);
    if (g.group < 1 || g.c % g.group != 0) fail(op, "channels not divisible by group");
    g.m = w.dim(1) * g.group;
    std::vector<int64_t> kernel(w.shape().begin() + 2, w.shape().end());
    spatial_attrs(g, a, kernel, op);
    const size_t s = static_cast<size_t>(g.spatial);
    const std::vector<int64_t> opad = ints_or(a, "output_padding", s, 0);
    std::vector<int64_t> oshape = a.get_ints("output_shape", {});
    if (!oshape.empty() && oshape.size() < s) fail(op, "output_shape has fewer values than spatial dims");
    if (oshape.size() > s) oshape.erase(oshape.begin(), oshape.end() - static_cast<int64_t>(s));
    const std::string ap = a.get_string("auto_pad", "NOTSET");
    const int64_t ins[2] = {g.h, g.w}, ks[2] = {g.kh, g.kw}, ss[2] = {g.sh, g.sw}, ds[2] = {g.dh, g.dw};
    int64_t* pbs[2] = {&g.pt, &g.pl};
    int64_t* pes[2] = {&g.pb, &g.pr};
    int64_t outs[2] = {1, 1};
    for (int i = 2 - g.spatial; i < 2; ++i) {
        const size_t j = static_cast<size_t>(i - (2 - g.spatial));
        const int64_t full = ss[i] * (ins[i] - 1) + opad[j] + (ks[i] - 1) * ds[i] + 1;
        if (!oshape.empty() || ap == "SAME_UPPER" || ap == "SAME_LOWER") {
            const int64_t out = !oshape.empty() ? oshape[j] : ins[i] * ss[i];
            const int64_t total = std::max<int64_t>(0, full - out);
            *pbs[i] = ap == "SAME_UPPER" ? total / 2 : total - total / 2;
            *pes[i] = total - *pbs[i];
        } else if (ap == "VALID") {
            *pbs[i] = *pes[i] = 0;
        }
        outs[i] = full - *pbs[i] - *pes[i];
    }
    g.oh = outs[0];
    g.ow = outs[1];
    if (g.oh < 1 || g.ow < 1) fail(op, "output would be empty");
    return g;
}

std::vector<int64_t> conv_out_shape(const ConvGeom& g) {
    if (g.spatial == 1) return {g.n, g.m, g.ow};
    return {g.n, g.m, g.oh, g.ow};
}

namespace {

Outputs conv_f32(const Attributes& a, const Inputs& in) {
    const std::string op = "Conv";
    const Tensor& x = need(in, 0, op);
    const Tensor& w = need(in, 1, op);
    const Tensor* b = opt(in, 2);
    expect_dtype(x, DType::F32, op, "X");
    expect_dtype(w, DType::F32, op, "W");
    const ConvGeom g = conv_geometry(x, w, a, op);
    if (b && (b->dtype() != DType::F32 || static_cast<int64_t>(b->numel()) != g.m)) fail(op, "B must be float[M]");
    Tensor y(DType::F32, conv_out_shape(g));
    const int64_t K = g.k(), P = g.p();
    std::vector<float> col(g.pointwise() ? 0 : static_cast<size_t>(K * P));
    for (int64_t n = 0; n < g.n; ++n)
        for (int64_t gr = 0; gr < g.group; ++gr) {
            const float* xs = x.data<float>() + (n * g.c + gr * g.cg()) * g.h * g.w;
            if (!g.pointwise()) im2col(g, xs, 0.0f, col.data());
            float* ys = y.data<float>() + (n * g.m + gr * g.mg()) * P;
            sgemm(g.mg(), P, K, w.data<float>() + gr * g.mg() * K, K, g.pointwise() ? xs : col.data(), P, ys, P);
            if (b)
                for (int64_t m = 0; m < g.mg(); ++m)
                    for (int64_t p = 0; p < P; ++p) ys[m * P + p] += b->data<float>()[gr * g.mg() + m];
        }
    return single(std::move(y));
}

// ConvTranspose = GEMM to columns (W^T x X) then col2im scatter-add.
Outputs conv_transpose_f32(const Attributes& a, const Inputs& in) {
    const std::string op = "ConvTranspose";
    const Tensor& x = need(in, 0, op);
    const Tensor& w = need(in, 1, op);
    const Tensor* b = opt(in, 2);
    expect_dtype(x, DType::F32, op, "X");
    expect_dtype(w, DType::F32, op, "W");
    const ConvGeom g = conv_transpose_geometry(x, w, a, op);
    if (b && (b->dtype() != DType::F32 || static_cast<int64_t>(b->numel()) != g.m)) fail(op, "B must be float[M]");
    Tensor y(DType::F32, conv_out_shape(g));
    const int64_t kk = g.kh * g.kw, K = g.mg() * kk, pin = g.h * g.w, cg = g.cg();
    std::vector<float> wt(static_cast<size_t>(K * cg)), col(static_cast<size_t>(K * pin));
    for (int64_t gr = 0; gr < g.group; ++gr) {
        const float* wg = w.data<float>() + gr * cg * K;  // [cg][K]
        for (int64_t c = 0; c < cg; ++c)
            for (int64_t k = 0; k < K; ++k) wt[static_cast<size_t>(k * cg + c)] = wg[c * K + k];
        for (int64_t n = 0; n < g.n; ++n) {
            const float* xs = x.data<float>() + (n * g.c + gr * cg) * pin;
            sgemm(K, pin, cg, wt.data(), cg, xs, pin, col.data(), pin);
            float* ys = y.data<float>() + (n * g.m + gr * g.mg()) * g.oh * g.ow;
            for (int64_t m = 0; m < g.mg(); ++m)
                for (int64_t ky = 0; ky < g.kh; ++ky)
                    for (int64_t kx = 0; kx < g.kw; ++kx) {
                        const float* cr = col.data() + ((m * g.kh + ky) * g.kw + kx) * pin;
                        for (int64_t iy = 0; iy < g.h; ++iy) {
                            const int64_t oy = iy * g.sh - g.pt + ky * g.dh;
                            if (oy < 0 || oy >= g.oh) continue;
                            for (int64_t ix = 0; ix < g.w; ++ix) {
                                const int64_t ox = ix * g.sw - g.pl + kx * g.dw;
                                if (ox >= 0 && ox < g.ow) ys[(m * g.oh + oy) * g.ow + ox] += cr[iy * g.w + ix];
                            }
                        }
                    }
        }
    }
    if (b)
        for (int64_t n = 0; n < g.n; ++n)
            for (int64_t m = 0; m < g.m; ++m)
                for (int64_t p = 0; p < g.oh * g.ow; ++p)
                    y.data<float>()[(n * g.m + m) * g.oh * g.ow + p] += b->data<float>()[m];
    return single(std::move(y));
}

}  // namespace

void register_conv(OpTable& t) {
    t[":Conv"] = conv_f32;
    t[":ConvTranspose"] = conv_transpose_f32;
}

}  // namespace num::ops
