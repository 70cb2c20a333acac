// SPDX-License-Identifier: MIT
// DepthToSpace, SpaceToDepth (any element type, by raw width) and the normalisations
// LayerNormalization (opset 17) and LpNormalization, as the ONNX operator definitions give them:
//   DepthToSpace DCR: out[n][c][h*b+i][w*b+j] = in[n][(i*b+j)*C+c][h][w]; CRD: in[n][c*b*b+i*b+j][h][w]
//   SpaceToDepth:     out[n][(i*b+j)*C+c][h][w] = in[n][c][h*b+i][w*b+j]
//   LayerNormalization over dims [axis, rank): mean, variance (both / n), (x - mean) * (1 /
//     sqrt(var + epsilon)) * scale + bias, accumulated in float in element order
//   LpNormalization along axis: x / (sum |x|) for p = 1, x / sqrt(sum x^2) for p = 2 (0 for a zero norm)
#include <cmath>
#include <cstring>

#include "op_common.h"

namespace num::ops {
namespace {

template <bool kD2S>
Outputs space_depth(const Attributes& a, const Inputs& in) {
    const std::string op = kD2S ? "DepthToSpace" : "SpaceToDepth";
    const Tensor& x = need(in, 0, op);
    if (x.rank() != 4) fail(op, "input must be 4-D");
    const int64_t b = a.get_int("blocksize", 0);
    if (b < 1) fail(op, "blocksize must be positive");
    if (b > (int64_t{1} << 31)) fail(op, "blocksize larger than 2^31");  // b * b must not overflow
    const bool crd = kD2S && a.get_string("mode", "DCR") == "CRD";
    const int64_t N = x.dim(0), C = x.dim(1), H = x.dim(2), W = x.dim(3);
    if (kD2S ? C % (b * b) : (H % b || W % b)) fail(op, "shape not divisible by the block size");
    const std::vector<int64_t> os =
        kD2S ? std::vector<int64_t>{N, C / (b * b), H * b, W * b} : std::vector<int64_t>{N, C * b * b, H / b, W / b};
    Tensor y = same_type_like(x, os);
    const size_t es = dtype_size(x.dtype());
    const int64_t OC = os[1], OH = os[2], OW = os[3];
    for (int64_t n = 0; n < N; ++n)
        for (int64_t c = 0; c < OC; ++c)
            for (int64_t h = 0; h < OH; ++h)
                for (int64_t w = 0; w < OW; ++w) {
                    int64_t ic, ih, iw;
                    if (kD2S) {
                        const int64_t i = h % b, j = w % b;
                        ic = crd ? c * b * b + i * b + j : (i * b + j) * OC + c;
                        ih = h / b;
                        iw = w / b;
                    } else {
                        const int64_t blk = c / C, cc = c % C, i = blk / b, j = blk % b;
                        ic = cc;
                        ih = h * b + i;
                        iw = w * b + j;
                    }
                    std::memcpy(y.raw() + (((n * OC + c) * OH + h) * OW + w) * static_cast<int64_t>(es),
                                x.raw() + (((n * C + ic) * H + ih) * W + iw) * static_cast<int64_t>(es), es);
                }
    return single(std::move(y));
}

Outputs layer_norm(const Attributes& a, const Inputs& in) {
    const std::string op = "LayerNormalization";
    const Tensor& x = need(in, 0, op);
    expect_dtype(x, DType::F32, op, "X");
    const int ax = norm_axis(a.get_int("axis", -1), x.rank(), op);
    const float eps = a.get_float("epsilon", 1e-5f);
    const int64_t n = prod(x.shape(), static_cast<size_t>(ax)), outer = prod(x.shape(), 0, static_cast<size_t>(ax));
    const Tensor& sc = need(in, 1, op);
    const Tensor* bi = opt(in, 2);
    if (static_cast<int64_t>(sc.numel()) != n || (bi && static_cast<int64_t>(bi->numel()) != n))
        fail(op, "scale and bias must have the normalised shape");
    Tensor y(DType::F32, x.shape());
    for (int64_t o = 0; o < outer; ++o) {
        const float* v = x.data<float>() + o * n;
        float* out = y.data<float>() + o * n;
        float mean = 0.0f, var = 0.0f;
        for (int64_t k = 0; k < n; ++k) mean += v[k];
        mean /= static_cast<float>(n);
        for (int64_t k = 0; k < n; ++k) var += (v[k] - mean) * (v[k] - mean);
        var /= static_cast<float>(n);
        const float inv = 1.0f / std::sqrt(var + eps);
        for (int64_t k = 0; k < n; ++k)
            out[k] = (v[k] - mean) * inv * sc.data<float>()[k] + (bi ? bi->data<float>()[k] : 0.0f);
    }
    return single(std::move(y));
}

Outputs lp_norm(const Attributes& a, const Inputs& in) {
    const std::string op = "LpNormalization";
    const Tensor& x = need(in, 0, op);
    expect_dtype(x, DType::F32, op, "input");
    const int ax = norm_axis(a.get_int("axis", -1), x.rank(), op);
    const int64_t p = a.get_int("p", 2);
    if (p != 1 && p != 2) fail(op, "p must be 1 or 2");
    const int64_t n = x.dim(ax), outer = prod(x.shape(), 0, static_cast<size_t>(ax)),
                  inner = prod(x.shape(), static_cast<size_t>(ax) + 1);
    Tensor y(DType::F32, x.shape());
    for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
            const float* v = x.data<float>() + o * n * inner + i;
            float* out = y.data<float>() + o * n * inner + i;
            float nrm = 0.0f;
            for (int64_t k = 0; k < n; ++k) nrm += p == 1 ? std::fabs(v[k * inner]) : v[k * inner] * v[k * inner];
            if (p == 2) nrm = std::sqrt(nrm);
            for (int64_t k = 0; k < n; ++k) out[k * inner] = nrm == 0.0f ? 0.0f : v[k * inner] / nrm;
        }
    return single(std::move(y));
}

}  // namespace

void register_space_norm(OpTable& t) {
    t[":DepthToSpace"] = space_depth<true>;
    t[":SpaceToDepth"] = space_depth<false>;
    t[":LayerNormalization"] = layer_norm;
    t[":LpNormalization"] = lp_norm;
}

}  // namespace num::ops
