// SPDX-License-Identifier: MIT
// Types shared by the block engines: element precisions, ALU algorithms, programming faults, the
// fp16 bit conversions, and the value cube the pipeline stages (CORE -> DPU -> PPU) hand to each
// other, with its packing to and from the NC1HWC2 memory layout (hardware-facts.md §3.4).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "hw/profile.h"
#include "hw/rknpu_regs.h"

namespace npu::rknpu {

/// Values of the PROC_PRECISION / IN_PRECISION / OUT_PRECISION fields (CNA, CORE, DPU, PPU): the
/// regdb enum `precision` (mtx512 npu_hw.h: int8 0, fp16 2, int32 4, fp32 5). Int32 and Fp32 are
/// DPU outputs (convolution/matmul results without requantization, 4 elements per 16-byte atom).
/// Int4 = 6 (TRM): the CNA/CORE input of profiles with npu.int4_macs_per_cycle > 0. UNVERIFIED
/// layout: two signed 4-bit elements per byte, even channel in the low nibble, C2 = twice the
/// int8 C2. BF16 (3) and TF32 (7) are not modelled.
enum class Precision : uint32_t {
    Int8 = static_cast<uint32_t>(hw::rknpu::enums::Precision::INT8),
    Int16 = static_cast<uint32_t>(hw::rknpu::enums::Precision::INT16),
    Fp16 = static_cast<uint32_t>(hw::rknpu::enums::Precision::FP16),
    Int4 = static_cast<uint32_t>(hw::rknpu::enums::Precision::INT4),
    Int32 = static_cast<uint32_t>(hw::rknpu::enums::Precision::INT32),
    Fp32 = static_cast<uint32_t>(hw::rknpu::enums::Precision::FP32),
};
inline bool is_float(Precision p) { return p == Precision::Fp16 || p == Precision::Fp32; }

/// DPU ALU algorithms (BS/BN/EW_ALU_ALGO). UNVERIFIED: the add encoding follows the open driver's
/// bias path (2); max = 0 and min = 1 follow the NVDLA SDP order the DPU descends from. Other
/// values are reported as faults.
/// EW_ALU_ALGO / BS_ / BN_ALU_ALGO: 0 max, 1 min, 2 add (regdb alu_algo); 3 div and 4 minus
/// (x / y, x - y with x the stage input, y the operand) are modelled on the EW stage's float path
/// only (COMPILER.md A-EWALU, UNVERIFIED order).
enum class AluAlgo : uint32_t { Max = 0, Min = 1, Add = 2, Div = 3, Minus = 4 };

/// A programming error found when the task starts: names block, register, field and value.
struct Fault {
    std::string block;
    std::string reg;
    std::string field;
    uint64_t value = 0;
    std::string message;
};

/// Bytes of one feature atom in memory: C2 elements of one pixel (hardware-facts.md §3.4). It is a
/// per-profile value (npu.c2_int8 x 1 byte): 16 B on RK3588 / RK3562 / RV1106, 8 B on RK3566/68
/// (C2 8 int8, 4 fp16/int16). kAtomBytes is the RK3588 default every `atom` parameter falls back to.
inline constexpr uint32_t kAtomBytes = 16;
/// Bytes of one element; int4 packs two elements per byte (c2_of counts them, elem_bytes gives 1).
inline uint32_t elem_bytes(Precision p) {
    return p == Precision::Int8 || p == Precision::Int4 ? 1u : (p == Precision::Int32 || p == Precision::Fp32 ? 4u : 2u);
}
/// Channels per atom: atom bytes / element bytes (16 int8, 8 int16/fp16, 32 int4 with 16-byte atoms).
inline uint32_t c2_of(Precision p, uint32_t atom = kAtomBytes) {
    return p == Precision::Int4 ? atom * 2 : atom / elem_bytes(p);
}
/// The profile's atom size: npu.c2_int8 one-byte elements (16 on RK3588, 8 on RK3566/68).
inline uint32_t atom_bytes(const hw::SocProfile& p) { return static_cast<uint32_t>(p.npu.c2_int8.value); }
const char* precision_name(Precision p);

/// IEEE binary16 <-> binary32, round to nearest even, subnormals, inf and NaN kept.
uint16_t fp32_to_fp16(float f);
float fp16_to_fp32(uint16_t h);
inline float round_to_fp16(float f) { return fp16_to_fp32(fp32_to_fp16(f)); }

/// A C x H x W cube of element values flowing between stages: integers (accumulators, int8/int16
/// data, DPU intermediates) or floats (the fp16/fp32 path). Index (c, y, x) -> (c*h + y)*w + x.
struct Cube {
    uint32_t w = 0, h = 0, c = 0;
    bool is_float = false;
    std::vector<int64_t> i;
    std::vector<float> f;

    static Cube make(uint32_t w, uint32_t h, uint32_t c, bool is_float);
    size_t size() const { return static_cast<size_t>(w) * h * c; }
    size_t idx(uint32_t ch, uint32_t y, uint32_t x) const { return (static_cast<size_t>(ch) * h + y) * w + x; }
};

/// Bytes of a compacted NC1HWC2 image (line = w atoms, surface = w*h atoms).
uint64_t cube_bytes(uint32_t w, uint32_t h, uint32_t c, Precision p, uint32_t atom = kAtomBytes);
/// Bytes of one compacted surface (w*h atoms).
inline uint64_t surface_bytes(uint32_t w, uint32_t h, uint32_t atom = kAtomBytes) {
    return static_cast<uint64_t>(w) * h * atom;
}

/// Read a compacted NC1HWC2 image: int8/int16 sign-extended into integers, fp16 into floats.
Cube unpack_cube(const std::vector<uint8_t>& img, uint32_t w, uint32_t h, uint32_t c, Precision p,
                 uint32_t atom = kAtomBytes);
/// Write a cube as a compacted NC1HWC2 image; integers saturate to the precision's range, floats
/// round to fp16. Padding channels of the last atom are zero.
std::vector<uint8_t> pack_cube(const Cube& cube, Precision p, uint32_t atom = kAtomBytes);

}  // namespace npu::rknpu
