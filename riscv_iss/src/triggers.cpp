// SPDX-License-Identifier: MIT
// Sdtrig trigger module (RISC-V Debug Specification 0.13.2 chapter 5, Sdtrig 1.0): tselect, tdata1-3 and
// tinfo with IsaConfig::triggers.count match-control (mcontrol, type 2) triggers. Supported fields: dmode
// (hardwired 1 for debugger_only cores), action 0 (breakpoint exception) and 1 (enter debug mode = stop
// for the debugger, only with dmode = 1), match 0 (equal), 2 (>=) and 3 (<) on the address of the
// instruction or of the access (first byte), m/u, and execute/store/load as the preset allows; everything
// else (maskmax, hit, select, timing "before", sizelo "any", chain) reads as zero. Unsupported values are
// not kept (WARL), so software that writes and reads back tdata1 (riscv-tests rv32mi-p-breakpoint) sees what
// the core supports. mtval is the instruction address (execute) or the access address (load/store), as the
// Privileged spec says for breakpoint exceptions.
#include "decoder.h"
#include "riscv_iss/hart.h"

namespace iss {

namespace {
uint32_t reset_tdata1(const TriggerConfig& tc) {
    return csr::kMcontrolType | (tc.debugger_only ? csr::kMcontrolDmode : 0);
}
constexpr uint32_t kAccessBits = csr::kMcontrolExecute | csr::kMcontrolStore | csr::kMcontrolLoad;
}  // namespace

uint32_t Hart::legal_tdata1(uint32_t v, bool debugger) const {
    const TriggerConfig& tc = isa_.triggers;
    uint32_t r = csr::kMcontrolType;
    const bool dmode = tc.debugger_only || (debugger && (v & csr::kMcontrolDmode));
    if (dmode) r |= csr::kMcontrolDmode;
    const uint32_t action = (v & csr::kMcontrolActionMask) >> csr::kMcontrolActionShift;
    if (action == 1 && dmode) r |= 1u << csr::kMcontrolActionShift;
    const uint32_t match = (v & csr::kMcontrolMatchMask) >> csr::kMcontrolMatchShift;
    if (match == 2 || match == 3) r |= match << csr::kMcontrolMatchShift;
    r |= v & csr::kMcontrolM;
    if (isa_.u_mode) r |= v & csr::kMcontrolU;
    if (tc.execute) r |= v & csr::kMcontrolExecute;
    if (tc.store) r |= v & csr::kMcontrolStore;
    if (tc.load) r |= v & csr::kMcontrolLoad;
    return r;
}

bool Hart::trigger_csr_read(uint32_t num, uint32_t& value) const {
    const bool any = isa_.triggers.count != 0;
    switch (num) {
        case csr::kTselect:
            value = tselect_;
            return true;
        case csr::kTdata1:
            value = any ? triggers_[tselect_].tdata1 : 0;
            return true;  // type 0: no trigger
        case csr::kTdata2:
            value = any ? triggers_[tselect_].tdata2 : 0;
            return true;
        case csr::kTdata3:
            value = 0;
            return true;
        case csr::kTinfo:
            value = any ? 1u << 2 : 1u;
            return true;  // supported types: mcontrol / none
        default:
            return false;
    }
}

bool Hart::trigger_csr_write(uint32_t num, uint32_t v, bool debugger) {
    const TriggerConfig& tc = isa_.triggers;
    if (num < csr::kTselect || num > csr::kTinfo) return false;
    if (tc.count == 0 || num == csr::kTdata3 || num == csr::kTinfo) return true;  // WARL: nothing to keep
    if (num == csr::kTselect) {
        if (v < tc.count) tselect_ = v;  // other values: the selection stays (WARL)
        return true;
    }
    Trigger& t = triggers_[tselect_];
    if ((t.tdata1 & csr::kMcontrolDmode) && !debugger) return true;  // only Debug Mode writes dmode triggers
    if (num == csr::kTdata1)
        t.tdata1 = legal_tdata1(v, debugger);
    else
        t.tdata2 = v;
    triggers_changed();
    return true;
}

void Hart::triggers_changed() {
    exec_armed_ = data_armed_ = 0;
    for (uint32_t i = 0; i < isa_.triggers.count; ++i) {
        const uint32_t d1 = triggers_[i].tdata1;
        if (!(d1 & (csr::kMcontrolM | csr::kMcontrolU))) continue;
        if (d1 & csr::kMcontrolExecute) exec_armed_ |= 1u << i;
        if (d1 & (csr::kMcontrolLoad | csr::kMcontrolStore)) data_armed_ |= 1u << i;
    }
    recompute_watch_window();  // load/store triggers take the memory slow path
    flush_decode_cache();      // execute triggers: instructions at matching addresses are decoded to check
}

bool Hart::trigger_matches(const Trigger& t, uint32_t addr) const {
    switch ((t.tdata1 & csr::kMcontrolMatchMask) >> csr::kMcontrolMatchShift) {
        case 2:
            return addr >= t.tdata2;
        case 3:
            return addr < t.tdata2;
        default:
            return addr == t.tdata2;
    }
}

bool Hart::exec_trigger_may_match(uint32_t pc) const {
    for (uint32_t i = 0; i < isa_.triggers.count; ++i)
        if ((exec_armed_ >> i) & 1 && trigger_matches(triggers_[i], pc)) return true;
    return false;
}

int Hart::data_trigger_fires(uint32_t addr, bool write) const {
    const uint32_t mode = priv_ == Priv::kMachine ? csr::kMcontrolM : csr::kMcontrolU;
    const uint32_t kind = write ? csr::kMcontrolStore : csr::kMcontrolLoad;
    for (uint32_t i = 0; i < isa_.triggers.count; ++i) {
        const Trigger& t = triggers_[i];
        if ((data_armed_ >> i) & 1 && (t.tdata1 & mode) && (t.tdata1 & kind) && trigger_matches(t, addr))
            return static_cast<int>(i);
    }
    return -1;
}

void Hart::exec_trigger(const DecodedInsn& d) {
    const uint32_t mode = priv_ == Priv::kMachine ? csr::kMcontrolM : csr::kMcontrolU;
    for (uint32_t i = 0; i < isa_.triggers.count; ++i) {
        const Trigger& t = triggers_[i];
        if (!((exec_armed_ >> i) & 1) || !(t.tdata1 & mode) || !trigger_matches(t, pc_)) continue;
        if ((t.tdata1 & csr::kMcontrolActionMask) == 0) {
            raise_exception(cause::kBreakpoint, pc_);  // before the instruction executes
            return;
        }
        debug_break(d);  // action 1: the debugger's hardware breakpoint (stops, then steps over)
        return;
    }
    DecodedInsn real;  // no trigger fires in this mode: the instruction itself
    decoder_->decode(d.raw, real);
    real.cycles = d.cycles;
    real.fn(*this, real);
}

bool Hart::add_hw_breakpoint(uint32_t pc) {
    const TriggerConfig& tc = isa_.triggers;
    if (!tc.execute) return false;
    for (uint32_t i = 0; i < tc.count; ++i) {
        Trigger& t = triggers_[i];
        if (t.tdata1 & kAccessBits) continue;  // in use (by the guest or an earlier breakpoint)
        t.tdata1 = legal_tdata1(csr::kMcontrolDmode | (1u << csr::kMcontrolActionShift) | csr::kMcontrolM |
                                    csr::kMcontrolU | csr::kMcontrolExecute,
                                true);
        t.tdata2 = pc;
        triggers_changed();
        return true;
    }
    return false;
}

bool Hart::remove_hw_breakpoint(uint32_t pc) {
    for (uint32_t i = 0; i < isa_.triggers.count; ++i) {
        Trigger& t = triggers_[i];
        if ((t.tdata1 & csr::kMcontrolDmode) && (t.tdata1 & csr::kMcontrolExecute) && t.tdata2 == pc) {
            t.tdata1 = reset_tdata1(isa_.triggers);
            t.tdata2 = 0;
            triggers_changed();
            return true;
        }
    }
    return false;
}

void Hart::reset_triggers() {
    for (Trigger& t : triggers_) t = Trigger{reset_tdata1(isa_.triggers), 0};
    tselect_ = 0;
    exec_armed_ = data_armed_ = 0;
}

}  // namespace iss
