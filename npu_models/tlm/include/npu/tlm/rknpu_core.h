// SPDX-License-Identifier: MIT
// One RKNPU core as a SystemC module: an MMIO target for its register window, a DMA initiator
// into the interconnect, and an interrupt line. The PC fetches regcmd entries over the bus,
// writes them into the register file, executes a task at its op-enable entry (CNA -> CORE -> DPU
// through the functional engines, timed from the profile and the DDR model) and follows the
// PC_BASE_ADDRESS/PC_REGISTER_AMOUNTS chain until TASK_CON's task count is reached.
#pragma once
#include <cstdint>
#include <string>
#include <map>
#include <memory>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "hw/profile.h"
#include "npu/rknpu/conv_config.h"
#include "npu/rknpu/pc.h"
#include "npu/rknpu/task.h"
#include "npu/rknpu/reg_file.h"
#include "trace/trace_writer.h"

namespace npu::tlm_models {

/// Per-task figures the run report is built from (times in picoseconds).
struct TaskRecord {
    int core = 0;
    int index = 0;  ///< task index within the kick
    std::string kind;  ///< what the task computed ("conv+relu", ...)
    uint64_t start_ps = 0, end_ps = 0;
    uint64_t fetch_ps = 0;    ///< regcmd fetch + decode
    uint64_t dma_read_ps = 0; ///< feature/weight/bias loads (overlap with compute)
    uint64_t compute_ps = 0;  ///< block pipeline busy (MAC array, DPU, PPU)
    uint64_t compute_cycles = 0;
    uint64_t write_ps = 0;    ///< DPU write-back tail
    uint64_t overhead_ps = 0; ///< fixed per-task cost
    uint64_t regcmd_entries = 0;
    uint64_t bytes_read = 0, bytes_written = 0;        ///< DDR traffic
    uint64_t sram_bytes_read = 0, sram_bytes_written = 0;  ///< on-chip NBUF traffic
    uint64_t macs = 0, macs_padded = 0;
    std::vector<rknpu::Fault> faults;
    std::vector<std::string> assumptions;  ///< documented assumptions the task relied on (A-...)
};

enum class SimMode { Full, Timing };

/// Computes a task's writes in place of rknpu::execute_task (the RTL co-simulation, rtl/). Called
/// in the core's SC_THREAD at the task's start, after the loads, in full mode only; it may run
/// delta cycles but must not advance simulated time (the platform's timing stays the model's).
class TaskExecutor {
   public:
    virtual ~TaskExecutor() = default;
    virtual std::vector<std::vector<uint8_t>> execute(const rknpu::TaskPlan& plan,
                                                      std::vector<std::vector<uint8_t>>&& reads, const TaskRecord& rec) = 0;
};

class RknpuCore : public sc_core::sc_module {
   public:
    tlm_utils::simple_target_socket<RknpuCore> mmio;
    tlm_utils::simple_initiator_socket<RknpuCore> dma;
    sc_core::sc_out<bool> irq;

    RknpuCore(sc_core::sc_module_name name, int index, const hw::SocProfile& soc, SimMode mode,
              trace::TraceWriter* tw);
    SC_HAS_PROCESS(RknpuCore);

    const std::vector<TaskRecord>& tasks() const { return records_; }
    /// Human-readable diagnostics (faults) in the order they happened.
    const std::vector<std::string>& diagnostics() const { return diags_; }
    /// Soft reset (driver timeout path): registers, status and interrupt cleared.
    void reset() { reset_core_state(); }
    /// Route the task computations through `e` (nullptr: the C++ engines).
    void set_task_executor(TaskExecutor* e) { executor_ = e; }

   private:
    void mmio_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    unsigned int mmio_dbg(tlm::tlm_generic_payload& gp);
    uint32_t reg_read(uint32_t offset) const;
    void reg_write(uint32_t offset, uint32_t value);
    void update_irq();
    void irq_method();  ///< the only writer of the irq port
    void pc_thread();
    void run_kick();
    /// Moves the regions over the bus starting at absolute time `start` (now or later): each region
    /// is split into segments with a few in flight, and the thread synchronises whenever it runs a
    /// quantum ahead, so concurrent initiators interleave on the DDR channel. Returns false (and
    /// sets `bad` to the failing region) on an error response. `done` = last completion.
    /// `shared` (reads in full mode): a weight region whose bytes are those of an earlier read
    /// (kept while the memory's stamps say they did not change, mem_stamp.h) comes back as that
    /// shared image in (*shared)[r] with data[r] empty; the bus traffic and its timing are the same.
    bool dma_move(const std::vector<rknpu::DmaRegion>& regions, bool write, std::vector<std::vector<uint8_t>>& data,
             sc_core::sc_time start, sc_core::sc_time& done, size_t& bad,
             std::vector<std::shared_ptr<const std::vector<uint8_t>>>* shared = nullptr);
    /// The MemStampQuery answer for [addr, addr + len) through the DMA port (false: unreachable).
    bool mem_stamp(uint64_t addr, uint64_t len, uint64_t& stamp);
    /// Fetch `entries` regcmd words at `addr` over the bus; false on an error response.
    bool fetch_regcmd(uint64_t addr, uint64_t entries, std::vector<uint64_t>& words, sc_core::sc_time& done);
    void exec_task(TaskRecord& rec, const rknpu::TaskEntries& entries, uint64_t t0_ps);
    void raise_fault(TaskRecord& rec, uint32_t status_bits);
    void reset_core_state();

    int index_;
    const hw::SocProfile& soc_;
    SimMode mode_;
    trace::TraceWriter* tw_;
    rknpu::RegFile rf_;
    uint32_t raw_status_ = 0;
    uint32_t task_status_ = 0;
    bool busy_ = false;
    bool done_ = false;  ///< the last kick finished (completion or fault)
    sc_core::sc_event kick_;
    sc_core::sc_event irq_ev_;
    bool irq_level_ = false;
    std::vector<TaskRecord> records_;
    std::vector<std::string> diags_;
    /// The DMA engines' bus transaction, reused burst after burst (construction allocates).
    tlm::tlm_generic_payload dma_gp_;
    /// Weight images read before, by (address, bytes), with the memory stamp they were read at
    /// (issue 25: a repeated inference reads the same weights; they are handed to the engines
    /// shared instead of copied). Bounded by kSnapshotBytes.
    struct Snapshot {
        std::shared_ptr<const std::vector<uint8_t>> bytes;
        uint64_t stamp = 0;
    };
    std::map<std::pair<uint64_t, uint64_t>, Snapshot> snapshots_;
    uint64_t snapshot_bytes_ = 0;
    void trace_task(const TaskRecord& rec, const rknpu::TaskPlan& plan, uint64_t t0_ps, uint64_t load_ps,
                    uint64_t task_ps);
    struct Tracks {
        int pc = -1, cna = -1, core = -1, dpu = -1, dma_rd = -1, dma_wr = -1;
    } tr_;
    uint64_t clock_ps_;  ///< one NPU clock cycle
    rknpu::CoreState state_;  ///< CBUF-resident weights, ping-pong groups (the PC interpreter's)
    TaskExecutor* executor_ = nullptr;
};

}  // namespace npu::tlm_models
