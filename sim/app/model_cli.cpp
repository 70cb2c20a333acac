// SPDX-License-Identifier: MIT
// `npusim run --platform P MODEL.onnx`: load + fold the graph as the reference executor does,
// compile it for the core mask (the compiler consults the platform's operator rules: CPU fallback
// per node with the rule, an unsupported node rejects the model), optionally verify the tiling,
// gather inputs, run it on the simulated SoC, print/write the report and trace.
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <unistd.h>

#include "app/compile_cache.h"
#include "app/model_run.h"
#include "app/quantize_cli.h"
#include "app/report.h"
#include "app/report_files.h"
#include "compiler/model_loader.h"
#include "compiler/ref/reference.h"
#include "numerics/npy.h"
#include "numerics/limits.h"

namespace sim {

namespace {

constexpr int kExitProblem = 1;
constexpr int kExitBadInput = 2;
constexpr int kExitModel = 3;
constexpr int kExitRefused = 4;

/// NPUSIM_PHASE_TIMES=1: one stderr line per phase with the process CPU seconds it took
/// (profiling the whole-command cost; the report itself is unchanged).
class PhaseTimes {
   public:
    explicit PhaseTimes(std::ostream& err) : err_(err), on_(std::getenv("NPUSIM_PHASE_TIMES") != nullptr) {}
    void mark(const char* phase) {
        if (!on_) return;
        const std::clock_t now = std::clock();
        const double s = static_cast<double>(now - last_) / CLOCKS_PER_SEC;
        err_ << fmt::format("npusim: phase {:<8} {:.3f} s CPU\n", phase, s);
        last_ = now;
    }

   private:
    std::ostream& err_;
    bool on_;
    std::clock_t last_ = std::clock();
};

bool write_text(const std::string& path, const std::string& text) {
    std::ofstream f(path, std::ios::binary);
    f << text;
    return static_cast<bool>(f);
}

/// Import (and --quantize) the model, make the inputs, compile: -1 to go on, else the exit code
/// (the message written to `err`).
int import_and_compile(const ModelCliOptions& o, const hw::SocProfile& soc, bool full, drv::rknpu::CompiledModel& m,
                       std::optional<drv::quant::QuantizedModel>& qm, std::vector<std::string>& quant_notes,
                       std::map<std::string, num::Tensor>& inputs, PhaseTimes& phases, std::ostream& err) {
    auto fail = [&](int code, const std::string& msg) {
        err << "npusim: error: " << msg << "\n";
        return code;
    };
    drv::ir::Graph g;
    try {
        drv::importer::ImportOptions io;
        io.qdq = drv::importer::QdqMode::Rewrite;  // the graph the reference executor runs
        io.ort_cpu = drv::importer::OrtCpu::X86_64;  // as the onnxruntime-node oracle on this host
        // Timing mode reads no weights (timing-only compile, no CPU node runs): not even copied.
        if (!full) io.skip_data_from_bytes = 64 * 1024;
        for (const auto& s : o.input_shapes) drv::importer::parse_input_shape(s, io);
        g = drv::importer::load_model(o.model, io);
    } catch (const std::exception& e) {
        return fail(kExitModel, fmt::format("cannot load '{}': {}", o.model, e.what()));
    }
    // --quantize: int8 replaces g by the folded QDQ model; a float model without it is refused.
    bool fp16 = false;
    if (const int rc = apply_run_quantize({o.quantize, o.calibration, o.calibration_method}, soc, o.model, o.seed,
                                          o.input_shapes, !full, g, qm, quant_notes, fp16, err);
        rc >= 0)
        return rc;
    phases.mark("import");
    try {
        drv::rknpu::parse_core_mask(o.core_mask, soc);
    } catch (const std::exception& e) {
        return fail(kExitBadInput, fmt::format("--core-mask '{}': {}", o.core_mask, e.what()));
    }

    // Inputs (full mode): .npy files in graph-input order, or the reference executor's random ones.
    if (full) {
        try {
            inputs = drv::ref::model_inputs(g, o.inputs, o.seed);
        } catch (const std::invalid_argument& e) {
            return fail(kExitBadInput, e.what());
        }
    }

    phases.mark("inputs");
    try {
        drv::rknpu::CompileOptions co;
        co.core_mask = o.core_mask;
        co.cpu_nodes = o.cpu_nodes;
        co.keep_all_tensors = full && !o.no_check;
        co.timing_only = !full;  // timing mode moves no data: weights laid out, not packed
        co.fp16 = fp16;
        m = drv::rknpu::compile_model(std::move(g), soc, co);  // g is not used after this
    } catch (const std::invalid_argument& e) {
        // cli.md: 4, the model is refused by the platform (unsupported operator, does not fit).
        return fail(kExitRefused, fmt::format("'{}' on {}: {}", o.model, soc.name, e.what()));
    } catch (const std::exception& e) {
        return fail(kExitProblem, fmt::format("compiling '{}' for {}: {}", o.model, soc.name, num::error_text(e)));
    }
    phases.mark("compile");
    return -1;
}

}  // namespace

int run_model_cli(const ModelCliOptions& o, std::ostream& out, std::ostream& err) {
    auto fail = [&](int code, const std::string& msg) {
        err << "npusim: error: " << msg << "\n";
        return code;
    };
    hw::SocProfile soc;
    try {
        soc = o.profile_file.empty() ? hw::load_named_profile(o.platform) : hw::load_profile(o.profile_file);
        hw::apply_param_overrides(soc, o.params);
    } catch (const hw::ProfileError& e) {
        return fail(kExitBadInput, e.what());
    }
    if (!std::filesystem::exists(o.model)) return fail(kExitBadInput, fmt::format("model file '{}' not found", o.model));
    const bool full = o.mode != "timing";
    // Timing mode reads no input data: an --input would be silently ignored, even a missing file.
    if (!full && !o.inputs.empty())
        return fail(kExitBadInput, "--input does not apply to --mode timing (timing mode moves no data)");
    if (!full && o.results.any())
        return fail(kExitBadInput, fmt::format("{} does not apply to --mode timing (timing mode moves no data)",
                                               o.results.writes() ? "--output" : "--expect"));
    if (const std::string e = results::validate(o.results, results::with_model(o.inputs, o.model)); !e.empty())
        return fail(kExitBadInput, e);
    if (o.repeat > 0 && !full)
        return fail(kExitBadInput, "--repeat does not apply to --mode timing (it repeats a full-mode inference)");
    if (o.repeat > 0 && o.rtl.any())
        return fail(kExitBadInput, "--repeat does not apply to --rtl runs (one co-simulated inference per run)");
    if (!o.dump_layers_dir.empty() && (!full || o.no_check))
        return fail(kExitBadInput, "--dump-layers needs --mode full and the check (the layers are dumped by the isolated check)");

    PhaseTimes phases(err);
    std::optional<CompileCache> cache;
    if (!o.compile_cache_dir.empty()) {
        if (o.quantize == "int8")
            return fail(kExitBadInput, "--compile-cache does not apply to --quantize int8 (the run's quantization report "
                                       "comes from the calibration; quantize once with `npusim quantize` and run the "
                                       "QDQ model)");
        try {
            CompileCacheKeyInputs k;
            k.model = o.model;
            k.soc = &soc;
            k.mode = full ? "full" : "timing";
            k.keep_all_tensors = full && !o.no_check;
            k.core_mask = o.core_mask;
            k.quantize = o.quantize;
            k.cpu_nodes = o.cpu_nodes;
            k.input_shapes = o.input_shapes;
            cache.emplace(o.compile_cache_dir, compile_cache_key(k));
        } catch (const std::exception& e) {
            return fail(kExitBadInput, e.what());
        }
    }
    drv::rknpu::CompiledModel m;
    std::optional<drv::quant::QuantizedModel> qm;
    std::vector<std::string> quant_notes;
    std::map<std::string, num::Tensor> inputs;
    if (cache && cache->load(m, quant_notes, err)) {
        // A hit: the cached model was compiled from the same bytes with the same options.
        phases.mark("cache");
        if (full) {
            try {
                inputs = drv::ref::model_inputs(m.graph, o.inputs, o.seed);
            } catch (const std::invalid_argument& e) {
                return fail(kExitBadInput, e.what());
            }
        }
    } else if (const int rc = import_and_compile(o, soc, full, m, qm, quant_notes, inputs, phases, err); rc >= 0) {
        return rc;
    } else if (cache) {
        cache->store(m, quant_notes, err);
        phases.mark("store");
    }
    if (o.verify_tiling) {
        const std::vector<std::string> problems = drv::rknpu::verify_tiling(m, soc);
        if (!problems.empty()) {
            for (const std::string& p : problems) err << "npusim: tiling: " << p << "\n";
            return fail(kExitProblem, fmt::format("tiling verification failed: {} problem(s)", problems.size()));
        }
        size_t npu_layers = 0;
        for (const auto& L : m.layers) npu_layers += L.unit == drv::rknpu::Unit::Npu;
        out << fmt::format("tiling verified: {} layers, {} tasks\n", npu_layers, m.tasks.size());
    }

    ModelRunOptions ro;
    ro.mode = full ? npu::tlm_models::SimMode::Full : npu::tlm_models::SimMode::Timing;
    ro.model_name = std::filesystem::path(o.model).stem().string();
    ro.check = !o.no_check;
    ro.progress = !o.quiet;
    ro.progress_tty = &err == &std::cerr && isatty(STDERR_FILENO);
    ro.expect_exact = o.expect_exact;
    ro.dump_layers_dir = o.dump_layers_dir;
    ro.repeat = o.repeat;
    if (o.rtl.any()) ro.rtl = &o.rtl;
    trace::TraceWriter tw;
    ModelRunResult r;
    try {
        r = run_model(soc, m, inputs, ro, o.trace_path.empty() && o.vcd_path.empty() ? nullptr : &tw, err);
    } catch (const std::invalid_argument& e) {
        return fail(kExitBadInput, e.what());
    }
    phases.mark("run");
    r.core_mask = o.core_mask;
    if (cache) r.compile_cache = cache->status();
    r.notes.insert(r.notes.begin(), quant_notes.begin(), quant_notes.end());
    std::string text = report_text(r), json = o.report_path.empty() ? std::string() : report_json(r);
    if (qm) add_quantization_report(*qm, text, json);
    out << text;
    std::vector<results::ExpectRow> expect_rows;
    const int rc =
        full && r.errors.empty() ? results::write_and_check(r.final_outputs, o.results, out, err, &expect_rows) : 0;
    json = results::add_expect_json(json, expect_rows, o.results, 2);
    if (!o.trace_path.empty() && !tw.write_file(o.trace_path))
        return fail(kExitBadInput, fmt::format("cannot write trace '{}'", o.trace_path));
    if (!o.report_path.empty() && !write_text(o.report_path, json))
        return fail(kExitBadInput, fmt::format("cannot write report '{}'", o.report_path));
    if (const std::string e = write_report_files(r, soc, tw, o.vcd_path, o.csv_path, o.html_path); !e.empty())
        return fail(kExitBadInput, e);
    for (const std::string& e : r.errors) err << "npusim: error: " << e << "\n";
    if (!r.errors.empty() && o.results.any())
        return fail(kExitProblem, "no outputs to write or compare (the run failed)");
    if (rc) return rc;
    return r.ok() ? 0 : kExitProblem;
}

}  // namespace sim
