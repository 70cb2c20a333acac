// SPDX-License-Identifier: MIT
// Hart run loop over pre-decoded code regions, interrupt delivery, traps and debugger breakpoints.
#include "riscv_iss/hart.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <stdexcept>

#include "block.h"
#include "cycle_cost.h"
#include "decoder.h"
#include "riscv_iss_isa_table.inc"

namespace iss {

uint32_t IsaConfig::misa() const {
    // misa: MXL=1 (RV32) in bits 31:30, one bit per extension letter (A=bit 0 ... Z=bit 25).
    uint32_t v = (1u << 30) | (1u << ('I' - 'A'));
    if (m) v |= 1u << ('M' - 'A');
    if (a) v |= 1u << ('A' - 'A');
    if (f) v |= 1u << ('F' - 'A');
    if (c) v |= 1u << ('C' - 'A');
    if (u_mode) v |= 1u << ('U' - 'A');
    return v;
}

Hart::Hart(const IsaConfig& isa, const CycleModel& cycles, MemoryPort& mem, const DeviceMap& devices)
    : isa_(isa),
      cm_(cycles),
      mem_(mem),
      decoder_(std::make_unique<Decoder>(isa)),
      devices_(devices),
      blocks_(std::make_unique<BlockCache>()) {
    if (cm_.mtime_divider == 0) throw std::invalid_argument("cycle model: mtime_divider must be > 0");
    if (isa_.triggers.count > kMaxTriggers)
        throw std::invalid_argument("isa.triggers.count " + std::to_string(isa_.triggers.count) + " exceeds " +
                                    std::to_string(kMaxTriggers));
    if (const char* e = std::getenv("NPUSIM_ISS_ENGINE")) engine_ = std::string(e) == "step" ? Engine::kStep : engine_;
    exec_blocks(nullptr, 0);  // publishes the threaded handlers to the translator
    reset(isa.reset_pc);
}

Hart::~Hart() {
    for (CodeRegion& r : code_regions_) std::free(r.decoded);
}

void Hart::reset(uint32_t pc) {
    std::memset(x_, 0, sizeof x_);
    std::memset(f_, 0, sizeof f_);
    pc_ = npc_ = last_pc_ = pc;
    cycles_ = instret_ = 0;
    priv_ = Priv::kMachine;
    fflags_ = frm_ = 0;
    mstatus_ = isa_.u_mode ? 0 : csr::kMstatusMpp;  // MPP is hardwired to M without U-mode
    mie_ = mip_ = mtvec_ = mscratch_ = mepc_ = mcause_ = mtval_ = mcounteren_ = mcountinhibit_ = 0;
    std::memset(pmpcfg_, 0, sizeof pmpcfg_);
    std::memset(pmpaddr_, 0, sizeof pmpaddr_);
    reservation_valid_ = false;
    ialign_mask_ = isa_.c ? 0 : 2;
    msip_ = 0;
    mtimecmp_ = ~0ull;
    mtime_offset_ = 0;
    irq_lines_ = 0;
    update_timer();
    stop_ = StopReason::kNone;
    fatal_kind_ = FatalKind::kNone;
    exit_code_ = 0;
    exit_via_tohost_ = false;
    stop_message_.clear();
    prev_load_rd_ = prev_rd_ = 0;
    attention_at_ = 0;
    const bool had_exec_triggers = exec_armed_ != 0;
    reset_triggers();
    recompute_watch_window();
    if (had_exec_triggers) flush_decode_cache();
}

void Hart::request_stop(StopReason reason, int exit_code, std::string message) {
    if (stop_ != StopReason::kNone) return;  // the first reason wins
    stop_ = reason;
    exit_code_ = exit_code;
    stop_message_ = std::move(message);
    request_attention();
}

void Hart::fatal(FatalKind kind, std::string message) {
    if (stop_ != StopReason::kNone) return;
    fatal_kind_ = kind;
    request_stop(StopReason::kFatal, 0, std::move(message));
}

StopReason Hart::run(uint64_t max_insns) {
    stop_ = StopReason::kNone;
    request_attention();
    in_run_ = true;
    uint64_t left;
    if (on_commit)
        left = run_loop<true>(max_insns);
    else if (engine_ == Engine::kStep)
        left = run_loop<false>(max_insns);
    else
        left = run_blocks(max_insns);
    in_run_ = false;
    fp_leave();
    executed_ += max_insns - left;
    if (stop_ == StopReason::kNone) stop_ = StopReason::kInsnLimit;
    return stop_;
}

// The step engine: one pre-decoded instruction per iteration. Everything the exec functions may touch lives
// in *this; the hazard state stays in locals. Returns the budget left.
template <bool kTrace>
uint64_t Hart::run_loop(uint64_t left) {
    uint8_t prev_load_rd = prev_load_rd_, prev_rd = prev_rd_;
    while (left != 0) {
        if (cycles_ >= attention_at_ && service_attention()) break;
        DecodedInsn* d;
        const uint32_t off = pc_ - code_base_;
        if (off < code_size_) {
            d = &code_[off >> 1];
            if (d->fn == nullptr) decode_at(*d, pc_, code_regions_.back());
        } else {
            d = fetch_slow();
            if (d == nullptr) continue;  // fetch fault taken (or fatal stop requested)
        }
        npc_ = pc_ + d->len;
        uint64_t cost = d->cycles;
        if (prev_load_rd != 0 && (d->hz_rs1 == prev_load_rd || d->hz_rs2 == prev_load_rd)) cost += cm_.load_use_penalty;
        if (d->jalr_rs != 0 && d->jalr_rs == prev_rd) cost += cm_.jalr_use_penalty;
        cycles_ += cost;
        const uint64_t retired = ++instret_;
        d->fn(*this, *d);
        prev_load_rd = d->load_rd;
        prev_rd = d->rd;
        if (kTrace && instret_ == retired) {  // trapped instructions do not commit
            fp_leave();
            on_commit(*this, pc_, *d);
        }
        pc_ = npc_;
        --left;
    }
    prev_load_rd_ = prev_load_rd;
    prev_rd_ = prev_rd;
    return left;
}

// The block engine's dispatcher: services interrupts and stop requests at instruction boundaries exactly
// where the step engine does, runs translated blocks while a whole block fits in the instruction budget
// and cannot reach the next timer event, and single-steps otherwise (budget tail, breakpoints, the last
// instructions before a timer deadline, code that cannot be translated).
uint64_t Hart::run_blocks(uint64_t left) {
    while (left != 0) {
        if (cycles_ >= attention_at_ && service_attention()) break;
        Block* b = find_block(pc_, true);
        if (b != nullptr && left >= b->n) {
            const uint64_t pen = entry_penalty(b, prev_load_rd_, prev_rd_);
            if (cycles_ + pen + b->bound < attention_at_) {
                left = exec_blocks(b, left);
                continue;
            }
        }
        left -= 1 - run_loop<false>(1);
        if (stop_ != StopReason::kNone) break;
    }
    return left;
}

bool Hart::service_attention() {
    if (stop_ != StopReason::kNone) return true;
    if (flush_pending_) {
        flush_pending_ = false;
        if (dmi_pending_) {
            dmi_pending_ = false;
            drop_code_regions();
        }
        flush_code_now();
    }
    mip_ = (msip_ ? csr::kMsip : 0) | (cycles_ >= timer_deadline_cycles_ ? csr::kMtip : 0) | irq_lines_;
    const uint32_t pending = mip_ & mie_;
    const bool enabled = priv_ == Priv::kUser || (mstatus_ & csr::kMstatusMie) != 0;
    if (pending != 0 && enabled) {
        // Priority: local lines 31..16 (platform-defined, highest first), then MEI > MSI > MTI
        // (Privileged spec 3.1.9).
        uint32_t code = 0;
        if (pending & csr::kLocalIrqMask) {
            code = 31 - static_cast<uint32_t>(__builtin_clz(pending & csr::kLocalIrqMask));
        } else if (pending & csr::kMeip) {
            code = cause::kMachineExtIrq;
        } else if (pending & csr::kMsip) {
            code = cause::kMachineSoftIrq;
        } else {
            code = cause::kMachineTimerIrq;
        }
        take_trap(cause::kInterrupt | code, 0, pc_);
        pc_ = npc_;
        if (stop_ != StopReason::kNone) return true;
    }
    attention_at_ = (mip_ & csr::kMtip) ? ~0ull : timer_deadline_cycles_;
    return false;
}

void Hart::update_timer() {
    if (mtimecmp_ <= mtime_offset_) {
        timer_deadline_cycles_ = 0;
        return;
    }
    const uint64_t ticks = mtimecmp_ - mtime_offset_;
    timer_deadline_cycles_ = ticks > ~0ull / cm_.mtime_divider ? ~0ull : ticks * cm_.mtime_divider;
}

void Hart::set_irq_line(unsigned irq, bool level) {
    if (irq != cause::kMachineExtIrq && (irq < 16 || irq > 31)) return;
    const uint32_t bit = 1u << irq;
    irq_lines_ = level ? (irq_lines_ | bit) : (irq_lines_ & ~bit);
    request_attention();
}

void Hart::take_trap(uint32_t cause_value, uint32_t tval, uint32_t epc) {
    const bool interrupt = (cause_value & cause::kInterrupt) != 0;
    if (on_trap) {
        fp_leave();
        on_trap(cause_value, epc, tval);
    }
    mepc_ = epc;
    mcause_ = cause_value;
    mtval_ = tval;
    uint32_t st = mstatus_;
    st = (st & ~csr::kMstatusMpie) | ((st & csr::kMstatusMie) ? csr::kMstatusMpie : 0);
    st &= ~csr::kMstatusMie;
    st = (st & ~csr::kMstatusMpp) | (static_cast<uint32_t>(priv_) << csr::kMstatusMppShift);
    mstatus_ = st;
    priv_ = Priv::kMachine;
    const uint32_t base = mtvec_ & ~3u;
    npc_ = (interrupt && (mtvec_ & 1)) ? base + 4 * (cause_value & 0x1f) : base;
    request_attention();
    if (!is_fetchable(npc_)) {
        const uint32_t code = cause_value & 0x7fffffffu;
        if (interrupt) {
            fatal(
                FatalKind::kUnhandledTrap,
                fmt::format("interrupt {} at pc 0x{:08x} but trap vector 0x{:08x} is not executable", code, epc, npc_));
        } else if (code == cause::kIllegalInsn) {
            fatal(FatalKind::kIllegalInsn,
                  fmt::format("illegal instruction 0x{:08x} at pc 0x{:08x} (no trap handler, mtvec=0x{:08x})", tval,
                              epc, mtvec_));
        } else if (code == cause::kInsnAccessFault) {
            fatal(FatalKind::kWildJump,
                  fmt::format("wild jump: fetch from unmapped address 0x{:08x}, coming from pc 0x{:08x} "
                              "(no trap handler, mtvec=0x{:08x})",
                              tval, last_pc_, mtvec_));
        } else if (code == cause::kLoadAccessFault || code == cause::kStoreAccessFault) {
            fatal(FatalKind::kAccessFault,
                  fmt::format("{} access fault at address 0x{:08x}, pc 0x{:08x} (no trap handler)",
                              code == cause::kLoadAccessFault ? "load" : "store", tval, epc));
        } else {
            fatal(FatalKind::kUnhandledTrap, fmt::format("unhandled exception cause {} at pc 0x{:08x}, mtval 0x{:08x} "
                                                         "(no trap handler, mtvec=0x{:08x})",
                                                         code, epc, tval, mtvec_));
        }
    }
    if (!interrupt) last_pc_ = epc;
}

void Hart::raise_exception(uint32_t cause_value, uint32_t tval) {
    --instret_;  // the faulting instruction does not retire
    take_trap(cause_value, tval, pc_);
}

bool Hart::is_fetchable(uint32_t addr) {
    DmiRegion r;
    return find_dmi(addr, r) && r.executable;
}

bool Hart::find_dmi(uint32_t addr, DmiRegion& out) {
    for (const DmiRegion& r : dmi_cache_) {
        if (addr - r.base < r.size) {
            out = r;
            return true;
        }
    }
    DmiRegion r;
    fp_leave();
    if (!mem_.get_dmi(addr, r) || r.size == 0 || addr - r.base >= r.size || r.host == nullptr) return false;
    dmi_cache_.push_back(r);
    const uint32_t wait = std::max(r.read_wait_cycles, r.write_wait_cycles);
    if (wait > max_wait_) {
        max_wait_ = wait;  // translated blocks' cost bounds assumed less: end the current block here
        request_attention();
    }
    out = r;
    return true;
}

bool Hart::enter_code_region(uint32_t pc) {
    for (std::size_t i = 0; i < code_regions_.size(); ++i) {
        if (pc - code_regions_[i].dmi.base < code_regions_[i].dmi.size) {
            std::swap(code_regions_[i], code_regions_.back());  // the current region is always back()
            break;
        }
    }
    if (code_regions_.empty() || pc - code_regions_.back().dmi.base >= code_regions_.back().dmi.size) {
        DmiRegion r;
        if (!find_dmi(pc, r) || !r.executable) return false;
        CodeRegion cr;
        cr.dmi = r;
        cr.decoded = static_cast<DecodedInsn*>(std::calloc(r.size / 2, sizeof(DecodedInsn)));
        if (cr.decoded == nullptr) throw std::bad_alloc();
        code_regions_.push_back(cr);
    }
    const CodeRegion& cur = code_regions_.back();
    code_base_ = cur.dmi.base;
    code_size_ = cur.dmi.size;
    code_ = cur.decoded;
    return true;
}

DecodedInsn* Hart::fetch_slow() {
    if (enter_code_region(pc_)) {
        DecodedInsn* d = &code_[(pc_ - code_base_) >> 1];
        if (d->fn == nullptr) decode_at(*d, pc_, code_regions_.back());
        return d;
    }
    npc_ = pc_;
    take_trap(cause::kInsnAccessFault, pc_, pc_);
    pc_ = npc_;
    return nullptr;
}

namespace {
void ex_fetch_fault_upper_half(Hart& h, const DecodedInsn&) { h.raise_exception(cause::kInsnAccessFault, h.pc_ + 2); }
void ex_debug_break(Hart& h, const DecodedInsn& d) { h.debug_break(d); }
void ex_exec_trigger(Hart& h, const DecodedInsn& d) { h.exec_trigger(d); }
}  // namespace

void Hart::decode_at(DecodedInsn& d, uint32_t pc, CodeRegion& region) {
    const uint32_t off = pc - region.dmi.base;
    region.touched_lo = std::min(region.touched_lo, off >> 1);
    region.touched_hi = std::max(region.touched_hi, (off >> 1) + 1);
    uint16_t lo = 0, hi = 0;
    std::memcpy(&lo, region.dmi.host + off, 2);
    uint32_t raw = lo;
    if ((lo & 3) == 3) {
        if (off + 4 > region.dmi.size) {
            std::memset(&d, 0, sizeof d);
            d.fn = &ex_fetch_fault_upper_half;
            d.len = 4;
            d.raw = raw;
            d.op = static_cast<uint16_t>(Op::kCount);
            mark_code(region.dmi, pc, 2);
            return;
        }
        std::memcpy(&hi, region.dmi.host + off + 2, 2);
        raw |= static_cast<uint32_t>(hi) << 16;
    }
    decoder_->decode(raw, d);
    decode_cost(d, region);
    mark_code(region.dmi, pc, d.len);
    if (exec_armed_ != 0 && exec_trigger_may_match(pc)) d.fn = &ex_exec_trigger;
    if (!breakpoints_.empty() && breakpoints_.count(pc)) d.fn = &ex_debug_break;
}

void Hart::decode_cost(DecodedInsn& d, const CodeRegion& region) const {
    const Op exec_op = d.fn == &ex_illegal ? Op::kCount : kOpcodes[d.op].exec_op;
    const uint32_t cost = base_cycles(exec_op, static_cast<uint32_t>(d.imm), cm_) + region.dmi.fetch_wait_cycles;
    d.cycles = static_cast<uint16_t>(cost > 0xffff ? 0xffff : cost);
}

void Hart::debug_break(const DecodedInsn& d) {
    if (step_over_bp_ && step_over_pc_ == pc_ && instret_ == step_over_instret_ + 1) {
        // Resuming from this breakpoint (nothing ran since the stop): execute the real instruction once.
        step_over_bp_ = false;
        DecodedInsn real;
        decoder_->decode(d.raw, real);
        real.cycles = d.cycles;
        real.fn(*this, real);
        return;
    }
    --instret_;
    cycles_ -= d.cycles;
    npc_ = pc_;
    request_stop(StopReason::kBreakpoint);
    step_over_bp_ = true;
    step_over_pc_ = pc_;
    step_over_instret_ = instret_;
}

void Hart::flush_decode_cache() {
    if (in_run_) {  // called from inside an instruction (a platform callback): flush at the next boundary
        flush_pending_ = true;
        request_attention();
        return;
    }
    flush_code_now();
}

void Hart::flush_code_now() {
    for (CodeRegion& r : code_regions_) {
        if (r.touched_hi > r.touched_lo)
            std::memset(r.decoded + r.touched_lo, 0, (r.touched_hi - r.touched_lo) * sizeof(DecodedInsn));
        r.touched_lo = ~0u;
        r.touched_hi = 0;
    }
    flush_blocks();
    clear_code_marks();
}

void Hart::drop_code_regions() {
    for (CodeRegion& r : code_regions_) std::free(r.decoded);
    code_regions_.clear();
    code_base_ = code_size_ = 0;
    code_ = nullptr;
}

void Hart::invalidate_dmi() {
    // Data accesses stop using the old host pointers at once; pre-decoded code goes at the next
    // instruction boundary when this is called from inside an instruction (a platform callback).
    dmi_cache_.clear();
    tlb_flush();
    code_pages_.clear();
    if (in_run_) {
        dmi_pending_ = flush_pending_ = true;
        request_attention();
        return;
    }
    drop_code_regions();
    flush_code_now();
}

void Hart::add_breakpoint(uint32_t pc) {
    breakpoints_.insert(pc);
    flush_decode_cache();
}

void Hart::remove_breakpoint(uint32_t pc) {
    breakpoints_.erase(pc);
    flush_decode_cache();
}

}  // namespace iss
