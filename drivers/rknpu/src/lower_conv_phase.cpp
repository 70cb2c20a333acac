// SPDX-License-Identifier: MIT
// Row-phase split of a dilated convolution (issue 15): with dilation d along H, output rows
// y = r + j d read only input rows of one residue modulo d, so each of the d output row phases is
// an ordinary convolution (dilation 1 along H) of the input rows of that residue: programmed as a
// view of the input with a d-line LINE_STRIDE (the same DMA pattern as fold_row_stride's), its
// output written to a compact scratch and interleaved into the output rows d apart by a DPU copy
// (row notch (d - 1) w). Exact: every output value is the same sum of the same products. Used when
// the dilated kernel's input rows do not fit the CBUF (DeepLab's dilation-12 ASPP branch on
// RK3566). ASSUMPTION: whether RKNN splits such a conv this way is not public.
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

}  // namespace drv::rknpu
