// SPDX-License-Identifier: MIT
// Data-movement lowerings (issue 15): exact int8 copies.
//  - DPU copy: a DPU-only task (MRDMA input, FLYING_MODE 1) with every stage bypassed and the
//    output convert at scale 1 / shift 0 / offset 0, writing rows `w + notch` atoms apart
//    (DATA_CUBE_NOTCH_ADDR, assumption A-NOTCH of docs/rknpu-register-semantics.md §17).
//  - Nearest Resize by integer factors: two passes of DPU copies (width: one-atom rows written
//    every sw-th atom; height: widened rows written every sh-th row).
//  - Window copy (Slice / Split on H or W, strided Slice): the PPU reading a window of the source
//    through PPU_RDMA's line and surface strides with a 1x1 max-pool kernel, stride = step.
//  - Pad: constant (DPU fills of the border), reflect / edge (border copies: PPU column reads and
//    DPU copies, lower_border_copies, also the bilinear Resize's replicate pad); a notched DPU copy
//    of the input into the interior for every mode.
// How RKNN itself moves these tensors is not public; the mapping is an assumption (COMPILER.md).
#include "lower_move.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "hw/rknpu_regs.h"

namespace drv::rknpu {

namespace {

namespace en = hw::rknpu::enums;

constexpr uint64_t kCubeMax = 8192;   // 13-bit DATA_CUBE_WIDTH/HEIGHT/CHANNEL fields (value - 1)
constexpr uint64_t kNotchMax = 8191;  // 13-bit NOTCH_ADDR_0

uint64_t u(int v) { return static_cast<uint64_t>(v); }

}  // namespace

namespace {

/// A Pad's interior (constant, reflect, edge): a DPU copy of the input into rows [top, top + in.h),
/// columns [left, left + in.w) of `out` (row notch out.w - in.w); one task per C1 surface where the
/// input's compact surface is not a whole number of 16-byte units.
void pad_interior(std::vector<TaskBody>& tasks, const DeviceTensor& in, const DeviceTensor& out, int top, int left,
                  int atom, int core) {
    const bool f16 = in.fp16;
    const uint64_t A = u(atom) * (f16 ? 2 : 1), row = u(out.w) * A;
    const bool whole = out.c <= atom || (u(in.w) * u(in.h) * A) % 16 == 0;
    for (int c0 = 0; c0 < out.c; c0 += whole ? out.c : atom) {
        const int c = whole ? out.c : std::min(atom, out.c - c0);
        const uint64_t s = u(c0 / atom);
        TaskBody t = lower_dpu_copy(fmt::format("pad interior {}x{}", in.h, in.w), in.offset + s * in.surf_stride,
                                    in.surf_stride, out.offset + s * out.surf_stride + u(top) * row + u(left) * A,
                                    out.surf_stride, in.w, in.h, c, out.w - in.w, atom, core, false, f16);
        t.meta.out_window = {c0, c0 + c, top, top + in.h, left, left + in.w};
        t.meta.in_window = {c0, c0 + c, 0, in.h, 0, in.w};
        tasks.push_back(std::move(t));
    }
}

}  // namespace

TaskBody lower_dpu_copy(const std::string& what, uint64_t src, uint32_t src_surf, uint64_t dst, uint32_t dst_surf,
                        int w, int h, int c, int notch, int atom, int core, bool channel_last, bool fp16,
                        std::optional<int32_t> fill) {
    const uint64_t eb = fp16 ? 2 : 1;  // bytes per element; `atom` counts channels
    const uint64_t compact = u(w) * u(h) * u(atom) * eb;
    if (w < 1 || h < 1 || c < 1 || u(w) > kCubeMax || u(h) > kCubeMax || u(c) > kCubeMax)
        throw std::invalid_argument(fmt::format("{}: cube {}x{}x{} beyond the 13-bit DPU fields", what, c, h, w));
    if (notch < 0 || u(notch) > kNotchMax)
        throw std::invalid_argument(fmt::format("{}: row notch {} beyond the 13-bit NOTCH_ADDR field", what, notch));
    if (c > atom && (src_surf < compact || (src_surf - compact) % 16 != 0 || dst_surf % 16 != 0))
        throw std::invalid_argument(fmt::format("{}: surface strides not expressible in 16-byte units", what));
    BodyBuilder b;
    b.write_fields("DPU_FEATURE_MODE_CFG", {{"BURST_LEN", en::BurstLen::BURST_16},
                                            {"OUTPUT_MODE", en::DpuOutputMode::TO_MEMORY},
                                            {"FLYING_MODE", 1},
                                            {"TP_EN", channel_last ? 1u : 0u}});
    if (channel_last)
        b.write_fields("DPU_WDMA_SIZE_0", {{"CHANNEL_WDMA", u(c - 1)}, {"SIZE_C_WDMA", u(c - 1)}, {"TP_PRECISION", fp16 ? 1u : 0u}});  // 8 / 16-bit elements
    // fp16 (issue 14): the vendor's fp16 DPU task conventions (lower_fp16.cpp): fp16 in / proc / out,
    // MRDMA FP16TOFP32_EN, FP32TOFP16_EN; every stage bypassed, the value is copied unchanged.
    const auto prec = fp16 ? en::Precision::FP16 : en::Precision::INT8;
    b.write_fields("DPU_DATA_FORMAT", {{"PROC_PRECISION", prec}, {"IN_PRECISION", prec}, {"OUT_PRECISION", prec}});
    b.write_addr("DPU_DST_BASE_ADDR", dst);
    b.write_fields("DPU_DST_SURF_STRIDE",
                   {{"DST_SURF_STRIDE", dst_surf / hw::rknpu::DPU_DST_SURF_STRIDE::DST_SURF_STRIDE.unit}});
    b.write_fields("DPU_DATA_CUBE_WIDTH", {{"WIDTH", u(w - 1)}});
    b.write_fields("DPU_DATA_CUBE_HEIGHT", {{"HEIGHT", u(h - 1)}});
    b.write_fields("DPU_DATA_CUBE_NOTCH_ADDR", {{"NOTCH_ADDR_0", u(notch)}, {"NOTCH_ADDR_1", u(notch)}});
    b.write_fields("DPU_DATA_CUBE_CHANNEL", {{"CHANNEL", u(c - 1)}, {"ORIG_CHANNEL", u(c - 1)}});
    b.write_fields("DPU_BS_CFG", {{"BS_BYPASS", 1}, {"BS_ALU_BYPASS", 1}, {"BS_MUL_BYPASS", 1}, {"BS_RELU_BYPASS", 1}});
    b.write_fields("DPU_BN_CFG", {{"BN_BYPASS", 1}, {"BN_ALU_BYPASS", 1}, {"BN_MUL_BYPASS", 1}, {"BN_RELU_BYPASS", 1}});
    b.write_fields(
        "DPU_EW_CFG",
        {{"EW_BYPASS", 1}, {"EW_OP_BYPASS", 1}, {"EW_LUT_BYPASS", 1}, {"EW_OP_CVT_BYPASS", 1}, {"EW_RELU_BYPASS", 1}});
    b.write("DPU_OUT_CVT_OFFSET", static_cast<uint32_t>(fill.value_or(0)));
    b.write_fields("DPU_OUT_CVT_SCALE", {{"OUT_CVT_SCALE", fill ? 0u : 1u}, {"FP32TOFP16_EN", fp16 ? 1u : 0u}});
    b.write_fields("DPU_OUT_CVT_SHIFT", {{"OUT_CVT_SHIFT", 0}});
    b.write_fields("DPU_RDMA_RDMA_DATA_CUBE_WIDTH", {{"WIDTH", u(w - 1)}});
    b.write_fields("DPU_RDMA_RDMA_DATA_CUBE_HEIGHT", {{"HEIGHT", u(h - 1)}});
    b.write_fields("DPU_RDMA_RDMA_DATA_CUBE_CHANNEL", {{"CHANNEL", u(c - 1)}});
    b.write_addr("DPU_RDMA_RDMA_SRC_BASE_ADDR", src);
    b.write_fields("DPU_RDMA_RDMA_SURF_NOTCH", {{"SURF_NOTCH_ADDR", c > atom ? (src_surf - compact) >> 4 : 0}});
    b.write_fields("DPU_RDMA_RDMA_ERDMA_CFG", {{"ERDMA_DISABLE", 1}});
    b.write_fields("DPU_RDMA_RDMA_FEATURE_MODE_CFG", {{"BURST_LEN", en::BurstLen::BURST_16},
                                                      {"FLYING_MODE", 1},
                                                      {"MRDMA_DISABLE", 0},
                                                      {"MRDMA_FP16TOFP32_EN", fp16 ? 1u : 0u},
                                                      {"IN_PRECISION", prec},
                                                      {"PROC_PRECISION", prec}});
    NpuTask m;
    m.enable_mask = kEnableDpu | kEnableDpuRdma;
    m.int_mask = 0x300;
    m.core = core;
    m.what = what;
    return b.finish(m);
}

uint64_t resize_scratch_bytes(const DeviceTensor& in, int sh, int sw) {
    if (sw == 1 || sh == 1) return 0;
    const uint64_t surf = (u(in.h) * u(in.w) * u(sw) * u(in.c2) * (in.fp16 ? 2 : 1) + 15) / 16 * 16;
    return surf * ((u(in.c) + u(in.c2) - 1) / u(in.c2));
}

std::vector<TaskBody> lower_resize_nearest_op(const std::string& name, const DeviceTensor& in,
                                              const DeviceTensor& out, int sh, int sw, uint64_t scratch_off,
                                              const hw::SocProfile& soc, int core) {
    auto bad = [&](const std::string& why) { throw std::invalid_argument(fmt::format("Resize '{}': {}", name, why)); };
    // int8 or fp16 (issue 14): `atom` channels of `ab` bytes per pixel.
    const bool f16 = in.fp16;
    const int atom = f16 ? soc.npu.c2_fp16.value : soc.npu.c2_int8.value;
    const uint64_t ab = u(atom) * (f16 ? 2 : 1);
    if (in.c2 != atom || out.c2 != atom || out.fp16 != f16) bad("tensor C2 or precision differs from the SoC's int8/fp16 C2");
    if (sh < 1 || sw < 1 || out.h != in.h * sh || out.w != in.w * sw || out.c != in.c)
        bad(fmt::format("output {}x{}x{} is not the input {}x{}x{} times ({}, {})", out.c, out.h, out.w, in.c, in.h,
                        in.w, sh, sw));
    for (const DeviceTensor* t : {&in, &out})
        if (t->line_stride != static_cast<uint32_t>(u(t->w) * ab)) bad(fmt::format("rows of '{}' are not compact", t->name));
    // The widened image: the output itself when there is no height pass, else the scratch.
    const bool scratch = sw > 1 && sh > 1;
    const uint64_t wide_off = scratch ? scratch_off : (sh == 1 ? out.offset : in.offset);
    const uint32_t wide_surf =
        scratch ? static_cast<uint32_t>((u(in.h) * u(in.w) * u(sw) * ab + 15) / 16 * 16)
                : (sh == 1 ? out.surf_stride : in.surf_stride);
    // All channels in one task per phase: both surface strides must be 16-byte expressible. One task
    // per C1 surface instead (RK356x, 8-byte atoms, an odd H*W) would multiply the tasks by C1 (the
    // DeepLab pooling broadcast 1x1 -> 32x32 x 256: 1056 tasks, 26 ms of task overhead against
    // 0.1 ms on the host), so that case is left to the CPU with this reason.
    auto groups = [&](uint32_t s_src, uint32_t s_dst, uint64_t compact) {
        if (in.c > atom && ((s_src - compact) % 16 != 0 || s_dst % 16 != 0))
            bad(fmt::format("{}-byte surfaces of {} channels are not expressible in the 16-byte stride units "
                            "(one task per surface and phase)", compact, in.c));
        return std::vector<std::pair<int, int>>{{0, in.c}};
    };
    std::vector<TaskBody> tasks;
    // Windows (verify_tiling): the last pass's tasks write every sh-th row (height pass) or
    // every sw-th column (width pass straight into the output); width passes into the scratch
    // are intermediate.
    auto emit = [&](TaskBody t, int c0, int c, int y0, int y1, int phase, bool height) {
        NpuTask::Window o{c0, c0 + c, y0 * sh, y1 * sh, 0, out.w};
        if (height) o.y0 += phase, o.y_step = sh;
        else o.x0 = phase, o.x_step = sw;
        t.meta.out_window = o;
        t.meta.in_window = {c0, c0 + c, y0, y1, 0, in.w};
        tasks.push_back(std::move(t));
    };
    const int band_w = std::max(1, static_cast<int>(kCubeMax / u(in.w)));  // input rows per width-pass task
    if (sw > 1) {
        const uint32_t dst_surf = wide_surf;
        for (int y0 = 0; y0 < in.h; y0 += band_w) {
            const int y1 = std::min(in.h, y0 + band_w), px = (y1 - y0) * in.w;
            for (const auto& [c0, c] : groups(in.surf_stride, dst_surf, u(px) * ab))
                for (int dx = 0; dx < sw; ++dx) {
                    const uint64_t src = in.offset + u(c0 / atom) * in.surf_stride + u(y0) * in.line_stride;
                    const uint64_t dst = wide_off + u(c0 / atom) * dst_surf + (u(y0) * u(in.w) * u(sw) + u(dx)) * ab;
                    TaskBody t = lower_dpu_copy(fmt::format("resize widen x{} phase {} rows {}-{}", sw, dx, y0, y1 - 1),
                                                src, in.surf_stride, dst, dst_surf, 1, px, c, sw - 1, atom, core, false, f16);
                    t.meta.intermediate = scratch;
                    emit(std::move(t), c0, c, y0, y1, dx, false);
                }
        }
    }
    if (sh > 1) {
        const int ww = in.w * sw;
        const uint64_t row = u(ww) * ab;
        const int band_h = static_cast<int>(kCubeMax);
        for (int y0 = 0; y0 < in.h; y0 += band_h) {
            const int y1 = std::min(in.h, y0 + band_h);
            for (const auto& [c0, c] : groups(wide_surf, out.surf_stride, u(y1 - y0) * row))
                for (int dy = 0; dy < sh; ++dy) {
                    const uint64_t src = wide_off + u(c0 / atom) * wide_surf + u(y0) * row;
                    const uint64_t dst = out.offset + u(c0 / atom) * out.surf_stride + (u(y0) * u(sh) + u(dy)) * row;
                    emit(lower_dpu_copy(fmt::format("resize rows x{} phase {} rows {}-{}", sh, dy, y0, y1 - 1), src,
                                        wide_surf, dst, out.surf_stride, ww, y1 - y0, c, (sh - 1) * ww, atom, core, false, f16),
                         c0, c, y0, y1, dy, true);
                }
        }
    }
    return tasks;
}

std::vector<TaskBody> lower_pad_op(const std::string& name, const DeviceTensor& in, const DeviceTensor& out, int top,
                                   int left, int32_t code, const hw::SocProfile& soc, int core, ArenaBuilder* arena) {
    auto bad = [&](const std::string& why) { throw std::invalid_argument(fmt::format("Pad '{}': {}", name, why)); };
    // int8 or fp16 (issue 14): `atom` channels of `eb` bytes per pixel.
    const bool f16 = in.fp16;
    const int atom = f16 ? soc.npu.c2_fp16.value : soc.npu.c2_int8.value;
    const uint64_t eb = f16 ? 2 : 1;
    const int bottom = out.h - in.h - top, right = out.w - in.w - left;
    if (in.c2 != atom || out.c2 != atom || in.c != out.c || out.fp16 != f16)
        bad("tensor C2, precision or channels differ from the SoC's int8/fp16 C2");
    if (top < 0 || left < 0 || bottom < 0 || right < 0) bad("negative padding");
    if (f16 && !arena) bad("an fp16 pad needs the arena for its constant source");
    for (const DeviceTensor* t : {&in, &out})
        if (t->line_stride != static_cast<uint32_t>(u(t->w) * u(atom) * eb))
            bad(fmt::format("rows of '{}' are not compact", t->name));
    const uint64_t A = u(atom) * eb, row = u(out.w) * A;
    const int c1 = (out.c + atom - 1) / atom;
    // fp16: the vendor's fp16 tasks program the output convert as identity (scale 1, FP32TOFP16_EN;
    // docs/rknpu-register-semantics.md §10) and the DPU model leaves OUT_CVT out on the float path, so
    // the border is no output-convert fill as in int8 but a plain copy of a constant image holding the
    // fp16 pad value (`code` = its bits), C1 surfaces of the largest strip: exact, and independent of
    // what the border bytes held before (a scale-0 product of a NaN would stay NaN).
    uint64_t const_src = 0, const_surf = 0;
    if (f16) {
        const uint64_t strip = std::max({u(out.w) * u(std::max(top, bottom)), u(std::max(left, right)) * u(in.h), u(1)});
        const_surf = (strip * A + 15) / 16 * 16;
        std::vector<uint8_t> img(const_surf * u(c1));
        for (size_t k = 0; k + 1 < img.size(); k += 2)
            img[k] = static_cast<uint8_t>(code & 0xff), img[k + 1] = static_cast<uint8_t>((code >> 8) & 0xff);
        const_src = arena->add_init(img);
    }
    std::vector<TaskBody> tasks;
    // The border: int8, DPU tasks whose output convert is scale 0, offset `code` (every value the pad
    // code), each reading, and ignoring, the bytes of the strip it writes (same cube, compact); fp16,
    // DPU copies of the constant image. A cube whose compact surface is not a whole number of 16-byte
    // units (8-byte atoms, odd w*h) cannot skip to the next surface (the MRDMA's notch is in 16-byte
    // units): one task per C1 surface then.
    auto copy = [&](const std::string& what, uint64_t src, uint32_t src_surf, uint64_t dst, int w, int h, int notch,
                    NpuTask::Window win, std::optional<int32_t> f) {
        if (w < 1 || h < 1) return;
        const bool whole = out.c <= atom || (u(w) * u(h) * A) % 16 == 0;
        for (int c0 = 0; c0 < out.c; c0 += whole ? out.c : atom) {
            const int c = whole ? out.c : std::min(atom, out.c - c0);
            const uint64_t s = u(c0 / atom);
            TaskBody t = lower_dpu_copy(what, src + s * src_surf, src_surf, dst + s * out.surf_stride, out.surf_stride, w, h,
                                        c, notch, atom, core, false, f16, f);
            t.meta.out_window = win;
            t.meta.out_window.c0 = c0, t.meta.out_window.c1 = c0 + c;
            t.meta.in_window = {c0, c0 + c, 0, in.h, 0, in.w};
            tasks.push_back(std::move(t));
        }
    };
    auto fill = [&](const char* what, uint64_t dst, int w, int h, int notch, NpuTask::Window win) {
        const std::string nm = fmt::format("pad {} {}x{}", what, h, w);
        if (!f16) return copy(nm, dst, out.surf_stride, dst, w, h, notch, win, code);
        // Whole: the constant's surfaces read back to back as compact w x h cubes; else one per surface.
        const uint64_t compact = u(std::max(w, 0)) * u(std::max(h, 0)) * A;
        copy(nm, const_src, static_cast<uint32_t>(compact % 16 == 0 ? compact : const_surf), dst, w, h, notch, win,
             std::nullopt);
    };
    fill("top", out.offset, out.w, top, 0, {0, out.c, 0, top, 0, out.w});
    fill("bottom", out.offset + u(top + in.h) * row, out.w, bottom, 0, {0, out.c, top + in.h, out.h, 0, out.w});
    fill("left", out.offset + u(top) * row, left, in.h, out.w - left, {0, out.c, top, top + in.h, 0, left});
    fill("right", out.offset + u(top) * row + u(left + in.w) * A, right, in.h, out.w - right,
         {0, out.c, top, top + in.h, left + in.w, out.w});
    pad_interior(tasks, in, out, top, left, atom, core);
    return tasks;
}

std::vector<TaskBody> lower_border_copies(const std::string& name, const DeviceTensor& img, int top,
                                          const DeviceTensor& col_src, const std::vector<BorderCopy>& cols,
                                          const std::vector<BorderCopy>& rows, const DeviceTensor& col,
                                          const NpuTask::Window& in_window, bool intermediate, ArenaBuilder& arena,
                                          const hw::SocProfile& soc, int core) {
    auto bad = [&](const std::string& why) { throw std::invalid_argument(fmt::format("'{}': {}", name, why)); };
    const bool f16 = img.fp16;
    const int atom = f16 ? soc.npu.c2_fp16.value : soc.npu.c2_int8.value;
    const uint64_t A = u(atom) * (f16 ? 2 : 1);
    if (img.c2 != atom || col_src.c2 != atom || col.c2 != atom || col_src.fp16 != f16 || col.fp16 != f16 ||
        col_src.c != img.c || col.c != img.c)
        bad("tensor C2, precision or channels differ from the SoC's int8/fp16 C2");
    if (img.line_stride != static_cast<uint32_t>(u(img.w) * A)) bad("image rows are not compact");
    const int h = col_src.h;
    if (!cols.empty() && (col.h != h || col.w != 1 || top < 0 || top + h > img.h))
        bad(fmt::format("column buffer {}x{} or rows {}-{} do not fit the {}x{} image", col.h, col.w, top, top + h - 1,
                        img.h, img.w));
    // A one-column source in compact rows is already the compact column: the DPU reads it directly.
    const bool direct = col_src.w == 1 && col_src.line_stride == A;
    if (!cols.empty() && !direct && col_src.line_stride % 16 != 0)
        bad(fmt::format("the PPU's column reads need rows of whole 16-byte units; these are {} bytes (8-byte atoms, "
                        "odd width)",
                        col_src.line_stride));
    std::vector<TaskBody> tasks;
    auto push = [&](TaskBody t, NpuTask::Window out_win, bool inter) {
        t.meta.intermediate = inter;
        t.meta.in_window = in_window;
        t.meta.in_window.c0 = out_win.c0, t.meta.in_window.c1 = out_win.c1;
        t.meta.out_window = out_win;
        tasks.push_back(std::move(t));
    };
    // A DPU copy of every channel: one task when the MRDMA's 16-byte surface notch and the output's
    // 16-byte surface stride express both strides, else one task per C1 surface.
    auto copy = [&](const std::string& what, uint64_t src, uint32_t src_surf, uint64_t dst, int w, int hh, int notch,
                    NpuTask::Window win) {
        const uint64_t compact = u(w) * u(hh) * A;
        const bool whole =
            img.c <= atom || (src_surf >= compact && (src_surf - compact) % 16 == 0 && img.surf_stride % 16 == 0);
        for (int c0 = 0; c0 < img.c; c0 += whole ? img.c : atom) {
            const int c = whole ? img.c : std::min(atom, img.c - c0);
            const uint64_t k = u(c0 / atom);
            win.c0 = c0, win.c1 = c0 + c;
            push(lower_dpu_copy(whole ? what : fmt::format("{} (surface {})", what, k), src + k * src_surf, src_surf,
                                dst + k * img.surf_stride, img.surf_stride, w, hh, c, notch, atom, core, false, f16),
                 win, intermediate);
        }
    };
    const uint64_t row = u(img.w) * A;
    int held = -1;  // the source column `col` holds
    for (const BorderCopy& e : cols) {
        if (e.n != 1 || e.src < 0 || e.src >= col_src.w || e.dst < 0 || e.dst >= img.w)
            bad(fmt::format("column copy {} -> {} outside the tensors", e.src, e.dst));
        if (e.src != held && !direct) {
            DeviceTensor win = col_src;
            win.w = 1;
            win.offset = col_src.offset + u(e.src) * A;
            for (TaskBody& t : lower_window_copy_op(name, win, col, 1, 1, arena, soc, core)) {
                t.meta.what = fmt::format("border: column {} read", e.src);
                push(std::move(t), {0, img.c, 0, h, 0, 1}, true);
            }
            held = e.src;
        }
        copy(fmt::format("border: column {} to {}", e.src, e.dst), direct ? col_src.offset : col.offset,
             direct ? col_src.surf_stride : col.surf_stride, img.offset + u(top) * row + u(e.dst) * A, 1, h, img.w - 1,
             {0, img.c, top, top + h, e.dst, e.dst + 1});
    }
    for (const BorderCopy& e : rows) {
        if (e.n < 1 || e.src < 0 || e.dst < 0 || e.src + e.n > img.h || e.dst + e.n > img.h ||
            (e.src < e.dst + e.n && e.dst < e.src + e.n))
            bad(fmt::format("row copy {}+{} -> {} outside the image or overlapping", e.src, e.n, e.dst));
        copy(e.n == 1 ? fmt::format("border: row {} to {}", e.src, e.dst)
                      : fmt::format("border: rows {}-{} to {}-{}", e.src, e.src + e.n - 1, e.dst, e.dst + e.n - 1),
             img.offset + u(e.src) * row, img.surf_stride, img.offset + u(e.dst) * row, img.w, e.n, 0,
             {0, img.c, e.dst, e.dst + e.n, 0, img.w});
    }
    return tasks;
}

std::vector<TaskBody> lower_pad_copy_op(const std::string& name, const DeviceTensor& in, const DeviceTensor& out,
                                        int top, int left, bool reflect, const DeviceTensor& col, ArenaBuilder& arena,
                                        const hw::SocProfile& soc, int core) {
    auto bad = [&](const std::string& why) { throw std::invalid_argument(fmt::format("Pad '{}': {}", name, why)); };
    const bool f16 = in.fp16;
    const int atom = f16 ? soc.npu.c2_fp16.value : soc.npu.c2_int8.value;
    const uint64_t A = u(atom) * (f16 ? 2 : 1);
    const int bottom = out.h - in.h - top, right = out.w - in.w - left;
    if (in.c2 != atom || out.c2 != atom || in.c != out.c || out.fp16 != f16)
        bad("tensor C2, precision or channels differ from the SoC's int8/fp16 C2");
    if (top < 0 || left < 0 || bottom < 0 || right < 0) bad("negative padding");
    if (in.h < 1 || in.w < 1) bad("empty input");
    // ONNX: reflect needs pads below the dimension (the mirrored pixel excludes the edge).
    if (reflect && (std::max(top, bottom) >= in.h || std::max(left, right) >= in.w))
        bad(fmt::format("reflect pads ({}, {}, {}, {}) not below the {}x{} input", top, left, bottom, right, in.h, in.w));
    for (const DeviceTensor* t : {&in, &out})
        if (t->line_stride != static_cast<uint32_t>(u(t->w) * A)) bad(fmt::format("rows of '{}' are not compact", t->name));
    const NpuTask::Window whole_in{0, in.c, 0, in.h, 0, in.w};
    std::vector<TaskBody> tasks;
    // 1. The interior: the constant Pad's notched DPU copy of the input.
    pad_interior(tasks, in, out, top, left, atom, core);
    const uint64_t row = u(out.w) * A;
    // 2. Columns (input column indices), then rows (output row indices, corners included).
    std::vector<BorderCopy> cols, rows;
    for (int j = 0; j < left; ++j) cols.push_back({j, reflect ? left - j : 0});
    for (int k = 0; k < right; ++k) cols.push_back({left + in.w + k, reflect ? in.w - 2 - k : in.w - 1});
    if (reflect) {
        for (int y = 0; y < top; ++y) rows.push_back({y, 2 * top - y});
        for (int k = 0; k < bottom; ++k) rows.push_back({top + in.h + k, top + in.h - 2 - k});
    } else {
        // Edge: the filled block next to the edge row doubles: [top - n, top + 1) -> n + 1 rows above.
        for (int done = 0; done < top;) {
            const int n = std::min(done + 1, top - done);
            rows.push_back({top - done - n, top - done, n});
            done += n;
        }
        const int last = top + in.h - 1;
        for (int done = 0; done < bottom;) {
            const int n = std::min(done + 1, bottom - done);
            rows.push_back({last + 1 + done, last + 1 + done - n, n});
            done += n;
        }
    }
    // The PPU reads 16-byte rows: the input's columns, or the same columns of the output's interior
    // (after the interior copy) when only the output's rows are whole 16-byte units.
    DeviceTensor src = in;
    if (in.w > 1 && in.line_stride % 16 != 0 && out.line_stride % 16 == 0) {
        src.offset = out.offset + u(top) * row + u(left) * A;
        src.line_stride = out.line_stride;
        src.surf_stride = out.surf_stride;
    }
    for (TaskBody& t : lower_border_copies(name, out, top, src, cols, rows, col, whole_in, false, arena, soc, core)) {
        t.meta.in_window = whole_in;  // every value is a copy of an input value
        t.meta.in_window.c0 = t.meta.out_window.c0, t.meta.in_window.c1 = t.meta.out_window.c1;
        tasks.push_back(std::move(t));
    }
    return tasks;
}

std::vector<TaskBody> lower_window_copy_op(const std::string& name, const DeviceTensor& win, const DeviceTensor& out,
                                           int step_h, int step_w, ArenaBuilder& arena, const hw::SocProfile& soc,
                                           int core) {
    PoolOp op;
    op.name = name;
    op.stride_h = step_h, op.stride_w = step_w;
    auto t = lower_maxpool_op(op, win, out, arena, soc, core);
    for (TaskBody& b : t) b.meta.what = fmt::format("window copy /{}x{} {}x{}x{}", step_h, step_w, out.c, out.h, out.w);
    return t;
}

std::vector<TaskBody> lower_tile_op(const std::string& name, const DeviceTensor& in, const DeviceTensor& out,
                                    const hw::SocProfile& soc, int core) {
    auto bad = [&](const std::string& why) { throw std::invalid_argument(fmt::format("Tile '{}': {}", name, why)); };
    const bool f16 = in.fp16;
    const int atom = f16 ? soc.npu.c2_fp16.value : soc.npu.c2_int8.value;
    const uint64_t ab = u(atom) * (f16 ? 2 : 1);
    if (in.c2 != atom || out.c2 != atom || out.fp16 != f16) bad("tensor C2 or precision differs from the SoC's int8/fp16 C2");
    if (in.c != out.c || in.h < 1 || in.w < 1 || out.h % in.h != 0 || out.w % in.w != 0)
        bad(fmt::format("output {}x{}x{} is not a spatial tile of the input {}x{}x{}", out.c, out.h, out.w, in.c, in.h,
                        in.w));
    for (const DeviceTensor* t : {&in, &out})
        if (t->line_stride != static_cast<uint32_t>(u(t->w) * ab)) bad(fmt::format("rows of '{}' are not compact", t->name));
    std::vector<TaskBody> tasks;
    // One DPU copy of a w x h cube of every channel (source surfaces `src_surf` apart, compact rows;
    // destination rows `w + notch` atoms apart, out's surfaces), one C1 surface per task when the
    // MRDMA's 16-byte surface notch or the output's stride cannot express the strides.
    auto copy = [&](const std::string& what, uint64_t src, uint32_t src_surf, uint64_t dst, int w, int h, int notch,
                    NpuTask::Window win) {
        const uint64_t compact = u(w) * u(h) * ab;
        const bool whole =
            out.c <= atom || (src_surf >= compact && (src_surf - compact) % 16 == 0 && out.surf_stride % 16 == 0);
        for (int c0 = 0; c0 < out.c; c0 += whole ? out.c : atom) {
            const int c = whole ? out.c : std::min(atom, out.c - c0);
            const uint64_t s = u(c0 / atom);
            TaskBody t = lower_dpu_copy(what, src + s * src_surf, src_surf, dst + s * out.surf_stride, out.surf_stride, w,
                                        h, c, notch, atom, core, false, f16);
            t.meta.out_window = win;
            t.meta.out_window.c0 = c0, t.meta.out_window.c1 = c0 + c;
            t.meta.in_window = {c0, c0 + c, 0, in.h, 0, in.w};  // every value is a copy of an input value
            tasks.push_back(std::move(t));
        }
    };
    if (in.h == 1) {
        // One row: the input into columns [0, in.w) of row 0, then doubled inside that (compact) row.
        copy(fmt::format("tile row 0 columns 0-{}", in.w - 1), in.offset, in.surf_stride, out.offset, in.w, 1, 0,
             {0, out.c, 0, 1, 0, in.w});
        for (int n = in.w; n < out.w;) {
            const int m = std::min(n, out.w - n);
            copy(fmt::format("tile row 0 columns {}-{}", n, n + m - 1), out.offset, out.surf_stride,
                 out.offset + u(n) * ab, m, 1, 0, {0, out.c, 0, 1, n, n + m});
            n += m;
        }
    } else {
        // Column blocks of the first in.h rows: the whole input per block (an input of one column:
        // its h one-atom rows into every out.w-th atom). When the rows to fill are back to back in
        // memory (no row tiling after this, or one C1 surface; compact surfaces), the filled columns
        // [0, n) of every row are doubled in place instead: the rows read as one-row surfaces
        // (`w * atom` bytes apart, C1 x in.h of them as virtual channels), columns [0, m) of each
        // copied to [n, n + m) - a cube of m x 1 with the MRDMA's surface notch (w - m) atoms. The
        // 16-byte units need (w - m) and w whole 16 bytes: with 8-byte atoms two first blocks when
        // in.w is odd, and none of this when out.w is odd.
        const int c1 = (out.c + atom - 1) / atom;
        const uint64_t rows_back_to_back = u(out.h == in.h ? c1 : 1) * u(in.h);
        const int first = (ab % 16 == 0 || in.w % 2 == 0) ? 1 : 2;
        bool doubling = (out.h == in.h || c1 == 1) && out.surf_stride == u(out.h) * u(out.w) * ab &&
                        rows_back_to_back * u(atom) <= kCubeMax && out.w / in.w > first + 1;
        for (int n = first * in.w; doubling && n < out.w; n += std::min(n, out.w - n))
            doubling = (u(out.w - std::min(n, out.w - n)) * ab) % 16 == 0 && (u(out.w) * ab) % 16 == 0;
        const int blocks = doubling ? first : out.w / in.w;
        for (int x0 = 0; x0 < blocks * in.w; x0 += in.w)
            copy(fmt::format("tile columns {}-{}", x0, x0 + in.w - 1), in.offset, in.surf_stride,
                 out.offset + u(x0) * ab, in.w, in.h, out.w - in.w, {0, out.c, 0, in.h, x0, x0 + in.w});
        const uint32_t line = static_cast<uint32_t>(u(out.w) * ab);
        for (int n = blocks * in.w; doubling && n < out.w;) {
            const int m = std::min(n, out.w - n);
            TaskBody t = lower_dpu_copy(fmt::format("tile columns {}-{} (rows as surfaces)", n, n + m - 1), out.offset,
                                        line, out.offset + u(n) * ab, line, m, 1,
                                        static_cast<int>(rows_back_to_back) * atom, 0, atom, core, false, f16);
            t.meta.out_window = {0, out.c, 0, in.h, n, n + m};
            t.meta.in_window = {0, in.c, 0, in.h, 0, in.w};
            tasks.push_back(std::move(t));
            n += m;
        }
    }
    // Rows [0, n) are out's first n rows (n a multiple of in.h): doubled until out.h.
    const uint64_t row = u(out.w) * ab;
    for (int n = in.h; n < out.h;) {
        const int m = std::min(n, out.h - n);
        copy(fmt::format("tile rows {}-{}", n, n + m - 1), out.offset, out.surf_stride, out.offset + u(n) * row, out.w, m,
             0, {0, out.c, n, n + m, 0, out.w});
        n += m;
    }
    return tasks;
}

}  // namespace drv::rknpu
