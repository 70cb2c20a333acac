// SPDX-License-Identifier: MIT
// Zicsr, ecall/ebreak, mret and wfi (ISA manual Vol. I ch. 9; Privileged spec 3.3).
#include "riscv_iss/hart.h"
#include "riscv_iss_isa_table.inc"

namespace iss {

namespace {
// The semihosting sequence around ebreak (RISC-V semihosting spec, "Semihosting Trap Instruction Sequence").
constexpr uint32_t kSemihostPre = 0x01f01013;   // slli x0, x0, 0x1f
constexpr uint32_t kSemihostPost = 0x40705013;  // srai x0, x0, 7
}  // namespace

void Hart::do_ebreak(const DecodedInsn& d) {
    if (semihost_ != nullptr && d.len == 4) {
        fp_leave();
        uint32_t pre = 0, post = 0;
        if (debug_read(pc_ - 4, 4, reinterpret_cast<uint8_t*>(&pre)) &&
            debug_read(pc_ + 4, 4, reinterpret_cast<uint8_t*>(&post)) && pre == kSemihostPre && post == kSemihostPost &&
            semihost_->semihost_call(*this))
            return;
    }
    raise_exception(cause::kBreakpoint, pc_);
}

void Hart::do_mret(const DecodedInsn& d) {
    if (priv_ != Priv::kMachine) {
        raise_illegal(d);
        return;
    }
    const uint32_t mpp = (mstatus_ & csr::kMstatusMpp) >> csr::kMstatusMppShift;
    priv_ = mpp == 3 ? Priv::kMachine : Priv::kUser;
    uint32_t st = mstatus_;
    st = (st & ~csr::kMstatusMie) | ((st & csr::kMstatusMpie) ? csr::kMstatusMie : 0);
    st |= csr::kMstatusMpie;
    if (isa_.u_mode) st &= ~csr::kMstatusMpp;  // MPP := least-privileged supported mode
    if (priv_ != Priv::kMachine) st &= ~csr::kMstatusMprv;
    mstatus_ = st;
    last_pc_ = pc_;
    npc_ = mepc_ & ~(isa_.c ? 1u : 3u);
    request_attention();
}

void Hart::do_wfi(const DecodedInsn& d) {
    if (priv_ == Priv::kUser && (mstatus_ & csr::kMstatusTw)) {
        raise_illegal(d);
        return;
    }
    cycles_ += cm_.wfi;
    const uint32_t mip = (msip_ ? csr::kMsip : 0) | (cycles_ >= timer_deadline_cycles_ ? csr::kMtip : 0) | irq_lines_;
    if (mip & mie_) return;  // an enabled interrupt is pending: WFI completes at once (spec 3.3.3)
    if (wfi_stops_) {
        request_stop(StopReason::kWfi);
        return;
    }
    if ((mie_ & csr::kMtip) && timer_deadline_cycles_ != ~0ull) {
        // Fast-forward simulated time to the timer event instead of spinning.
        if (cycles_ < timer_deadline_cycles_) cycles_ = timer_deadline_cycles_;
        request_attention();
        return;
    }
    request_stop(StopReason::kWfi, 0, "WFI with no enabled interrupt source pending");
}

namespace exec {
namespace {
enum class CsrOp { kWrite, kSet, kClear };

template <CsrOp kOp>
void csr_op(Hart& h, const DecodedInsn& d) {
    const uint32_t num = static_cast<uint32_t>(d.imm);
    const bool immediate = (d.rm & 4) != 0;
    const uint32_t src = immediate ? d.rs1 : h.x_[d.rs1];
    // csrrs/csrrc with rs1 = x0 (or uimm = 0) do not write (spec 9.1), so read-only CSRs are readable.
    const bool write = kOp == CsrOp::kWrite || d.rs1 != 0;
    uint32_t old = 0;
    if (!h.csr_read(num, old)) {
        h.raise_illegal(d);
        return;
    }
    if (write) {
        const uint32_t nv = kOp == CsrOp::kWrite ? src : kOp == CsrOp::kSet ? (old | src) : (old & ~src);
        if (!h.csr_write(num, nv)) {
            h.raise_illegal(d);
            return;
        }
    }
    h.x_[d.rd] = old;
}
}  // namespace

void ex_csrrw(Hart& h, const DecodedInsn& d) { csr_op<CsrOp::kWrite>(h, d); }
void ex_csrrs(Hart& h, const DecodedInsn& d) { csr_op<CsrOp::kSet>(h, d); }
void ex_csrrc(Hart& h, const DecodedInsn& d) { csr_op<CsrOp::kClear>(h, d); }
void ex_csrrwi(Hart& h, const DecodedInsn& d) { csr_op<CsrOp::kWrite>(h, d); }
void ex_csrrsi(Hart& h, const DecodedInsn& d) { csr_op<CsrOp::kSet>(h, d); }
void ex_csrrci(Hart& h, const DecodedInsn& d) { csr_op<CsrOp::kClear>(h, d); }
void ex_ecall(Hart& h, const DecodedInsn&) {
    h.raise_exception(h.priv_ == Priv::kMachine ? cause::kEcallM : cause::kEcallU, 0);
}
void ex_ebreak(Hart& h, const DecodedInsn& d) { h.do_ebreak(d); }
void ex_mret(Hart& h, const DecodedInsn& d) { h.do_mret(d); }
void ex_wfi(Hart& h, const DecodedInsn& d) { h.do_wfi(d); }

}  // namespace exec
}  // namespace iss
