// SPDX-License-Identifier: MIT
// Translated basic blocks of the block engine (src/block_translate.cpp builds them, src/block_engine.cpp
// runs them): pre-decoded operations in threaded form, the cycle model's static costs summed per block,
// chaining to successor blocks, and the cache that owns them.
#pragma once
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "riscv_iss/decoded_insn.h"

namespace iss {

/// Operation kinds of the threaded code. Straight-line kinds continue with the next operation; the kinds
/// from kBeq on end a block.
enum class BKind : uint8_t {
    kAdd,
    kSub,
    kSll,
    kSlt,
    kSltu,
    kXor,
    kSrl,
    kSra,
    kOr,
    kAnd,
    kMul,
    kMulh,
    kMulhsu,
    kMulhu,
    kDiv,
    kDivu,
    kRem,
    kRemu,
    kAddi,
    kSlti,
    kSltiu,
    kXori,
    kOri,
    kAndi,
    kSlli,
    kSrli,
    kSrai,
    kLi,
    kNop,
    kLb,
    kLh,
    kLw,
    kLbu,
    kLhu,
    kSb,
    kSh,
    kSw,
    kFlw,
    kFsw,
    kPure,  ///< exec function that reads no counter and touches no memory (F arithmetic): no sync needed
    kSync,  ///< exec function run with exact instret/cycles (CSR, F loads/stores, atomics)
    kBeq,
    kBne,
    kBlt,
    kBge,
    kBltu,
    kBgeu,
    kJal,
    kJalr,
    kEndSync,      ///< exec function that ends the block (system instructions, illegal encodings, fetch faults)
    kFallthrough,  ///< pseudo-operation after the last instruction of a block cut without a control transfer
    kCount
};

/// One threaded operation (16 bytes): handler address, immediate, operands.
struct BOp {
    const void* label;
    int32_t imm;  ///< immediate; kLi: the value; kJal: the link value
    uint8_t rd, rs1, rs2;
    BKind kind;
};

/// Cold per-instruction data, used by slow paths only.
struct BInfo {
    uint32_t pc;
    uint32_t ahead_cycles;  ///< static cycles of the instructions after this one in the block
    DecodedInsn d;
};

/// A basic block: n instructions from pc, charged as a whole on entry (instret += n, cycles += static
/// costs incl. the hazards between its own instructions); only the first instruction's hazard against
/// the previous block and the dynamic costs (taken branch, wait states, divider) are added at run time.
struct Block {
    uint32_t pc = 0;
    uint32_t n = 0;
    uint64_t cycles = 0;  ///< static cycles of all n instructions (without the first one's entry hazard)
    uint64_t bound = 0;   ///< worst case of the cycles the first n-1 instructions add after the entry hazard
    uint8_t first_hz1 = 0, first_hz2 = 0, first_jalr_rs = 0;  ///< the first instruction's hazard operands
    uint8_t last_load_rd = 0, last_rd = 0;                    ///< the last instruction's (hazard state on exit)
    uint32_t last_pc = 0;                                     ///< pc of the last instruction
    uint32_t link = 0;                                        ///< jalr: the link value (pc + len)
    uint32_t next_pc[2] = {0, 0};                             ///< [0] taken / jump target, [1] fall-through
    Block* next[2] = {nullptr, nullptr};                      ///< chained successors (lazily resolved)
    uint32_t next_pen[2] = {0, 0};                            ///< their entry hazard after this block
    uint32_t taken_extra = 0;                                 ///< branch: taken - not-taken cycles
    BOp* ops = nullptr;                                       ///< n operations (+ a kFallthrough)
    BInfo* info = nullptr;                                    ///< n entries
};

/// Owns all blocks in an arena; a flush drops everything at once (blocks are only referenced by the cache
/// itself, by chain links and by the running engine, which never holds one across a flush).
struct BlockCache {
    static constexpr uint32_t kMaxInsns = 48;            ///< instructions per block
    static constexpr std::size_t kChunk = 1u << 20;      ///< arena chunk bytes
    static constexpr std::size_t kMaxBytes = 64u << 20;  ///< arena size that triggers a flush
    static constexpr uint32_t kFastSize = 4096;          ///< direct-mapped pc -> block cache entries

    Block* lookup(uint32_t pc) {
        Block*& f = fast[(pc >> 1) & (kFastSize - 1)];
        if (f != nullptr && f->pc == pc) return f;
        auto it = map.find(pc);
        if (it == map.end()) return nullptr;
        f = it->second;
        return f;
    }
    void insert(Block* b) {
        map[b->pc] = b;
        fast[(b->pc >> 1) & (kFastSize - 1)] = b;
    }
    void* alloc(std::size_t bytes);
    bool full() const { return used_total + kChunk > kMaxBytes; }
    void clear();

    std::unordered_map<uint32_t, Block*> map;
    Block* fast[kFastSize] = {};
    std::vector<std::unique_ptr<char[]>> chunks;
    std::size_t chunk_used = kChunk;  // bytes used of chunks.back()
    std::size_t used_total = 0;
    uint32_t max_wait = 0;                 ///< the wait-state bound the blocks were translated with
    const void* const* labels = nullptr;   ///< handler addresses of the engine, indexed by BKind
    uint64_t translated = 0, flushes = 0;  ///< statistics
};

}  // namespace iss
