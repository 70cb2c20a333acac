// SPDX-License-Identifier: MIT
// The 64-bit RKNPU register-command ("regcmd") entry format (hardware-facts.md Part I §1.2):
//   bits 63..48  op/target (one-hot block id | op flags), bits 47..16 value, bits 15..0 offset.
#pragma once
#include <cstdint>

#include "hw/rknpu_regs.h"

namespace hw::rknpu {

struct RegCmd {
    uint32_t op = 0;  ///< 16-bit op/target field: block target id | opflag bits
    uint32_t value = 0;
    uint16_t offset = 0;

    constexpr uint64_t encode() const {
        return (static_cast<uint64_t>(op & 0xffffu) << 48) | (static_cast<uint64_t>(value) << 16) | offset;
    }
    static constexpr RegCmd decode(uint64_t w) {
        return RegCmd{static_cast<uint32_t>(w >> 48), static_cast<uint32_t>(w >> 16), static_cast<uint16_t>(w)};
    }
    constexpr bool is_write() const { return (op & opflag::WRITE) != 0; }
    constexpr bool is_op_enable() const { return (op & opflag::OP_EN) != 0; }
    constexpr bool is_sync() const { return (op & opflag::SYNC) != 0; }
    /// The one-hot block id without op flags (0 for the block-less PC entries 0x0041/0x0081).
    constexpr uint32_t target() const { return op & ~0xffu & 0xffffu; }
    constexpr bool is_nop() const { return op == 0 && value == 0 && offset == 0; }
    friend constexpr bool operator==(const RegCmd& a, const RegCmd& b) {
        return a.op == b.op && a.value == b.value && a.offset == b.offset;
    }
};

/// A register write to block `target` (one of hw::rknpu::target::*).
constexpr RegCmd reg_write(uint32_t block_target, uint16_t offset, uint32_t value) {
    return RegCmd{block_target | opflag::WRITE, value, offset};
}

/// Number of entries that end every task (vendor RKNPU_PC_DATA_EXTRA_AMOUNT).
inline constexpr int kTaskEndEntries = 4;
/// Value the open driver writes with the final op-enable entry: RESERVED_0 = 14, OP_EN = 1, i.e.
/// the per-block enables CNA|CORE|DPU|DPU_RDMA in GLOBAL.OPERATION_ENABLE bit order.
inline constexpr uint32_t kConvOpEnableMask = 0x1d;

}  // namespace hw::rknpu
