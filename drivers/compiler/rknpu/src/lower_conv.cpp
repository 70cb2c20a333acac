// SPDX-License-Identifier: MIT
// lower_conv_op (lower.h): one quantized convolution -> RKNPU task bodies. Generalises the
// single-conv lowering (conv_lowering.cpp): any C2 from the profile, input/output tensors that are
// row bands or channel slices of larger tensors, per-channel requantization through the DPU's BS/BN
// stages, fused Relu/Clip, and tiling along output rows (halo input rows re-read) and output
// channels (kernel groups) so that every task's data + weight banks fit the CBUF, spread over cores.
//
// Requantization (per output channel c, m_c = in_scale * w_scale[c] / out_scale computed in float
// as onnxruntime does). OUT_CVT_SCALE is one 16-bit register, so per-channel multipliers go through
// the DPU's per-channel BS/BN MUL operands (int16 each, from memory):
//   BS:  ALU add the folded bias b'_c (int32), MUL by M1_c >> S1, ReLU when fused
//   BN:  MUL by M2_c >> S2 (M2_c in [2^14, 2^15))
//   EW:  Clip only: ALU add (zp - lo) * 2^S3, then ReLUX to [0, (hi - lo) * 2^S3]
//   OUT_CVT: scale 1, shift S3, offset out_zp (Clip: lo)
// M1_c * M2_c * 2^-(S1 + S2 + S3) = m_c: the pair is searched (M2 over [2^14, 2^15) until 2^-28,
// or every M1 when M1 is small), which leaves a relative error near 2^-27 for channels near the
// largest (2^-16 / #M1 for channels far below it; a single 15-bit mantissa leaves 2^-16 and
// about 0.1% of outputs 1 LSB off). The intermediates carry <= y * 2^23 (BS: v1 = y 2^(S2+S3) /
// M2_c) and y * 2^S3 with S3 = 22,
// so the DPU's 32-bit saturation of every stage (dpu_engine.cpp) only hits values that saturate the
// int8 output anyway, and the inner roundings (>> S1, >> S2) sit >= 20 bits below the output LSB.
// All shifts round half up in the model, the final one included, while the TRM reads the
// OUT_CVT_SHIFT.CVT_ROUND 0 written here as round half to even (docs/rknpu-register-semantics.md
// A-ROUND, not modelled); the reference rounds half to even, which differs only on exact ties.
//
// fp16 (ConvOp::fp16, issue 14): the same tiling with 2-byte elements (the profile's fp16 C2,
// weight blocks and output-channel padding), weights rounded to fp16, fp32 accumulation, and the
// DPU's float path: BS adds the fp32 bias (ALU operand from memory), ReLU / ReLU6 in BS, other
// Clip bounds as BN ALU max + EW ALU min with register operands, fp16 output (OUT_CVT scale 1 with
// FP32TOFP16_EN, as the vendor's fp16 tasks, docs/rknpu-register-semantics.md §10).
//
// int8 with a float output (ConvOp::float_out, TensorRT-style heads): the int8 tiling, CNA and CORE,
// then the DPU's float path on the int32 accumulator (assumption A-I2F, docs §17): BS adds the fp32
// offset b_c / m_c - zp sum(w_c) and multiplies by the fp16 m_c 2^E, BN by 2^-E, fp16 output written
// in the fp16 C2 layout (conv_requant.h plan_float_out).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <tuple>

#include "conv_prelu.h"
#include "conv_requant.h"
#include "lower_conv_internal.h"
#include "dpu_only.h"
#include "compiler/rknpu/lower.h"
#include "hw/regcmd.h"
#include "hw/rknpu_layout.h"
#include "numerics/half.h"

namespace drv::rknpu {

using namespace conv_detail;

namespace {

int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }
int64_t ceil_div(int64_t v, int64_t m) { return (v + m - 1) / m; }

namespace en = hw::rknpu::enums;
constexpr hw::Field CNA_DATA_ENTRIES_FIELD = hw::rknpu::CNA_CBUF_CON1::DATA_ENTRIES;
/// Regcmd bytes one conv task fetches (~90 entries), counted with the task overhead.
constexpr int64_t kRegcmdBytesPerTask = 768;

void put_i32(std::vector<uint8_t>& v, int32_t x) {
    uint8_t b[4];
    std::memcpy(b, &x, 4);
    v.insert(v.end(), b, b + 4);
}
void put_i16(std::vector<uint8_t>& v, int16_t x) {
    uint8_t b[2];
    std::memcpy(b, &x, 2);
    v.insert(v.end(), b, b + 2);
}

/// Geometry, CBUF arithmetic and the chosen tiling, shared by the search and the emitter.
struct Plan {
    hw::rknpu::Generation gen = hw::rknpu::Generation::RK3588;
    hw::rknpu::WeightBlocks blocks;      ///< the SoC's int8 weight blocks (hw/rknpu_layout.h)
    hw::rknpu::WeightBlocks dw_blocks;   ///< depthwise
    int c2 = 16;
    int64_t eb = 1;                      ///< bytes per element (2 on the fp16 path)
    int eff_h = 1, eff_w = 1, out_h = 0, out_w = 0;
    int64_t entry = 128, bank = 32768, epb = 256, banks = 12;
    int64_t taps = 1, cpad_all = 16, per_kernel = 0;  ///< per_kernel: packed bytes of one (non-depthwise) kernel
    int out_c_pad = 16;
    int kg = 0;        ///< kernels (output channels) per group, a multiple of C2
    int kg_step = 16;  ///< preferred group granule: C2 and the array's output-channel padding
    int bands = 1, groups = 1;
    int data_banks = 0, weight_banks = 0;
    int64_t entries_per_row = 0;  ///< CBUF entries of one input row of a task
    int64_t task_cost_bytes = 0;  ///< one task's fixed cost as the DDR bytes moved in that time
    int32_t clip_lo = -128, clip_hi = 127;

    /// Input rows [r0, r1) an output band [y0, y1) reads, clipped to the tensor.
    std::pair<int, int> in_rows(const ConvOp& op, int in_h, int y0, int y1) const {
        const int first = y0 * op.stride_h - op.pad_top;
        const int last = (y1 - 1) * op.stride_h - op.pad_top + eff_h - 1;
        return {std::max(0, first), std::min(in_h, last + 1)};
    }
    int band_y0(int i) const { return static_cast<int>(static_cast<int64_t>(i) * out_h / bands); }
    /// Channels per input row of a task (depthwise: a kernel group is an input channel slice too).
    int64_t task_cpad(const ConvOp& op, int kg_) const { return op.depthwise ? kg_ : cpad_all; }
    int64_t group_weight_bytes(const ConvOp& op, int kg_) const {
        return op.depthwise ? taps * kg_ * eb : per_kernel * kg_;
    }
    int64_t total_weight_bytes(const ConvOp& op) const {
        return op.depthwise ? taps * out_c_pad * eb : per_kernel * op.out_c;
    }
    /// hardware-facts.md §3.5: ceil(weight bytes / bank) + 1, the extra bank Mesa allocates (empirical).
    int weight_banks_for(int64_t bytes) const { return static_cast<int>(ceil_div(bytes, bank)) + 1; }
    int64_t row_entries(int in_w, int64_t cpad) const { return ceil_div(int64_t{in_w} * cpad * eb, entry); }
};

/// The op's own consistency and the CNA field limits; one line naming the op.
void check_op(const ConvOp& op, const std::vector<int>& cores, bool timing_only) {
    if (op.in_c <= 0 || op.out_c <= 0) fail(op, "empty input or output channels");
    if (op.kernel_h <= 0 || op.kernel_w <= 0 || op.stride_h <= 0 || op.stride_w <= 0 || op.dilation_h <= 0 ||
        op.dilation_w <= 0)
        fail(op, "kernel, stride and dilation must be positive");
    if (op.kernel_h > 31 || op.kernel_w > 31)
        fail(op, fmt::format("kernel {}x{} exceeds the CNA's 31", op.kernel_h, op.kernel_w));
    if (op.stride_h > 7 || op.stride_w > 7)
        fail(op, fmt::format("stride {}x{} exceeds the CNA's 7", op.stride_h, op.stride_w));
    if (op.dilation_h > 31 || op.dilation_w > 31) fail(op, "dilation exceeds the CNA's 31");
    if (op.pad_top < 0 || op.pad_left < 0 || op.pad_bottom < 0 || op.pad_right < 0) fail(op, "negative padding");
    if (op.pad_top > 15 || op.pad_left > 15) fail(op, "top/left padding exceeds the CNA's 15");
    if (op.depthwise && op.in_c != op.out_c) fail(op, "depthwise needs input channels == output channels");
    const size_t expect_w = static_cast<size_t>(op.out_c) * (op.depthwise ? 1 : op.in_c) * op.kernel_h * op.kernel_w;
    // weights_ref: the caller's array of expect_w values (not checkable here).
    if (op.fp16) {
        if (op.runtime_weights && op.depthwise) fail(op, "runtime weights of a depthwise convolution");
        if (!op.weights_f_ref && op.weights_f.size() != expect_w && !((timing_only || op.runtime_weights) && op.weights_f.empty()))
            fail(op, fmt::format("weights have {} values, expected {}", op.weights_f.size(), expect_w));
        if (!op.bias_f.empty() && op.bias_f.size() != static_cast<size_t>(op.out_c)) fail(op, "bias size != output channels");
        if (cores.empty()) fail(op, "no cores to run on");
        return;
    }
    if (!op.weights_ref && op.weights.size() != expect_w && !((timing_only || op.runtime_weights) && op.weights.empty()))
        fail(op, fmt::format("weights have {} values, expected {}", op.weights.size(), expect_w));
    if (!op.bias.empty() && op.bias.size() != static_cast<size_t>(op.out_c)) fail(op, "bias size != output channels");
    if (op.float_out) {
        if (!op.bias.empty()) fail(op, "a float-output conv takes its bias in bias_f");
        if (!op.bias_f.empty() && op.bias_f.size() != static_cast<size_t>(op.out_c)) fail(op, "bias size != output channels");
        if (op.act != Act::None && op.act != Act::Relu && op.act != Act::Clip)
            fail(op, "a float-output conv fuses a Relu / Clip only");
        if (op.act == Act::Clip && !(op.clip_lo_f <= op.clip_hi_f))
            fail(op, fmt::format("clip range [{}, {}] is empty", op.clip_lo_f, op.clip_hi_f));
    }
    if (op.w_scales.size() != 1 && op.w_scales.size() != static_cast<size_t>(op.out_c))
        fail(op, "w_scales must have 1 or out_c values");
    if (op.in_zp < -128 || op.in_zp > 127 || op.out_zp < -128 || op.out_zp > 127) fail(op, "zero points must be int8");
    if (cores.empty()) fail(op, "no cores to run on");
}

/// Geometry from the op, the tensors and the profile; checks that the tensors fit it.
Plan make_plan(const ConvOp& op, const DeviceTensor& in, const DeviceTensor& out, const hw::SocProfile& soc) {
    Plan p;
    p.gen = hw::rknpu::soc_generation(soc);
    const unsigned bits = op.fp16 ? 16 : 8;
    p.blocks = hw::rknpu::weight_blocks(soc, bits, false);
    p.dw_blocks = hw::rknpu::weight_blocks(soc, bits, true);
    p.c2 = op.fp16 ? soc.npu.c2_fp16.value : soc.npu.c2_int8.value;
    p.eb = op.fp16 ? 2 : 1;
    p.entry = soc.npu.cbuf_entry_bytes.value;
    p.bank = soc.npu.cbuf_bank_bytes.value;
    p.banks = soc.npu.cbuf_banks.value;
    p.epb = p.entry > 0 ? p.bank / p.entry : 0;
    const int c2 = p.c2;
    if (c2 <= 0 || p.entry <= 0 || p.epb <= 0 || p.banks < 2) fail(op, "profile has no usable CBUF/C2 parameters");
    // A float-output int8 conv writes fp16 (the fp16 C2); its kernel groups start at multiples of the
    // int8 C2, which the fp16 C2 divides.
    const int out_c2 = op.float_out ? soc.npu.c2_fp16.value : c2;
    if (in.c2 != c2 || out.c2 != out_c2 || out_c2 <= 0 || c2 % out_c2 != 0)
        fail(op, fmt::format("tensors use C2 = {}/{}, the profile {} has C2 = {}/{}", in.c2, out.c2, soc.name, c2, out_c2));
    if (in.fp16 != op.fp16 || out.fp16 != (op.fp16 || op.float_out))
        fail(op, fmt::format("{} convolution on {}/{} tensors", op.fp16 ? "fp16" : "int8", in.fp16 ? "fp16" : "int8",
                             out.fp16 ? "fp16" : "int8"));
    const int64_t row_atom = int64_t{c2} * p.eb;  // bytes of one pixel's atom
    if (in.c != op.in_c || out.c != op.out_c)
        fail(op, fmt::format("tensor channels {}/{} differ from the op's {}/{}", in.c, out.c, op.in_c, op.out_c));
    p.eff_h = (op.kernel_h - 1) * op.dilation_h + 1;
    p.eff_w = (op.kernel_w - 1) * op.dilation_w + 1;
    if (in.h + op.pad_top + op.pad_bottom < p.eff_h || in.w + op.pad_left + op.pad_right < p.eff_w)
        fail(op, "kernel larger than the padded input");
    p.out_h = (in.h + op.pad_top + op.pad_bottom - p.eff_h) / op.stride_h + 1;
    p.out_w = (in.w + op.pad_left + op.pad_right - p.eff_w) / op.stride_w + 1;
    if (p.out_h != out.h || p.out_w != out.w)
        fail(op, fmt::format("output tensor is {}x{}, the geometry gives {}x{}", out.h, out.w, p.out_h, p.out_w));
    if (op.pad_bottom >= p.eff_h || op.pad_right >= p.eff_w) fail(op, "bottom/right padding reaches past the kernel");
    if (in.w > 2047 || in.h > 2047 || p.out_w > 2047) fail(op, "width/height exceeds the CNA's 11-bit fields");
    if (in.line_stride < static_cast<uint64_t>(in.w * row_atom)) fail(op, "input line stride below width*C2");
    // The rows of a surface end before the next surface begins (a view with a line stride of several
    // rows, lower_conv_phase.cpp, ends its last row short of h line strides).
    if (in.c > c2 && in.surf_stride < static_cast<uint64_t>(in.line_stride) * (in.h - 1) + static_cast<uint64_t>(in.w * row_atom))
        fail(op, "input surface stride below the rows of a surface");
    // The DPU writes lines of w atoms, DATA_CUBE_NOTCH_ADDR atoms apart (A-NOTCH; compact unless a
    // caller writes every n-th row of a larger tensor: ConvTranspose's stride phases, issue 15).
    const int64_t out_atom = op.float_out ? int64_t{out_c2} * 2 : row_atom;
    const uint64_t out_row = static_cast<uint64_t>(out.w * out_atom);
    if (out.line_stride < out_row || (out.line_stride - out_row) % static_cast<uint64_t>(out_atom) != 0 ||
        (out.line_stride - out_row) / static_cast<uint64_t>(out_atom) > 8191)
        fail(op, fmt::format("output line stride {} is not width*C2 = {} plus a 13-bit notch of whole atoms",
                             out.line_stride, out_row));
    if (out.c > c2 && (out.surf_stride % 16 != 0 ||
                       out.surf_stride < static_cast<uint64_t>(out.line_stride) * static_cast<uint64_t>(out.h - 1) + out_row))
        fail(op, fmt::format("output surface stride {} must be a multiple of 16 and hold the surface's rows",
                             out.surf_stride));
    p.taps = int64_t{op.kernel_h} * op.kernel_w;
    p.cpad_all = round_up(op.in_c, c2);
    p.per_kernel = p.taps * p.cpad_all * p.eb;
    p.out_c_pad = static_cast<int>(round_up(op.out_c, c2));
    // Tiling weighs bytes moved against task count: a task's fixed cost (npu.task_overhead_cycles)
    // is worth the bytes the DDR moves meanwhile (mem.ddr_peak_bytes_per_s x ddr_efficiency).
    const double clock = static_cast<double>(soc.npu.core_clock_hz.value);
    const double bw =
        soc.mem.ddr_peak_bytes_per_s.value * (soc.mem.ddr_efficiency.value > 0 ? soc.mem.ddr_efficiency.value : 1.0);
    p.task_cost_bytes = kRegcmdBytesPerTask;
    if (clock > 0 && bw > 0 && soc.npu.task_overhead_cycles.value > 0)
        p.task_cost_bytes += static_cast<int64_t>(soc.npu.task_overhead_cycles.value / clock * bw);
    // The MAC array pads each task's output channels (npu.cout_align_int8 / depthwise_cout_align,
    // conv_timing.cpp): kernel groups in multiples of that padding waste no MACs.
    const int align = op.depthwise ? soc.npu.depthwise_cout_align.value
                                   : (op.fp16 ? soc.npu.cout_align_fp16.value : soc.npu.cout_align_int8.value);
    p.kg_step = align > 0 ? static_cast<int>(std::lcm(c2, align)) : c2;
    if (op.act == Act::Lut && !op.fp16 && op.lut.size() != 256) fail(op, "a fused LUT needs 256 entries");
    if (op.act == Act::Lut && op.fp16 && (op.lut_f.lo.size() != 257 || op.lut_f.le.size() != 65))
        fail(op, "a fused fp16 LUT needs 257 LO and 65 LE entries");
    if (op.act == Act::Prelu && op.fp16) fail(op, "a fused PRelu on the fp16 path is not lowered");
    if (op.act == Act::Clip && op.fp16) {
        if (!(op.clip_lo_f <= op.clip_hi_f)) fail(op, fmt::format("clip range [{}, {}] is empty", op.clip_lo_f, op.clip_hi_f));
    } else if (op.act == Act::Clip) {
        p.clip_lo = std::max(-128, op.clip_lo);
        p.clip_hi = std::min(127, op.clip_hi);
        if (p.clip_lo > p.clip_hi) fail(op, fmt::format("clip range [{}, {}] is empty", op.clip_lo, op.clip_hi));
    }
    return p;
}

/// Tiling search: kernel group size kg (a multiple of C2) and row bands such that data + weight
/// banks fit, minimising the bytes moved plus a per-task overhead.
void choose_tiling(const ConvOp& op, const DeviceTensor& in, const hw::SocProfile& soc, Plan& p) {
    int64_t best_cost = std::numeric_limits<int64_t>::max();
    auto search = [&](int step) {
        for (int kg_top = static_cast<int>(round_up(op.out_c, step)); kg_top >= step; kg_top -= step) {
            const int kg = std::min(kg_top, p.out_c_pad);
            const int groups = static_cast<int>(ceil_div(op.out_c, kg));
            const int64_t cpad = p.task_cpad(op, kg);
            const int64_t db_avail = p.banks - p.weight_banks_for(p.group_weight_bytes(op, kg));
            if (db_avail < 1) continue;
            const int64_t rows_fit = db_avail * p.epb / p.row_entries(in.w, cpad);
            int bands = 1;
            if (rows_fit < in.h) {
                if (rows_fit < std::min(in.h, p.eff_h)) continue;
                const int64_t ho = (rows_fit - p.eff_h) / op.stride_h + 1;
                if (ho < 1) continue;
                bands = static_cast<int>(ceil_div(p.out_h, ho));
            }
            // Bytes moved: every task reads its input rows (halo included); the weights once (row
            // bands of a group reuse them).
            Plan q = p;
            q.bands = bands;
            int64_t in_bytes = 0;
            for (int b = 0; b < bands; ++b) {
                const auto r = q.in_rows(op, in.h, q.band_y0(b), q.band_y0(b + 1));
                in_bytes += int64_t{r.second - r.first} * in.w * cpad * p.eb;
            }
            const int64_t cost = (op.depthwise ? in_bytes * kg / cpad * groups : in_bytes * groups) +
                                 p.total_weight_bytes(op) + int64_t{groups} * bands * p.task_cost_bytes;
            if (cost < best_cost) best_cost = cost, p.kg = kg, p.bands = bands;
        }
    };
    search(p.kg_step);
    if (p.kg == 0 && p.kg_step != p.c2) search(p.c2);  // weights too large for one padded group
    if (p.kg == 0)
        fail(op, fmt::format("no tiling fits the {} CBUF banks of {} (one kernel of {} bytes, input rows of {} bytes)",
                             p.banks, soc.name, p.group_weight_bytes(op, p.c2), int64_t{in.w} * p.task_cpad(op, p.c2) * p.eb));
    p.groups = static_cast<int>(ceil_div(op.out_c, p.kg));
}

/// Several cores: give each core work. Row bands share the weights (each core loads all of
/// them), kernel groups share the input (each core reads all of it): split what moves fewer
/// bytes per core. Depthwise channel groups split weights and input alike.
void spread_over_cores(const ConvOp& op, const DeviceTensor& in, int ncores, Plan& p) {
    if (p.groups * p.bands >= ncores) return;
    auto split_kernels = [&] {
        const int want_groups = static_cast<int>(ceil_div(ncores, p.bands));
        const int kg2 = static_cast<int>(round_up(ceil_div(op.out_c, want_groups), p.kg_step));
        if (kg2 < p.kg) p.kg = kg2;
        p.groups = static_cast<int>(ceil_div(op.out_c, p.kg));
    };
    auto split_rows = [&] {
        p.bands = std::max(p.bands, std::min(p.out_h, static_cast<int>(ceil_div(ncores, p.groups))));
    };
    if (op.depthwise || p.total_weight_bytes(op) > int64_t{in.w} * in.h * p.cpad_all * p.eb) {
        split_kernels();
        if (p.groups * p.bands < ncores) split_rows();
    } else {
        split_rows();
        if (p.groups * p.bands < ncores) split_kernels();
    }
}

/// CBUF banks, constant over the layer's tasks (the largest band) so weight reuse keeps its banks.
void size_cbuf(const ConvOp& op, const DeviceTensor& in, Plan& p) {
    p.entries_per_row = p.row_entries(in.w, p.task_cpad(op, p.kg));
    int max_rows = 0;
    for (int b = 0; b < p.bands; ++b) {
        const auto r = p.in_rows(op, in.h, p.band_y0(b), p.band_y0(b + 1));
        max_rows = std::max(max_rows, r.second - r.first);
    }
    p.data_banks = static_cast<int>(ceil_div(p.entries_per_row * max_rows, p.epb));
    p.weight_banks = p.weight_banks_for(p.group_weight_bytes(op, p.kg));
    if (p.data_banks + p.weight_banks > p.banks || p.data_banks > 15 || p.weight_banks > 15)
        fail(op, fmt::format("internal tiling error: {} data + {} weight banks > {}", p.data_banks, p.weight_banks,
                             p.banks));
    const uint64_t row_bytes = static_cast<uint64_t>(in.w) * static_cast<uint64_t>(p.task_cpad(op, p.kg) * p.eb);
    if (!CNA_DATA_ENTRIES_FIELD.fits(hw::rknpu::data_entries(row_bytes, p.gen)))
        fail(op, "input row exceeds the CNA's DATA_ENTRIES field");
}


void put_f16(uint8_t* at, float v) {
    const uint16_t h = num::fp32_to_fp16(v);
    at[0] = static_cast<uint8_t>(h & 0xff);
    at[1] = static_cast<uint8_t>(h >> 8);
}

/// fp16: the weights as fp16 in the fp16 weight blocks, one fp32 bias image (BS ALU operand) per
/// kernel group; no BN operands.
Constants place_constants_fp16(const ConvOp& op, const Plan& p, ArenaBuilder& arena) {
    const size_t taps = static_cast<size_t>(p.taps);
    Constants cs;
    cs.weights = op.runtime_weights ? op.runtime_weights->offset  // the caller's activation memory
                                    : arena.add_placeholder(op.depthwise ? static_cast<uint64_t>(p.groups) * taps * p.kg * 2
                                                                         : static_cast<uint64_t>(op.out_c) * p.per_kernel);
    if (op.runtime_weights) *op.runtime_weights = {cs.weights, static_cast<uint64_t>(p.per_kernel), p.kg,
                                                   static_cast<int>(p.cpad_all), static_cast<int>(p.taps)};
    if (arena.placeholders()) {
        for (int g = 0; g < p.groups; ++g)
            cs.bs.push_back(arena.add_placeholder(static_cast<uint64_t>(std::min(op.out_c, (g + 1) * p.kg) - g * p.kg) * 4));
        return cs;
    }
    const float* wd = op.weights_f_ref ? op.weights_f_ref : op.weights_f.data();
    const uint32_t T = static_cast<uint32_t>(taps);
    uint8_t* wimg = op.runtime_weights || !wd ? nullptr : arena.init().data() + (cs.weights - arena.init_base());
    if (!wimg) {  // runtime weights: written by the layer's earlier tasks
    } else if (op.depthwise) {
        for (int g = 0; g < p.groups; ++g) {
            const int c0 = g * p.kg, cn = std::min(op.out_c - c0, p.kg);
            const uint32_t cpad = static_cast<uint32_t>(round_up(cn, p.c2));
            uint8_t* base = wimg + static_cast<size_t>(g) * taps * static_cast<size_t>(p.kg) * 2;
            for (int cl = 0; cl < cn; ++cl)
                for (uint32_t t = 0; t < T; ++t)
                    put_f16(base + 2 * hw::rknpu::weight_element(p.dw_blocks, 1, T, cpad, 0, t, static_cast<uint32_t>(cl)),
                            wd[static_cast<size_t>(c0 + cl) * taps + t]);
        }
    } else {
        const uint32_t cpad = static_cast<uint32_t>(p.cpad_all);
        for (int g = 0; g < p.groups; ++g) {
            const int k0 = g * p.kg, kn = std::min(op.out_c - k0, p.kg);
            uint8_t* base = wimg + static_cast<size_t>(k0) * static_cast<size_t>(p.per_kernel);
            for (int k = 0; k < kn; ++k)
                for (int c = 0; c < op.in_c; ++c)
                    for (uint32_t t = 0; t < T; ++t)
                        put_f16(base + 2 * hw::rknpu::weight_element(p.blocks, static_cast<uint32_t>(kn), T, cpad,
                                                                     static_cast<uint32_t>(k), t, static_cast<uint32_t>(c)),
                                wd[(static_cast<size_t>(k0 + k) * op.in_c + c) * taps + t]);
        }
    }
    for (int g = 0; g < p.groups; ++g) {
        const int k0 = g * p.kg, k1 = std::min(op.out_c, k0 + p.kg);
        std::vector<uint8_t> bs;
        for (int k = k0; k < k1; ++k) {
            const float b = op.bias_f.empty() ? 0.f : op.bias_f[static_cast<size_t>(k)];
            uint8_t raw[4];
            std::memcpy(raw, &b, 4);
            bs.insert(bs.end(), raw, raw + 4);
        }
        cs.bs.push_back(arena.add_init(bs));
    }
    return cs;
}

Constants place_constants(const ConvOp& op, const Plan& p, const Requant& rq, const FloatOut& fo, ArenaBuilder& arena) {
    if (op.fp16) return place_constants_fp16(op, p, arena);
    const size_t taps = static_cast<size_t>(p.taps);
    Constants cs;
    // Packed straight into the arena (zero-filled there: the padding), no staging copy. Timing-only
    // compile (placeholders): the same offsets, no bytes.
    cs.weights = op.runtime_weights ? op.runtime_weights->offset  // the caller's activation memory
                                    : arena.add_placeholder(op.depthwise ? static_cast<uint64_t>(p.groups) * taps * p.kg
                                                                         : static_cast<uint64_t>(op.out_c) * p.per_kernel);
    if (op.runtime_weights) *op.runtime_weights = {cs.weights, static_cast<uint64_t>(p.per_kernel), p.kg,
                                                   static_cast<int>(p.cpad_all), static_cast<int>(p.taps)};
    if (arena.placeholders()) {
        for (int g = 0; g < p.groups; ++g) {
            const uint64_t kn = static_cast<uint64_t>(std::min(op.out_c, (g + 1) * p.kg) - g * p.kg);
            cs.bs.push_back(arena.add_placeholder(kn * 6));
            if (!op.float_out) cs.bn.push_back(arena.add_placeholder(kn * (has_bias_fraction(op) ? 6 : 2)));
        }
        return cs;
    }
    uint8_t* wimg = arena.init().data() + (cs.weights - arena.init_base());
    const int8_t* wd = op.runtime_weights ? nullptr : weight_data(op);
    // Each task's kernel group is packed in the CNA's weight blocks (hw/rknpu_layout.h: Mesa
    // rkt_coefs.c, mtx512 weight_int8) on its own, so a group is a contiguous range of the same
    // size as before: kernels [k0, k1) at k0 x per-kernel bytes; depthwise group g at g x taps x kg.
    const uint32_t T = static_cast<uint32_t>(taps);
    if (!wd) {  // runtime weights: written by the layer's earlier tasks
    } else if (op.depthwise) {
        for (int g = 0; g < p.groups; ++g) {
            const int c0 = g * p.kg, cn = std::min(op.out_c - c0, p.kg);
            const uint32_t cpad = static_cast<uint32_t>(round_up(cn, p.c2));
            uint8_t* base = wimg + static_cast<size_t>(g) * taps * static_cast<size_t>(p.kg);
            for (int cl = 0; cl < cn; ++cl)
                for (uint32_t t = 0; t < T; ++t)
                    base[hw::rknpu::weight_element(p.dw_blocks, 1, T, cpad, 0, t, static_cast<uint32_t>(cl))] =
                        static_cast<uint8_t>(wd[static_cast<size_t>(c0 + cl) * taps + t]);
        }
    } else {
        const uint32_t cpad = static_cast<uint32_t>(p.cpad_all);
        for (int g = 0; g < p.groups; ++g) {
            const int k0 = g * p.kg, kn = std::min(op.out_c - k0, p.kg);
            uint8_t* base = wimg + static_cast<size_t>(k0) * static_cast<size_t>(p.per_kernel);
            // Inside a channel group the channels of one (kernel, tap) are consecutive elements:
            // one weight_element per run of the group.
            const int CG = static_cast<int>(std::max<uint32_t>(p.blocks.channel_group, 1));
            for (int k = 0; k < kn; ++k)
                for (uint32_t t = 0; t < T; ++t)
                    for (int c0 = 0; c0 < op.in_c; c0 += CG) {
                        uint8_t* dst = base + hw::rknpu::weight_element(p.blocks, static_cast<uint32_t>(kn), T, cpad,
                                                                        static_cast<uint32_t>(k), t, static_cast<uint32_t>(c0));
                        const int8_t* src = wd + (static_cast<size_t>(k0 + k) * op.in_c + c0) * taps + t;
                        const int n = std::min(CG, op.in_c - c0);
                        for (int j = 0; j < n; ++j) dst[j] = static_cast<uint8_t>(src[static_cast<size_t>(j) * taps]);
                    }
        }
    }
    for (int g = 0; g < p.groups; ++g) {
        // BS image: the ALU operands (bias) of the group's channels, then the MUL operands
        // (DpuStage::operand_bytes layout); BN image: the MUL operands, after the ALU operands (the
        // float bias's fractions) when there are any.
        const int k0 = g * p.kg, k1 = std::min(op.out_c, k0 + p.kg);
        std::vector<uint8_t> bs, bn;
        if (op.float_out) {  // fp32 offsets (ALU), fp16 multipliers (MUL); no BN image (register operand)
            for (int k = k0; k < k1; ++k) {
                uint32_t u = 0;
                std::memcpy(&u, &fo.offset[static_cast<size_t>(k)], 4);
                put_i32(bs, static_cast<int32_t>(u));
            }
            for (int k = k0; k < k1; ++k) put_i16(bs, static_cast<int16_t>(fo.mul[static_cast<size_t>(k)]));
            cs.bs.push_back(arena.add_init(bs));
            continue;
        }
        for (int k = k0; k < k1; ++k) put_i32(bs, rq.bias[k]);
        for (int k = k0; k < k1; ++k) put_i16(bs, rq.m1[k]);
        if (has_bias_fraction(op))
            for (int k = k0; k < k1; ++k) put_i32(bn, rq.bn_add[k]);
        for (int k = k0; k < k1; ++k) put_i16(bn, rq.m2[k]);
        cs.bs.push_back(arena.add_init(bs));
        cs.bn.push_back(arena.add_init(bn));
    }
    return cs;
}


TaskGeom task_geometry(const ConvOp& op, const DeviceTensor& in, const Plan& p, int t) {
    TaskGeom tg;
    tg.g = t / p.bands;
    const int band = t % p.bands;
    tg.k0 = tg.g * p.kg, tg.k1 = std::min(op.out_c, tg.k0 + p.kg), tg.kn = tg.k1 - tg.k0;
    tg.y0 = p.band_y0(band), tg.y1 = p.band_y0(band + 1), tg.oh = tg.y1 - tg.y0, tg.ow = p.out_w;
    std::tie(tg.r0, tg.r1) = p.in_rows(op, in.h, tg.y0, tg.y1);
    tg.ih = tg.r1 - tg.r0;
    tg.pad_top = std::max(0, op.pad_top - tg.y0 * op.stride_h);
    tg.cin = op.depthwise ? tg.kn : op.in_c;
    tg.cin_pad = static_cast<int>(round_up(tg.cin, p.c2));
    tg.ch0 = op.depthwise ? tg.k0 : 0;
    return tg;
}

/// CNA: feature and weight load, geometry, padding. PC mode keeps registers between tasks, so
/// every task writes every register its blocks read.
void emit_cna(BodyBuilder& bb, const ConvOp& op, const DeviceTensor& in, const Plan& p, const TaskGeom& tg,
              const Constants& cs) {
    const uint64_t feat = in.offset + static_cast<uint64_t>(tg.ch0 / p.c2) * in.surf_stride +
                          static_cast<uint64_t>(tg.r0) * in.line_stride;
    const uint64_t eb = static_cast<uint64_t>(p.eb);
    const uint64_t per_kernel = static_cast<uint64_t>(p.taps) * static_cast<uint64_t>(tg.cin_pad) * eb;
    const uint64_t wbytes = op.depthwise ? per_kernel : per_kernel * static_cast<uint64_t>(tg.kn);
    const uint64_t waddr = cs.weights + (op.depthwise ? static_cast<uint64_t>(tg.g) * p.taps * p.kg * eb
                                                      : static_cast<uint64_t>(tg.k0) * p.per_kernel);
    const uint64_t ih = static_cast<uint64_t>(tg.ih), iw = static_cast<uint64_t>(in.w);
    const auto prec = op.fp16 ? en::Precision::FP16 : en::Precision::INT8;
    bb.write_fields("CNA_CONV_CON1", {{"CONV_MODE", op.depthwise ? en::ConvMode::DEPTHWISE : en::ConvMode::DIRECT},
                                      {"IN_PRECISION", prec},
                                      {"PROC_PRECISION", prec}});
    // UNVERIFIED: FEATURE_GRAINS as the rows the task loads (10-bit field; the model does not read it).
    bb.write_fields("CNA_CONV_CON2", {{"FEATURE_GRAINS", std::min<uint64_t>(ih, 1023)}});
    bb.write_fields("CNA_CONV_CON3", {{"CONV_X_STRIDE", static_cast<uint64_t>(op.stride_w)},
                                      {"CONV_Y_STRIDE", static_cast<uint64_t>(op.stride_h)},
                                      {"ATROUS_X_DILATION", static_cast<uint64_t>(op.dilation_w)},
                                      {"ATROUS_Y_DILATION", static_cast<uint64_t>(op.dilation_h)}});
    bb.write_fields("CNA_DATA_SIZE0", {{"DATAIN_WIDTH", iw}, {"DATAIN_HEIGHT", ih}});
    bb.write_fields("CNA_DATA_SIZE1", {{"DATAIN_CHANNEL", static_cast<uint64_t>(tg.cin_pad)},
                                       {"DATAIN_CHANNEL_REAL", static_cast<uint64_t>(tg.cin - 1)}});
    bb.write_fields("CNA_DATA_SIZE2", {{"DATAOUT_WIDTH", static_cast<uint64_t>(tg.ow)}});
    bb.write_fields("CNA_DATA_SIZE3",
                    {{"DATAOUT_ATOMICS", static_cast<uint64_t>(tg.ow) * static_cast<uint64_t>(tg.oh)}});
    bb.write("CNA_WEIGHT_SIZE0", static_cast<uint32_t>(wbytes));
    bb.write_fields("CNA_WEIGHT_SIZE1", {{"WEIGHT_BYTES_PER_KERNEL", per_kernel}});
    bb.write_fields("CNA_WEIGHT_SIZE2", {{"WEIGHT_WIDTH", static_cast<uint64_t>(op.kernel_w)},
                                         {"WEIGHT_HEIGHT", static_cast<uint64_t>(op.kernel_h)},
                                         {"WEIGHT_KERNELS", static_cast<uint64_t>(tg.kn)}});
    bb.write_fields("CNA_CBUF_CON0", {{"DATA_BANK", static_cast<uint64_t>(p.data_banks)},
                                      {"WEIGHT_BANK", static_cast<uint64_t>(p.weight_banks)},
                                      {"WEIGHT_REUSE", tg.reuse ? 1u : 0u}});
    // DATA_ENTRIES counts 64-byte entries of one input row (Mesa rkt_task.c, mtx512).
    bb.write_fields("CNA_CBUF_CON1",
                    {{"DATA_ENTRIES", hw::rknpu::data_entries(iw * static_cast<uint64_t>(tg.cin_pad) * eb, p.gen)}});
    bb.write_fields("CNA_CVT_CON0", {{"CVT_BYPASS", 1}});
    bb.write_fields("CNA_PAD_CON0",
                    {{"PAD_TOP", static_cast<uint64_t>(tg.pad_top)}, {"PAD_LEFT", static_cast<uint64_t>(op.pad_left)}});
    bb.write("CNA_PAD_CON1", op.fp16 ? 0u : static_cast<uint32_t>(op.in_zp));  // fp16: +0.0
    bb.write_addr("CNA_FEATURE_DATA_ADDR", feat);
    bb.write_fields("CNA_DMA_CON0", {{"DATA_BURST_LEN", en::BurstLen::BURST_16}, {"WEIGHT_BURST_LEN", en::BurstLen::BURST_16}});
    // Strides in silicon units (hw/rknpu_layout.h): row bytes / 4; the surface as Mesa and mtx512
    // program it, LINE_STRIDE x (H / 4 - 1) for a compact surface.
    const auto line = hw::rknpu::encode_line_stride(in.line_stride, p.gen);
    const auto surf = hw::rknpu::encode_surf_stride(in.surf_stride, in.line_stride, p.gen);
    if (!line || !surf)
        fail(op, fmt::format("input strides {} / {} bytes are not representable in LINE_STRIDE / SURF_STRIDE",
                             in.line_stride, in.surf_stride));
    bb.write_fields("CNA_DMA_CON1", {{"LINE_STRIDE", *line}});
    bb.write_fields("CNA_DMA_CON2", {{"SURF_STRIDE", *surf}});
    bb.write_fields("CNA_FC_DATA_SIZE0", {{"DMA_WIDTH", iw}, {"DMA_HEIGHT", ih}});
    bb.write_fields("CNA_FC_DATA_SIZE1", {{"DMA_CHANNEL", static_cast<uint64_t>(tg.cin_pad)}});
    bb.write_addr("CNA_DCOMP_ADDR0", waddr);
}

void emit_core(BodyBuilder& bb, const ConvOp& op, const TaskGeom& tg) {
    bb.write_fields("CORE_MISC_CFG", {{"PROC_PRECISION", op.fp16 ? en::Precision::FP16 : en::Precision::INT8},
                                      {"QD_EN", 1},
                                      {"DW_EN", op.depthwise ? 1u : 0u}});
    bb.write_fields("CORE_DATAOUT_SIZE_0", {{"DATAOUT_WIDTH", static_cast<uint64_t>(tg.ow - 1)},
                                            {"DATAOUT_HEIGHT", static_cast<uint64_t>(tg.oh - 1)}});
    bb.write_fields("CORE_DATAOUT_SIZE_1", {{"DATAOUT_CHANNEL", static_cast<uint64_t>(tg.kn - 1)}});
    bb.write("CORE_CLIP_TRUNCATE", 0);
}

NpuTask task_meta(const ConvOp& op, const DeviceTensor& in, const Plan& p, const TaskGeom& tg, int core, int row_skip) {
    NpuTask meta;
    meta.enable_mask = hw::rknpu::kConvOpEnableMask;
    meta.int_mask = 0x300;
    meta.core = core;
    meta.what = fmt::format("rows {}-{}/{}, k {}-{}/{}", tg.y0, tg.y1 - 1, p.out_h, tg.k0, tg.k1 - 1, op.out_c);
    meta.macs = static_cast<uint64_t>(tg.ow) * static_cast<uint64_t>(tg.oh) * static_cast<uint64_t>(tg.kn) *
                static_cast<uint64_t>(op.depthwise ? 1 : op.in_c) * static_cast<uint64_t>(p.taps);
    meta.out_window = {tg.k0, tg.k1, tg.y0, tg.y1, 0, tg.ow};
    // In the input tensor's rows (a folded row stride reads rows r * row_skip).
    meta.in_window = {tg.ch0, op.depthwise ? tg.k1 : op.in_c, tg.r0 * row_skip, (tg.r1 - 1) * row_skip + 1, 0, in.w};
    meta.cbuf_data_banks = p.data_banks;
    meta.cbuf_weight_banks = p.weight_banks;
    return meta;
}

/// A 1x1 kernel with row stride s (no vertical padding) reads only every s-th input row: program
/// those rows as the input (LINE_STRIDE = s lines, CONV_Y_STRIDE = 1), which cuts the feature DMA
/// and the CBUF rows by s (ResNet's stride-2 projections). Returns s, or 1 when it does not apply.
/// UNVERIFIED: a line stride of several lines is the same DMA pattern as a row band of a wider
/// tensor; whether the vendor compiler does this is not known.
int fold_row_stride(ConvOp& op, DeviceTensor& in) {
    const int s = op.stride_h;
    if (op.kernel_h != 1 || s == 1 || op.pad_top != 0 || op.pad_bottom != 0 || in.h < 1) return 1;
    const int rows = (in.h - 1) / s + 1;
    const uint64_t line = static_cast<uint64_t>(in.line_stride) * static_cast<uint64_t>(s);
    if (in.c > in.c2 && line * static_cast<uint64_t>(rows) > in.surf_stride) return 1;  // surfaces would overlap
    if (line >= (uint64_t{1} << 28)) return 1;                                          // LINE_STRIDE field
    op.stride_h = 1;
    in.h = rows;
    in.line_stride = static_cast<uint32_t>(line);
    return s;
}

}  // namespace

std::vector<TaskBody> lower_conv_op(const ConvOp& op_arg, const DeviceTensor& in_arg, const DeviceTensor& out,
                                    ArenaBuilder& arena, const hw::SocProfile& soc, const std::vector<int>& cores) {
    // Timing-only compile (the arena keeps no weights): the weights may be absent; the same
    // tiling, offsets and regcmd sizes, with the weight-derived requantization values left out.
    const bool timing_only = arena.placeholders();
    check_op(op_arg, cores, timing_only);
    (void)make_plan(op_arg, in_arg, out, soc);  // the geometry as given must be consistent
    ConvOp folded;
    DeviceTensor in = in_arg;
    int row_skip = 1;
    if (op_arg.kernel_h == 1 && op_arg.stride_h > 1) {
        folded = op_arg;
        row_skip = fold_row_stride(folded, in);
    }
    const ConvOp& op = row_skip > 1 ? folded : op_arg;
    Plan p = make_plan(op, in, out, soc);
    const Requant rq = op.float_out ? Requant{} : plan_requant(op, timing_only);
    const FloatOut fo = op.float_out ? plan_float_out(op, timing_only) : FloatOut{};
    const int ncores = static_cast<int>(cores.size());
    choose_tiling(op, in, soc, p);
    spread_over_cores(op, in, ncores, p);
    size_cbuf(op, in, p);
    Constants cs = place_constants(op, p, rq, fo, arena);
    const PreluPlan pr = op.act == Act::Prelu ? plan_prelu(op) : PreluPlan{};
    if (op.act == Act::Prelu) cs.ew = place_prelu(op, pr, p.groups, p.kg, p.c2, arena);

    // Tasks group-major, bands inside; contiguous balanced blocks of tasks per core, so a core's
    // consecutive bands of one kernel group reuse its weights.
    const int ntasks = p.groups * p.bands;
    std::vector<TaskBody> tasks;
    tasks.reserve(static_cast<size_t>(ntasks));
    std::vector<int> last_group_on_core(static_cast<size_t>(ncores), -1);
    try {
        for (int t = 0; t < ntasks; ++t) {
            const size_t slot = static_cast<size_t>(static_cast<int64_t>(t) * ncores / ntasks);
            TaskGeom tg = task_geometry(op, in, p, t);
            tg.reuse = !op.depthwise && last_group_on_core[slot] == tg.g;
            last_group_on_core[slot] = tg.g;
            BodyBuilder bb;
            emit_cna(bb, op, in, p, tg, cs);
            emit_core(bb, op, tg);
            if (op.fp16)
                emit_dpu_fp16(bb, op, out, tg, cs);
            else
                emit_dpu(bb, op, out, p.clip_lo, p.clip_hi, rq, fo, tg, cs, pr);
            tasks.push_back(bb.finish(task_meta(op, in_arg, p, tg, cores[slot], row_skip)));
        }
    } catch (const regcmd::EmitError& e) {
        fail(op, e.what());  // a value wider than its register field
    }
    return tasks;
}

}  // namespace drv::rknpu
