// SPDX-License-Identifier: MIT
// What a convolution task programs into CNA/CORE/DPU/DPU_RDMA, decoded from the register file at
// op-enable (SG-8.4: decode is pure and latched, like NVDLA's register groups).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "hw/profile.h"
#include "npu/rknpu/cube.h"
#include "npu/rknpu/dpu_config.h"
#include "npu/rknpu/reg_file.h"

namespace npu::rknpu {

struct ConvConfig {
    // CNA: input cube (NC1HWC2), kernel, geometry
    uint32_t in_w = 0, in_h = 0, in_c = 0, in_c_real = 0;
    uint32_t kernel_w = 0, kernel_h = 0, kernels = 0;
    uint32_t stride_x = 1, stride_y = 1, dilation_x = 1, dilation_y = 1;
    uint32_t pad_top = 0, pad_left = 0;
    int32_t pad_value = 0;
    uint32_t feature_addr = 0, line_stride_bytes = 0, surf_stride_bytes = 0;
    uint32_t weight_addr = 0, weight_bytes = 0, weight_bytes_per_kernel = 0;
    uint32_t data_banks = 0, weight_banks = 0, data_entries = 0;
    bool weight_reuse = false;
    bool depthwise = false;
    Precision precision = Precision::Int8;       ///< CNA_CONV_CON1.PROC_PRECISION
    Precision core_precision = Precision::Int8;  ///< CORE_MISC_CFG.PROC_PRECISION
    // CORE: output cube
    uint32_t out_w = 0, out_h = 0, out_c = 0;
    uint32_t clip_truncate = 0;  ///< CORE_CLIP_TRUNCATE: accumulator right shift before the DPU
    // DPU / DPU_RDMA: post-processing and write-back
    uint32_t dst_addr = 0, dst_surf_stride_bytes = 0;
    bool bs_bypass = true, bs_alu_bypass = true, bs_relu_bypass = true;
    uint32_t bs_alu_src = 0;  ///< 1: per-channel operand from memory (RDMA_BS_BASE_ADDR)
    AluAlgo bs_alu_algo = AluAlgo::Add;
    int32_t bs_alu_operand = 0;
    uint32_t bias_addr = 0;
    int32_t out_cvt_offset = 0;
    uint32_t out_cvt_scale = 1, out_cvt_shift = 0;
    uint32_t block_enable_mask = 0;  ///< from the op-enable entry (GLOBAL.OPERATION_ENABLE bit order)
    uint32_t atom = kAtomBytes;      ///< feature atom bytes of the SoC (atom_bytes(profile))
    /// The whole DPU stage as the engine runs it (decode_dpu, cube size taken from the CORE);
    /// the bs_* / out_cvt_* fields above are kept as a summary for reports and lint.
    DpuConfig dpu;

    uint64_t input_bytes() const;   ///< bytes the CNA reads for the feature cube
    uint64_t output_bytes() const;  ///< bytes the DPU WDMA writes
    uint64_t bias_bytes() const;
    /// Input channels per atom: 16 int8, 8 int16/fp16 with 16-byte atoms (8 / 4 with 8-byte atoms).
    uint32_t c2() const { return c2_of(precision, atom); }
    uint32_t elem() const { return elem_bytes(precision); }
    /// Output channels per atom, from the DPU output precision.
    uint32_t out_c2() const { return c2_of(dpu.out, atom); }
};

/// Decode the conv-path registers. Geometry the registers cannot express is left to validate().
/// `atom`: the SoC's feature atom bytes (atom_bytes(profile)).
ConvConfig decode_conv(const RegFile& rf, uint32_t block_enable_mask, uint32_t atom = kAtomBytes);

/// Check a decoded task against the profile; empty when legal.
std::vector<Fault> validate_conv(const ConvConfig& c, const hw::SocProfile& p);

}  // namespace npu::rknpu
