// SPDX-License-Identifier: MIT
// Graph IR shared by the importers (ONNX, TFLite), the constraint checker, the NPU lowering, the MCU
// code generator and the reference executor. Values are keyed by name in ordered maps and nodes
// live in a vector, so every traversal is deterministic (architecture.md, "Rules that keep it real").
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "numerics/ops.h"
#include "numerics/tensor.h"

namespace drv::ir {

/// A structurally invalid graph (cycle, dangling input, duplicate producer, bad shape): the message
/// names the node and the value. Thrown by Graph::validate() and by the importers.
class GraphError : public std::runtime_error {
   public:
    using std::runtime_error::runtime_error;
};

/// Dimension value for "unknown"; importers reject graphs that keep one (issue 3: dynamic dims are
/// fixed by --input-shape or rejected).
constexpr int64_t kUnknownDim = -1;

/// Largest element count of any tensor the importers and shape inference accept (2^31: far above
/// every supported model; a crafted shape beyond it is an error, never an overflowing size).
constexpr int64_t kMaxTensorElements = int64_t{1} << 31;

class Graph;

/// One tensor of the graph: activation, graph input/output or constant (initializer).
struct Value {
    std::string name;
    num::DType dtype = num::DType::F32;
    std::vector<int64_t> shape;       ///< kUnknownDim where not (yet) known; rank 0 = scalar
    bool shape_known = false;         ///< false until import or shape inference sets it
    num::QuantParams quant;           ///< empty for float tensors; per-tensor or per-axis
    std::optional<num::Tensor> data;  ///< set for constants (initializers, folded nodes)
    /// Timing-only import (ImportOptions::skip_data_from_bytes): `data` has the right dtype and
    /// shape but unspecified contents; nothing may read them (folding gives unspecified results).
    bool contents_unspecified = false;

    bool is_constant() const { return data.has_value(); }
    bool is_quantized() const { return !quant.empty(); }
    int64_t numel() const;  ///< product of dims; -1 if any is unknown or the product exceeds kMaxTensorElements
    std::string shape_str() const;
};

/// One operator instance. Inputs/outputs are value names; an empty input name is an absent
/// optional input (ONNX convention).
struct Node {
    std::string name;
    std::string op_type;
    std::string domain;  ///< "" = ai.onnx, "com.microsoft", "tflite"
    std::vector<std::string> inputs;
    std::vector<std::string> outputs;
    num::Attributes attrs;
    /// Graph-valued attributes (If: then_branch / else_branch) by attribute name. A subgraph refers
    /// to outer values by name; the importer also lists those outer values after the node's own
    /// inputs so that ordering and dead-node removal see the dependency.
    std::map<std::string, std::shared_ptr<const Graph>> subgraphs;

    /// Input i's name or "" when absent/out of range.
    const std::string& input(size_t i) const;
    bool has_input(size_t i) const { return !input(i).empty(); }
    /// "Conv 'conv1'" for messages.
    std::string label() const;
};

/// The graph: values by name, nodes in (after sort_topologically()) execution order, ordered graph
/// inputs/outputs and the opset per domain.
class Graph {
   public:
    /// Adds a value; throws GraphError when the name already exists.
    Value& add_value(Value v);
    /// Returns the value with `name`, creating an empty (unknown) one if absent.
    Value& get_or_add_value(const std::string& name);
    Value* find_value(const std::string& name);
    const Value* find_value(const std::string& name) const;
    /// Value lookup that throws GraphError naming `context` when missing.
    const Value& value(const std::string& name, const std::string& context = {}) const;
    Value& value(const std::string& name, const std::string& context = {});
    void remove_value(const std::string& name) { values_.erase(name); }

    Node& add_node(Node n);
    std::vector<Node>& nodes() { return nodes_; }
    const std::vector<Node>& nodes() const { return nodes_; }

    std::vector<std::string>& inputs() { return inputs_; }
    const std::vector<std::string>& inputs() const { return inputs_; }
    std::vector<std::string>& outputs() { return outputs_; }
    const std::vector<std::string>& outputs() const { return outputs_; }
    const std::map<std::string, Value>& values() const { return values_; }

    /// Opset version imported for `domain` ("" = ai.onnx), 0 if none.
    int64_t opset(const std::string& domain = "") const;
    void set_opset(const std::string& domain, int64_t version) { opsets_[domain] = version; }
    const std::map<std::string, int64_t>& opsets() const { return opsets_; }

    /// Index of the node producing `value`, or -1 (graph input, constant, unknown).
    int producer(const std::string& value) const;
    /// Indices of nodes reading `value`, in node order.
    std::vector<size_t> consumers(const std::string& value) const;

    /// Node indices in a topological order (stable: ties keep the original node order). Throws
    /// GraphError naming a node on a cycle.
    std::vector<size_t> topological_order() const;
    /// Reorders nodes_ into topological_order().
    void sort_topologically();
    /// Structural checks: every input defined (graph input, constant or node output), no value
    /// produced twice, no node output shadowing a constant or graph input, no cycle, every graph
    /// output produced. Throws GraphError.
    void validate() const;
    /// Drops nodes whose outputs reach no graph output, then unreferenced values; true when a
    /// node went (node indices changed).
    bool remove_dead_nodes();

    /// Human-readable dump (one line per node) for debugging and golden tests; deterministic.
    std::string dump() const;

    /// Import-time rewrites of the whole model, in order ("constant subgraph folded: 3 Shape, 2
    /// Gather", "If 'cond_if' inlined (condition constant: then branch)"); reports list them.
    std::vector<std::string>& rewrites() { return rewrites_; }
    const std::vector<std::string>& rewrites() const { return rewrites_; }

   private:
    std::map<std::string, Value> values_;
    std::vector<Node> nodes_;
    std::vector<std::string> inputs_;
    std::vector<std::string> outputs_;
    std::map<std::string, int64_t> opsets_;
    std::vector<std::string> rewrites_;
};

/// Attribute helpers that do not depend on the operator library's implementation.
int64_t attr_int(const num::Attributes& a, const std::string& name, int64_t dflt);
float attr_float(const num::Attributes& a, const std::string& name, float dflt);
std::string attr_string(const num::Attributes& a, const std::string& name, const std::string& dflt);
std::vector<int64_t> attr_ints(const num::Attributes& a, const std::string& name,
                               const std::vector<int64_t>& dflt);

/// "1x3x224x224" style shape text ("scalar" for rank 0, "?" for unknown dims).
std::string shape_to_string(const std::vector<int64_t>& shape);

}  // namespace drv::ir
