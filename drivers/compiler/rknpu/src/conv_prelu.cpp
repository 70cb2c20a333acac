// SPDX-License-Identifier: MIT
// LeakyRelu / PRelu in the int8 conv's EW stage (conv_prelu.h).
//
// The conv lowering leaves v = y * 2^S3 before the output convert (y: the requantized output in
// LSB, relative to the zero point; lower_conv.cpp). Here, for v < 0 only, the EW stage computes
// round(v * M / 2^T) with M = round(a * 2^T) (EW_TRUNCATE = T), then the convert shifts by S3 and
// adds the zero point as before. The slope error |a 2^T - M| <= 1/2 is at most 2^-(T+1) relative,
// and T is as large as the int16 operand allows (T = 18 for a = 0.1: 2^-19, ~0.002 LSB at the
// largest |a y| = 128); the inner rounding sits S3 bits below the output LSB. So the result
// differs from onnxruntime's float LeakyRelu + QuantizeLinear only at rounding ties of the
// output convert (round half up against round half to even), as the plain conv does.
#include "conv_prelu.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "dpu_only.h"
#include "hw/regcmd.h"
#include "hw/rknpu_regs.h"

namespace drv::rknpu::conv_detail {

namespace {
constexpr double kMulMax = 32767;  // EW operands: int16 (ERDMA_DATA_SIZE 2; the register value kept alike)
constexpr int kMaxT = 30;          // EW_TRUNCATE: v * M stays far inside the model's 64-bit product
/// ERDMA_DATA_SIZE / EDATA_SIZE 2 = 16-bit, ERDMA_DATA_MODE / EW_DATA_MODE 0 = per channel (TRM codes, §10).
constexpr uint32_t kSixteenBit = 2, kPerChannel = 0;
constexpr uint64_t kSurfBytes = 16;  // RDMA_EW_SURF_STRIDE unit: one 1x1 surface per 16 bytes

[[noreturn]] void fail_op(const ConvOp& op, const std::string& what) {
    throw std::invalid_argument(fmt::format("conv '{}': {}", op.name, what));
}
}  // namespace

int prelu_max_s3(const ConvOp& op, int s3) {
    if (op.act != Act::Prelu) return s3;
    double least = 0;
    for (float a : op.prelu)
        if (a != 0.f) least = least == 0 ? std::fabs(a) : std::min(least, static_cast<double>(std::fabs(a)));
    if (least == 0) return s3;  // slopes 0: negative values become 0 whatever their size
    return std::min(s3, static_cast<int>(std::floor(22.0 + std::log2(least))));
}

PreluPlan plan_prelu(const ConvOp& op) {
    if (op.prelu.size() != 1 && op.prelu.size() != static_cast<size_t>(op.out_c))
        fail_op(op, fmt::format("{} PRelu slopes for {} output channels", op.prelu.size(), op.out_c));
    double amax = 0;
    for (float a : op.prelu) {
        if (!std::isfinite(a)) fail_op(op, "PRelu slope is not finite");
        amax = std::max(amax, static_cast<double>(std::fabs(a)));
    }
    PreluPlan pr;
    pr.shift = kMaxT;
    while (pr.shift > 0 && std::nearbyint(amax * std::ldexp(1.0, pr.shift)) > kMulMax) --pr.shift;
    if (std::nearbyint(amax * std::ldexp(1.0, pr.shift)) > kMulMax)
        fail_op(op, fmt::format("PRelu slope {} exceeds the EW multiplier's int16 range", amax));
    for (float a : op.prelu) pr.mul.push_back(static_cast<int16_t>(std::nearbyint(a * std::ldexp(1.0, pr.shift))));
    bool uniform = true;
    for (int16_t m : pr.mul) uniform = uniform && m == pr.mul[0];
    if (uniform) pr.mul.resize(1);  // equal slopes: the register operand
    return pr;
}

std::vector<uint64_t> place_prelu(const ConvOp& op, const PreluPlan& pr, int groups, int kg, int atom,
                                  ArenaBuilder& arena) {
    std::vector<uint64_t> addr;
    if (!pr.per_channel()) return addr;
    const int per_surf = std::max(1, atom / 2);
    for (int g = 0; g < groups; ++g) {
        const int k0 = g * kg, k1 = std::min(op.out_c, k0 + kg);
        const uint64_t bytes = static_cast<uint64_t>((k1 - k0 + per_surf - 1) / per_surf) * kSurfBytes;
        if (arena.placeholders()) {
            addr.push_back(arena.add_placeholder(bytes));
            continue;
        }
        std::vector<uint8_t> img(bytes, 0);
        for (int k = k0; k < k1; ++k) {
            const int j = k - k0;
            const size_t at = static_cast<size_t>(j / per_surf) * kSurfBytes + static_cast<size_t>(j % per_surf) * 2;
            const int16_t m = pr.mul[static_cast<size_t>(k)];
            std::memcpy(img.data() + at, &m, 2);
        }
        addr.push_back(arena.add_init(img));
    }
    return addr;
}

void emit_prelu_ew(BodyBuilder& bb, const PreluPlan& pr, uint64_t operand_addr) {
    const bool mem = pr.per_channel();
    bb.write_fields("DPU_EW_CFG", {{"EW_BYPASS", 0},
                                   {"EW_OP_BYPASS", 0},
                                   {"EW_OP_TYPE", 1},
                                   {"EW_MUL_PRELU", 1},
                                   {"EW_OP_SRC", mem ? 1u : 0u},
                                   {"EW_DATA_MODE", kPerChannel},
                                   {"EDATA_SIZE", kSixteenBit},
                                   {"EW_LUT_BYPASS", 1},
                                   {"EW_OP_CVT_BYPASS", 1},
                                   {"EW_RELU_BYPASS", 1},
                                   {"EW_RELUX_EN", 0}});
    bb.write("DPU_EW_OP_VALUE_0", mem ? 0u : static_cast<uint32_t>(static_cast<int32_t>(pr.mul[0])));
    bb.write_fields("DPU_EW_CVT_SCALE_VALUE",
                    {{"EW_OP_CVT_SCALE", 1}, {"EW_OP_CVT_SHIFT", 0}, {"EW_TRUNCATE", static_cast<uint64_t>(pr.shift)}});
    if (!mem) {
        bb.write_fields("DPU_RDMA_RDMA_ERDMA_CFG", {{"ERDMA_DISABLE", 1}});
        return;
    }
    bb.write_fields("DPU_RDMA_RDMA_ERDMA_CFG",
                    {{"ERDMA_DISABLE", 0}, {"ERDMA_DATA_SIZE", kSixteenBit}, {"ERDMA_DATA_MODE", kPerChannel}});
    bb.write_addr("DPU_RDMA_RDMA_EW_BASE_ADDR", operand_addr);
    bb.write_fields("DPU_RDMA_RDMA_EW_SURF_STRIDE",
                    {{"EW_SURF_STRIDE", kSurfBytes / hw::rknpu::DPU_RDMA_RDMA_EW_SURF_STRIDE::EW_SURF_STRIDE.unit}});
}

}  // namespace drv::rknpu::conv_detail

namespace drv::rknpu {

namespace {

namespace en = hw::rknpu::enums;

/// One DPU-only task: `slopes` for the channels of `in` (a channel group or the whole tensor).
TaskBody prelu_task(const std::string& name, const DeviceTensor& in, const DeviceTensor& out,
                    const std::vector<float>& slopes, ArenaBuilder& arena, const hw::SocProfile& soc, int core) {
    ConvOp op;  // the slope plan and operand image of the fused form, for these channels
    op.name = name;
    op.out_c = in.c;
    op.act = Act::Prelu;
    op.prelu = slopes;
    conv_detail::PreluPlan pr = conv_detail::plan_prelu(op);
    if (!pr.per_channel()) pr.mul.assign(static_cast<size_t>(in.c), pr.mul[0]);  // the operand image all the same
    const std::vector<uint64_t> addr = conv_detail::place_prelu(op, pr, 1, in.c, soc.npu.c2_int8.value, arena);
    const double r = static_cast<double>(in.scale) / out.scale;
    if (!(r > 0) || !std::isfinite(r)) throw std::invalid_argument(fmt::format("'{}': scale ratio {} cannot be requantized", name, r));
    int t = 40;  // |x - zp| * M <= 255 * 32767 stays far inside int32
    while (t > 0 && std::nearbyint(r * std::ldexp(1.0, t)) > conv_detail::kMulMax) --t;
    const int64_t m = static_cast<int64_t>(std::nearbyint(r * std::ldexp(1.0, t)));
    if (m < 1 || m > static_cast<int64_t>(conv_detail::kMulMax)) throw std::invalid_argument(fmt::format("'{}': scale ratio {} out of range", name, r));
    BodyBuilder bb;
    dpu_only::emit_common(bb, in, out);
    bb.write_fields("DPU_BS_CFG", {{"BS_BYPASS", 0},
                                   {"BS_ALU_BYPASS", 0},
                                   {"BS_ALU_ALGO", en::AluAlgo::ADD},
                                   {"BS_ALU_SRC", 0},
                                   {"BS_MUL_BYPASS", 0},
                                   {"BS_MUL_PRELU", 0},
                                   {"BS_RELU_BYPASS", 1}});
    bb.write("DPU_BS_ALU_CFG", static_cast<uint32_t>(-in.zp));
    bb.write_fields("DPU_BS_MUL_CFG", {{"BS_MUL_SRC", 0}, {"BS_MUL_OPERAND", static_cast<uint64_t>(m)}, {"BS_MUL_SHIFT_VALUE", 0}});
    conv_detail::emit_prelu_ew(bb, pr, addr.at(0));
    bb.write("DPU_OUT_CVT_OFFSET", static_cast<uint32_t>(out.zp));
    bb.write_fields("DPU_OUT_CVT_SCALE", {{"OUT_CVT_SCALE", 1}});
    bb.write_fields("DPU_OUT_CVT_SHIFT", {{"OUT_CVT_SHIFT", static_cast<uint64_t>(t)}});
    return bb.finish(dpu_only::meta(fmt::format("prelu {}x{}x{}", out.c, out.h, out.w), out, core));
}

}  // namespace

std::vector<TaskBody> lower_prelu_op(const std::string& name, const DeviceTensor& in, const DeviceTensor& out,
                                     const std::vector<float>& slopes, ArenaBuilder& arena, const hw::SocProfile& soc,
                                     int core) {
    dpu_only::check(name, in, soc);
    dpu_only::check(name, out, soc);
    if (slopes.size() != static_cast<size_t>(in.c))
        throw std::invalid_argument(fmt::format("'{}': {} slopes for {} channels", name, slopes.size(), in.c));
    // 8-byte-atom SoCs whose surface stride the MRDMA cannot express: flat views (channels kept,
    // each surface one row) or one C1 surface per task, with that surface's slopes.
    if (auto split = dpu_only::split_unary(name, in, out, [&](const DeviceTensor& a, const DeviceTensor& b) {
            const size_t c0 = a.c == in.c ? 0 : static_cast<size_t>((a.offset - in.offset) / in.surf_stride * in.c2);
            const std::vector<float> part(slopes.begin() + static_cast<std::ptrdiff_t>(c0),
                                          slopes.begin() + static_cast<std::ptrdiff_t>(c0) + a.c);
            return std::vector<TaskBody>{prelu_task(name, a, b, part, arena, soc, core)};
        }))
        return *split;
    return {prelu_task(name, in, out, slopes, arena, soc, core)};
}

}  // namespace drv::rknpu
