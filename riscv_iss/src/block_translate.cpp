// SPDX-License-Identifier: MIT
// Block engine, translation side: basic blocks built from the shared pre-decoded instructions (the step
// engine's per-halfword cache, so both engines decode alike), the cycle model's static costs and hazards
// summed per block with a worst-case bound for the dynamic ones, the block cache, and the code-page marks
// that detect self-modifying code.
#include <algorithm>
#include <cstring>

#include "block.h"
#include "decoder.h"
#include "riscv_iss/hart.h"
#include "riscv_iss_isa_table.inc"
#include "semantics.h"

namespace iss {

void* BlockCache::alloc(std::size_t bytes) {
    bytes = (bytes + 15) & ~std::size_t{15};
    if (chunks.empty() || chunk_used + bytes > kChunk) {
        const std::size_t size = std::max(kChunk, bytes);
        chunks.push_back(std::unique_ptr<char[]>(new char[size]));  // not zeroed: every byte is written
        chunk_used = 0;
        used_total += size;
    }
    void* p = chunks.back().get() + chunk_used;
    chunk_used += bytes;
    return p;
}

void BlockCache::clear() {
    map.clear();
    std::fill(std::begin(fast), std::end(fast), nullptr);
    chunks.clear();
    chunk_used = kChunk;
    used_total = 0;
    ++flushes;
}

void Hart::flush_blocks() {
    if (!blocks_->map.empty()) blocks_->clear();
}

Block* Hart::find_block(uint32_t pc, bool may_flush) {
    if (Block* b = blocks_->lookup(pc)) return b;
    if (!block_may_start(pc)) return nullptr;
    if (max_wait_ > blocks_->max_wait || blocks_->full()) {
        // Cost bounds of the existing blocks assume smaller wait states, or the arena is full: start over
        // (only from the dispatcher, where no block is in use).
        if (!may_flush) return nullptr;
        flush_blocks();
        blocks_->max_wait = max_wait_;
    }
    return translate_block(pc);
}

namespace {

struct Classified {
    BKind kind;
    bool ends;
};

Classified classify(const DecodedInsn& d, uint32_t pc, uint32_t ialign_mask) {
    if (d.op == static_cast<uint16_t>(Op::kCount)) return {BKind::kEndSync, true};  // illegal / fetch fault
    const OpcodeInfo& row = Decoder::info(d.op);
    switch (row.exec_op) {
        case Op::kAdd:
            return {BKind::kAdd, false};
        case Op::kSub:
            return {BKind::kSub, false};
        case Op::kSll:
            return {BKind::kSll, false};
        case Op::kSlt:
            return {BKind::kSlt, false};
        case Op::kSltu:
            return {BKind::kSltu, false};
        case Op::kXor:
            return {BKind::kXor, false};
        case Op::kSrl:
            return {BKind::kSrl, false};
        case Op::kSra:
            return {BKind::kSra, false};
        case Op::kOr:
            return {BKind::kOr, false};
        case Op::kAnd:
            return {BKind::kAnd, false};
        case Op::kMul:
            return {BKind::kMul, false};
        case Op::kMulh:
            return {BKind::kMulh, false};
        case Op::kMulhsu:
            return {BKind::kMulhsu, false};
        case Op::kMulhu:
            return {BKind::kMulhu, false};
        case Op::kDiv:
            return {BKind::kDiv, false};
        case Op::kDivu:
            return {BKind::kDivu, false};
        case Op::kRem:
            return {BKind::kRem, false};
        case Op::kRemu:
            return {BKind::kRemu, false};
        case Op::kAddi:
            return {BKind::kAddi, false};
        case Op::kSlti:
            return {BKind::kSlti, false};
        case Op::kSltiu:
            return {BKind::kSltiu, false};
        case Op::kXori:
            return {BKind::kXori, false};
        case Op::kOri:
            return {BKind::kOri, false};
        case Op::kAndi:
            return {BKind::kAndi, false};
        case Op::kSlli:
            return {BKind::kSlli, false};
        case Op::kSrli:
            return {BKind::kSrli, false};
        case Op::kSrai:
            return {BKind::kSrai, false};
        case Op::kLui:
        case Op::kAuipc:
            return {BKind::kLi, false};
        case Op::kFence:
            return {BKind::kNop, false};
        case Op::kLb:
            return {BKind::kLb, false};
        case Op::kLh:
            return {BKind::kLh, false};
        case Op::kLw:
            return {BKind::kLw, false};
        case Op::kLbu:
            return {BKind::kLbu, false};
        case Op::kLhu:
            return {BKind::kLhu, false};
        case Op::kSb:
            return {BKind::kSb, false};
        case Op::kSh:
            return {BKind::kSh, false};
        case Op::kSw:
            return {BKind::kSw, false};
        case Op::kFlw:
            return {BKind::kFlw, false};
        case Op::kFsw:
            return {BKind::kFsw, false};
        case Op::kBeq:
        case Op::kBne:
        case Op::kBlt:
        case Op::kBge:
        case Op::kBltu:
        case Op::kBgeu: {
            if ((pc + static_cast<uint32_t>(d.imm)) & ialign_mask) return {BKind::kEndSync, true};
            static constexpr BKind kBr[] = {BKind::kBeq, BKind::kBne,  BKind::kBlt,
                                            BKind::kBge, BKind::kBltu, BKind::kBgeu};
            return {kBr[static_cast<int>(row.exec_op) - static_cast<int>(Op::kBeq)], true};
        }
        case Op::kJal:
            if ((pc + static_cast<uint32_t>(d.imm)) & ialign_mask) return {BKind::kEndSync, true};
            return {BKind::kJal, true};
        case Op::kJalr:
            return {BKind::kJalr, true};
        case Op::kEcall:
        case Op::kEbreak:
        case Op::kMret:
        case Op::kWfi:
        case Op::kFenceI:
            return {BKind::kEndSync, true};
        default:
            break;
    }
    const Ext ext = Decoder::info(static_cast<uint16_t>(row.exec_op)).ext;
    if (ext == Ext::kF && row.exec_op != Op::kFlw && row.exec_op != Op::kFsw) return {BKind::kPure, false};
    return {BKind::kSync, false};  // Zicsr, F loads/stores, A
}

/// Worst case of the cycles an instruction can add at run time beyond its static cost (wait states,
/// misaligned emulation, the divider, the AMO write half); MMIO ends the block, so it needs no bound.
uint64_t dynamic_max(const DecodedInsn& d, const CycleModel& cm, const IsaConfig& isa, uint32_t max_wait) {
    if (d.op == static_cast<uint16_t>(Op::kCount)) return 0;
    const OpcodeInfo& row = Decoder::info(d.op);
    const uint64_t mem = isa.misaligned_trap ? max_wait : 2ull * max_wait + cm.misaligned_penalty;
    switch (row.exec_op) {
        case Op::kLb:
        case Op::kLh:
        case Op::kLw:
        case Op::kLbu:
        case Op::kLhu:
        case Op::kSb:
        case Op::kSh:
        case Op::kSw:
        case Op::kFlw:
        case Op::kFsw:
        case Op::kLrW:
        case Op::kScW:
            return mem;
        case Op::kDiv:
        case Op::kDivu:
        case Op::kRem:
        case Op::kRemu:
            return sem::div_extra_max(cm);
        default:
            break;
    }
    if (Decoder::info(static_cast<uint16_t>(row.exec_op)).ext == Ext::kA) return 2ull * max_wait + cm.amo;
    return 0;
}

}  // namespace

Block* Hart::translate_block(uint32_t pc) {
    if (!enter_code_region(pc)) return nullptr;
    CodeRegion& region = code_regions_.back();
    struct Item {
        BOp op;
        BInfo info;
    };
    Item items[BlockCache::kMaxInsns];
    uint32_t n = 0, p = pc;
    bool ended = false;
    while (n < BlockCache::kMaxInsns) {
        const uint32_t off = p - region.dmi.base;
        if (off >= region.dmi.size || (n > 0 && !block_may_start(p))) break;
        DecodedInsn& d = region.decoded[off >> 1];
        if (d.fn == nullptr) decode_at(d, p, region);
        const Classified c = classify(d, p, ialign_mask_);
        Item& it = items[n++];
        it.info.pc = p;
        it.info.d = d;
        it.op.kind = c.kind;
        it.op.rd = d.rd;
        it.op.rs1 = d.rs1;
        it.op.rs2 = d.rs2;
        it.op.imm = d.imm;
        const Op exec_op = d.op == static_cast<uint16_t>(Op::kCount) ? Op::kCount : Decoder::info(d.op).exec_op;
        if (exec_op == Op::kAuipc) it.op.imm = static_cast<int32_t>(p + static_cast<uint32_t>(d.imm));
        if (exec_op == Op::kJal) it.op.imm = static_cast<int32_t>(p + d.len);
        p += d.len;
        if (c.ends) {
            ended = true;
            break;
        }
    }
    if (n == 0) return nullptr;

    auto* b = static_cast<Block*>(blocks_->alloc(sizeof(Block)));
    new (b) Block();
    b->ops = static_cast<BOp*>(blocks_->alloc(sizeof(BOp) * (n + 1)));
    b->info = static_cast<BInfo*>(blocks_->alloc(sizeof(BInfo) * n));
    b->pc = pc;
    b->n = n;
    // Static costs: each instruction's base cost plus the hazards against its predecessor in the block
    // (the same rules as the step engine's run loop; the first instruction's hazard is added on entry).
    uint64_t prefix = 0;
    uint64_t costs[BlockCache::kMaxInsns];
    for (uint32_t i = 0; i < n; ++i) {
        const DecodedInsn& d = items[i].info.d;
        uint64_t cost = d.cycles;
        if (i > 0) {
            const DecodedInsn& prev = items[i - 1].info.d;
            if (prev.load_rd != 0 && (d.hz_rs1 == prev.load_rd || d.hz_rs2 == prev.load_rd))
                cost += cm_.load_use_penalty;
            if (d.jalr_rs != 0 && d.jalr_rs == prev.rd) cost += cm_.jalr_use_penalty;
        }
        costs[i] = cost;
        prefix += cost;
    }
    b->cycles = prefix;
    uint64_t acc = 0, bound = 0;
    for (uint32_t i = 0; i < n; ++i) {
        acc += costs[i];
        items[i].info.ahead_cycles = static_cast<uint32_t>(prefix - acc);
        if (i + 1 < n) bound += costs[i] + dynamic_max(items[i].info.d, cm_, isa_, blocks_->max_wait);
    }
    b->bound = bound;
    const DecodedInsn& first = items[0].info.d;
    b->first_hz1 = first.hz_rs1;
    b->first_hz2 = first.hz_rs2;
    b->first_jalr_rs = first.jalr_rs;
    const Item& last = items[n - 1];
    b->last_load_rd = last.info.d.load_rd;
    b->last_rd = last.info.d.rd;
    b->last_pc = last.info.pc;
    b->link = last.info.pc + last.info.d.len;
    b->next_pc[1] = p;
    b->next_pc[0] = p;
    if (ended && (last.op.kind == BKind::kJal || (last.op.kind >= BKind::kBeq && last.op.kind <= BKind::kBgeu)))
        b->next_pc[0] = last.info.pc + static_cast<uint32_t>(last.info.d.imm);
    b->taken_extra = cm_.branch_taken - cm_.branch_not_taken;
    for (uint32_t i = 0; i < n; ++i) {
        b->ops[i] = items[i].op;
        b->ops[i].label = blocks_->labels[static_cast<int>(items[i].op.kind)];
        b->info[i] = items[i].info;
    }
    BOp& tail = b->ops[n];
    tail = BOp{};
    tail.kind = BKind::kFallthrough;
    tail.label = blocks_->labels[static_cast<int>(BKind::kFallthrough)];
    blocks_->insert(b);
    ++blocks_->translated;
    return b;
}

// ---- self-modifying code ------------------------------------------------------------------------------

Hart::CodePages& Hart::code_pages_for(uint32_t base, uint32_t size) {
    for (CodePages& c : code_pages_)
        if (c.base == base && c.size == size) return c;
    CodePages c;
    c.base = base;
    c.size = size;
    c.page.assign((static_cast<uint64_t>(size) + 4095) / 4096, 0);
    c.bits.resize(c.page.size());
    code_pages_.push_back(std::move(c));
    return code_pages_.back();
}

void Hart::mark_code(const DmiRegion& r, uint32_t addr, uint32_t len) {
    CodePages& c = code_pages_for(r.base, r.size);
    for (uint32_t a = addr; a != addr + len; a += 2) {
        const uint32_t off = a - r.base, pg = off >> 12;
        if (off >= r.size) break;
        TlbEntry& e = st_tlb_[(a >> 12) & (kTlbSize - 1)];  // stores to this page must see the code
        if (e.tag == (a >> 12)) e = TlbEntry{};
        if (c.bits[pg].empty()) c.bits[pg].assign(4096 / 2 / 64, 0);
        c.bits[pg][(off & 4095) >> 7] |= 1ull << (((off & 4095) >> 1) & 63);
        c.page[pg] = 1;
    }
}

void Hart::check_code_write(uint32_t addr, uint32_t len) {
    for (const CodePages& c : code_pages_) {
        for (uint32_t a = addr & ~1u; a < addr + len; a += 2) {
            const uint32_t off = a - c.base;
            if (off >= c.size) continue;
            const uint32_t pg = off >> 12;
            if (!c.page[pg] || c.bits[pg].empty()) continue;
            if (c.bits[pg][(off & 4095) >> 7] & (1ull << (((off & 4095) >> 1) & 63))) {
                flush_pending_ = true;  // both engines drop their pre-decoded code before the next insn
                request_attention();
                return;
            }
        }
    }
}

void Hart::clear_code_marks() {
    for (CodePages& c : code_pages_) {
        std::fill(c.page.begin(), c.page.end(), 0);
        for (auto& v : c.bits) v.clear();
    }
}

}  // namespace iss
