// SPDX-License-Identifier: MIT
// Resize (opset 10-19: nearest with every coordinate_transformation_mode and nearest_mode, n-linear
// applied one axis at a time) and Upsample. Coordinates are computed in float as onnxruntime
// does, so nearest-neighbour ties resolve the same way.
#include <cmath>

#include "op_common.h"

namespace num::ops {
namespace {

struct ResizeCfg {
    std::string mode, ctm, nearest;
    float extrapolation = 0.0f;
};

// Input coordinate of output position x along one dim.
float original_coord(const ResizeCfg& c, int64_t x, float scale, int64_t in, int64_t out, float roi0, float roi1) {
    const float xf = static_cast<float>(x);
    if (c.ctm == "half_pixel") return (xf + 0.5f) / scale - 0.5f;
    if (c.ctm == "pytorch_half_pixel") return out > 1 ? (xf + 0.5f) / scale - 0.5f : 0.0f;
    if (c.ctm == "align_corners") return out == 1 ? 0.0f : xf * static_cast<float>(in - 1) / static_cast<float>(out - 1);
    if (c.ctm == "asymmetric") return xf / scale;
    if (c.ctm == "tf_half_pixel_for_nearest") return (xf + 0.5f) / scale;
    if (c.ctm == "half_pixel_symmetric") {
        const float adj = static_cast<float>(out) / (scale * static_cast<float>(in));
        const float center = static_cast<float>(in) / 2.0f;
        return center * (1.0f - adj) + (xf + 0.5f) / scale - 0.5f;
    }
    if (c.ctm == "tf_crop_and_resize") {
        const float fin = static_cast<float>(in - 1);
        if (out > 1) return roi0 * fin + xf * (roi1 - roi0) * fin / static_cast<float>(out - 1);
        return 0.5f * (roi0 + roi1) * fin;
    }
    fail("Resize", "unsupported coordinate_transformation_mode " + c.ctm);
}

int64_t nearest_index(const ResizeCfg& c, float v) {
    const float fl = std::floor(v);
    if (c.nearest == "floor") return static_cast<int64_t>(fl);
    if (c.nearest == "ceil") return static_cast<int64_t>(std::ceil(v));
    if (v - fl == 0.5f) return static_cast<int64_t>(c.nearest == "round_prefer_ceil" ? fl + 1.0f : fl);
    if (c.nearest != "round_prefer_floor" && c.nearest != "round_prefer_ceil") fail("Resize", "unsupported nearest_mode " + c.nearest);
    return static_cast<int64_t>(std::round(v));
}

// One linear pass along dim d: y has x's shape except dim d = out.
void linear_pass(const Tensor& x, int d, int64_t out, const ResizeCfg& c, float scale, float roi0, float roi1, Tensor& y) {
    const int64_t in = x.dim(d), outer = prod(x.shape(), 0, static_cast<size_t>(d)), inner = prod(x.shape(), static_cast<size_t>(d) + 1);
    for (int64_t o = 0; o < out; ++o) {
        float v = original_coord(c, o, scale, in, out, roi0, roi1);
        const bool outside = c.ctm == "tf_crop_and_resize" && (v < 0.0f || v > static_cast<float>(in - 1));
        v = std::max(0.0f, std::min(v, static_cast<float>(in - 1)));
        const int64_t i1 = std::min(static_cast<int64_t>(v), in - 1), i2 = std::min(i1 + 1, in - 1);
        float w1 = std::fabs(v - static_cast<float>(i2)), w2 = std::fabs(v - static_cast<float>(i1));
        if (i1 == i2) w1 = w2 = 0.5f;
        for (int64_t a = 0; a < outer; ++a) {
            const float* s1 = x.data<float>() + (a * in + i1) * inner;
            const float* s2 = x.data<float>() + (a * in + i2) * inner;
            float* dst = y.data<float>() + (a * out + o) * inner;
            for (int64_t i = 0; i < inner; ++i) dst[i] = outside ? c.extrapolation : w1 * s1[i] + w2 * s2[i];
        }
    }
}

Outputs resize_impl(const Tensor& x, const std::vector<float>& scales_in, const std::vector<int64_t>& sizes,
                    const std::vector<float>& roi, const ResizeCfg& c) {
    const int r = x.rank();
    std::vector<int64_t> os(static_cast<size_t>(r));
    std::vector<float> sc(static_cast<size_t>(r));
    for (size_t d = 0; d < os.size(); ++d) {
        const float in = static_cast<float>(x.shape()[d]);
        if (!sizes.empty()) {
            os[d] = sizes[d];
            sc[d] = static_cast<float>(os[d]) / in;
        } else {
            sc[d] = scales_in[d];
            os[d] = static_cast<int64_t>(std::floor(in * sc[d]));
        }
        if (os[d] < 1 || !(sc[d] > 0.0f)) fail("Resize", "invalid output size or scale");
    }
    auto roi_at = [&](size_t d, bool end) { return roi.size() == 2 * os.size() ? roi[d + (end ? os.size() : 0)] : (end ? 1.0f : 0.0f); };
    if (c.mode == "nearest") {
        Tensor y = same_type_like(x, os);
        std::vector<std::vector<int64_t>> maps(os.size());
        const std::vector<int64_t> cs = contiguous_strides(x.shape());
        for (size_t d = 0; d < os.size(); ++d)
            for (int64_t o = 0; o < os[d]; ++o) {
                const float v = original_coord(c, o, sc[d], x.shape()[d], os[d], roi_at(d, false), roi_at(d, true));
                const int64_t i = std::min(std::max<int64_t>(nearest_index(c, v), 0), x.shape()[d] - 1);
                maps[d].push_back(i * cs[d]);
            }
        const size_t es = dtype_size(x.dtype());
        std::vector<int64_t> idx(os.size(), 0);
        for (size_t o = 0; o < y.numel(); ++o) {
            int64_t src = 0;
            for (size_t d = 0; d < os.size(); ++d) src += maps[d][static_cast<size_t>(idx[d])];
            std::copy(x.raw() + src * static_cast<int64_t>(es), x.raw() + (src + 1) * static_cast<int64_t>(es), y.raw() + o * es);
            for (size_t d = os.size(); d-- > 0;) {
                if (++idx[d] < os[d]) break;
                idx[d] = 0;
            }
        }
        return single(std::move(y));
    }
    if (c.mode != "linear") fail("Resize", "mode '" + c.mode + "' is not supported (nearest, linear)");
    expect_dtype(x, DType::F32, "Resize", "X (linear mode)");
    Tensor cur = x;
    for (int d = 0; d < r; ++d) {
        const size_t du = static_cast<size_t>(d);
        if (os[du] == cur.dim(d) && sc[du] == 1.0f && c.ctm != "tf_crop_and_resize") continue;
        std::vector<int64_t> s = cur.shape();
        s[du] = os[du];
        Tensor nxt(DType::F32, s);
        linear_pass(cur, d, os[du], c, sc[du], roi_at(du, false), roi_at(du, true), nxt);
        cur = std::move(nxt);
    }
    return single(std::move(cur));
}

ResizeCfg cfg_from(const Attributes& a, const char* default_ctm) {
    ResizeCfg c;
    c.mode = a.get_string("mode", "nearest");
    if (c.mode == "bilinear" || c.mode == "trilinear") c.mode = "linear";  // Upsample-7 spellings
    c.ctm = a.get_string("coordinate_transformation_mode", default_ctm);
    c.nearest = a.get_string("nearest_mode", "round_prefer_floor");
    c.extrapolation = a.get_float("extrapolation_value", 0.0f);
    if (a.get_int("antialias", 0) != 0) fail("Resize", "antialias is not supported");
    if (a.has("axes")) fail("Resize", "the axes attribute is not supported");
    return c;
}

Outputs resize(const Attributes& a, const Inputs& in) {
    const Tensor& x = need(in, 0, "Resize");
    std::vector<float> roi, scales;
    std::vector<int64_t> sizes;
    if (in.size() == 2 && opt(in, 1)) {  // opset 10: (X, scales)
        scales = float_values(*in[1]);
    } else {
        if (const Tensor* t = opt(in, 1); t && t->numel() && t->dtype() == DType::F32) roi = float_values(*t);
        if (const Tensor* t = opt(in, 2); t && t->numel()) scales = float_values(*t);
        if (const Tensor* t = opt(in, 3); t && t->numel()) sizes = int_values(*t, "Resize");
    }
    if (scales.empty() == sizes.empty()) fail("Resize", "exactly one of scales and sizes must be given");
    if (scales.size() + sizes.size() != x.shape().size()) fail("Resize", "scales/sizes must have one entry per dim");
    return resize_impl(x, scales, sizes, roi, cfg_from(a, "half_pixel"));
}

// Upsample-7/9: scales attribute or input; asymmetric coordinates, floor for nearest.
Outputs upsample(const Attributes& a, const Inputs& in) {
    const Tensor& x = need(in, 0, "Upsample");
    const std::vector<float> scales = opt(in, 1) ? float_values(*in[1]) : a.get_floats("scales", {});
    if (scales.size() != x.shape().size()) fail("Upsample", "scales must have one entry per dim");
    Attributes b = a;
    b.set("coordinate_transformation_mode", std::string("asymmetric"));
    b.set("nearest_mode", std::string("floor"));
    return resize_impl(x, scales, {}, {}, cfg_from(b, "asymmetric"));
}

}  // namespace

void register_resize(OpTable& t) {
    t[":Resize"] = resize;
    t[":Upsample"] = upsample;
}

}  // namespace num::ops
