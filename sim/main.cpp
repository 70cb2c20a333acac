// SPDX-License-Identifier: MIT
// npusim command-line front end (CLI11): parse, load the profile, build, run, report.
// Exit codes: 0 success, 1 simulation found a problem (fault, mismatch), 2 bad input or usage.
#include <cstdlib>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <systemc>

#include "app/cli_paths.h"
#include "app/cli_vocab.h"
#include "app/conv_example.h"
#include "exec/exec_cli.h"
#include "app/lint.h"
#include "app/model_run.h"
#include "app/mcu_cli.h"
#include "app/quantize_cli.h"
#include "app/regcmd_cli.h"
#include "app/regcmd_file.h"
#include "app/replay.h"
#include "app/task_list.h"
#include "trace/regcmd_disasm.h"
#include "hw/regdb.h"
#include "app/report.h"
#include "compiler/rknpu/check_placement.h"
#include "checker/cli.h"
#include "compiler/onnx/onnx_importer.h"
#include "compiler/ref/reference.h"
#include "mcu/mcu_run.h"
#include "mcu/mcu_train.h"
#include "mcu/mcu_target.h"
#include "hw/profile.h"
#include "numerics/limits.h"
#include "riscv_iss/cli_options.h"
#include "rtl/cosim.h"
#include "sweep/cli.h"
#include "sweep/compare.h"
#include "tnpuv2/run.h"

namespace {

using sim::cli::kExitBadInput;
using sim::cli::kExitProblem;
using sim::cli::fail;
using sim::cli::rtl_choice;
using sim::cli::RtlChoice;
using sim::cli::RegcmdArgs;
using sim::cli::ReplayArgs;
using sim::cli::TargetArgs;
using sim::cli::cmd_decode;
using sim::cli::cmd_lint;
using sim::cli::cmd_replay;

struct RunArgs {
    std::string model;
    std::string platform = "rk3588";
    std::string mode = "full";
    std::string trace_path, report_path, regcmd_path;
    std::string vcd_path, csv_path, html_path;  ///< --vcd, --csv, --html
    std::string cores = "0";
    bool sram = false;
    bool reference = false;
    drv::ref::RefRunOptions ref;
    std::string requant = "float";
    bool skip_check = false;
    sim::results::ResultOptions res;  ///< --output, --output-dir, --expect, --atol, --rtol
    // RKNPU whole-model runs (.onnx/.tflite on an NPU platform)
    std::string core_mask = "auto";
    std::vector<std::string> cpu_nodes;
    bool verify_tiling = false, expect_exact = false, quiet = false, no_compare = false;
    std::string profile_file;         ///< --profile: a profile JSON instead of --platform's
    std::vector<std::string> params;  ///< --param section.key=value overrides
    std::string rtl, rtl_vcd;         ///< --rtl core,dpu / --rtl-vcd FILE (RTL co-simulation)
    sim::QuantizeArgs quant;          ///< --quantize, --calibration, --calibration-method
    int bits = 0;                     ///< tnpuv2: --bits data width (0 = not given)
    int weight_bits = 0;              ///< tnpuv2: --weight-bits
    std::string dump_layers;          ///< --dump-layers DIR (NPU model runs, tnpuv2)
    int repeat = 0;                   ///< --repeat N (NPU model runs, full mode; 0 = not given)
    std::string compile_cache;        ///< --compile-cache DIR (NPU model runs)
};



/// --quantize int8|fp16|none, --calibration FILE.npy|DIR (repeatable), --calibration-method (cli.md).
void add_quantize_options(CLI::App& c, sim::QuantizeArgs& q) {
    c.add_option("--quantize", q.mode, "int8 (quantize, calibrated), fp16 (RKNN's float path) or none (float on the host CPU)");
    c.add_option("--calibration", q.calibration, "--quantize int8: calibration input, FILE.npy or DIR of .npy (NAME=... per input)");
    c.add_option("--calibration-method", q.method, "--quantize int8: minmax (default), kl or mmse");
}


bool write_text(const std::string& path, const std::string& text) {
    std::ofstream f(path, std::ios::binary);
    f << text;
    return static_cast<bool>(f);
}

int cmd_platforms(bool verbose) {
    for (const mcu::McuTarget& t : mcu::all_targets())
        fmt::print("{:<10} {:<34} RISC-V MCU @ {} MHz, flash {} KiB, SRAM {} KiB (ISS preset {})\n", t.name,
                   "HiSpark " + t.name + " (MindSpore Lite Micro)", t.clock_hz / 1000000, t.flash_bytes / 1024,
                   t.sram_bytes / 1024, t.iss_preset);
    for (const std::string& n : hw::list_profiles()) {
        try {
            const hw::SocProfile p = hw::load_named_profile(n);
            fmt::print("{:<10} {:<34} {} core(s) x {} int8 MAC/cycle @ {} MHz, CBUF {} x {} KiB, DDR {:.1f} GB/s peak\n",
                       p.name, p.display_name, p.npu.core_count.value, p.npu.int8_macs_per_cycle.value,
                       p.npu.core_clock_hz.value / 1000000, p.npu.cbuf_banks.value, p.npu.cbuf_bank_bytes.value / 1024,
                       p.mem.ddr_peak_bytes_per_s.value / 1e9);
            const hw::Calibration& c = p.calibration;
            auto pct = [](double v) { return v < 0 ? std::string("-") : fmt::format("{:.1f}%", v); };
            std::string trust = "timing calibration: " + c.status;
            if (c.status == "calibrated")
                trust += fmt::format(" ({} rows, fit |error| mean {}, leave-one-model-out mean {}, max {})", c.rows.size(),
                                     pct(c.fit_mae_pct), pct(c.loo_mae_pct), pct(c.loo_max_pct));
            else if (c.status == "inherited")
                trust += fmt::format(" from {} (its leave-one-model-out mean {}, max {})", c.inherits_from,
                                     pct(c.loo_mae_pct), pct(c.loo_max_pct));
            fmt::print("{:<10} {:<34} {}\n", "", "", trust);
            if (verbose) {
                if (!c.summary.empty()) fmt::print("    {}\n", c.summary);
                for (const std::string& f : c.fitted) fmt::print("    fitted on this SoC: {}\n", f);
                for (const auto& [path, why] : c.joint) fmt::print("    joint fit: {} ({})\n", path, why);
                for (const auto& [path, why] : c.inherited) fmt::print("    inherited: {} ({})\n", path, why);
                for (const hw::CalibrationRow& r : c.rows)
                    fmt::print("    row {}: published {:.3f} ms, estimate {:.3f} ms ({:+.1f}%), left out {:+.1f}%\n", r.model,
                               r.published_ms, r.estimate_ms, r.error_pct, r.loo_error_pct);
                for (const auto& pv : p.params())
                    fmt::print("    {:<32} {:<9} {:<40} {}\n", pv.path, hw::grade_name(pv.grade), pv.value, pv.source);
            }
        } catch (const hw::ProfileError& e) {
            fmt::print("{:<10} INVALID: {}\n", n, e.what());
        }
    }
    std::cout << std::flush;
    sim::tnpuv2::print_platform(verbose, std::cout);
    return 0;
}

/// `npusim run --platform tnpuv2 MODEL [--bits N] [--weight-bits N]` (sim/tnpuv2/run.h).
int cmd_run_tnpuv2(const RunArgs& a) {
    if (a.model.empty()) return fail("--platform tnpuv2 needs a model file (.onnx)");
    const std::string ext = std::filesystem::path(a.model).extension().string();
    if (ext != ".onnx") return fail(fmt::format("'{}': tnpuv2 runs ONNX models (.onnx)", a.model));
    if (a.cores != "0") return fail("--cores does not apply to tnpuv2 (one core)");
    if (!a.csv_path.empty() || !a.html_path.empty())
        return fail(fmt::format("{} does not apply to tnpuv2 yet (RKNPU model runs)", a.csv_path.empty() ? "--html" : "--csv"));
    if (a.core_mask != "auto" && a.core_mask != "0") return fail(fmt::format("--core-mask {}: tnpuv2 has one core (0)", a.core_mask));
    if (a.sram) return fail("--sram does not apply to tnpuv2 (its SRAM is the core's own buffer)");
    if (!a.cpu_nodes.empty()) return fail("--cpu-node does not apply to tnpuv2 (the uranus-tnpuv2 toolchain has no CPU path: unsupported nodes refuse the model)");
    if (a.verify_tiling) return fail("--verify-tiling is an RKNPU check; tnpuv2 tiles are validated by the core's SRAM check");
    if (!a.quant.mode.empty()) return fail("--quantize does not apply to tnpuv2: float models are quantized at --bits (4, 8, 12, 14, 16)");
    sim::tnpuv2::RunOptions o;
    o.model = a.model;
    o.mode = a.mode;
    o.inputs = a.ref.inputs;
    o.outputs = a.res.outputs;
    o.input_shapes = a.ref.input_shapes;
    o.seed = a.ref.seed;
    o.report_path = a.report_path;
    o.trace_path = a.trace_path;
    o.vcd_path = a.vcd_path;
    o.expect_exact = a.expect_exact;
    o.quiet = a.quiet;
    o.no_check = a.no_compare;
    o.profile_file = a.profile_file;
    o.params = a.params;
    o.bits = a.bits ? a.bits : 8;
    o.weight_bits = a.weight_bits;
    o.calibration = a.quant.calibration;
    o.calibration_method = a.quant.method;
    o.dump_path = a.regcmd_path;
    o.dump_layers = a.dump_layers;
    return sim::tnpuv2::run_cli(o, std::cout, std::cerr);
}

/// `npusim run --reference`: the reference executor (golden numerics), .npy in and out.
int cmd_run_reference(RunArgs a) {
    if (a.model.empty()) return fail("--reference needs a model file (.onnx or .tflite)");
    if (!std::filesystem::exists(a.model)) return fail(fmt::format("model file '{}' not found", a.model));
    if (const std::string e = sim::results::validate(a.res, sim::results::with_model(a.ref.inputs, a.model)); !e.empty())
        return fail(e);
    a.ref.model = a.model;
    std::vector<sim::results::NamedTensor> outputs;
    a.ref.results = &outputs;
    std::ostringstream log;
    const int rc = drv::ref::run_reference(a.ref, log);
    const std::string text = log.str();
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
        if (line.rfind("error: ", 0) == 0)
            std::cerr << "npusim: " << line << "\n";
        else
            std::cout << line << "\n";
    }
    if (rc == drv::ref::kRefOk) return sim::results::write_and_check(outputs, a.res, std::cout, std::cerr);
    // cli.md: 3 the model cannot be loaded, 1 the run found a problem (an operator failed), 2 bad input.
    return rc == drv::ref::kRefModelError ? 3 : rc == drv::ref::kRefOpError ? kExitProblem : kExitBadInput;
}

/// `npusim run --platform ws63|3066h MODEL`: seed-000 check, model blob, firmware on the ISS,
/// comparison with the reference executor, per-layer cycles (drivers/mcu).
int cmd_run_mcu(const RunArgs& a) {
    if (a.model.empty()) return fail(fmt::format("--platform {} needs a model file (.onnx)", a.platform));
    mcu::McuRunOptions o;
    o.model = a.model;
    o.platform = a.platform;
    o.inputs = a.ref.inputs;
    o.input_shapes = a.ref.input_shapes;
    o.seed = a.ref.seed;
    o.requant = a.requant;
    o.skip_check = a.skip_check;
    o.quantize = a.quant.mode;
    o.calibration = a.quant.calibration;
    o.calibration_method = a.quant.method;
    if (o.quantize.empty() && (!o.calibration.empty() || !o.calibration_method.empty()))
        return fail("--calibration/--calibration-method need --quantize int8");
    return sim::run_mcu_cli(o, a.report_path, a.trace_path, a.res, a.vcd_path);
}

/// The kind of `npusim run` the arguments ask for (cli_vocab.h), before any file is opened.
unsigned run_kind(const RunArgs& a) {
    if (a.reference) return sim::cli::kReferenceRun;
    if (hw::tnpuv2::is_platform_name(a.platform)) return sim::cli::kTnpuv2Run;
    if (mcu::find_target(a.platform)) return sim::cli::kMcuRun;
    const std::string ext = std::filesystem::path(a.model).extension().string();
    return ext == ".onnx" || ext == ".tflite" ? sim::cli::kNpuModelRun : sim::cli::kLayerRun;
}

int cmd_run(RunArgs a, const CLI::App& run_app) {
    if (run_app.count("--platform")) {
        try {
            a.platform = sim::cli::canonical_platform(a.platform);
        } catch (const std::invalid_argument& e) {
            return fail(e.what());
        }
    }
    const std::string where = (run_app.count("--platform") ? "--platform " + a.platform + " " : std::string()) +
                              (a.reference ? "--reference " : "") + (a.model.empty() ? "(bundled example)" : a.model);
    if (const std::string e = sim::cli::inapplicable_option(run_app, run_kind(a), where); !e.empty()) return fail(e);
    if (run_app.count("--compile-cache") && a.compile_cache.empty())
        return fail(fmt::format("--compile-cache needs a directory, npusim run {} (--compile-cache DIR)", where));
    const RtlChoice rtl = rtl_choice(a.rtl, a.rtl_vcd, a.mode);
    if (!rtl.error.empty()) return fail(rtl.error);
    const bool quantize_given = !a.quant.mode.empty() || !a.quant.calibration.empty() || !a.quant.method.empty();
    if (quantize_given && !hw::tnpuv2::is_platform_name(a.platform) && (a.reference || a.model.empty() ||
                           std::filesystem::path(a.model).extension() != ".onnx"))
        return fail(a.reference ? "--quantize does not apply to --reference (quantize first: npusim quantize MODEL -o OUT)"
                    : a.model.empty() || std::filesystem::path(a.model).extension() != ".onnx"
                        ? "--quantize applies to .onnx models"
                        : std::string("--quantize"));
    if (hw::tnpuv2::is_platform_name(a.platform)) {
        if (rtl.opts) return fail("--rtl does not apply to --platform tnpuv2 (the RTL blocks are RKNPU ones)");
        return cmd_run_tnpuv2(a);
    }
    if (a.reference) return cmd_run_reference(a);
    if (mcu::find_target(a.platform)) return cmd_run_mcu(a);
    hw::SocProfile soc;
    try {
        soc = a.profile_file.empty() ? hw::load_named_profile(a.platform) : hw::load_profile(a.profile_file);
        hw::apply_param_overrides(soc, a.params);
    } catch (const hw::ProfileError& e) {
        return fail(e.what());
    }
    if (rtl.opts && !npu::rtl::soc_unsupported(soc).empty()) return fail(npu::rtl::soc_unsupported(soc));
    sim::ConvExampleSpec spec;
    if (!a.model.empty()) {
        namespace fs = std::filesystem;
        if (!fs::exists(a.model)) return fail(fmt::format("model file '{}' not found", a.model));
        const std::string ext = fs::path(a.model).extension().string();
        if (ext == ".json") {
            try {
                spec = sim::ConvExampleSpec::from_file(a.model);
            } catch (const std::exception& e) {
                return fail(e.what());
            }
        } else if (ext == ".onnx" || ext == ".tflite") {
            sim::ModelCliOptions mo;
            mo.model = a.model;
            mo.platform = a.platform;
            mo.mode = a.mode;
            mo.core_mask = a.core_mask;
            mo.inputs = a.ref.inputs;
            mo.results = a.res;
            mo.dump_layers_dir = a.dump_layers;
            mo.input_shapes = a.ref.input_shapes;
            mo.cpu_nodes = a.cpu_nodes;
            mo.seed = a.ref.seed;
            mo.report_path = a.report_path;
            mo.trace_path = a.trace_path;
            mo.vcd_path = a.vcd_path;
            mo.csv_path = a.csv_path;
            mo.html_path = a.html_path;
            mo.verify_tiling = a.verify_tiling;
            mo.expect_exact = a.expect_exact;
            mo.quiet = a.quiet;
            mo.no_check = a.no_compare;
            mo.repeat = a.repeat;
            mo.compile_cache_dir = a.compile_cache;
            mo.profile_file = a.profile_file;
            mo.params = a.params;
            if (rtl.opts) mo.rtl = *rtl.opts;
            mo.quantize = a.quant.mode;
            mo.calibration = a.quant.calibration;
            mo.calibration_method = a.quant.method;
            return sim::run_model_cli(mo, std::cout, std::cerr);
        } else {
            return fail(fmt::format("'{}': unknown model format '{}' (expected .json, .onnx or .tflite)", a.model, ext));
        }
    }
    if (!a.csv_path.empty() || !a.html_path.empty())
        return fail(fmt::format("{} applies to NPU model runs (.onnx, .tflite), not to layer descriptions",
                                a.csv_path.empty() ? "--html" : "--csv"));
    std::vector<int> cores;
    for (size_t pos = 0; pos <= a.cores.size();) {
        const size_t next = std::min(a.cores.find_first_of(",_", pos), a.cores.size());
        const std::string item = a.cores.substr(pos, next - pos);
        if (item.empty() || item.find_first_not_of("0123456789") != std::string::npos || item.size() > 2)
            return fail(fmt::format("--cores '{}': expected core numbers like 0 or 0,1,2", a.cores));
        cores.push_back(std::stoi(item));
        pos = next + 1;
    }
    const auto mode = a.mode == "timing" ? npu::tlm_models::SimMode::Timing : npu::tlm_models::SimMode::Full;
    trace::TraceWriter tw;
    sim::RunResult r;
    try {
        r = sim::run_conv_example(soc, spec, cores, mode, a.trace_path.empty() && a.vcd_path.empty() ? nullptr : &tw, a.sram,
                                  rtl.opts ? &*rtl.opts : nullptr);
    } catch (const std::invalid_argument& e) {
        return fail(e.what());
    }
    std::cout << sim::report_text(r);
    if (!a.trace_path.empty() && !tw.write_file(a.trace_path))
        return fail(fmt::format("cannot write trace '{}'", a.trace_path));
    if (!a.vcd_path.empty() && !tw.write_vcd(a.vcd_path)) return fail(fmt::format("cannot write VCD '{}'", a.vcd_path));
    if (!a.report_path.empty() && !write_text(a.report_path, sim::report_json(r)))
        return fail(fmt::format("cannot write report '{}'", a.report_path));
    if (!a.regcmd_path.empty() && !sim::write_regcmd_file(a.regcmd_path, r.regcmd))
        return fail(fmt::format("cannot write regcmd dump '{}'", a.regcmd_path));
    return r.ok() ? 0 : kExitProblem;
}
}  // namespace

static int npusim_main(int argc, char* argv[]) {
    CLI::App app{"npusim - virtual platform for RKNPU/tnpuv2 NPUs and HiSpark RISC-V MCUs"};
    app.set_version_flag("--version", std::string("npusim ") + NPUSIM_VERSION);
    app.require_subcommand(1);

    bool verbose = false;
    CLI::App* plat = app.add_subcommand("platforms", "List the SoC profiles (-v: every parameter with its grade)");
    plat->add_flag("-v,--verbose", verbose, "Show every profile parameter, its trust grade and source");

    RunArgs ra;
    CLI::App* run = app.add_subcommand("run", "Run a model on a simulated SoC (no MODEL: the bundled conv example)");
    run->add_option("model", ra.model,
                    "Model (.onnx: compiled for the NPU platform; .json: layer description); omit for the bundled example");
    run->add_option("-p,--platform", ra.platform, "SoC profile (see `npusim platforms`)")->capture_default_str();
    run->add_option("--cores", ra.cores, "NPU core(s) to run on; several (0,1,2) run one copy each, concurrently")
        ->capture_default_str();
    run->add_option("--mode", ra.mode, "full (bytes + timing) or timing (no data)")
        ->check(CLI::IsMember({"full", "timing"}))
        ->capture_default_str();
    run->add_option("--trace", ra.trace_path, "Write a Chrome/Perfetto trace-event JSON file");
    run->add_option("--report", ra.report_path, "Write the per-layer report as JSON");
    run->add_option("--vcd", ra.vcd_path, "Write interrupt lines, block busy signals and DMA activity as a VCD (GTKWave)");
    run->add_option("--csv", ra.csv_path, "NPU model runs: write the per-layer table as CSV");
    run->add_option("--html", ra.html_path, "NPU model runs: write a self-contained HTML report (charts, roofline)");
    run->add_option("--profile", ra.profile_file, "SoC profile file (JSON like hwdesc/profiles/*.json) instead of the platform's");
    run->add_option("--param", ra.params, "Override a profile parameter: section.key=value, repeatable (see `npusim platforms -v`)");
    run->add_option("--dump-regcmd", ra.regcmd_path, "Write the submitted regcmd buffer (raw 64-bit LE entries)");
    run->add_flag("--sram", ra.sram, "Place input and output in the NPU's on-chip SRAM (NBUF) when the SoC has one");
    run->add_flag("--reference", ra.reference, "Run MODEL (.onnx/.tflite) on the reference executor (golden numerics)");
    run->add_option("--input", ra.ref.inputs, "Model runs: .npy per graph input, in order (default: seeded random)");
    run->add_option("--output", ra.res.outputs, "Model, MCU and reference runs: write .npy per graph output (full mode)");
    run->add_option("--output-dir", ra.res.output_dir, "Model, MCU and reference runs: write every graph output as DIR/<name>.npy");
    run->add_option("--expect", ra.res.expect, "Model, MCU and reference runs: golden .npy per graph output; a value outside "
                    "--atol/--rtol fails (exit 1); prints max/mean |diff|, cosine, exact count");
    run->add_option("--atol", ra.res.atol, "--expect: absolute tolerance (numpy.allclose: |got - want| <= atol + rtol |want|)")
        ->capture_default_str();
    run->add_option("--rtol", ra.res.rtol, "--expect: relative tolerance")->capture_default_str();
    run->add_option("--dump-layers", ra.dump_layers, "NPU model runs (full mode): every NPU layer's output as the device "
                    "produced it beside the reference's (fed with the device's inputs) and the reference's end-to-end value, "
                    "DIR/NNN_<tensor>.{device,reference,end_to_end}.npy + DIR/index.csv; "
                    "tnpuv2: every activation the device produced as DIR/<tensor>.npy");
    run->add_option("--input-shape", ra.ref.input_shapes, "Model runs: fix a dynamic input, name=1x3x224x224");
    std::string max_memory;  // --max-memory (numerics/limits.h; README "Memory budget")
    const char* kMaxMemoryHelp = "Memory budget: the most tensor bytes held and the largest input file read (default 16G)";
    run->add_option("--max-memory", max_memory, kMaxMemoryHelp);
    run->add_option("--seed", ra.ref.seed, "Model runs: seed of the random inputs")->capture_default_str();
    run->add_option("--core-mask", ra.core_mask, "NPU model runs: auto, 0, 1, 2, 0_1, 0_1_2 (RK3588 names)")
        ->capture_default_str();
    run->add_option("--cpu-node", ra.cpu_nodes, "NPU model runs: force a node (name or op type) onto the CPU");
    run->add_flag("--verify-tiling", ra.verify_tiling, "NPU model runs: verify every layer's task windows and CBUF use");
    run->add_flag("--expect-exact", ra.expect_exact, "NPU model runs: any difference from the reference fails (exit 1)");
    run->add_flag("--no-compare", ra.no_compare, "NPU model runs: skip the comparison with the reference executor");
    run->add_option("--repeat", ra.repeat, "NPU model runs (full mode): run the inference N times on the same compiled "
                    "model and simulated SoC (outputs and cycles must repeat) and report the per-inference simulation "
                    "CPU cost")
        ->check(CLI::Range(1, 100000));
    run->add_flag("-q,--quiet", ra.quiet, "No progress line on stderr");
    run->add_option("--compile-cache", ra.compile_cache, "NPU model runs: keep the compiled model in DIR; a later run of "
                    "the same model, profile and options loads it instead of importing and compiling");
    run->add_option("--rtl", ra.rtl,
                    "Co-simulate RKNPU blocks on their Verilator RTL: core, dpu or core,dpu (bytes and cycles "
                    "checked against the C++ engines per task)");
    run->add_option("--rtl-vcd", ra.rtl_vcd, "With --rtl: write the RTL's signals to this VCD file");
    run->add_flag("--keep-qdq", ra.ref.keep_qdq, "--reference: run Q/DQ nodes as written (float), not fused");
    run->add_option("--requant", ra.requant, "MCU platforms: float (bit-exact with the reference) or fixed (Q31)")
        ->check(CLI::IsMember({"float", "fixed"}))
        ->capture_default_str();
    run->add_flag("--skip-check", ra.skip_check, "MCU platforms: run even when the operator tables (MindSpore Lite Micro v106) reject a node");
    add_quantize_options(*run, ra.quant);
    run->add_option("--bits", ra.bits, "tnpuv2: data width of the quantized model (4, 8, 12, 14, 16; default 8)");
    run->add_option("--weight-bits", ra.weight_bits, "tnpuv2: conv/MatMul weight width (4, 8, 16, 20; default: the model's)");

    drv::check::CheckCliOptions co;
    CLI::App* chk = app.add_subcommand("check", "Check models against a platform's operator rules (the vendors' operator tables)");
    chk->add_option("models", co.models, "Model files (.onnx)")->required();
    chk->add_option("-p,--platform", co.platform, "Platform (see `npusim specs`)");
    chk->add_flag("--all-platforms", co.all_platforms, "Print a model x platform matrix");
    chk->add_flag("--json", co.json, "Machine-readable output");
    chk->add_option("--input-shape", co.input_shapes, "Fix a dynamic input, name=1x3x224x224");
    chk->add_option("--bits", co.quant_bits, "Data (activation) quantization width for tnpuv2 rules (4..16)");
    chk->add_option("--weight-bits", co.weight_bits, "Weight (constant tensor) width for tnpuv2 rules (4, 8, 16, 20)");
    sim::QuantizeArgs chk_quant;
    uint64_t chk_seed = 0;
    add_quantize_options(*chk, chk_quant);
    chk->add_option("--max-memory", max_memory, kMaxMemoryHelp);
    chk->add_option("--seed", chk_seed, "--quantize int8 without --calibration: seed of the random calibration input");
    std::string chk_cache;  // accepted only to refuse it by name (cli.md: an option that does not apply)
    chk->add_option("--compile-cache", chk_cache, "Not for check (npusim run --compile-cache DIR)")->group("");

    sim::QuantizeCliOptions qo;
    CLI::App* qnt = app.add_subcommand("quantize", "Quantize a float ONNX model to an int8 QDQ model (calibrated), with an accuracy report");
    qnt->add_option("model", qo.model, "Float model (.onnx)")->required();
    qnt->add_option("-o,--output", qo.output, "QDQ model to write (.onnx)")->required();
    add_quantize_options(*qnt, qo.q);
    qnt->add_option("--scheme", qo.scheme, "asymmetric_quantized-8 (int8 activations) or asymmetric_quantized-u8 (uint8)")
        ->capture_default_str();
    qnt->add_option("--seed", qo.seed, "Seed of the random calibration input (no --calibration)")->capture_default_str();
    qnt->add_option("--input-shape", qo.input_shapes, "Fix a dynamic input, name=1x3x224x224");
    qnt->add_option("--accuracy-report", qo.accuracy_report, "Write the per-layer accuracy report as JSON");
    qnt->add_option("--csv", qo.csv, "Write the per-layer accuracy report as CSV");
    qnt->add_flag("--json", qo.json, "Print the result as JSON instead of text");
    drv::check::SpecsCliOptions so;
    CLI::App* spc = app.add_subcommand("specs", "What the operator-spec DB holds per platform; --coverage lists what is not encoded");
    spc->add_option("-p,--platform", so.platform, "One platform (default: summary of all)");
    spc->add_flag("--coverage", so.coverage, "List every operator heading of the vendor documents not encoded, with the reason");
    spc->add_flag("--json", so.json, "Machine-readable output");

    RegcmdArgs da, la;
    CLI::App* dec = app.add_subcommand("decode", "Disassemble a regcmd buffer into block/register/field names, task by task");
    dec->add_option("file", da.file, "Raw regcmd file (little-endian 64-bit entries)")->required();
    da.target.add_to(*dec);
    CLI::App* lint = app.add_subcommand("lint", "Check a regcmd buffer: fields, reserved bits, banks, entries, chaining, enables");
    lint->add_option("file", la.file, "Raw regcmd file (little-endian 64-bit entries)")->required();
    la.target.add_to(*lint);
    lint->add_option("--base", la.base, "Device address of the first entry (default: inferred from the chain)");

    ReplayArgs pa;
    CLI::App* rep = app.add_subcommand("replay", "Kick a captured regcmd buffer on a simulated core; report status, faults, timing");
    rep->add_option("file", pa.file, "Raw regcmd file (little-endian 64-bit entries)")->required();
    pa.target.add_to(*rep);
    rep->add_option("--core", pa.core, "NPU core of a single kick (default kicks: the chains on --core-mask)")->capture_default_str();
    rep->add_option("--core-mask", pa.core_mask, "Cores the chains (or the task list) run on: auto, 0, 1, 2, 0_1, 0_1_2, all");
    rep->add_option("--base", pa.base, "NPU address of the buffer (the address its chain pointers assume; default: inferred)");
    rep->add_option("--tasks", pa.tasks, "One kick of TASK_CON.TASK_NUMBER tasks (default: one kick per chain)");
    rep->add_option("--amount", pa.amount, "First task's PC_REGISTER_AMOUNTS of that kick (default: derived)");
    rep->add_option("--task-list", pa.task_list,
                    "struct rknpu_task array as submitted (JSON with its submit, or the packed 40-byte binary; "
                    "docs/rknpu-register-semantics.md §5): kicks as the vendor kernel makes them");
    rep->add_option("--load", pa.loads, "FILE@ADDR: place FILE's bytes at NPU address ADDR before the kicks (repeatable)");
    rep->add_option("--dump", pa.dumps, "ADDR:LEN=FILE: write LEN bytes from NPU address ADDR to FILE after (repeatable)");
    rep->add_option("--mode", pa.mode, "timing (tensors are not in the capture) or full")
        ->check(CLI::IsMember({"full", "timing"}))
        ->capture_default_str();
    rep->add_option("--trace", pa.trace_path, "Write a Chrome/Perfetto trace-event JSON file");
    rep->add_option("--vcd", pa.vcd_path, "Write interrupt lines, block busy signals and DMA activity as a VCD (GTKWave)");
    rep->add_option("--rtl", pa.rtl, "Co-simulate RKNPU blocks on their Verilator RTL: core, dpu or core,dpu (--mode full)");
    rep->add_option("--rtl-vcd", pa.rtl_vcd, "With --rtl: write the RTL's signals to this VCD file");

    sweep::CompareCliOptions cmpo;
    cmpo.version = NPUSIM_VERSION;
    CLI::App* cmp = app.add_subcommand("compare", "Run one model over several SoCs, core masks or --param values, side by side");
    sweep::add_compare_options(*cmp, cmpo);

    sim::exec::ExecArgs ea;
    CLI::App* exe = app.add_subcommand(
        "exec", "Run an unmodified program (x86-64, or aarch64 under qemu-user) against the simulated NPU's kernel "
                "interfaces (rknpu /dev/dri/card1, rocket /dev/accel/accel0): npusim exec [options] -- PROGRAM ARGS...");
    exe->add_option("-p,--platform", ea.platform, "SoC profile (see `npusim platforms`)")->capture_default_str();
    exe->add_option("--socket", ea.socket, "UNIX socket of the simulator (default: per user and platform; one is started "
                                           "when none answers)");
    exe->add_option("--trace", ea.trace_path, "Write the ioctls and the NPU blocks on one timeline (Perfetto JSON)");
    exe->add_option("--report", ea.report_path, "Write this run's ioctls, jobs and errors as JSON");
    exe->add_flag("--log", ea.log, "Print every ioctl with its arguments and result on the program's stderr");
    exe->add_option("--core-mask", ea.core_mask, "Cores the emulated drivers use: auto, all, 0, 0_1, ... (a simulator "
                                                 "this command starts)");
    exe->add_option("--node", ea.nodes, "Emulated device node PATH=rknpu|rocket, repeatable (default /dev/dri/card1 and "
                                        "/dev/dri/renderD129 = rknpu, /dev/accel/accel0 = rocket)");
    exe->add_option("--qemu", ea.qemu, "qemu-user binary for aarch64 programs")->capture_default_str();
    exe->add_option("--sysroot", ea.sysroot, "aarch64 root for qemu's -L (its dynamic loader and libc)")->capture_default_str();
    exe->add_option("--interposer", ea.interposer, "LD_PRELOAD library to use instead of the one next to npusim");
    exe->add_option("command", ea.command, "PROGRAM ARGS... (after --)");
    exe->prefix_command();

    sim::exec::ServeArgs sa;
    CLI::App* srv = app.add_subcommand("serve", "Hold a simulated SoC for the programs `npusim exec` runs (shared, as a "
                                                "board is: several programs at once)");
    srv->add_option("-p,--platform", sa.platform, "SoC profile (see `npusim platforms`)")->capture_default_str();
    srv->add_option("--socket", sa.socket, "UNIX socket to listen on (default: per user and platform)");
    srv->add_option("--core-mask", sa.core_mask, "Cores the emulated drivers use: auto, all, 0, 0_1, ...");
    srv->add_flag("--record-trace", sa.record_trace, "Record a trace that `npusim exec --trace` can ask for");
    srv->add_option("--trace", sa.trace_path, "Write the trace of everything served at exit");
    srv->add_option("--report", sa.report_path, "Write the report of everything served at exit");
    srv->add_flag("-q,--quiet", sa.quiet, "No start-up line");
    srv->add_flag("--exit-when-idle", sa.exit_when_idle, "Exit when the last program disconnects")->group("");
    srv->add_option("--ready-fd", sa.ready_fd, "Write 'ready' to this descriptor once listening")->group("");

    sweep::SweepCliOptions swo;
    swo.version = NPUSIM_VERSION;
    CLI::App* swp = app.add_subcommand("sweep", "Run a design-space sweep (spec file): locally in parallel or as a Slurm job array");
    sweep::add_sweep_options(*swp, swo);

    mcu::TrainOptions to;
    CLI::App* trn = app.add_subcommand("train", "On-device training on ws63 (MindSpore Lite Micro v106 training tables, FP32 or QAS INT8): loss per epoch, cycles, memory");
    trn->add_option("model", to.model, "Float model (.onnx) in the training tables' configurations")->required();
    trn->add_option("-p,--platform", to.platform, "MCU platform (ws63; 3066H has no on-device training)")->capture_default_str();
    trn->add_option("--data", to.data, "Training samples, float32 .npy [N, C, H, W]")->required();
    trn->add_option("--labels", to.labels, "Class labels, int64/int32 .npy [N]")->required();
    trn->add_option("--epochs", to.epochs, "Epochs")->capture_default_str();
    trn->add_option("--lr", to.lr, "SGD learning rate")->capture_default_str();
    trn->add_option("--quantize", to.quantize, "int8: quantize the float model (the toolchain's full quantization) and train QAS INT8");
    trn->add_option("--calibration", to.calibration, "--quantize int8: calibration data (default: the --data samples)");
    trn->add_option("--calibration-method", to.calibration_method, "--quantize int8: minmax (default), kl or mmse");

    iss::RunOptions io;
    io.tool = "npusim";
    CLI::App* issc = app.add_subcommand("iss", "Run an RV32IMAFC ELF on the MCU instruction-set simulator (ws63, 3066h, cv32e40p)");
    iss::add_run_options(*issc, io);

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
        std::cerr << "npusim: error: " << sim::cli::parse_error_text(app, e) << "\n";
        return kExitBadInput;
    }
    for (const CLI::App* sub : app.get_subcommands())
        if (const std::string e = sim::cli::check_option_values(*sub); !e.empty()) return fail(e);
    // Platform names as cli.md spells them (case-insensitive, operator-table aliases); tnpuv2
    // selects its own stream format (sim/tnpuv2).
    for (auto [t, used] : {std::pair{&da.target, bool(*dec)}, {&la.target, bool(*lint)}, {&pa.target, bool(*rep)}}) {
        try {
            if (!hw::tnpuv2::is_platform_name(t->platform)) t->platform = sim::cli::canonical_platform(t->platform);
        } catch (const std::invalid_argument& e) {
            if (used) return fail(e.what());
        }
    }
    // --input-shape is an option value: a bad one is exit 2 (README "Exit codes"), checked here
    // with the importer's own parser before any model is read.
    for (const auto* specs : {&ra.ref.input_shapes, &co.input_shapes, &qo.input_shapes})
        for (const std::string& s : *specs) {
            try {
                drv::importer::ImportOptions scratch;
                drv::importer::parse_input_shape(s, scratch);
            } catch (const std::exception& e) {
                return fail(e.what());
            }
        }
    if (!max_memory.empty()) {
        try {
            num::set_max_memory(num::parse_memory_size(max_memory));
        } catch (const std::invalid_argument& e) {
            return fail(e.what());
        }
    }
    sc_core::sc_set_time_resolution(1, sc_core::SC_PS);
    if (*plat) return cmd_platforms(verbose);
    if (*run) return cmd_run(ra, *run);
    if (*dec) return cmd_decode(da);
    if (*lint) return cmd_lint(la);
    if (*rep) return cmd_replay(pa);
    if (*exe) {
        for (const std::string& r : exe->remaining()) ea.command.push_back(r);
        if (!ea.command.empty() && ea.command.front() == "--") ea.command.erase(ea.command.begin());
        return sim::exec::cmd_exec(ea);
    }
    if (*srv) return sim::exec::cmd_serve(sa);
    if (*issc) return iss::run_cli(io);
    if (*chk) {
        if (chk->count("--compile-cache"))
            return fail("--compile-cache does not apply to check, npusim check (check compiles no model to keep; it "
                        "applies to npusim run of an NPU model)");
        // RKNPU platforms: the model compiler's per-node decision (one verdict with `npusim run`).
        co.placement = [&co](const std::string& model, const std::string& platform, const drv::check::PlatformSpec& spec) {
            return drv::rknpu::check_placement(model, platform, spec, co.input_shapes);
        };
        if (!co.specs_dir.empty()) co.placement = nullptr;  // the compiler reads the bundled DB
        // ws63/3066H: the MCU path's own refusals (no kernel yet, QDQ models) next to the seed rules.
        co.engine_refusals = [](const std::string& model, const drv::ir::Graph& g) { return mcu::engine_refusals(model, g); };
        // tnpuv2: the model as its converter sees it (YOLO decode -> GenerateBox, ...); no placement.
        if (hw::tnpuv2::is_platform_name(co.platform)) sim::tnpuv2::set_check_prepare(co);
        if (chk_quant.mode.empty() && chk_quant.calibration.empty() && chk_quant.method.empty())
            return drv::check::run_check_cli(co, std::cout, std::cerr);
        return sim::run_check_quantized(co, chk_quant, chk_seed, std::cout, std::cerr);
    }
    if (*qnt) return sim::run_quantize_cli(qo, std::cout, std::cerr);
    if (*trn) {
        to.executor = sim::run_on_mcu_platform;  // the firmware on the SystemC MCU platform
        return mcu::train_cli(to, std::cout, std::cerr);
    }
    if (*spc) return drv::check::run_specs_cli(so, std::cout, std::cerr);
    if (*swp) return sweep::run_sweep_cli(swo, std::cout, std::cerr);
    if (*cmp) return sweep::run_compare_cli(cmpo, std::cout, std::cerr);
    return kExitBadInput;
}

// The last line of defence: an exception no subcommand handled is one error line, never SystemC's
// multi-line "uncaught exception" report on stdout or std::terminate.
int sc_main(int argc, char* argv[]) {
    try {
        return npusim_main(argc, argv);
    } catch (const num::SizeError& e) {
        std::cerr << "npusim: error: " << e.what() << "\n";
        return kExitBadInput;
    } catch (const std::bad_alloc&) {
        std::cerr << "npusim: error: out of memory (the machine has less than the memory budget of "
                  << num::format_bytes(num::max_memory()) << "; lower it with --max-memory)\n";
        return kExitBadInput;
    } catch (const std::exception& e) {
        std::string what = e.what();
        for (char& ch : what)
            if (ch == '\n' || ch == '\r') ch = ' ';
        std::cerr << "npusim: error: " << what << "\n";
        return kExitProblem;
    }
}

// Our own entry point: SystemC prints its banner in sc_elab_and_sim() unless this variable is set.
int main(int argc, char* argv[]) {
    setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 1);
#ifdef __GLIBC__
    // The simulated tasks allocate and free feature maps, weights and output surfaces of up to a few
    // MiB each; glibc would serve each from its own mmap and unmap it on free, so every task paid the
    // kernel's page faults and page zeroing again (~8% of a ResNet50 full-mode run). Keep freed
    // memory in the heap for reuse instead.
    mallopt(M_MMAP_THRESHOLD, 512 << 20);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
    return sc_core::sc_elab_and_sim(argc, argv);
}
