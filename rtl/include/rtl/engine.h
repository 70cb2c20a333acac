// SPDX-License-Identifier: MIT
// The adapter between one NPU core's task execution and its verilated datapath: a TaskExecutor
// (npu/tlm/rknpu_core.h) that runs every conv / DPU task twice, through rknpu::execute_task with
// this object as the EngineHooks (the RTL stands in for the CORE and/or DPU computation) and
// through the C++ engines, and records the bytes comparison and the cycles of both. Kept thin on
// purpose: everything about the task (operands, packing, PPU, write regions) stays in
// rknpu::execute_task; only the two hook calls reach the RTL.
#pragma once
#include <vector>

#include "npu/rknpu/task.h"
#include "npu/tlm/rknpu_core.h"
#include "rtl/cosim.h"
#include "rtl/datapath.h"

namespace npu::rtl {

class RtlEngine : public rknpu::EngineHooks, public tlm_models::TaskExecutor {
   public:
    RtlEngine(int core, const RtlOptions& o, Datapath& dp, const DwSchedule& dw = {})
        : core_(core), opts_(o), dp_(dp), dw_(dw) {}

    std::vector<std::vector<uint8_t>> execute(const rknpu::TaskPlan& plan, std::vector<std::vector<uint8_t>>&& reads,
                                              const tlm_models::TaskRecord& rec) override;
    bool conv_dpu(const rknpu::ConvConfig& c, const rknpu::ConvOperands& ops, const rknpu::DpuOperands& dpu_ops,
                  rknpu::Cube& out) override;
    bool dpu(const rknpu::DpuConfig& d, const rknpu::Cube& in, const rknpu::DpuOperands& ops,
             rknpu::Cube& out) override;

    const std::vector<RtlTaskRecord>& records() const { return records_; }

   private:
    /// Run the DPU RTL on `in` (accumulators or MRDMA elements) into `out`.
    void run_dpu_rtl(const rknpu::DpuConfig& d, const rknpu::Cube& in, const rknpu::DpuOperands& ops, rknpu::Cube& out);
    void note_fallback(const char* block, const std::string& why);

    int core_;
    RtlOptions opts_;
    Datapath& dp_;
    DwSchedule dw_;  ///< the SoC's depthwise schedule (core_seq.h)
    RtlTaskRecord cur_;
    uint64_t time_ps_ = 0;
    std::vector<RtlTaskRecord> records_;
};

}  // namespace npu::rtl
