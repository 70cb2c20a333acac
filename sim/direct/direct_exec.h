// SPDX-License-Identifier: MIT
// Direct executor of a CompiledModel WITHOUT SystemC: proves a lowering, not a simulator. It
// kicks each chain the way the driver does (PC registers of its first task) and lets the PC
// interpreter (npu/rknpu/pc.h, the same one the SystemC core runs) fetch, plan and execute the
// tasks over the arena bytes, and runs CPU layers with num::run_op. It lives in sim/ because it
// includes the model's engines, which drivers/ never does. Isolated mode feeds every NPU layer the reference values of its inputs and
// compares its outputs with the reference, so per-layer rounding differences do not propagate.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "compiler/rknpu/model.h"
#include "hw/profile.h"
#include "numerics/tensor.h"

namespace sim {

using drv::rknpu::CompiledModel;

/// Element-wise comparison of two integer tensors of the same shape.
struct TensorDiff {
    size_t values = 0, equal = 0, off_by_one = 0, worse = 0;
    int max_diff = 0;    ///< integer tensors
    double max_abs = 0;  ///< float tensors (|got - want|, real units)
    bool same_shape = true;
    bool exact() const { return same_shape && equal == values; }
    std::string str() const;  ///< "N values, E equal, O off by 1 LSB, W worse, max |diff| M"
};
TensorDiff compare_tensors(const num::Tensor& got, const num::Tensor& want);

/// Every non-constant IR value computed node by node with num::run_op (the reference executor's
/// operator library), keeping intermediates.
std::map<std::string, num::Tensor> reference_values(const drv::ir::Graph& g,
                                                    const std::map<std::string, num::Tensor>& inputs);

struct DirectOptions {
    /// Isolated mode: the reference values (reference_values) fed to and compared with every NPU
    /// layer; CPU layers are skipped. nullptr = end-to-end run.
    const std::map<std::string, num::Tensor>* isolated_reference = nullptr;
};

struct LayerCheck {
    size_t layer = 0;  ///< index into CompiledModel::layers
    TensorDiff diff;   ///< all outputs of the layer together
};

struct DirectResult {
    std::map<std::string, num::Tensor> outputs;  ///< graph outputs (end-to-end mode)
    std::vector<LayerCheck> layers;              ///< isolated mode: one per NPU layer
    size_t tasks_run = 0;
};

/// Runs `m` (relocated or not) on `inputs` (graph inputs by name). Throws std::runtime_error
/// naming layer and task on a programming fault or a broken chain.
DirectResult run_direct(const CompiledModel& m, const hw::SocProfile& soc,
                        const std::map<std::string, num::Tensor>& inputs, const DirectOptions& opts = {});

}  // namespace sim
