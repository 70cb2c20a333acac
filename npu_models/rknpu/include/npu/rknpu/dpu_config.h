// SPDX-License-Identifier: MIT
// What a task programs into the DPU (post-processing, NVDLA SDP analogue) and DPU_RDMA, decoded
// from the register file at op-enable (SG-8.4). Per element, in this order:
//   input (CORE accumulator, or the MRDMA cube from memory)
//   -> BS stage: ALU (max/min/add with a register or per-channel memory operand)
//                -> MUL (x * operand >> shift, or only x < 0 with MUL_PRELU: PReLU/leaky)
//                -> ReLU, or ReLUX clip to [0, RELUX_CMP]
//   -> BN stage: same as BS with the BN registers
//   -> EW stage: operand (EW_OP_VALUE_0, or the ERDMA cube with its own convert
//                (e + offset) * scale >> shift) -> ALU or MUL (>> EW_TRUNCATE) -> LUT -> ReLU/ReLUX
//   -> output convert: (x * OUT_CVT_SCALE >> OUT_CVT_SHIFT) + OUT_CVT_OFFSET, saturated
//   -> WDMA (NC1HWC2) or, when the PPU runs on the fly, the PPU.
// Where the public facts do not fix an encoding or rounding, the choice is marked UNVERIFIED here
// and in dpu_engine.cpp; the integer path keeps 64-bit intermediates and saturates only at the
// output convert (UNVERIFIED: the silicon datapath width is not public).
#pragma once
#include <cstdint>
#include <vector>

#include "hw/profile.h"
#include "npu/rknpu/cube.h"
#include "npu/rknpu/reg_file.h"

namespace npu::rknpu {

/// BS or BN stage.
struct DpuStage {
    bool bypass = true, alu_bypass = true, mul_bypass = true, mul_prelu = false;
    bool relu_bypass = true, relux_en = false;
    bool alu_from_mem = false;  ///< *_ALU_SRC = 1: per-channel ALU operand read by DPU_RDMA
    bool mul_from_mem = false;  ///< *_MUL_SRC = 1: per-channel MUL operand read by DPU_RDMA
    uint32_t alu_algo = 2;
    uint32_t alu_operand = 0;  ///< int32, or fp32 bits on the fp16 path
    uint32_t mul_operand = 0;  ///< 16 bits: int16, or fp16 bits on the fp16 path
    uint32_t mul_shift = 0;    ///< right shift after the integer MUL
    uint32_t relux_cmp = 0;    ///< int32, or fp32 bits on the fp16 path
    uint32_t operand_addr = 0;  ///< RDMA_BS_BASE_ADDR / RDMA_BN_BASE_ADDR

    /// Per-channel operand image in memory (UNVERIFIED layout): the ALU operands of all channels
    /// (4 bytes each: int32 or fp32), then the MUL operands (2 bytes each: int16 or fp16).
    uint64_t operand_bytes(uint32_t channels) const {
        if (bypass) return 0;
        return (!alu_bypass && alu_from_mem ? 4ull * channels : 0) + (!mul_bypass && mul_from_mem ? 2ull * channels : 0);
    }
};

/// EW stage.
struct DpuEw {
    bool bypass = true, op_bypass = true, lut_bypass = true, cvt_bypass = true;
    bool relu_bypass = true, relux_en = false, mul_prelu = false;
    bool op_from_mem = false;  ///< EW_OP_SRC = 1: second cube read by ERDMA
    bool op_is_mul = false;    ///< EW_OP_TYPE: 0 ALU, 1 MUL (UNVERIFIED)
    uint32_t alu_algo = 2;
    uint32_t operand = 0;  ///< EW_OP_VALUE_0 when the operand comes from the register
    int32_t cvt_offset = 0;
    uint32_t cvt_scale = 1, cvt_shift = 0;
    uint32_t truncate = 0;  ///< right shift after the EW MUL
    uint32_t relux_cmp = 0;
    bool erdma_disable = true;
    /// RDMA_ERDMA_CFG.ERDMA_DATA_SIZE, TRM codes 0 4-bit, 1 8-bit, 2 16-bit, 3 32-bit (docs §10;
    /// Mesa 1 for its int8 add, the vendor 2 for an fp16 add). 8- and 16-bit operands are modelled.
    uint32_t erdma_data_size = 1;
    /// RDMA_ERDMA_CFG.ERDMA_DATA_MODE: 0 one operand per channel, 1 per pixel (the cube), 2 per
    /// channel by pixel (TRM). Modelled: 1, and 0 (UNVERIFIED layout, after NVDLA SDP's per-kernel
    /// operands: the operands are the image of a 1x1 x C cube, surfaces EW_SURF_STRIDE apart, each
    /// applied to every pixel of its channel; on a 1x1 cube both modes are the same element).
    uint32_t data_mode = 1;
    uint32_t addr = 0;
    uint64_t surf_stride_bytes = 0;  ///< 0: compact
};

/// LUT (LE and LO tables, linear index mode). On the fp16 path the same registers are read as
/// fp32 start/end, fp16 entries and a signed index exponent (lut_lookup_f, UNVERIFIED).
struct DpuLut {
    int32_t le_start = 0, le_end = 0, lo_start = 0, lo_end = 0;
    uint32_t le_index_select = 0, lo_index_select = 0;  ///< log2 of the input step between entries
    int32_t le_uflow_scale = 0, le_oflow_scale = 0, lo_uflow_scale = 0, lo_oflow_scale = 0;  ///< int16 slopes
    uint32_t le_uflow_shift = 0, le_oflow_shift = 0, lo_uflow_shift = 0, lo_oflow_shift = 0;
    bool uflow_prefer_lo = false, oflow_prefer_lo = false, hybrid_prefer_lo = false;
    bool expand_en = false;
    std::vector<int16_t> le, lo;
};

struct DpuConfig {
    /// Input source, from the op-enable mask (CORE enabled: accumulators on the fly; else the
    /// MRDMA reads memory). UNVERIFIED: FEATURE_MODE_CFG / RDMA_FEATURE_MODE_CFG.FLYING_MODE are
    /// not consulted (the open driver leaves them 0 for conv tasks).
    bool from_core = true;
    uint32_t w = 0, h = 0, c = 0;  ///< DATA_CUBE_WIDTH/HEIGHT/CHANNEL + 1
    Precision proc = Precision::Int8, out = Precision::Int8;
    // MRDMA (DPU-only tasks): the main input cube
    bool mrdma_disable = true;
    Precision src_prec = Precision::Int8;
    uint32_t rdma_w = 0, rdma_h = 0, rdma_c = 0;
    uint32_t src_addr = 0;
    uint64_t src_surf_stride_bytes = 0;
    DpuStage bs, bn;
    DpuEw ew;
    DpuLut lut;
    int32_t out_cvt_offset = 0;
    uint32_t out_cvt_scale = 1, out_cvt_shift = 0;
    uint32_t output_mode = 0;
    uint32_t dst_addr = 0;
    uint64_t dst_surf_stride_bytes = 0;
    /// DATA_CUBE_NOTCH_ADDR.NOTCH_ADDR_0: atoms from the end of an output row to the start of the
    /// next (TRM "pixels from the end of the width to the end of the line"; the vendor matmul writes
    /// row-major [M][N] fp32 with NOTCH 7 and DST_SURF_STRIDE 1, docs §10). Output row stride =
    /// (w + notch) atoms. Assumption A-NOTCH: NOTCH_ADDR_1 is not used (captures write it equal).
    uint32_t notch = 0;
    /// FEATURE_MODE_CFG.TP_EN. Assumption A-TP (docs §14): the WDMA writes the cube channel-last
    /// (NHWC, rows in order), tp_channels = WDMA_SIZE_0.SIZE_C_WDMA + 1 elements per pixel of
    /// WDMA_SIZE_0.TP_PRECISION width (0 one byte, 1 two bytes).
    bool transpose = false;
    uint32_t tp_channels = 0, tp_precision = 0;
    uint32_t atom = kAtomBytes;  ///< feature atom bytes of the SoC (atom_bytes(profile))

    bool float_path() const { return proc == Precision::Fp16; }
    Precision ew_prec() const {
        return ew.erdma_data_size <= 1 ? Precision::Int8 : (float_path() ? Precision::Fp16 : Precision::Int16);
    }
    /// Output row stride and surface stride of the WDMA in bytes.
    uint64_t out_row_bytes() const { return (static_cast<uint64_t>(w) + notch) * atom; }
    uint64_t out_bytes() const { return cube_bytes(w, h, c, out, atom); }
    uint64_t in_bytes() const { return cube_bytes(w, h, c, src_prec, atom); }
    /// EW operand per channel (ERDMA_DATA_MODE 0): one 1x1 x C cube.
    bool ew_per_channel() const { return ew.data_mode == 0; }
    uint32_t ew_w() const { return ew_per_channel() ? 1 : w; }
    uint32_t ew_h() const { return ew_per_channel() ? 1 : h; }
    uint64_t ew_bytes() const {
        return (!ew.bypass && !ew.op_bypass && ew.op_from_mem) ? cube_bytes(ew_w(), ew_h(), c, ew_prec(), atom) : 0;
    }
};

/// Decode DPU and DPU_RDMA. `from_core`: the CORE feeds the DPU (CNA|CORE enabled). `atom`: the
/// SoC's feature atom bytes.
DpuConfig decode_dpu(const RegFile& rf, bool from_core, uint32_t atom = kAtomBytes);

/// Check a decoded DPU configuration; empty when legal.
std::vector<Fault> validate_dpu(const DpuConfig& d, const hw::SocProfile& p);

}  // namespace npu::rknpu
