// SPDX-License-Identifier: MIT
// The tnpuv2 core as a SystemC module (thin wrapper over the plain C++ engines, SG-8.4): an MMIO
// target for its register window (hw/tnpuv2_cmds.h reg::), a DMA initiator into the shared
// interconnect/DDR models, an interrupt line. On CONTROL.START the command fetch unit reads the
// stream over the bus, then each engine command's planned reads are DMA'd into the core's
// staging buffers, the engine computes (full mode), its writes are DMA'd out; time comes from the
// DDR model (loads overlapped with compute per the profile) plus the engine's cycles.
#pragma once
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include <cstdint>
#include <string>
#include <systemc>
#include <tlm>
#include <vector>

#include "hw/tnpuv2/profile.h"
#include "npu/tnpuv2/core.h"
#include "trace/trace_writer.h"

namespace npu::tnpuv2 {

enum class Mode { Full, Timing };

class TnpuCore : public sc_core::sc_module {
   public:
    tlm_utils::simple_target_socket<TnpuCore> mmio;
    tlm_utils::simple_initiator_socket<TnpuCore> dma;
    sc_core::sc_out<bool> irq;

    TnpuCore(sc_core::sc_module_name name, const hw::tnpuv2::Profile& p, Mode mode, trace::TraceWriter* tw);
    SC_HAS_PROCESS(TnpuCore);

    /// Every engine command executed since construction (records of all kicks, in order).
    const std::vector<OpRecord>& ops() const { return records_; }
    /// One line per fault, in the order they happened.
    const std::vector<std::string>& diagnostics() const { return diags_; }
    /// Soft reset: registers, status and interrupt cleared (the driver's timeout path).
    void reset() { reset_state(); }
    uint64_t fetch_ps_total() const { return fetch_ps_; }

   private:
    void mmio_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    unsigned int mmio_dbg(tlm::tlm_generic_payload& gp);
    uint32_t reg_read(uint32_t off) const;
    void reg_write(uint32_t off, uint32_t v);
    void update_irq();
    void irq_method();
    void run_thread();
    void run_stream();
    void fail(const Fault& f);
    /// DMA of byte runs, read into `data` (one buffer per run) or written from it, starting at
    /// `start`; `done` = last completion. false + *bad on an error response.
    bool dma_runs(const std::vector<Run>& runs, bool write, std::vector<std::vector<uint8_t>>& data,
                  sc_core::sc_time start, sc_core::sc_time& done, uint64_t* bad, const char* what);
    void reset_state();

    const hw::tnpuv2::Profile& p_;
    Mode mode_;
    trace::TraceWriter* tw_;
    uint64_t clock_ps_;
    // registers
    uint32_t irq_raw_ = 0, irq_mask_ = 0, cmd_base_lo_ = 0, cmd_base_hi_ = 0, cmd_words_ = 0, cmd_pc_ = 0;
    uint32_t fault_code_ = 0, fault_info_ = 0, ops_done_ = 0, cmd_irq_code_ = 0;
    uint64_t fault_addr_ = 0, cycles_ = 0;
    bool busy_ = false;
    sc_core::sc_event start_ev_, irq_ev_;
    std::vector<OpRecord> records_;
    std::vector<std::string> diags_;
    uint64_t fetch_ps_ = 0;
    struct Tracks {
        int fetch = -1, conv = -1, vector = -1, pool = -1, move = -1, genbox = -1, dma_rd = -1, dma_wr = -1;
    } tr_;
    /// Weights the SRAM holds from the last CONV that loaded them (WEIGHT_REUSE).
    uint64_t sram_weight_addr_ = 0, sram_weight_bytes_ = 0;
    bool sram_weights_valid_ = false;
    std::vector<uint8_t> sram_weight_data_;  ///< their bytes (full mode)
};

}  // namespace npu::tnpuv2
