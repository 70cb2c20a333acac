// SPDX-License-Identifier: MIT
#include "rtl/dpu_map.h"

#include <fmt/format.h>

namespace npu::rtl {

using rknpu::DpuConfig;
using rknpu::Precision;

std::string dpu_unsupported(const DpuConfig& d) {
    if (d.float_path()) return "fp16 DPU path (the RTL DPU is the integer datapath)";
    if (!d.ew.bypass && !d.ew.lut_bypass) return "EW LUT (not in the RTL DPU)";
    if (d.out != Precision::Int8 && d.out != Precision::Int16)
        return fmt::format("{} output", rknpu::precision_name(d.out));
    if (d.atom != kLanes) return fmt::format("{}-byte atoms (the RTL DPU is built for {} lanes)", d.atom, kLanes);
    if (d.out_cvt_shift > 63) return "OUT_CVT_SHIFT beyond 63";
    if (!d.ew.bypass && !d.ew.op_bypass && d.ew.op_is_mul && d.ew.truncate > 63) return "EW_TRUNCATE beyond 63";
    if ((d.c + kLanes - 1) / kLanes > kGroups) return fmt::format("more than {} channels", kGroups * kLanes);
    if (static_cast<uint64_t>(d.w) * d.h >= (uint64_t{1} << 28)) return "more pixels than the 28-bit tag";
    return "";
}

DpuPorts dpu_ports(const DpuConfig& d) {
    DpuPorts p;
    p.bs_en = !d.bs.bypass;
    p.bs_alu_en = !d.bs.alu_bypass;
    p.bs_alu_algo = d.bs.alu_algo & 3u;
    p.bs_mul_en = !d.bs.mul_bypass;
    p.bs_mul_prelu = d.bs.mul_prelu;
    p.bs_mul_shift = d.bs.mul_shift & 63u;
    p.bs_relu_en = !d.bs.relu_bypass;
    p.bs_relux_en = d.bs.relux_en;
    p.bs_relux = d.bs.relux_cmp;
    p.bn_en = !d.bn.bypass;
    p.bn_alu_en = !d.bn.alu_bypass;
    p.bn_alu_algo = d.bn.alu_algo & 3u;
    p.bn_mul_en = !d.bn.mul_bypass;
    p.bn_mul_prelu = d.bn.mul_prelu;
    p.bn_mul_shift = d.bn.mul_shift & 63u;
    p.bn_relu_en = !d.bn.relu_bypass;
    p.bn_relux_en = d.bn.relux_en;
    p.bn_relux = d.bn.relux_cmp;
    p.ew_en = !d.ew.bypass;
    p.ew_op_en = !d.ew.op_bypass;
    p.ew_op_mul = d.ew.op_is_mul;
    p.ew_mul_prelu = d.ew.mul_prelu;
    p.ew_alu_algo = d.ew.alu_algo & 3u;
    p.ew_op_mem = d.ew.op_from_mem;
    p.ew_operand = d.ew.operand;
    p.ew_cvt_en = !d.ew.cvt_bypass;
    p.ew_cvt_offset = static_cast<uint32_t>(d.ew.cvt_offset);
    p.ew_cvt_scale = d.ew.cvt_scale & 0xffffu;
    p.ew_cvt_shift = d.ew.cvt_shift & 63u;
    p.ew_truncate = d.ew.truncate & 63u;  // used only by the EW MUL, where validate_dpu bounds it
    p.ew_relu_en = !d.ew.relu_bypass;
    p.ew_relux_en = d.ew.relux_en;
    p.ew_relux = d.ew.relux_cmp;
    p.out_scale = d.out_cvt_scale & 0xffffu;
    p.out_shift = d.out_cvt_shift;
    p.out_offset = static_cast<uint32_t>(d.out_cvt_offset);
    p.out_int16 = d.out == Precision::Int16;
    return p;
}

std::vector<ChannelOperands> dpu_group_operands(const DpuConfig& d, const rknpu::DpuOperands& ops, uint32_t g) {
    std::vector<ChannelOperands> out(kLanes);
    for (uint32_t l = 0; l < kLanes; ++l) {
        const uint32_t ch = g * kLanes + l;
        if (ch >= d.c) continue;
        if (!d.bs.bypass) {
            const rknpu::DpuStageOperands s = rknpu::dpu_stage_operands(d.bs, ch, d.c, ops.bs);
            out[l].bs_alu = static_cast<int32_t>(s.alu);
            out[l].bs_mul = static_cast<int16_t>(s.mul);
        }
        if (!d.bn.bypass) {
            const rknpu::DpuStageOperands s = rknpu::dpu_stage_operands(d.bn, ch, d.c, ops.bn);
            out[l].bn_alu = static_cast<int32_t>(s.alu);
            out[l].bn_mul = static_cast<int16_t>(s.mul);
        }
    }
    return out;
}

bool CubeBeats::next(DpuBeat& b) {
    if (g_ >= groups_) return false;
    const uint32_t P = in_.w * in_.h;
    for (uint32_t l = 0; l < kLanes; ++l) {
        const uint32_t ch = g_ * kLanes + l;
        // The cube holds int32-range values (accumulators) or sign-extended int8/int16 elements.
        b.v[l] = ch < in_.c ? static_cast<int32_t>(in_.i[static_cast<size_t>(ch) * P + p_]) : 0;
    }
    b.pix = p_;
    b.cgrp = g_;
    if (++p_ == P) p_ = 0, ++g_;
    return true;
}

void ew_atom(const rknpu::Cube& ew, uint32_t pix, uint32_t cgrp, std::array<int16_t, kLanes>& out) {
    const size_t P = static_cast<size_t>(ew.w) * ew.h;
    for (uint32_t l = 0; l < kLanes; ++l) {
        const uint32_t ch = cgrp * kLanes + l;
        out[l] = ch < ew.c ? static_cast<int16_t>(ew.i[ch * P + pix]) : int16_t{0};
    }
}

void store_dpu_out(const DpuOut& o, rknpu::Cube& out) {
    const size_t P = static_cast<size_t>(out.w) * out.h;
    for (uint32_t l = 0; l < kLanes; ++l) {
        const uint32_t ch = o.cgrp * kLanes + l;
        if (ch < out.c) out.i[ch * P + o.pix] = o.v[l];
    }
}

}  // namespace npu::rtl
