// SPDX-License-Identifier: MIT
// One quantized Conv2D lowered on its own: the bundled single-conv example (`npusim run` without a
// model, a layer JSON) and the block tests build their streams here. It is not a second conv
// lowering: lower_conv() hands the layer to the model compiler's lower_conv_op (lower.h: tiling
// along rows and kernels, CBUF sizing, weight blocks, requantization, fused ReLU) exactly as
// compile_model does for a QLinearConv, and keeps its task bodies with three address regions the
// caller places anywhere: the input image, the constants (weights and DPU operands) and the output.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "compiler/rknpu/lower.h"
#include "compiler/rknpu/model.h"
#include "drv/regcmd/builder.h"
#include "hw/profile.h"

namespace drv::rknpu {

/// A quantized 2-D convolution (NCHW, batch 1), QDQ semantics: real = (q - zp) * scale.
struct ConvLayer {
    std::string name = "conv";
    int in_c = 0, in_h = 0, in_w = 0;
    int out_c = 0;
    int kernel_h = 3, kernel_w = 3;
    int stride_h = 1, stride_w = 1;
    int pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
    int dilation_h = 1, dilation_w = 1;
    bool relu = false;
    float in_scale = 1.f, w_scale = 1.f, out_scale = 1.f;
    int32_t in_zp = 0, out_zp = 0;
    std::vector<int8_t> weights;  ///< OIHW, symmetric (zero point 0)
    std::vector<int32_t> bias;    ///< per output channel, scale in_scale * w_scale

    int out_h() const { return (in_h + pad_top + pad_bottom - ((kernel_h - 1) * dilation_h + 1)) / stride_h + 1; }
    int out_w() const { return (in_w + pad_left + pad_right - ((kernel_w - 1) * dilation_w + 1)) / stride_w + 1; }
    uint64_t macs() const {
        return static_cast<uint64_t>(out_h()) * out_w() * out_c * in_c * kernel_h * kernel_w;
    }
    /// Throws std::invalid_argument naming the first inconsistent field.
    void check() const;
};

/// Device addresses of the three regions the tasks read and write.
struct ConvAddresses {
    uint32_t input = 0, constants = 0, output = 0;
};

/// The lowered layer: what goes into DMA memory and the tasks that compute it.
struct LoweredConv {
    DeviceTensor in, out;            ///< NC1HWC2 images (offsets: the region bases below)
    uint64_t input_bytes = 0, output_bytes = 0;
    std::vector<uint8_t> constants;  ///< weight blocks and DPU operands, placed at ConvAddresses::constants
    std::vector<TaskBody> tasks;     ///< lower_conv_op's bodies (addresses as region offsets), one core
};

/// Lower the layer (ConvLayer::check, then lower_conv_op on one core). Throws std::invalid_argument
/// naming the layer when the SoC cannot run it (no tiling fits the CBUF, a field overflows).
LoweredConv lower_conv(const ConvLayer& layer, const hw::SocProfile& soc);

/// Pack an NCHW int8 tensor into the input image (padding channels hold the zero point).
std::vector<uint8_t> pack_input(const ConvLayer& layer, const LoweredConv& low, const std::vector<int8_t>& nchw);
/// Unpack the output image into NCHW int8.
std::vector<int8_t> unpack_output(const ConvLayer& layer, const LoweredConv& low, const std::vector<uint8_t>& img);

/// Task `task`'s register entries (without the 4 ending entries) with the regions at `addr`.
std::vector<uint64_t> conv_task_words(const LoweredConv& low, size_t task, const ConvAddresses& addr);
/// Append the register entries of a layer that lowered to a single task into `b` (throws
/// std::invalid_argument when the lowering tiled it into several: use conv_task_words).
void emit_conv_task(const ConvLayer& layer, const LoweredConv& low, const ConvAddresses& addr, regcmd::Builder& b);

}  // namespace drv::rknpu
