// SPDX-License-Identifier: MIT
// A model compiled for the tnpuv2 NPU: the converter's view of the graph (the form its rule check
// sees), the lowering of every layer to commands of one stream (format: docs/
// tnpuv2-command-stream.md), and the arena that holds weights, tables, the stream and every
// activation. The runtime allocates the arena through the HAL, relocates the stream's addresses
// and kicks the whole stream once; the per-layer report maps command records back to layers.
#pragma once
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "compiler/ir/graph.h"
#include "hw/tnpuv2/profile.h"
#include "numerics/tensor.h"

namespace drv::check {
struct CheckResult;
struct PlatformSpec;
}  // namespace drv::check

namespace drv::tnpuv2 {

/// A model the tnpuv2 toolchain refuses: the seed-003 rule (or missing lowering) in the message.
class RefusedError : public std::runtime_error {
   public:
    using std::runtime_error::runtime_error;
};

/// Activation bit widths of a compile (seed 003: data 4/8/12/14/16, conv weights 4/8/16/20).
struct Widths {
    int data = 8;    ///< grid of every quantized activation (container: int8 for <= 8, int16 above)
    int weight = 0;  ///< normal/group conv and MatMul weights; 0 = the weight tensor's container width
};

/// How an IR value lives in device memory.
struct DeviceTensor {
    std::string name;
    num::DType dtype = num::DType::I8;  ///< the IR dtype (host side)
    std::vector<int64_t> shape;         ///< the IR shape
    bool nhwc = false;                  ///< 4-D feature map stored N,H,W,C; else row-major in IR order
    uint32_t format = 0;                ///< hw::tnpuv2::enums::FORMAT
    int bits = 8;                       ///< grid width
    int32_t zp = 0;
    float scale = 1.0f;
    uint64_t offset = 0;  ///< arena offset
    uint64_t bytes = 0;
    /// Byte stride of each IR dim (dims of one element; 4-bit: the innermost memory dim is packed).
    std::vector<int64_t> strides;
    std::string alias_of;  ///< set when the tensor is a view of another's bytes
};

enum class Unit { Npu, View };

struct Layer {
    std::string name, op;
    Unit unit = Unit::Npu;
    std::vector<std::string> inputs, outputs;  ///< IR values (non-constant inputs)
    std::string in_shape, out_shape;
    uint64_t macs = 0;
    std::vector<size_t> ir_nodes;  ///< the IR nodes (of CompiledModel::graph) it implements
    std::string note;              ///< how it was lowered (fusions, tiling)
    std::vector<uint32_t> ops;     ///< engine command indices (OPS_DONE order) it issues
    /// Float outputs compared in units of this step instead of exactly (FP32 output of an integer
    /// accumulation: the accumulator LSB); 0 = exact.
    std::map<std::string, double> float_lsb;
};

struct CompileOptions {
    Widths widths;
    /// Keep every activation in its own arena range (per-layer checks read them after the run).
    bool keep_all_tensors = true;
};

struct CompiledModel {
    Widths widths;
    std::vector<uint8_t> arena_init;  ///< weights, tables, parameter blocks, the stream
    uint64_t arena_init_offset = 0;   ///< arena offset of arena_init[0] (the activations come first)
    uint64_t arena_bytes = 0;         ///< whole arena, activations after arena_init
    uint64_t stream_offset = 0;       ///< arena offset of the command stream
    uint32_t stream_words = 0;
    /// Arena offsets of 32-bit address words: (low word, high word) pairs patched by relocate().
    std::vector<std::pair<uint64_t, uint64_t>> relocs;
    uint64_t relocated_base = 0;
    std::map<std::string, DeviceTensor> tensors;
    std::vector<Layer> layers;
    ir::Graph graph;  ///< the (QDQ-folded, rewritten) graph the layers refer to
    uint64_t weight_bytes = 0;
    uint32_t engine_ops = 0;         ///< engine commands in the stream
    std::vector<std::string> notes;  ///< converter rewrites applied (GenerateBox, BN, Gemm, ...)
};

/// The graph as the tnpuv2 converter hands it to its rule check (seed 003): `g` imported with
/// QdqMode::Fold; Relu/Clip bounded by their QuantizeLinear bypassed (onnxruntime's
/// ReluQuantFusion/ClipQuantFusion), Gemm with a constant B as MatMul (bias fused),
/// BatchNormalization as per-channel Mul + Add, Flatten as Reshape, x * Sigmoid(x) as Swish, a
/// YOLO Detect decode as GenerateBox. `notes` lists what was rewritten. `npusim check --platform
/// tnpuv2` checks this view (CheckCliOptions::prepare) and the run refuses what it refuses.
ir::Graph converter_view(const ir::Graph& g, std::vector<std::string>* notes = nullptr);

/// Names of the nodes of every YOLO Detect decode the converter runs as GenerateBox (quantizing a
/// float model leaves them in float: the unit decodes FP32 heads).
std::vector<std::string> decode_node_names(const ir::Graph& g);

/// Sets `_qbits` on every QuantizeLinear of a Fold-imported graph when `data_bits` is narrower than
/// the activation container (4 in int8, 12/14 in int16); checks the container holds `data_bits`.
void apply_data_bits(ir::Graph& g, int data_bits);

/// Compiles `g` (imported with QdqMode::Fold, shapes set) for tnpuv2: converter view + rule check
/// against `spec` (RefusedError naming node, rule and seed section when a node is unsupported),
/// QDQ rewrite, lowering, layout. `check` receives the check result.
CompiledModel compile_model(ir::Graph g, const hw::tnpuv2::Profile& p, const check::PlatformSpec& spec,
                            const CompileOptions& opts, check::CheckResult* check = nullptr);

/// Patches every relocation by `base` (the arena's device address).
void relocate(CompiledModel& m, uint64_t base);

/// Host boundary: an IR tensor to its device bytes and back (layout NHWC/row-major, 4-bit packing).
std::vector<uint8_t> to_device(const DeviceTensor& t, const num::Tensor& x);
num::Tensor from_device(const DeviceTensor& t, const std::vector<uint8_t>& bytes);

}  // namespace drv::tnpuv2
