// SPDX-License-Identifier: MIT
// The simulated SoC that `npusim serve` holds for the programs it runs: the platform of the
// profile (cores, IOMMU, DDR), the HAL the emulated kernel drivers kick the cores with, and a
// dispatcher thread inside the SystemC kernel that runs requests posted from the server's socket
// threads. The kernel suspends (in real time) while no request and no NPU work is pending, so
// simulated time advances only while the NPU works: one program's timeline is deterministic;
// requests of several programs start at the simulated time they arrive at.
#pragma once
#ifndef SC_INCLUDE_DYNAMIC_PROCESSES
#define SC_INCLUDE_DYNAMIC_PROCESSES
#endif
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include <systemc>

#include "exec/memory.h"
#include "hal_sim/sim_hal.h"
#include "hw/profile.h"
#include "platform/platform.h"
#include "trace/trace_writer.h"

namespace sim::exec {

/// Thread-safe queue of closures for the SystemC side (async_request_update wakes the kernel).
class Mailbox : public sc_core::sc_prim_channel {
   public:
    Mailbox();
    void post(std::function<void()> fn);
    /// Everything posted so far (run by the dispatcher).
    std::deque<std::function<void()>> take();
    const sc_core::sc_event& event() const { return ev_; }
    /// Requests waiting (for the watchdog that repeats a wake-up the kernel may have missed).
    bool pending();
    void kick() { async_request_update(); }

   private:
    void update() override;
    sc_core::sc_event ev_;
    std::mutex m_;
    std::deque<std::function<void()>> q_;
};

class SocHost : public sc_core::sc_module {
   public:
    /// `core_mask`: the cores the emulated drivers may use (a board whose device tree or fuses
    /// disable some, as the vendor driver's rk3583 config does); 0 = all of the profile's.
    SocHost(sc_core::sc_module_name name, const hw::SocProfile& soc, uint32_t core_mask, trace::TraceWriter* tw);
    SC_HAS_PROCESS(SocHost);

    const hw::SocProfile& soc() const { return soc_; }
    Platform& platform() { return plat_; }
    SimHal& hal() { return *hal_; }
    trace::TraceWriter* trace() { return tw_; }
    uint32_t core_mask() const { return core_mask_; }
    int core_count() const { return soc_.npu.core_count.value; }
    bool iommu() const { return soc_.mem.npu_iommu.value != 0; }

    /// Run `fn` in the dispatcher thread (from any OS thread). Requests run in posting order.
    void post(std::function<void()> fn) { mailbox_.post(std::move(fn)); }
    /// Called from a watchdog thread: repeat the wake-up when requests wait (SystemC 2.3.4 can
    /// miss an async update that races with its suspension).
    void nudge() {
        if (mailbox_.pending()) mailbox_.kick();
    }
    /// `fn` runs once in the dispatcher when the simulation has started.
    void on_start(std::function<void()> fn) { on_start_ = std::move(fn); }

    /// Physical DDR for a buffer (page-aligned), below 4 GiB when `dma32`; nullopt when full.
    std::optional<uint64_t> alloc_phys(uint64_t bytes, bool dma32);
    void free_phys(uint64_t pa) { phys_.free(pa); }
    uint64_t phys_used_bytes() const { return phys_.used_bytes(); }
    /// Back physical [pa, pa + backing.bytes()) with the buffer's shared memory.
    bool attach(uint64_t pa, Backing& b);
    void detach(uint64_t pa);

    /// Simulated time in nanoseconds / picoseconds.
    static uint64_t now_ns() { return sc_core::sc_time_stamp().value() / 1000; }
    static uint64_t now_ps() { return sc_core::sc_time_stamp().value(); }

   private:
    void dispatcher();

    const hw::SocProfile& soc_;
    trace::TraceWriter* tw_;
    Platform plat_;
    std::unique_ptr<SimHal> hal_;
    Mailbox mailbox_;
    std::function<void()> on_start_;
    uint32_t core_mask_;
    RangeAllocator phys_;
};

}  // namespace sim::exec
