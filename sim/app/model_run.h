// SPDX-License-Identifier: MIT
// Whole-model runs on the simulated RKNPU SoC (issue 6): a CompiledModel (compiler/rknpu/model.h) is
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

#include "app/compile_cache.h"
#include "app/conv_example.h"
#include "compiler/rknpu/model.h"
#include "hw/profile.h"
#include "npu/tlm/rknpu_core.h"
#include "numerics/tensor.h"
#include "results/results.h"
#include "rtl/cosim.h"
#include "trace/trace_writer.h"

namespace sim {

/// One row of the model report: a layer of the CompiledModel.
struct ModelLayerRow {
    std::string name, op, unit;  ///< unit: "NPU", "CPU", "view"
    std::string input_shape, output_shape;
    std::string cores;           ///< "0", "0,1,2", "host", "-"
    std::string note;            ///< CPU: why it fell back; view: how
    std::string cpu_reason;      ///< CPU: "vendor rule", "no NPU lowering yet", "forced"
    std::vector<std::string> rewrites;  ///< graph rewrites that formed the layer
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
    /// An fp16 layer (CheckedLayer::float_rtol): max |device - reference| / max |reference| over its
    /// outputs, and the tolerance it is held to; -1: not an fp16 layer.
    double fp16_rel_error = -1, fp16_rtol = 0;
    /// Host-side input/output conversion at the graph boundary (a QuantizeLinear of a graph input,
    /// a DequantizeLinear producing a graph output): outside the vendor runtime's run call.
    bool host_io = false;
    /// Multi-core layers (more than one core): what limits the scaling (LayerScaling).
    struct Scaling {
        int cores = 0;
        uint64_t work_ps = 0;            ///< sum of the layer's task spans over all cores
        uint64_t span_ps = 0;            ///< first task start to last task end
        uint64_t barrier_ps = 0;         ///< core time spent waiting at the layer's end barrier
        uint64_t split_ps = 0;           ///< fixed per-task cost (fetch + overhead) of all its tasks
        uint64_t ddr_contention_ps = 0;  ///< load time beyond the uncontended DDR transfer
        double efficiency = 0;           ///< work / (cores x span)
        std::string limit;               ///< "barrier", "split overhead", "DDR contention"
    };
    Scaling scaling;
};

/// Comparison of one graph output with the reference executor.
struct OutputRow {
    std::string name;
    std::string unit = "LSB";  ///< differences are in quantization steps of the output
    OutputCheck check;
    /// An output an fp16 layer produced: max |device - reference| / max |reference| (-1: not one).
    double fp16_rel_error = -1;
};

struct ModelRunResult {
    std::string platform, platform_name, model, mode, core_mask;
    std::vector<int> cores;
    uint64_t clock_hz = 0;
    std::vector<ModelLayerRow> layers;
    uint64_t total_ps = 0;  ///< first upload to the last output, NPU and host time (end-to-end latency)
    uint64_t npu_ps = 0, cpu_ps = 0;
    /// Host input/output conversion at the graph boundary (ModelLayerRow::host_io layers) and the
    /// inference figure the vendor runtime's run call measures: total_ps less that conversion
    /// (NPU work plus the CPU layers inside the graph).
    uint64_t host_io_ps = 0, inference_ps = 0;
    /// The profile's calibration (hw::Calibration) and the overrides given with --param, for the
    /// report's trust section; grade counts of the profile parameters.
    hw::Calibration calibration;
    std::vector<std::string> overridden;
    int grade_known = 0, grade_inferred = 0, grade_unknown = 0;
    std::vector<std::string> unknown_params;  ///< timing parameters graded unknown
    /// Per used core: time its tasks ran (sum of task spans). latency - busy = that core idle:
    /// waiting at step barriers for other cores, CPU steps, kick/interrupt hand-over.
    std::map<int, uint64_t> core_busy_ps;
    uint64_t ddr_read_bytes = 0, ddr_write_bytes = 0;
    uint64_t tasks = 0, regcmd_bytes = 0, weight_bytes = 0, arena_bytes = 0;
    size_t npu_layers = 0, cpu_layers = 0, view_layers = 0, steps = 0;
    bool outputs_checked = false;
    std::vector<OutputRow> outputs;
    /// Full mode without errors: the graph outputs as the device produced them, in graph order
    /// (what --output writes and --expect compares, results/results.h).
    std::vector<std::pair<std::string, num::Tensor>> final_outputs;
    bool isolated_checked = false;
    OutputCheck isolated;        ///< summed over every checked layer
    size_t layers_checked = 0, layers_exact = 0, layers_off_by_one = 0, layers_worse = 0;
    bool expect_exact = false;   ///< --expect-exact: any difference is a failure
    /// Why isolated layers may differ by 1 LSB (printed under the isolated check); the RKNPU DPU's
    /// by default, set by other NPU families.
    std::string one_lsb_cause =
        "the DPU requantizes in fixed point (per-channel BS x BN multipliers, OUT_CVT\n"
        "  shift, round-half-up) while onnxruntime multiplies in float32 and rounds half to even, so\n"
        "  values whose float32 product lands on x.5 round differently. A 1-LSB difference then\n"
        "  propagates downstream, so end-to-end outputs of deep nets may differ by a few LSB.";
    std::vector<std::string> notes;
    std::vector<std::string> rewrites;  ///< whole-model import rewrites (constant folding, If inlined)
    std::vector<std::string> errors;  ///< faults, timeouts, host errors (one line each)
    /// --repeat N (ModelRunOptions::repeat > 0): the inference ran N times on the same compiled
    /// model and simulated SoC; process CPU seconds (user + sys) of each repetition's simulation
    /// (upload of the inputs to the graph outputs on the host), best and mean in ms.
    int repeat = 0;
    double sim_cpu_ms_best = 0, sim_cpu_ms_mean = 0;
    /// --compile-cache: whether the compiled model came from the cache (the one line of the report
    /// that differs between a cold and a warm run).
    CompileCacheStatus compile_cache;
    bool rtl = false;                 ///< --rtl: the RTL co-simulation ran
    npu::rtl::RtlOptions rtl_opts;
    std::vector<npu::rtl::RtlTaskRecord> rtl_tasks;
    std::vector<std::string> rtl_layers;  ///< the layer of each rtl_tasks entry
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
    const npu::rtl::RtlOptions* rtl = nullptr;    ///< co-simulate on the RTL datapath (rtl/cosim.h)
    /// Full mode with the check: every NPU layer's output as the device produced it and as the
    /// reference node computed it from the same inputs, DIR/NNN_<tensor>.{device,reference}.npy,
    /// with DIR/index.csv (the comparator's metrics per tensor).
    std::string dump_layers_dir;
    /// --repeat N (full mode, > 0): run the inference N times in the one simulation (the same
    /// arena, the same cores); every repetition must give the same outputs and the same task
    /// cycles (a difference is an error of the run); the report is the last repetition's, with
    /// the per-inference simulation CPU cost (ModelRunResult::sim_cpu_ms_best).
    int repeat = 0;
};

/// Runs `m` (compiled for `soc`) on a freshly elaborated platform. `inputs` holds one tensor per
/// graph input (ignored in timing mode). `g_ref` is the graph the reference executor runs for the
/// end-to-end comparison (normally m.graph). One SystemC elaboration per process: call once.
ModelRunResult run_model(const hw::SocProfile& soc, drv::rknpu::CompiledModel& m,
                         const std::map<std::string, num::Tensor>& inputs, const ModelRunOptions& opts,
                         trace::TraceWriter* tw, std::ostream& progress_out);

/// What the reference checks need of one compiled layer (any NPU family).
struct CheckedLayer {
    std::string name;
    bool device = false;  ///< ran on the NPU: checked in isolation
    std::vector<std::string> inputs, outputs;
    std::vector<size_t> ir_nodes;  ///< nodes of the checked graph the layer implements
    std::map<std::string, double> float_lsb;  ///< float outputs compared in these units (absent: exactly)
    /// > 0: an fp16 layer; each output is compared in steps of float_rtol x max |reference| / 1.5,
    /// so that "worse" (2 steps or more) is |diff| >= float_rtol x max |reference|.
    double float_rtol = 0;
};

/// The full-mode checks every NPU family's run shares: `ref_graph` on `inputs` against the device's
/// `final_outputs` (end to end), then each device layer's recorded outputs against its reference
/// nodes of `g` fed with the recorded inputs (`snapshot`). r.layers[i] is the row of layers[i].
/// `dump_layers_dir` (--dump-layers): each checked tensor as the device produced it and as the
/// reference computed it, DIR/NNN_<tensor>.{device,reference}.npy, with DIR/index.csv.
void check_with_reference(const drv::ir::Graph& ref_graph, const drv::ir::Graph& g, const std::vector<CheckedLayer>& layers,
                          const std::map<std::string, num::Tensor>& inputs,
                          const std::map<std::string, num::Tensor>& final_outputs,
                          const std::map<std::string, num::Tensor>& snapshot, ModelRunResult& r,
                          const std::string& dump_layers_dir = {});

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
    results::ResultOptions results;   ///< --output, --output-dir, --expect, --atol, --rtol
    std::string dump_layers_dir;      ///< --dump-layers DIR (ModelRunOptions::dump_layers_dir)
    uint64_t seed = 0;
    std::string report_path, trace_path;
    std::string vcd_path, csv_path, html_path;  ///< --vcd, --csv, --html (app/report_files.h)
    bool verify_tiling = false, expect_exact = false, quiet = false, no_check = false;
    std::string profile_file;         ///< a profile JSON instead of the bundled `platform`
    std::vector<std::string> params;  ///< profile overrides, section.key=value (hw::apply_param_overrides)
    /// --quantize int8|fp16|none ("" = not given), --calibration, --calibration-method (app/quantize_cli.h)
    std::string quantize, calibration_method;
    std::vector<std::string> calibration;
    npu::rtl::RtlOptions rtl;         ///< --rtl / --rtl-vcd (rtl.any() false: off)
    int repeat = 0;                   ///< --repeat N (0: not given; ModelRunOptions::repeat)
    std::string compile_cache_dir;    ///< --compile-cache DIR ("" = none; app/compile_cache.h)
};

/// Exit codes (cli.md): 0 ok, 1 a problem found by the run (fault, layer worse than 1 LSB, tiling,
/// an --expect value outside the tolerance), 2 bad input/usage, 3 the model cannot be loaded (as
/// `npusim check`: dynamic shapes, malformed file), 4 a model the compiler rejects (unsupported
/// node, too large: its message).
int run_model_cli(const ModelCliOptions& o, std::ostream& out, std::ostream& err);

}  // namespace sim
