// SPDX-License-Identifier: MIT
// DDR (and on-chip SRAM, same shape) as a TLM-2.0 target: functional store (sparse) + timing model (bandwidth, latency,
// contention). Out-of-range accesses answer TLM_ADDRESS_ERROR_RESPONSE, never assert (SG-8.8).
#pragma once
#include <cstdint>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_target_socket.h>

#include "hw/profile.h"
#include "npu/memory/ddr_timing.h"
#include "npu/memory/sparse_memory.h"
#include "trace/trace_writer.h"

namespace npu::tlm_models {

class Ddr : public sc_core::sc_module {
   public:
    tlm_utils::simple_target_socket<Ddr> socket;

    Ddr(sc_core::sc_module_name name, const hw::MemoryParams& p, trace::TraceWriter* tw);
    /// Any memory with the same timing shape (on-chip SRAM/NBUF): size, sustained bandwidth, latency.
    Ddr(sc_core::sc_module_name name, uint64_t size_bytes, const memory::DdrTimingModel& timing, trace::TraceWriter* tw);

    memory::SparseMemory& store() { return mem_; }
    const memory::DdrTimingModel& timing() const { return timing_; }

   private:
    void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    unsigned int transport_dbg(tlm::tlm_generic_payload& gp);

    memory::SparseMemory mem_;
    memory::DdrTimingModel timing_;
    trace::TraceWriter* tw_;
    int track_ = -1;
};

}  // namespace npu::tlm_models
