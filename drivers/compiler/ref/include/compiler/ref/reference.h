// SPDX-License-Identifier: MIT
// Reference executor (issue 3): runs an imported graph with num::run_op, the operator library shared
// by every comparison, and the library entry point behind `npusim run --reference`.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "compiler/ir/graph.h"

namespace drv::ref {

/// Runs `g` (imported, shapes inferred) on `inputs` (by graph-input name; dtype and shape must
/// match). Returns the graph outputs by name. Throws ir::GraphError for missing/mismatched inputs
/// and num::OpError (with the node named) for operator failures.
std::map<std::string, num::Tensor> execute(const ir::Graph& g, const std::map<std::string, num::Tensor>& inputs);

/// Called by execute() with every graph input and then every node output as it is computed (before
/// the executor may free it). Used by the quantizer's calibration and accuracy analysis.
using ValueObserver = std::function<void(const std::string& name, const num::Tensor& value)>;
/// execute() that also reports every value to `observe`.
std::map<std::string, num::Tensor> execute(const ir::Graph& g, const std::map<std::string, num::Tensor>& inputs,
                                           const ValueObserver& observe);

/// Runs one node with num::run_op: constant inputs from the graph, the others from `lookup` (nullptr
/// when not available: ir::GraphError naming the node and the input). Operator failures become
/// num::OpError prefixed "node <label>: ". Outputs are as run_op returns them (no quant params).
/// Shared by the executor, the compiler's direct executor and the simulator's CPU steps.
std::vector<num::Tensor> run_node(const ir::Graph& g, const ir::Node& n,
                                  const std::function<const num::Tensor*(const std::string&)>& lookup);

/// Deterministic input for a graph input: float tensors uniform in [-1, 1), integer tensors over
/// their full range, from a SplitMix64 stream seeded with `seed` and the input's position.
num::Tensor random_input(const ir::Value& v, uint64_t seed, size_t position);

/// The inputs of a simulated model run: one .npy per graph input in graph-input order, each checked
/// against the input's dtype and shape and given its quantization, or random_input() for every
/// input when `paths` is empty. Throws std::invalid_argument with a one-line message naming the
/// --input file (bad input: count, unreadable file, dtype or shape).
std::map<std::string, num::Tensor> model_inputs(const ir::Graph& g, const std::vector<std::string>& paths,
                                                uint64_t seed);

/// Options of `npusim run --reference` / npusim-ref.
struct RefRunOptions {
    std::string model;                     ///< .onnx (or .tflite, import only for now)
    std::vector<std::string> inputs;       ///< .npy per graph input, in graph-input order; empty = random
    std::vector<std::string> outputs;      ///< .npy per graph output; missing ones derived from the first
    std::vector<std::string> input_shapes; ///< "name=1x3x224x224" overrides for dynamic dims
    uint64_t seed = 0;                     ///< seed for random inputs
    bool keep_qdq = false;                 ///< run Q/DQ nodes as written (float semantics)
    std::string dump_inputs_dir;           ///< when set, random inputs are also written here as .npy
    /// When set, the outputs (graph order) are handed back here and not written (the caller
    /// writes and compares them: npusim's --output/--expect).
    std::vector<std::pair<std::string, num::Tensor>>* results = nullptr;
};

/// Exit codes of run_reference().
enum RefExit : int { kRefOk = 0, kRefUsage = 2, kRefModelError = 3, kRefInputError = 4, kRefOpError = 5 };

/// Imports, runs and writes outputs. Messages go to `log` (errors prefixed "error: "). Returns a
/// RefExit code; never exits the process. Called by sim/ (`npusim run --reference`) and npusim-ref.
int run_reference(const RefRunOptions& opts, std::ostream& log);

}  // namespace drv::ref
