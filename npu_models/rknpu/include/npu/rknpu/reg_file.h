// SPDX-License-Identifier: MIT
// The per-core register file as the blocks see it: one 32-bit word per core-relative offset.
#pragma once
#include <array>
#include <cstdint>

#include "hw/regdb_types.h"

namespace npu::rknpu {

class RegFile {
   public:
    static constexpr uint32_t kWindowBytes = 0x10000;
    uint32_t read(uint32_t offset) const { return regs_[(offset & (kWindowBytes - 1)) >> 2]; }
    void write(uint32_t offset, uint32_t value) { regs_[(offset & (kWindowBytes - 1)) >> 2] = value; }
    uint32_t field(uint16_t offset, hw::Field f) const { return f.get(read(offset)); }
    void clear() { regs_.fill(0); }

   private:
    std::array<uint32_t, kWindowBytes / 4> regs_{};
};

}  // namespace npu::rknpu
