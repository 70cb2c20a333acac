// SPDX-License-Identifier: MIT
// RV32I base instructions and Zifencei: one small function per instruction (ISA manual Vol. I ch. 2).
#include "riscv_iss/hart.h"
#include "riscv_iss_isa_table.inc"
#include "semantics.h"

namespace iss::exec {
namespace {
inline uint32_t imm(const DecodedInsn& d) { return static_cast<uint32_t>(d.imm); }
inline int32_t sx(uint32_t v) { return static_cast<int32_t>(v); }

inline bool jump(Hart& h, uint32_t target) {
    if (target & h.ialign_mask_) {
        h.raise_exception(cause::kInsnMisaligned, target);
        return false;
    }
    h.last_pc_ = h.pc_;
    h.npc_ = target;
    return true;
}

inline void branch(Hart& h, const DecodedInsn& d, bool taken) {
    if (!taken) return;
    h.cycles_ += h.cm_.branch_taken - h.cm_.branch_not_taken;
    jump(h, h.pc_ + imm(d));
}

template <typename T>
inline void load(Hart& h, const DecodedInsn& d) {
    T v;
    if (h.load<T>(h.x_[d.rs1] + imm(d), v)) h.x_[d.rd] = sem::extend(v);
}
}  // namespace

void ex_lui(Hart& h, const DecodedInsn& d) { h.x_[d.rd] = imm(d); }
void ex_auipc(Hart& h, const DecodedInsn& d) { h.x_[d.rd] = h.pc_ + imm(d); }
void ex_jal(Hart& h, const DecodedInsn& d) {
    if (jump(h, h.pc_ + imm(d))) h.x_[d.rd] = h.pc_ + d.len;
}
void ex_jalr(Hart& h, const DecodedInsn& d) {
    const uint32_t target = (h.x_[d.rs1] + imm(d)) & ~1u;
    if (jump(h, target)) h.x_[d.rd] = h.pc_ + d.len;
}
void ex_beq(Hart& h, const DecodedInsn& d) { branch(h, d, h.x_[d.rs1] == h.x_[d.rs2]); }
void ex_bne(Hart& h, const DecodedInsn& d) { branch(h, d, h.x_[d.rs1] != h.x_[d.rs2]); }
void ex_blt(Hart& h, const DecodedInsn& d) { branch(h, d, sx(h.x_[d.rs1]) < sx(h.x_[d.rs2])); }
void ex_bge(Hart& h, const DecodedInsn& d) { branch(h, d, sx(h.x_[d.rs1]) >= sx(h.x_[d.rs2])); }
void ex_bltu(Hart& h, const DecodedInsn& d) { branch(h, d, h.x_[d.rs1] < h.x_[d.rs2]); }
void ex_bgeu(Hart& h, const DecodedInsn& d) { branch(h, d, h.x_[d.rs1] >= h.x_[d.rs2]); }
void ex_lb(Hart& h, const DecodedInsn& d) { load<int8_t>(h, d); }
void ex_lh(Hart& h, const DecodedInsn& d) { load<int16_t>(h, d); }
void ex_lw(Hart& h, const DecodedInsn& d) { load<uint32_t>(h, d); }
void ex_lbu(Hart& h, const DecodedInsn& d) { load<uint8_t>(h, d); }
void ex_lhu(Hart& h, const DecodedInsn& d) { load<uint16_t>(h, d); }
void ex_sb(Hart& h, const DecodedInsn& d) { h.store<uint8_t>(h.x_[d.rs1] + imm(d), static_cast<uint8_t>(h.x_[d.rs2])); }
void ex_sh(Hart& h, const DecodedInsn& d) {
    h.store<uint16_t>(h.x_[d.rs1] + imm(d), static_cast<uint16_t>(h.x_[d.rs2]));
}
void ex_sw(Hart& h, const DecodedInsn& d) { h.store<uint32_t>(h.x_[d.rs1] + imm(d), h.x_[d.rs2]); }
void ex_addi(Hart& h, const DecodedInsn& d) { h.x_[d.rd] = h.x_[d.rs1] + imm(d); }
void ex_slti(Hart& h, const DecodedInsn& d) { h.x_[d.rd] = sem::slt(h.x_[d.rs1], imm(d)); }
void ex_sltiu(Hart& h, const DecodedInsn& d) { h.x_[d.rd] = sem::sltu(h.x_[d.rs1], imm(d)); }
void ex_xori(Hart& h, const DecodedInsn& d) { h.x_[d.rd] = h.x_[d.rs1] ^ imm(d); }
void ex_ori(Hart& h, const DecodedInsn& d) { h.x_[d.rd] = h.x_[d.rs1] | imm(d); }
void ex_andi(Hart& h, const DecodedInsn& d) { h.x_[d.rd] = h.x_[d.rs1] & imm(d); }
void ex_slli(Hart& h, const DecodedInsn& d) { h.x_[d.rd] = sem::sll(h.x_[d.rs1], imm(d)); }
void ex_srli(Hart& h, const DecodedInsn& d) { h.x_[d.rd] = sem::srl(h.x_[d.rs1], imm(d)); }
void ex_srai(Hart& h, const DecodedInsn& d) { h.x_[d.rd] = sem::sra(h.x_[d.rs1], imm(d)); }
void ex_add(Hart& h, const DecodedInsn& d) { h.x_[d.rd] = h.x_[d.rs1] + h.x_[d.rs2]; }
void ex_sub(Hart& h, const DecodedInsn& d) { h.x_[d.rd] = h.x_[d.rs1] - h.x_[d.rs2]; }
void ex_sll(Hart& h, const DecodedInsn& d) { h.x_[d.rd] = sem::sll(h.x_[d.rs1], h.x_[d.rs2]); }
void ex_slt(Hart& h, const DecodedInsn& d) { h.x_[d.rd] = sem::slt(h.x_[d.rs1], h.x_[d.rs2]); }
void ex_sltu(Hart& h, const DecodedInsn& d) { h.x_[d.rd] = sem::sltu(h.x_[d.rs1], h.x_[d.rs2]); }
void ex_xor(Hart& h, const DecodedInsn& d) { h.x_[d.rd] = h.x_[d.rs1] ^ h.x_[d.rs2]; }
void ex_srl(Hart& h, const DecodedInsn& d) { h.x_[d.rd] = sem::srl(h.x_[d.rs1], h.x_[d.rs2]); }
void ex_sra(Hart& h, const DecodedInsn& d) { h.x_[d.rd] = sem::sra(h.x_[d.rs1], h.x_[d.rs2]); }
void ex_or(Hart& h, const DecodedInsn& d) { h.x_[d.rd] = h.x_[d.rs1] | h.x_[d.rs2]; }
void ex_and(Hart& h, const DecodedInsn& d) { h.x_[d.rd] = h.x_[d.rs1] & h.x_[d.rs2]; }
void ex_fence(Hart&, const DecodedInsn&) {}  // single hart, no caches: ordering is already total
void ex_fence_i(Hart& h, const DecodedInsn&) { h.do_fence_i(); }

}  // namespace iss::exec
