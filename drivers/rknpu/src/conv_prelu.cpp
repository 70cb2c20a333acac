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
