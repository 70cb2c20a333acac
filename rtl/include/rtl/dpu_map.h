// SPDX-License-Identifier: MIT
// What the RTL DPU (rtl/rknpu/npu_dpu_cvt.sv) is programmed with for a task: the decoded DPU
// configuration mapped onto its configuration ports, and the per-channel operands the DPU_RDMA
// delivers (register operand or the operand image in memory, resolved per channel by the C++
// model's own rule, rknpu::dpu_stage_operands).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "npu/rknpu/dpu_config.h"
#include "npu/rknpu/dpu_engine.h"
#include "rtl/streams.h"

namespace npu::rtl {

/// The DPU configuration ports (one field per port of npu_dpu_cvt, enables instead of bypasses).
struct DpuPorts {
    bool bs_en = false, bs_alu_en = false, bs_mul_en = false, bs_mul_prelu = false, bs_relu_en = false,
         bs_relux_en = false;
    uint32_t bs_alu_algo = 2, bs_mul_shift = 0, bs_relux = 0;
    bool bn_en = false, bn_alu_en = false, bn_mul_en = false, bn_mul_prelu = false, bn_relu_en = false,
         bn_relux_en = false;
    uint32_t bn_alu_algo = 2, bn_mul_shift = 0, bn_relux = 0;
    bool ew_en = false, ew_op_en = false, ew_op_mul = false, ew_mul_prelu = false, ew_op_mem = false, ew_cvt_en = false,
         ew_relu_en = false, ew_relux_en = false;
    uint32_t ew_alu_algo = 2, ew_operand = 0, ew_cvt_offset = 0, ew_cvt_scale = 1, ew_cvt_shift = 0, ew_truncate = 0,
             ew_relux = 0;
    uint32_t out_scale = 1, out_shift = 0, out_offset = 0;
    bool out_int16 = false;
};

/// Why the RTL DPU cannot run this configuration ("" = it can): the float path, the EW LUT and
/// atoms other than kLanes bytes are not in the RTL.
std::string dpu_unsupported(const rknpu::DpuConfig& d);

/// The ports for a supported configuration.
DpuPorts dpu_ports(const rknpu::DpuConfig& d);

/// Per-channel operands of channel group `g` (kLanes channels; channels >= d.c are zero).
std::vector<ChannelOperands> dpu_group_operands(const rknpu::DpuConfig& d, const rknpu::DpuOperands& ops, uint32_t g);

/// The DPU's input beats for a cube in the order the MRDMA reads it: surface (channel group) by
/// surface, pixel by pixel (p = y * w + x).
class CubeBeats {
   public:
    explicit CubeBeats(const rknpu::Cube& in) : in_(in), groups_((in.c + kLanes - 1) / kLanes) {}
    bool next(DpuBeat& b);
    uint64_t count() const { return static_cast<uint64_t>(in_.w) * in_.h * groups_; }

   private:
    const rknpu::Cube& in_;
    uint32_t groups_;
    uint32_t g_ = 0, p_ = 0;
};

/// The EW operand atom at a DPU beat's (pixel, channel group), from the ERDMA cube.
void ew_atom(const rknpu::Cube& ew, uint32_t pix, uint32_t cgrp, std::array<int16_t, kLanes>& out);

/// Store one DPU output atom into the output cube (channels >= cube.c are padding, dropped).
void store_dpu_out(const DpuOut& o, rknpu::Cube& out);

}  // namespace npu::rtl
