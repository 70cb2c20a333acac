// SPDX-License-Identifier: MIT
// MaxPool on the PPU, reading its input from memory through PPU_RDMA (a standalone PPU task):
// ResNet's 3x3/2 pad 1 and YOLOv5's SPPF 5x5/1 pad 2 fit the 4-bit kernel/stride and 3-bit
// padding fields in one task. Padded elements read PADDING_VALUE = -128, the int8 minimum, so
// they never win the max (ONNX MaxPool ignores padding). fp16 tensors (issue 14): the PPU in fp16
// (16-bit PPU_RDMA elements), padding -inf as the fp32 pad value.
#include <fmt/format.h>

#include <cstring>
#include <limits>
#include <stdexcept>

#include "compiler/rknpu/lower.h"
#include "hw/rknpu_regs.h"

namespace drv::rknpu {

std::vector<TaskBody> lower_maxpool_op(const PoolOp& op, const DeviceTensor& in, const DeviceTensor& out,
                                       ArenaBuilder& /*arena*/, const hw::SocProfile& soc, int core) {
    auto bad = [&](const std::string& why) {
        throw std::invalid_argument(fmt::format("MaxPool '{}': {}", op.name, why));
    };
    const bool fp16 = in.fp16;
    if (out.fp16 != fp16) bad("input and output precision differ");
    if (in.c2 != (fp16 ? soc.npu.c2_fp16.value : soc.npu.c2_int8.value) || out.c2 != in.c2)
        bad(fmt::format("tensor C2 differs from the SoC's {} C2", fp16 ? "fp16" : "int8"));
    if (op.kernel_w < 1 || op.kernel_w > 16 || op.kernel_h < 1 || op.kernel_h > 16)
        bad("kernel beyond 16 (4-bit field)");
    if (op.stride_w < 1 || op.stride_w > 16 || op.stride_h < 1 || op.stride_h > 16)
        bad("stride beyond 16 (4-bit field)");
    // The bottom/right padding may grow to reach the IR output size (ceil_mode).
    const int pr = std::max(0, (out.w - 1) * op.stride_w + op.kernel_w - in.w - op.pad_left);
    const int pb = std::max(0, (out.h - 1) * op.stride_h + op.kernel_h - in.h - op.pad_top);
    for (int p : {op.pad_left, op.pad_top, pr, pb})
        if (p > 7 || p >= std::min(op.kernel_w, op.kernel_h))
            bad("padding beyond the 3-bit fields or not below the kernel");
    if (in.c != out.c) bad("channel count changes");
    if (in.line_stride % 16 != 0 || (in.c > in.c2 && in.surf_stride % 16 != 0) ||
        (out.c > out.c2 && out.surf_stride % 16 != 0))
        bad("PPU_RDMA/PPU strides are programmed in 16-byte units; this tensor's rows or surfaces are not 16-byte "
            "aligned");
    if (in.w > 8192 || in.h > 8192 || in.c > 8192) bad("cube beyond the 13-bit fields");
    BodyBuilder b;
    const auto u = [](int v) { return static_cast<uint64_t>(v); };
    b.write_fields("PPU_DATA_CUBE_IN_WIDTH", {{"CUBE_IN_WIDTH", u(in.w - 1)}});
    b.write_fields("PPU_DATA_CUBE_IN_HEIGHT", {{"CUBE_IN_HEIGHT", u(in.h - 1)}});
    b.write_fields("PPU_DATA_CUBE_IN_CHANNEL", {{"CUBE_IN_CHANNEL", u(in.c - 1)}});
    b.write_fields("PPU_DATA_CUBE_OUT_WIDTH", {{"CUBE_OUT_WIDTH", u(out.w - 1)}});
    b.write_fields("PPU_DATA_CUBE_OUT_HEIGHT", {{"CUBE_OUT_HEIGHT", u(out.h - 1)}});
    b.write_fields("PPU_DATA_CUBE_OUT_CHANNEL", {{"CUBE_OUT_CHANNEL", u(out.c - 1)}});
    b.write_fields("PPU_OPERATION_MODE_CFG", {{"POOLING_METHOD", hw::rknpu::enums::PoolMethod::MAX}, {"FLYING_MODE", 1}});
    b.write_fields("PPU_POOLING_KERNEL_CFG", {{"KERNEL_WIDTH", u(op.kernel_w - 1)},
                                              {"KERNEL_HEIGHT", u(op.kernel_h - 1)},
                                              {"KERNEL_STRIDE_WIDTH", u(op.stride_w - 1)},
                                              {"KERNEL_STRIDE_HEIGHT", u(op.stride_h - 1)}});
    b.write_fields(
        "PPU_POOLING_PADDING_CFG",
        {{"PAD_LEFT", u(op.pad_left)}, {"PAD_TOP", u(op.pad_top)}, {"PAD_RIGHT", u(pr)}, {"PAD_BOTTOM", u(pb)}});
    uint32_t pad = static_cast<uint32_t>(-128);
    if (fp16) {
        const float ninf = -std::numeric_limits<float>::infinity();
        std::memcpy(&pad, &ninf, 4);
    }
    b.write("PPU_PADDING_VALUE_1_CFG", pad);
    if (out.offset % 16 != 0) bad("output not 16-byte aligned");
    b.write_addr("PPU_DST_BASE_ADDR", out.offset);
    b.write_fields("PPU_DST_SURF_STRIDE", {{"DST_SURF_STRIDE", out.surf_stride >> 4}});
    b.write_fields("PPU_DATA_FORMAT",
                   {{"PROC_PRECISION", fp16 ? hw::rknpu::enums::Precision::FP16 : hw::rknpu::enums::Precision::INT8},
                    {"DPU_FLYIN", 0}});
    b.write_fields("PPU_MISC_CTRL", {{"BURST_LEN", hw::rknpu::enums::BurstLen::BURST_16}});
    b.write_fields("PPU_RDMA_RDMA_CUBE_IN_WIDTH", {{"CUBE_IN_WIDTH", u(in.w - 1)}});
    b.write_fields("PPU_RDMA_RDMA_CUBE_IN_HEIGHT", {{"CUBE_IN_HEIGHT", u(in.h - 1)}});
    b.write_fields("PPU_RDMA_RDMA_CUBE_IN_CHANNEL", {{"CUBE_IN_CHANNEL", u(in.c - 1)}});
    b.write_addr("PPU_RDMA_RDMA_SRC_BASE_ADDR", in.offset);
    b.write_fields("PPU_RDMA_RDMA_SRC_LINE_STRIDE", {{"SRC_LINE_STRIDE", in.line_stride >> 4}});
    b.write_fields("PPU_RDMA_RDMA_SRC_SURF_STRIDE", {{"SRC_SURF_STRIDE", in.surf_stride >> 4}});
    b.write_fields("PPU_RDMA_RDMA_DATA_FORMAT", {{"IN_PRECISION", fp16 ? hw::rknpu::enums::PpuRdmaPrecision::BITS16
                                                                        : hw::rknpu::enums::PpuRdmaPrecision::BITS8}});
    NpuTask m;
    m.enable_mask = kEnablePpu | kEnablePpuRdma;
    // The PPU writes the result: the PPU pair (docs/rknpu-register-semantics.md §4, 0xc00).
    m.int_mask = hw::rknpu::PC_INTERRUPT_MASK::PPU_0.mask() | hw::rknpu::PC_INTERRUPT_MASK::PPU_1.mask();
    m.core = core;
    m.what = fmt::format("maxpool {}x{}/{} {}x{}x{}", op.kernel_h, op.kernel_w, op.stride_h, out.c, out.h, out.w);
    m.out_window = {0, out.c, 0, out.h, 0, out.w};
    m.in_window = {0, in.c, 0, in.h, 0, in.w};
    return {b.finish(m)};
}

}  // namespace drv::rknpu
