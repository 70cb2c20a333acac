// SPDX-License-Identifier: MIT
// The verilated RKNPU datapath (rtl/rknpu/npu_rknpu_dp.sv, Verilator --sc) as a SystemC module,
// with the clocked driver that streams a task's beats through it. The driver runs in the caller's
// SC_THREAD and clocks the RTL with delta cycles (two per clock edge), so the RTL co-simulates
// inside the platform's SystemC kernel without advancing simulated time: the platform's timeline
// stays the timing model's, and the RTL's cycles are counted beside it (and drawn on the VCD).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "npu/rknpu/cube.h"
#include "rtl/core_seq.h"
#include "rtl/dpu_map.h"
#include "rtl/streams.h"

namespace npu::rtl {

/// One task's work for the datapath.
struct DatapathJob {
    CoreSequencer* core = nullptr;  ///< CORE streams; nullptr: the CORE idles
    const DpuPorts* dpu = nullptr;  ///< DPU program; nullptr: the DPU idles
    bool flying = false;            ///< the DPU takes the CORE's accumulators (core and dpu set)
    CubeBeats* dpu_in = nullptr;    ///< the DPU input when not flying (MRDMA role)
    uint32_t dpu_groups = 0;        ///< channel groups of the DPU cube
    /// Per-channel operands of a channel group (DPU_RDMA role); written into the DPU's operand RAM
    /// in the cycle the group's first input beat is presented (flying: one group per cycle from
    /// the start, which the CORE's latency keeps ahead of its first output of that group).
    std::function<std::vector<ChannelOperands>(uint32_t group)> operands;
    const rknpu::Cube* ew = nullptr;              ///< EW operand cube (ERDMA role) when the operand is in memory
    std::function<void(const CoreOut&)> on_core;  ///< CORE output beats (not flying)
    std::function<void(const DpuOut&)> on_dpu;    ///< DPU output beats
    uint64_t core_outputs = 0, dpu_outputs = 0;   ///< beats expected from each active block
    /// Output ready per cycle (tests draw back-pressure from it); empty: always ready (the WDMA).
    std::function<bool()> out_ready;
    uint64_t stall_limit = 200000;  ///< cycles without any transfer before the run is declared hung
};

struct DatapathStats {
    uint64_t cycles = 0;     ///< clock cycles from the first driven cycle to the last expected output
    uint64_t core_last = 0;  ///< cycle (1-based) of the CORE's last output beat
    uint64_t dpu_last = 0;   ///< cycle (1-based) of the DPU's last output beat
    uint64_t weight_beats = 0, feature_beats = 0, dpu_inputs = 0;
};

class VcdFile;

class Datapath {
   public:
    /// Builds the SystemC module `name` (call during elaboration). `clock_ps`: the NPU clock
    /// period, used for the VCD's time axis.
    Datapath(const std::string& name, uint64_t clock_ps);
    ~Datapath();
    Datapath(const Datapath&) = delete;
    Datapath& operator=(const Datapath&) = delete;

    /// Run one job to completion (from an SC_THREAD). Throws std::runtime_error when the RTL
    /// stalls for job.stall_limit cycles or the sequencing is violated. `time_ps`: where the job
    /// starts on the VCD's time axis (moved later if the previous job drew past it).
    DatapathStats run(DatapathJob& job, uint64_t time_ps = 0);

    /// Record this datapath's signals into `vcd` (before vcd.open()).
    void trace(VcdFile& vcd);
    uint64_t clock_ps() const;

   private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

/// A VCD file with the signals of one or more datapaths on one time axis (picoseconds).
class VcdFile {
   public:
    VcdFile();
    ~VcdFile();
    VcdFile(const VcdFile&) = delete;
    VcdFile& operator=(const VcdFile&) = delete;
    /// Open after every datapath called trace(); throws std::runtime_error when it cannot.
    void open(const std::string& path);
    bool is_open() const { return open_; }
    void close();

   private:
    friend class Datapath;
    struct Impl;
    std::unique_ptr<Impl> impl_;
    bool open_ = false;
    uint64_t last_ps_ = 0;  ///< last time dumped (the axis is monotonic)
};

}  // namespace npu::rtl
