// SPDX-License-Identifier: MIT
#include "trace/regcmd_disasm.h"

#include <fmt/format.h>

#include "hw/regdb.h"

namespace trace {

using namespace hw;
using namespace hw::rknpu;

std::string disasm_entry(const RegCmd& cmd) {
    if (cmd.is_nop()) return "NOP";
    if (cmd.is_op_enable() && cmd.target() == 0)
        return fmt::format("OP_ENABLE blocks=0x{:02x} (reg 0x{:04x})", cmd.value, cmd.offset);
    if (cmd.is_sync() && cmd.target() == 0) return fmt::format("SYNC (op 0x{:04x}) before op_en", cmd.op);
    const BlockInfo* blk = block_of_target(cmd.target());
    const RegInfo* reg = find_reg(cmd.offset);
    std::string head;
    if (!reg) {
        head = fmt::format("{}.<unknown 0x{:04x}> = 0x{:08x}", blk ? blk->name : "?", cmd.offset, cmd.value);
        return head;
    }
    head = fmt::format("{}.{} = 0x{:08x}", reg->block_name, reg->name, cmd.value);
    if (!blk || std::string(blk->name) != reg->block_name)
        head += fmt::format("  [target 0x{:04x} does not match block {}]", cmd.target(), reg->block_name);
    if (!cmd.is_write()) head += fmt::format("  [op 0x{:04x} without write flag]", cmd.op);
    std::string fields;
    for (int i = 0; i < reg->field_count; ++i) {
        const FieldInfo& f = reg->fields[i];
        if (f.reserved) continue;
        const uint32_t v = f.field().get(cmd.value);
        if (reg->field_count > 1 && v == 0) continue;
        fields += fmt::format(" {}={}", f.name, v);
    }
    const uint32_t rsv = cmd.value & reg->reserved_mask();
    if (rsv) fields += fmt::format(" reserved=0x{:x}", rsv);
    return fields.empty() ? head : head + " " + fields;
}

std::string disasm_buffer(const std::vector<uint64_t>& words) {
    std::string out;
    int task = 0;
    bool in_task = false;
    for (size_t i = 0; i < words.size(); ++i) {
        const RegCmd cmd = RegCmd::decode(words[i]);
        if (!in_task && !cmd.is_nop()) {
            out += fmt::format("task {}:\n", task);
            in_task = true;
        }
        out += fmt::format("  [{:4}] {:016x}  {}{}\n", i, words[i], disasm_entry(cmd), in_task ? "" : "  (padding)");
        if (in_task && cmd.target() == 0 && cmd.is_op_enable()) {
            ++task;
            in_task = false;
        }
    }
    if (in_task) out += fmt::format("  task {} has no op-enable entry (truncated)\n", task);
    return out;
}

}  // namespace trace
