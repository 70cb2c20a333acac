// SPDX-License-Identifier: MIT
// DPU-only lowerings (MRDMA input, no CNA/CORE): QLinearAdd (ERDMA second input), and the
// per-channel affine map used for DQ -> BatchNormalization -> Q and for requantizing copies into
// a concat buffer.
//
// Fixed point: both paths scale their inputs by integer multipliers M = round(r * 2^T) (16-bit
// register fields) and the output convert shifts by T with rounding. The absolute error of one
// term is |x - zp| * 0.5 / 2^T output LSB (|x - zp| <= 255), so T is taken as large as the
// multiplier fields allow: for ratios near 1 the error is about 0.01 LSB and results agree with
// onnxruntime's float requantization except at rounding ties. QLinearAdd also puts a searched
// 15-bit common factor into the output convert's scale (plan_add_scales): ~3e-5 LSB per term.
#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <stdexcept>

#include "compiler/rknpu/lower.h"
#include "dpu_only.h"
#include "hw/rknpu_regs.h"
#include "numerics/requant.h"

namespace drv::rknpu {

namespace {

namespace en = hw::rknpu::enums;
/// ERDMA_DATA_SIZE / EDATA_SIZE 8-bit elements and ERDMA_DATA_MODE / EW_DATA_MODE per pixel (TRM
/// codes; Mesa's fused add programs 1 / 1, docs/rknpu-register-semantics.md §10).
constexpr uint32_t kEightBit = 1;
constexpr uint32_t kPerPixel = 1;
/// ERDMA_DATA_MODE / EW_DATA_MODE 0: one operand per channel (TRM; the model's UNVERIFIED layout: a
/// 1x1 x C cube), the [1,C,1,1] broadcast of Add/Mul (squeeze-excite).
constexpr uint32_t kPerChannel = 0;

/// b is a [1,C,1,1] operand broadcast over out's pixels.
bool per_channel(const DeviceTensor& b, const DeviceTensor& out) {
    return b.c == out.c && b.h == 1 && b.w == 1 && static_cast<uint64_t>(out.h) * static_cast<uint64_t>(out.w) > 1;
}
constexpr int64_t kMulMax = 32767;  // BS/BN_MUL_OPERAND is int16; EW_OP_CVT_SCALE kept in the same range
constexpr int kMaxShift = 40;

void check_tensor(const std::string& name, const DeviceTensor& t, const hw::SocProfile& soc) {
    if (t.c2 != soc.npu.c2_int8.value)
        throw std::invalid_argument(fmt::format("'{}': tensor '{}' has C2 {} but the SoC's int8 C2 is {}", name, t.name,
                                                t.c2, soc.npu.c2_int8.value));
    if (t.line_stride != static_cast<uint32_t>(t.w * t.c2))
        throw std::invalid_argument(fmt::format("'{}': tensor '{}' rows are not compact", name, t.name));
    if (t.w > 8192 || t.h > 8192 || t.c > 8192)
        throw std::invalid_argument(
            fmt::format("'{}': {}x{}x{} exceeds the 13-bit DPU cube fields", name, t.c, t.h, t.w));
}

/// Largest T with max_ratio * 2^T <= kMulMax (and max_add * 2^T inside int32).
int pick_shift(double max_ratio, double max_add, const std::string& name) {
    if (!(max_ratio > 0) || !std::isfinite(max_ratio))
        throw std::invalid_argument(fmt::format("'{}': scale ratio {} cannot be requantized", name, max_ratio));
    int t = kMaxShift;
    while (t >= 0 &&
           (std::llround(max_ratio * std::ldexp(1.0, t)) > kMulMax || std::fabs(max_add) * std::ldexp(1.0, t) > 1.0e9))
        --t;
    if (t < 0)
        throw std::invalid_argument(
            fmt::format("'{}': scale ratio {} exceeds the 16-bit DPU multiplier range", name, max_ratio));
    return t;
}

/// QLinearAdd's two ratios ra = sa/sc, rb = sb/sc as 15-bit multipliers Ma, Mb (BS MUL, EW
/// convert) sharing the output convert's 15-bit scale K: r ~ M K / 2^T. One multiplier per ratio
/// (K = 1) leaves |x - zp| * 0.5 / 2^T ~ 4e-3 output LSB per term, which moves ~0.1% of the
/// outputs of a zoo net's Add across a rounding boundary relative to onnxruntime's float kernel;
/// K is searched over [2^14, 2^15) for the least of the two absolute errors (~2^-7 of one M step,
/// ~3e-5 LSB). The sum (a - za) Ma + (b - zb) Mb < 2^24 stays inside the 32-bit stages; the
/// output convert forms the product with K (< 2^39) before its shift.
struct AddScales {
    int64_t ma = 0, mb = 0, k = 1;
    int t = 0;
};

AddScales plan_add_scales(double ra, double rb, const std::string& name) {
    const double max_r = std::max(ra, rb);
    if (!(max_r > 0) || !std::isfinite(max_r) || !(std::min(ra, rb) >= 0))
        throw std::invalid_argument(fmt::format("'{}': scale ratios {} / {} cannot be requantized", name, ra, rb));
    AddScales best;
    // The larger ratio's M stays <= 32767 for every K >= 2^14.
    best.t = static_cast<int>(std::floor(std::log2(kMulMax * 16384.0 / max_r)));
    if (best.t > 63) best.t = 63;
    if (best.t < 0)
        throw std::invalid_argument(fmt::format("'{}': scale ratio {} exceeds the 16-bit DPU multiplier range", name, max_r));
    const double ta = std::ldexp(ra, best.t), tb = std::ldexp(rb, best.t);
    double least = std::numeric_limits<double>::infinity();
    for (int64_t k = 16384; k <= kMulMax; ++k) {
        const int64_t ma = std::llround(ta / static_cast<double>(k)), mb = std::llround(tb / static_cast<double>(k));
        if (ma > kMulMax || mb > kMulMax) continue;
        const double err = std::max(std::fabs(static_cast<double>(ma * k) - ta), std::fabs(static_cast<double>(mb * k) - tb));
        if (err < least) least = err, best.ma = ma, best.mb = mb, best.k = k;
    }
    return best;
}

/// The common DPU-only registers: cube, MRDMA input, output, stages bypassed.
void emit_dpu_common(BodyBuilder& b, const DeviceTensor& in, const DeviceTensor& out) {
    const uint64_t w = static_cast<uint64_t>(out.w), h = static_cast<uint64_t>(out.h), c = static_cast<uint64_t>(out.c);
    // Flying mode 1: the main input comes from memory through the MRDMA (TRM; the vendor's DPU-only
    // tasks, docs/rknpu-register-semantics.md §10).
    b.write_fields("DPU_FEATURE_MODE_CFG",
                   {{"BURST_LEN", en::BurstLen::BURST_16}, {"OUTPUT_MODE", en::DpuOutputMode::TO_MEMORY}, {"FLYING_MODE", 1}});
    b.write_fields("DPU_DATA_FORMAT", {{"PROC_PRECISION", en::Precision::INT8},
                                       {"IN_PRECISION", en::Precision::INT8},
                                       {"OUT_PRECISION", en::Precision::INT8}});
    b.write_addr("DPU_DST_BASE_ADDR", out.offset);
    b.write_fields("DPU_DST_SURF_STRIDE",
                   {{"DST_SURF_STRIDE", out.surf_stride / hw::rknpu::DPU_DST_SURF_STRIDE::DST_SURF_STRIDE.unit}});
    b.write_fields("DPU_DATA_CUBE_WIDTH", {{"WIDTH", w - 1}});
    b.write_fields("DPU_DATA_CUBE_HEIGHT", {{"HEIGHT", h - 1}});
    b.write_fields("DPU_DATA_CUBE_NOTCH_ADDR", {{"NOTCH_ADDR_0", 0}, {"NOTCH_ADDR_1", 0}});  // rows compact (as Mesa writes it); a data-movement task may have left a notch
    b.write_fields("DPU_DATA_CUBE_CHANNEL", {{"CHANNEL", c - 1}, {"ORIG_CHANNEL", c - 1}});
    b.write_fields("DPU_BS_CFG", {{"BS_BYPASS", 1}, {"BS_ALU_BYPASS", 1}, {"BS_MUL_BYPASS", 1}, {"BS_RELU_BYPASS", 1}});
    b.write_fields("DPU_BN_CFG", {{"BN_BYPASS", 1}, {"BN_ALU_BYPASS", 1}, {"BN_MUL_BYPASS", 1}, {"BN_RELU_BYPASS", 1}});
    b.write_fields(
        "DPU_EW_CFG",
        {{"EW_BYPASS", 1}, {"EW_OP_BYPASS", 1}, {"EW_LUT_BYPASS", 1}, {"EW_OP_CVT_BYPASS", 1}, {"EW_RELU_BYPASS", 1}});
    b.write_fields("DPU_RDMA_RDMA_DATA_CUBE_WIDTH", {{"WIDTH", w - 1}});
    b.write_fields("DPU_RDMA_RDMA_DATA_CUBE_HEIGHT", {{"HEIGHT", h - 1}});
    b.write_fields("DPU_RDMA_RDMA_DATA_CUBE_CHANNEL", {{"CHANNEL", c - 1}});
    b.write_addr("DPU_RDMA_RDMA_SRC_BASE_ADDR", in.offset);
    // MRDMA surfaces: compact surface plus the notch (the gap to the next surface).
    const uint64_t surf = w * h * static_cast<uint64_t>(in.c2);
    b.write_fields("DPU_RDMA_RDMA_SURF_NOTCH", {{"SURF_NOTCH_ADDR", (in.surf_stride - surf) >> 4}});
    b.write_fields("DPU_RDMA_RDMA_ERDMA_CFG", {{"ERDMA_DISABLE", 1}});
    b.write_fields("DPU_RDMA_RDMA_FEATURE_MODE_CFG", {{"BURST_LEN", en::BurstLen::BURST_16},
                                                      {"FLYING_MODE", 1},
                                                      {"MRDMA_DISABLE", 0},
                                                      {"IN_PRECISION", en::Precision::INT8},
                                                      {"PROC_PRECISION", en::Precision::INT8}});
}

NpuTask dpu_meta(const std::string& what, const DeviceTensor& out, int core) {
    NpuTask m;
    m.enable_mask = kEnableDpu | kEnableDpuRdma;
    m.int_mask = 0x300;
    m.core = core;
    m.what = what;
    m.out_window = {0, out.c, 0, out.h, 0, out.w};
    m.in_window = m.out_window;
    return m;
}

void same_shape(const std::string& name, const DeviceTensor& a, const DeviceTensor& out) {
    if (a.c != out.c || a.h != out.h || a.w != out.w)
        throw std::invalid_argument(
            fmt::format("'{}': input '{}' {}x{}x{} differs from the output {}x{}x{} (broadcast is "
                        "not lowered)",
                        name, a.name, a.c, a.h, a.w, out.c, out.h, out.w));
}

/// Channels [c0, c0 + c) of a tensor (c0 a multiple of C2): same strides, offset moved.
DeviceTensor channels(const DeviceTensor& t, int c0, int c) {
    DeviceTensor s = t;
    s.offset = t.offset + static_cast<uint64_t>(c0 / t.c2) * t.surf_stride;
    s.c = c;
    return s;
}

/// Channel groups one task each: the whole tensor, or one C1 surface per task when the MRDMA
/// (surface = w*h*atom + a notch in 16-byte units) cannot express the input's surface stride.
std::vector<std::pair<int, int>> channel_groups(const DeviceTensor& in) {
    const uint64_t compact = static_cast<uint64_t>(in.w) * static_cast<uint64_t>(in.h) * static_cast<uint64_t>(in.c2);
    if (in.c <= in.c2 || (in.surf_stride - compact) % 16 == 0) return {{0, in.c}};
    std::vector<std::pair<int, int>> g;
    for (int c0 = 0; c0 < in.c; c0 += in.c2) g.push_back({c0, std::min(in.c2, in.c - c0)});
    return g;
}

/// When one task per C1 surface would be needed (channel_groups) but every tensor of the op has
/// the same surface stride: the op is elementwise with per-channel operands only, so each surface
/// can be read and written whole, padding included, as a cube of surf_stride / C2 atoms by 1 row
/// (no notch). Returns the views in the order given, or nothing when a tensor does not allow it.
std::optional<std::vector<DeviceTensor>> flat_views(const std::vector<const DeviceTensor*>& ts) {
    const DeviceTensor& f = *ts.front();
    if (channel_groups(f).size() <= 1 || f.c2 <= 0 || f.surf_stride % static_cast<uint32_t>(f.c2) != 0 ||
        f.surf_stride / static_cast<uint32_t>(f.c2) > 8192)
        return std::nullopt;
    std::vector<DeviceTensor> v;
    for (const DeviceTensor* t : ts) {
        if (t->surf_stride != f.surf_stride || t->c2 != f.c2 || t->c != f.c) return std::nullopt;
        DeviceTensor x = *t;
        x.w = static_cast<int>(f.surf_stride / static_cast<uint32_t>(f.c2));
        x.h = 1;
        x.line_stride = f.surf_stride;
        v.push_back(x);
    }
    return v;
}

/// The task windows of a lowering on flat views name the real tensor.
void real_windows(std::vector<TaskBody>& t, const DeviceTensor& out) {
    for (TaskBody& b : t) {
        b.meta.out_window = {0, out.c, 0, out.h, 0, out.w};
        b.meta.in_window = b.meta.out_window;
    }
}

using BinaryLowering = std::vector<TaskBody> (*)(const std::string&, const DeviceTensor&, const DeviceTensor&,
                                                 const DeviceTensor&, ArenaBuilder&, const hw::SocProfile&, int);

/// Checks shared by the two-input DPU lowerings (Add, Mul). When the input needs one task per C1
/// surface, lowers each channel group with `lower` into `split` and returns true.
bool binary_prologue(const std::string& name, const DeviceTensor& a, const DeviceTensor& b, const DeviceTensor& out,
                     ArenaBuilder& arena, const hw::SocProfile& soc, int core, BinaryLowering lower,
                     std::vector<TaskBody>& split) {
    for (const DeviceTensor* t : {&a, &b, &out}) check_tensor(name, *t, soc);
    same_shape(name, a, out);
    if (!per_channel(b, out)) same_shape(name, b, out);
    if (auto v = flat_views({&a, &b, &out})) {
        split = lower(name, (*v)[0], (*v)[1], (*v)[2], arena, soc, core);
        real_windows(split, out);
        return true;
    }
    // A per-channel operand ([1,C,1,1], the ERDMA's one value per channel) does not depend on the
    // pixels: the input and the output read as flat surfaces, the operand as it is (squeeze-excite
    // on 8-byte atoms with an odd H x W: one task instead of one per surface).
    if (per_channel(b, out))
        if (auto v = flat_views({&a, &out}); v && per_channel(b, (*v)[1])) {
            split = lower(name, (*v)[0], b, (*v)[1], arena, soc, core);
            real_windows(split, out);
            return true;
        }
    if (channel_groups(a).size() > 1) {
        for (const auto& [c0, c] : channel_groups(a)) {
            auto t = lower(name, channels(a, c0, c), channels(b, c0, c), channels(out, c0, c), arena, soc, core);
            t.front().meta.out_window.c0 = c0, t.front().meta.out_window.c1 = c0 + c;
            t.front().meta.in_window = t.front().meta.out_window;
            split.push_back(std::move(t.front()));
        }
        return true;
    }
    for (const DeviceTensor* t : {&b, &out})
        if (t->c > t->c2 && t->surf_stride % 16 != 0)
            throw std::invalid_argument(
                fmt::format("'{}': surface stride of '{}' is not 16-byte aligned", name, t->name));
    return false;
}

}  // namespace

namespace dpu_only {

void check(const std::string& name, const DeviceTensor& t, const hw::SocProfile& soc) { check_tensor(name, t, soc); }
void emit_common(BodyBuilder& b, const DeviceTensor& in, const DeviceTensor& out) { emit_dpu_common(b, in, out); }
NpuTask meta(const std::string& what, const DeviceTensor& out, int core) { return dpu_meta(what, out, core); }


std::optional<std::vector<TaskBody>> split_unary(
    const std::string& name, const DeviceTensor& in, const DeviceTensor& out,
    const std::function<std::vector<TaskBody>(const DeviceTensor&, const DeviceTensor&)>& lower) {
    same_shape(name, in, out);
    if (auto v = flat_views({&in, &out})) {
        auto t = lower((*v)[0], (*v)[1]);
        real_windows(t, out);
        return t;
    }
    if (channel_groups(in).size() > 1) {
        std::vector<TaskBody> all;
        for (const auto& [c0, c] : channel_groups(in)) {
            auto t = lower(channels(in, c0, c), channels(out, c0, c));
            t.front().meta.out_window.c0 = c0, t.front().meta.out_window.c1 = c0 + c;
            t.front().meta.in_window = t.front().meta.out_window;
            all.push_back(std::move(t.front()));
        }
        return all;
    }
    if (out.c > out.c2 && out.surf_stride % 16 != 0)
        throw std::invalid_argument(fmt::format("'{}': surface stride of '{}' is not 16-byte aligned", name, out.name));
    return std::nullopt;
}

}  // namespace dpu_only

namespace {

/// The scaled pair of Add / Sub / Max / Min: BS `(a - za) * Ma` (Ma negated for b - a), EW
/// `(b - zb) * Mb` from the ERDMA cube, combined by the EW ALU (`algo`: ADD, MAX, MIN), then `>> T`,
/// `+ zo`. Max/Min of the two terms commute with the rounding shift (both are monotonic), so
/// Max/Min are as exact as Add. The multipliers with their common output factor K as QLinearAdd's
/// (plan_add_scales), the ratios formed in float32 as onnxruntime's kernel forms them.
TaskBody scaled_pair(const std::string& name, const DeviceTensor& a, const DeviceTensor& b, const DeviceTensor& out,
                     int core, uint64_t algo, bool negate_a, const char* what) {
    const double ra = static_cast<double>(a.scale / out.scale), rb = static_cast<double>(b.scale / out.scale);
    const AddScales q = plan_add_scales(ra, rb, name);
    const int64_t ma = q.ma * (negate_a ? -1 : 1), mb = q.mb;
    BodyBuilder bb;
    emit_dpu_common(bb, a, out);
    // BS: (a - za) * Ma; EW: (b - zb) * Mb from the ERDMA cube, added; output: >> T, + zo.
    bb.write_fields("DPU_BS_CFG", {{"BS_BYPASS", 0},
                                   {"BS_ALU_BYPASS", 0},
                                   {"BS_ALU_ALGO", en::AluAlgo::ADD},
                                   {"BS_ALU_SRC", 0},
                                   {"BS_MUL_BYPASS", 0},
                                   {"BS_RELU_BYPASS", 1}});
    bb.write("DPU_BS_ALU_CFG", static_cast<uint32_t>(-a.zp));
    bb.write_fields("DPU_BS_MUL_CFG", {{"BS_MUL_SRC", 0},
                                       {"BS_MUL_OPERAND", static_cast<uint64_t>(static_cast<uint16_t>(ma))},
                                       {"BS_MUL_SHIFT_VALUE", 0}});
    bb.write_fields("DPU_EW_CFG", {{"EW_BYPASS", 0},
                                   {"EW_OP_BYPASS", 0},
                                   {"EW_OP_TYPE", 0},
                                   {"EW_OP_SRC", 1},
                                   {"EW_DATA_MODE", per_channel(b, out) ? kPerChannel : kPerPixel},
                                   {"EDATA_SIZE", kEightBit},
                                   {"EW_ALU_ALGO", algo},
                                   {"EW_OP_CVT_BYPASS", 0},
                                   {"EW_LUT_BYPASS", 1},
                                   {"EW_RELU_BYPASS", 1}});
    bb.write("DPU_EW_CVT_OFFSET_VALUE", static_cast<uint32_t>(-b.zp));
    bb.write_fields("DPU_EW_CVT_SCALE_VALUE", {{"EW_OP_CVT_SCALE", static_cast<uint64_t>(mb)}, {"EW_OP_CVT_SHIFT", 0}});
    bb.write_fields("DPU_RDMA_RDMA_ERDMA_CFG",
                    {{"ERDMA_DISABLE", 0},
                     {"ERDMA_DATA_SIZE", kEightBit},
                     {"ERDMA_DATA_MODE", per_channel(b, out) ? kPerChannel : kPerPixel}});
    bb.write_addr("DPU_RDMA_RDMA_EW_BASE_ADDR", b.offset);
    bb.write_fields("DPU_RDMA_RDMA_EW_SURF_STRIDE",
                    {{"EW_SURF_STRIDE", b.surf_stride / hw::rknpu::DPU_RDMA_RDMA_EW_SURF_STRIDE::EW_SURF_STRIDE.unit}});
    bb.write("DPU_OUT_CVT_OFFSET", static_cast<uint32_t>(out.zp));
    bb.write_fields("DPU_OUT_CVT_SCALE", {{"OUT_CVT_SCALE", static_cast<uint64_t>(q.k)}});
    bb.write_fields("DPU_OUT_CVT_SHIFT", {{"OUT_CVT_SHIFT", static_cast<uint64_t>(q.t)}});
    return bb.finish(dpu_meta(fmt::format("{} {}x{}x{}", what, out.c, out.h, out.w), out, core));
}

}  // namespace

std::vector<TaskBody> lower_add_op(const std::string& name, const DeviceTensor& a, const DeviceTensor& b,
                                   const DeviceTensor& out, ArenaBuilder& arena, const hw::SocProfile& soc, int core) {
    if (std::vector<TaskBody> split; binary_prologue(name, a, b, out, arena, soc, core, lower_add_op, split)) return split;
    return {scaled_pair(name, a, b, out, core, static_cast<uint64_t>(en::AluAlgo::ADD), false, "add")};
}

std::vector<TaskBody> lower_rsub_op(const std::string& name, const DeviceTensor& a, const DeviceTensor& b,
                                    const DeviceTensor& out, ArenaBuilder& arena, const hw::SocProfile& soc, int core) {
    if (std::vector<TaskBody> split; binary_prologue(name, a, b, out, arena, soc, core, lower_rsub_op, split)) return split;
    return {scaled_pair(name, a, b, out, core, static_cast<uint64_t>(en::AluAlgo::ADD), true, "sub")};
}

std::vector<TaskBody> lower_max_op(const std::string& name, const DeviceTensor& a, const DeviceTensor& b,
                                   const DeviceTensor& out, ArenaBuilder& arena, const hw::SocProfile& soc, int core) {
    if (std::vector<TaskBody> split; binary_prologue(name, a, b, out, arena, soc, core, lower_max_op, split)) return split;
    return {scaled_pair(name, a, b, out, core, static_cast<uint64_t>(en::AluAlgo::MAX), false, "max")};
}

std::vector<TaskBody> lower_min_op(const std::string& name, const DeviceTensor& a, const DeviceTensor& b,
                                   const DeviceTensor& out, ArenaBuilder& arena, const hw::SocProfile& soc, int core) {
    if (std::vector<TaskBody> split; binary_prologue(name, a, b, out, arena, soc, core, lower_min_op, split)) return split;
    return {scaled_pair(name, a, b, out, core, static_cast<uint64_t>(en::AluAlgo::MIN), false, "min")};
}

std::vector<TaskBody> lower_mul_op(const std::string& name, const DeviceTensor& a, const DeviceTensor& b,
                                   const DeviceTensor& out, ArenaBuilder& arena, const hw::SocProfile& soc, int core) {
    if (std::vector<TaskBody> split; binary_prologue(name, a, b, out, arena, soc, core, lower_mul_op, split)) return split;
    // |(a - za)(b - zb)| <= 255 * 255: the 15-bit output multiplier with its shift carries the scale.
    const num::FixedScale m = num::quantize_scale(static_cast<double>(a.scale) * b.scale / out.scale, 15, 63);
    if (m.multiplier <= 0)
        throw std::invalid_argument(fmt::format("'{}': output scale underflows the multiplier", name));
    BodyBuilder bb;
    emit_dpu_common(bb, a, out);
    bb.write_fields("DPU_BS_CFG", {{"BS_BYPASS", 0},
                                   {"BS_ALU_BYPASS", 0},
                                   {"BS_ALU_ALGO", en::AluAlgo::ADD},
                                   {"BS_ALU_SRC", 0},
                                   {"BS_MUL_BYPASS", 1},
                                   {"BS_RELU_BYPASS", 1}});
    bb.write("DPU_BS_ALU_CFG", static_cast<uint32_t>(-a.zp));
    bb.write_fields("DPU_EW_CFG", {{"EW_BYPASS", 0},
                                   {"EW_OP_BYPASS", 0},
                                   {"EW_OP_TYPE", 1},
                                   {"EW_OP_SRC", 1},
                                   {"EW_DATA_MODE", per_channel(b, out) ? kPerChannel : kPerPixel},
                                   {"EDATA_SIZE", kEightBit},
                                   {"EW_OP_CVT_BYPASS", 0},
                                   {"EW_LUT_BYPASS", 1},
                                   {"EW_RELU_BYPASS", 1}});
    bb.write("DPU_EW_CVT_OFFSET_VALUE", static_cast<uint32_t>(-b.zp));
    bb.write_fields("DPU_EW_CVT_SCALE_VALUE", {{"EW_OP_CVT_SCALE", 1}, {"EW_OP_CVT_SHIFT", 0}, {"EW_TRUNCATE", 0}});
    bb.write_fields("DPU_RDMA_RDMA_ERDMA_CFG",
                    {{"ERDMA_DISABLE", 0},
                     {"ERDMA_DATA_SIZE", kEightBit},
                     {"ERDMA_DATA_MODE", per_channel(b, out) ? kPerChannel : kPerPixel}});
    bb.write_addr("DPU_RDMA_RDMA_EW_BASE_ADDR", b.offset);
    bb.write_fields("DPU_RDMA_RDMA_EW_SURF_STRIDE",
                    {{"EW_SURF_STRIDE", b.surf_stride / hw::rknpu::DPU_RDMA_RDMA_EW_SURF_STRIDE::EW_SURF_STRIDE.unit}});
    bb.write("DPU_OUT_CVT_OFFSET", static_cast<uint32_t>(out.zp));
    bb.write_fields("DPU_OUT_CVT_SCALE", {{"OUT_CVT_SCALE", static_cast<uint64_t>(m.multiplier)}});
    bb.write_fields("DPU_OUT_CVT_SHIFT", {{"OUT_CVT_SHIFT", static_cast<uint64_t>(m.shift)}});
    return {bb.finish(dpu_meta(fmt::format("mul {}x{}x{}", out.c, out.h, out.w), out, core))};
}

std::vector<TaskBody> lower_affine_op(const std::string& name, const std::string& op, const DeviceTensor& in,
                                      const DeviceTensor& out, const std::vector<double>& mul,
                                      const std::vector<double>& add, ArenaBuilder& arena, const hw::SocProfile& soc,
                                      int core) {
    return lower_affine_op(name, op, in, out, mul, add, -128, 127, arena, soc, core);
}

std::vector<TaskBody> lower_affine_op(const std::string& name, const std::string& op, const DeviceTensor& in,
                                      const DeviceTensor& out, const std::vector<double>& mul,
                                      const std::vector<double>& add, int32_t clip_lo, int32_t clip_hi,
                                      ArenaBuilder& arena, const hw::SocProfile& soc, int core) {
    clip_lo = std::max(clip_lo, -128);
    clip_hi = std::min(clip_hi, 127);
    if (clip_lo > clip_hi) throw std::invalid_argument(fmt::format("'{}': clip range [{}, {}] is empty", name, clip_lo, clip_hi));
    check_tensor(name, in, soc);
    check_tensor(name, out, soc);
    same_shape(name, in, out);
    const size_t nc = static_cast<size_t>(out.c);
    if (mul.empty() || (mul.size() != 1 && mul.size() != nc) || (add.size() > 1 && add.size() != nc))
        throw std::invalid_argument(
            fmt::format("'{}': {} multipliers / {} offsets for {} channels", name, mul.size(), add.size(), nc));
    double max_mul = 0, max_add = 0;
    bool negative = false;
    for (double m : mul) {
        max_mul = std::max(max_mul, std::fabs(m));
        negative |= m < 0;
    }
    // A clamp: BN adds (zo - lo) more, its ReLU / ReLUX keep [0, hi - lo], the output offset is lo
    // (as the conv lowering's EW clip): clamp(round(v) + zo, lo, hi) exactly.
    const bool clamp = clip_lo > -128 || clip_hi < 127;
    const double shift_add = clamp ? static_cast<double>(out.zp - clip_lo) : 0.0;
    for (double a : add) max_add = std::max(max_add, std::fabs(a + shift_add));
    if (add.empty()) max_add = std::fabs(shift_add);
    if (auto v = flat_views({&in, &out})) {
        auto t = lower_affine_op(name, op, (*v)[0], (*v)[1], mul, add, clip_lo, clip_hi, arena, soc, core);
        real_windows(t, out);
        return t;
    }
    if (channel_groups(in).size() > 1) {
        std::vector<TaskBody> all;
        for (const auto& [c0, c] : channel_groups(in)) {
            auto part = [&, first = c0, count = c](const std::vector<double>& v) {  // clang < 16 captures no bindings
                return v.size() > 1 ? std::vector<double>(v.begin() + first, v.begin() + first + count) : v;
            };
            auto t = lower_affine_op(name, op, channels(in, c0, c), channels(out, c0, c), part(mul), part(add), clip_lo,
                                     clip_hi, arena, soc, core);
            t.front().meta.out_window.c0 = c0, t.front().meta.out_window.c1 = c0 + c;
            t.front().meta.in_window = t.front().meta.out_window;
            all.push_back(std::move(t.front()));
        }
        return all;
    }
    if (max_mul == 0) max_mul = 1;  // all-zero multipliers: any shift works
    (void)negative;
    const int t = pick_shift(max_mul, max_add, name);
    const double two_t = std::ldexp(1.0, t);
    BodyBuilder bb;
    emit_dpu_common(bb, in, out);
    const bool per_channel_mul = mul.size() > 1;
    bool any_add = clamp;
    for (double a : add) any_add |= std::llround(a * two_t) != 0;
    const auto bn_add = [&](double a) { return static_cast<int32_t>(std::llround(a * two_t) + std::llround(shift_add * two_t)); };
    // BS: (x - zx) * M (per-channel M from memory when it varies).
    bb.write_fields("DPU_BS_CFG", {{"BS_BYPASS", 0},
                                   {"BS_ALU_BYPASS", 0},
                                   {"BS_ALU_ALGO", en::AluAlgo::ADD},
                                   {"BS_ALU_SRC", 0},
                                   {"BS_MUL_BYPASS", 0},
                                   {"BS_RELU_BYPASS", 1}});
    bb.write("DPU_BS_ALU_CFG", static_cast<uint32_t>(-in.zp));
    if (per_channel_mul) {
        std::vector<uint8_t> ops(2 * nc);
        for (size_t c = 0; c < nc; ++c) {
            const auto m = static_cast<int16_t>(std::llround(mul[c] * two_t));
            std::memcpy(&ops[2 * c], &m, 2);
        }
        bb.write_fields("DPU_BS_MUL_CFG", {{"BS_MUL_SRC", 1}, {"BS_MUL_SHIFT_VALUE", 0}});
        bb.write_addr("DPU_RDMA_RDMA_BS_BASE_ADDR", arena.add_init(ops));
        bb.write_fields("DPU_RDMA_RDMA_BRDMA_CFG", {{"BRDMA_DATA_USE", 1}});
    } else {
        const auto m = static_cast<int16_t>(std::llround(mul[0] * two_t));
        bb.write_fields("DPU_BS_MUL_CFG", {{"BS_MUL_SRC", 0},
                                           {"BS_MUL_OPERAND", static_cast<uint64_t>(static_cast<uint16_t>(m))},
                                           {"BS_MUL_SHIFT_VALUE", 0}});
    }
    // BN: + add[c] * 2^T (per channel from memory, or one register value); with a clamp, its ReLU.
    if (any_add) {
        bb.write_fields("DPU_BN_CFG", {{"BN_BYPASS", 0},
                                       {"BN_ALU_BYPASS", 0},
                                       {"BN_ALU_ALGO", en::AluAlgo::ADD},
                                       {"BN_ALU_SRC", add.size() > 1 ? 1u : 0u},
                                       {"BN_MUL_BYPASS", 1},
                                       {"BN_RELU_BYPASS", clamp ? 0u : 1u},
                                       {"BN_RELUX_EN", clamp && clip_hi < 127 ? 1u : 0u}});
        if (add.size() > 1) {
            std::vector<uint8_t> ops(4 * nc);
            for (size_t c = 0; c < nc; ++c) {
                const int32_t v = bn_add(add[c]);
                std::memcpy(&ops[4 * c], &v, 4);
            }
            bb.write_addr("DPU_RDMA_RDMA_BN_BASE_ADDR", arena.add_init(ops));
            bb.write_fields("DPU_RDMA_RDMA_NRDMA_CFG", {{"NRDMA_DATA_USE", 1}});
        } else {
            bb.write("DPU_BN_ALU_CFG", static_cast<uint32_t>(bn_add(add.empty() ? 0.0 : add[0])));
        }
        if (clamp && clip_hi < 127)
            bb.write("DPU_BN_RELUX_CMP_VALUE", static_cast<uint32_t>(std::llround((clip_hi - clip_lo) * two_t)));
    }
    bb.write("DPU_OUT_CVT_OFFSET", static_cast<uint32_t>(clamp ? clip_lo : out.zp));
    bb.write_fields("DPU_OUT_CVT_SCALE", {{"OUT_CVT_SCALE", 1}});
    bb.write_fields("DPU_OUT_CVT_SHIFT", {{"OUT_CVT_SHIFT", static_cast<uint64_t>(t)}});
    return {bb.finish(dpu_meta(fmt::format("{} {}x{}x{}", op, out.c, out.h, out.w), out, core))};
}

}  // namespace drv::rknpu
