// SPDX-License-Identifier: MIT
// What a convolution task programs into CNA/CORE/DPU/DPU_RDMA, decoded from the register file at
// op-enable (SG-8.4: decode is pure and latched, like NVDLA's register groups).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "hw/profile.h"
#include "hw/rknpu_layout.h"
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
    uint32_t feature_addr = 0;
    uint64_t line_stride_bytes = 0, surf_stride_bytes = 0;  ///< decoded in silicon units (hw/rknpu_layout.h)
    /// How the feature cube lies in memory (docs §8). Feature mode: NC1HWC2 pixels of one atom.
    /// Image mode (CONV_CON1.ARGB_IN != 0, assumption A-IMAGE): rows of LINE_STRIDE pixels holding
    /// pixels of DATAIN_CHANNEL_REAL + 1 elements, converted by CVT_CON* (int8), the other channels
    /// of the atom 0. GROUP_LINE_OFF in feature mode (assumption A-MM, the vendor matmul): a row holds
    /// DATAIN_WIDTH pixels of LINE_STRIDE bytes / width each (16 fp16 per 32-byte row).
    bool image = false;
    uint32_t argb_in = 0;  ///< CONV_CON1.ARGB_IN: 8 + channels - 1 in image mode (TRM), 0 feature mode
    bool group_line_off = false;
    uint32_t pixel_bytes = kAtomBytes;  ///< bytes of one pixel of one memory surface
    uint32_t mem_channels = 16;         ///< channels one memory surface holds
    uint32_t mem_surfaces = 1;          ///< memory surfaces the CNA reads
    /// CNA input convert (CVT_CON0..4): per channel set i = ch % 4, x' = (x * scale) >> truncate
    /// + offset (CVT_TYPE 0) or ((x + offset) * scale) >> truncate (1), rounded half up, saturated
    /// to the processing type; DATA_SIGN 0 reads bytes unsigned (Mesa's raw uint8 image pixels).
    struct Cvt {
        bool bypass = true, add_first = false, is_signed = true;
        int32_t offset[4] = {0, 0, 0, 0}, scale[4] = {1, 1, 1, 1};
        uint32_t truncate[4] = {0, 0, 0, 0};
    } cvt;
    /// BS_OW_OP added to every weight of a present kernel when BS_OW_CFG.OD_BYPASS = 0 (assumption
    /// A-OW, docs §14: Mesa writes 0x80 - weight zero point next to its signed weights w - 0x80).
    int32_t weight_offset = 0;
    uint32_t decompress = 0;
    uint32_t nn_mode = 0;  ///< CNA_CONV_CON3.NN_MODE: multi-core co-work MAC shape (TRM; 0 single core)  ///< CNA_DCOMP_CTRL.DECOMP_CONTROL: 0 = uncompressed weights (every producer)
    /// Engine view: kernels (depthwise: channels) that exist; weight_offset applies to these only.
    uint32_t present_kernels = 0;
    hw::rknpu::WeightBlocks wblocks;  ///< the SoC's weight blocks for this task's precision
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
/// `atom`: the SoC's feature atom bytes (atom_bytes(profile)); `gen`: its register map (units).
/// The weight blocks default to RK3588's; the profile overload takes the SoC's.
ConvConfig decode_conv(const RegFile& rf, uint32_t block_enable_mask, uint32_t atom = kAtomBytes,
                       hw::rknpu::Generation gen = hw::rknpu::Generation::RK3588);
ConvConfig decode_conv(const RegFile& rf, uint32_t block_enable_mask, const hw::SocProfile& soc);

/// The feature cube the engines compute on, from the bytes the CNA read (regions in plan order):
/// compact NC1HWC2 with C2 = atom / element, `channels` channels (zero beyond the cube's), input
/// convert and image expansion applied. `raw` is taken by value: when the read bytes already are
/// that cube they are handed back without a copy.
std::vector<uint8_t> canonical_feature(const ConvConfig& c, std::vector<uint8_t> raw, uint32_t channels);
/// The weights the engines compute on, from the silicon weight blocks: kernel after kernel,
/// [kh][kw][C] with C = DATAIN_CHANNEL, `kernels` kernels (zero beyond WEIGHT_KERNELS);
/// depthwise one [kh][kw][channels] block (zero beyond DATAIN_CHANNEL).
std::vector<uint8_t> canonical_weights(const ConvConfig& c, const std::vector<uint8_t>& raw, uint32_t kernels,
                                       uint32_t channels);
/// Names of the documented assumptions a decoded task relies on (for decode, lint and replay).
std::vector<std::string> conv_assumptions(const ConvConfig& c);

/// Check a decoded task against the profile; empty when legal.
std::vector<Fault> validate_conv(const ConvConfig& c, const hw::SocProfile& p);

}  // namespace npu::rknpu
