// SPDX-License-Identifier: MIT
#include "platform/platform.h"

#include <cmath>

#include <fmt/format.h>

namespace sim {

using namespace npu::tlm_models;

Platform::Platform(sc_core::sc_module_name name, const hw::SocProfile& soc, SimMode mode, trace::TraceWriter* tw)
    : sc_module(name), host("host"), soc_(soc) {
    const uint64_t hop_ps = static_cast<uint64_t>(std::llround(soc.mem.interconnect_latency_ns.value * 1000.0));
    bus_ = std::make_unique<Interconnect>("bus", hop_ps);
    ddr_ = std::make_unique<Ddr>("ddr", soc.mem, tw);
    host.bind(bus_->targ_socket);
    bus_->init_socket.bind(ddr_->socket);
    bus_->map(soc.mem.ddr_base.value, soc.mem.ddr_size_bytes.value, 0, "ddr");
    for (int i = 0; i < soc.npu.core_count.value; ++i) {
        cores_.push_back(std::make_unique<RknpuCore>(fmt::format("npu_core{}", i).c_str(), i, soc, mode, tw));
        irqs_.push_back(std::make_unique<sc_core::sc_signal<bool>>(fmt::format("irq{}", i).c_str()));
        RknpuCore& c = *cores_.back();
        c.irq.bind(*irqs_.back());
        c.dma.bind(bus_->targ_socket);
        bus_->init_socket.bind(c.mmio);
        bus_->map(soc.npu.core_mmio_bases.value[static_cast<size_t>(i)], soc.npu.core_mmio_window_bytes.value,
                  static_cast<unsigned>(i + 1), fmt::format("npu core {}", i));
    }
    SC_THREAD(host_thread);
}

void Platform::host_thread() {
    // When the program returns nothing is left to happen and sc_start() returns by starvation.
    if (host_program_) host_program_();
}

}  // namespace sim
