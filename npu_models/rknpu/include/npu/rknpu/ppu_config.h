// SPDX-License-Identifier: MIT
// What a task programs into the PPU (planar/pooling unit, NVDLA PDP analogue) and PPU_RDMA,
// decoded at op-enable (SG-8.4). The PPU pools a C x H x W cube with a kernel, stride and
// padding: max, min, or average (sum times RECIP_KERNEL_WIDTH * RECIP_KERNEL_HEIGHT, 1.16 fixed
// point each, so padded elements count: ONNX count_include_pad = 1). Its input is the DPU output
// on the fly (DPU enabled, PPU_RDMA not) or a cube read from memory by PPU_RDMA.
#pragma once
#include <cstdint>
#include <vector>

#include "hw/profile.h"
#include "npu/rknpu/cube.h"
#include "npu/rknpu/reg_file.h"

namespace npu::rknpu {

/// OPERATION_MODE_CFG.POOLING_METHOD. UNVERIFIED: the NVDLA PDP order (0 average, 1 max, 2 min).
enum class PoolMethod : uint32_t { Average = 0, Max = 1, Min = 2 };

struct PpuConfig {
    bool from_dpu = false;  ///< on the fly from the DPU; else PPU_RDMA reads memory
    uint32_t in_w = 0, in_h = 0, in_c = 0;     ///< DATA_CUBE_IN_* + 1
    uint32_t out_w = 0, out_h = 0, out_c = 0;  ///< DATA_CUBE_OUT_* + 1
    PoolMethod method = PoolMethod::Max;
    uint32_t method_raw = 0;
    /// UNVERIFIED: KERNEL_WIDTH/HEIGHT and KERNEL_STRIDE_WIDTH/HEIGHT count minus one (NVDLA PDP),
    /// so the 4-bit fields reach kernels and strides of 16.
    uint32_t kernel_w = 1, kernel_h = 1, stride_x = 1, stride_y = 1;
    uint32_t pad_left = 0, pad_top = 0, pad_right = 0, pad_bottom = 0;
    /// PADDING_VALUE_1_CFG: value of padded elements, int32 (or fp32 bits on the fp16 path).
    uint32_t pad_value = 0;
    uint32_t recip_w = 0, recip_h = 0;  ///< 1.16 fixed point: 65536 / kernel
    Precision prec = Precision::Int8;   ///< DATA_FORMAT.PROC_PRECISION (input and output)
    bool dpu_flyin = false;             ///< DATA_FORMAT.DPU_FLYIN as programmed
    uint32_t dst_addr = 0;
    uint64_t dst_surf_stride_bytes = 0;
    // PPU_RDMA (memory input)
    uint32_t rdma_w = 0, rdma_h = 0, rdma_c = 0;
    /// RDMA_DATA_FORMAT.IN_PRECISION as programmed: the TRM's element width code (0 4-bit, 1 8-bit,
    /// 2 16-bit, 3 32-bit), not the CNA precision code.
    uint32_t src_width_code = 1;
    uint32_t src_addr = 0;
    uint64_t src_line_stride_bytes = 0, src_surf_stride_bytes = 0;
    uint32_t atom = kAtomBytes;  ///< feature atom bytes of the SoC (atom_bytes(profile))

    uint64_t out_bytes() const { return cube_bytes(out_w, out_h, out_c, prec, atom); }
};

/// `atom`: the SoC's feature atom bytes.
PpuConfig decode_ppu(const RegFile& rf, bool from_dpu, uint32_t atom = kAtomBytes);

/// Check a decoded PPU configuration; `dpu_out`: the DPU output precision when on the fly.
std::vector<Fault> validate_ppu(const PpuConfig& c, const hw::SocProfile& p, Precision dpu_out = Precision::Int8);

/// Pool `in` (in_w x in_h x in_c, integers or floats) into the output cube, values in the
/// precision's domain (integers saturated, floats rounded to fp16).
Cube run_ppu(const PpuConfig& c, const Cube& in);

/// Fast integer pooling (int8/int16), bit-identical to run_ppu + pack_cube(c.prec, c.atom): reads
/// the packed input surfaces (`in[c1]`: in_w*in_h*atom bytes each) and returns the packed output by
/// surfaces. run_ppu stays the reference.
bool ppu_fast_ok(const PpuConfig& c);
std::vector<std::vector<uint8_t>> run_ppu_int(const PpuConfig& c, const std::vector<const uint8_t*>& in);

}  // namespace npu::rknpu
