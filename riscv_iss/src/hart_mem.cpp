// SPDX-License-Identifier: MIT
// Hart memory slow paths: MMIO, misaligned accesses, the built-in CLINT, watchpoints, HTIF tohost and
// debugger accesses.
#include <fmt/format.h>

#include <algorithm>

#include "riscv_iss/hart.h"

namespace iss {
namespace {
// SiFive CLINT register offsets (also QEMU virt's and Spike's layout).
constexpr uint32_t kClintSize = 0x10000, kMsipOff = 0x0, kMtimecmpOff = 0x4000, kMtimeOff = 0xbff8;
// HTIF "magic memory" syscall number for write (riscv-pk syscall.h).
constexpr uint64_t kSysWrite = 64;

uint64_t replace_half(uint64_t v, bool high, uint32_t half) {
    return high ? ((v & 0xffffffffull) | (static_cast<uint64_t>(half) << 32)) : ((v & ~0xffffffffull) | half);
}
}  // namespace

bool Hart::clint_access(uint32_t off, uint32_t len, uint32_t& value, bool write) {
    if (len != 4 || (off & 3)) return false;
    if (off == kMsipOff) {
        if (write) {
            msip_ = value & 1;
            request_attention();
        } else {
            value = msip_;
        }
        return true;
    }
    if (off == kMtimecmpOff || off == kMtimecmpOff + 4) {
        const bool high = off != kMtimecmpOff;
        if (write) {
            mtimecmp_ = replace_half(mtimecmp_, high, value);
            update_timer();
            request_attention();
        } else {
            value = static_cast<uint32_t>(high ? mtimecmp_ >> 32 : mtimecmp_);
        }
        return true;
    }
    if (off == kMtimeOff || off == kMtimeOff + 4) {
        const bool high = off != kMtimeOff;
        const uint64_t now = mtime();
        if (write) {
            mtime_offset_ = replace_half(now, high, value) - cycles_ / cm_.mtime_divider;
            update_timer();
            request_attention();
        } else {
            value = static_cast<uint32_t>(high ? now >> 32 : now);
        }
        return true;
    }
    return write;  // other offsets: writes ignored, reads fault
}

bool Hart::check_watch(uint32_t addr, uint32_t len, bool write) {
    for (const Watch& w : watches_) {
        const bool kind_ok = write ? (static_cast<int>(w.kind) & 1) : (static_cast<int>(w.kind) & 2);
        if (kind_ok && addr < w.addr + w.len && w.addr < addr + len) {
            // Stop before the access (GDB's RISC-V target treats watchpoints as non-steppable: it removes
            // them, single-steps the instruction and compares values itself).
            watch_hit_addr_ = std::max(addr, w.addr);
            npc_ = pc_;
            --instret_;
            request_stop(StopReason::kWatchpoint);
            return true;
        }
    }
    return false;
}

bool Hart::data_trigger_check(uint32_t addr, bool write) {
    const int i = data_trigger_fires(addr, write);
    if (i < 0) return false;
    if ((triggers_[i].tdata1 & csr::kMcontrolActionMask) == 0) {
        raise_exception(cause::kBreakpoint, addr);  // before the access (timing = 0)
    } else {                                        // a debugger's trigger: stop before the access, like a watchpoint
        watch_hit_addr_ = addr;
        npc_ = pc_;
        --instret_;
        request_stop(StopReason::kWatchpoint);
    }
    return true;
}

// One bus access of 1..4 bytes that does not cross a word (the aligned accesses and the parts of a
// misaligned one): CLINT, DMI memory or the memory port. False = bus error.
bool Hart::mem_read(uint32_t addr, uint32_t len, uint32_t& value) {
    if (devices_.clint_base != 0 && addr - devices_.clint_base < kClintSize)
        return clint_access(addr - devices_.clint_base, len, value, false);
    DmiRegion r;
    if (find_dmi(addr, r)) {
        const uint32_t page = addr & ~0xfffu;
        if (!load_watch_active_ && page - r.base <= r.size - 4096 && r.size >= 4096) {
            TlbEntry& e = ld_tlb_[(addr >> 12) & (kTlbSize - 1)];
            e.tag = addr >> 12;
            e.wait = r.read_wait_cycles;
            e.addend = reinterpret_cast<uintptr_t>(r.host) - r.base;
        }
        value = 0;
        std::memcpy(&value, r.host + (addr - r.base), len);
        cycles_ += r.read_wait_cycles;
        return true;
    }
    uint8_t buf[4] = {};
    uint64_t wait = 0;
    fp_leave();
    const bool ok = mem_.read(addr, len, buf, cycles_, wait);
    // MMIO may take any time and change interrupt lines: the block engine ends its block here.
    request_attention();
    if (!ok) return false;
    value = 0;
    std::memcpy(&value, buf, len);
    cycles_ += wait;
    return true;
}

bool Hart::mem_write(uint32_t addr, uint32_t len, uint32_t value) {
    if (devices_.clint_base != 0 && addr - devices_.clint_base < kClintSize)
        return clint_access(addr - devices_.clint_base, len, value, true);
    DmiRegion r;
    if (find_dmi(addr, r)) {
        if (!r.writable) return false;
        const uint8_t code_page = code_pages_for(r.base, r.size).page[(addr - r.base) >> 12];
        const uint32_t page = addr & ~0xfffu;
        if (!code_page && page - r.base <= r.size - 4096 && r.size >= 4096 && !store_page_watched(page)) {
            TlbEntry& e = st_tlb_[(addr >> 12) & (kTlbSize - 1)];
            e.tag = addr >> 12;
            e.wait = r.write_wait_cycles;
            e.addend = reinterpret_cast<uintptr_t>(r.host) - r.base;
        }
        std::memcpy(r.host + (addr - r.base), &value, len);
        cycles_ += r.write_wait_cycles;
        if (code_page) check_code_write(addr, len);
        if (tohost_ != 0 && addr == tohost_ && value != 0) handle_tohost(value);
        return true;
    }
    uint8_t buf[4];
    std::memcpy(buf, &value, 4);
    uint64_t wait = 0;
    fp_leave();
    const bool ok = mem_.write(addr, len, buf, cycles_, wait);
    request_attention();  // see mem_read
    if (ok) cycles_ += wait;
    return ok;
}

// Watchpoints and load/store triggers come first (a breakpoint has priority over address-misaligned,
// Privileged spec table 3.7), then alignment. A misaligned access the core performs is split like
// CV32E40P's LSU does it: one transaction for the bytes in the first word, a second one (costing
// misaligned_penalty) for the rest when it crosses into the next word; lowest address first.
bool Hart::load_slow(uint32_t addr, uint32_t len, uint32_t& value, bool for_amo) {
    if (addr - watch_lo_ < watch_len_ &&
        (check_watch(addr, len, false) || (data_armed_ != 0 && data_trigger_check(addr, false))))
        return false;
    const uint32_t fault = for_amo ? cause::kStoreAccessFault : cause::kLoadAccessFault;
    if ((addr & (len - 1)) == 0) {
        if (mem_read(addr, len, value)) return true;
        raise_exception(fault, addr);
        return false;
    }
    if (isa_.misaligned_trap || for_amo) {
        raise_exception(for_amo ? cause::kStoreMisaligned : cause::kLoadMisaligned, addr);
        return false;
    }
    const uint32_t second = (addr | 3u) + 1u, n1 = std::min(len, second - addr);
    uint32_t lo = 0, hi = 0;
    if (!mem_read(addr, n1, lo)) {
        raise_exception(fault, addr);
        return false;
    }
    if (n1 < len) {
        if (!mem_read(second, len - n1, hi)) {
            raise_exception(fault, second);
            return false;
        }
        cycles_ += cm_.misaligned_penalty;
    }
    value = n1 < 4 ? lo | (hi << (8 * n1)) : lo;
    return true;
}

bool Hart::store_slow(uint32_t addr, uint32_t len, uint32_t value, bool for_amo) {
    if (addr - watch_lo_ < watch_len_ &&
        (check_watch(addr, len, true) || (data_armed_ != 0 && data_trigger_check(addr, true))))
        return false;
    if ((addr & (len - 1)) == 0) {
        if (mem_write(addr, len, value)) return true;
        raise_exception(cause::kStoreAccessFault, addr);
        return false;
    }
    if (isa_.misaligned_trap || for_amo) {
        raise_exception(cause::kStoreMisaligned, addr);
        return false;
    }
    const uint32_t second = (addr | 3u) + 1u, n1 = std::min(len, second - addr);
    const uint32_t lo = n1 < 4 ? value & ((1u << (8 * n1)) - 1) : value;
    if (!mem_write(addr, n1, lo)) {
        raise_exception(cause::kStoreAccessFault, addr);
        return false;
    }
    if (n1 < len) {
        if (!mem_write(second, len - n1, value >> (8 * n1))) {
            raise_exception(cause::kStoreAccessFault, second);
            return false;
        }
        cycles_ += cm_.misaligned_penalty;
    }
    return true;
}

void Hart::set_tohost(uint32_t tohost_addr, uint32_t fromhost_addr) {
    tohost_ = tohost_addr;
    fromhost_ = fromhost_addr;
    recompute_watch_window();
}

void Hart::handle_tohost(uint32_t value) {
    // HTIF (riscv-tests env/p/riscv_test.h): bit 0 set = exit with code value >> 1.
    if (value & 1) {
        if (stop_ == StopReason::kNone) exit_via_tohost_ = true;
        request_stop(StopReason::kExit, static_cast<int>(value >> 1));
        return;
    }
    // Otherwise `value` points at magic_mem: uint64 {syscall, a0, a1, a2, ...}.
    fp_leave();
    uint64_t args[4] = {};
    if (!debug_read(value, sizeof args, reinterpret_cast<uint8_t*>(args))) return;
    uint64_t ret = static_cast<uint64_t>(-1);
    if (args[0] == kSysWrite && (args[1] == 1 || args[1] == 2)) {
        std::string text(static_cast<std::size_t>(std::min<uint64_t>(args[3], 1u << 20)), '\0');
        if (debug_read(static_cast<uint32_t>(args[2]), static_cast<uint32_t>(text.size()),
                       reinterpret_cast<uint8_t*>(text.data()))) {
            if (console_out) console_out(text.data(), text.size());
            ret = text.size();
        }
    }
    debug_write(value, 8, reinterpret_cast<const uint8_t*>(&ret));
    const uint32_t zero = 0, one = 1;
    debug_write(tohost_, 4, reinterpret_cast<const uint8_t*>(&zero));
    if (fromhost_ != 0) debug_write(fromhost_, 4, reinterpret_cast<const uint8_t*>(&one));
}

void Hart::tlb_flush() {
    for (TlbEntry& e : ld_tlb_) e = TlbEntry{};
    for (TlbEntry& e : st_tlb_) e = TlbEntry{};
}

bool Hart::store_page_watched(uint32_t page) const {
    const uint64_t lo = page, hi = uint64_t{page} + 4096;
    const auto overlaps = [&](uint64_t a, uint64_t b) { return a < hi && lo < b; };
    if (tohost_ != 0 && overlaps(tohost_, uint64_t{tohost_} + 8)) return true;
    for (const Watch& w : watches_)
        if ((static_cast<int>(w.kind) & 1) && overlaps(w.addr, uint64_t{w.addr} + w.len)) return true;
    for (uint32_t i = 0; i < isa_.triggers.count; ++i) {
        const Trigger& t = triggers_[i];
        if (!((data_armed_ >> i) & 1) || !(t.tdata1 & csr::kMcontrolStore)) continue;
        const uint32_t match = (t.tdata1 & csr::kMcontrolMatchMask) >> csr::kMcontrolMatchShift;
        if (match == 2 ? hi > t.tdata2 : match == 3 ? lo < t.tdata2 : overlaps(t.tdata2, uint64_t{t.tdata2} + 1))
            return true;
    }
    return false;
}

void Hart::recompute_watch_window() {
    // The TLBs skip the watch check: refill them under the new watches.
    tlb_flush();
    load_watch_active_ = false;
    for (const Watch& w : watches_) load_watch_active_ |= (static_cast<int>(w.kind) & 2) != 0;
    for (uint32_t i = 0; i < isa_.triggers.count; ++i)
        load_watch_active_ |= ((data_armed_ >> i) & 1) && (triggers_[i].tdata1 & csr::kMcontrolLoad);
    uint64_t lo = ~0ull, hi = 0;
    for (const Watch& w : watches_) {
        lo = std::min<uint64_t>(lo, w.addr);
        hi = std::max<uint64_t>(hi, static_cast<uint64_t>(w.addr) + w.len);
    }
    if (tohost_ != 0) {
        lo = std::min<uint64_t>(lo, tohost_);
        hi = std::max<uint64_t>(hi, static_cast<uint64_t>(tohost_) + 8);
    }
    for (uint32_t i = 0; i < isa_.triggers.count; ++i) {  // load/store triggers
        if (!((data_armed_ >> i) & 1)) continue;
        const Trigger& t = triggers_[i];
        const uint32_t match = (t.tdata1 & csr::kMcontrolMatchMask) >> csr::kMcontrolMatchShift;
        const uint64_t tlo = match == 3 ? 0 : t.tdata2, thi = match == 2   ? (1ull << 32)
                                                              : match == 3 ? t.tdata2
                                                                           : t.tdata2 + 1ull;
        if (thi <= tlo) continue;
        lo = std::min(lo, tlo);
        hi = std::max(hi, thi);
    }
    if (hi == 0) {
        watch_lo_ = watch_len_ = 0;
        return;
    }
    // Widen by 3 bytes below so a misaligned-start access overlapping the window is caught.
    lo = lo >= 3 ? lo - 3 : 0;
    watch_lo_ = static_cast<uint32_t>(lo);
    watch_len_ = static_cast<uint32_t>(std::min<uint64_t>(hi - lo, 0xffffffffull));
}

void Hart::add_watchpoint(uint32_t addr, uint32_t len, WatchKind kind) {
    watches_.push_back({addr, len == 0 ? 1 : len, kind});
    recompute_watch_window();
}

void Hart::remove_watchpoint(uint32_t addr, uint32_t len, WatchKind kind) {
    for (auto it = watches_.begin(); it != watches_.end(); ++it) {
        if (it->addr == addr && it->len == (len == 0 ? 1 : len) && it->kind == kind) {
            watches_.erase(it);
            break;
        }
    }
    recompute_watch_window();
}

bool Hart::debug_read(uint32_t addr, uint32_t len, uint8_t* data) {
    fp_leave();
    for (uint32_t i = 0; i < len; ++i) {
        DmiRegion r;
        const uint32_t a = addr + i;
        if (find_dmi(a, r)) {
            data[i] = r.host[a - r.base];
            continue;
        }
        uint64_t wait = 0;
        if (!mem_.read(a, 1, data + i, cycles_, wait)) return false;
    }
    return true;
}

bool Hart::debug_write(uint32_t addr, uint32_t len, const uint8_t* data) {
    fp_leave();
    bool code_touched = false;
    for (uint32_t i = 0; i < len; ++i) {
        DmiRegion r;
        const uint32_t a = addr + i;
        if (find_dmi(a, r)) {
            r.host[a - r.base] = data[i];
            code_touched = code_touched || r.executable;
            continue;
        }
        uint64_t wait = 0;
        if (!mem_.write(a, 1, data + i, cycles_, wait)) return false;
    }
    if (code_touched) flush_pending_ = true, request_attention();
    return true;
}

}  // namespace iss
