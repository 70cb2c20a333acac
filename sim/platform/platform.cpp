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
    unsigned next_target = 1;
    if (soc.mem.nbuf_bytes.value > 0) {
        const auto& m = soc.mem;
        nbuf_ = std::make_unique<Ddr>("nbuf", m.nbuf_bytes.value,
                                      npu::memory::DdrTimingModel(m.nbuf_bytes_per_s.value, 1.0, m.nbuf_latency_ns.value,
                                                                  m.nbuf_latency_ns.value),
                                      tw);
        bus_->init_socket.bind(nbuf_->socket);
        bus_->map(m.nbuf_base.value, m.nbuf_bytes.value, next_target++, "nbuf");
    }
    // The cores' DMA reaches memory through the IOMMU; the HAL's buffers are identity windows
    // (sim/hal_sim maps them), so IOVAs the driver programs equal the physical addresses.
    iommu_ = std::make_unique<Iommu>("iommu", soc);
    iommu_->to_memory.bind(bus_->targ_socket);
    for (int i = 0; i < soc.npu.core_count.value; ++i) {
        cores_.push_back(std::make_unique<RknpuCore>(fmt::format("npu_core{}", i).c_str(), i, soc, mode, tw));
        irqs_.push_back(std::make_unique<sc_core::sc_signal<bool>>(fmt::format("irq{}", i).c_str()));
        RknpuCore& c = *cores_.back();
        c.irq.bind(*irqs_.back());
        c.dma.bind(iommu_->socket);
        bus_->init_socket.bind(c.mmio);
        bus_->map(soc.npu.core_mmio_bases.value[static_cast<size_t>(i)], soc.npu.core_mmio_window_bytes.value,
                  next_target++, fmt::format("npu core {}", i));
    }
    if (tw) {
        tw_ = tw;
        // Initiator sockets in bind order: the host first, then the cores' DMA ports.
        bus_->set_observer([this](int id, const std::string& target, bool write, uint64_t bytes, uint64_t b, uint64_t e) {
            const std::string who = id == 0 ? "host" : fmt::format("npu_core{}", id - 1);
            const std::string series = who + (write ? " write" : " read");
            if (target == "ddr") ddr_rate_.add(series, b, e, bytes);
            else if (target == "nbuf") nbuf_rate_.add(series, b, e, bytes);
        });
    }
    SC_THREAD(host_thread);
}

Platform::~Platform() {
    if (!tw_) return;
    ddr_rate_.emit(*tw_, ddr_->name(), "DDR bandwidth (GB/s)");
    if (nbuf_) nbuf_rate_.emit(*tw_, nbuf_->name(), "NBUF bandwidth (GB/s)");
}

void Platform::host_thread() {
    // When the program returns nothing is left to happen and sc_start() returns by starvation.
    if (host_program_) host_program_();
}

}  // namespace sim
