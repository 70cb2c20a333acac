// SPDX-License-Identifier: MIT
// Whole-model runs on the simulated RKNPU SoC (issue 6): a CompiledModel (drv/rknpu/model.h) is
// placed in one DMA arena, relocated, and its steps are executed in order - NPU steps through the
// kernel driver (one PC-mode kick per core, then a wait on each), CPU steps on the host with the
// reference operator library, timed by the profile's host cost model. Outputs are compared with
// the reference executor end to end and layer by layer (each NPU layer against the reference
// node fed with the device's own inputs), and the task records are mapped back to layers for the
// per-layer report and the Perfetto "layers" tracks.
#pragma once
#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "app/conv_example.h"
#include "drv/rknpu/model.h"
#include "hw/profile.h"
#include "npu/tlm/rknpu_core.h"
#include "numerics/tensor.h"
#include "trace/trace_writer.h"

namespace sim {

/// One row of the model report: a layer of the CompiledModel.
struct ModelLayerRow {
    std::string name, op, unit;  ///< unit: "NPU", "CPU", "view"
    std::string input_shape, output_shape;
    std::string cores;           ///< "0", "0,1,2", "host", "-"
    std::string note;            ///< CPU: why it fell back; view: how
    std::vector<std::string> nodes;  ///< the IR nodes the layer covers
    int tasks = 0;
    uint64_t macs = 0, macs_padded = 0, regcmd_entries = 0;
    uint64_t fetch_cycles = 0, dma_read_cycles = 0, compute_cycles = 0, write_cycles = 0, overhead_cycles = 0;
    uint64_t total_cycles = 0;  ///< span from the first task's start to the last task's end
    double time_us = 0;
    uint64_t start_ps = 0, end_ps = 0;
    uint64_t ddr_read_bytes = 0, ddr_write_bytes = 0, sram_read_bytes = 0, sram_write_bytes = 0;
    double mac_utilisation = 0;  ///< MACs / (cycles x MACs per cycle x cores used)
    std::string bound;           ///< compute / memory / overhead (NPU), host (CPU), "" (view)
    bool checked = false;        ///< isolated check ran (full mode, NPU layer)
    OutputCheck check;           ///< device output vs reference node fed with the device's inputs
};

/// Comparison of one graph output with the reference executor.
struct OutputRow {
    std::string name;
    std::string unit = "LSB";  ///< differences are in quantization steps of the output
    OutputCheck check;
};

struct ModelRunResult {
    std::string platform, platform_name, model, mode, core_mask;
    std::vector<int> cores;
    uint64_t clock_hz = 0;
    std::vector<ModelLayerRow> layers;
    uint64_t total_ps = 0;  ///< first upload to the last output, NPU and host time
    uint64_t npu_ps = 0, cpu_ps = 0;
    /// Per used core: time its tasks ran (sum of task spans). latency - busy = that core idle:
    /// waiting at step barriers for other cores, CPU steps, kick/interrupt hand-over.
    std::map<int, uint64_t> core_busy_ps;
    uint64_t ddr_read_bytes = 0, ddr_write_bytes = 0;
    uint64_t tasks = 0, regcmd_bytes = 0, weight_bytes = 0, arena_bytes = 0;
    size_t npu_layers = 0, cpu_layers = 0, view_layers = 0, steps = 0;
    bool outputs_checked = false;
    std::vector<OutputRow> outputs;
    bool isolated_checked = false;
    OutputCheck isolated;        ///< summed over every checked layer
    size_t layers_checked = 0, layers_exact = 0, layers_off_by_one = 0, layers_worse = 0;
    bool expect_exact = false;   ///< --expect-exact: any difference is a failure
    std::vector<std::string> notes;
    std::vector<std::string> errors;  ///< faults, timeouts, host errors (one line each)
    /// No error, no layer worse than 1 LSB in the isolated check; with expect_exact, no difference.
    bool ok() const {
        if (!errors.empty() || layers_worse) return false;
        if (!expect_exact) return true;
        if (isolated.off_by_one || isolated.worse) return false;
        for (const OutputRow& o : outputs)
            if (o.check.off_by_one || o.check.worse) return false;
        return true;
    }
};

struct ModelRunOptions {
    npu::tlm_models::SimMode mode = npu::tlm_models::SimMode::Full;
    std::string model_name;
    bool check = true;            ///< full mode: compare with the reference executor
    bool progress = true;         ///< progress line on stderr (full mode)
    bool progress_tty = false;    ///< rewrite one line in place (stderr is a terminal), else every ~10%
    bool expect_exact = false;
    uint64_t job_timeout_ns = 5'000'000'000ull;  ///< per kick, simulated time
};

/// Runs `m` (compiled for `soc`) on a freshly elaborated platform. `inputs` holds one tensor per
/// graph input (ignored in timing mode). `g_ref` is the graph the reference executor runs for the
/// end-to-end comparison (normally m.graph). One SystemC elaboration per process: call once.
ModelRunResult run_model(const hw::SocProfile& soc, drv::rknpu::CompiledModel& m,
                         const std::map<std::string, num::Tensor>& inputs, const ModelRunOptions& opts,
                         trace::TraceWriter* tw, std::ostream& progress_out);

/// Work of one IR node run on the host CPU: int8 MACs, float flops, bytes moved (inputs that are
/// not constants, outputs) and inner products (MACs of conv/gemm/matmul in any dtype).
struct HostCost {
    uint64_t macs = 0, flops = 0, bytes = 0, inner_products = 0;
};
HostCost host_node_cost(const drv::ir::Graph& g, const drv::ir::Node& n);

/// Host cost of one IR node on the CPU (fallback) from the profile's host model, in picoseconds.
uint64_t host_node_ps(const hw::SocProfile& soc, const drv::ir::Graph& g, const drv::ir::Node& n);

/// `npusim run --platform P MODEL.onnx ...` for RKNPU profiles.
struct ModelCliOptions {
    std::string model, platform = "rk3588", mode = "full";
    std::string core_mask = "auto";
    std::vector<std::string> inputs, input_shapes, cpu_nodes;
    uint64_t seed = 0;
    std::string report_path, trace_path;
    bool verify_tiling = false, expect_exact = false, quiet = false, no_check = false;
    std::string profile_file;         ///< a profile JSON instead of the bundled `platform`
    std::vector<std::string> params;  ///< profile overrides, section.key=value (hw::apply_param_overrides)
    /// --quantize int8|fp16|none ("" = not given), --calibration, --calibration-method (app/quantize_cli.h)
    std::string quantize, calibration_method;
    std::vector<std::string> calibration;
};

/// Exit codes: 0 ok, 1 a problem found by the run (fault, layer worse than 1 LSB, tiling),
/// 2 bad input/usage or a model the compiler rejects (unsupported node, too large: its message),
/// 3 the model cannot be loaded (as `npusim check`: dynamic shapes, malformed file).
int run_model_cli(const ModelCliOptions& o, std::ostream& out, std::ostream& err);

}  // namespace sim
