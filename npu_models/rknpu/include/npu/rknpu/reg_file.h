// SPDX-License-Identifier: MIT
// The per-core register file as the blocks see it: one 32-bit word per core-relative offset, plus
// the DPU LUT RAM behind the LUT_ACCESS_CFG / LUT_ACCESS_DATA port (a data write stores one entry
// and advances the address, so the table survives a whole regcmd stream of port writes).
#pragma once
#include <array>
#include <cstdint>

#include "hw/regdb_types.h"
#include "hw/rknpu_regs.h"

namespace npu::rknpu {

/// LUT table sizes. UNVERIFIED: the NVDLA SDP sizes (65-entry LE, 257-entry LO, 16-bit entries);
/// LUT_ADDR is 10 bits wide, so larger tables cannot be ruled out.
inline constexpr uint32_t kLutLeEntries = 65;
inline constexpr uint32_t kLutLoEntries = 257;

class RegFile {
   public:
    static constexpr uint32_t kWindowBytes = 0x10000;
    uint32_t read(uint32_t offset) const { return regs_[(offset & (kWindowBytes - 1)) >> 2]; }
    void write(uint32_t offset, uint32_t value) {
        offset &= kWindowBytes - 1;
        regs_[offset >> 2] = value;
        if (offset == hw::rknpu::DPU_LUT_ACCESS_DATA::kOffset) lut_port_write(value);
    }
    uint32_t field(uint16_t offset, hw::Field f) const { return f.get(read(offset)); }
    void clear() {
        regs_.fill(0);
        lut_le_.fill(0);
        lut_lo_.fill(0);
    }
    const std::array<int16_t, kLutLeEntries>& lut_le() const { return lut_le_; }
    const std::array<int16_t, kLutLoEntries>& lut_lo() const { return lut_lo_; }

   private:
    /// UNVERIFIED encodings: LUT_ACCESS_TYPE 1 = write (0 = read, a data write is then ignored),
    /// LUT_TABLE_ID 0 = LE, 1 = LO; addresses past the table end are dropped.
    void lut_port_write(uint32_t value) {
        using namespace hw::rknpu;
        uint32_t& cfg = regs_[DPU_LUT_ACCESS_CFG::kOffset >> 2];
        if (DPU_LUT_ACCESS_CFG::LUT_ACCESS_TYPE.get(cfg) != 1) return;
        const uint32_t addr = DPU_LUT_ACCESS_CFG::LUT_ADDR.get(cfg);
        const auto entry = static_cast<int16_t>(static_cast<uint16_t>(value & 0xffffu));
        if (DPU_LUT_ACCESS_CFG::LUT_TABLE_ID.get(cfg) == 0) {
            if (addr < kLutLeEntries) lut_le_[addr] = entry;
        } else if (addr < kLutLoEntries) {
            lut_lo_[addr] = entry;
        }
        cfg = (cfg & ~DPU_LUT_ACCESS_CFG::LUT_ADDR.mask()) | DPU_LUT_ACCESS_CFG::LUT_ADDR.put(addr + 1);
    }

    std::array<uint32_t, kWindowBytes / 4> regs_{};
    std::array<int16_t, kLutLeEntries> lut_le_{};
    std::array<int16_t, kLutLoEntries> lut_lo_{};
};

}  // namespace npu::rknpu
