// SPDX-License-Identifier: MIT
#include "drv/regcmd/builder.h"

#include <fmt/format.h>

namespace drv::regcmd {

using namespace hw;
using namespace hw::rknpu;

namespace {
const RegInfo& lookup(const std::string& reg) {
    const RegInfo* r = find_reg(reg);
    if (!r) throw EmitError(fmt::format("regcmd: no register '{}' in the register database", reg));
    if (r->access == Access::RO) throw EmitError(fmt::format("regcmd: register {} is read-only", reg));
    return *r;
}
uint32_t target_of(const RegInfo& r) { return block_info(r.block).target; }
}  // namespace

void Builder::write(const std::string& reg, uint32_t value) {
    const RegInfo& r = lookup(reg);
    if (target_of(r) > 0xffff)
        throw EmitError(fmt::format("regcmd: block {} (target 0x{:x}) is not reachable through a 16-bit regcmd target",
                                    r.block_name, target_of(r)));
    words_.push_back(reg_write(target_of(r), r.offset, value).encode());
}

void Builder::write_fields(const std::string& reg, std::initializer_list<FieldValue> fields) {
    const RegInfo& r = lookup(reg);
    uint32_t v = 0;
    for (const FieldValue& fv : fields) {
        const FieldInfo* f = find_field(r, fv.name);
        if (!f) throw EmitError(fmt::format("regcmd: register {}.{} has no field {}", r.block_name, r.name, fv.name));
        if (!f->field().fits(fv.value))
            throw EmitError(fmt::format("regcmd: field overflow: {}.{}.{} (offset 0x{:04x}, shift {}) limit 0x{:x}, value 0x{:x}",
                                        r.block_name, r.name, fv.name, r.offset, f->low, f->field().max(), fv.value));
        v |= f->field().put(static_cast<uint32_t>(fv.value));
    }
    write(reg, v);
}

void Builder::end_task(uint32_t next_regcmd_addr, uint32_t next_amount, uint32_t enable_mask) {
    write("PC_BASE_ADDRESS", next_regcmd_addr);
    write("PC_REGISTER_AMOUNTS", next_amount);
    words_.push_back(RegCmd{opflag::SYNC | opflag::WRITE, 0, 0}.encode());
    words_.push_back(RegCmd{opflag::OP_EN | opflag::WRITE, enable_mask, PC_OPERATION_ENABLE::kOffset}.encode());
}

void Builder::align(size_t entries) {
    while (entries && words_.size() % entries) words_.push_back(0);
}

std::vector<uint64_t> link_tasks(const std::vector<std::vector<uint64_t>>& bodies, uint64_t base_addr, int scale,
                                 uint32_t enable_mask, std::vector<size_t>* starts) {
    constexpr size_t kAlignEntries = 8;  // 64-byte task blocks
    std::vector<size_t> begin(bodies.size());
    size_t at = 0;
    for (size_t i = 0; i < bodies.size(); ++i) {
        begin[i] = at;
        const size_t n = bodies[i].size() + static_cast<size_t>(kTaskEndEntries);
        at += (n + kAlignEntries - 1) / kAlignEntries * kAlignEntries;
    }
    Builder b;
    for (size_t i = 0; i < bodies.size(); ++i) {
        for (uint64_t w : bodies[i]) b.words_.push_back(w);
        uint32_t next_addr = 0, next_amount = 0;
        if (i + 1 < bodies.size()) {
            const uint64_t a = base_addr + 8 * begin[i + 1];
            if (a > 0xffffffffu) throw EmitError("regcmd: task chain crosses the 32-bit regcmd address window");
            next_addr = static_cast<uint32_t>(a);
            next_amount = pc_data_amount(bodies[i + 1].size() + static_cast<size_t>(kTaskEndEntries), scale);
        }
        b.end_task(next_addr, next_amount, enable_mask);
        b.align(kAlignEntries);
    }
    if (starts) *starts = begin;
    return b.words_;
}

uint32_t pc_data_amount(size_t entries, int scale) {
    const size_t units = (entries + static_cast<size_t>(scale) - 1) / static_cast<size_t>(scale);
    return units == 0 ? 0 : static_cast<uint32_t>(units - 1);
}

}  // namespace drv::regcmd
