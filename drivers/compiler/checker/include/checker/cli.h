// SPDX-License-Identifier: MIT
// Library entry points behind `npusim check` and `npusim specs` (the lead wires them into sim/'s
// CLI; drivers/compiler/checker/tools/npusim-check is the standalone front end). Both write to the given
// streams and return the process exit code; they never call exit() and never throw.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <utility>
#include <string>
#include <vector>

#include "checker/checker.h"
#include "compiler/ir/graph.h"

namespace drv::check {

/// How npusim's own compiler places one node (RKNPU platforms): the vendor verdict the compiler
/// applied (check_model on the graph it partitions) and the layer the node ended in. `npusim check`
/// prints these, so that check and run come from one decision.
struct NodePlacement {
    NodeResult vendor;   ///< node, op_type, vendor verdict, violated rules, rewrites
    std::string unit;    ///< "NPU", "CPU", "view"
    std::string layer;   ///< the layer's name
    std::string reason;  ///< CPU: "vendor rule", "no NPU lowering yet", "forced"
    std::string note;    ///< CPU: why; view: how
};
/// Returns the placement of every node of `model` on `platform` (the --platform text) whose spec
/// is `spec`, or nullopt when npusim has no NPU compiler for that platform (MCU, tnpuv2). Throws
/// std::exception with a one-line message when the model cannot be compiled at all.
using PlacementFn =
    std::function<std::optional<std::vector<NodePlacement>>(const std::string& model, const std::string& platform,
                                                            const PlatformSpec& spec)>;

/// Exit codes of run_check_cli / run_specs_cli.
enum ExitCode : int {
    kExitOk = 0,            ///< every node runs on the target engine (NPU, or MCU kernels)
    kExitUsage = 2,         ///< bad flags, unknown platform
    kExitModelError = 3,    ///< malformed model, dynamic shapes on a static-shape toolchain
    kExitSpecError = 4,     ///< spec DB file violates the schema
    kExitCpuFallback = 10,  ///< some node falls back to the CPU, none unsupported
    kExitUnsupported = 11,  ///< some node is unsupported
    kExitNotInSeed = 12,    ///< platform has no operator tables in the seed: no verdict
};

/// `npusim check --platform P MODEL... [--json] [--all-platforms]`.
struct CheckCliOptions {
    std::vector<std::string> models;        ///< .onnx / .tflite files
    std::string platform;                   ///< required unless all_platforms
    bool all_platforms = false;             ///< model x platform matrix
    bool json = false;
    std::vector<std::string> input_shapes;  ///< "name=1x3x224x224" (fixes dynamic dims)
    int64_t quant_bits = 0;                 ///< --bits: data quantization width (tnpuv2 4..16); 0 = dtype
    int64_t weight_bits = 0;                ///< --weight-bits: constant (weight) width; 0 = dtype
    std::string specs_dir;                  ///< empty = default_specs_dir()
    /// Set by sim/ (which links the compiler): per-node placement on RKNPU platforms (not used
    /// with `prepare`: the placement compiles the model file itself).
    PlacementFn placement;
    /// Refusals of the target's own engine that the rule tables cannot express (sim/ sets it for the
    /// MCU platforms: drivers/mcu's "no MCU kernel yet" and the seed's QDQ verdict), given the model
    /// file and the checked graph: {node name, reason}; node "" = the whole model. Such nodes are
    /// reported unsupported with the reason, so check and run give one verdict.
    std::function<std::vector<std::pair<std::string, std::string>>(const std::string& model, const ir::Graph& graph)>
        engine_refusals;
    /// Applied to every model after loading, before it is checked (`--quantize int8`: the QDQ model
    /// it quantizes to, imported the same way). Empty = the model as loaded.
    std::function<ir::Graph(const std::string& model, ir::Graph g)> prepare;
};

/// `npusim specs [--platform P] [--coverage] [--json]`.
struct SpecsCliOptions {
    std::string platform;  ///< empty = all platforms (summary table)
    bool coverage = false; ///< list every seed heading not encoded, with the reason
    bool json = false;
    std::string specs_dir;
};

int run_check_cli(const CheckCliOptions& opts, std::ostream& out, std::ostream& err);
int run_specs_cli(const SpecsCliOptions& opts, std::ostream& out, std::ostream& err);

}  // namespace drv::check
