// SPDX-License-Identifier: MIT
// The DPU programs of a conv task (lower_conv_internal.h): int8 requantization through BS / BN / EW
// and OUT_CVT, the float path of the fp16 convs and of the int8 convs with a float output. The
// requantization scheme and its bounds are described at the top of lower_conv.cpp.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "dpu_only.h"
#include "hw/regcmd.h"
#include "hw/rknpu_layout.h"
#include "lower_conv_internal.h"
#include "numerics/half.h"

namespace drv::rknpu::conv_detail {

namespace {
namespace en = hw::rknpu::enums;
}  // namespace

/// The DPU's output cube of a conv task (destination, strides, size, precisions): the int8, the
/// float-output (emit_dpu_i2f) and the fp16 (emit_dpu_fp16) DPU programs differ only in the
/// precisions here.
static void emit_dpu_cube(BodyBuilder& bb, const ConvOp& op, const DeviceTensor& out, const TaskGeom& tg, bool float_out) {
    const uint64_t dst = out.offset + static_cast<uint64_t>(tg.k0 / out.c2) * out.surf_stride +
                         static_cast<uint64_t>(tg.y0) * out.line_stride;
    const uint64_t w1 = static_cast<uint64_t>(tg.ow - 1), h1 = static_cast<uint64_t>(tg.oh - 1),
                   c1 = static_cast<uint64_t>(tg.kn - 1);
    const auto prec = float_out || op.fp16 ? en::Precision::FP16 : en::Precision::INT8;
    bb.write_fields("DPU_FEATURE_MODE_CFG", {{"BURST_LEN", en::BurstLen::BURST_16},
                                             {"OUTPUT_MODE", en::DpuOutputMode::TO_MEMORY},
                                             {"CONV_MODE", op.depthwise ? en::ConvMode::DEPTHWISE : en::ConvMode::DIRECT}});
    bb.write_fields("DPU_DATA_FORMAT", {{"PROC_PRECISION", prec},
                                        {"IN_PRECISION", op.fp16 ? en::Precision::FP16 : en::Precision::INT8},
                                        {"OUT_PRECISION", prec}});
    bb.write_addr("DPU_DST_BASE_ADDR", dst);
    bb.write_fields("DPU_DST_SURF_STRIDE",
                    {{"DST_SURF_STRIDE", out.surf_stride / hw::rknpu::DPU_DST_SURF_STRIDE::DST_SURF_STRIDE.unit}});
    bb.write_fields("DPU_DATA_CUBE_WIDTH", {{"WIDTH", w1}});
    bb.write_fields("DPU_DATA_CUBE_HEIGHT", {{"HEIGHT", h1}});
    // Rows compact (as Mesa writes it; a data-movement task may have left a notch), or spaced for a
    // caller's strided rows (ConvTranspose phases).
    const uint64_t pixel = out.fp16 || float_out ? static_cast<uint64_t>(out.c2) * 2 : static_cast<uint64_t>(out.c2);
    const uint64_t notch = (out.line_stride - static_cast<uint64_t>(tg.ow) * pixel) / pixel;
    bb.write_fields("DPU_DATA_CUBE_NOTCH_ADDR", {{"NOTCH_ADDR_0", notch}, {"NOTCH_ADDR_1", notch}});
    bb.write_fields("DPU_DATA_CUBE_CHANNEL", {{"CHANNEL", c1}, {"ORIG_CHANNEL", c1}});
}

/// DPU: BS (bias add, M1, ReLU), BN (M2), EW (Clip), OUT_CVT; DPU_RDMA reads the operands.
void emit_dpu(BodyBuilder& bb, const ConvOp& op, const DeviceTensor& out, int32_t clip_lo, int32_t clip_hi,
              const Requant& rq, const FloatOut& fo, const TaskGeom& tg, const Constants& cs, const PreluPlan& pr) {
    if (op.float_out) return emit_dpu_i2f(bb, op, out, fo, tg, cs);
    emit_dpu_cube(bb, op, out, tg, false);
    const uint64_t w1 = static_cast<uint64_t>(tg.ow - 1), h1 = static_cast<uint64_t>(tg.oh - 1),
                   c1 = static_cast<uint64_t>(tg.kn - 1);  // the DPU_RDMA operand cube below
    // A float bias's fraction (float_ref) is the BN ALU add, so the ReLU follows it in BN.
    const bool frac = has_bias_fraction(op);
    bb.write_fields("DPU_BS_CFG", {{"BS_BYPASS", 0},
                                   {"BS_ALU_BYPASS", 0},
                                   {"BS_ALU_ALGO", en::AluAlgo::ADD},
                                   {"BS_ALU_SRC", 1},
                                   {"BS_MUL_BYPASS", 0},
                                   {"BS_MUL_PRELU", 0},
                                   {"BS_RELU_BYPASS", op.act == Act::Relu && !frac ? 0u : 1u},
                                   {"BS_RELUX_EN", 0}});
    bb.write("DPU_BS_ALU_CFG", 0);
    bb.write_fields("DPU_BS_MUL_CFG",
                    {{"BS_MUL_SRC", 1}, {"BS_MUL_SHIFT_VALUE", static_cast<uint64_t>(rq.s1)}, {"BS_MUL_OPERAND", 0}});
    bb.write("DPU_BS_RELUX_CMP_VALUE", 0);
    bb.write_fields("DPU_BN_CFG", {{"BN_BYPASS", 0},
                                   {"BN_ALU_BYPASS", frac ? 0u : 1u},
                                   {"BN_ALU_ALGO", frac ? static_cast<uint64_t>(en::AluAlgo::ADD) : 0u},
                                   {"BN_ALU_SRC", frac ? 1u : 0u},
                                   {"BN_MUL_BYPASS", 0},
                                   {"BN_MUL_PRELU", 0},
                                   {"BN_RELU_BYPASS", op.act == Act::Relu && frac ? 0u : 1u},
                                   {"BN_RELUX_EN", 0}});
    bb.write_fields("DPU_BN_MUL_CFG",
                    {{"BN_MUL_SRC", 1}, {"BN_MUL_SHIFT_VALUE", static_cast<uint64_t>(rq.s2)}, {"BN_MUL_OPERAND", 0}});
    bb.write("DPU_BN_ALU_CFG", 0);
    bb.write("DPU_BN_RELUX_CMP_VALUE", 0);
    int32_t cvt_offset = op.out_zp;
    if (op.act == Act::Clip) {
        // q = clamp(round(v / 2^S3) + zp, lo, hi) = round(clamp(v + A, 0, (hi - lo) 2^S3) / 2^S3) + lo,
        // A = (zp - lo) 2^S3: the bounds are multiples of 2^S3, so clamp and rounding commute.
        const int64_t scale = int64_t{1} << rq.s3;
        bb.write_fields("DPU_EW_CFG", {{"EW_BYPASS", 0},
                                       {"EW_OP_BYPASS", 0},
                                       {"EW_OP_TYPE", 0},
                                       {"EW_OP_SRC", 0},
                                       {"EW_ALU_ALGO", en::AluAlgo::ADD},
                                       {"EW_LUT_BYPASS", 1},
                                       {"EW_OP_CVT_BYPASS", 1},
                                       {"EW_RELU_BYPASS", 0},
                                       {"EW_RELUX_EN", 1},
                                       {"EW_MUL_PRELU", 0}});
        bb.write("DPU_EW_OP_VALUE_0", static_cast<uint32_t>(static_cast<int32_t>((op.out_zp - clip_lo) * scale)));
        bb.write("DPU_EW_RELUX_CMP_VALUE", static_cast<uint32_t>((clip_hi - clip_lo) * scale));
        cvt_offset = clip_lo;
    } else if (op.act == Act::Lut) {
        // EW multiplies by 1 with EW_TRUNCATE = S3: round(v / 2^S3) = the conv's output code - zp,
        // as the output convert would give it; the LUT (start -128 - zp) maps that code, its flat
        // ends saturating as the convert would; the output convert is then the identity.
        bb.write_fields("DPU_EW_CFG", {{"EW_BYPASS", 0},
                                       {"EW_OP_BYPASS", 0},
                                       {"EW_OP_TYPE", 1},
                                       {"EW_OP_SRC", 0},
                                       {"EW_LUT_BYPASS", 0},
                                       {"EW_OP_CVT_BYPASS", 1},
                                       {"EW_RELU_BYPASS", 1},
                                       {"EW_MUL_PRELU", 0}});
        bb.write("DPU_EW_OP_VALUE_0", 1);
        bb.write_fields("DPU_EW_CVT_SCALE_VALUE", {{"EW_OP_CVT_SCALE", 1}, {"EW_OP_CVT_SHIFT", 0},
                                                   {"EW_TRUNCATE", static_cast<uint64_t>(rq.s3)}});
        dpu_only::emit_lut(bb, op.lut, -128 - op.out_zp);
    } else if (op.act == Act::Prelu) {
        emit_prelu_ew(bb, pr, cs.ew.empty() ? 0 : cs.ew[static_cast<size_t>(tg.g)]);
    } else {
        bb.write_fields("DPU_EW_CFG", {{"EW_BYPASS", 1},
                                       {"EW_OP_BYPASS", 1},
                                       {"EW_LUT_BYPASS", 1},
                                       {"EW_OP_CVT_BYPASS", 1},
                                       {"EW_RELU_BYPASS", 1}});
    }
    const bool lut = op.act == Act::Lut;
    bb.write("DPU_OUT_CVT_OFFSET", static_cast<uint32_t>(lut ? 0 : cvt_offset));
    bb.write_fields("DPU_OUT_CVT_SCALE", {{"OUT_CVT_SCALE", 1}});
    bb.write_fields("DPU_OUT_CVT_SHIFT", {{"OUT_CVT_SHIFT", static_cast<uint64_t>(lut ? 0 : rq.s3)}});
    bb.write_fields("DPU_RDMA_RDMA_DATA_CUBE_WIDTH", {{"WIDTH", w1}});
    bb.write_fields("DPU_RDMA_RDMA_DATA_CUBE_HEIGHT", {{"HEIGHT", h1}});
    bb.write_fields("DPU_RDMA_RDMA_DATA_CUBE_CHANNEL", {{"CHANNEL", c1}});
    // UNVERIFIED: DATA_USE 3 = ALU and MUL operands, 2 = MUL only (regdb enum data_use).
    bb.write_fields("DPU_RDMA_RDMA_BRDMA_CFG", {{"BRDMA_DATA_USE", en::DataUse::ALU_MUL}});
    bb.write_addr("DPU_RDMA_RDMA_BS_BASE_ADDR", cs.bs[static_cast<size_t>(tg.g)]);
    bb.write_fields("DPU_RDMA_RDMA_NRDMA_CFG", {{"NRDMA_DATA_USE", frac ? en::DataUse::ALU_MUL : en::DataUse::MUL}});
    bb.write_addr("DPU_RDMA_RDMA_BN_BASE_ADDR", cs.bn[static_cast<size_t>(tg.g)]);
    if (op.act != Act::Prelu) bb.write_fields("DPU_RDMA_RDMA_ERDMA_CFG", {{"ERDMA_DISABLE", 1}});  // Prelu: emit_prelu_ew
    bb.write_fields("DPU_RDMA_RDMA_FEATURE_MODE_CFG", {{"BURST_LEN", en::BurstLen::BURST_16}, {"MRDMA_DISABLE", 1}});
}

static uint32_t f32_bits(float v) {
    uint32_t u = 0;
    std::memcpy(&u, &v, 4);
    return u;
}

namespace {

/// The output bounds of a float-path conv (fused Relu / ReLU6 / Clip): a lower bound 0 is a ReLU
/// (RELUX at a finite upper bound); another lower bound is the BN ALU max, its upper bound the EW
/// ALU min.
struct FloatClamp {
    float lo, hi;
    bool relu, relux, bn_max, ew_min;
};
FloatClamp float_clamp(const ConvOp& op) {
    const float inf = std::numeric_limits<float>::infinity();
    const bool clip = op.act == Act::Clip;
    FloatClamp k{};
    k.lo = clip ? op.clip_lo_f : (op.act == Act::Relu ? 0.f : -inf);
    k.hi = clip ? op.clip_hi_f : inf;
    k.relu = k.lo == 0.f, k.relux = k.relu && k.hi < inf;
    k.bn_max = !k.relu && k.lo > -inf, k.ew_min = !k.relu && k.hi < inf;
    return k;
}

/// EW stage of the float path: the ALU min at the upper bound (register operand), or bypassed.
void emit_float_ew(BodyBuilder& bb, const FloatClamp& k) {
    if (k.ew_min) {
        bb.write_fields("DPU_EW_CFG", {{"EW_BYPASS", 0},
                                       {"EW_OP_BYPASS", 0},
                                       {"EW_OP_TYPE", 0},
                                       {"EW_OP_SRC", 0},
                                       {"EW_ALU_ALGO", en::AluAlgo::MIN},
                                       {"EW_LUT_BYPASS", 1},
                                       {"EW_OP_CVT_BYPASS", 1},
                                       {"EW_RELU_BYPASS", 1}});
        bb.write("DPU_EW_OP_VALUE_0", f32_bits(k.hi));
    } else {
        bb.write_fields("DPU_EW_CFG", {{"EW_BYPASS", 1},
                                       {"EW_OP_BYPASS", 1},
                                       {"EW_LUT_BYPASS", 1},
                                       {"EW_OP_CVT_BYPASS", 1},
                                       {"EW_RELU_BYPASS", 1}});
    }
}

/// OUT_CVT (fp32 -> fp16, scale 1) and the DPU_RDMA side of a float-path conv task: the BS operands
/// (`use`) per kernel group from memory, no BN or EW operands, no MRDMA (the input is the CORE's).
void emit_float_out(BodyBuilder& bb, const TaskGeom& tg, const Constants& cs, en::DataUse use) {
    const uint64_t w1 = static_cast<uint64_t>(tg.ow - 1), h1 = static_cast<uint64_t>(tg.oh - 1),
                   c1 = static_cast<uint64_t>(tg.kn - 1);
    bb.write("DPU_OUT_CVT_OFFSET", 0);
    bb.write_fields("DPU_OUT_CVT_SCALE", {{"OUT_CVT_SCALE", 1}, {"FP32TOFP16_EN", 1}});
    bb.write_fields("DPU_OUT_CVT_SHIFT", {{"OUT_CVT_SHIFT", 0}});
    bb.write_fields("DPU_RDMA_RDMA_DATA_CUBE_WIDTH", {{"WIDTH", w1}});
    bb.write_fields("DPU_RDMA_RDMA_DATA_CUBE_HEIGHT", {{"HEIGHT", h1}});
    bb.write_fields("DPU_RDMA_RDMA_DATA_CUBE_CHANNEL", {{"CHANNEL", c1}});
    bb.write_fields("DPU_RDMA_RDMA_BRDMA_CFG", {{"BRDMA_DATA_USE", use}});
    bb.write_addr("DPU_RDMA_RDMA_BS_BASE_ADDR", cs.bs[static_cast<size_t>(tg.g)]);
    bb.write("DPU_RDMA_RDMA_NRDMA_CFG", 0);
    bb.write_fields("DPU_RDMA_RDMA_ERDMA_CFG", {{"ERDMA_DISABLE", 1}});
    bb.write_fields("DPU_RDMA_RDMA_FEATURE_MODE_CFG", {{"BURST_LEN", en::BurstLen::BURST_16}, {"MRDMA_DISABLE", 1}});
}

}  // namespace

/// DPU on the float path: BS adds the fp32 bias (ReLU, ReLU6 as ReLU + RELUX there); a Clip with
/// another lower bound clamps in BN (ALU max, register operand) and EW (ALU min); fp16 output.
void emit_dpu_fp16(BodyBuilder& bb, const ConvOp& op, const DeviceTensor& out, const TaskGeom& tg,
                   const Constants& cs) {
    emit_dpu_cube(bb, op, out, tg, true);
    const FloatClamp k = float_clamp(op);
    const float lo = k.lo, hi = k.hi;
    const bool relu = k.relu, relux = k.relux, bn_max = k.bn_max;
    bb.write_fields("DPU_BS_CFG", {{"BS_BYPASS", 0},
                                   {"BS_ALU_BYPASS", 0},
                                   {"BS_ALU_ALGO", en::AluAlgo::ADD},
                                   {"BS_ALU_SRC", 1},
                                   {"BS_MUL_BYPASS", 1},
                                   {"BS_MUL_PRELU", 0},
                                   {"BS_RELU_BYPASS", relu ? 0u : 1u},
                                   {"BS_RELUX_EN", relux ? 1u : 0u}});
    bb.write("DPU_BS_ALU_CFG", 0);
    bb.write("DPU_BS_MUL_CFG", 0);
    bb.write("DPU_BS_RELUX_CMP_VALUE", relux ? f32_bits(hi) : 0u);
    bb.write_fields("DPU_BN_CFG", {{"BN_BYPASS", bn_max ? 0u : 1u},
                                   {"BN_ALU_BYPASS", bn_max ? 0u : 1u},
                                   {"BN_ALU_ALGO", en::AluAlgo::MAX},
                                   {"BN_ALU_SRC", 0},
                                   {"BN_MUL_BYPASS", 1},
                                   {"BN_RELU_BYPASS", 1}});
    bb.write("DPU_BN_ALU_CFG", bn_max ? f32_bits(lo) : 0u);
    bb.write("DPU_BN_MUL_CFG", 0);
    bb.write("DPU_BN_RELUX_CMP_VALUE", 0);
    if (op.act == Act::Lut) {  // the fused function on the float-path LUT (fp16_lut.cpp)
        bb.write_fields("DPU_EW_CFG", {{"EW_BYPASS", 0},
                                       {"EW_OP_BYPASS", 1},
                                       {"EW_LUT_BYPASS", 0},
                                       {"EW_OP_CVT_BYPASS", 1},
                                       {"EW_RELU_BYPASS", 1}});
        dpu_only::emit_lut_f16(bb, op.lut_f);
    } else {
        emit_float_ew(bb, k);
    }
    emit_float_out(bb, tg, cs, en::DataUse::ALU);  // no BN operands in memory
}

/// An int8 conv with a float output (ConvOp::float_out, assumption A-I2F): the DPU's float path on
/// the int32 accumulator - BS ALU adds the fp32 offset and MUL multiplies by the fp16 m_c 2^exp (both
/// operands from memory), BN multiplies by the register operand 2^-exp - and fp16 output (OUT_CVT
/// scale 1 with FP32TOFP16_EN, as the vendor's fp16 tasks, section 10). A fused Relu / ReLU6 is the
/// BN ReLU (and RELUX at the upper bound) after that multiply; another Clip's lower bound the BN
/// ALU max before it (lo 2^exp: exact, a power of two), its upper bound the EW ALU min, as on the
/// fp16 path (emit_dpu_fp16).
void emit_dpu_i2f(BodyBuilder& bb, const ConvOp& op, const DeviceTensor& out, const FloatOut& fo, const TaskGeom& tg,
                  const Constants& cs) {
    emit_dpu_cube(bb, op, out, tg, true);
    const FloatClamp k = float_clamp(op);
    const float lo = k.lo, hi = k.hi;
    const bool relu = k.relu, relux = k.relux, bn_max = k.bn_max;
    bb.write_fields("DPU_BS_CFG", {{"BS_BYPASS", 0},
                                   {"BS_ALU_BYPASS", 0},
                                   {"BS_ALU_ALGO", en::AluAlgo::ADD},
                                   {"BS_ALU_SRC", 1},
                                   {"BS_MUL_BYPASS", 0},
                                   {"BS_MUL_PRELU", 0},
                                   {"BS_RELU_BYPASS", 1},
                                   {"BS_RELUX_EN", 0}});
    bb.write("DPU_BS_ALU_CFG", 0);
    bb.write_fields("DPU_BS_MUL_CFG", {{"BS_MUL_SRC", 1}, {"BS_MUL_SHIFT_VALUE", 0}, {"BS_MUL_OPERAND", 0}});
    bb.write("DPU_BS_RELUX_CMP_VALUE", 0);
    bb.write_fields("DPU_BN_CFG", {{"BN_BYPASS", 0},
                                   {"BN_ALU_BYPASS", bn_max ? 0u : 1u},
                                   {"BN_ALU_ALGO", bn_max ? static_cast<uint64_t>(en::AluAlgo::MAX) : 0u},
                                   {"BN_MUL_BYPASS", 0},
                                   {"BN_MUL_PRELU", 0},
                                   {"BN_RELU_BYPASS", relu ? 0u : 1u},
                                   {"BN_RELUX_EN", relux ? 1u : 0u}});
    bb.write("DPU_BN_ALU_CFG", bn_max ? f32_bits(std::ldexp(lo, fo.exp)) : 0u);
    bb.write_fields("DPU_BN_MUL_CFG", {{"BN_MUL_SRC", 0}, {"BN_MUL_SHIFT_VALUE", 0}, {"BN_MUL_OPERAND", fo.post}});
    bb.write("DPU_BN_RELUX_CMP_VALUE", relux ? f32_bits(hi) : 0u);
    emit_float_ew(bb, k);
    emit_float_out(bb, tg, cs, en::DataUse::ALU_MUL);  // the BN multiplier is a register operand
}

}  // namespace drv::rknpu::conv_detail
