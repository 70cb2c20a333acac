// SPDX-License-Identifier: MIT
// Block engine, execution side: threaded code (computed goto: every handler ends with its own indirect
// jump to the next operation) over translated blocks, chained block to block without returning to the
// dispatcher. instret and cycles live in registers and are charged per block on entry. Anything beyond
// the inline fast paths (MMIO, misaligned or watched accesses, CSRs, atomics, traps) runs the step
// engine's exec function for that instruction with the counters it would see there (the block's
// remaining charge taken back), and the block is left after that instruction whenever the hart needs
// attention. Results are those of the step engine (src/hart.cpp run_loop) bit for bit.
#include <cstring>

#include "block.h"
#include "riscv_iss/hart.h"
#include "semantics.h"

// Labels as values (GNU C, also clang) are what makes the dispatch threaded.
#if defined(__clang__)
#pragma clang diagnostic ignored "-Wgnu-label-as-value"
#else
#pragma GCC diagnostic ignored "-Wpedantic"
#endif

namespace iss {

uint64_t Hart::entry_penalty(const Block* b, uint8_t prev_load_rd, uint8_t prev_rd) const {
    uint64_t pen = 0;
    if (prev_load_rd != 0 && (b->first_hz1 == prev_load_rd || b->first_hz2 == prev_load_rd))
        pen += cm_.load_use_penalty;
    if (b->first_jalr_rs != 0 && b->first_jalr_rs == prev_rd) pen += cm_.jalr_use_penalty;
    return pen;
}

uint64_t Hart::exec_blocks(Block* b, uint64_t left) {
    // Indexed by BKind.
    static const void* const kLabels[] = {
        &&L_add,  &&L_sub,  &&L_sll,   &&L_slt,    &&L_sltu,    &&L_xor,        &&L_srl,  &&L_sra,  &&L_or,
        &&L_and,  &&L_mul,  &&L_mulh,  &&L_mulhsu, &&L_mulhu,   &&L_div,        &&L_divu, &&L_rem,  &&L_remu,
        &&L_addi, &&L_slti, &&L_sltiu, &&L_xori,   &&L_ori,     &&L_andi,       &&L_slli, &&L_srli, &&L_srai,
        &&L_li,   &&L_nop,  &&L_lb,    &&L_lh,     &&L_lw,      &&L_lbu,        &&L_lhu,  &&L_sb,   &&L_sh,
        &&L_sw,   &&L_flw,  &&L_fsw,   &&L_pure,   &&L_sync,    &&L_beq,        &&L_bne,  &&L_blt,  &&L_bge,
        &&L_bltu, &&L_bgeu, &&L_jal,   &&L_jalr,   &&L_endsync, &&L_fallthrough};
    static_assert(sizeof(kLabels) / sizeof(kLabels[0]) == static_cast<std::size_t>(BKind::kCount));
    if (b == nullptr) {  // initialisation call from the constructor: publish the handler table
        blocks_->labels = kLabels;
        return left;
    }

    uint32_t* const X = x_;
    uint32_t* const F = f_;
    uint64_t cyc = cycles_, ret = instret_;
    Block* nb = nullptr;
    uint64_t pen = 0;
    uint32_t addr = 0;
    // First block: the dispatcher (run_blocks) has checked budget and cost bound.
    cyc += b->cycles + entry_penalty(b, prev_load_rd_, prev_rd_);
    ret += b->n;
    left -= b->n;
    const BOp* op = b->ops;
    goto * op->label;

#define NEXT()            \
    do {                  \
        ++op;             \
        goto * op->label; \
    } while (0)
#define RR(name, expr)                                 \
    L_##name : {                                       \
        const uint32_t a = X[op->rs1], c = X[op->rs2]; \
        X[op->rd] = (expr);                            \
        NEXT();                                        \
    }
#define RI(name, expr)                                                     \
    L_##name : {                                                           \
        const uint32_t a = X[op->rs1], c = static_cast<uint32_t>(op->imm); \
        X[op->rd] = (expr);                                                \
        NEXT();                                                            \
    }
#define DIV(name, fn, dividend)                         \
    L_##name : {                                        \
        const uint32_t a = X[op->rs1], c = X[op->rs2];  \
        cyc += sem::div_extra_cycles(cm_, dividend, c); \
        X[op->rd] = sem::fn(a, c);                      \
        NEXT();                                         \
    }
    // Loads and stores: the TLB fast path of Hart::load/store inline; anything else (a page not in the TLB,
    // misaligned, watched, a page holding decoded code, MMIO) goes to the exec function (L_sync).
#define LOAD(name, T, assign, extra)                                                             \
    L_##name : {                                                                                 \
        addr = X[op->rs1] + static_cast<uint32_t>(op->imm);                                      \
        const TlbEntry& e = ld_tlb_[(addr >> 12) & (kTlbSize - 1)];                              \
        if (__builtin_expect(e.tag == (addr >> 12) && (addr & (sizeof(T) - 1)) == 0 extra, 1)) { \
            T v;                                                                                 \
            std::memcpy(&v, reinterpret_cast<const uint8_t*>(e.addend + addr), sizeof v);        \
            assign;                                                                              \
            cyc += e.wait;                                                                       \
            NEXT();                                                                              \
        }                                                                                        \
        goto L_sync;                                                                             \
    }
#define STORE(name, T, src, extra)                                                               \
    L_##name : {                                                                                 \
        addr = X[op->rs1] + static_cast<uint32_t>(op->imm);                                      \
        const TlbEntry& e = st_tlb_[(addr >> 12) & (kTlbSize - 1)];                              \
        if (__builtin_expect(e.tag == (addr >> 12) && (addr & (sizeof(T) - 1)) == 0 extra, 1)) { \
            const T v = static_cast<T>(src);                                                     \
            std::memcpy(reinterpret_cast<uint8_t*>(e.addend + addr), &v, sizeof v);              \
            cyc += e.wait;                                                                       \
            NEXT();                                                                              \
        }                                                                                        \
        goto L_sync;                                                                             \
    }
#define BRANCH(name, cond)                             \
    L_##name : {                                       \
        const uint32_t a = X[op->rs1], c = X[op->rs2]; \
        if (cond) goto taken;                          \
        goto not_taken;                                \
    }

    RR(add, a + c)
    RR(sub, a - c)
    RR(sll, sem::sll(a, c))
    RR(slt, sem::slt(a, c))
    RR(sltu, sem::sltu(a, c))
    RR(xor, a ^ c)
    RR(srl, sem::srl(a, c))
    RR(sra, sem::sra(a, c))
    RR(or, a | c)
    RR(and, a & c)
    RR(mul, a * c)
    RR(mulh, sem::mulh(a, c))
    RR(mulhsu, sem::mulhsu(a, c))
    RR(mulhu, sem::mulhu(a, c))
    DIV(div, div, sem::abs_u(a))
    DIV(divu, divu, a)
    DIV(rem, rem, sem::abs_u(a))
    DIV(remu, remu, a)
    RI(addi, a + c)
    RI(slti, sem::slt(a, c))
    RI(sltiu, sem::sltu(a, c))
    RI(xori, a ^ c)
    RI(ori, a | c)
    RI(andi, a & c)
    RI(slli, sem::sll(a, c))
    RI(srli, sem::srl(a, c))
    RI(srai, sem::sra(a, c))
L_li:
    X[op->rd] = static_cast<uint32_t>(op->imm);
    NEXT();
L_nop:
    NEXT();
    LOAD(lb, int8_t, X[op->rd] = sem::extend(v), )
    LOAD(lh, int16_t, X[op->rd] = sem::extend(v), )
    LOAD(lw, uint32_t, X[op->rd] = v, )
    LOAD(lbu, uint8_t, X[op->rd] = v, )
    LOAD(lhu, uint16_t, X[op->rd] = v, )
    STORE(sb, uint8_t, X[op->rs2], )
    STORE(sh, uint16_t, X[op->rs2], )
    STORE(sw, uint32_t, X[op->rs2], )
    LOAD(flw, uint32_t, F[op->rd] = v; fp_dirty(), &&fp_enabled())
    STORE(fsw, uint32_t, F[op->rs2], &&fp_enabled())
    BRANCH(beq, a == c)
    BRANCH(bne, a != c)
    BRANCH(blt, sem::sx(a) < sem::sx(c))
    BRANCH(bge, sem::sx(a) >= sem::sx(c))
    BRANCH(bltu, a < c)
    BRANCH(bgeu, a >= c)
#undef RR
#undef RI
#undef DIV
#undef LOAD
#undef STORE
#undef BRANCH

L_pure : {  // reads no counter: counters stay as charged, taken back only if it trapped
    const BInfo& in = b->info[op - b->ops];
    pc_ = in.pc;
    npc_ = in.pc + in.d.len;
    cycles_ = cyc;
    instret_ = ret;
    in.d.fn(*this, in.d);
    cyc = cycles_;
    if (__builtin_expect(npc_ == in.pc + in.d.len && attention_at_ != 0, 1)) NEXT();
    cycles_ = cyc - in.ahead_cycles;
    instret_ -= b->n - 1 - static_cast<uint32_t>(op - b->ops);  // (the trap already took this one back)
    goto exit_after;
}
L_sync : {  // the exec function with the counters of the step engine at this instruction
    const BInfo& in = b->info[op - b->ops];
    const uint32_t ahead = b->n - 1 - static_cast<uint32_t>(op - b->ops);
    cycles_ = cyc - in.ahead_cycles;
    instret_ = ret - ahead;
    pc_ = in.pc;
    npc_ = in.pc + in.d.len;
    in.d.fn(*this, in.d);
    if (npc_ != in.pc + in.d.len || attention_at_ == 0) goto exit_after;
    cyc = cycles_ + in.ahead_cycles;
    ret = instret_ + ahead;
    NEXT();
}
L_endsync : {  // the last instruction of its block: nothing ahead to take back
    const BInfo& in = b->info[op - b->ops];
    cycles_ = cyc;
    instret_ = ret;
    pc_ = in.pc;
    npc_ = in.pc + in.d.len;
    in.d.fn(*this, in.d);
    goto exit_after;
}

// Block ends. The successor is chained once resolved; its entry hazard after this block is static.
#define CHAIN(k)                                                                                \
    nb = b->next[k];                                                                            \
    if (__builtin_expect(nb == nullptr, 0)) {                                                   \
        nb = find_block(b->next_pc[k], false);                                                  \
        if (nb == nullptr) {                                                                    \
            pc_ = b->next_pc[k];                                                                \
            goto exit_boundary;                                                                 \
        }                                                                                       \
        b->next[k] = nb;                                                                        \
        b->next_pen[k] = static_cast<uint32_t>(entry_penalty(nb, b->last_load_rd, b->last_rd)); \
    }                                                                                           \
    pen = b->next_pen[k];                                                                       \
    goto enter;
taken:
    cyc += b->taken_extra;
    last_pc_ = b->last_pc;
    CHAIN(0)
not_taken:
L_fallthrough:
    CHAIN(1)
L_jal:
    X[op->rd] = static_cast<uint32_t>(op->imm);
    last_pc_ = b->last_pc;
    CHAIN(0)
#undef CHAIN
L_jalr : {
    const uint32_t target = (X[op->rs1] + static_cast<uint32_t>(op->imm)) & ~1u;
    if (target & ialign_mask_) goto L_endsync;  // the exec function raises the misaligned-target trap
    X[op->rd] = b->link;
    last_pc_ = b->last_pc;
    nb = blocks_->lookup(target);
    if (nb == nullptr) nb = find_block(target, false);
    if (nb == nullptr) {
        pc_ = target;
        goto exit_boundary;
    }
    pen = entry_penalty(nb, b->last_load_rd, b->last_rd);
    goto enter;
}

enter:
    // The dispatcher's conditions (run_blocks): the whole block fits in the budget and no instruction
    // boundary inside it can reach the point where the hart needs attention (timer, stop, flush).
    if (__builtin_expect(left < nb->n || cyc + pen + nb->bound >= attention_at_, 0)) {
        pc_ = nb->pc;
        goto exit_boundary;
    }
    cyc += nb->cycles + pen;
    ret += nb->n;
    left -= nb->n;
    b = nb;
    op = b->ops;
    goto * op->label;

exit_boundary:  // between blocks, after b: pc_ set
    cycles_ = cyc;
    instret_ = ret;
    prev_load_rd_ = b->last_load_rd;
    prev_rd_ = b->last_rd;
    return left;

exit_after : {  // after op's instruction (retired or trapped): cycles_/instret_ exact, npc_ the next pc
    const uint32_t idx = static_cast<uint32_t>(op - b->ops);
    left += b->n - 1 - idx;
    prev_load_rd_ = b->info[idx].d.load_rd;
    prev_rd_ = b->info[idx].d.rd;
    pc_ = npc_;
    return left;
}
#undef NEXT
}

}  // namespace iss
