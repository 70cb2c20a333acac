// SPDX-License-Identifier: MIT
// Internal: the DPU-only task scaffolding of lower_eltwise.cpp (MRDMA input, stages bypassed,
// output to memory) for the other DPU-only lowerings (lower_act.cpp).
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "compiler/rknpu/lower.h"

namespace drv::rknpu::dpu_only {

/// C2, compact rows and the 13-bit cube fields (throws std::invalid_argument naming the op).
void check(const std::string& name, const DeviceTensor& t, const hw::SocProfile& soc);
/// Cube, MRDMA input `in`, output `out`, BS/BN/EW bypassed (the caller then programs its stages).
void emit_common(BodyBuilder& b, const DeviceTensor& in, const DeviceTensor& out);
/// Task metadata of a DPU-only task writing all of `out`.
NpuTask meta(const std::string& what, const DeviceTensor& out, int core);
/// EW LUT registers: the LO table (257 entries through the access port) holds table[i] for the
/// EW value start + i (entry 256 repeats 255), index step 1, flat beyond both ends (slopes 0:
/// the ends hold, which is int8 saturation), LO selected everywhere; 256 entries expected.
void emit_lut(BodyBuilder& b, const std::vector<int8_t>& table, int32_t start);
/// The float path's EW LUT registers for an fp16 table (fp16_lut.cpp): the LO table written, LO
/// preferred in every case (LE_START = LE_END = 0.0 covers x = 0 only, where LO covers it too).
void emit_lut_f16(BodyBuilder& b, const Fp16Lut& t);
/// For an element-wise op of one input with no per-channel operands: when the MRDMA cannot read
/// the input in one task (8-byte atoms with an inexpressible surface stride), the tasks `lower`
/// gives for flat views of both tensors or one C1 surface at a time; nothing when one task works.
std::optional<std::vector<TaskBody>> split_unary(
    const std::string& name, const DeviceTensor& in, const DeviceTensor& out,
    const std::function<std::vector<TaskBody>(const DeviceTensor&, const DeviceTensor&)>& lower);

}  // namespace drv::rknpu::dpu_only
