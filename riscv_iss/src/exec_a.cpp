// SPDX-License-Identifier: MIT
// A extension (ISA manual Vol. I ch. 8) for a single hart: AMOs are plain read-modify-write; aq/rl have
// no observable effect. Misaligned AMOs raise store/AMO address-misaligned (never emulated).
#include <algorithm>

#include "riscv_iss/hart.h"
#include "riscv_iss_isa_table.inc"

namespace iss::exec {
namespace {
template <typename F>
void amo(Hart& h, const DecodedInsn& d, F op) {
    const uint32_t addr = h.x_[d.rs1];
    uint32_t old = 0;
    if (addr & 3) {
        h.raise_exception(cause::kStoreMisaligned, addr);
        return;
    }
    if (!h.load_slow(addr, 4, old, true)) return;
    if (!h.store_slow(addr, 4, op(old, h.x_[d.rs2]), true)) return;
    h.cycles_ += h.cm_.amo;
    h.x_[d.rd] = old;
}
inline int32_t sx(uint32_t v) { return static_cast<int32_t>(v); }
}  // namespace

void ex_lr_w(Hart& h, const DecodedInsn& d) {
    const uint32_t addr = h.x_[d.rs1];
    uint32_t v = 0;
    if (addr & 3) {
        h.raise_exception(cause::kLoadMisaligned, addr);
        return;
    }
    if (!h.load_slow(addr, 4, v)) return;
    h.reservation_valid_ = true;
    h.reservation_addr_ = addr;
    h.x_[d.rd] = v;
}
void ex_sc_w(Hart& h, const DecodedInsn& d) {
    const uint32_t addr = h.x_[d.rs1];
    if (addr & 3) {
        h.raise_exception(cause::kStoreMisaligned, addr);
        return;
    }
    const bool ok = h.reservation_valid_ && h.reservation_addr_ == addr;
    h.reservation_valid_ = false;  // SC always ends the reservation (spec 8.2)
    if (ok && !h.store_slow(addr, 4, h.x_[d.rs2], true)) return;
    h.x_[d.rd] = ok ? 0 : 1;
}
void ex_amoswap_w(Hart& h, const DecodedInsn& d) {
    amo(h, d, [](uint32_t, uint32_t b) { return b; });
}
void ex_amoadd_w(Hart& h, const DecodedInsn& d) {
    amo(h, d, [](uint32_t a, uint32_t b) { return a + b; });
}
void ex_amoxor_w(Hart& h, const DecodedInsn& d) {
    amo(h, d, [](uint32_t a, uint32_t b) { return a ^ b; });
}
void ex_amoand_w(Hart& h, const DecodedInsn& d) {
    amo(h, d, [](uint32_t a, uint32_t b) { return a & b; });
}
void ex_amoor_w(Hart& h, const DecodedInsn& d) {
    amo(h, d, [](uint32_t a, uint32_t b) { return a | b; });
}
void ex_amomin_w(Hart& h, const DecodedInsn& d) {
    amo(h, d, [](uint32_t a, uint32_t b) { return sx(a) < sx(b) ? a : b; });
}
void ex_amomax_w(Hart& h, const DecodedInsn& d) {
    amo(h, d, [](uint32_t a, uint32_t b) { return sx(a) > sx(b) ? a : b; });
}
void ex_amominu_w(Hart& h, const DecodedInsn& d) {
    amo(h, d, [](uint32_t a, uint32_t b) { return std::min(a, b); });
}
void ex_amomaxu_w(Hart& h, const DecodedInsn& d) {
    amo(h, d, [](uint32_t a, uint32_t b) { return std::max(a, b); });
}

}  // namespace iss::exec
