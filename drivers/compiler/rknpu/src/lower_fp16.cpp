// SPDX-License-Identifier: MIT
// DPU-only lowerings of the fp16 path (issue 14, lower.h Fp16DpuOp): Add / Mul of two fp16
// tensors (MRDMA + ERDMA; the second one [1,C,1,1]: ERDMA per channel), the per-channel affine
// map (BatchNormalization, a standalone Relu / ReLU6, arithmetic with a constant, a concat copy)
// and element-wise functions on the EW LUT (fp16_lut.cpp). Register conventions are the vendor runtime's fp16 DPU tasks
// (docs/rknpu-register-semantics.md §10, the `vendor_dpu_add_fp16` stream): DATA_FORMAT fp16 in /
// proc / out, MRDMA fp16 with FP16TOFP32_EN, ERDMA 16-bit elements per pixel, EW operand convert
// enabled with scale 1, OUT_CVT scale 1 with FP32TOFP16_EN. The float path computes in fp32 and
// rounds the output to fp16 (npu_models/rknpu dpu_engine.cpp).
#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <stdexcept>

#include "dpu_only.h"
#include "compiler/rknpu/lower.h"
#include "hw/rknpu_regs.h"
#include "numerics/half.h"

namespace drv::rknpu {

namespace {

namespace en = hw::rknpu::enums;
/// EDATA_SIZE / ERDMA_DATA_SIZE 16-bit elements, EW_DATA_MODE / ERDMA_DATA_MODE per pixel (TRM
/// codes; the vendor's fp16 add, docs/rknpu-register-semantics.md §10).
constexpr uint32_t kSixteenBit = 2;
constexpr uint32_t kPerPixel = 1;
constexpr uint32_t kPerChannel = 0;  // ERDMA_DATA_MODE / EW_DATA_MODE 0 (lower_eltwise.cpp, A-ERDMA)

uint32_t f32_bits(float v) {
    uint32_t u = 0;
    std::memcpy(&u, &v, 4);
    return u;
}

[[noreturn]] void fail(const std::string& name, const std::string& why) {
    throw std::invalid_argument(fmt::format("fp16 '{}': {}", name, why));
}

/// MRDMA/ERDMA read surfaces as a compact surface plus a notch in 16-byte units.
uint64_t notch(const std::string& name, const DeviceTensor& t) {
    const uint64_t compact = static_cast<uint64_t>(t.w) * t.h * t.c2 * 2;
    if (t.c > t.c2 && (t.surf_stride < compact || (t.surf_stride - compact) % 16 != 0))
        fail(name, fmt::format("surface stride of '{}' is not a compact surface plus a 16-byte notch", t.name));
    return t.c > t.c2 ? (t.surf_stride - compact) >> 4 : 0;
}

void check_tensor(const std::string& name, const DeviceTensor& t, const DeviceTensor& out, const hw::SocProfile& soc) {
    if (!t.fp16 || t.c2 != soc.npu.c2_fp16.value)
        fail(name, fmt::format("tensor '{}' is not an fp16 tensor with the SoC's fp16 C2 {}", t.name, soc.npu.c2_fp16.value));
    if (t.line_stride != static_cast<uint32_t>(t.w * t.c2 * 2)) fail(name, fmt::format("rows of '{}' are not compact", t.name));
    if (t.c != out.c || t.h != out.h || t.w != out.w)
        fail(name, fmt::format("input '{}' {}x{}x{} differs from the output {}x{}x{} (broadcast is not lowered)", t.name, t.c,
                               t.h, t.w, out.c, out.h, out.w));
    if (t.w > 8192 || t.h > 8192 || t.c > 8192) fail(name, "cube exceeds the 13-bit DPU fields");
    if (t.c > t.c2 && t.surf_stride % 16 != 0) fail(name, fmt::format("surface stride of '{}' is not 16-byte aligned", t.name));
}

std::vector<uint8_t> f32_image(const std::vector<float>& v, size_t n) {
    std::vector<uint8_t> img(4 * n);
    for (size_t c = 0; c < n; ++c) {
        const float x = v.size() == 1 ? v[0] : v[c];
        std::memcpy(&img[4 * c], &x, 4);
    }
    return img;
}

std::vector<uint8_t> f16_image(const std::vector<float>& v, size_t n) {
    std::vector<uint8_t> img(2 * n);
    for (size_t c = 0; c < n; ++c) {
        const uint16_t h = num::fp32_to_fp16(v.size() == 1 ? v[0] : v[c]);
        img[2 * c] = static_cast<uint8_t>(h & 0xff);
        img[2 * c + 1] = static_cast<uint8_t>(h >> 8);
    }
    return img;
}

/// A [1,C,1,1] second operand of an Add/Mul over a larger image: one value per channel.
bool per_channel(const DeviceTensor& b, const DeviceTensor& out) {
    return b.h == 1 && b.w == 1 && b.c == out.c && (out.h > 1 || out.w > 1);
}

bool all_equal(const std::vector<float>& v, float x) {
    for (float y : v)
        if (y != x) return false;
    return true;
}

/// A notch the MRDMA/ERDMA cannot express (8-byte atoms, RK356x, on an odd w x h): when every
/// tensor has the same surface stride, each surface is read and written whole, padding included,
/// as a row of surf_stride / atom pixels (elementwise with per-channel operands: the channels of
/// every pixel are unchanged).
bool flat(const DeviceTensor& t) {
    const uint64_t compact = static_cast<uint64_t>(t.w) * t.h * t.c2 * 2;
    return t.c > t.c2 && t.surf_stride >= compact && (t.surf_stride - compact) % 16 != 0;
}

DeviceTensor flat_view(const DeviceTensor& t) {
    DeviceTensor v = t;
    v.w = static_cast<int>(t.surf_stride / static_cast<uint32_t>(t.c2 * 2));
    v.h = 1;
    v.line_stride = t.surf_stride;
    return v;
}

}  // namespace

std::vector<TaskBody> lower_fp16_dpu_op(const std::string& name, const Fp16DpuOp& op, const DeviceTensor& a,
                                        const DeviceTensor* b, const DeviceTensor& out, ArenaBuilder& arena,
                                        const hw::SocProfile& soc, int core) {
    const bool binary = op.kind == Fp16DpuOp::Kind::Add || op.kind == Fp16DpuOp::Kind::Mul;
    const bool lut = op.kind == Fp16DpuOp::Kind::Lut, prelu = op.kind == Fp16DpuOp::Kind::Prelu;
    if (binary != (b != nullptr)) fail(name, "Add/Mul take two inputs, the affine map and the LUT one");
    if (op.alu_algo > static_cast<uint32_t>(en::AluAlgo::MINUS)) fail(name, fmt::format("EW ALU algorithm {} is not one of max/min/add/div/minus", op.alu_algo));
    const bool bpc = b && per_channel(*b, out);
    if ((flat(a) || flat(out) || (b && !bpc && flat(*b))) && a.surf_stride == out.surf_stride &&
        (!b || bpc || b->surf_stride == out.surf_stride) && (a.surf_stride % static_cast<uint32_t>(a.c2 * 2)) == 0 &&
        a.w == out.w && a.h == out.h) {
        const DeviceTensor fb = b ? (bpc ? *b : flat_view(*b)) : DeviceTensor{};
        auto t = lower_fp16_dpu_op(name, op, flat_view(a), b ? &fb : nullptr, flat_view(out), arena, soc, core);
        for (TaskBody& tb : t) tb.meta.out_window = tb.meta.in_window = {0, out.c, 0, out.h, 0, out.w};
        return t;
    }
    check_tensor(name, a, out, soc);
    check_tensor(name, out, out, soc);
    if (b && !bpc) check_tensor(name, *b, out, soc);
    if (bpc && (!b->fp16 || b->c2 != out.c2 || (b->c > b->c2 && b->surf_stride % 16 != 0)))
        fail(name, fmt::format("per-channel operand '{}' is not an fp16 [1,C,1,1] tensor with 16-byte surfaces", b->name));
    const float inf = std::numeric_limits<float>::infinity();
    if (!(op.lo == 0.f || op.lo == -inf) || !(op.lo <= op.hi))
        fail(name, fmt::format("clamp [{}, {}]: only ReLU-style lower bounds (0 or none) are lowered", op.lo, op.hi));
    const bool relu = op.lo == 0.f, relux = relu && op.hi < inf;
    if (!relu && op.hi < inf) fail(name, "an upper bound without the lower bound 0 is not lowered");
    const size_t nc = static_cast<size_t>(out.c);
    if (prelu && (op.mul.size() != nc || relu)) fail(name, fmt::format("{} slopes for {} channels", op.mul.size(), nc));
    if (!binary && !lut && !prelu && (op.mul.empty() || (op.mul.size() != 1 && op.mul.size() != nc) ||
                    (op.add.size() > 1 && op.add.size() != nc)))
        fail(name, fmt::format("{} multipliers / {} offsets for {} channels", op.mul.size(), op.add.size(), nc));
    const uint64_t w = static_cast<uint64_t>(out.w), h = static_cast<uint64_t>(out.h), c = static_cast<uint64_t>(out.c);
    BodyBuilder bb;
    bb.write_fields("DPU_FEATURE_MODE_CFG",
                    {{"BURST_LEN", en::BurstLen::BURST_16}, {"OUTPUT_MODE", en::DpuOutputMode::TO_MEMORY}, {"FLYING_MODE", 1}});
    bb.write_fields("DPU_DATA_FORMAT", {{"PROC_PRECISION", en::Precision::FP16},
                                        {"IN_PRECISION", en::Precision::FP16},
                                        {"OUT_PRECISION", en::Precision::FP16}});
    bb.write_addr("DPU_DST_BASE_ADDR", out.offset);
    bb.write_fields("DPU_DST_SURF_STRIDE",
                    {{"DST_SURF_STRIDE", out.surf_stride / hw::rknpu::DPU_DST_SURF_STRIDE::DST_SURF_STRIDE.unit}});
    bb.write_fields("DPU_DATA_CUBE_WIDTH", {{"WIDTH", w - 1}});
    bb.write_fields("DPU_DATA_CUBE_HEIGHT", {{"HEIGHT", h - 1}});
    bb.write_fields("DPU_DATA_CUBE_CHANNEL", {{"CHANNEL", c - 1}, {"ORIG_CHANNEL", c - 1}});
    // Rows compact: a data-movement task (Resize's copies) may have left a notch.
    bb.write_fields("DPU_DATA_CUBE_NOTCH_ADDR", {{"NOTCH_ADDR_0", 0}, {"NOTCH_ADDR_1", 0}});

    // BS: MUL by the per-channel fp16 operand (affine, unless all 1); BN: ALU add of the fp32
    // operand (affine, unless all 0), ReLU / RELUX for the affine clamp.
    if (lut && (op.lut.lo.size() != 257 || op.lut.le.size() != 65 || relu))
        fail(name, "the LUT takes 257 LO and 65 LE entries and no clamp");
    const bool bs_mul = !binary && !lut && !prelu && !all_equal(op.mul, 1.f);
    const bool bn_add = !binary && !lut && !prelu && !op.add.empty() && !all_equal(op.add, 0.f);
    const bool bn_on = bn_add || (!binary && relu);
    bb.write_fields("DPU_BS_CFG", {{"BS_BYPASS", bs_mul ? 0u : 1u},
                                   {"BS_ALU_BYPASS", 1},
                                   {"BS_MUL_BYPASS", bs_mul ? 0u : 1u},
                                   {"BS_MUL_PRELU", 0},
                                   {"BS_RELU_BYPASS", 1},
                                   {"BS_RELUX_EN", 0}});
    bb.write("DPU_BS_ALU_CFG", 0);
    bb.write_fields("DPU_BS_MUL_CFG", {{"BS_MUL_SRC", bs_mul ? 1u : 0u}, {"BS_MUL_SHIFT_VALUE", 0}, {"BS_MUL_OPERAND", 0}});
    bb.write("DPU_BS_RELUX_CMP_VALUE", 0);
    bb.write_fields("DPU_BN_CFG", {{"BN_BYPASS", bn_on ? 0u : 1u},
                                   {"BN_ALU_BYPASS", bn_add ? 0u : 1u},
                                   {"BN_ALU_ALGO", en::AluAlgo::ADD},
                                   {"BN_ALU_SRC", 1},
                                   {"BN_MUL_BYPASS", 1},
                                   {"BN_RELU_BYPASS", !binary && relu ? 0u : 1u},
                                   {"BN_RELUX_EN", !binary && relux ? 1u : 0u}});
    bb.write("DPU_BN_ALU_CFG", 0);
    bb.write("DPU_BN_MUL_CFG", 0);
    bb.write("DPU_BN_RELUX_CMP_VALUE", !binary && relux ? f32_bits(op.hi) : 0u);
    if (binary) {
        const bool mul = op.kind == Fp16DpuOp::Kind::Mul;
        bb.write_fields("DPU_EW_CFG", {{"EW_BYPASS", 0},
                                       {"EW_OP_BYPASS", 0},
                                       {"EW_OP_TYPE", mul ? 1u : 0u},
                                       {"EW_OP_SRC", 1},
                                       {"EW_DATA_MODE", bpc ? kPerChannel : kPerPixel},
                                       {"EDATA_SIZE", kSixteenBit},
                                       {"EW_ALU_ALGO", mul ? static_cast<uint32_t>(en::AluAlgo::ADD) : op.alu_algo},
                                       {"EW_OP_CVT_BYPASS", 0},
                                       {"EW_LUT_BYPASS", 1},
                                       {"EW_RELU_BYPASS", relu ? 0u : 1u},
                                       {"EW_RELUX_EN", relux ? 1u : 0u}});
        bb.write("DPU_EW_CVT_OFFSET_VALUE", 0);
        bb.write_fields("DPU_EW_CVT_SCALE_VALUE", {{"EW_OP_CVT_SCALE", 1}, {"EW_OP_CVT_SHIFT", 0}, {"EW_TRUNCATE", 0}});
        bb.write("DPU_EW_RELUX_CMP_VALUE", relux ? f32_bits(op.hi) : 0u);
        bb.write_fields("DPU_RDMA_RDMA_ERDMA_CFG",
                        {{"ERDMA_DISABLE", 0}, {"ERDMA_DATA_SIZE", kSixteenBit}, {"ERDMA_DATA_MODE", bpc ? kPerChannel : kPerPixel}});
        bb.write_addr("DPU_RDMA_RDMA_EW_BASE_ADDR", b->offset);
        bb.write_fields("DPU_RDMA_RDMA_EW_SURF_STRIDE",
                        {{"EW_SURF_STRIDE", b->surf_stride / hw::rknpu::DPU_RDMA_RDMA_EW_SURF_STRIDE::EW_SURF_STRIDE.unit}});
    } else if (prelu) {  // as the int8 PReLU multiply (conv_prelu.cpp), fp16 slopes, convert at scale 1
        bb.write_fields("DPU_EW_CFG", {{"EW_BYPASS", 0},
                                       {"EW_OP_BYPASS", 0},
                                       {"EW_OP_TYPE", 1},
                                       {"EW_MUL_PRELU", 1},
                                       {"EW_OP_SRC", 1},
                                       {"EW_DATA_MODE", kPerChannel},
                                       {"EDATA_SIZE", kSixteenBit},
                                       {"EW_OP_CVT_BYPASS", 0},
                                       {"EW_LUT_BYPASS", 1},
                                       {"EW_RELU_BYPASS", 1}});
        bb.write("DPU_EW_CVT_OFFSET_VALUE", 0);
        bb.write_fields("DPU_EW_CVT_SCALE_VALUE", {{"EW_OP_CVT_SCALE", 1}, {"EW_OP_CVT_SHIFT", 0}, {"EW_TRUNCATE", 0}});
        bb.write_fields("DPU_RDMA_RDMA_ERDMA_CFG",
                        {{"ERDMA_DISABLE", 0}, {"ERDMA_DATA_SIZE", kSixteenBit}, {"ERDMA_DATA_MODE", kPerChannel}});
        // The slopes as a 1x1 x C fp16 cube: C2 channels per 16-byte surface.
        const size_t c2 = static_cast<size_t>(out.c2), surfs = (nc + c2 - 1) / c2;
        std::vector<uint8_t> img(16 * surfs, 0);
        const std::vector<uint8_t> slopes = f16_image(op.mul, nc);
        for (size_t k = 0; k < nc; ++k) std::memcpy(&img[16 * (k / c2) + 2 * (k % c2)], &slopes[2 * k], 2);
        bb.write_addr("DPU_RDMA_RDMA_EW_BASE_ADDR", arena.add_init(img));
        bb.write_fields("DPU_RDMA_RDMA_EW_SURF_STRIDE",
                        {{"EW_SURF_STRIDE", 16 / hw::rknpu::DPU_RDMA_RDMA_EW_SURF_STRIDE::EW_SURF_STRIDE.unit}});
    } else if (lut) {
        bb.write_fields("DPU_EW_CFG", {{"EW_BYPASS", 0},
                                       {"EW_OP_BYPASS", 1},
                                       {"EW_LUT_BYPASS", 0},
                                       {"EW_OP_CVT_BYPASS", 1},
                                       {"EW_RELU_BYPASS", 1}});
        dpu_only::emit_lut_f16(bb, op.lut);
        bb.write_fields("DPU_RDMA_RDMA_ERDMA_CFG", {{"ERDMA_DISABLE", 1}});
    } else {
        bb.write_fields("DPU_EW_CFG", {{"EW_BYPASS", 1},
                                       {"EW_OP_BYPASS", 1},
                                       {"EW_LUT_BYPASS", 1},
                                       {"EW_OP_CVT_BYPASS", 1},
                                       {"EW_RELU_BYPASS", 1}});
        bb.write_fields("DPU_RDMA_RDMA_ERDMA_CFG", {{"ERDMA_DISABLE", 1}});
    }
    bb.write("DPU_OUT_CVT_OFFSET", 0);
    bb.write_fields("DPU_OUT_CVT_SCALE", {{"OUT_CVT_SCALE", 1}, {"FP32TOFP16_EN", 1}});
    bb.write_fields("DPU_OUT_CVT_SHIFT", {{"OUT_CVT_SHIFT", 0}});
    bb.write_fields("DPU_RDMA_RDMA_DATA_CUBE_WIDTH", {{"WIDTH", w - 1}});
    bb.write_fields("DPU_RDMA_RDMA_DATA_CUBE_HEIGHT", {{"HEIGHT", h - 1}});
    bb.write_fields("DPU_RDMA_RDMA_DATA_CUBE_CHANNEL", {{"CHANNEL", c - 1}});
    bb.write_addr("DPU_RDMA_RDMA_SRC_BASE_ADDR", a.offset);
    bb.write_fields("DPU_RDMA_RDMA_SURF_NOTCH", {{"SURF_NOTCH_ADDR", notch(name, a)}});
    if (b && !bpc) (void)notch(name, *b);
    // Operands: BS MUL fp16 per channel (DATA_USE MUL), BN ALU fp32 per channel (DATA_USE ALU).
    if (bs_mul) {
        bb.write_fields("DPU_RDMA_RDMA_BRDMA_CFG", {{"BRDMA_DATA_USE", en::DataUse::MUL}});
        bb.write_addr("DPU_RDMA_RDMA_BS_BASE_ADDR", arena.add_init(f16_image(op.mul, nc)));
    } else {
        bb.write("DPU_RDMA_RDMA_BRDMA_CFG", 0);
    }
    if (bn_add) {
        bb.write_fields("DPU_RDMA_RDMA_NRDMA_CFG", {{"NRDMA_DATA_USE", en::DataUse::ALU}});
        bb.write_addr("DPU_RDMA_RDMA_BN_BASE_ADDR", arena.add_init(f32_image(op.add, nc)));
    } else {
        bb.write("DPU_RDMA_RDMA_NRDMA_CFG", 0);
    }
    bb.write_fields("DPU_RDMA_RDMA_FEATURE_MODE_CFG", {{"BURST_LEN", en::BurstLen::BURST_16},
                                                      {"FLYING_MODE", 1},
                                                      {"MRDMA_DISABLE", 0},
                                                      {"MRDMA_FP16TOFP32_EN", 1},
                                                      {"IN_PRECISION", en::Precision::FP16},
                                                      {"PROC_PRECISION", en::Precision::FP16}});
    NpuTask m;
    m.enable_mask = kEnableDpu | kEnableDpuRdma;
    m.int_mask = 0x300;
    m.core = core;
    m.what = fmt::format("{} fp16 {}x{}x{}", op.what, out.c, out.h, out.w);
    m.out_window = {0, out.c, 0, out.h, 0, out.w};
    m.in_window = m.out_window;
    return {bb.finish(m)};
}

}  // namespace drv::rknpu
