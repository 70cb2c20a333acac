// SPDX-License-Identifier: MIT
// `npusim run --platform tnpuv2 MODEL`, the platforms line and the check hook (run.h).
#include <fmt/format.h>

#include <cctype>
#include <filesystem>
#include <fstream>

#include "app/report.h"
#include "checker/checker.h"
#include "checker/spec_db.h"
#include "compiler/model_loader.h"
#include "compiler/onnx/onnx_importer.h"
#include "compiler/quantize/pipeline.h"
#include "compiler/ref/reference.h"
#include "numerics/npy.h"
#include "tnpuv2/run.h"
#include "numerics/limits.h"

namespace sim::tnpuv2 {

namespace {

constexpr int kExitProblem = 1, kExitBadInput = 2, kExitModel = 3, kExitRefused = 4;

bool write_text(const std::string& path, const std::string& text) {
    std::ofstream f(path, std::ios::binary);
    f << text;
    return static_cast<bool>(f);
}

/// The tnpuv2 rule book (drivers/compiler/specs/tnpuv2_uranus.json).
drv::check::PlatformSpec load_spec() {
    namespace fs = std::filesystem;
    const fs::path f = fs::path(drv::check::default_specs_dir()) / "tnpuv2_uranus.json";
    return drv::check::SpecDb::load_file(f.string());
}

}  // namespace

void set_check_prepare(drv::check::CheckCliOptions& co) {
    co.prepare = [](const std::string&, drv::ir::Graph g) { return drv::tnpuv2::converter_view(g); };
}

void print_platform(bool verbose, std::ostream& out) {
    try {
        const hw::tnpuv2::Profile p = hw::tnpuv2::load_default_profile();
        out << fmt::format(
            "{:<10} {:<34} 1 core x {} int8 MAC/cycle (a16w8 {}, a4w4 {}) @ {} MHz, SRAM {} KiB, DDR {:.1f} GB/s "
            "peak\n",
            p.name, "uranus tnpuv2 (modelled)", p.mac.a8w8.value, p.mac.a16w8.value, p.mac.a4w4.value,
            p.npu.core_clock_hz.value / 1000000, p.npu.conv_sram_bytes.value / 1024,
            p.mem.ddr_peak_bytes_per_s.value / 1e9);
        if (verbose)
            for (const auto& pv : p.params())
                out << fmt::format("    {:<36} {:<9} {:<14} {}\n", pv.path, hw::grade_name(pv.grade), pv.value,
                                   pv.source);
    } catch (const hw::ProfileError& e) {
        out << fmt::format("{:<10} INVALID: {}\n", "tnpuv2", e.what());
    }
}

int run_cli(const RunOptions& o, std::ostream& out, std::ostream& err) {
    auto fail = [&](int code, const std::string& msg) {
        err << "npusim: error: " << msg << "\n";
        return code;
    };
    static const std::set<int> kBits = {4, 8, 12, 14, 16}, kWeightBits = {0, 4, 8, 16, 20};
    if (!kBits.count(o.bits))
        return fail(kExitBadInput,
                    fmt::format("--bits {}: tnpuv2 data widths are 4, 8, 12, 14 or 16 (seed 003)", o.bits));
    if (!kWeightBits.count(o.weight_bits))
        return fail(
            kExitBadInput,
            fmt::format("--weight-bits {}: tnpuv2 conv weights are 4, 8, 16 or 20 bits (seed 003)", o.weight_bits));
    hw::tnpuv2::Profile p;
    try {
        p = o.profile_file.empty() ? hw::tnpuv2::load_default_profile() : hw::tnpuv2::load_profile(o.profile_file);
        hw::tnpuv2::apply_param_overrides(p, o.params);
    } catch (const hw::ProfileError& e) {
        return fail(kExitBadInput, e.what());
    }
    if (!std::filesystem::exists(o.model))
        return fail(kExitBadInput, fmt::format("model file '{}' not found", o.model));
    const bool full = o.mode != "timing";
    // Timing mode reads no input data: an --input would be silently ignored, even a missing file.
    if (!full && !o.inputs.empty())
        return fail(kExitBadInput, "--input does not apply to --mode timing (timing mode moves no data)");
    drv::importer::ImportOptions io;
    io.qdq = drv::importer::QdqMode::Fold;
    drv::ir::Graph g;
    try {
        for (const auto& s : o.input_shapes) drv::importer::parse_input_shape(s, io);
        g = drv::importer::load_model(o.model, io);
    } catch (const std::exception& e) {
        return fail(kExitModel, fmt::format("cannot load '{}': {}", o.model, e.what()));
    }
    std::vector<std::string> notes;
    if (drv::quant::quantized_reason(g).empty()) {
        // A float model: the converter quantizes it at the asked widths (seed 003's quantized
        // inputs; the quantizer of issue 14 with the bit width as a parameter).
        drv::quant::PipelineOptions po;
        drv::quant::Scheme& s = po.quantize.scheme;
        s.activations = {o.bits, true, false};
        s.weights = {o.weight_bits ? o.weight_bits : 8, true, true};
        s.depthwise_weights = {8, true, true};  // seed 003: depthwise weights are 8-bit
        po.quantize.exclude_nodes = drv::tnpuv2::decode_node_names(g);
        po.calibration = o.calibration;
        po.seed = o.seed;
        po.input_shapes = o.input_shapes;
        po.accuracy = false;
        if (!o.calibration_method.empty() && !drv::quant::parse_method(o.calibration_method, po.quantize.method))
            return fail(kExitBadInput,
                        fmt::format("--calibration-method '{}': expected minmax, kl or mmse", o.calibration_method));
        try {
            drv::quant::QuantizedModel qm =
                drv::quant::quantize_graph(g, std::filesystem::path(o.model).stem().string(), po);
            g = drv::importer::import_onnx_bytes(qm.onnx.data(), qm.onnx.size(), io, o.model + " (quantized)");
            notes.push_back(fmt::format("float model quantized at {}-bit data: {}", o.bits, qm.summary()));
            if (!po.quantize.exclude_nodes.empty())
                notes.push_back(fmt::format("{} decode node(s) left in float for the GenerateBox unit",
                                            po.quantize.exclude_nodes.size()));
            if (qm.result.seeded_calibration) notes.push_back(drv::quant::seeded_calibration_warning());
        } catch (const std::exception& e) {
            return fail(kExitBadInput, fmt::format("cannot quantize '{}' at {} bits: {}", o.model, o.bits, e.what()));
        }
    } else if (!o.calibration.empty() || !o.calibration_method.empty()) {
        return fail(kExitBadInput, "--calibration applies to float models (this one is already quantized)");
    }
    std::map<std::string, num::Tensor> inputs;
    if (full) {
        try {
            inputs = drv::ref::model_inputs(g, o.inputs, o.seed);
        } catch (const std::invalid_argument& e) {
            return fail(kExitBadInput, e.what());
        }
    }
    drv::tnpuv2::CompiledModel m;
    try {
        const drv::check::PlatformSpec spec = load_spec();
        drv::tnpuv2::CompileOptions co;
        co.widths = {o.bits, o.weight_bits};
        m = drv::tnpuv2::compile_model(std::move(g), p, spec, co);
    } catch (const drv::tnpuv2::RefusedError& e) {
        return fail(kExitRefused, fmt::format("'{}' on tnpuv2: {}", o.model, e.what()));
    } catch (const drv::check::CheckError& e) {
        return fail(kExitModel, fmt::format("'{}' on tnpuv2: {}", o.model, e.what()));
    } catch (const std::exception& e) {
        return fail(kExitProblem, fmt::format("compiling '{}' for tnpuv2: {}", o.model, num::error_text(e)));
    }
    m.notes.insert(m.notes.begin(), notes.begin(), notes.end());
    trace::TraceWriter tw;
    std::map<std::string, num::Tensor> outs;
    std::map<std::string, num::Tensor> acts;
    ModelRunResult r = run_model(p, m, inputs, full, !o.no_check, o.trace_path.empty() && o.vcd_path.empty() ? nullptr : &tw, &outs,
                                 o.dump_layers.empty() ? nullptr : &acts);
    if (!o.dump_layers.empty()) {
        std::error_code ec;
        std::filesystem::create_directories(o.dump_layers, ec);
        for (const auto& [name, t] : acts) {
            std::string file;
            for (char ch : name)
                file += std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '-' ? ch : '_';
            try {
                num::write_npy((std::filesystem::path(o.dump_layers) / (file + ".npy")).string(), t);
            } catch (const std::exception& e) {
                return fail(kExitBadInput, fmt::format("--dump-layers '{}': {}", o.dump_layers, e.what()));
            }
        }
    }
    r.model = std::filesystem::path(o.model).stem().string();
    r.expect_exact = o.expect_exact;
    r.notes.insert(r.notes.begin(),
                   fmt::format("data {} bits, weights {}", o.bits,
                               o.weight_bits ? fmt::format("{} bits", o.weight_bits) : std::string("as quantized")));
    if (!o.dump_path.empty()) {  // the stream as the core fetched it (relocated to the run's arena)
        std::ofstream f(o.dump_path, std::ios::binary);
        f.write(reinterpret_cast<const char*>(m.arena_init.data() + (m.stream_offset - m.arena_init_offset)),
                static_cast<std::streamsize>(uint64_t{m.stream_words} * 4));
        if (!f) return fail(kExitBadInput, fmt::format("cannot write '{}'", o.dump_path));
    }
    out << report_text(r);
    if (!o.trace_path.empty() && !tw.write_file(o.trace_path))
        return fail(kExitBadInput, fmt::format("cannot write trace '{}'", o.trace_path));
    if (!o.vcd_path.empty() && !tw.write_vcd(o.vcd_path))
        return fail(kExitBadInput, fmt::format("cannot write VCD '{}'", o.vcd_path));
    if (!o.report_path.empty() && !write_text(o.report_path, report_json(r)))
        return fail(kExitBadInput, fmt::format("cannot write report '{}'", o.report_path));
    if (!o.outputs.empty()) {
        if (!full) return fail(kExitBadInput, "--output needs full mode (timing mode computes no data)");
        if (o.outputs.size() != m.graph.outputs().size())
            return fail(kExitBadInput, fmt::format("{} --output file(s), the model has {} output(s)", o.outputs.size(),
                                                   m.graph.outputs().size()));
        for (size_t k = 0; k < o.outputs.size(); ++k) {
            auto it = outs.find(m.graph.outputs()[k]);
            if (it == outs.end())
                return fail(kExitProblem, fmt::format("output '{}' was not produced", m.graph.outputs()[k]));
            try {
                num::write_npy(o.outputs[k], it->second);
            } catch (const std::exception& e) {
                return fail(kExitBadInput, fmt::format("--output '{}': {}", o.outputs[k], e.what()));
            }
        }
    }
    for (const std::string& e : r.errors) err << "npusim: error: " << e << "\n";
    return r.ok() ? 0 : kExitProblem;
}

}  // namespace sim::tnpuv2
