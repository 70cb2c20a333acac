// SPDX-License-Identifier: MIT
// Row-phase split of a dilated convolution (issue 15): with dilation d along H, output rows
// y = r + j d read only input rows of one residue modulo d, so each of the d output row phases is
// an ordinary convolution (dilation 1 along H) of the input rows of that residue: programmed as a
// view of the input with a d-line LINE_STRIDE (the same DMA pattern as fold_row_stride's), its
// output written to a compact scratch and interleaved into the output rows d apart by a DPU copy
// (row notch (d - 1) w). Exact: every output value is the same sum of the same products. Used when
// the dilated kernel's input rows do not fit the CBUF (DeepLab's dilation-12 ASPP branch on
// RK3566). ASSUMPTION: whether RKNN splits such a conv this way is not public.
// Stride phases of a ConvTranspose (issue 15, assumption A-CONVT in COMPILER.md): lower_conv_transpose_op.
#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "lower_move.h"

namespace drv::rknpu {

namespace {

uint64_t u(int v) { return static_cast<uint64_t>(v); }

/// floor(a / b) for b > 0.
int floor_div(int a, int b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

}  // namespace

bool conv_rows_exceed_cbuf(const ConvOp& op, const DeviceTensor& in, const hw::SocProfile& soc) {
    // The rows one output row needs against the data banks left beside one weight bank.
    const uint64_t eff = u((op.kernel_h - 1) * op.dilation_h + 1);
    const uint64_t row = u(in.w) * u((in.c + in.c2 - 1) / in.c2 * in.c2);
    const uint64_t data = u(soc.npu.cbuf_banks.value - 1) * soc.npu.cbuf_bank_bytes.value;
    return op.dilation_h > 1 && op.stride_h == 1 && eff * row > data;
}

std::vector<TaskBody> lower_conv_row_phases(const ConvOp& op, const DeviceTensor& in, const DeviceTensor& out,
                                            const DeviceTensor& scratch, ArenaBuilder& arena,
                                            const hw::SocProfile& soc, const std::vector<int>& cores) {
    auto bad = [&](const std::string& why) { throw std::invalid_argument(fmt::format("conv '{}': {}", op.name, why)); };
    const int d = op.dilation_h, atom = soc.npu.c2_int8.value;
    if (d < 2 || op.stride_h != 1) bad("row phases need dilation > 1 and row stride 1");
    if (out.line_stride != u(out.w) * u(atom) || in.line_stride != u(in.w) * u(atom)) bad("rows are not compact");
    std::vector<TaskBody> tasks;
    for (int r = 0; r < std::min(d, out.h); ++r) {
        const int rows_out = (out.h - r + d - 1) / d;           // output rows r, r + d, ...
        const int q = r - op.pad_top;                           // input row of tap 0 for output row r
        const int ri = ((q % d) + d) % d, first = floor_div(q, d);  // its residue; phase row of tap 0
        const int rows_in = (in.h - ri + d - 1) / d;            // input rows ri, ri + d, ...
        ConvOp ph = op;
        ph.dilation_h = 1;
        ph.pad_top = -first;
        ph.pad_bottom = rows_out - 1 + op.kernel_h - ph.pad_top - rows_in;
        if (ph.pad_top < 0 || ph.pad_bottom < 0 || rows_in < 1)
            bad(fmt::format("row phase {} needs padding {} / {}", r, ph.pad_top, ph.pad_bottom));
        DeviceTensor view = in;
        view.offset = in.offset + u(ri) * in.line_stride;
        view.h = rows_in;
        view.line_stride = in.line_stride * static_cast<uint32_t>(d);
        view.ir_shape = {1, in.c, rows_in, in.w};
        DeviceTensor part = scratch;
        part.h = rows_out;
        part.ir_shape = {1, out.c, rows_out, out.w};
        part.surf_stride = static_cast<uint32_t>((u(rows_out) * part.line_stride + 15) / 16 * 16);
        for (TaskBody& t : lower_conv_op(ph, view, part, arena, soc, cores)) {
            t.meta.what = fmt::format("row phase {}/{}: {}", r, d, t.meta.what);
            // Writes the scratch; its windows stay in the phase's own rows (the rows it loads: the CBUF
            // check), the layer's rows are checked on the copies into the output.
            t.meta.intermediate = true;
            tasks.push_back(std::move(t));
        }
        TaskBody c = lower_dpu_copy(fmt::format("row phase {}/{}: rows to the output", r, d), part.offset,
                                    part.surf_stride, out.offset + u(r) * out.line_stride, out.surf_stride, out.w,
                                    rows_out, out.c, (d - 1) * out.w, atom, cores.front());
        c.meta.out_window = {0, out.c, r, r + (rows_out - 1) * d + 1, 0, out.w};
        c.meta.out_window.y_step = d;
        c.meta.in_window = {0, in.c, 0, in.h, 0, in.w};
        tasks.push_back(std::move(c));
    }
    return tasks;
}

namespace {

/// One axis of a ConvTranspose stride phase p (output o = p + i s): the kernel taps k = k0 + m s
/// (m < taps) reach it from input x = i + q - m, q = (p + pad) / s. As a stride-1 correlation over
/// the input the sub-kernel is flipped (tap t = taps - 1 - m) and its tap 0 reads input row
/// i + lo, lo = q - (taps - 1). No tap (k0 >= K, a kernel smaller than the stride): `zero`, a
/// one-tap zero kernel (the phase is the bias and the activation alone).
struct PhaseAxis {
    int k0 = 0, taps = 1, lo = 0;
    int lead = 0;  ///< leading zero taps (tap t < lead): see fit_padding
    bool zero = false;
};

PhaseAxis phase_axis(int p, int pad, int s, int k) {
    PhaseAxis a;
    a.k0 = (p + pad) % s;
    const int q = (p + pad) / s;
    a.zero = a.k0 >= k;
    a.taps = a.zero ? 1 : (k - a.k0 + s - 1) / s;
    a.lo = a.zero ? 0 : q - (a.taps - 1);
    return a;
}

int ceil_div(int a, int b) { return (a + b - 1) / b; }

/// The conv lowering keeps each padding below the kernel size. Output rows past the input's reach
/// (output_padding, a kernel smaller than the stride) read only padding after the input: leading
/// zero taps lengthen the sub-kernel without moving its last tap, so that padding fits (`n` outputs,
/// an input of `len` rows).
void fit_padding(PhaseAxis& a, int n, int len) {
    const int after = a.lo + n - 1 + a.taps - len;  // padding rows after the input
    if (after > a.taps - 1) {
        const int z = after - (a.taps - 1);
        a.taps += z, a.lo -= z, a.lead += z;
    }
}

}  // namespace

std::vector<std::pair<int, int>> conv_transpose_scratch(const ConvTransposeOp& op, const DeviceTensor& out) {
    const int Cm = ceil_div(out.w, op.stride_w);
    std::vector<std::pair<int, int>> s;
    if (op.stride_w > 1) s.push_back({out.h, Cm});
    if (out.w != Cm * op.stride_w) s.push_back({out.h, Cm * op.stride_w});
    return s;
}

std::vector<TaskBody> lower_conv_transpose_op(const ConvTransposeOp& op, const DeviceTensor& in, const DeviceTensor& out,
                                              const std::vector<DeviceTensor>& scratch, ArenaBuilder& arena,
                                              const hw::SocProfile& soc, int core) {
    const ConvOp& base = op.base;
    auto bad = [&](const std::string& why) {
        throw std::invalid_argument(fmt::format("ConvTranspose '{}': {}", base.name, why));
    };
    // int8, or fp16 (base.fp16): `atom` channels of `A` bytes per pixel.
    const bool f16 = base.fp16;
    const int sh = op.stride_h, sw = op.stride_w, atom = f16 ? soc.npu.c2_fp16.value : soc.npu.c2_int8.value;
    const uint64_t A = u(atom) * (f16 ? 2 : 1);
    if (sh < 1 || sw < 1 || op.kernel_h < 1 || op.kernel_w < 1 || op.pad_top < 0 || op.pad_left < 0)
        bad("strides, kernel and pads must be positive");
    if (in.c2 != atom || out.c2 != atom || in.fp16 != f16 || out.fp16 != f16)
        bad("tensor C2 or precision differs from the SoC's int8 / fp16 C2");
    if (in.line_stride != u(in.w) * A || out.line_stride != u(out.w) * A) bad("rows are not compact");
    const int Cm = ceil_div(out.w, sw), Wr = Cm * sw;
    const bool interleave_scratch = out.w != Wr;
    if (scratch.size() != (sw > 1 ? 1u : 0u) + (interleave_scratch ? 1u : 0u)) bad("scratch tensors");
    // Phase columns px of every row: the phase convs write their rows sh apart into `cols` (the
    // output itself when sw = 1); the width copies spread it every sw-th atom of `target`.
    const DeviceTensor& cols = sw > 1 ? scratch[0] : out;
    const DeviceTensor& target = interleave_scratch ? scratch.back() : out;  // rows Wr atoms wide
    if (cols.w != Cm || cols.h != out.h || target.w != Wr || target.h != out.h) bad("scratch geometry");
    const int cout_g = base.out_c / op.group, cin_g = base.in_c / op.group;
    const int cin_w = base.depthwise ? 1 : base.in_c;  // the phase convs' weight input channels
    const NpuTask::Window whole_in{0, in.c, 0, in.h, 0, in.w};
    std::vector<TaskBody> tasks;
    auto push = [&](TaskBody t, bool final_task, const NpuTask::Window& ow) {
        t.meta.intermediate = !final_task;
        if (final_task) {
            t.meta.out_window = ow;
            t.meta.in_window = whole_in;  // every output row band reads input rows of all phases
        }
        tasks.push_back(std::move(t));
    };
    // A DPU copy of all channels, or one per C1 surface when a surface stride is not expressible in
    // 16-byte units (8-byte atoms, an odd number of pixels left over).
    auto copy = [&](const std::string& what, uint64_t src, uint32_t ss, uint64_t dst, uint32_t ds, int w, int h,
                    int notch, bool final_task, NpuTask::Window ow) {
        const uint64_t compact = u(w) * u(h) * A;
        if (out.c <= atom || ((ss - compact) % 16 == 0 && ds % 16 == 0)) {
            push(lower_dpu_copy(what, src, ss, dst, ds, w, h, out.c, notch, atom, core, false, f16), final_task, ow);
            return;
        }
        for (int c0 = 0; c0 < out.c; c0 += atom) {
            ow.c0 = c0, ow.c1 = std::min(out.c, c0 + atom);
            push(lower_dpu_copy(fmt::format("{}, channels {}-{}", what, c0, ow.c1 - 1), src + u(c0 / atom) * ss, ss,
                                dst + u(c0 / atom) * ds, ds, w, h, ow.c1 - c0, notch, atom, core, false, f16),
                 final_task, ow);
        }
    };
    for (int px = 0; px < std::min(sw, out.w); ++px) {
        PhaseAxis ax = phase_axis(px, op.pad_left, sw, op.kernel_w);
        fit_padding(ax, Cm, in.w);
        for (int py = 0; py < std::min(sh, out.h); ++py) {
            const int rows = ceil_div(out.h - py, sh);  // output rows py, py + sh, ...
            PhaseAxis ay = phase_axis(py, op.pad_top, sh, op.kernel_h);
            fit_padding(ay, rows, in.h);
            ConvOp ph = base;
            ph.kernel_h = ay.taps, ph.kernel_w = ax.taps;
            ph.stride_h = ph.stride_w = ph.dilation_h = ph.dilation_w = 1;
            ph.weights_ref = nullptr;
            ph.weights_f_ref = nullptr;
            // The input window of the phase: tap 0 of output (0, 0) at (ay.lo, ax.lo); rows / columns
            // outside the input are the conv's zero-point padding.
            DeviceTensor view = in;
            const int y0 = std::max(0, ay.lo), y1 = std::min(in.h, ay.lo + rows - 1 + ay.taps);
            const int x0 = std::max(0, ax.lo), x1 = std::min(in.w, ax.lo + Cm - 1 + ax.taps);
            if (y1 <= y0 || x1 <= x0) bad(fmt::format("phase ({}, {}) reads no input pixel", py, px));
            ph.pad_top = y0 - ay.lo, ph.pad_bottom = ay.lo + rows - 1 + ay.taps - y1;
            ph.pad_left = x0 - ax.lo, ph.pad_right = ax.lo + Cm - 1 + ax.taps - x1;
            view.offset = in.offset + u(y0) * in.line_stride + u(x0) * A;
            view.h = y1 - y0, view.w = x1 - x0;
            view.ir_shape = {1, in.c, view.h, view.w};
            if (op.w || (f16 && op.wf)) {
                const int th = ay.taps, tw = ax.taps;
                const size_t n = u(base.out_c) * u(cin_w) * u(th) * u(tw);
                f16 ? ph.weights_f.assign(n, 0.f) : ph.weights.assign(n, 0);
                for (int oc = 0; oc < base.out_c; ++oc) {
                    const int gi = oc / cout_g, j = oc % cout_g;
                    for (int c = 0; c < cin_w; ++c) {
                        const int ic = base.depthwise ? oc : c;
                        if (ic / cin_g != gi || ay.zero || ax.zero) continue;  // block-diagonal groups
                        for (int a = ay.lead; a < th; ++a)
                            for (int b = ax.lead; b < tw; ++b) {
                                const int kh = ay.k0 + (th - 1 - a) * sh, kw = ax.k0 + (tw - 1 - b) * sw;
                                const size_t to = ((u(oc) * u(cin_w) + u(c)) * u(th) + u(a)) * u(tw) + u(b);
                                const size_t from = ((u(ic) * u(cout_g) + u(j)) * u(op.kernel_h) + u(kh)) * u(op.kernel_w) + u(kw);
                                if (f16) ph.weights_f[to] = op.wf[from];
                                else ph.weights[to] = op.w[from];
                            }
                    }
                }
            }
            // The phase's rows sh apart (the DPU's row notch), straight into the output when sw = 1.
            DeviceTensor dst = cols;
            dst.offset = cols.offset + u(py) * cols.line_stride;
            dst.h = rows;
            dst.line_stride = cols.line_stride * static_cast<uint32_t>(sh);
            dst.ir_shape = {1, out.c, rows, Cm};
            for (TaskBody& t : lower_conv_op(ph, view, dst, arena, soc, {core})) {
                t.meta.what = fmt::format("phase ({}, {}) of {}x{}, {}x{} taps: {}", py, px, sh, sw, ay.taps, ax.taps,
                                          t.meta.what);
                if (sw == 1) {  // writes output rows py + i sh for its rows i
                    NpuTask::Window o = t.meta.out_window;
                    o.y0 = py + o.y0 * sh, o.y1 = py + (o.y1 - 1) * sh + 1, o.y_step = sh;
                    push(std::move(t), true, o);
                } else {
                    t.meta.intermediate = true;  // writes the phase-column scratch; its windows are its view's
                    tasks.push_back(std::move(t));
                }
            }
        }
        if (sw == 1) continue;
        // Width: the phase columns as one-atom rows, every sw-th atom of the target's rows.
        const bool final_w = !interleave_scratch;
        const int band = std::max(1, 8192 / Cm);
        for (int r0 = 0; r0 < out.h; r0 += band) {
            const int rows = std::min(band, out.h - r0);
            copy(fmt::format("phase column {} of {}: atoms {}::{} of rows {}-{}", px, sw, px, sw, r0, r0 + rows - 1),
                 cols.offset + u(r0) * u(Cm) * A, cols.surf_stride, target.offset + (u(r0) * u(Wr) + u(px)) * A,
                 target.surf_stride, 1, rows * Cm, sw - 1, final_w,
                 NpuTask::Window{0, out.c, r0, r0 + rows, px, px + (Cm - 1) * sw + 1, 1, sw});
        }
    }
    if (interleave_scratch) {
        DeviceTensor win = target;
        win.w = out.w;
        win.ir_shape = {1, out.c, out.h, out.w};
        for (TaskBody& t : lower_window_copy_op(base.name, win, out, 1, 1, arena, soc, core)) {
            t.meta.what = "interleaved image to the output: " + t.meta.what;
            push(std::move(t), true, NpuTask::Window{0, out.c, 0, out.h, 0, out.w});
        }
    }
    return tasks;
}

}  // namespace drv::rknpu
