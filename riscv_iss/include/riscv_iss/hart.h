// SPDX-License-Identifier: MIT
// One RV32IMAFC hart: architectural state, two execution engines over pre-decoded code (the block engine,
// default, and the per-instruction step engine), traps, CSRs, debug triggers and a built-in CLINT.
// No SystemC and no host time in here (SG-8.2): time is the hart's own cycle count.
#pragma once
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "riscv_iss/core_preset.h"
#include "riscv_iss/csr_numbers.h"
#include "riscv_iss/decoded_insn.h"
#include "riscv_iss/memory_port.h"

namespace iss {

class Decoder;
struct Block;
struct BlockCache;

enum class Priv : uint8_t { kUser = 0, kMachine = 3 };

/// Why Hart::run() returned.
enum class StopReason : uint8_t {
    kNone,        ///< not stopped
    kInsnLimit,   ///< the max_insns budget of this run() call is used up
    kExit,        ///< guest asked to exit (semihosting, HTIF tohost, test finisher); see exit_code()
    kBreakpoint,  ///< a debugger breakpoint was hit (pc_ is at the breakpoint, not executed)
    kWatchpoint,  ///< a debugger watchpoint was hit (pc_ is at the accessing instruction, not executed)
    kWfi,         ///< WFI with no enabled interrupt and no timer event: wait for an external line
    kFatal,       ///< an unrecoverable guest error; see stop_message()
};

/// Fatal-error categories reported to the runner (distinct exit codes, see run.h).
enum class FatalKind : uint8_t { kNone, kIllegalInsn, kWildJump, kAccessFault, kUnhandledTrap };

/// Called by the hart for the semihosting ebreak sequence (RISC-V semihosting spec 1.0, section 2).
class SemihostHandler {
   public:
    virtual ~SemihostHandler() = default;
    /// a0 holds the operation, a1 the parameter; the result goes to a0. Returns false if unsupported.
    virtual bool semihost_call(Hart& h) = 0;
};

/// Which engine Hart::run() uses. Both give identical architectural results, instret and cycles (the
/// differential tests check it); kStep is the reference and always runs single steps, traced runs and
/// debugger breakpoints. The default is kBlocks unless NPUSIM_ISS_ENGINE=step is set in the environment.
enum class Engine : uint8_t { kBlocks, kStep };

class Hart {
   public:
    Hart(const IsaConfig& isa, const CycleModel& cycles, MemoryPort& mem, const DeviceMap& devices = {});
    ~Hart();
    Hart(const Hart&) = delete;
    Hart& operator=(const Hart&) = delete;

    /// Resets architectural state (x/f registers zero, M-mode, counters zero) and sets pc.
    void reset(uint32_t pc);
    /// Executes up to `max_insns` instructions; stops earlier on exit, breakpoint, WFI or fatal error.
    /// The budget counts instructions attempted: retired ones and ones that trapped (so a trap storm is
    /// bounded too); executed_ accumulates what every run() call used of it.
    StopReason run(uint64_t max_insns);
    void set_engine(Engine e) { engine_ = e; }
    Engine engine() const { return engine_; }
    /// Instructions attempted over all run() calls (retired + trapped); see run().
    uint64_t executed_ = 0;

    // ---- platform interface -------------------------------------------------------------------
    /// External interrupt line (mip.MEIP) and local lines 16..31 of the interrupt controller.
    void set_irq_line(unsigned irq, bool level);
    /// Drops all cached host pointers and pre-decoded code (after remapping or external code writes).
    void invalidate_dmi();
    /// Discards pre-decoded instructions (fence.i, debugger memory writes).
    void flush_decode_cache();
    void set_semihost(SemihostHandler* handler) { semihost_ = handler; }
    /// HTIF: address of the `tohost` symbol (0 = none). A store there ends the run (value&1) or
    /// proxies a syscall (riscv-tests/riscv-pk "magic memory", only SYS_write).
    void set_tohost(uint32_t tohost_addr, uint32_t fromhost_addr);
    /// Where guest console output goes (semihosting, HTIF, MMIO console).
    std::function<void(const char* data, size_t len)> console_out;
    /// When true, WFI with nothing pending stops run() with StopReason::kWfi instead of fast-forwarding
    /// to the timer event, so a SystemC wrapper can wait for either the timer or an external line.
    bool wfi_stops_ = false;
    /// Cycle at which mtime reaches mtimecmp (~0 = never).
    uint64_t timer_deadline_cycles() const { return timer_deadline_cycles_; }
    /// Optional per-instruction callback for the commit log (slows the run loop down).
    std::function<void(const Hart& h, uint32_t pc, const DecodedInsn& d)> on_commit;
    /// Optional callback for every trap taken (exception or interrupt), before the handler runs.
    std::function<void(uint32_t cause, uint32_t epc, uint32_t tval)> on_trap;

    void request_stop(StopReason reason, int exit_code = 0, std::string message = {});
    StopReason stop_reason() const { return stop_; }
    int exit_code() const { return exit_code_; }
    /// The exit came through HTIF tohost (riscv-tests: exit code = failing test number).
    bool exit_via_tohost() const { return exit_via_tohost_; }
    const std::string& stop_message() const { return stop_message_; }
    FatalKind fatal_kind() const { return fatal_kind_; }

    // ---- debugger interface -------------------------------------------------------------------
    void add_breakpoint(uint32_t pc);
    void remove_breakpoint(uint32_t pc);
    /// Hardware breakpoint through a free Sdtrig trigger (dmode = 1, action = enter debug mode, which
    /// stops run() with kBreakpoint); false when every trigger is in use or the core has none.
    bool add_hw_breakpoint(uint32_t pc);
    bool remove_hw_breakpoint(uint32_t pc);
    enum class WatchKind : uint8_t { kWrite = 1, kRead = 2, kAccess = 3 };
    void add_watchpoint(uint32_t addr, uint32_t len, WatchKind kind);
    void remove_watchpoint(uint32_t addr, uint32_t len, WatchKind kind);
    uint32_t watch_hit_addr() const { return watch_hit_addr_; }
    /// Debug memory access (no side effects on MMIO devices other than the access itself).
    bool debug_read(uint32_t addr, uint32_t len, uint8_t* data);
    bool debug_write(uint32_t addr, uint32_t len, const uint8_t* data);
    bool csr_read(uint32_t num, uint32_t& value, bool debugger = false);
    bool csr_write(uint32_t num, uint32_t value, bool debugger = false);

    // ---- state visible to the exec functions (src/exec_*.cpp) ----------------------------------
    uint32_t x_[33] = {};  ///< x0..x31 and the write sink for rd = x0 (kXSink)
    uint32_t f_[32] = {};
    uint32_t pc_ = 0, npc_ = 0;
    uint64_t cycles_ = 0, instret_ = 0;
    Priv priv_ = Priv::kMachine;
    uint32_t fflags_ = 0, frm_ = 0;
    uint32_t mstatus_ = 0, mie_ = 0, mip_ = 0, mtvec_ = 0, mscratch_ = 0, mepc_ = 0, mcause_ = 0, mtval_ = 0;
    uint32_t mcounteren_ = 0, mcountinhibit_ = 0;
    uint64_t mcycle_offset_ = 0, minstret_offset_ = 0;  ///< CSR writes to mcycle/minstret
    uint32_t pmpcfg_[4] = {}, pmpaddr_[16] = {};
    bool reservation_valid_ = false;
    uint32_t reservation_addr_ = 0;
    uint32_t ialign_mask_ = 0;  ///< 2 when C is off: jump targets must be 4-byte aligned
    const IsaConfig isa_;
    const CycleModel cm_;

    /// Takes a synchronous exception for the current instruction (npc_ becomes the trap vector).
    void raise_exception(uint32_t cause, uint32_t tval);
    void raise_illegal(const DecodedInsn& d) { raise_exception(cause::kIllegalInsn, d.raw); }
    bool fp_enabled() const { return (mstatus_ & csr::kMstatusFs) != 0; }
    void fp_dirty() { mstatus_ |= csr::kMstatusFs; }
    void do_mret(const DecodedInsn& d);
    void do_wfi(const DecodedInsn& d);
    void do_ebreak(const DecodedInsn& d);
    void do_fence_i() {
        flush_pending_ = true;
        request_attention();
    }
    void request_attention() { attention_at_ = 0; }
    /// Executed in place of an instruction that carries a debugger breakpoint.
    void debug_break(const DecodedInsn& d);
    /// Executed in place of an instruction an execute trigger may match.
    void exec_trigger(const DecodedInsn& d);
    uint32_t last_pc_ = 0;  ///< pc of the last control transfer (wild-jump messages)

    /// F extension host environment (src/exec_f.cpp): the guest's rounding mode is set in the host FPU
    /// once and its IEEE flags accrue there while guest FP code runs; fp_leave() moves them into fflags_
    /// and restores the host state. Called before fflags is read or written and before any call out of
    /// the hart (memory port, console, semihosting, commit log), so host code never sees guest state.
    void fp_enter(unsigned rm) {
        if (!fp_active_ || rm != fp_rm_) fp_switch(rm);
    }
    void fp_leave() {
        if (fp_active_) fp_harvest();
    }

    template <typename T>
    bool load(uint32_t addr, T& out);
    template <typename T>
    bool store(uint32_t addr, T value);
    /// Load/store of any width through the slow path (MMIO, CLINT, misaligned, watchpoints, tohost).
    bool load_slow(uint32_t addr, uint32_t len, uint32_t& value, bool for_amo = false);
    bool store_slow(uint32_t addr, uint32_t len, uint32_t value, bool for_amo = false);
    /// One bus access within a word (CLINT, DMI memory, memory port): no watchpoint, alignment or trap logic.
    bool mem_read(uint32_t addr, uint32_t len, uint32_t& value);
    bool mem_write(uint32_t addr, uint32_t len, uint32_t value);

    uint64_t mtime() const { return cycles_ / cm_.mtime_divider + mtime_offset_; }

   private:
    friend struct BlockCache;
    struct CodeRegion {
        DmiRegion dmi;
        DecodedInsn* decoded = nullptr;             // calloc'ed: size/2 entries, lazily decoded
        uint32_t touched_lo = ~0u, touched_hi = 0;  // entry range ever decoded (what a flush must clear)
    };
    bool service_attention();
    template <bool kTrace>
    uint64_t run_loop(uint64_t left);
    uint64_t run_blocks(uint64_t left);
    uint64_t exec_blocks(Block* b, uint64_t left);
    Block* find_block(uint32_t pc, bool may_flush);
    Block* translate_block(uint32_t pc);
    bool block_may_start(uint32_t pc) const {
        return (breakpoints_.empty() || breakpoints_.count(pc) == 0) &&
               (exec_armed_ == 0 || !exec_trigger_may_match(pc));
    }
    // Sdtrig (src/triggers.cpp)
    static constexpr unsigned kMaxTriggers = 8;
    struct Trigger {
        uint32_t tdata1 = 0, tdata2 = 0;
    };
    bool trigger_csr_read(uint32_t num, uint32_t& value) const;
    bool trigger_csr_write(uint32_t num, uint32_t value, bool debugger);
    uint32_t legal_tdata1(uint32_t v, bool debugger) const;
    void triggers_changed();
    bool trigger_matches(const Trigger& t, uint32_t addr) const;
    bool exec_trigger_may_match(uint32_t pc) const;
    int data_trigger_fires(uint32_t addr, bool write) const;  // trigger index or -1
    void reset_triggers();
    void flush_blocks();
    void flush_code_now();
    void drop_code_regions();
    uint64_t entry_penalty(const Block* b, uint8_t prev_load_rd, uint8_t prev_rd) const;
    void fp_switch(unsigned rm);
    void fp_harvest();
    // Code-page tracking for self-modifying code: every decoded instruction marks its halfwords; a store
    // that overwrites one schedules a flush of all pre-decoded code (both engines) before the next insn.
    struct CodePages {
        uint32_t base = 0, size = 0;
        std::vector<uint8_t> page;                // per 4 KiB page: some halfword holds decoded code
        std::vector<std::vector<uint64_t>> bits;  // per page: one bit per halfword (empty = none)
    };
    CodePages& code_pages_for(uint32_t base, uint32_t size);
    void mark_code(const DmiRegion& r, uint32_t addr, uint32_t len);
    void check_code_write(uint32_t addr, uint32_t len);
    void clear_code_marks();
    bool enter_code_region(uint32_t pc);
    DecodedInsn* fetch_slow();
    void decode_cost(DecodedInsn& d, const CodeRegion& region) const;
    void decode_at(DecodedInsn& d, uint32_t pc, CodeRegion& region);
    bool find_dmi(uint32_t addr, DmiRegion& out);
    void take_trap(uint32_t cause, uint32_t tval, uint32_t epc);
    void update_timer();
    bool clint_access(uint32_t off, uint32_t len, uint32_t& value, bool write);
    bool check_watch(uint32_t addr, uint32_t len, bool write);
    bool data_trigger_check(uint32_t addr, bool write);
    void handle_tohost(uint32_t value);
    void recompute_watch_window();
    bool is_fetchable(uint32_t addr);
    void fatal(FatalKind kind, std::string message);
    uint32_t read_counter(uint32_t num) const;

    MemoryPort& mem_;
    std::unique_ptr<Decoder> decoder_;
    std::vector<DmiRegion> dmi_cache_;
    DeviceMap devices_;
    SemihostHandler* semihost_ = nullptr;
    std::vector<CodeRegion> code_regions_;
    // Current code region, copied out of code_regions_ for the hot loop.
    uint32_t code_base_ = 0, code_size_ = 0;
    DecodedInsn* code_ = nullptr;
    // Data fast path: direct-mapped software TLBs of 4 KiB pages of plain memory (as QEMU's softmmu TLB),
    // filled by the slow path. Pages with watched addresses (watchpoints, data triggers, tohost) or decoded
    // code are never in the store TLB, and no page is in the load TLB while a load watch exists, so a hit
    // needs no other check.
    struct TlbEntry {
        uint32_t tag = ~0u;    ///< page number (address >> 12); ~0 = empty
        uint32_t wait = 0;     ///< wait cycles per access
        uintptr_t addend = 0;  ///< host address = addend + guest address
    };
    static constexpr unsigned kTlbSize = 4096;  // 16 MiB of distinct pages before two collide
    TlbEntry ld_tlb_[kTlbSize], st_tlb_[kTlbSize];
    bool load_watch_active_ = false;
    void tlb_flush();
    bool store_page_watched(uint32_t page) const;
    std::vector<CodePages> code_pages_;
    uint32_t max_wait_ = 0;  // largest read/write wait of any DMI region seen (block cost bounds)
    std::unique_ptr<BlockCache> blocks_;
    Engine engine_ = Engine::kBlocks;
    bool in_run_ = false;
    bool fp_active_ = false;
    unsigned fp_rm_ = 0;
    uint32_t fp_host_csr_ = 0;
    // Accesses in [watch_lo_, watch_lo_ + watch_len_) take the slow path (watchpoints, tohost).
    uint32_t watch_lo_ = 0, watch_len_ = 0;
    struct Watch {
        uint32_t addr, len;
        WatchKind kind;
    };
    std::vector<Watch> watches_;
    std::set<uint32_t> breakpoints_;
    bool step_over_bp_ = false;
    uint32_t step_over_pc_ = 0;
    uint64_t step_over_instret_ = 0;
    uint32_t watch_hit_addr_ = 0;
    Trigger triggers_[kMaxTriggers];
    uint32_t tselect_ = 0;
    uint32_t exec_armed_ = 0, data_armed_ = 0;  // bit per trigger with execute / load or store enabled
    uint32_t tohost_ = 0, fromhost_ = 0;
    uint64_t attention_at_ = 0;
    uint8_t prev_load_rd_ = 0;  // hazard state carried between run() calls
    uint8_t prev_rd_ = 0;
    bool flush_pending_ = false;
    bool dmi_pending_ = false;
    StopReason stop_ = StopReason::kNone;
    FatalKind fatal_kind_ = FatalKind::kNone;
    int exit_code_ = 0;
    bool exit_via_tohost_ = false;
    std::string stop_message_;
    // CLINT
    uint32_t msip_ = 0;
    uint64_t mtimecmp_ = ~0ull;
    uint64_t mtime_offset_ = 0;
    uint64_t timer_deadline_cycles_ = ~0ull;
    uint32_t irq_lines_ = 0;  // external (MEIP) and local lines as mip bits
};

// ---- hot inline paths -----------------------------------------------------------------------
template <typename T>
inline bool Hart::load(uint32_t addr, T& out) {
    const TlbEntry& e = ld_tlb_[(addr >> 12) & (kTlbSize - 1)];
    if (e.tag == (addr >> 12) && (addr & (sizeof(T) - 1)) == 0) {
        std::memcpy(&out, reinterpret_cast<const uint8_t*>(e.addend + addr), sizeof(T));
        cycles_ += e.wait;
        return true;
    }
    uint32_t v = 0;
    if (!load_slow(addr, sizeof(T), v)) return false;
    out = static_cast<T>(v);
    return true;
}

template <typename T>
inline bool Hart::store(uint32_t addr, T value) {
    const TlbEntry& e = st_tlb_[(addr >> 12) & (kTlbSize - 1)];
    if (e.tag == (addr >> 12) && (addr & (sizeof(T) - 1)) == 0) {
        std::memcpy(reinterpret_cast<uint8_t*>(e.addend + addr), &value, sizeof(T));
        cycles_ += e.wait;
        return true;
    }
    return store_slow(addr, sizeof(T), static_cast<uint32_t>(value));
}

}  // namespace iss
