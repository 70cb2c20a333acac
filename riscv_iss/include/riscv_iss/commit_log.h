// SPDX-License-Identifier: MIT
// Spike-style commit log ("core   0: 3 0xPC (0xINSN) x5  0x... mem 0x... 0x...") and the per-function
// cycle/instret profile built from ELF function symbols. Both hang off Hart::on_commit.
#pragma once
#include <cstdint>
#include <ostream>
#include <vector>

#include "riscv_iss/elf_image.h"
#include "riscv_iss/hart.h"

namespace iss {

class CommitLog {
   public:
    explicit CommitLog(std::ostream& out) : out_(out) {}
    /// Called after each retired instruction (Hart::on_commit).
    void on_commit(const Hart& h, uint32_t pc, const DecodedInsn& d);
    /// Called for every trap (Hart::on_trap): Spike's "core   0: exception trap_<name>, epc 0x..." line and,
    /// for traps that carry one, "core   0:           tval 0x...".
    void on_trap(uint32_t cause, uint32_t epc, uint32_t tval);

   private:
    std::ostream& out_;
};

class Profiler {
   public:
    explicit Profiler(std::vector<ElfSymbol> functions);
    void on_commit(const Hart& h, uint32_t pc);
    /// One line per function with activity, most cycles first: "cycles instret share% name".
    void write(std::ostream& out) const;

   private:
    struct Entry {
        uint64_t cycles = 0, instret = 0;
    };
    std::size_t lookup(uint32_t pc);
    std::vector<ElfSymbol> functions_;
    std::vector<Entry> entries_;  // one per function, plus one for "(unknown)"
    std::size_t last_ = 0;
    uint64_t last_cycles_ = 0;
};

}  // namespace iss
