// SPDX-License-Identifier: MIT
// The constraint checker: per node of a graph and one platform's spec, the verdict NPU (or MCU
// for MCU toolchains) / CPU fallback / unsupported, with every violated rule in plain words with
// the actual value and the seed citation. A rule engine over the spec DB: no per-op code.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "checker/spec_db.h"
#include "compiler/ir/graph.h"

namespace drv::check {

/// The model cannot be checked on this platform as given (dynamic shape where the toolchain
/// needs static ones, structurally invalid graph). The message names the tensor/node.
class CheckError : public std::runtime_error {
   public:
    using std::runtime_error::runtime_error;
};

enum class Verdict {
    Target,       ///< runs on the platform's engine (NPU, or MCU kernels for MCU toolchains)
    Fused,        ///< folded into the previous node by a fused operator (ConvolutionRelu, ...)
    CpuFallback,  ///< falls back to the toolchain's CPU path
    Unsupported,  ///< no path on this platform
    NotInSeed,    ///< the platform has no operator tables in the seed: no verdict is guessed
};
const char* verdict_name(Verdict v, const PlatformSpec& p);

struct Violation {
    const Rule* rule = nullptr;
    std::string text;  ///< "kernel_w = 33 outside [1, 31]"
    std::string op;    ///< spec operator whose rule it is ("Convolution")
};

struct NodeResult {
    std::string node;
    std::string op_type;
    std::string spec_op;     ///< matched spec operator, empty when none
    std::string heading;     ///< its heading
    std::string fused_into;  ///< for Verdict::Fused
    Verdict verdict = Verdict::Target;
    std::string reason;      ///< why, when not in the table or not in the seed
    std::vector<Violation> violations;
    /// check_model: the vendor graph rewrites that touched this node ("Gemm with constant B ->
    /// 1x1 Conv", "x * Sigmoid(x) -> exSwish (SiLU)", ...), in the order applied.
    std::vector<std::string> rewrites;
};

struct CheckResult {
    std::string platform;
    std::vector<NodeResult> nodes;
    size_t count(Verdict v) const;
    /// Worst verdict over all nodes (Target/Fused < CpuFallback < NotInSeed < Unsupported).
    Verdict overall() const;
};

struct CheckOptions {
    /// Quantization bit width of the data (activations) the model is converted with (tnpuv2:
    /// 4/8/12/14/16); 0 = from the tensor dtype, else the platform's quant_bits_default.
    int64_t quant_bits = 0;
    /// Width of the constant (weight) tensors (tnpuv2: 4/8/16/20); 0 = from the tensor dtype.
    int64_t weight_bits = 0;
};

/// Checks every node of `g` (in topological order) against `spec`. Throws CheckError for dynamic
/// shapes on static-shape toolchains and for invalid graphs.
CheckResult check_graph(const ir::Graph& g, const PlatformSpec& spec, const CheckOptions& opts = {});

/// The graph as an NPU toolchain sees a QDQ model: QuantizeLinear/DequantizeLinear pairs with
/// constant parameters (as recorded by the importer's QDQ fold) are removed and their consumers read
/// the quantized tensors directly, so Conv/Add/... are checked with int8 tensors and per-layer or
/// per-channel quantization instead of Q/DQ nodes being reported as unsupported operators.
/// `folded` receives the number of Q/DQ nodes removed.
ir::Graph quantized_view(const ir::Graph& g, size_t* folded = nullptr);

/// "int8", "float32", ... (the spec DB's dtype names).
std::string dtype_spec_name(num::DType t);

/// The graph the vendor toolchain's checker sees for an imported graph (vendor_view.cpp): fused
/// integer ops back as the ONNX ops the spec describes, Q/DQ folded into quantized tensors, uint8
/// activations as RKNN's int8, then the vendor compiler's rewrites (Identity removed,
/// Flatten/Squeeze/Unsqueeze as Reshape, SiLU/HardSwish/GELU patterns recognised, Gemm/MatMul with a
/// constant B as 1x1 Conv, BatchNormalization after Conv folded, Div/Sub by a constant as Mul/Add,
/// scalar-constant Add/Mul folded into a Conv or run as a per-tensor affine).
struct VendorGraph {
    ir::Graph graph;
    std::vector<size_t> primary;                      ///< vendor node -> source node it reports on
    std::vector<int> vendor_node;                     ///< source node -> vendor node, -1 when folded away
    std::vector<int> folded_into;                     ///< source node -> source node it was folded into, -1
    std::vector<std::vector<std::string>> rewrites;   ///< per source node
    std::vector<std::string> folded_reason;           ///< per source node: Q/DQ folded into a tensor, or ""
};
VendorGraph vendor_graph(const ir::Graph& g);

/// check_graph on vendor_graph(g), reported per node of `g` (same order): a node folded away by a
/// rewrite gets Verdict::Fused (or the CPU/unsupported verdict of the node it went into) with
/// fused_into and the rewrite as reason; every node carries its rewrites. What `npusim check` and
/// the RKNPU model compiler both use, so their vendor verdicts are the same.
CheckResult check_model(const ir::Graph& g, const PlatformSpec& spec, const CheckOptions& opts = {});

}  // namespace drv::check
