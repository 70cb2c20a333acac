// SPDX-License-Identifier: MIT
// Look-ups over the generated register tables (sorted by offset, so offset search is binary).
#include "hw/regdb.h"

#include <algorithm>
#include <cstring>

namespace hw::rknpu {

const RegInfo* find_reg(uint16_t offset) {
    const RegInfo* begin = std::begin(kRegs);
    const RegInfo* end = std::end(kRegs);
    const RegInfo* it = std::lower_bound(begin, end, offset,
                                         [](const RegInfo& r, uint16_t off) { return r.offset < off; });
    return (it != end && it->offset == offset) ? it : nullptr;
}

const RegInfo* find_reg(const std::string& name) {
    for (const RegInfo& r : kRegs) {
        std::string dotted = std::string(r.block_name) + "." + r.name;
        std::string underscored = std::string(r.block_name) + "_" + r.name;
        if (name == dotted || name == underscored) return &r;
    }
    return nullptr;
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
