// SPDX-License-Identifier: MIT
// User-mode lowering of one quantized Conv2D to an RKNPU task: NC1HWC2 feature layout, weight
// packing, zero-point folding into the bias, requantization scale -> OUT_CVT scale/shift, CBUF
// bank allocation, and the regcmd stream programming CNA, CORE, DPU and DPU_RDMA.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "drv/regcmd/builder.h"
#include "hw/profile.h"
#include "hw/regdb.h"
#include "numerics/requant.h"

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

/// Device addresses of the task's buffers.
struct ConvAddresses {
    uint32_t input = 0, weights = 0, bias = 0, output = 0;
};

/// Everything the driver places in DMA memory for one conv task, and how to read the result.
struct LoweredConv {
    int c2 = 16;
    int in_c_padded = 0, out_c_padded = 0;
    uint32_t line_stride_bytes = 0, surf_stride_bytes = 0;
    uint32_t out_surf_stride_bytes = 0;
    uint64_t input_bytes = 0, output_bytes = 0;
    std::vector<uint8_t> weights;  ///< packed in the CNA's weight blocks (hw/rknpu_layout.h)
    std::vector<uint8_t> bias;     ///< int32 LE per output channel, input zero point folded in
    num::FixedScale out_scale;     ///< OUT_CVT_SCALE / OUT_CVT_SHIFT
    int data_banks = 0, weight_banks = 0;
    int data_entries = 0;  ///< CNA_CBUF_CON1.DATA_ENTRIES: 64-byte entries of one input row
    hw::rknpu::Generation gen = hw::rknpu::Generation::RK3588;  ///< register map (field units)
};

LoweredConv lower_conv(const ConvLayer& layer, const hw::SocProfile& soc);

/// Pack an NCHW int8 tensor into NC1HWC2 (C2 = 16) with the lowering's strides.
std::vector<uint8_t> pack_input(const ConvLayer& layer, const LoweredConv& low, const std::vector<int8_t>& nchw);
/// Unpack the NC1HWC2 output image into NCHW int8.
std::vector<int8_t> unpack_output(const ConvLayer& layer, const LoweredConv& low, const std::vector<uint8_t>& img);

/// Emit the task's register writes (without the 4 ending entries) into `b`.
void emit_conv_task(const ConvLayer& layer, const LoweredConv& low, const ConvAddresses& addr,
                    regcmd::Builder& b);

}  // namespace drv::rknpu
