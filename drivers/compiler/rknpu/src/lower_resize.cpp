// SPDX-License-Identifier: MIT
// Bilinear Resize by integer factors (issue 15): half_pixel linear interpolation by (fh, fw) is the
// nearest upsampling u (u[o] = x[o / f]) filtered by a fixed separable kernel, with the input's
// edge replicated (half_pixel clamps the source coordinate to the first / last pixel):
//   f odd:  k = [1, 1, ..., 1] / f          (f taps)
//   f even: k = [1, 2, ..., 2, 1] / (2 f)   (f + 1 taps)
// e.g. f = 2: y[2i] = x[i-1]/4 + 3x[i]/4 = (u[2i-1] + 2u[2i] + u[2i+1]) / 4. The weights are integers
// with one scale 1 / (D_h D_w), so the CNA's depthwise sum is exact and the only rounding is the
// DPU's one requantization (differences from onnxruntime's float interpolation: rounding ties).
// Block mapping (ASSUMPTION: how RKNN resizes bilinearly is not public):
//   1. the input padded by one replicated pixel: a DPU copy of the interior (row notch 2), then
//      lower_border_copies (lower_move.cpp, Pad reflect / edge's mechanism too): the left/right
//      columns read by the PPU (1x1 window copy through the line stride) into a compact column and
//      written back by DPU copies (row notch w + 1), then the top/bottom rows (with the corners)
//      copied from rows 1 and h;
//   2. the nearest upsampling of the padded input (lower_resize_nearest_op: DPU copies);
//   3. one depthwise convolution (KH x KW, no padding) over the window of the upsampled image that
//      starts (f - J) pixels in (J = (K - 1) / 2), writing the output.
// Every task but the convolution's writes a layer-internal scratch (NpuTask::intermediate).
#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "lower_move.h"

namespace drv::rknpu {

namespace {

uint64_t u(int v) { return static_cast<uint64_t>(v); }

}  // namespace

std::vector<int> bilinear_taps(int f, int& denom) {
    if (f < 1) throw std::invalid_argument(fmt::format("bilinear factor {} is not positive", f));
    if (f % 2 == 1) {
        denom = f;
        return std::vector<int>(static_cast<size_t>(f), 1);
    }
    denom = 2 * f;
    std::vector<int> k(static_cast<size_t>(f + 1), 2);
    k.front() = k.back() = 1;
    return k;
}

std::vector<std::pair<int, int>> resize_bilinear_scratch(const DeviceTensor& in, int fh, int fw) {
    return {{in.h + 2, in.w + 2}, {in.h, 1}, {in.h + 2, (in.w + 2) * fw}, {(in.h + 2) * fh, (in.w + 2) * fw}};
}

std::vector<TaskBody> lower_resize_bilinear_op(const std::string& name, const DeviceTensor& in, const DeviceTensor& out,
                                               int fh, int fw, const std::vector<DeviceTensor>& s, ArenaBuilder& arena,
                                               const hw::SocProfile& soc, int core) {
    auto bad = [&](const std::string& why) { throw std::invalid_argument(fmt::format("Resize '{}': {}", name, why)); };
    // int8 or fp16 (issue 14): `atom` channels of `eb` bytes per pixel; the copies move elements
    // unchanged in either precision, the conv is the fp16 CNA/CORE (fp16 products, fp32 sums).
    const bool f16 = in.fp16;
    const int atom = f16 ? soc.npu.c2_fp16.value : soc.npu.c2_int8.value;
    const uint64_t eb = f16 ? 2 : 1;
    if (s.size() != 4) bad("four scratch tensors expected");
    const DeviceTensor &pad = s[0], &col = s[1], &wide = s[2], &up = s[3];
    if (in.c2 != atom || out.c2 != atom || out.fp16 != f16) bad("tensor C2 or precision differs from the SoC's int8/fp16 C2");
    if (out.h != in.h * fh || out.w != in.w * fw || out.c != in.c) bad("output is not the input times the factors");
    if (in.line_stride != u(in.w) * u(atom) * eb) bad("input rows are not compact");
    std::vector<TaskBody> tasks;
    const NpuTask::Window whole_in{0, in.c, 0, in.h, 0, in.w};
    auto inter = [&](TaskBody t) {
        t.meta.intermediate = true;
        t.meta.in_window = whole_in;
        tasks.push_back(std::move(t));
    };
    const uint64_t A = u(atom) * eb;
    // A DPU copy of a w x h cube of every channel: one task when the MRDMA's 16-byte surface notch and
    // the output's 16-byte surface stride express both strides, else one task per C1 surface (8-byte
    // atoms on RK356x, int8 or fp16, with an odd pixel count: e.g. the columns of an odd height, the
    // padded rows of an odd width).
    auto copy = [&](const std::string& what, uint64_t src, uint32_t src_surf, uint64_t dst, uint32_t dst_surf, int w,
                    int h, int notch) {
        const uint64_t compact = u(w) * u(h) * A;
        const bool whole = in.c <= atom || (src_surf >= compact && (src_surf - compact) % 16 == 0 && dst_surf % 16 == 0);
        for (int c0 = 0; c0 < in.c; c0 += whole ? in.c : atom) {
            const int c = whole ? in.c : std::min(atom, in.c - c0);
            const uint64_t k = u(c0 / atom);
            inter(lower_dpu_copy(whole ? what : fmt::format("{} (surface {})", what, k), src + k * src_surf, src_surf,
                                 dst + k * dst_surf, dst_surf, w, h, c, notch, atom, core, false, f16));
        }
    };
    // 1. Replicate-pad by one pixel: the interior, then the border copies (the first and last input
    // columns through the PPU, rows 1 and h with the corners into rows 0 and h + 1).
    copy("bilinear pad: interior", in.offset, in.surf_stride, pad.offset + (u(pad.w) + 1) * A, pad.surf_stride, in.w,
         in.h, 2);
    for (TaskBody& t : lower_border_copies(name, pad, 1, in, {{0, 0}, {pad.w - 1, in.w - 1}}, {{0, 1}, {in.h + 1, in.h}},
                                           col, whole_in, true, arena, soc, core))
        inter(std::move(t));
    // 2. Nearest upsampling of the padded input.
    for (TaskBody& t : lower_resize_nearest_op(name, pad, up, fh, fw, wide.offset, soc, core)) inter(std::move(t));
    // 3. The fixed-kernel depthwise convolution over the window (f - J) pixels in.
    int dh = 1, dw = 1;
    const std::vector<int> kh = bilinear_taps(fh, dh), kw = bilinear_taps(fw, dw);
    const int KH = static_cast<int>(kh.size()), KW = static_cast<int>(kw.size());
    DeviceTensor view = up;
    view.offset = up.offset + u(fh - (KH - 1) / 2) * up.line_stride + u(fw - (KW - 1) / 2) * A;
    view.h = out.h + KH - 1;
    view.w = out.w + KW - 1;
    view.ir_shape = {1, in.c, view.h, view.w};
    ConvOp op;
    op.name = name;
    op.in_c = op.out_c = in.c;
    op.depthwise = true;
    op.kernel_h = KH, op.kernel_w = KW;
    // fp16: the weights k_h k_w / (D_h D_w), fp16 (exact for even factors, D a power of two; an odd
    // factor's 1/f^2 rounded to fp16, 2^-11 relative), the products and the fp32 sum the CNA/CORE's.
    op.fp16 = f16;
    (f16 ? op.weights_f.resize(u(in.c) * u(KH) * u(KW)) : op.weights.resize(u(in.c) * u(KH) * u(KW)));
    for (size_t c = 0; c < u(in.c); ++c)
        for (int a = 0; a < KH; ++a)
            for (int b = 0; b < KW; ++b) {
                const size_t at = (c * u(KH) + u(a)) * u(KW) + u(b);
                if (f16) op.weights_f[at] = static_cast<float>(kh[u(a)] * kw[u(b)]) / static_cast<float>(dh * dw);
                else op.weights[at] = static_cast<int8_t>(kh[u(a)] * kw[u(b)]);
            }
    op.w_scales = {1.0f / static_cast<float>(dh * dw)};
    op.in_scale = in.scale, op.out_scale = out.scale;
    op.in_zp = in.zp, op.out_zp = out.zp;
    // Each conv task's input window in the layer input's rows (verify_tiling): view row v is row
    // (v + fh - J) / fh - 1 of the input (the padded upsampling's row over fh, less the pad row).
    // Its CBUF figures are the conv planner's, for the rows of the upsampled scratch it loads.
    auto x_row = [&](int v) { return std::clamp((v + fh - (KH - 1) / 2) / fh - 1, 0, in.h - 1); };
    for (TaskBody& t : lower_conv_op(op, view, out, arena, soc, {core})) {
        t.meta.what = fmt::format("bilinear x{}x{}: {}x{} kernel, {}", fh, fw, KH, KW, t.meta.what);
        const NpuTask::Window v = t.meta.in_window;
        t.meta.in_window = {v.c0, v.c1, x_row(v.y0), x_row(v.y1 - 1) + 1, 0, in.w};
        tasks.push_back(std::move(t));
    }
    return tasks;
}

}  // namespace drv::rknpu
