// SPDX-License-Identifier: MIT
// Per-operator shape and dtype inference over the graph IR (our own rules, ONNX operator semantics
// for opsets 7-17 plus the com.microsoft quantization ops of seed 002), and folding of constant
// shape arithmetic (Shape -> Gather -> Concat -> Reshape chains of exported models).
#pragma once
#include <string>
#include <vector>

#include "compiler/ir/graph.h"

namespace drv::ir {

/// Infers dtype and shape of every node output, in topological order, folding constant
/// sub-expressions the rules can compute. Throws GraphError naming the node on an unsupported
/// op, an inconsistent shape, a data-dependent output shape or an unknown dimension left over.
/// Called by the importers after --input-shape overrides are applied.
void infer_shapes(Graph& g);

/// Rewrites node n's ONNX auto_pad SAME_UPPER / SAME_LOWER / VALID (Conv, QLinearConv,
/// ConvInteger, MaxPool, AveragePool, LpPool: TensorFlow-style exports, tf2onnx / keras2onnx) as
/// explicit `pads` with auto_pad NOTSET: the same computation by the ONNX definition, so that a
/// toolchain that reads explicit pads sees one form (the RKNPU compiler's unit graph; not the
/// graph itself: MindSpore Lite Micro refuses auto_pad, seed 000). Needs the input shapes in g
/// (after infer_shapes); false when n is not such a node or a shape is unknown.
bool make_pads_explicit(const Graph& g, Node& n);

/// Whether infer_shapes() has a rule for op_type in domain ("" = ai.onnx).
bool has_shape_rule(const std::string& op_type, const std::string& domain);

/// All ops with a shape rule as "domain:op", sorted.
std::vector<std::string> shape_rule_ops();

/// Reads a constant 1-D (or scalar) int32/int64 tensor as int64 values; throws GraphError naming
/// `what` when the value is missing, not constant or not integer.
std::vector<int64_t> constant_ints(const Graph& g, const std::string& value, const std::string& what);

/// Numpy-style broadcast of two shapes; throws GraphError mentioning `what` when incompatible.
std::vector<int64_t> broadcast_shapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                                      const std::string& what);

}  // namespace drv::ir
