// SPDX-License-Identifier: MIT
// The tnpuv2 core's command sequencer as plain C++: walks a stream (header check, TENSOR slots,
// engine commands through plan/execute, IRQ, END) over a MemView, with the cost of each command
// from the profile and an analytic DMA estimate. The direct executor of the compiler's tests and
// the decoder/linter use it; the SystemC core (npu/tnpuv2/tlm) runs the same steps with DMA on
// the bus and the DDR model's timing.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "hw/tnpuv2/profile.h"
#include "npu/tnpuv2/engine.h"

namespace npu::tnpuv2 {

/// Per engine command: what it did and where the time went (cycles; ps in the SystemC core).
struct OpRecord {
    uint32_t pc = 0;
    uint32_t index = 0;  ///< engine command number since START (OPS_DONE before it)
    std::string engine, kind;
    uint64_t macs = 0, macs_padded = 0;
    uint64_t bytes_read = 0, bytes_written = 0;
    uint64_t compute_cycles = 0, decode_cycles = 0, overhead_cycles = 0;
    uint64_t start_ps = 0, end_ps = 0, fetch_ps = 0, dma_read_ps = 0, compute_ps = 0, write_ps = 0, overhead_ps = 0;
};

struct StreamResult {
    std::vector<OpRecord> ops;
    Fault fault;           ///< code 0 when the stream reached END
    uint32_t irq_raw = 0;  ///< IRQ_RAW as the core leaves it
    uint32_t cmd_irq_code = 0;
    uint64_t cycles = 0;  ///< analytic total (direct execution)
};

/// Cycles of one engine command besides DMA: decode + compute + fixed overhead.
uint64_t decode_cycles(const Command& c, const hw::tnpuv2::Profile& p);
/// Analytic DMA time of `bytes` in cycles (sustained DDR bandwidth + one latency), direct runs.
uint64_t dma_cycles_estimate(uint64_t bytes, bool write, const hw::tnpuv2::Profile& p);
/// The IRQ_RAW bit a fault sets.
uint32_t fault_irq_bit(uint32_t fault_code);

/// Runs the stream at `words` (already fetched) through `m`. `functional` false: plans only
/// (timing), no data computed.
StreamResult run_stream(const std::vector<uint32_t>& words, const hw::tnpuv2::Profile& p, MemView& m,
                        bool functional = true);

/// A flat memory [base, base + size) for direct execution and tests.
class FlatMemory : public MemView {
   public:
    FlatMemory(uint64_t base, uint64_t size) : base_(base), bytes_(size, 0) {}
    bool read(uint64_t addr, uint8_t* dst, size_t n) override;
    bool write(uint64_t addr, const uint8_t* src, size_t n) override;
    uint8_t* at(uint64_t addr) { return bytes_.data() + (addr - base_); }
    uint64_t base() const { return base_; }
    uint64_t size() const { return bytes_.size(); }

   private:
    uint64_t base_;
    std::vector<uint8_t> bytes_;
};

}  // namespace npu::tnpuv2
