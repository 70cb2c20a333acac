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
// M1_c * M2_c * 2^-(S1 + S2 + S3) = m_c: the pair is searched (1024 M2 values, or every M1 when M1
// is small), which leaves a relative error near 2^-26 (a single 15-bit mantissa leaves 2^-16 and
// about 0.1% of outputs 1 LSB off). The intermediates carry <= y * 2^23 (BS: v1 = y 2^(S2+S3) /
// M2_c) and y * 2^S3 with S3 = 22,
// so the DPU's 32-bit saturation of every stage (dpu_engine.cpp) only hits values that saturate the
// int8 output anyway, and the inner roundings (>> S1, >> S2) sit >= 20 bits below the output LSB.
// All shifts round half up in the model (UNVERIFIED hardware rounding), the final one included; the
// reference rounds half to even, which differs only on exact ties.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

#include "drv/rknpu/lower.h"
#include "hw/regcmd.h"

namespace drv::rknpu {

namespace {

int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }
int64_t ceil_div(int64_t v, int64_t m) { return (v + m - 1) / m; }

/// Burst length programmed for CNA/DPU DMA: 15 = 16 beats, the value open drivers use.
constexpr uint32_t kBurstLen16 = 15;
/// DPU FEATURE_MODE_CFG.OUTPUT_MODE writing to memory (UNVERIFIED: value used by open drivers).
constexpr uint32_t kDpuOutputToMemory = 2;
/// CNA_CONV_CON1.CONV_MODE for depthwise (UNVERIFIED: Mesa's value; the model keys on DW_EN).
constexpr uint32_t kConvModeDepthwise = 3;
/// Largest intermediate scale exponent: y * 2^23 keeps |y| up to 256 inside int32.
constexpr int kMaxFracBits = 23;
/// Tiling cost of one task in bytes-equivalent (regcmd fetch, pipeline fill, interrupt): a
/// planning weight, not a measured figure (UNVERIFIED).
constexpr int64_t kTaskOverheadBytes = 4096;

[[noreturn]] void fail(const ConvOp& op, const std::string& what) {
    throw std::invalid_argument(fmt::format("conv '{}': {}", op.name, what));
}

struct Requant {
    std::vector<int32_t> bias;  ///< folded: b_c - in_zp * sum(w_c)
    std::vector<int16_t> m1;    ///< BS MUL per channel
    std::vector<int16_t> m2;    ///< BN MUL per channel, in [2^14, 2^15) (lower only ~2^16 below the largest)
    int s1 = 0, s2 = 0, s3 = 0;
};

/// BN multiplier candidates for large M1: the top kM2Candidates int16 values, so M1 * M2 can
/// approximate any product to ~2^-26 relative; v1 = y * 2^(S2 + S3) / M2 stays <= y * 2^23.
constexpr int kM2Candidates = 1024;
constexpr int kM2Lo = 32767 - kM2Candidates + 1;

Requant plan_requant(const ConvOp& op) {
    Requant r;
    const size_t n = static_cast<size_t>(op.out_c);
    const int taps = op.kernel_h * op.kernel_w;
    const int per_out = (op.depthwise ? 1 : op.in_c) * taps;
    r.bias.resize(n);
    std::vector<double> m(n);
    double m_max = 0;
    for (size_t k = 0; k < n; ++k) {
        int64_t wsum = 0;
        for (int i = 0; i < per_out; ++i) wsum += op.weights[k * static_cast<size_t>(per_out) + static_cast<size_t>(i)];
        // sum((x - zp) w) + b = sum(x w) + (b - zp sum(w)); padded taps read PAD_VALUE = zp.
        const int64_t b = (op.bias.empty() ? 0 : op.bias[k]) - int64_t{op.in_zp} * wsum;
        if (b < INT32_MIN || b > INT32_MAX) fail(op, fmt::format("folded bias of channel {} overflows int32", k));
        r.bias[k] = static_cast<int32_t>(b);
        // The reference (onnxruntime) forms the scale in float: x_scale * w_scale / y_scale.
        const float ws = op.w_scales.size() == 1 ? op.w_scales[0] : op.w_scales[k];
        const float mf = op.in_scale * ws / op.out_scale;
        if (!(mf > 0) || !std::isfinite(mf)) fail(op, fmt::format("requantization scale of channel {} is not positive", k));
        m[k] = mf;
        m_max = std::max(m_max, m[k]);
    }
    // Total shift: the largest channel's M1 * M2 just below 32767 * kM2Lo.
    const int s_tot = static_cast<int>(std::floor(std::log2(32767.0 * kM2Lo / m_max)));
    r.s3 = kMaxFracBits - 1;  // v2 = y * 2^S3: |y| < 512 stays inside int32
    r.s2 = 15;                // v1 = y * 2^(S2 + S3) / M2 ~ y * 2^22
    r.s1 = s_tot - r.s2 - r.s3;
    if (r.s1 < 0) r.s2 += r.s1, r.s1 = 0;   // large multipliers (small accumulators): fewer fraction bits
    if (r.s2 < 0) r.s3 += r.s2, r.s2 = 0;
    if (r.s3 < 0) fail(op, "requantization scale too large for the DPU");
    if (r.s1 > 63) fail(op, "requantization scale too small for the DPU MUL shift");
    r.m1.resize(n);
    r.m2.resize(n);
    for (size_t k = 0; k < n; ++k) {
        const double target = std::ldexp(m[k], s_tot);  // M1 * M2 ~ m * 2^(S1 + S2 + S3)
        double best = std::numeric_limits<double>::max();
        int64_t b1 = 0, b2 = 32767;
        auto consider = [&](int64_t m1, int64_t m2) {
            if (m1 < 1 || m1 > 32767 || m2 < 16384 || m2 > 32767) return;
            const double err = std::fabs(static_cast<double>(m1 * m2) - target);
            if (err < best) best = err, b1 = m1, b2 = m2;
        };
        // Small M1 (a channel far below the largest): try every M1 with M2 in [2^14, 2^15).
        const int64_t lo1 = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(target / 32767.0)));
        const int64_t hi1 = std::min<int64_t>(32767, static_cast<int64_t>(std::floor(target / 16384.0)));
        if (hi1 >= lo1 && hi1 - lo1 < 4 * kM2Candidates) {
            for (int64_t m1 = lo1; m1 <= hi1; ++m1) consider(m1, std::llround(target / static_cast<double>(m1)));
        } else {
            for (int64_t m2 = 32767; m2 >= kM2Lo && best > 0; --m2) consider(std::llround(target / static_cast<double>(m2)), m2);
        }
        if (b1 == 0) {
            // More than ~2^16 below the largest channel: M1 = 1 and a coarser M2 carry it; v1 is then
            // the raw accumulator >> S1, which cannot saturate harmfully.
            b1 = 1, b2 = std::llround(target);
        }
        r.m1[k] = static_cast<int16_t>(b1);
        r.m2[k] = static_cast<int16_t>(b2);
    }
    return r;
}

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

/// Geometry and CBUF arithmetic shared by the tiling search and the emitter.
struct Plan {
    int c2 = 16;
    int eff_h = 1, eff_w = 1, out_h = 0, out_w = 0;
    int64_t entry = 128, bank = 32768, epb = 256, banks = 12;
    int kg = 0;   ///< kernels (output channels) per group, a multiple of C2
    int bands = 1;
    int data_banks = 0, weight_banks = 0;
    /// Input rows [r0, r1) an output band [y0, y1) reads, clipped to the tensor.
    std::pair<int, int> in_rows(const ConvOp& op, int in_h, int y0, int y1) const {
        const int first = y0 * op.stride_h - op.pad_top;
        const int last = (y1 - 1) * op.stride_h - op.pad_top + eff_h - 1;
        return {std::max(0, first), std::min(in_h, last + 1)};
    }
    int band_y0(int i) const { return static_cast<int>(static_cast<int64_t>(i) * out_h / bands); }
};

int64_t entries_per_row(const Plan& p, int in_w, int64_t cpad) { return ceil_div(int64_t{in_w} * cpad, p.entry); }

}  // namespace

std::vector<TaskBody> lower_conv_op(const ConvOp& op, const DeviceTensor& in, const DeviceTensor& out,
                                    ArenaBuilder& arena, const hw::SocProfile& soc, const std::vector<int>& cores) {
    // ---- checks: one line naming the op and the problem
    if (op.in_c <= 0 || op.out_c <= 0) fail(op, "empty input or output channels");
    if (op.kernel_h <= 0 || op.kernel_w <= 0 || op.stride_h <= 0 || op.stride_w <= 0 || op.dilation_h <= 0 ||
        op.dilation_w <= 0)
        fail(op, "kernel, stride and dilation must be positive");
    if (op.kernel_h > 31 || op.kernel_w > 31) fail(op, fmt::format("kernel {}x{} exceeds the CNA's 31", op.kernel_h, op.kernel_w));
    if (op.stride_h > 7 || op.stride_w > 7) fail(op, fmt::format("stride {}x{} exceeds the CNA's 7", op.stride_h, op.stride_w));
    if (op.dilation_h > 31 || op.dilation_w > 31) fail(op, "dilation exceeds the CNA's 31");
    if (op.pad_top < 0 || op.pad_left < 0 || op.pad_bottom < 0 || op.pad_right < 0) fail(op, "negative padding");
    if (op.pad_top > 15 || op.pad_left > 15) fail(op, "top/left padding exceeds the CNA's 15");
    if (op.depthwise && op.in_c != op.out_c) fail(op, "depthwise needs input channels == output channels");
    const size_t taps = static_cast<size_t>(op.kernel_h) * op.kernel_w;
    const size_t expect_w = static_cast<size_t>(op.out_c) * (op.depthwise ? 1 : op.in_c) * taps;
    if (op.weights.size() != expect_w) fail(op, fmt::format("weights have {} values, expected {}", op.weights.size(), expect_w));
    if (!op.bias.empty() && op.bias.size() != static_cast<size_t>(op.out_c)) fail(op, "bias size != output channels");
    if (op.w_scales.size() != 1 && op.w_scales.size() != static_cast<size_t>(op.out_c))
        fail(op, "w_scales must have 1 or out_c values");
    if (op.in_zp < -128 || op.in_zp > 127 || op.out_zp < -128 || op.out_zp > 127) fail(op, "zero points must be int8");
    if (cores.empty()) fail(op, "no cores to run on");

    Plan p;
    p.c2 = soc.npu.c2_int8.value;
    p.entry = soc.npu.cbuf_entry_bytes.value;
    p.bank = soc.npu.cbuf_bank_bytes.value;
    p.banks = soc.npu.cbuf_banks.value;
    p.epb = p.bank / p.entry;
    const int c2 = p.c2;
    if (c2 <= 0 || p.entry <= 0 || p.epb <= 0 || p.banks < 2) fail(op, "profile has no usable CBUF/C2 parameters");
    if (in.c2 != c2 || out.c2 != c2)
        fail(op, fmt::format("tensors use C2 = {}/{}, the profile {} has C2 = {}", in.c2, out.c2, soc.name, c2));
    if (in.c != op.in_c || out.c != op.out_c)
        fail(op, fmt::format("tensor channels {}/{} differ from the op's {}/{}", in.c, out.c, op.in_c, op.out_c));
    p.eff_h = (op.kernel_h - 1) * op.dilation_h + 1;
    p.eff_w = (op.kernel_w - 1) * op.dilation_w + 1;
    p.out_h = (in.h + op.pad_top + op.pad_bottom - p.eff_h) / op.stride_h + 1;
    p.out_w = (in.w + op.pad_left + op.pad_right - p.eff_w) / op.stride_w + 1;
    if (in.h + op.pad_top + op.pad_bottom < p.eff_h || in.w + op.pad_left + op.pad_right < p.eff_w)
        fail(op, "kernel larger than the padded input");
    if (p.out_h != out.h || p.out_w != out.w)
        fail(op, fmt::format("output tensor is {}x{}, the geometry gives {}x{}", out.h, out.w, p.out_h, p.out_w));
    if (op.pad_bottom >= p.eff_h || op.pad_right >= p.eff_w) fail(op, "bottom/right padding reaches past the kernel");
    if (in.w > 2047 || in.h > 2047 || p.out_w > 2047) fail(op, "width/height exceeds the CNA's 11-bit fields");
    if (in.line_stride < static_cast<uint32_t>(in.w * c2)) fail(op, "input line stride below width*C2");
    if (in.c > c2 && in.surf_stride < static_cast<uint64_t>(in.line_stride) * in.h)
        fail(op, "input surface stride below line_stride*height");
    // The DPU writes compact lines: the output band of a surface is contiguous.
    if (out.line_stride != static_cast<uint32_t>(out.w * c2))
        fail(op, fmt::format("output line stride {} must be width*C2 = {} (the DPU writes compact lines)",
                             out.line_stride, out.w * c2));
    if (out.c > c2 && (out.surf_stride % 16 != 0 || out.surf_stride < static_cast<uint64_t>(out.line_stride) * out.h))
        fail(op, fmt::format("output surface stride {} must be a multiple of 16 and >= line_stride*height", out.surf_stride));

    const Requant rq = plan_requant(op);
    int32_t clip_lo = -128, clip_hi = 127;
    if (op.act == Act::Clip) {
        clip_lo = std::max(-128, op.clip_lo);
        clip_hi = std::min(127, op.clip_hi);
        if (clip_lo > clip_hi) fail(op, fmt::format("clip range [{}, {}] is empty", op.clip_lo, op.clip_hi));
    }

    // ---- tiling search: kernel group size kg (multiple of C2) x row bands, minimum bytes moved
    const int64_t cpad_all = round_up(op.in_c, c2);
    const int64_t per_kernel = static_cast<int64_t>(taps) * cpad_all;  // non-depthwise
    const int out_c_pad = static_cast<int>(round_up(op.out_c, c2));
    auto weight_banks_for = [&](int64_t bytes) { return static_cast<int>(ceil_div(bytes, p.bank)) + 1; };
    int64_t best_cost = std::numeric_limits<int64_t>::max();
    for (int kg = out_c_pad; kg >= c2; kg -= c2) {
        const int groups = static_cast<int>(ceil_div(op.out_c, kg));
        const int64_t cpad = op.depthwise ? kg : cpad_all;  // depthwise: a group is a channel slice of the input too
        const int64_t wbytes = op.depthwise ? static_cast<int64_t>(taps) * kg : per_kernel * kg;
        const int wb = weight_banks_for(wbytes);
        const int64_t db_avail = p.banks - wb;
        if (db_avail < 1) continue;
        const int64_t epr = entries_per_row(p, in.w, cpad);
        const int64_t rows_fit = db_avail * p.epb / epr;
        int bands = 1;
        if (rows_fit < in.h) {
            if (rows_fit < std::min(in.h, p.eff_h)) continue;
            const int64_t ho = (rows_fit - p.eff_h) / op.stride_h + 1;
            if (ho < 1) continue;
            bands = static_cast<int>(ceil_div(p.out_h, ho));
        }
        // Bytes moved: every task reads its input rows; weights once per group when one band,
        // else once per band (reuse only holds inside a group's consecutive bands: counted once).
        Plan q = p;
        q.bands = bands;
        int64_t in_bytes = 0;
        for (int b = 0; b < bands; ++b) {
            const auto r = q.in_rows(op, in.h, q.band_y0(b), q.band_y0(b + 1));
            in_bytes += int64_t{r.second - r.first} * in.w * cpad;
        }
        const int64_t total_w = op.depthwise ? static_cast<int64_t>(taps) * out_c_pad : per_kernel * op.out_c;
        const int64_t cost = (op.depthwise ? in_bytes * kg / cpad * groups : in_bytes * groups) + total_w +
                             int64_t{groups} * bands * kTaskOverheadBytes;
        if (cost < best_cost) {
            best_cost = cost;
            p.kg = kg;
            p.bands = bands;
        }
    }
    if (p.kg == 0)
        fail(op, fmt::format("no tiling fits the {} CBUF banks of {} (one kernel of {} bytes, input rows of {} bytes)",
                             p.banks, soc.name, op.depthwise ? static_cast<int64_t>(taps) * c2 : per_kernel * c2,
                             int64_t{in.w} * (op.depthwise ? c2 : cpad_all)));
    // Several cores: give each core work. Row bands share the weights (each core loads all of
    // them), kernel groups share the input (each core reads all of it): split what moves fewer
    // bytes per core. Depthwise channel groups split weights and input alike.
    const int ncores = static_cast<int>(cores.size());
    int groups = static_cast<int>(ceil_div(op.out_c, p.kg));
    if (groups * p.bands < ncores) {
        const int64_t w_total = op.depthwise ? static_cast<int64_t>(taps) * out_c_pad : per_kernel * op.out_c;
        const int64_t in_total = int64_t{in.w} * in.h * cpad_all;
        auto split_kernels = [&] {
            const int want_groups = static_cast<int>(ceil_div(ncores, p.bands));
            const int kg2 = static_cast<int>(round_up(ceil_div(op.out_c, want_groups), c2));
            if (kg2 < p.kg) p.kg = kg2;
            groups = static_cast<int>(ceil_div(op.out_c, p.kg));
        };
        auto split_rows = [&] { p.bands = std::max(p.bands, std::min(p.out_h, static_cast<int>(ceil_div(ncores, groups)))); };
        if (op.depthwise || w_total > in_total) {
            split_kernels();
            if (groups * p.bands < ncores) split_rows();
        } else {
            split_rows();
            if (groups * p.bands < ncores) split_kernels();
        }
    }
    // CBUF banks: constant over the layer's tasks (the largest band) so weight reuse keeps its banks.
    const int64_t cpad_task = op.depthwise ? p.kg : cpad_all;
    const int64_t epr = entries_per_row(p, in.w, cpad_task);
    int max_rows = 0;
    for (int b = 0; b < p.bands; ++b) {
        const auto r = p.in_rows(op, in.h, p.band_y0(b), p.band_y0(b + 1));
        max_rows = std::max(max_rows, r.second - r.first);
    }
    p.data_banks = static_cast<int>(ceil_div(epr * max_rows, p.epb));
    p.weight_banks = weight_banks_for(op.depthwise ? static_cast<int64_t>(taps) * p.kg : per_kernel * p.kg);
    if (p.data_banks + p.weight_banks > p.banks || p.data_banks > 15 || p.weight_banks > 15)
        fail(op, fmt::format("internal tiling error: {} data + {} weight banks > {}", p.data_banks, p.weight_banks, p.banks));
    if (epr > 16383) fail(op, "input row exceeds the CNA's DATA_ENTRIES field");

    // ---- constants in the arena: weights (one image), DPU operands per kernel group
    std::vector<uint8_t> wimg;
    if (op.depthwise) {
        // Per channel group: [kh][kw][group channels padded to C2] (the model's weight_index(c, 0, kh,
        // kw, ch) with in_c = DATAIN_CHANNEL; UNVERIFIED packing). Full groups hold kg channels.
        wimg.assign(static_cast<size_t>(groups) * taps * p.kg, 0);
        for (int c = 0; c < op.out_c; ++c) {
            const int g = c / p.kg, cl = c % p.kg;
            const size_t stride = static_cast<size_t>(round_up(std::min(op.out_c - g * p.kg, p.kg), c2));
            for (size_t t = 0; t < taps; ++t)
                wimg[static_cast<size_t>(g) * taps * p.kg + t * stride + cl] = static_cast<uint8_t>(op.weights[c * taps + t]);
        }
    } else {
        // Kernel after kernel, [kh][kw][C padded with zeros]: a kernel group is a contiguous range.
        wimg.assign(static_cast<size_t>(op.out_c) * per_kernel, 0);
        for (int k = 0; k < op.out_c; ++k)
            for (int c = 0; c < op.in_c; ++c)
                for (size_t t = 0; t < taps; ++t)
                    wimg[static_cast<size_t>(k) * per_kernel + t * cpad_all + c] =
                        static_cast<uint8_t>(op.weights[(static_cast<size_t>(k) * op.in_c + c) * taps + t]);
    }
    const uint64_t w_off = arena.add_init(wimg);
    std::vector<uint64_t> bs_off(groups), bn_off(groups);
    for (int g = 0; g < groups; ++g) {
        const int k0 = g * p.kg, k1 = std::min(op.out_c, k0 + p.kg);
        std::vector<uint8_t> bs, bn;
        for (int k = k0; k < k1; ++k) put_i32(bs, rq.bias[k]);
        for (int k = k0; k < k1; ++k) put_i16(bs, rq.m1[k]);
        bs_off[g] = arena.add_init(bs);
        for (int k = k0; k < k1; ++k) put_i16(bn, rq.m2[k]);
        bn_off[g] = arena.add_init(bn);
    }

    // ---- tasks: group-major, bands inside; contiguous balanced blocks of tasks per core
    const int ntasks = groups * p.bands;
    std::vector<TaskBody> tasks;
    tasks.reserve(ntasks);
    std::vector<int> last_group_on_core(static_cast<size_t>(ncores), -1);
    try {
        for (int t = 0; t < ntasks; ++t) {
            const int g = t / p.bands, band = t % p.bands;
            const int core_slot = static_cast<int>(static_cast<int64_t>(t) * ncores / ntasks);
            const int k0 = g * p.kg, k1 = std::min(op.out_c, k0 + p.kg), kn = k1 - k0;
            const int y0 = p.band_y0(band), y1 = p.band_y0(band + 1), oh = y1 - y0, ow = p.out_w;
            const auto [r0, r1] = p.in_rows(op, in.h, y0, y1);
            const int ih = r1 - r0;
            const int pad_top = std::max(0, op.pad_top - y0 * op.stride_h);
            const int cin = op.depthwise ? kn : op.in_c;             // real input channels the task reads
            const int cin_pad = static_cast<int>(round_up(cin, c2));  // DATAIN_CHANNEL
            const int ch0 = op.depthwise ? k0 : 0;                    // first input channel
            const uint64_t feat = in.offset + static_cast<uint64_t>(ch0 / c2) * in.surf_stride +
                                  static_cast<uint64_t>(r0) * in.line_stride;
            const uint64_t dst = out.offset + static_cast<uint64_t>(k0 / c2) * out.surf_stride +
                                 static_cast<uint64_t>(y0) * out.line_stride;
            const uint64_t wbytes = op.depthwise ? taps * static_cast<uint64_t>(cin_pad) : static_cast<uint64_t>(per_kernel) * kn;
            const uint64_t waddr = w_off + (op.depthwise ? static_cast<uint64_t>(g) * taps * p.kg
                                                         : static_cast<uint64_t>(k0) * per_kernel);
            const bool reuse = !op.depthwise && last_group_on_core[static_cast<size_t>(core_slot)] == g;
            last_group_on_core[static_cast<size_t>(core_slot)] = g;
            const uint32_t u_ow = static_cast<uint32_t>(ow), u_oh = static_cast<uint32_t>(oh);

            BodyBuilder bb;
            // CNA: feature and weight load, geometry, padding. PC mode keeps registers between tasks,
            // so every task writes every register its blocks read.
            bb.write_fields("CNA_CONV_CON1", {{"CONV_MODE", op.depthwise ? kConvModeDepthwise : 0u}, {"IN_PRECISION", 0},
                                              {"PROC_PRECISION", 0}});
            bb.write_fields("CNA_CONV_CON2", {{"FEATURE_GRAINS", static_cast<uint64_t>(std::min(ih, 1023))}});
            bb.write_fields("CNA_CONV_CON3", {{"CONV_X_STRIDE", static_cast<uint64_t>(op.stride_w)},
                                              {"CONV_Y_STRIDE", static_cast<uint64_t>(op.stride_h)},
                                              {"ATROUS_X_DILATION", static_cast<uint64_t>(op.dilation_w)},
                                              {"ATROUS_Y_DILATION", static_cast<uint64_t>(op.dilation_h)}});
            bb.write_fields("CNA_DATA_SIZE0", {{"DATAIN_WIDTH", static_cast<uint64_t>(in.w)}, {"DATAIN_HEIGHT", static_cast<uint64_t>(ih)}});
            bb.write_fields("CNA_DATA_SIZE1", {{"DATAIN_CHANNEL", static_cast<uint64_t>(cin_pad)},
                                               {"DATAIN_CHANNEL_REAL", static_cast<uint64_t>(cin - 1)}});
            bb.write_fields("CNA_DATA_SIZE2", {{"DATAOUT_WIDTH", u_ow}});
            bb.write_fields("CNA_DATA_SIZE3", {{"DATAOUT_ATOMICS", static_cast<uint64_t>(u_ow) * u_oh}});
            bb.write("CNA_WEIGHT_SIZE0", static_cast<uint32_t>(wbytes));
            bb.write_fields("CNA_WEIGHT_SIZE1",
                            {{"WEIGHT_BYTES_PER_KERNEL", static_cast<uint64_t>(taps) * static_cast<uint64_t>(cin_pad)}});
            bb.write_fields("CNA_WEIGHT_SIZE2", {{"WEIGHT_WIDTH", static_cast<uint64_t>(op.kernel_w)},
                                                 {"WEIGHT_HEIGHT", static_cast<uint64_t>(op.kernel_h)},
                                                 {"WEIGHT_KERNELS", static_cast<uint64_t>(kn)}});
            bb.write_fields("CNA_CBUF_CON0", {{"DATA_BANK", static_cast<uint64_t>(p.data_banks)},
                                              {"WEIGHT_BANK", static_cast<uint64_t>(p.weight_banks)},
                                              {"WEIGHT_REUSE", reuse ? 1u : 0u}});
            bb.write_fields("CNA_CBUF_CON1", {{"DATA_ENTRIES", static_cast<uint64_t>(epr)}});
            bb.write_fields("CNA_CVT_CON0", {{"CVT_BYPASS", 1}});
            bb.write_fields("CNA_PAD_CON0", {{"PAD_TOP", static_cast<uint64_t>(pad_top)}, {"PAD_LEFT", static_cast<uint64_t>(op.pad_left)}});
            bb.write("CNA_PAD_CON1", static_cast<uint32_t>(op.in_zp));
            bb.write_addr("CNA_FEATURE_DATA_ADDR", feat);
            bb.write_fields("CNA_DMA_CON0", {{"DATA_BURST_LEN", kBurstLen16}, {"WEIGHT_BURST_LEN", kBurstLen16}});
            // UNVERIFIED: strides are programmed in bytes in this model (public drivers disagree on units).
            bb.write_fields("CNA_DMA_CON1", {{"LINE_STRIDE", in.line_stride}});
            bb.write_fields("CNA_DMA_CON2", {{"SURF_STRIDE", in.surf_stride}});
            bb.write_fields("CNA_FC_DATA_SIZE0", {{"DMA_WIDTH", static_cast<uint64_t>(in.w)}, {"DMA_HEIGHT", static_cast<uint64_t>(ih)}});
            bb.write_fields("CNA_FC_DATA_SIZE1", {{"DMA_CHANNEL", static_cast<uint64_t>(cin_pad)}});
            bb.write_addr("CNA_DCOMP_ADDR0", waddr);
            // CORE
            bb.write_fields("CORE_MISC_CFG", {{"PROC_PRECISION", 0}, {"QD_EN", 1}, {"DW_EN", op.depthwise ? 1u : 0u}});
            bb.write_fields("CORE_DATAOUT_SIZE_0", {{"DATAOUT_WIDTH", u_ow - 1}, {"DATAOUT_HEIGHT", u_oh - 1}});
            bb.write_fields("CORE_DATAOUT_SIZE_1", {{"DATAOUT_CHANNEL", static_cast<uint64_t>(kn - 1)}});
            bb.write("CORE_CLIP_TRUNCATE", 0);
            // DPU: BS (bias add, per-channel mantissa, ReLU), BN (per-channel power of two), EW (Clip), OUT_CVT.
            bb.write_fields("DPU_FEATURE_MODE_CFG", {{"BURST_LEN", kBurstLen16}, {"OUTPUT_MODE", kDpuOutputToMemory}});
            bb.write_fields("DPU_DATA_FORMAT", {{"PROC_PRECISION", 0}, {"IN_PRECISION", 0}, {"OUT_PRECISION", 0}});
            bb.write_addr("DPU_DST_BASE_ADDR", dst);
            bb.write_fields("DPU_DST_SURF_STRIDE", {{"DST_SURF_STRIDE", out.surf_stride >> 4}});
            bb.write_fields("DPU_DATA_CUBE_WIDTH", {{"WIDTH", u_ow - 1}});
            bb.write_fields("DPU_DATA_CUBE_HEIGHT", {{"HEIGHT", u_oh - 1}});
            bb.write_fields("DPU_DATA_CUBE_CHANNEL", {{"CHANNEL", static_cast<uint64_t>(kn - 1)},
                                                      {"ORIG_CHANNEL", static_cast<uint64_t>(kn - 1)}});
            bb.write_fields("DPU_BS_CFG", {{"BS_BYPASS", 0}, {"BS_ALU_BYPASS", 0}, {"BS_ALU_ALGO", 2}, {"BS_ALU_SRC", 1},
                                           {"BS_MUL_BYPASS", 0}, {"BS_MUL_PRELU", 0},
                                           {"BS_RELU_BYPASS", op.act == Act::Relu ? 0u : 1u}, {"BS_RELUX_EN", 0}});
            bb.write("DPU_BS_ALU_CFG", 0);
            bb.write_fields("DPU_BS_MUL_CFG", {{"BS_MUL_SRC", 1}, {"BS_MUL_SHIFT_VALUE", static_cast<uint64_t>(rq.s1)},
                                               {"BS_MUL_OPERAND", 0}});
            bb.write("DPU_BS_RELUX_CMP_VALUE", 0);
            bb.write_fields("DPU_BN_CFG", {{"BN_BYPASS", 0}, {"BN_ALU_BYPASS", 1}, {"BN_MUL_BYPASS", 0}, {"BN_MUL_PRELU", 0},
                                           {"BN_RELU_BYPASS", 1}, {"BN_RELUX_EN", 0}});
            bb.write_fields("DPU_BN_MUL_CFG", {{"BN_MUL_SRC", 1}, {"BN_MUL_SHIFT_VALUE", static_cast<uint64_t>(rq.s2)},
                                               {"BN_MUL_OPERAND", 0}});
            bb.write("DPU_BN_ALU_CFG", 0);
            bb.write("DPU_BN_RELUX_CMP_VALUE", 0);
            int32_t cvt_offset = op.out_zp;
            if (op.act == Act::Clip) {
                // q = clamp(round(v / 2^S3) + zp, lo, hi) = round(clamp(v + A, 0, (hi - lo) 2^S3) / 2^S3) + lo,
                // A = (zp - lo) 2^S3: the bounds are multiples of 2^S3, so clamp and rounding commute.
                const int64_t scale = int64_t{1} << rq.s3;
                bb.write_fields("DPU_EW_CFG", {{"EW_BYPASS", 0}, {"EW_OP_BYPASS", 0}, {"EW_OP_TYPE", 0}, {"EW_OP_SRC", 0},
                                               {"EW_ALU_ALGO", 2}, {"EW_LUT_BYPASS", 1}, {"EW_OP_CVT_BYPASS", 1},
                                               {"EW_RELU_BYPASS", 0}, {"EW_RELUX_EN", 1}, {"EW_MUL_PRELU", 0}});
                bb.write("DPU_EW_OP_VALUE_0", static_cast<uint32_t>(static_cast<int32_t>((op.out_zp - clip_lo) * scale)));
                bb.write("DPU_EW_RELUX_CMP_VALUE", static_cast<uint32_t>((clip_hi - clip_lo) * scale));
                cvt_offset = clip_lo;
            } else {
                bb.write_fields("DPU_EW_CFG", {{"EW_BYPASS", 1}, {"EW_OP_BYPASS", 1}, {"EW_LUT_BYPASS", 1},
                                               {"EW_OP_CVT_BYPASS", 1}, {"EW_RELU_BYPASS", 1}});
            }
            bb.write("DPU_OUT_CVT_OFFSET", static_cast<uint32_t>(cvt_offset));
            bb.write_fields("DPU_OUT_CVT_SCALE", {{"OUT_CVT_SCALE", 1}});
            bb.write_fields("DPU_OUT_CVT_SHIFT", {{"OUT_CVT_SHIFT", static_cast<uint64_t>(rq.s3)}});
            // DPU_RDMA: BS operands (bias then mantissas), BN operands.
            bb.write_fields("DPU_RDMA_RDMA_DATA_CUBE_WIDTH", {{"WIDTH", u_ow - 1}});
            bb.write_fields("DPU_RDMA_RDMA_DATA_CUBE_HEIGHT", {{"HEIGHT", u_oh - 1}});
            bb.write_fields("DPU_RDMA_RDMA_DATA_CUBE_CHANNEL", {{"CHANNEL", static_cast<uint64_t>(kn - 1)}});
            // UNVERIFIED: DATA_USE 3 = ALU and MUL operands (the value the block tests use).
            bb.write_fields("DPU_RDMA_RDMA_BRDMA_CFG", {{"BRDMA_DATA_USE", 3}});
            bb.write_addr("DPU_RDMA_RDMA_BS_BASE_ADDR", bs_off[static_cast<size_t>(g)]);
            bb.write_fields("DPU_RDMA_RDMA_NRDMA_CFG", {{"NRDMA_DATA_USE", 2}});
            bb.write_addr("DPU_RDMA_RDMA_BN_BASE_ADDR", bn_off[static_cast<size_t>(g)]);
            bb.write_fields("DPU_RDMA_RDMA_ERDMA_CFG", {{"ERDMA_DISABLE", 1}});
            bb.write_fields("DPU_RDMA_RDMA_FEATURE_MODE_CFG", {{"BURST_LEN", kBurstLen16}, {"MRDMA_DISABLE", 1}});

            NpuTask meta;
            meta.enable_mask = hw::rknpu::kConvOpEnableMask;
            meta.int_mask = 0x300;
            meta.core = cores[static_cast<size_t>(core_slot)];
            meta.what = fmt::format("rows {}-{}/{}, k {}-{}/{}", y0, y1 - 1, p.out_h, k0, k1 - 1, op.out_c);
            meta.macs = static_cast<uint64_t>(ow) * oh * kn * (op.depthwise ? 1 : op.in_c) * taps;
            meta.out_window = {k0, k1, y0, y1, 0, ow};
            meta.in_window = {ch0, op.depthwise ? k1 : op.in_c, r0, r1, 0, in.w};
            meta.cbuf_data_banks = p.data_banks;
            meta.cbuf_weight_banks = p.weight_banks;
            tasks.push_back(bb.finish(meta));
        }
    } catch (const regcmd::EmitError& e) {
        fail(op, e.what());  // a value wider than its register field
    }
    return tasks;
}

}  // namespace drv::rknpu
