// SPDX-License-Identifier: MIT
// M extension (ISA manual Vol. I ch. 7). Division by zero and overflow follow table 7.1; the divider's
// operand-dependent latency is modelled as in CV32E40P (pipeline.rst: 3..35 cycles, 35 for /0).
#include "riscv_iss/hart.h"
#include "riscv_iss_isa_table.inc"

namespace iss::exec {
namespace {
inline int32_t sx(uint32_t v) { return static_cast<int32_t>(v); }

// CV32E40P's serial divider iterates over the significant bits of the dividend; UNVERIFIED(cv32e40p-div):
// linear interpolation between div_min and div_max by significant bits.
inline void div_cost(Hart& h, uint32_t dividend, uint32_t divisor) {
    if (divisor == 0) {
        h.cycles_ += h.cm_.div_by_zero - h.cm_.div_min;
        return;
    }
    const uint32_t bits = dividend == 0 ? 0 : 32 - static_cast<uint32_t>(__builtin_clz(dividend));
    h.cycles_ += (h.cm_.div_max - h.cm_.div_min) * bits / 32;
}
inline uint32_t abs_u(uint32_t v) { return sx(v) < 0 ? 0u - v : v; }
}  // namespace

void ex_mul(Hart& h, const DecodedInsn& d) { h.x_[d.rd] = h.x_[d.rs1] * h.x_[d.rs2]; }
void ex_mulh(Hart& h, const DecodedInsn& d) {
    const int64_t p = static_cast<int64_t>(sx(h.x_[d.rs1])) * sx(h.x_[d.rs2]);
    h.x_[d.rd] = static_cast<uint32_t>(static_cast<uint64_t>(p) >> 32);
}
void ex_mulhsu(Hart& h, const DecodedInsn& d) {
    const int64_t p = static_cast<int64_t>(sx(h.x_[d.rs1])) * static_cast<int64_t>(h.x_[d.rs2]);
    h.x_[d.rd] = static_cast<uint32_t>(static_cast<uint64_t>(p) >> 32);
}
void ex_mulhu(Hart& h, const DecodedInsn& d) {
    const uint64_t p = static_cast<uint64_t>(h.x_[d.rs1]) * h.x_[d.rs2];
    h.x_[d.rd] = static_cast<uint32_t>(p >> 32);
}
void ex_div(Hart& h, const DecodedInsn& d) {
    const uint32_t a = h.x_[d.rs1], b = h.x_[d.rs2];
    div_cost(h, abs_u(a), b);
    if (b == 0)
        h.x_[d.rd] = ~0u;
    else if (a == 0x80000000u && b == ~0u)
        h.x_[d.rd] = a;
    else
        h.x_[d.rd] = static_cast<uint32_t>(sx(a) / sx(b));
}
void ex_divu(Hart& h, const DecodedInsn& d) {
    const uint32_t a = h.x_[d.rs1], b = h.x_[d.rs2];
    div_cost(h, a, b);
    h.x_[d.rd] = b == 0 ? ~0u : a / b;
}
void ex_rem(Hart& h, const DecodedInsn& d) {
    const uint32_t a = h.x_[d.rs1], b = h.x_[d.rs2];
    div_cost(h, abs_u(a), b);
    if (b == 0)
        h.x_[d.rd] = a;
    else if (a == 0x80000000u && b == ~0u)
        h.x_[d.rd] = 0;
    else
        h.x_[d.rd] = static_cast<uint32_t>(sx(a) % sx(b));
}
void ex_remu(Hart& h, const DecodedInsn& d) {
    const uint32_t a = h.x_[d.rs1], b = h.x_[d.rs2];
    div_cost(h, a, b);
    h.x_[d.rd] = b == 0 ? a : a % b;
}

}  // namespace iss::exec
