// SPDX-License-Identifier: MIT
// Look-ups over the generated register tables (sorted by offset, so offset search is binary).
#include "hw/regdb.h"

#include <algorithm>
#include <array>
#include <map>
#include <cstring>

namespace hw::rknpu {

namespace {
/// Offset -> register, one slot per 32-bit word of the 64 KiB window: the PC decodes every
/// fetched entry through this, so it must be a plain index.
const std::array<int16_t, 0x4000>& offset_table() {
    static const std::array<int16_t, 0x4000> t = [] {
        std::array<int16_t, 0x4000> a{};
        a.fill(-1);
        for (int i = 0; i < kRegCount; ++i) a[kRegs[i].offset >> 2] = static_cast<int16_t>(i);
        return a;
    }();
    return t;
}
}  // namespace

const RegInfo* find_reg(uint16_t offset) {
    if (offset & 3) return nullptr;
    const int16_t i = offset_table()[offset >> 2];
    return i < 0 ? nullptr : &kRegs[i];
}

const RegInfo* find_reg(const std::string& name) {
    static const std::map<std::string, const RegInfo*> by_name = [] {
        std::map<std::string, const RegInfo*> m;
        for (const RegInfo& r : kRegs) {
            m[std::string(r.block_name) + "." + r.name] = &r;
            m[std::string(r.block_name) + "_" + r.name] = &r;
        }
        return m;
    }();
    auto it = by_name.find(name);
    return it == by_name.end() ? nullptr : it->second;
}

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

const FieldInfo* find_field(const RegInfo& reg, const std::string& name) {
    for (int i = 0; i < reg.field_count; ++i)
        if (name == reg.fields[i].name) return &reg.fields[i];
    return nullptr;
}

}  // namespace hw::rknpu
