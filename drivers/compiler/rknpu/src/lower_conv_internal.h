// SPDX-License-Identifier: MIT
// Internal to the conv lowering (lower_conv.cpp: tiling, constants, CNA/CORE; lower_conv_dpu.cpp:
// the DPU programs of a conv task): one task's slice of the layer, the layer's constants in the
// arena, and the DPU emitters.
#pragma once
#include <cstdint>
#include <vector>

#include "conv_prelu.h"
#include "conv_requant.h"
#include "compiler/rknpu/lower.h"

namespace drv::rknpu::conv_detail {

/// One task's slice of the layer: kernel group g x row band.
struct TaskGeom {
    int g = 0, k0 = 0, k1 = 0, kn = 0;   ///< output channels [k0, k1)
    int y0 = 0, y1 = 0, oh = 0, ow = 0;  ///< output rows [y0, y1)
    int r0 = 0, r1 = 0, ih = 0;          ///< input rows [r0, r1)
    int pad_top = 0;
    int cin = 0, cin_pad = 0, ch0 = 0;  ///< real / padded input channels read, first input channel
    bool reuse = false;                 ///< same weights as the previous task on this core
};

/// Arena offsets of the layer's constants.
struct Constants {
    uint64_t weights = 0;
    std::vector<uint64_t> bs, bn;  ///< DPU operands per kernel group
    std::vector<uint64_t> ew;      ///< Act::Prelu with per-channel slopes: EW operands per kernel group
};

/// The int8 DPU program of a conv task (requantization, fused activation; a float output goes to
/// emit_dpu_i2f): BS, BN, EW, OUT_CVT and DPU_RDMA operands. clip_lo / clip_hi: the output bounds.
void emit_dpu(BodyBuilder& bb, const ConvOp& op, const DeviceTensor& out, int32_t clip_lo, int32_t clip_hi,
              const Requant& rq, const FloatOut& fo, const TaskGeom& tg, const Constants& cs, const PreluPlan& pr);
/// An int8 conv with a float output (ConvOp::float_out, assumption A-I2F).
void emit_dpu_i2f(BodyBuilder& bb, const ConvOp& op, const DeviceTensor& out, const FloatOut& fo, const TaskGeom& tg,
                  const Constants& cs);
/// The fp16 path's DPU program (ConvOp::fp16).
void emit_dpu_fp16(BodyBuilder& bb, const ConvOp& op, const DeviceTensor& out, const TaskGeom& tg, const Constants& cs);

}  // namespace drv::rknpu::conv_detail
