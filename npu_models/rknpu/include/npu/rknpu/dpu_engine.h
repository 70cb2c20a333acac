// SPDX-License-Identifier: MIT
// Functional model of the DPU (no time, SG-8.4): the BS, BN and EW stages, the LUT and the output
// convert applied to a cube of CORE accumulators (flying mode) or of MRDMA input elements.
#pragma once
#include <cstdint>
#include <vector>

#include "npu/rknpu/cube.h"
#include "npu/rknpu/dpu_config.h"

namespace npu::rknpu {

/// Operand images DPU_RDMA fetched for one task (empty when the stage does not read memory).
struct DpuOperands {
    std::vector<uint8_t> bs;  ///< DpuStage::operand_bytes() from RDMA_BS_BASE_ADDR
    std::vector<uint8_t> bn;  ///< from RDMA_BN_BASE_ADDR
    std::vector<uint8_t> ew;  ///< compacted NC1HWC2 EW cube (ERDMA)
};

/// The raw per-channel operands of a BS/BN stage for channel `ch` of `channels`: the register
/// operand, or the operand image's entry when *_ALU_SRC / *_MUL_SRC select memory (layout of
/// DpuStage::operand_bytes). alu: int32 or fp32 bits; mul: int16 or fp16 bits. `s` not bypassed.
struct DpuStageOperands {
    uint32_t alu = 0;
    uint16_t mul = 1;
};
DpuStageOperands dpu_stage_operands(const DpuStage& s, uint32_t ch, uint32_t channels, const std::vector<uint8_t>& mem);

/// Run the DPU on `in` (d.w x d.h x d.c). Returns the output cube in the output precision's value
/// domain (integers saturated to int8/int16, floats rounded to fp16), ready for pack_cube(d.out)
/// or for the PPU on the fly.
Cube run_dpu(const DpuConfig& d, const Cube& in, const DpuOperands& ops);

/// A packed NC1HWC2 image as the WDMA writes it: one vector per C1 surface (w*h*atom bytes each).
using Surfaces = std::vector<std::vector<uint8_t>>;

/// Fast integer path, bit-identical to run_dpu followed by pack_cube(d.out, d.atom): applies when
/// dpu_fast_ok(d) (integer path, shifts <= 63). `acc`: planar accumulators (pixel p = y*w+x,
/// value of channel ch at acc[ch * w*h + p], the Cube order); run_dpu_int_image reads the MRDMA's compact
/// NC1HWC2 image of d.src_prec instead. Both return the packed output image by surfaces.
bool dpu_fast_ok(const DpuConfig& d);
Surfaces run_dpu_int_acc(const DpuConfig& d, const int32_t* acc, const DpuOperands& ops);
Surfaces run_dpu_int_image(const DpuConfig& d, const std::vector<uint8_t>& in, const DpuOperands& ops);

/// Which build of the fast engines' loop bodies runs (the same C++ loops compiled for each; the
/// results are bit-identical): the best the CPU has by default; NPUSIM_ENGINE_ISA=portable|avx2
/// in the environment or set_engine_isa caps it (tests run the equivalence tests on each).
/// A choice above what the CPU has falls back to the best it has.
enum class EngineIsa { Portable = 0, Avx2 = 1, Avx512 = 2 };
void set_engine_isa(EngineIsa isa);
EngineIsa engine_isa();
/// The best build this CPU can run (what engine_isa() is without NPUSIM_ENGINE_ISA).
EngineIsa best_engine_isa();
const char* engine_isa_name(EngineIsa isa);

/// The LUT alone: value of the EW-stage LUT for an integer input (exposed for tests).
int64_t lut_lookup(const DpuLut& lut, int64_t x);
/// The LUT on the fp16 path (UNVERIFIED encoding): LUT_LE/LO_START/END hold fp32 bits, the table
/// entries fp16 bits, LUT_LE/LO_INDEX_SELECT is a signed 8-bit exponent (entry i at start + i *
/// 2^select), the under/overflow slopes are SLOPE_SCALE (int16) * 2^-SLOPE_SHIFT; fp32 arithmetic,
/// the integer table's priority rules; NaN passes through.
float lut_lookup_f(const DpuLut& lut, float x);

}  // namespace npu::rknpu
