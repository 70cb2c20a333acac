// SPDX-License-Identifier: MIT
// Block engine, execution side: threaded code (computed goto: every handler ends with its own indirect
// jump to the next operation) over translated blocks, chained block to block without returning to the
// dispatcher. Counters are charged per block on entry; a slow path (MMIO, a trap, a CSR, anything that
// may read instret/cycles or request attention) first takes back what the rest of the block was charged,
// so it sees exactly what the step engine would, and leaves the block after its instruction when the
// hart needs attention. Results are those of the step engine (src/hart.cpp run_loop) bit for bit.
#include <cstring>
#include <type_traits>

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

uint64_t Hart::exec_blocks(Block* b, uint64_t left) {
    // Indexed by BKind.
    static const void* const kLabels[] = {
        &&L_add,   &&L_sub,  &&L_sll,    &&L_slt,   &&L_sltu, &&L_xor,  &&L_srl,  &&L_sra,     &&L_or,         &&L_and,
        &&L_mul,   &&L_mulh, &&L_mulhsu, &&L_mulhu, &&L_div,  &&L_divu, &&L_rem,  &&L_remu,    &&L_addi,       &&L_slti,
        &&L_sltiu, &&L_xori, &&L_ori,    &&L_andi,  &&L_slli, &&L_srli, &&L_srai, &&L_li,      &&L_nop,        &&L_lb,
        &&L_lh,    &&L_lw,   &&L_lbu,    &&L_lhu,   &&L_sb,   &&L_sh,   &&L_sw,   &&L_pure,    &&L_sync,       &&L_beq,
        &&L_bne,   &&L_blt,  &&L_bge,    &&L_bltu,  &&L_bgeu, &&L_jal,  &&L_jalr, &&L_endsync, &&L_fallthrough};
    static_assert(sizeof(kLabels) / sizeof(kLabels[0]) == static_cast<std::size_t>(BKind::kCount));
    if (b == nullptr) {  // initialisation call from the constructor: publish the handler table
        blocks_->labels = kLabels;
        return left;
    }

    uint32_t* const X = x_;
    const BOp* op = nullptr;
    Block* nb = b;
    uint8_t prev_load_rd = prev_load_rd_, prev_rd = prev_rd_;
    uint32_t addr = 0;
    int k = 0;
    goto enter;

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
#define DIV(name, fn, dividend)                             \
    L_##name : {                                            \
        const uint32_t a = X[op->rs1], c = X[op->rs2];      \
        cycles_ += sem::div_extra_cycles(cm_, dividend, c); \
        X[op->rd] = sem::fn(a, c);                          \
        NEXT();                                             \
    }
#define LOAD(name, T)                                                                                                 \
    L_##name : {                                                                                                      \
        addr = X[op->rs1] + static_cast<uint32_t>(op->imm);                                                           \
        const uint32_t off = addr - ld_.base;                                                                         \
        if (__builtin_expect(off < ld_.size && (addr & (sizeof(T) - 1)) == 0 && addr - watch_lo_ >= watch_len_, 1)) { \
            T v;                                                                                                      \
            std::memcpy(&v, ld_.host + off, sizeof v);                                                                \
            X[op->rd] = sem::extend(v);                                                                               \
            cycles_ += ld_.read_wait_cycles;                                                                          \
            NEXT();                                                                                                   \
        }                                                                                                             \
        goto load_slow_path;                                                                                          \
    }
#define STORE(name, T)                                                                                            \
    L_##name : {                                                                                                  \
        addr = X[op->rs1] + static_cast<uint32_t>(op->imm);                                                       \
        const uint32_t off = addr - st_.base;                                                                     \
        if (__builtin_expect(off < st_.size && (addr & (sizeof(T) - 1)) == 0 && addr - watch_lo_ >= watch_len_ && \
                                 !st_code_[off >> 12],                                                            \
                             1)) {                                                                                \
            const T v = static_cast<T>(X[op->rs2]);                                                               \
            std::memcpy(st_.host + off, &v, sizeof v);                                                            \
            cycles_ += st_.write_wait_cycles;                                                                     \
            NEXT();                                                                                               \
        }                                                                                                         \
        goto store_slow_path;                                                                                     \
    }
#define BRANCH(name, cond)                             \
    L_##name : {                                       \
        const uint32_t a = X[op->rs1], c = X[op->rs2]; \
        k = (cond) ? 0 : 1;                            \
        goto branch;                                   \
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
    LOAD(lb, int8_t)
    LOAD(lh, int16_t)
    LOAD(lw, uint32_t)
    LOAD(lbu, uint8_t)
    LOAD(lhu, uint16_t)
    STORE(sb, uint8_t)
    STORE(sh, uint16_t)
    STORE(sw, uint32_t)
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

L_pure : {  // counters are not read: run with the whole block charged, correct afterwards on a trap
    const BInfo& in = b->info[op - b->ops];
    pc_ = in.pc;
    npc_ = in.pc + in.d.len;
    in.d.fn(*this, in.d);
    if (__builtin_expect(npc_ == in.pc + in.d.len && attention_at_ != 0, 1)) NEXT();
    cycles_ -= in.ahead_cycles;
    instret_ -= b->n - 1 - static_cast<uint32_t>(op - b->ops);
    goto exit_after;
}
L_sync : {
    const BInfo& in = b->info[op - b->ops];
    const uint32_t ahead = b->n - 1 - static_cast<uint32_t>(op - b->ops);
    cycles_ -= in.ahead_cycles;
    instret_ -= ahead;
    pc_ = in.pc;
    npc_ = in.pc + in.d.len;
    in.d.fn(*this, in.d);
    if (npc_ != in.pc + in.d.len || attention_at_ == 0) goto exit_after;
    cycles_ += in.ahead_cycles;
    instret_ += ahead;
    NEXT();
}
L_endsync : {  // always the last instruction: nothing ahead to take back
    const BInfo& in = b->info[op - b->ops];
    pc_ = in.pc;
    npc_ = in.pc + in.d.len;
    in.d.fn(*this, in.d);
    goto exit_after;
}

load_slow_path : {
    const BInfo& in = b->info[op - b->ops];
    const uint32_t ahead = b->n - 1 - static_cast<uint32_t>(op - b->ops);
    cycles_ -= in.ahead_cycles;
    instret_ -= ahead;
    pc_ = in.pc;
    npc_ = in.pc + in.d.len;
    uint32_t v = 0;
    bool ok;
    switch (op->kind) {
        case BKind::kLb:
            ok = load_slow(addr, 1, v);
            v = sem::extend(static_cast<int8_t>(v));
            break;
        case BKind::kLh:
            ok = load_slow(addr, 2, v);
            v = sem::extend(static_cast<int16_t>(v));
            break;
        case BKind::kLbu:
            ok = load_slow(addr, 1, v);
            v &= 0xff;
            break;
        case BKind::kLhu:
            ok = load_slow(addr, 2, v);
            v &= 0xffff;
            break;
        default:
            ok = load_slow(addr, 4, v);
            break;
    }
    if (!ok) goto exit_after;
    X[op->rd] = v;
    if (attention_at_ == 0) goto exit_after;
    cycles_ += in.ahead_cycles;
    instret_ += ahead;
    NEXT();
}
store_slow_path : {
    const BInfo& in = b->info[op - b->ops];
    const uint32_t ahead = b->n - 1 - static_cast<uint32_t>(op - b->ops);
    cycles_ -= in.ahead_cycles;
    instret_ -= ahead;
    pc_ = in.pc;
    npc_ = in.pc + in.d.len;
    const uint32_t v = X[op->rs2];
    bool ok;
    switch (op->kind) {
        case BKind::kSb:
            ok = store_slow(addr, 1, v & 0xff);
            break;
        case BKind::kSh:
            ok = store_slow(addr, 2, v & 0xffff);
            break;
        default:
            ok = store_slow(addr, 4, v);
            break;
    }
    if (!ok || attention_at_ == 0) goto exit_after;
    cycles_ += in.ahead_cycles;
    instret_ += ahead;
    NEXT();
}

branch:
    if (k == 0) {
        cycles_ += b->taken_extra;
        last_pc_ = b->last_pc;
    }
    goto chain;
L_jal:
    X[op->rd] = static_cast<uint32_t>(op->imm);
    last_pc_ = b->last_pc;
    k = 0;
    goto chain;
L_fallthrough:
    k = 1;
    goto chain;
chain:
    prev_load_rd = b->last_load_rd;
    prev_rd = b->last_rd;
    nb = b->next[k];
    if (__builtin_expect(nb == nullptr, 0)) {
        const uint32_t target = b->next_pc[k];
        nb = find_block(target, false);
        if (nb == nullptr) {
            pc_ = target;
            goto exit_boundary;
        }
        b->next[k] = nb;
    }
    goto enter;
L_jalr : {
    const uint32_t target = (X[op->rs1] + static_cast<uint32_t>(op->imm)) & ~1u;
    if (target & ialign_mask_) goto L_endsync;  // the exec function raises the misaligned-target trap
    X[op->rd] = b->link;
    last_pc_ = b->last_pc;
    prev_load_rd = b->last_load_rd;
    prev_rd = b->last_rd;
    nb = blocks_->lookup(target);
    if (nb == nullptr) nb = find_block(target, false);
    if (nb == nullptr) {
        pc_ = target;
        goto exit_boundary;
    }
    goto enter;
}

enter : {
    // The same conditions as the dispatcher's (run_blocks): the whole block fits in the budget and no
    // instruction boundary inside it can reach the point where the hart needs attention.
    const uint64_t pen = entry_penalty(nb, prev_load_rd, prev_rd);
    if (__builtin_expect(left < nb->n || cycles_ + pen + nb->bound >= attention_at_, 0)) {
        pc_ = nb->pc;
        goto exit_boundary;
    }
    cycles_ += nb->cycles + pen;
    instret_ += nb->n;
    left -= nb->n;
    b = nb;
    op = b->ops;
    goto * op->label;
}

exit_boundary:  // between blocks: counters exact, pc_ set
    prev_load_rd_ = prev_load_rd;
    prev_rd_ = prev_rd;
    return left;

exit_after : {  // after op's instruction (retired or trapped): counters exact, npc_ is the next pc
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
