// SPDX-License-Identifier: MIT
// Look-ups over the generated register tables (sorted by offset, so offset search is an index).
#include "hw/regdb.h"

#include "hw/profile.h"

#include <array>
#include <cstring>
#include <deque>
#include <map>
#include <stdexcept>
#include <unordered_map>

namespace hw::rknpu {

namespace {

constexpr RegTable kTables[] = {
    {kRegs, kRegCount}, {kRegs_rk356x, kRegCount_rk356x}, {kRegs_rv1106, kRegCount_rv1106}, {kRegs_rk3562, kRegCount_rk3562}};
static_assert(sizeof(kTables) / sizeof(kTables[0]) == kGenerationCount, "one table per generation");

/// Offset -> register, one slot per 32-bit word of the 64 KiB window: the PC decodes every
/// fetched entry through this, so it must be a plain index.
using OffsetIndex = std::array<int16_t, 0x4000>;
const OffsetIndex& offset_table(Generation g) {
    static const std::array<OffsetIndex, kGenerationCount> t = [] {
        std::array<OffsetIndex, kGenerationCount> all{};
        for (int gi = 0; gi < kGenerationCount; ++gi) {
            all[gi].fill(-1);
            for (int i = 0; i < kTables[gi].count; ++i)
                all[gi][kTables[gi].regs[i].offset >> 2] = static_cast<int16_t>(i);
        }
        return all;
    }();
    return t[static_cast<size_t>(g)];
}

// Hashed by name, keys viewing the names kept beside them: a lookup by string_view allocates
// nothing (the decoders look fields up by name for every task).
struct NameTable {
    std::deque<std::string> names;
    std::unordered_map<std::string_view, const RegInfo*> by_name;
    void add(std::string n, const RegInfo* r) {
        names.push_back(std::move(n));
        by_name[names.back()] = r;
    }
};
const NameTable& name_table(Generation g) {
    static const std::array<NameTable, kGenerationCount> t = [] {
        std::array<NameTable, kGenerationCount> all;
        for (int gi = 0; gi < kGenerationCount; ++gi)
            for (const RegInfo& r : kTables[gi]) {
                all[gi].add(std::string(r.block_name) + "." + r.name, &r);
                all[gi].add(std::string(r.block_name) + "_" + r.name, &r);
            }
        return all;
    }();
    return t[static_cast<size_t>(g)];
}

}  // namespace

std::optional<Generation> generation_by_name(const std::string& name) {
    for (int i = 0; i < kGenerationCount; ++i)
        if (name == kGenerationNames[i]) return static_cast<Generation>(i);
    return std::nullopt;
}

Generation soc_generation(const hw::SocProfile& soc) {
    return generation_by_name(soc.npu.regdb_generation.value).value_or(Generation::RK3588);
}

const char* generation_name(Generation g) { return kGenerationNames[static_cast<int>(g)]; }

RegTable reg_table(Generation g) { return kTables[static_cast<int>(g)]; }

const RegInfo* find_reg(uint16_t offset, Generation g) {
    if (offset & 3) return nullptr;
    const int16_t i = offset_table(g)[offset >> 2];
    return i < 0 ? nullptr : &kTables[static_cast<int>(g)].regs[i];
}
const RegInfo* find_reg(uint16_t offset) { return find_reg(offset, Generation::RK3588); }

const RegInfo* find_reg(std::string_view name, Generation g) {
    const auto& m = name_table(g).by_name;
    auto it = m.find(name);
    return it == m.end() ? nullptr : it->second;
}
const RegInfo* find_reg(std::string_view name) { return find_reg(name, Generation::RK3588); }

const BlockInfo* block_at(uint16_t offset) {
    for (const BlockInfo& b : kBlocks)
        if (offset >= b.base && offset < b.base + b.size) return &b;
    return nullptr;
}

const BlockInfo* block_of_target(uint32_t target) {
    uint32_t id = target & ~0xffu;
    for (const BlockInfo& b : kBlocks)
        if (b.target == id) return &b;
    return nullptr;
}

const BlockInfo& block_info(Block b) { return kBlocks[static_cast<int>(b)]; }

const FieldInfo* find_field(const RegInfo& reg, std::string_view name) {
    for (int i = 0; i < reg.field_count; ++i)
        if (name == reg.fields[i].name) return &reg.fields[i];
    return nullptr;
}

const EnumInfo* field_enum(const FieldInfo& f) { return f.enum_index < 0 ? nullptr : &kEnums[f.enum_index]; }

hw::Field field_of(Generation g, const char* reg, const char* field) {
    const RegInfo* r = find_reg(reg, g);
    const FieldInfo* f = r ? find_field(*r, field) : nullptr;
    if (!f)
        throw std::logic_error(std::string("regdb: no field ") + reg + "." + field + " on " + generation_name(g));
    return f->field();
}

}  // namespace hw::rknpu
