// SPDX-License-Identifier: MIT
// Look-ups over the generated RKNPU register tables: by offset, by block, by regcmd target id.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "hw/rknpu_regs.h"

namespace hw::rknpu {

/// The register at a core-relative offset, or nullptr.
const RegInfo* find_reg(uint16_t offset);
/// The register named "BLOCK.REG" or "BLOCK_REG", or nullptr.
const RegInfo* find_reg(const std::string& name);
/// The block whose 4 KiB window contains offset, or nullptr.
const BlockInfo* block_at(uint16_t offset);
/// The block of a one-hot regcmd target id (flags in the low byte ignored), or nullptr.
const BlockInfo* block_of_target(uint32_t target);
const BlockInfo& block_info(Block b);
/// Field by name within a register, or nullptr.
const FieldInfo* find_field(const RegInfo& reg, const std::string& name);

}  // namespace hw::rknpu
