// SPDX-License-Identifier: MIT
// M extension (ISA manual Vol. I ch. 7); the rules (table 7.1, divider latency) are in semantics.h.
#include "riscv_iss/hart.h"
#include "riscv_iss_isa_table.inc"
#include "semantics.h"

namespace iss::exec {

void ex_mul(Hart& h, const DecodedInsn& d) { h.x_[d.rd] = h.x_[d.rs1] * h.x_[d.rs2]; }
void ex_mulh(Hart& h, const DecodedInsn& d) { h.x_[d.rd] = sem::mulh(h.x_[d.rs1], h.x_[d.rs2]); }
void ex_mulhsu(Hart& h, const DecodedInsn& d) { h.x_[d.rd] = sem::mulhsu(h.x_[d.rs1], h.x_[d.rs2]); }
void ex_mulhu(Hart& h, const DecodedInsn& d) { h.x_[d.rd] = sem::mulhu(h.x_[d.rs1], h.x_[d.rs2]); }
void ex_div(Hart& h, const DecodedInsn& d) {
    const uint32_t a = h.x_[d.rs1], b = h.x_[d.rs2];
    h.cycles_ += sem::div_extra_cycles(h.cm_, sem::abs_u(a), b);
    h.x_[d.rd] = sem::div(a, b);
}
void ex_divu(Hart& h, const DecodedInsn& d) {
    const uint32_t a = h.x_[d.rs1], b = h.x_[d.rs2];
    h.cycles_ += sem::div_extra_cycles(h.cm_, a, b);
    h.x_[d.rd] = sem::divu(a, b);
}
void ex_rem(Hart& h, const DecodedInsn& d) {
    const uint32_t a = h.x_[d.rs1], b = h.x_[d.rs2];
    h.cycles_ += sem::div_extra_cycles(h.cm_, sem::abs_u(a), b);
    h.x_[d.rd] = sem::rem(a, b);
}
void ex_remu(Hart& h, const DecodedInsn& d) {
    const uint32_t a = h.x_[d.rs1], b = h.x_[d.rs2];
    h.cycles_ += sem::div_extra_cycles(h.cm_, a, b);
    h.x_[d.rd] = sem::remu(a, b);
}

}  // namespace iss::exec
