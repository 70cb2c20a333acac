// SPDX-License-Identifier: MIT
// CSR file: access rules (privilege, read-only, mcounteren, mstatus.FS) and per-register WARL behaviour.
// Unimplemented CSR numbers make csr_read/csr_write fail, which the Zicsr instructions turn into an
// illegal-instruction trap (Privileged spec 2.1).
#include "riscv_iss/hart.h"

namespace iss {
namespace {
// mstatus bits software may write: MIE, MPIE, MPP, FS, MPRV, TW.
constexpr uint32_t kMstatusWritable =
    csr::kMstatusMie | csr::kMstatusMpie | csr::kMstatusMpp | csr::kMstatusFs | csr::kMstatusMprv | csr::kMstatusTw;
constexpr uint32_t kMieWritable = csr::kMsip | csr::kMtip | csr::kMeip | csr::kLocalIrqMask;

bool in(uint32_t v, uint32_t lo, uint32_t hi) { return v >= lo && v <= hi; }
}  // namespace

uint32_t Hart::read_counter(uint32_t num) const {
    const uint64_t cyc = cycles_ + mcycle_offset_;
    const uint64_t ret = instret_ - 1 + minstret_offset_;  // instructions retired before this one
    const uint64_t tm = mtime();
    switch (num & 0x7f) {  // low bits of cycle/mcycle/... share the same layout
        case 0x00: return static_cast<uint32_t>(cyc);
        case 0x01: return static_cast<uint32_t>(tm);
        case 0x02: return static_cast<uint32_t>(ret);
        default: return 0;
    }
}

bool Hart::csr_read(uint32_t num, uint32_t& value, bool debugger) {
    if (!debugger && static_cast<uint32_t>(priv_) < ((num >> 8) & 3)) return false;
    if (in(num, csr::kTselect, csr::kTinfo)) return trigger_csr_read(num, value);
    if (in(num, csr::kFflags, csr::kFcsr)) {
        if (!isa_.f || (!debugger && !fp_enabled())) return false;
        fp_leave();  // flags accrued in the host FPU belong to earlier instructions
        value = num == csr::kFflags ? fflags_ : num == csr::kFrm ? frm_ : (frm_ << 5) | fflags_;
        return true;
    }
    if (in(num, csr::kCycle, csr::kHpmcounter31) || in(num, csr::kCycleh, csr::kHpmcounter31h)) {
        if (!debugger && priv_ == Priv::kUser && !((mcounteren_ >> (num & 0x1f)) & 1)) return false;
        const bool high = num >= csr::kCycleh;
        if ((num & 0x1f) > 2) {
            value = 0;
            return true;
        }
        const uint64_t v = (num & 0x1f) == 0   ? cycles_ + mcycle_offset_
                           : (num & 0x1f) == 1 ? mtime()
                                               : instret_ - 1 + minstret_offset_;
        value = static_cast<uint32_t>(high ? v >> 32 : v);
        return true;
    }
    if (in(num, csr::kMcycle, csr::kMhpmcounter31) || in(num, csr::kMcycleh, csr::kMhpmcounter31h)) {
        if ((num & 0x1f) == 1) return false;  // there is no mtime CSR
        const bool high = num >= csr::kMcycleh;
        const uint64_t v = (num & 0x1f) == 0   ? cycles_ + mcycle_offset_
                           : (num & 0x1f) == 2 ? instret_ - 1 + minstret_offset_
                                               : 0;
        value = static_cast<uint32_t>(high ? v >> 32 : v);
        return true;
    }
    if (in(num, csr::kMhpmevent3, csr::kMhpmevent31)) {
        value = 0;
        return true;
    }
    if (in(num, csr::kPmpcfg0, csr::kPmpcfg3)) {
        value = pmpcfg_[num - csr::kPmpcfg0];
        return true;
    }
    if (in(num, csr::kPmpaddr0, csr::kPmpaddr15)) {
        value = pmpaddr_[num - csr::kPmpaddr0];
        return true;
    }
    switch (num) {
        case csr::kMvendorid: value = isa_.mvendorid; return true;
        case csr::kMarchid: value = isa_.marchid; return true;
        case csr::kMimpid: value = isa_.mimpid; return true;
        case csr::kMhartid: value = isa_.mhartid; return true;
        case csr::kMconfigptr: value = 0; return true;
        case csr::kMstatus: {
            const bool dirty = (mstatus_ & csr::kMstatusFs) == csr::kMstatusFs;
            value = mstatus_ | (dirty ? csr::kMstatusSd : 0);
            return true;
        }
        case csr::kMstatush:
        case csr::kMenvcfg:
        case csr::kMenvcfgh: value = 0; return true;
        case csr::kMisa: value = isa_.misa(); return true;
        case csr::kMie: value = mie_; return true;
        case csr::kMip:
            value = (msip_ ? csr::kMsip : 0) | (cycles_ >= timer_deadline_cycles_ ? csr::kMtip : 0) | irq_lines_;
            return true;
        case csr::kMtvec: value = mtvec_; return true;
        case csr::kMcounteren: value = mcounteren_; return true;
        case csr::kMcountinhibit: value = mcountinhibit_; return true;
        case csr::kMscratch: value = mscratch_; return true;
        case csr::kMepc: value = mepc_ & ~(isa_.c ? 1u : 3u); return true;
        case csr::kMcause: value = mcause_; return true;
        case csr::kMtval: value = mtval_; return true;
        default: return false;
    }
}

bool Hart::csr_write(uint32_t num, uint32_t v, bool debugger) {
    if (!debugger && (static_cast<uint32_t>(priv_) < ((num >> 8) & 3) || (num >> 10) == 3)) return false;
    if (in(num, csr::kTselect, csr::kTinfo)) return trigger_csr_write(num, v, debugger);
    if (in(num, csr::kFflags, csr::kFcsr)) {
        if (!isa_.f || (!debugger && !fp_enabled())) return false;
        fp_leave();
        if (num != csr::kFrm) fflags_ = v & 0x1f;
        if (num == csr::kFrm) frm_ = v & 7;
        if (num == csr::kFcsr) frm_ = (v >> 5) & 7;
        fp_dirty();
        return true;
    }
    if (in(num, csr::kMcycle, csr::kMhpmcounter31) || in(num, csr::kMcycleh, csr::kMhpmcounter31h)) {
        const unsigned idx = num & 0x1f;
        if (idx == 1) return false;
        const bool high = num >= csr::kMcycleh;
        auto patch = [&](uint64_t cur) {
            return high ? ((cur & 0xffffffffull) | (static_cast<uint64_t>(v) << 32)) : ((cur & ~0xffffffffull) | v);
        };
        // The written value is what the next instruction reads (Privileged spec 3.3.1).
        if (idx == 0) mcycle_offset_ = patch(cycles_ + mcycle_offset_) - cycles_;
        if (idx == 2) minstret_offset_ = patch(instret_ - 1 + minstret_offset_) - instret_;
        return true;  // mhpmcounter3..31: hardwired zero
    }
    if (in(num, csr::kMhpmevent3, csr::kMhpmevent31)) return true;
    if (in(num, csr::kPmpcfg0, csr::kPmpcfg3)) {
        pmpcfg_[num - csr::kPmpcfg0] = v;
        return true;
    }
    if (in(num, csr::kPmpaddr0, csr::kPmpaddr15)) {
        pmpaddr_[num - csr::kPmpaddr0] = v;
        return true;
    }
    switch (num) {
        case csr::kMstatus: {
            uint32_t nv = (mstatus_ & ~kMstatusWritable) | (v & kMstatusWritable);
            const uint32_t mpp = (nv & csr::kMstatusMpp) >> csr::kMstatusMppShift;
            // WARL: only M (3) and, with U-mode, U (0) are legal; S/H values read back as U.
            if (!isa_.u_mode || mpp == 3)
                nv |= csr::kMstatusMpp;
            else
                nv &= ~csr::kMstatusMpp;
            if (!isa_.f) nv &= ~csr::kMstatusFs;
            mstatus_ = nv;
            request_attention();
            return true;
        }
        case csr::kMstatush:
        case csr::kMisa:
        case csr::kMenvcfg:
        case csr::kMenvcfgh: return true;  // WARL, read-only
        case csr::kMie:
            mie_ = v & kMieWritable;
            request_attention();
            return true;
        case csr::kMip: return true;  // MSIP/MTIP/MEIP and local lines are driven by the CLINT and IRQ inputs
        case csr::kMtvec: mtvec_ = v & ~2u; return true;  // modes 2/3 reserved: keep direct/vectored
        case csr::kMcounteren: mcounteren_ = v & 7; return true;
        case csr::kMcountinhibit: mcountinhibit_ = v & 5; return true;
        case csr::kMscratch: mscratch_ = v; return true;
        case csr::kMepc: mepc_ = v & ~1u; return true;
        case csr::kMcause: mcause_ = v; return true;
        case csr::kMtval: mtval_ = v; return true;
        default: return false;
    }
}

}  // namespace iss
