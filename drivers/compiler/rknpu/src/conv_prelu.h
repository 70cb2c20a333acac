// SPDX-License-Identifier: MIT
// LeakyRelu / PRelu fused into the int8 conv lowering (ConvOp::act == Act::Prelu, issue 15): the
// negative slope is applied in the DPU's EW stage by its PReLU multiply (EW_OP_TYPE MUL with
// EW_MUL_PRELU: only values below 0 are multiplied, docs/rknpu-register-semantics.md §10) on the
// requantized value before the output convert's shift, so the activation sees the conv's exact
// output (no intermediate quantization, as onnxruntime's DQ -> Conv -> LeakyRelu -> Q computes it
// in float). One slope: EW_OP_VALUE_0 (register operand); one per channel: an int16 operand per
// channel read by the ERDMA (ERDMA_DATA_MODE 0, assumption A-ERDMA).
#pragma once

#include <cstdint>
#include <vector>

#include "compiler/rknpu/lower.h"

namespace drv::rknpu::conv_detail {

/// The EW multiplier: slope ~ mul / 2^shift, |mul| <= 32767 (int16 operands).
struct PreluPlan {
    int shift = 0;
    std::vector<int16_t> mul;  ///< one value (per tensor) or out_c values
    bool per_channel() const { return mul.size() > 1; }
};

/// Largest output-convert shift S3 for the op: with a slope a, the requantized value y of an
/// output that still lands inside int8 reaches 256 / |a| LSB, and the BS/BN intermediates carry
/// y * 2^(S3 + 1); S3 <= 22 + log2|a| keeps them inside int32 (beyond, they saturate where the
/// output saturates too). `s3` unchanged for other activations.
int prelu_max_s3(const ConvOp& op, int s3);

/// Multipliers for ConvOp::prelu (the op's act must be Act::Prelu); throws naming the op when a
/// slope count does not match the output channels.
PreluPlan plan_prelu(const ConvOp& op);

/// Per kernel group [g * kg, min(out_c, (g + 1) * kg)): the arena offset of its per-channel
/// operand image (C1 surfaces of 16 bytes, `atom / 2` int16 values each, the A-ERDMA image of a
/// 1x1 x C cube); empty for one slope. Placeholders in a timing-only compile.
std::vector<uint64_t> place_prelu(const ConvOp& op, const PreluPlan& pr, int groups, int kg, int atom,
                                  ArenaBuilder& arena);

/// The EW stage and the ERDMA of one task (operand_addr: the group's image; unused for one slope).
void emit_prelu_ew(BodyBuilder& bb, const PreluPlan& pr, uint64_t operand_addr);

}  // namespace drv::rknpu::conv_detail

namespace drv::rknpu {

/// Standalone PRelu with one slope per channel (DequantizeLinear -> PRelu -> QuantizeLinear, int8):
/// a DPU-only task, BS (x - in.zp) * M with M = round(in.scale / out.scale * 2^T), the EW PReLU
/// multiply by the channel's slope (as the fused form), output convert >> T + out.zp. `slopes` has
/// in.c values. Throws std::invalid_argument naming the op when a value does not fit its field.
std::vector<TaskBody> lower_prelu_op(const std::string& name, const DeviceTensor& in, const DeviceTensor& out,
                                     const std::vector<float>& slopes, ArenaBuilder& arena, const hw::SocProfile& soc,
                                     int core);

}  // namespace drv::rknpu
