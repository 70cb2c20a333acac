// SPDX-License-Identifier: MIT
// Look-ups over the generated RKNPU register tables: by offset, by block, by regcmd target id, per
// register-map generation (regdb <generations>; a profile names its own in npu.regdb_generation).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "hw/rknpu_regs.h"

namespace hw {
struct SocProfile;
}

namespace hw::rknpu {

/// The register-map generation of a loaded profile (validated at load: always one of them).
Generation soc_generation(const hw::SocProfile& soc);
/// The generation named `name` ("rk3588", "rk356x", ...), or nullopt.
std::optional<Generation> generation_by_name(const std::string& name);
const char* generation_name(Generation g);

/// The registers of a generation, sorted by offset.
struct RegTable {
    const RegInfo* regs;
    int count;
    const RegInfo* begin() const { return regs; }
    const RegInfo* end() const { return regs + count; }
};
RegTable reg_table(Generation g);

/// The register at a core-relative offset, or nullptr (default generation: kRegs).
const RegInfo* find_reg(uint16_t offset);
const RegInfo* find_reg(uint16_t offset, Generation g);
/// The register named "BLOCK.REG" or "BLOCK_REG", or nullptr.
const RegInfo* find_reg(std::string_view name);
const RegInfo* find_reg(std::string_view name, Generation g);
/// The block whose 4 KiB window contains offset, or nullptr.
const BlockInfo* block_at(uint16_t offset);
/// The block of a one-hot regcmd target id (flags in the low byte ignored), or nullptr.
const BlockInfo* block_of_target(uint32_t target);
const BlockInfo& block_info(Block b);
/// Field by name within a register, or nullptr.
const FieldInfo* find_field(const RegInfo& reg, std::string_view name);
/// The enum a field's values are named by, or nullptr.
const EnumInfo* field_enum(const FieldInfo& f);
/// Field `field` of register `reg` on generation g; throws std::logic_error when absent (a
/// programming error: callers name registers and fields the regdb defines).
hw::Field field_of(Generation g, const char* reg, const char* field);

}  // namespace hw::rknpu
