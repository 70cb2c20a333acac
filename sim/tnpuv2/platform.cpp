// SPDX-License-Identifier: MIT
#include "tnpuv2/platform.h"

#include <cmath>

namespace sim::tnpuv2 {

using namespace npu::tlm_models;

TnpuPlatform::TnpuPlatform(sc_core::sc_module_name name, const hw::tnpuv2::Profile& p, npu::tnpuv2::Mode mode,
                           trace::TraceWriter* tw)
    : sc_module(name), host("host"), p_(p), mem_(p.memory_params()) {
    const uint64_t hop_ps = static_cast<uint64_t>(std::llround(p.mem.interconnect_latency_ns.value * 1000.0));
    bus_ = std::make_unique<Interconnect>("bus", hop_ps);
    ddr_ = std::make_unique<Ddr>("ddr", mem_, tw);
    core_ = std::make_unique<npu::tnpuv2::TnpuCore>("npu", p, mode, tw);
    host.bind(bus_->targ_socket);
    core_->dma.bind(bus_->targ_socket);
    bus_->init_socket.bind(ddr_->socket);
    bus_->map(p.mem.ddr_base.value, p.mem.ddr_size_bytes.value, 0, "ddr");
    bus_->init_socket.bind(core_->mmio);
    bus_->map(p.npu.mmio_base.value, hw::tnpuv2::kMmioWindowBytes, 1, "tnpuv2 npu");
    core_->irq.bind(irq_);
    SC_THREAD(host_thread);
}

void TnpuPlatform::host_thread() {
    if (program_) program_();
}

}  // namespace sim::tnpuv2
