// SPDX-License-Identifier: MIT
// The quantization plan shared by the planner (quantizer.cpp: node kinds, removable activations,
// the quantized tensor set, share groups, parameters) and the QDQ graph builder (qdq_builder.cpp).
#pragma once
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "compiler/quantize/quantizer.h"

namespace drv::quant::detail {

enum class Kind {
    Float,         ///< left in float
    Weighted,      ///< Conv / Gemm / MatMul with a constant weight
    Binary,        ///< Add, Mul, MatMul of two activations: every data input quantized
    Unary,         ///< own output range: pools, LeakyRelu, Sigmoid, BatchNormalization, kept Relu/Clip
    Concat,        ///< every input quantized, may share the output's parameters
    Direct,        ///< data movement: output shares the input's parameters
    RemovedClamp,  ///< Relu/Clip folded into the quantization of its producer's output
};

struct Clamp {
    double lo = -std::numeric_limits<double>::infinity();
    double hi = std::numeric_limits<double>::infinity();
};

struct NodePlan {
    Kind kind = Kind::Float;
    std::vector<size_t> data_inputs;  ///< input positions that carry activations (or constants quantized as such)
    int weight_axis = 0;              ///< Weighted: channel axis of input 1
    std::string outputs0;             ///< the name the node's first output has in the QDQ graph
    std::string reason;               ///< Float: why
    std::string label;                ///< "Conv+Relu" for a producer whose clamp was removed
};

struct Plan {
    std::vector<NodePlan> nodes;
    std::set<std::string> quantized;              ///< activation tensors (QDQ-graph names = float-graph names)
    std::set<std::string> const_acts;             ///< constant data inputs quantized per tensor (Add(x, c) ...)
    std::map<std::string, Clamp> clamps;          ///< tensors written through a removed Relu/Clip
    std::map<std::string, std::string> producer;  ///< tensor -> the node writing it ("" for graph inputs)
    std::map<std::string, std::string> op;        ///< tensor -> "Conv+Relu"
    std::map<std::string, ScaleZp> params;        ///< activation and constant-activation parameters
    std::map<std::string, double> range_lo, range_hi, obs_min, obs_max;
    std::map<std::string, std::string> shared_with;
    size_t shared_groups = 0;
};

/// Builds the QDQ graph for `plan` (qdq_builder.cpp). Returns the graph and counts weights/biases.
ir::Graph build_qdq_graph(const ir::Graph& g, const Plan& plan, const Scheme& scheme, size_t& weights, size_t& biases);

/// Names of the QDQ graph for tensor `t` (onnxruntime's suffixes).
inline std::string q_output(const std::string& t) { return t + "_QuantizeLinear_Output"; }
inline std::string dq_output(const std::string& t) { return t + "_DequantizeLinear_Output"; }

}  // namespace drv::quant::detail
