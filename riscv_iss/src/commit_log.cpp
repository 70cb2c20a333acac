// SPDX-License-Identifier: MIT
// Commit log in Spike's --log-commits format and the per-function profiler.
#include "riscv_iss/commit_log.h"

#include <fmt/format.h>

#include <algorithm>

#include "decoder.h"
#include "riscv_iss_isa_table.inc"

namespace iss {
namespace {
enum class Dest { kNone, kX, kF };

Dest dest_of(Fmt f) {
    switch (f) {
        case Fmt::kR:
        case Fmt::kI:
        case Fmt::kISH:
        case Fmt::kU:
        case Fmt::kJ:
        case Fmt::kCSR:
        case Fmt::kRFX:
        case Fmt::kRFXX:
            return Dest::kX;
        case Fmt::kIF:
        case Fmt::kR4:
        case Fmt::kRF:
        case Fmt::kRF1:
        case Fmt::kRXF:
            return Dest::kF;
        default:
            return Dest::kNone;
    }
}
}  // namespace

void CommitLog::on_commit(const Hart& h, uint32_t pc, const DecodedInsn& d) {
    const OpcodeInfo& row = Decoder::info(d.op);
    const OpcodeInfo& base = Decoder::info(static_cast<uint16_t>(row.exec_op));
    std::string line =
        fmt::format("core   0: {} 0x{:08x} (0x{:0{}x})", static_cast<int>(h.priv_), pc, d.raw, d.len == 2 ? 4 : 8);
    const Dest dest = dest_of(base.fmt);
    if (dest == Dest::kX && d.rd != 0 && d.rd != kXSink) line += fmt::format(" x{:<2d} 0x{:08x}", d.rd, h.x_[d.rd]);
    if (dest == Dest::kF) line += fmt::format(" f{:<2d} 0x{:08x}", d.rd, h.f_[d.rd]);
    if (base.fmt == Fmt::kS || base.fmt == Fmt::kSF) {
        const uint32_t addr = h.x_[d.rs1] + static_cast<uint32_t>(d.imm);
        uint32_t v = base.fmt == Fmt::kSF ? h.f_[d.rs2] : h.x_[d.rs2];
        const int width = base.op == Op::kSb ? 2 : base.op == Op::kSh ? 4 : 8;
        if (width < 8) v &= (1u << (width * 4)) - 1;
        line += fmt::format(" mem 0x{:08x} 0x{:0{}x}", addr, v, width);
    }
    line += '\n';
    out_ << line;
}

void CommitLog::on_trap(uint32_t cause_value, uint32_t epc, uint32_t tval) {
    // Trap names and which traps print a tval line: Spike's riscv/trap.h (riscv-isa-sim).
    static const char* const kNames[] = {"trap_instruction_address_misaligned",
                                         "trap_instruction_access_fault",
                                         "trap_illegal_instruction",
                                         "trap_breakpoint",
                                         "trap_load_address_misaligned",
                                         "trap_load_access_fault",
                                         "trap_store_address_misaligned",
                                         "trap_store_access_fault",
                                         "trap_user_ecall",
                                         "trap_supervisor_ecall",
                                         nullptr,
                                         "trap_machine_ecall"};
    const uint32_t code = cause_value & 0x7fffffffu;
    std::string line;
    if (cause_value & cause::kInterrupt) {
        line = fmt::format("core   0: exception interrupt #{}, epc 0x{:08x}\n", code, epc);
    } else {
        const char* name = code < std::size(kNames) ? kNames[code] : nullptr;
        line = name ? fmt::format("core   0: exception {}, epc 0x{:08x}\n", name, epc)
                    : fmt::format("core   0: exception trap_#{}, epc 0x{:08x}\n", code, epc);
        if (code != cause::kEcallU && code != 9 && code != cause::kEcallM)
            line += fmt::format("core   0:           tval 0x{:08x}\n", tval);
    }
    out_ << line;
}

Profiler::Profiler(std::vector<ElfSymbol> functions) : functions_(std::move(functions)) {
    entries_.resize(functions_.size() + 1);
}

std::size_t Profiler::lookup(uint32_t pc) {
    // Function containing pc: the last symbol at or below pc (sizes of hand-written asm are often 0).
    auto it = std::upper_bound(functions_.begin(), functions_.end(), pc,
                               [](uint32_t p, const ElfSymbol& s) { return p < s.addr; });
    if (it == functions_.begin()) return functions_.size();
    return static_cast<std::size_t>(it - functions_.begin()) - 1;
}

void Profiler::on_commit(const Hart& h, uint32_t pc) {
    std::size_t idx = last_;
    const bool in_last = idx < functions_.size() && pc >= functions_[idx].addr &&
                         (idx + 1 == functions_.size() || pc < functions_[idx + 1].addr);
    if (!in_last) idx = last_ = lookup(pc);
    entries_[idx].cycles += h.cycles_ - last_cycles_;
    entries_[idx].instret += 1;
    last_cycles_ = h.cycles_;
}

void Profiler::write(std::ostream& out) const {
    std::vector<std::size_t> order;
    uint64_t total = 0;
    for (std::size_t i = 0; i < entries_.size(); ++i) {
        if (entries_[i].instret != 0) order.push_back(i);
        total += entries_[i].cycles;
    }
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return entries_[a].cycles > entries_[b].cycles; });
    out << fmt::format("{:>14} {:>14} {:>7}  {}\n", "cycles", "instret", "share", "function");
    for (std::size_t i : order) {
        const double share = total ? 100.0 * static_cast<double>(entries_[i].cycles) / static_cast<double>(total) : 0.0;
        out << fmt::format("{:>14} {:>14} {:>6.2f}%  {}\n", entries_[i].cycles, entries_[i].instret, share,
                           i < functions_.size() ? functions_[i].name : "(unknown)");
    }
}

}  // namespace iss
