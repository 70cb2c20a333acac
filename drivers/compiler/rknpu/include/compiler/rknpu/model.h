// SPDX-License-Identifier: MIT
// A whole model compiled for an RKNPU SoC (issue 6): what the user-mode driver produces from the
// graph IR and hands to the runtime. Everything lives in one device "arena": the initialised part
// (packed weights, biases, DPU operands, LUTs, regcmd buffers) followed by activation tensors.
// The compiler lays the arena out from offset 0 and records every regcmd entry that holds a
// device address (relocations); the runtime allocates the arena through the HAL and calls
// relocate() with its device address, as the vendor runtime patches a loaded model.
//
// Execution is a sequence of steps: an NPU step runs one chain of PC-linked tasks per core,
// concurrently, and waits for all of them (a barrier); a CPU step runs IR nodes on the host with
// the reference operator library (CPU fallback) and costs host time from the cost model.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "checker/checker.h"
#include "compiler/ir/graph.h"
#include "hw/profile.h"
#include "numerics/tensor.h"

namespace drv::rknpu {

/// An int8 activation as the NPU stores it: NC1HWC2, batch 1, C padded to a multiple of C2.
/// Graph tensors that are uint8 are stored shifted by -128 (u - 128, zero point - 128), which is
/// the same real value; to_device()/from_device() do the shift at the host boundary.
/// fp16 activations (a float32 graph tensor on the fp16 path, issue 14): 2-byte elements with the
/// SoC's fp16 C2 (npu.c2_fp16: the same 16-byte atom on RK3588), no quantization; the host
/// boundary converts float32 <-> fp16 (round to nearest even).
struct DeviceTensor {
    std::string name;             ///< IR value name
    int c = 0, h = 0, w = 0;      ///< logical shape (NCHW, N = 1); rank < 4 is padded with 1s in front
    std::vector<int64_t> ir_shape;  ///< the IR shape as imported
    int c2 = 16;                  ///< channels per atom (the SoC's int8 C2, or its fp16 C2)
    uint64_t offset = 0;          ///< arena offset of channel 0
    uint64_t bytes = 0;           ///< whole image (all C1 surfaces)
    uint32_t line_stride = 0;     ///< bytes between rows (w * c2 when compact)
    uint32_t surf_stride = 0;     ///< bytes between C1 surfaces (line_stride * h when compact)
    float scale = 1.f;            ///< int8 domain quantization
    int32_t zp = 0;
    bool graph_uint8 = false;     ///< the IR tensor is uint8 (shift by 128 at the host boundary)
    /// Set when this tensor is a channel slice of another (concat by addressing): the parent's name.
    std::string alias_of;
    bool fp16 = false;            ///< fp16 elements (float32 graph tensor); scale/zp unused
    /// The IR tensor's elements in row-major order (numel int8 bytes from `offset`, `bytes` rounded
    /// up to 16), not NC1HWC2: what the DPU's WDMA writes with TP_EN (a Transpose to channel-last,
    /// assumption A-TP) and any Reshape of it (issue 15). c = h = 1, w = numel; strides = bytes.
    bool row_major = false;
    int elem_bytes() const { return fp16 ? 2 : 1; }
};

/// One hardware task: a regcmd body in the arena (register entries + the 4 ending entries).
struct NpuTask {
    uint64_t regcmd_offset = 0;  ///< arena offset of the task's first regcmd entry
    uint32_t regcfg_amount = 0;  ///< register entries, excluding the 4 task-ending entries
    uint32_t enable_mask = 0;    ///< GLOBAL.OPERATION_ENABLE bits (npu::rknpu::enable)
    uint32_t int_mask = 0x300;   ///< interrupt bits this task raises (DPU pair, or PPU pair)
    int core = 0;                ///< physical core index the task is compiled for
    int layer = -1;              ///< index into CompiledModel::layers
    std::string what;            ///< "rows 0-27 of 56, kernels 0-63" for reports and errors
    uint64_t macs = 0;           ///< real MACs of this task
    /// Tiling verifier facts: the output window this task writes (channels [c0,c1), rows [y0,y1),
    /// columns [x0,x1) of the layer's output tensor) and the input rows it loads, CBUF use.
    struct Window {
        int c0 = 0, c1 = 0, y0 = 0, y1 = 0, x0 = 0, x1 = 0;
        /// out_window only: the task writes every y_step-th row from y0 / x_step-th column from x0
        /// (nearest Resize's replicating passes); 1 = the whole rectangle.
        int y_step = 1, x_step = 1;
    };
    Window out_window, in_window;
    /// The task writes only a layer-internal scratch buffer (a first pass), not the output.
    bool intermediate = false;
    int cbuf_data_banks = 0, cbuf_weight_banks = 0;
};

enum class Unit { Npu, Cpu, View };

/// Why a layer runs on the CPU: the SoC's operator rules send it there (the vendor toolchain would),
/// npusim has no NPU lowering for it yet (or the lowering's preconditions fail), or --cpu-node.
enum class CpuReason { None, VendorRule, NoLowering, Forced };
const char* cpu_reason_name(CpuReason r);  ///< "", "vendor rule", "no NPU lowering yet", "forced"

/// One layer of the report: a graph node (or a fused group of nodes).
struct Layer {
    std::string name;                  ///< first IR node's name
    std::string op;                    ///< "Conv", "ConvRelu", "DepthwiseConv", "Add", "MaxPool", ...
    Unit unit = Unit::Npu;
    std::vector<std::string> inputs, outputs;  ///< IR value names
    std::string in_shape, out_shape;   ///< "1x64x56x56"
    uint64_t macs = 0;                 ///< real MACs (0 for data movement)
    std::vector<size_t> tasks;         ///< indices into CompiledModel::tasks (Npu)
    std::vector<size_t> ir_nodes;      ///< IR node indices this layer covers (all units)
    std::string note;                  ///< CPU: why it falls back (checker rule or "no NPU lowering"); View: how
    CpuReason cpu_reason = CpuReason::None;  ///< Unit::Cpu: which kind of reason `note` gives
    /// Graph rewrites that formed this layer (vendor compiler rewrites of its nodes, QDQ units folded).
    std::vector<std::string> rewrites;
    int tiles_h = 1, tiles_k = 1;      ///< tiling summary: row bands x kernel groups
};

/// The decision about one node of CompiledModel::graph: what the SoC's operator rules say (the
/// vendor verdict, with its rewrites) and the layer it ended in. `npusim check` on an RKNPU
/// platform reports exactly these (one verdict for check and run).
struct NodeDecision {
    std::string node;
    check::NodeResult vendor;    ///< vendor verdict; meaningful when vendor_checked
    bool vendor_checked = false; ///< the SoC has an operator spec that was consulted
    int layer = -1;              ///< index into CompiledModel::layers
};

/// A run of work between two synchronisation points.
struct Step {
    Unit unit = Unit::Npu;
    /// Npu: per core, the task indices in chain order (already PC-linked in their regcmd).
    std::map<int, std::vector<size_t>> chains;
    /// Cpu: the layers to run on the host, in order.
    std::vector<size_t> layers;
};

struct CompileOptions {
    /// "auto", "0", "1", "2", "0_1", "0_1_2" (RK3588 names); validated against the profile.
    std::string core_mask = "auto";
    /// Force these node names (or op types) onto the CPU (testing fallback).
    std::vector<std::string> cpu_nodes;
    /// Give every activation its own arena range (no reuse by the memory plan), so that the
    /// runtime can read any layer's inputs and outputs after a chained step (per-layer check).
    bool keep_all_tensors = false;
    /// Apply the constraint checker's verdicts for the SoC (CPU fallback per node, unsupported
    /// node = model rejected). Off: every node with an NPU lowering goes to the NPU (tests of
    /// lowerings the seed tables do not list, e.g. Gemm on RK3588).
    bool consult_checker = true;
    /// A node the checker calls unsupported rejects the model (std::invalid_argument), as the vendor
    /// toolchain would refuse it. Off (`npusim check`): it becomes a CPU layer with the rule as note.
    bool reject_unsupported = true;
    /// Timing-mode compile: the same layers, tasks, regcmd, arena layout and relocations as the
    /// full compile, but the weights and DPU operands are only laid out, never packed (timing mode
    /// moves no data): arena_init then holds only the regcmd (from arena_init_base). Registers that
    /// carry requantization values computed from the weights keep their widths and the values that
    /// need no weights (shifts); the model cannot run in full mode.
    bool timing_only = false;
    /// The fp16 path (issue 14): float32 nodes with an fp16 lowering run on the NPU in fp16 (fp16
    /// tensors, fp32 accumulation), as RKNN runs a float model it is not asked to quantize. Only for
    /// a SoC whose profile has an fp16 path (npu.fp16_macs_per_cycle > 0; compile_model refuses it
    /// otherwise). Off: float nodes stay on the host CPU.
    bool fp16 = false;
};

/// Relative tolerance of an fp16 layer in the isolated check: |device - reference| below
/// kFp16LayerRtol x max |reference| of the layer's output, the reference computing in float32 on
/// the layer's own fp16 inputs. 2^-7 = 16 fp16 unit roundoffs (2^-11): the fp16 rounding of the
/// weights and of the output, accumulated over the layer's dot products.
inline constexpr double kFp16LayerRtol = 1.0 / 128;

/// Relative tolerance of an int8 conv / Gemm with an fp16 output (ConvOp::float_out: int8 input
/// tensors, an fp16 output) in the isolated check, against the float conv of the dequantized
/// values: the fp16 per-channel multiplier and the fp16 output each round within 2^-11 of
/// max |reference| (2^-10 together; the integer accumulation is exact), and the reference's own
/// float32 sums over up to ~10^4 products add about as much again: 2^-9.
inline constexpr double kFloatOutLayerRtol = 1.0 / 512;

/// A graph with no quantization (no QuantizeLinear / DequantizeLinear / QLinear* nodes, no int8
/// graph inputs): a float model, which `npusim run` and `check` compile on the fp16 path.
bool is_float_model(const ir::Graph& g);

struct CompiledModel {
    std::string soc;
    std::vector<int> cores;              ///< physical cores used
    std::vector<uint8_t> arena_init;     ///< bytes [arena_init_base, arena_init_base + size) of the arena
    /// Arena offset of arena_init[0]: 0, or for a timing-only compile the start of the regcmd (the
    /// weights and operands before it are laid out but have no bytes).
    uint64_t arena_init_base = 0;
    bool timing_only = false;            ///< compiled with CompileOptions::timing_only
    uint64_t arena_bytes = 0;            ///< whole arena (>= arena_init.size()), activations after
    std::vector<uint64_t> relocs;        ///< arena offsets of 64-bit regcmd entries holding addresses
    uint64_t relocated_base = 0;         ///< base relocate() applied (0 = not yet)
    std::map<std::string, DeviceTensor> tensors;  ///< device tensors by IR value name
    std::vector<NpuTask> tasks;
    std::vector<Layer> layers;           ///< execution order
    std::vector<Step> steps;             ///< execution order
    std::vector<NodeDecision> decisions; ///< one per graph node, in node order
    ir::Graph graph;                     ///< the (QDQ-folded) graph the layers refer to
    uint64_t weight_bytes = 0, regcmd_bytes = 0;
};

/// Throws std::invalid_argument (bad core mask, model the SoC cannot hold) with a one-line message.
CompiledModel compile_model(const ir::Graph& g, const hw::SocProfile& soc, const CompileOptions& opts = {});
/// Same, taking the graph over as CompiledModel::graph instead of copying it (ResNet50: 25 MB of
/// constants not copied).
CompiledModel compile_model(ir::Graph&& g, const hw::SocProfile& soc, const CompileOptions& opts = {});

/// Patch every relocation by `base` (the arena's device address). Idempotent per base.
void relocate(CompiledModel& m, uint64_t base);

/// Tiling verifier (--verify-tiling): every NPU layer's task output windows cover its output
/// exactly once, input windows include the halo rows each output band needs, and CBUF banks stay
/// within the profile. Returns one line per problem naming layer and task; empty = verified.
std::vector<std::string> verify_tiling(const CompiledModel& m, const hw::SocProfile& soc);

/// Host boundary conversion: an int8/uint8 IR tensor (NCHW) to the device image, and back.
std::vector<uint8_t> to_device(const DeviceTensor& t, const num::Tensor& x);
num::Tensor from_device(const DeviceTensor& t, const std::vector<uint8_t>& image);

/// Parse "auto"/"0"/"0_1"/"0_1_2"/... against the profile's core count; throws invalid_argument.
std::vector<int> parse_core_mask(const std::string& mask, const hw::SocProfile& soc);

}  // namespace drv::rknpu
