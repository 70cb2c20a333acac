// SPDX-License-Identifier: MIT
// Convolution geometry (ONNX Conv/ConvTranspose attributes resolved to 2-D numbers; 1-D
// convolutions are 2-D with height 1) and the im2col lowering shared by the float and 8-bit paths.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>

#include "op_common.h"

namespace num::ops {

struct ConvGeom {
    int64_t n = 0, c = 0, h = 0, w = 0;  // input
    int64_t m = 0, group = 1;            // output channels, groups
    int64_t kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1;
    int64_t pt = 0, pl = 0, pb = 0, pr = 0;
    int64_t oh = 0, ow = 0;
    int spatial = 2;  // 1 or 2 spatial dims in the ONNX shapes
    int64_t cg() const { return c / group; }
    int64_t mg() const { return m / group; }
    int64_t k() const { return cg() * kh * kw; }
    int64_t p() const { return oh * ow; }
    bool pointwise() const {
        return kh == 1 && kw == 1 && sh == 1 && sw == 1 && pt == 0 && pl == 0 && pb == 0 && pr == 0;
    }
};

/// Conv geometry from X [N,C,(H,)W], W [M,C/group,(kh,)kw] and the attributes.
ConvGeom conv_geometry(const Tensor& x, const Tensor& w, const Attributes& a, const std::string& op);
/// ConvTranspose geometry: W is [C, M/group, (kh,)kw]; o* is the output size.
ConvGeom conv_transpose_geometry(const Tensor& x, const Tensor& w, const Attributes& a, const std::string& op);
/// Output shape [N, M, (oh,) ow] for g.
std::vector<int64_t> conv_out_shape(const ConvGeom& g);

/// Row k = (c*kh + ky)*kw + kx of the im2col matrix (P = oh*ow entries) for one image and group;
/// x points at the group's first channel (cg x h x w), taps outside the input read `pad`.
template <typename T>
void im2col_row(const ConvGeom& g, const T* x, T pad, int64_t k, T* dst) {
    const int64_t kx = k % g.kw, ky = (k / g.kw) % g.kh, c = k / (g.kw * g.kh);
    // ox range with ix = ox*sw - pl + kx*dw inside [0, w).
    const int64_t off = kx * g.dw - g.pl;
    int64_t lo = off >= 0 ? 0 : (-off + g.sw - 1) / g.sw;
    int64_t hi = (g.w - off + g.sw - 1) / g.sw;  // first ox with ix >= w
    lo = std::min(lo, g.ow);
    hi = std::max(lo, std::min(hi, g.ow));
    for (int64_t oy = 0; oy < g.oh; ++oy) {
        T* d = dst + oy * g.ow;
        const int64_t iy = oy * g.sh - g.pt + ky * g.dh;
        if (iy < 0 || iy >= g.h) {
            std::fill(d, d + g.ow, pad);
            continue;
        }
        const T* src = x + (c * g.h + iy) * g.w + off;
        // Plain loops with the common strides as constants: rows are short (7..112 entries), so
        // inline vectorised copies beat memmove calls.
        for (int64_t ox = 0; ox < lo; ++ox) d[ox] = pad;
        if (g.sw == 1) {
            for (int64_t ox = lo; ox < hi; ++ox) d[ox] = src[ox];
        } else if (g.sw == 2) {
            for (int64_t ox = lo; ox < hi; ++ox) d[ox] = src[2 * ox];
        } else {
            for (int64_t ox = lo; ox < hi; ++ox) d[ox] = src[ox * g.sw];
        }
        for (int64_t ox = hi; ox < g.ow; ++ox) d[ox] = pad;
    }
}

/// The whole im2col matrix col[k][p].
template <typename T>
void im2col(const ConvGeom& g, const T* x, T pad, T* col) {
    for (int64_t k = 0; k < g.k(); ++k) im2col_row(g, x, pad, k, col + k * g.p());
}

}  // namespace num::ops
