// SPDX-License-Identifier: MIT
#include "exec/soc.h"

#include <fmt/format.h>

namespace sim::exec {

Mailbox::Mailbox() : sc_core::sc_prim_channel("mailbox") {
    // Without work the kernel waits for async updates instead of ending by starvation.
    async_attach_suspending();
}

void Mailbox::post(std::function<void()> fn) {
    {
        std::lock_guard<std::mutex> l(m_);
        q_.push_back(std::move(fn));
    }
    async_request_update();
}

std::deque<std::function<void()>> Mailbox::take() {
    std::lock_guard<std::mutex> l(m_);
    std::deque<std::function<void()>> out;
    out.swap(q_);
    return out;
}

bool Mailbox::pending() {
    std::lock_guard<std::mutex> l(m_);
    return !q_.empty();
}

void Mailbox::update() { ev_.notify(sc_core::SC_ZERO_TIME); }

namespace {
// The low 16 MiB of DDR stay unused (firmware, the kernel image on a board); buffers follow.
constexpr uint64_t kReservedLow = 16u << 20;
}  // namespace

SocHost::SocHost(sc_core::sc_module_name name, const hw::SocProfile& soc, uint32_t core_mask, trace::TraceWriter* tw)
    : sc_module(name),
      soc_(soc),
      tw_(tw),
      plat_("soc", soc, npu::tlm_models::SimMode::Full, tw),
      core_mask_(core_mask ? core_mask : (1u << soc.npu.core_count.value) - 1u),
      phys_(soc.mem.ddr_base.value + kReservedLow, soc.mem.ddr_size_bytes.value - kReservedLow) {
    // The HAL only kicks and reads registers here: its buffer pool is empty (the drivers place
    // buffers themselves), so no identity window shadows an IOVA.
    hal_ = std::make_unique<SimHal>(plat_, soc.mem.ddr_base.value, 0);
    SC_THREAD(dispatcher);
}

void SocHost::dispatcher() {
    if (on_start_) on_start_();
    for (;;) {
        sc_core::wait(mailbox_.event());
        for (auto& fn : mailbox_.take()) fn();
    }
}

std::optional<uint64_t> SocHost::alloc_phys(uint64_t bytes, bool dma32) {
    std::optional<uint64_t> pa = phys_.alloc_low(page_align(bytes), kPage);
    if (pa && dma32 && *pa + page_align(bytes) > (1ull << 32)) {
        phys_.free(*pa);
        return std::nullopt;
    }
    return pa;
}

bool SocHost::attach(uint64_t pa, Backing& b) {
    return plat_.ddr().store().attach(pa - soc_.mem.ddr_base.value, b.data(), b.bytes());
}

void SocHost::detach(uint64_t pa) { plat_.ddr().store().detach(pa - soc_.mem.ddr_base.value); }

}  // namespace sim::exec
