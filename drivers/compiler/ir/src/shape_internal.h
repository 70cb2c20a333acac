// SPDX-License-Identifier: MIT
// Internal interface between the shape-rule files (not installed).
#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "compiler/ir/graph.h"
#include "compiler/ir/shape_inference.h"

namespace drv::ir::shape {

/// What a rule sees: the graph (for input Values and constants) and the node.
struct Ctx {
    Graph& g;
    const Node& node;
    const Value& in(size_t i) const;  ///< input i, shape known; throws when missing
    bool has(size_t i) const { return node.has_input(i); }
    void set(size_t i, num::DType dt, std::vector<int64_t> shape) const;
    [[noreturn]] void fail(const std::string& what) const;
};

using Rule = std::function<void(const Ctx&)>;

const std::map<std::string, Rule>& rules();
void add_nn_rules(std::map<std::string, Rule>& t);      // conv, pool, matmul, gemm, norm, rnn
void add_tensor_rules(std::map<std::string, Rule>& t);  // reshape, concat, slice, gather, reduce, ...
int64_t normalize_axis(int64_t axis, size_t rank, const Ctx& c);
num::DType onnx_dtype(int64_t code, const Ctx& c);
/// Replaces node `index`'s outputs with constants when all inputs are constant and the op is
/// foldable here (shape arithmetic only); leaves the node in place otherwise.
bool try_fold(Graph& g, size_t index);  ///< true when folded (node erased)
/// Replaces If node `index` by the nodes of the branch its (constant) condition selects, renamed
/// under "<if name>/then/" or ".../else/"; throws GraphError naming the node when the condition is
/// not a constant (a data-dependent If has no static graph).
void inline_if(Graph& g, size_t index);

}  // namespace drv::ir::shape
