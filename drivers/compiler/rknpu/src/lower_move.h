// SPDX-License-Identifier: MIT
// Data-movement lowerings (lower_move.cpp, issue 15): exact int8 copies on the DPU (MRDMA in,
// WDMA out with a row notch) and the PPU (PPU_RDMA window with line/surface strides, 1x1 kernel).
// Internal to the model compiler; the block mapping is an assumption (COMPILER.md, "Data movement").
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "compiler/rknpu/lower.h"

namespace drv::rknpu {

/// One DPU-only task copying a cube of `c` channels, `h` rows of `w` atoms: input surfaces at
/// `src` (compact rows, surfaces `src_surf` bytes apart), output at `dst` with rows
/// `w + notch` atoms apart and surfaces `dst_surf` bytes apart; every stage bypassed, output
/// convert scale 1 shift 0 offset 0 (x -> x, exact). Throws std::invalid_argument when a value
/// does not fit its register field. The task's windows are left to the caller.
/// `channel_last` (issue 15): the WDMA writes the cube channel-last instead (TP_EN, SIZE_C_WDMA =
/// c - 1: per pixel in row order its c channels, assumption A-TP), `w * h * c` bytes from `dst`.
/// `fp16` (issue 14): fp16 elements, `atom` channels of 2 bytes per pixel (the DPU's fp16 precision).
/// `fill` (issue 15, Pad's border): the output convert at scale 0, offset *fill: every value written
/// is the code *fill (the bytes read are ignored).
TaskBody lower_dpu_copy(const std::string& what, uint64_t src, uint32_t src_surf, uint64_t dst, uint32_t dst_surf,
                        int w, int h, int c, int notch, int atom, int core, bool channel_last = false,
                        bool fp16 = false, std::optional<int32_t> fill = std::nullopt);

/// Nearest-neighbour upsampling by integer factors (out = in[y / sh][x / sw]) as DPU copies:
/// width: sw tasks reading the input as one-atom rows (one per pixel) and writing every sw-th
/// atom (notch sw - 1) of `scratch` (c x h x w*sw, compact, at arena offset `scratch_off`);
/// height: sh tasks reading the widened rows and writing every sh-th output row (notch
/// (sh - 1) x row). sw = 1 skips the width pass, sh = 1 writes the width pass into `out`.
/// Cube heights beyond the 13-bit fields are split into row bands. int8 or fp16 tensors (DeviceTensor::fp16).
std::vector<TaskBody> lower_resize_nearest_op(const std::string& name, const DeviceTensor& in,
                                              const DeviceTensor& out, int sh, int sw, uint64_t scratch_off,
                                              const hw::SocProfile& soc, int core);

/// Bytes of the width-pass scratch of lower_resize_nearest_op (0 when sw = 1 or sh = 1).
uint64_t resize_scratch_bytes(const DeviceTensor& in, int sh, int sw);

/// Constant Pad of H and W (issue 15): DPU tasks writing the border strips with the pad code (output
/// convert scale 0, offset `code`), then a DPU copy of the input into the interior (row notch
/// out.w - in.w). `top` / `left` pixels before, the rest after (out's size). Exact.
/// fp16 tensors (issue 14): `code` is the pad value's fp16 bits and the border strips are DPU copies
/// of a constant image of that value placed in `arena` (required then); one task per C1 surface where
/// the 16-byte surface units cannot express a strip's surfaces (8-byte atoms, odd w*h).
std::vector<TaskBody> lower_pad_op(const std::string& name, const DeviceTensor& in, const DeviceTensor& out, int top,
                                   int left, int32_t code, const hw::SocProfile& soc, int core,
                                   ArenaBuilder* arena = nullptr);

/// One copy of lower_border_copies: `n` columns / rows from `src` to `dst` (image indices).
struct BorderCopy {
    int dst = 0, src = 0, n = 1;
};

/// Border copies inside `img` (compact rows), the one mechanism of the bilinear Resize's replicate
/// pad and Pad reflect / edge (issue 15). Columns first: for each entry of `cols` (n = 1), column
/// `src` of `col_src` - a view whose rows are img's rows [top, top + col_src.h), its own line and
/// surface strides - is read by the PPU (a 1x1 window copy through the line stride) into `col`
/// (compact, col_src.h x 1; a run of entries with the same source reads it once; a one-column
/// col_src with compact rows is that column already and is read by the DPU directly), then written to
/// column `dst` of those rows by a DPU copy (row notch img.w - 1). Then rows: for each entry of
/// `rows` in order, img rows [src, src + n) into rows [dst, dst + n) by one DPU copy of whole rows
/// (a row an earlier entry wrote may be a source). Copies whose surfaces the 16-byte units cannot
/// express run one C1 surface per task. Tasks run in order on one core (the scratch is reused, rows
/// read what earlier tasks wrote). Windows in img's coordinates, every task's input window
/// `in_window`; `intermediate` when img is a layer-internal scratch. Throws std::invalid_argument
/// when a field or stride does not fit: the PPU reads rows in 16-byte units, so col_src's line
/// stride must be a multiple of 16 (8-byte atoms and an odd width do not fit).
std::vector<TaskBody> lower_border_copies(const std::string& name, const DeviceTensor& img, int top,
                                          const DeviceTensor& col_src, const std::vector<BorderCopy>& cols,
                                          const std::vector<BorderCopy>& rows, const DeviceTensor& col,
                                          const NpuTask::Window& in_window, bool intermediate, ArenaBuilder& arena,
                                          const hw::SocProfile& soc, int core);

/// Pad reflect / edge of H and W (issue 15, ONNX Pad-11/13/18): a DPU copy of the input into the
/// interior (row notch out.w - in.w), then lower_border_copies: the left / right columns from the
/// input's columns (reflect: column left - j for output column j < left, in.w - 2 - k for the k-th
/// right one; edge: 0 and in.w - 1) through `col` (in.h x 1 scratch), then the top / bottom rows
/// (corners included) from the output's own rows (reflect: row 2 top - y above, 2 (top + in.h - 1) - y
/// below; edge: row top, doubled into the rows above it: ceil(log2(top + 1)) copies, the bottom
/// likewise). The PPU reads the columns from the input, or from the output's interior when only
/// that has 16-byte rows; a one-column input needs no PPU read. `col` is unused without column
/// pads. Exact.
/// Throws std::invalid_argument when reflect pads reach the dimension (ONNX requires pad < dim), or
/// a stride or field does not fit.
std::vector<TaskBody> lower_pad_copy_op(const std::string& name, const DeviceTensor& in, const DeviceTensor& out,
                                        int top, int left, bool reflect, const DeviceTensor& col, ArenaBuilder& arena,
                                        const hw::SocProfile& soc, int core);

/// A dilated conv whose kernel rows (dilated height x input row bytes) exceed the CBUF's data banks
/// beside one weight bank: lower it as row phases (lower_conv_phase.cpp).
bool conv_rows_exceed_cbuf(const ConvOp& op, const DeviceTensor& in, const hw::SocProfile& soc);

/// The d = op.dilation_h row phases of a dilated conv: each an undilated-in-H conv of the input rows
/// of one residue (a view with a d-line stride) into `scratch` (compact, ceil(out.h / d) rows), then
/// a DPU copy of those rows into every d-th output row. Exact.
std::vector<TaskBody> lower_conv_row_phases(const ConvOp& op, const DeviceTensor& in, const DeviceTensor& out,
                                            const DeviceTensor& scratch, ArenaBuilder& arena,
                                            const hw::SocProfile& soc, const std::vector<int>& cores);

/// A ConvTranspose as the compiler hands it to the stride-phase lowering (lower_conv_phase.cpp):
/// `base` carries the quantization, bias, per-output-channel scales and the fused activation
/// (in_c / out_c / depthwise of the phase convolutions; kernel, stride, pads unused); `w` the ONNX
/// weights [in_c, out_c / group, kernel_h, kernel_w] (null: timing-only, no weights laid out); fp16
/// (base.fp16): `wf` instead, fp16 tensors.
struct ConvTransposeOp {
    ConvOp base;
    const int8_t* w = nullptr;
    const float* wf = nullptr;  ///< base.fp16: the float weights (same layout), rounded to fp16 when packed
    int group = 1, kernel_h = 1, kernel_w = 1, stride_h = 1, stride_w = 1, pad_top = 0, pad_left = 0;
};

/// Layer-internal tensors of lower_conv_transpose_op as (h, w), in order: the phase columns
/// (out.h x ceil(out.w / s_w), when s_w > 1), the interleaved image (out.h x ceil(out.w / s_w) s_w,
/// when out.w is not a multiple of s_w). Channels: the output's.
std::vector<std::pair<int, int>> conv_transpose_scratch(const ConvTransposeOp& op, const DeviceTensor& out);

/// out = ConvTranspose(in) as s_h x s_w stride phases (assumption A-CONVT): output pixels
/// (py + i s_h, px + j s_w) are an ordinary stride-1 convolution of the input with the sub-kernel
/// w[ci][co][ky][kx], ky = (py + pad_top) mod s_h + m s_h (flipped, transposed): lower_conv_op with
/// the conv's requantization and fused activation, its DPU writing the rows s_h apart (row notch)
/// into the phase-column scratch (the output when s_w = 1); one DPU copy per column phase spreads it
/// every s_w-th atom (one-atom rows, notch s_w - 1); a PPU window copy when the width is not a
/// multiple of s_w. Exact against an integer ConvTranspose (the same products and sums). Throws
/// std::invalid_argument when a field or padding does not fit.
std::vector<TaskBody> lower_conv_transpose_op(const ConvTransposeOp& op, const DeviceTensor& in, const DeviceTensor& out,
                                              const std::vector<DeviceTensor>& scratch, ArenaBuilder& arena,
                                              const hw::SocProfile& soc, int core);

/// Window copy on the PPU: `win` is a view of the source (offset at the window's first atom,
/// the source's line and surface strides, w/h/c the window before the step), `out` compact;
/// a 1x1 max pool with stride (step_h, step_w) picks every step-th element (exact).
std::vector<TaskBody> lower_window_copy_op(const std::string& name, const DeviceTensor& win, const DeviceTensor& out,
                                           int step_h, int step_w, ArenaBuilder& arena, const hw::SocProfile& soc,
                                           int core);

/// Bilinear (half_pixel) upsampling by integer factors (lower_resize.cpp): the taps of the 1-D
/// kernel that filters the nearest upsampling by `f` (odd f: f ones; even f: 1, 2, ..., 2, 1) and
/// their sum `denom`.
std::vector<int> bilinear_taps(int f, int& denom);

/// Geometry (h, w) of lower_resize_bilinear_op's layer-internal tensors, in order: the input padded
/// by one replicated pixel, the column buffer of its border copies (lower_border_copies), the nearest
/// upsampling's width-pass scratch and the nearest upsampling of the padded input (channels and C2
/// the input's).
std::vector<std::pair<int, int>> resize_bilinear_scratch(const DeviceTensor& in, int fh, int fw);

/// out = bilinear resize of `in` by (fh, fw): replicate padding (lower_border_copies),
/// nearest upsampling (DPU copies), one depthwise conv with the integer kernel taps_h x taps_w at
/// weight scale 1 / (denom_h denom_w), no padding (CNA/CORE/DPU). `scratch` as
/// resize_bilinear_scratch describes it. Throws std::invalid_argument when a stride or field does
/// not fit.
std::vector<TaskBody> lower_resize_bilinear_op(const std::string& name, const DeviceTensor& in, const DeviceTensor& out,
                                               int fh, int fw, const std::vector<DeviceTensor>& scratch,
                                               ArenaBuilder& arena, const hw::SocProfile& soc, int core);

/// Spatial Tile (issue 15; Expand's broadcast from a dimension of 1 is the same copy, a tile of
/// that dimension): out[c][y][x] = in[c][y % in.h][x % in.w], same channels, out.h / out.w whole
/// multiples of in.h / in.w. DPU copies only (every stage bypassed, exact): a one-row input goes
/// into row 0 of `out` and is doubled along W inside it (columns [0, n) -> [n, 2n): one compact row);
/// otherwise out.w / in.w copies of the whole input into its column blocks (row notch out.w - in.w);
/// then the filled rows are doubled along H inside `out` (rows [0, n) -> [n, 2n)). ceil(log2) tasks
/// per doubled axis; a cube whose surface strides the 16-byte units cannot express (8-byte atoms)
/// runs one C1 surface per task. int8 or fp16 tensors. Task windows: the rows / columns each writes,
/// every task reading the whole input.
std::vector<TaskBody> lower_tile_op(const std::string& name, const DeviceTensor& in, const DeviceTensor& out,
                                    const hw::SocProfile& soc, int core);

}  // namespace drv::rknpu
