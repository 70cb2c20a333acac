// SPDX-License-Identifier: MIT
// One RKNPU task as the blocks see it at op-enable: which blocks run, which bytes they read and
// write, how many cycles each pipeline stage needs, and the functional computation. The SystemC
// core only moves the planned bytes over the bus and waits for the planned time, so every block's
// behaviour lives here, without SystemC (SG-8.4: decode -> functional -> timing).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <memory>
#include <vector>

#include "hw/profile.h"
#include "npu/rknpu/conv_config.h"
#include "npu/rknpu/conv_engine.h"
#include "npu/rknpu/dpu_engine.h"
#include "npu/rknpu/dpu_config.h"
#include "npu/rknpu/ppu_config.h"
#include "npu/rknpu/reg_file.h"

namespace npu::rknpu {

/// Per-block op-enable bits of the final regcmd entry (GLOBAL.OPERATION_ENABLE order; the vendor
/// task enable_mask uses the same bits, e.g. 0xd = CNA|CORE|DPU).
namespace enable {
inline constexpr uint32_t CNA = 1u << 0;
inline constexpr uint32_t CORE = 1u << 2;
inline constexpr uint32_t DPU = 1u << 3;
inline constexpr uint32_t DPU_RDMA = 1u << 4;
inline constexpr uint32_t PPU = 1u << 5;
inline constexpr uint32_t PPU_RDMA = 1u << 6;
}  // namespace enable

/// DmaRegion::what of the CNA's weight read.
inline constexpr const char* kWeightsRead = "weights";

/// A DMA transfer the task performs; `what` names it in traces and faults.
struct DmaRegion {
    uint64_t addr = 0;
    uint64_t bytes = 0;
    std::string what;
    std::string block;  ///< the DMA engine's block (CNA, DPU_RDMA, DPU, PPU_RDMA, PPU)
    /// Already in the CBUF (CNA WEIGHT_REUSE: the previous task on this core loaded these weights):
    /// the engines still receive the bytes, but no bus transfer happens and no DDR traffic counts.
    bool cbuf_resident = false;
};

struct TaskPlan {
    uint32_t enable_mask = 0;
    std::string kind;  ///< "conv", "conv+relu", ... for reports
    std::vector<DmaRegion> reads;   ///< execute() receives their bytes in this order
    std::vector<DmaRegion> writes;  ///< execute() returns their bytes in this order
    uint64_t core_cycles = 0;       ///< MAC array
    uint64_t dpu_cycles = 0;        ///< post-processing stage
    uint64_t ppu_cycles = 0;        ///< pooling stage
    uint64_t macs = 0, macs_padded = 0;
    std::vector<Fault> faults;      ///< non-empty: the task must not run
    /// Documented assumptions (docs/rknpu-register-semantics.md §14, "A-...") the task relies on:
    /// decode, lint and replay name them.
    std::vector<std::string> assumptions;
    std::optional<ConvConfig> conv;  ///< CNA|CORE|DPU task (the DPU config inside)
    std::optional<DpuConfig> dpu;    ///< DPU-only task (MRDMA input)
    std::optional<PpuConfig> ppu;    ///< PPU on the fly after the DPU, or standalone (PPU_RDMA)

    /// Stages stream into each other, so the slowest bounds the pipeline.
    uint64_t pipeline_cycles() const;
};

/// Decode the register file for the blocks enabled by `enable_mask` and plan the task.
TaskPlan plan_task(const RegFile& rf, uint32_t enable_mask, const hw::SocProfile& soc);

/// Engines that stand in for the C++ CNA+CORE+DPU and DPU computations of a task (the RTL
/// co-simulation, rtl/README.md). Each returns false when it does not take the configuration, and
/// the C++ engine runs instead; when it returns true, `out` is the DPU output cube in the value
/// domain (conv_dpu_cube's / run_dpu's contract), packed and pooled by execute_task as usual.
class EngineHooks {
   public:
    virtual ~EngineHooks() = default;
    virtual bool conv_dpu(const ConvConfig& c, const ConvOperands& ops, const DpuOperands& dpu_ops, Cube& out) = 0;
    virtual bool dpu(const DpuConfig& d, const Cube& in, const DpuOperands& ops, Cube& out) = 0;
};

/// Compute the bytes of plan.writes from the bytes of plan.reads (same order and sizes).
std::vector<std::vector<uint8_t>> execute_task(const TaskPlan& plan, const std::vector<std::vector<uint8_t>>& reads);
/// The same, consuming the read buffers (moved into the engines instead of copied).
std::vector<std::vector<uint8_t>> execute_task(const TaskPlan& plan, std::vector<std::vector<uint8_t>>&& reads);
/// The same with `hooks` asked first for the conv / DPU computation (nullptr: the C++ engines).
std::vector<std::vector<uint8_t>> execute_task(const TaskPlan& plan, std::vector<std::vector<uint8_t>>&& reads,
                                               EngineHooks* hooks);
/// Read images shared with the caller (RknpuCore's weight images): shared[i], where not null,
/// holds region i's bytes and reads[i] is empty. Here too a run of consecutive regions of one
/// `what` may arrive concatenated in its first region's buffer, the others empty. The blocked int8 conv packs its weight panels
/// from such an image once and finds them by the image's identity afterwards (it is immutable).
using SharedReads = std::vector<std::shared_ptr<const std::vector<uint8_t>>>;
std::vector<std::vector<uint8_t>> execute_task(const TaskPlan& plan, std::vector<std::vector<uint8_t>>&& reads,
                                               const SharedReads& shared);

}  // namespace npu::rknpu
