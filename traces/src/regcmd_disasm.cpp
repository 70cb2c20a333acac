// SPDX-License-Identifier: MIT
#include "trace/regcmd_disasm.h"

#include <fmt/format.h>

#include "hw/regdb.h"

namespace trace {

using namespace hw;
using namespace hw::rknpu;

namespace {

/// "NAME=value" with the value's meaning: its enum name, its count (minus-one fields) or bytes
/// (fields in units); "?" marks a value the enum does not list, "*" an assumed meaning.
std::string field_text(const FieldInfo& f, uint32_t v) {
    std::string s = fmt::format("{}={}", f.name, v);
    if (const EnumInfo* e = field_enum(f)) {
        const EnumValueInfo* ev = e->find(v);
        s = ev ? fmt::format("{}={}{}", f.name, ev->name, ev->verified ? "" : "*") : s + "(?)";
    } else if (f.minus_one) {
        s += fmt::format(" ({})", uint64_t{v} + 1);
    } else if (f.unit > 1) {
        s += fmt::format(" ({} B)", uint64_t{v} * f.unit);
    }
    if (!f.verified) s += "*";
    return s;
}

}  // namespace

std::string disasm_entry(const RegCmd& cmd, Generation g) {
    if (cmd.is_nop()) return "NOP";
    if (cmd.is_op_enable() && cmd.target() == 0)
        return fmt::format("OP_ENABLE blocks=0x{:02x} (reg 0x{:04x})", cmd.value, cmd.offset);
    if (cmd.is_sync() && cmd.target() == 0) return fmt::format("SYNC (op 0x{:04x}) before op_en", cmd.op);
    const BlockInfo* blk = block_of_target(cmd.target());
    const RegInfo* reg = find_reg(cmd.offset, g);
    if (!reg) return fmt::format("{}.<unknown 0x{:04x}> = 0x{:08x}", blk ? blk->name : "?", cmd.offset, cmd.value);
    std::string head = fmt::format("{}.{} = 0x{:08x}", reg->block_name, reg->name, cmd.value);
    if (!blk || std::string(blk->name) != reg->block_name)
        head += fmt::format("  [target 0x{:04x} does not match block {}]", cmd.target(), reg->block_name);
    if (!cmd.is_write()) head += fmt::format("  [op 0x{:04x} without write flag]", cmd.op);
    std::string fields;
    for (int i = 0; i < reg->field_count; ++i) {
        const FieldInfo& f = reg->fields[i];
        if (f.reserved) continue;
        const uint32_t v = f.field().get(cmd.value);
        if (reg->field_count > 1 && v == 0) continue;
        fields += " " + field_text(f, v);
    }
    const uint32_t rsv = cmd.value & reg->reserved_mask();
    if (rsv) fields += fmt::format(" reserved=0x{:x}", rsv);
    std::string out = fields.empty() ? head : head + " " + fields;
    if (!reg->verified && cmd.value != 0) out += "  [meaning not public: not interpreted]";
    return out;
}

std::string disasm_entry(const RegCmd& cmd) { return disasm_entry(cmd, Generation::RK3588); }

DisasmStats disasm_stats(const std::vector<uint64_t>& words, Generation g) {
    DisasmStats s;
    for (uint64_t w : words) {
        const RegCmd cmd = RegCmd::decode(w);
        ++s.entries;
        if (cmd.is_nop()) {
            ++s.nops;
            continue;
        }
        if (cmd.target() == 0 && (cmd.is_op_enable() || cmd.is_sync())) continue;
        const RegInfo* reg = find_reg(cmd.offset, g);
        if (!reg) {
            ++s.unknown;
            continue;
        }
        if (!reg->verified) ++s.unverified;
    }
    return s;
}

std::string disasm_buffer(const std::vector<uint64_t>& words, Generation g) {
    std::string out;
    int task = 0;
    bool in_task = false;
    for (size_t i = 0; i < words.size(); ++i) {
        const RegCmd cmd = RegCmd::decode(words[i]);
        if (!in_task && !cmd.is_nop()) {
            out += fmt::format("task {}:\n", task);
            in_task = true;
        }
        // A NOP inside a task sits in a PC-entry slot (Mesa and mtx512 write 0 instead of
        // PC_BASE_ADDRESS for the last task of a chain).
        const char* note = in_task ? (cmd.is_nop() ? "  (no next task: chain end)" : "") : "  (padding)";
        out += fmt::format("  [{:4}] {:016x}  {}{}\n", i, words[i], disasm_entry(cmd, g), note);
        if (in_task && cmd.target() == 0 && cmd.is_op_enable()) {
            ++task;
            in_task = false;
        }
    }
    if (in_task) out += fmt::format("  task {} has no op-enable entry (truncated)\n", task);
    return out;
}

std::string disasm_buffer(const std::vector<uint64_t>& words) { return disasm_buffer(words, Generation::RK3588); }

}  // namespace trace
