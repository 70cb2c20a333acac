// SPDX-License-Identifier: MIT
// `npusim quantize` and the --quantize handling of run / check (quantize_cli.h).
#include "app/quantize_cli.h"

#include <fmt/format.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "compiler/model_loader.h"
#include "compiler/onnx/onnx_importer.h"
#include "mcu/mcu_target.h"

namespace sim {

namespace {

constexpr int kExitBadInput = 2;
constexpr int kExitModel = 3;
constexpr int kExitRefused = 4;

int fail(std::ostream& err, int code, const std::string& msg) {
    err << "npusim: error: " << msg << "\n";
    return code;
}

bool write_text(const std::string& path, const std::string& text) {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f << text;
    return static_cast<bool>(f);
}

bool same_file(const std::string& a, const std::string& b) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (fs::exists(a, ec) && fs::exists(b, ec)) return fs::equivalent(a, b, ec);
    return fs::weakly_canonical(a, ec) == fs::weakly_canonical(b, ec);
}

drv::quant::PipelineOptions pipeline_options(const QuantizeArgs& q, uint64_t seed,
                                             const std::vector<std::string>& input_shapes) {
    drv::quant::PipelineOptions p;
    p.calibration = q.calibration;
    p.seed = seed;
    p.input_shapes = input_shapes;
    if (!q.method.empty()) drv::quant::parse_method(q.method, p.quantize.method);
    return p;
}

/// Runs `job`, mapping the quantizer's exceptions to exit codes; -1 when it succeeded.
template <typename F>
int guarded(std::ostream& err, const std::string& model, F&& job) {
    try {
        job();
    } catch (const drv::importer::ImportError& e) {
        return fail(err, kExitModel, fmt::format("cannot load '{}': {}", model, e.what()));
    } catch (const drv::quant::CalibrationError& e) {
        return fail(err, kExitBadInput, e.what());
    } catch (const drv::quant::QuantizeError& e) {
        return fail(err, kExitBadInput, fmt::format("cannot quantize '{}': {}", model, e.what()));
    } catch (const std::exception& e) {
        return fail(err, kExitBadInput, fmt::format("quantizing '{}': {}", model, e.what()));
    }
    return -1;
}

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

/// The SoC profile behind a check platform name ("rk3588", "RK3566_RK3568"), if there is one.
std::optional<hw::SocProfile> profile_of(const std::string& platform) {
    std::string n = lower(platform);
    for (std::string cand : {n, n.substr(0, n.find('_'))}) {
        try {
            return hw::load_named_profile(cand);
        } catch (const std::exception&) {
        }
    }
    return std::nullopt;
}

std::string no_fp16_message(const std::string& model, const std::string& soc) {
    return fmt::format(
        "'{}' is a float model and {} has no fp16 path on its NPU (profile npu.fp16_macs_per_cycle = 0): "
        "quantize it with --quantize int8 [--calibration FILE.npy|DIR]",
        model, soc);
}

}  // namespace

std::string validate_quantize_args(const QuantizeArgs& q) {
    if (!q.mode.empty() && q.mode != "int8" && q.mode != "fp16" && q.mode != "none")
        return fmt::format("--quantize '{}': expected int8, fp16 or none", q.mode);
    drv::quant::CalibrationMethod m;
    if (!q.method.empty() && !drv::quant::parse_method(q.method, m))
        return fmt::format("--calibration-method '{}': expected minmax, kl or mmse", q.method);
    if (q.mode != "int8" && !q.calibration.empty())
        return "--calibration applies only with --quantize int8 (the data calibrates the int8 ranges)";
    if (q.mode != "int8" && !q.method.empty()) return "--calibration-method applies only with --quantize int8";
    return {};
}

int run_quantize_cli(const QuantizeCliOptions& o, std::ostream& out, std::ostream& err) {
    QuantizeArgs q = o.q;
    if (q.mode.empty()) q.mode = "int8";
    if (q.mode != "int8")
        return fail(err, kExitBadInput,
                    fmt::format("--quantize {} does not apply to `npusim quantize`, which writes int8 QDQ models "
                                "(fp16 and none need no conversion)",
                                q.mode));
    if (const std::string e = validate_quantize_args(q); !e.empty()) return fail(err, kExitBadInput, e);
    if (o.output.empty()) return fail(err, kExitBadInput, "no output file (-o OUT_qdq.onnx)");
    if (!std::filesystem::exists(o.model))
        return fail(err, kExitBadInput, fmt::format("model file '{}' not found", o.model));
    for (const std::string& path : {o.output, o.accuracy_report, o.csv})
        if (!path.empty() && same_file(path, o.model))
            return fail(err, kExitBadInput,
                        fmt::format("output '{}' is the input model (write the result elsewhere)", path));
    if (!o.accuracy_report.empty() && same_file(o.accuracy_report, o.output))
        return fail(err, kExitBadInput, "--accuracy-report and -o name the same file");
    drv::quant::PipelineOptions p = pipeline_options(q, o.seed, o.input_shapes);
    if (!drv::quant::parse_scheme(o.scheme, p.quantize.scheme))
        return fail(err, kExitBadInput,
                    fmt::format("--scheme '{}': expected one of {}", o.scheme, drv::quant::scheme_names()));
    drv::quant::QuantizedModel qm;
    if (int rc = guarded(err, o.model, [&] { qm = drv::quant::quantize_file(o.model, p); }); rc >= 0) return rc;
    {
        std::ofstream f(o.output, std::ios::binary | std::ios::trunc);
        f.write(qm.onnx.data(), static_cast<std::streamsize>(qm.onnx.size()));
        if (!f) return fail(err, kExitBadInput, fmt::format("cannot write '{}'", o.output));
    }
    const nlohmann::ordered_json acc = drv::quant::accuracy_json(qm.accuracy);
    if (!o.accuracy_report.empty() && !write_text(o.accuracy_report, acc.dump(2) + "\n"))
        return fail(err, kExitBadInput, fmt::format("cannot write '{}'", o.accuracy_report));
    if (!o.csv.empty() && !write_text(o.csv, drv::quant::accuracy_csv(qm.accuracy)))
        return fail(err, kExitBadInput, fmt::format("cannot write '{}'", o.csv));
    if (o.json) {
        nlohmann::ordered_json j{{"model", o.model}, {"output", o.output}, {"summary", qm.summary()}};
        j["float_nodes"] = qm.result.float_nodes;
        j["accuracy"] = acc;
        out << j.dump(2) << "\n";
        return 0;
    }
    out << qm.summary() << "\n";
    for (const std::string& f : qm.result.float_nodes) out << "float: " << f << "\n";
    out << drv::quant::accuracy_text(qm.accuracy);
    out << fmt::format("wrote {} ({} bytes)\n", o.output, qm.onnx.size());
    if (qm.result.seeded_calibration) err << "npusim: " << drv::quant::seeded_calibration_warning() << "\n";
    return 0;
}

int apply_run_quantize(const QuantizeArgs& q, const hw::SocProfile& soc, const std::string& model, uint64_t seed,
                       const std::vector<std::string>& input_shapes, bool timing, drv::ir::Graph& g,
                       std::optional<drv::quant::QuantizedModel>& qm, std::vector<std::string>& notes, bool& fp16,
                       std::ostream& err) {
    fp16 = false;
    if (const std::string e = validate_quantize_args(q); !e.empty()) return fail(err, kExitBadInput, e);
    const std::string why = drv::quant::quantized_reason(g);
    if (!why.empty()) {
        if (!q.mode.empty())
            return fail(err, kExitBadInput,
                        fmt::format("--quantize {}: '{}' is already quantized ({}); run it without --quantize", q.mode,
                                    model, why));
        return -1;
    }
    if (q.mode == "none") {
        notes.push_back("--quantize none: the float model is not converted; every node runs in float on the host CPU");
        return -1;
    }
    if (q.mode.empty() || q.mode == "fp16") {
        if (soc.npu.fp16_macs_per_cycle.value <= 0) return fail(err, kExitRefused, no_fp16_message(model, soc.name));
        fp16 = true;
        notes.push_back(fmt::format(
            "{}the float model runs in fp16 on the NPU{} (fp16 tensors and weights, fp32 accumulation); "
            "nodes without an fp16 lowering run in float on the host CPU",
            q.mode.empty() ? "" : "--quantize fp16: ",
            q.mode.empty() ? ", what RKNN does when no quantization is asked for (--quantize int8 quantizes it)" : ""));
        return -1;
    }
    drv::quant::PipelineOptions p = pipeline_options(q, seed, input_shapes);
    return guarded(err, model, [&] {
        if (timing) {  // the graph was imported without weight contents: load it in full for calibration
            drv::importer::ImportOptions io;
            io.qdq = drv::importer::QdqMode::Keep;
            for (const auto& s : input_shapes) drv::importer::parse_input_shape(s, io);
            g = drv::importer::load_model(model, io);
        }
        qm = drv::quant::quantize_graph(g, std::filesystem::path(model).stem().string(), p);
        g = qm->folded;
        notes.push_back("--quantize int8: " + qm->summary());
        for (const std::string& f : qm->result.float_nodes) notes.push_back("left in float: " + f);
        if (qm->result.seeded_calibration) notes.push_back(drv::quant::seeded_calibration_warning());
    });
}

void add_quantization_report(const drv::quant::QuantizedModel& qm, std::string& text, std::string& json) {
    if (!qm.has_accuracy) return;
    text += "\n" + drv::quant::accuracy_text(qm.accuracy);
    if (json.empty()) return;
    nlohmann::ordered_json j = nlohmann::ordered_json::parse(json);
    j["quantization"] = {{"summary", qm.summary()},
                         {"float_nodes", qm.result.float_nodes},
                         {"accuracy", drv::quant::accuracy_json(qm.accuracy)}};
    json = j.dump(2) + "\n";
}

int run_check_quantized(drv::check::CheckCliOptions co, const QuantizeArgs& q, uint64_t seed, std::ostream& out,
                        std::ostream& err) {
    if (const std::string e = validate_quantize_args(q); !e.empty()) return fail(err, kExitBadInput, e);
    if (q.mode == "none")
        return fail(err, kExitBadInput,
                    "--quantize none does not apply to check (a float model kept in float runs on the host CPU: "
                    "there are no NPU rules to check)");
    for (const std::string& m : co.models) {  // already quantized models take no --quantize
        drv::ir::Graph g;
        drv::importer::ImportOptions io;
        io.qdq = drv::importer::QdqMode::Fold;
        try {
            for (const auto& s : co.input_shapes) drv::importer::parse_input_shape(s, io);
            g = drv::importer::load_model(m, io);
        } catch (const std::exception& e) {
            return fail(err, kExitModel, fmt::format("cannot load '{}': {}", m, e.what()));
        }
        const std::string why = drv::quant::quantized_reason(g);
        if (!why.empty())
            return fail(err, kExitBadInput,
                        fmt::format("--quantize {}: '{}' is already quantized ({}); check it without --quantize",
                                    q.mode, m, why));
        if (!q.calibration.empty()) {  // bad calibration data is a usage error, not an unloadable model
            try {
                drv::quant::load_calibration(g, q.calibration);
            } catch (const drv::quant::CalibrationError& e) {
                return fail(err, kExitBadInput, e.what());
            }
        }
    }
    if (q.mode == "fp16") {
        if (!co.all_platforms) {
            const std::optional<hw::SocProfile> soc = profile_of(co.platform);
            if (mcu::find_target(lower(co.platform)) || (soc && soc->npu.fp16_macs_per_cycle.value <= 0))
                return fail(err, kExitRefused, no_fp16_message(co.models.front(), co.platform));
        }
        return drv::check::run_check_cli(co, out, err);  // float tensors are checked as the fp16 build
    }
    const drv::quant::PipelineOptions p = pipeline_options(q, seed, co.input_shapes);
    co.prepare = [p, &err](const std::string& model, drv::ir::Graph g) {
        drv::quant::PipelineOptions po = p;
        po.accuracy = false;  // verdicts need the QDQ structure, not the accuracy figures
        drv::quant::QuantizedModel qm = drv::quant::quantize_graph(g, std::filesystem::path(model).stem().string(), po);
        err << "npusim: check: '" << model << "' checked as the int8 QDQ model it quantizes to (" << qm.summary()
            << ")\n";
        drv::importer::ImportOptions io;
        io.qdq = drv::importer::QdqMode::Fold;  // as the checker imports QDQ models
        return drv::importer::import_onnx_bytes(qm.onnx.data(), qm.onnx.size(), io, model + " (quantized)");
    };
    return drv::check::run_check_cli(co, out, err);
}

}  // namespace sim
