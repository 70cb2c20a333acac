// SPDX-License-Identifier: MIT
// `npusim run --platform ws63|3066h MODEL` (see mcu_run.h).
#include "mcu/mcu_run.h"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <algorithm>
#include <fstream>
#include <iomanip>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "checker/checker.h"
#include "checker/spec_db.h"
#include "compiler/model_loader.h"
#include "compiler/quantize/pipeline.h"
#include "compiler/ref/reference.h"
#include "mcu/blob_writer.h"
#include "mcu/firmware_runner.h"
#include "mcu/mcu_target.h"
#include "mcu_blob.h"
#include "mk_runtime.h"
#include "numerics/compare.h"
#include "numerics/npy.h"
#include "numerics/limits.h"

namespace mcu {
namespace {

std::string fmt_time(uint64_t cycles, uint64_t hz) {
    std::ostringstream o;
    o.setf(std::ios::fixed);
    const double us = double(cycles) * 1e6 / double(hz);
    if (us >= 1000.0) o << std::setprecision(3) << us / 1000.0 << " ms";
    else o << std::setprecision(1) << us << " us";
    return o.str();
}

/// The graph as the MindSpore Lite converter sees it (seed 000 s1.4 rule 1: int8 comes from FULL_QUANT of
/// a float model): QuantizeLinear/DequantizeLinear pairs are calibration annotations, not operators,
/// and DequantizeLinear of an int8 initializer is that (offline-constant) quantized weight.
drv::ir::Graph seed_view(const drv::ir::Graph& g) {
    std::map<std::string, std::string> alias;
    auto resolve = [&](std::string n) {
        for (auto it = alias.find(n); it != alias.end(); it = alias.find(n)) n = it->second;
        return n;
    };
    for (const auto& n : g.nodes()) {
        if (n.op_type == "DequantizeLinear" || n.op_type == "QuantizeLinear") alias[n.outputs.at(0)] = n.input(0);
    }
    drv::ir::Graph v;
    std::set<std::string> used;
    for (const auto& n : g.nodes()) {
        if (n.op_type == "DequantizeLinear" || n.op_type == "QuantizeLinear") continue;
        drv::ir::Node m = n;
        for (auto& in : m.inputs)
            if (!in.empty()) in = resolve(in);
        for (const auto& x : m.inputs) used.insert(x);
        for (const auto& x : m.outputs) used.insert(x);
        v.add_node(std::move(m));
    }
    for (const auto& in : g.inputs()) used.insert(in);
    for (const auto& name : used)
        if (!name.empty())
            if (const auto* val = g.find_value(name)) v.add_value(*val);
    v.inputs() = g.inputs();
    for (const auto& o : g.outputs()) v.outputs().push_back(resolve(o));
    for (const auto& kv : g.opsets()) v.set_opset(kv.first, kv.second);
    return v;
}

/// Seed 000 preface: "int8 only supports quantized models, not the onnxruntime quantization scenario"
/// - int8 comes from the toolchain's own full quantization of a float model. An ONNX model that
/// already carries QuantizeLinear/DequantizeLinear (QDQ, as onnxruntime's quantizer writes it, float
/// biases or not) is that scenario. Returns the refusal, or "" for float models and TFLite.
std::string qdq_refusal(const std::string& path) {
    drv::importer::ImportOptions io;
    io.qdq = drv::importer::QdqMode::Keep;
    const drv::ir::Graph g = drv::importer::load_model(path, io);
    if (g.opset("tflite") > 0) return "";
    size_t q = 0;
    for (const auto& n : g.nodes()) q += n.op_type == "QuantizeLinear" || n.op_type == "DequantizeLinear";
    if (q == 0) return "";
    return "the model is already quantized (" + std::to_string(q) +
           " QuantizeLinear/DequantizeLinear nodes): MindSpore Lite Micro int8 only supports quantized models, not the "
           "onnxruntime quantization scenario; give the float32 model, which the toolchain quantizes itself";
}

/// Seed-000 check of the graph for this MCU; returns false (and prints why) when a node is unsupported.
bool seed_check(const McuTarget& t, const McuRunOptions& o, const drv::ir::Graph* quantized, std::ostream& out,
                std::ostream& err) {
    using namespace drv::check;
    // Load the spec files one by one so that an unrelated platform's file cannot block the MCU path.
    SpecDb db;
    std::vector<std::string> files;
    for (const auto& e : std::filesystem::directory_iterator(default_specs_dir()))
        if (e.path().extension() == ".json") files.push_back(e.path().string());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
        try {
            db.add(SpecDb::load_file(f));
        } catch (const std::exception&) {
            // not ours to report here; `npusim check` reports spec errors
        }
    }
    const PlatformSpec* spec = db.find(t.spec_platform);
    if (!spec) {
        err << "warning: no spec-DB platform '" << t.spec_platform << "'; operator-table check skipped\n";
        return true;
    }
    drv::importer::ImportOptions io;
    io.qdq = drv::importer::QdqMode::Keep;
    for (const auto& s : o.input_shapes) drv::importer::parse_input_shape(s, io);
    // A model quantized here is the toolchain's own FULL_QUANT: its QDQ graph is checked, not refused.
    const drv::ir::Graph g = seed_view(quantized ? *quantized : drv::importer::load_model(o.model, io));
    const std::string qdq = quantized ? std::string() : qdq_refusal(o.model);
    if (!qdq.empty()) {
        out << "check (" << spec->toolchain << ", " << spec->id << "): unsupported: " << qdq << "\n";
        if (!o.skip_check) return false;
    }
    const CheckResult r = check_graph(g, *spec);
    out << "check (" << spec->toolchain << ", " << spec->id << "): " << r.count(Verdict::Target) << " of " << r.nodes.size()
        << " nodes supported on the MCU, " << r.count(Verdict::Unsupported) << " unsupported\n";
    bool ok = true;
    for (const auto& n : r.nodes) {
        if (n.verdict != Verdict::Unsupported) continue;
        ok = false;
        out << "  unsupported: " << n.op_type << " '" << n.node << "'" << (n.reason.empty() ? "" : ": " + n.reason) << "\n";
        for (const auto& v : n.violations) out << "    " << v.text << " [" << (v.rule ? v.rule->source.text() : "") << "]\n";
    }
    return ok || o.skip_check;
}

struct Compare {
    size_t elements = 0, differing = 0;
    double max_lsb = 0.0;
};

/// Element distance in units of the allowed error (the shared comparator, numerics/compare.h):
/// int8 and dequantized outputs in LSB (must be 0: the float requantization is bit-exact), plain
/// fp32 outputs against 1e-5 + 1e-5 * |ref| (issue 8: fp32 within 1e-5; <= 1 counts as equal).
Compare compare(const num::Tensor& got, const num::Tensor& want, float lsb) {
    Compare c;
    c.elements = want.numel();
    const bool rel = want.dtype() == num::DType::F32 && lsb <= 0;
    num::Tolerance tol;
    if (rel) tol.atol = tol.rtol = 1e-5;
    else tol.lsb = lsb;
    num::Comparison k;
    if (!num::compare(got, want, tol, k).empty()) {
        c.differing = c.elements;
        c.max_lsb = 1e9;
        return c;
    }
    c.differing = rel ? k.values - k.within : k.values - k.equal;
    c.max_lsb = rel ? k.worst_ratio : k.max_abs_diff;
    return c;
}

/// The scale of the int8 tensor a float graph output was dequantized from (its LSB), else 0.
float output_lsb(const drv::ir::Graph& g, const std::string& name) {
    const int p = g.producer(name);
    if (p < 0) return 0.0f;
    const auto& n = g.nodes()[size_t(p)];
    if (n.op_type == "DequantizeLinear") {
        const auto* s = g.find_value(n.input(1));
        if (s && s->is_constant() && s->data->numel() == 1) return s->data->data<float>()[0];
    }
    if (n.op_type == "DEQUANTIZE" && n.domain == "tflite") {  // the scale lives on the input tensor
        const auto* x = g.find_value(n.input(0));
        if (x && x->quant.scale.size() == 1) return x->quant.scale[0];
    }
    return 0.0f;
}

/// Lower bounds of a graph's flash and SRAM needs without converting it (for graphs the converter
/// rejects, e.g. uint8 ResNet-50): every constant's bytes, and the largest sum of one node's
/// activation inputs and outputs.
void estimate_footprint(const drv::ir::Graph& g, uint32_t& const_bytes, uint32_t& arena_bytes) {
    uint64_t c = 0, peak = 0;
    for (const auto& kv : g.values())
        if (kv.second.is_constant()) c += kv.second.data->nbytes();
    for (const auto& n : g.nodes()) {
        uint64_t live = 0;
        auto add = [&](const std::string& name) {
            const auto* v = g.find_value(name);
            if (v && !v->is_constant() && v->numel() > 0) live += uint64_t(v->numel()) * num::dtype_size(v->dtype);
        };
        for (const auto& i : n.inputs)
            if (!i.empty()) add(i);
        for (const auto& o : n.outputs)
            if (!o.empty()) add(o);
        peak = std::max(peak, live);
    }
    const_bytes = uint32_t(std::min<uint64_t>(c, 0xffffffffu));
    arena_bytes = uint32_t(std::min<uint64_t>(peak, 0xffffffffu));
}

/// --quantize int8: the MCU's outputs against the float model's (reference executor, float32) on the
/// same input - what quantization costs. Stated tolerance (issue 21 acceptance 2): cosine similarity
/// >= 0.99 per output; reported, not enforced (calibration data decide it).
void compare_with_float(const drv::ir::Graph& fg, const std::map<std::string, num::Tensor>& inputs, const Blob& blob,
                        const FirmwareRun& run, std::ostream& out, McuRunReport* rep) {
    std::map<std::string, num::Tensor> ref;
    try {
        ref = drv::ref::execute(fg, inputs);
    } catch (const std::exception& e) {
        out << "float model: reference executor failed (" << num::error_text(e) << ")\n";
        return;
    }
    for (size_t k = 0; k < blob.outputs.size(); ++k) {
        const BlobOutput& bo = blob.outputs[k];
        auto it = ref.find(bo.value);
        if (it == ref.end() || it->second.dtype() != num::DType::F32) continue;
        const num::Tensor got = output_tensor(bo, run.outputs[k]);
        const num::Tensor& want = it->second;
        if (got.numel() != want.numel() || got.dtype() != num::DType::F32) continue;
        double dot = 0, na = 0, nb = 0, maxd = 0, maxw = 0;
        for (size_t i = 0; i < want.numel(); ++i) {
            const double a = got.data<float>()[i], b = want.data<float>()[i];
            dot += a * b;
            na += a * a;
            nb += b * b;
            maxd = std::max(maxd, std::fabs(a - b));
            maxw = std::max(maxw, std::fabs(b));
        }
        const double cosine = na > 0 && nb > 0 ? dot / std::sqrt(na * nb) : (na == nb ? 1.0 : 0.0);
        if (rep)
            for (auto& row : rep->outputs)
                if (row.name == bo.value) row.float_cosine = cosine;
        out << "output '" << bo.value << "' vs the float model: cosine " << std::fixed << std::setprecision(5) << cosine
            << ", max |diff| " << std::setprecision(4) << maxd << " (max |float| " << maxw << ") -> "
            << (cosine >= 0.99 ? "within" : "OUTSIDE") << " the tolerance (cosine >= 0.99)\n";
    }
}

}  // namespace

/// Runs the blob with the host build of the same runtime and kernels (mcu_runtime_host): the
/// model-level host == ISS check. Returns the output bytes, or sets `error`.
std::vector<std::vector<uint8_t>> run_blob_on_host(const Blob& b, std::string& error) {
    std::vector<uint32_t> blob((b.bytes.size() + 3) / 4), arena(b.arena_bytes / 4 + 4);
    std::memcpy(blob.data(), b.bytes.data(), b.bytes.size());
    const auto* base = reinterpret_cast<const uint8_t*>(blob.data());
    auto* ar = reinterpret_cast<uint8_t*>(arena.data());
    uint32_t bad = 0;
    int rc = mk_rt_check(base, uint32_t(b.bytes.size()), uint32_t(arena.size() * 4));
    if (rc == MK_RT_OK) rc = mk_rt_run(base, ar, uint32_t(arena.size() * 4), nullptr, &bad);
    std::vector<std::vector<uint8_t>> outs;
    if (rc != MK_RT_OK) {
        error = "host runtime status " + std::to_string(rc) + " at layer " + std::to_string(bad);
        return outs;
    }
    const auto* hdr = reinterpret_cast<const mk_blob_header*>(base);
    const auto* tensors = reinterpret_cast<const mk_blob_tensor*>(base + hdr->tensors_off);
    for (const BlobOutput& o : b.outputs) {
        const auto* d = static_cast<const uint8_t*>(mk_rt_tensor(base, ar, o.tensor));
        outs.emplace_back(d, d + tensors[o.tensor].bytes);
    }
    return outs;
}

int run_cli(const McuRunOptions& o, std::ostream& out, std::ostream& err) {
    const McuTarget* t = find_target(o.platform);
    if (!t) {
        err << "error: unknown MCU platform '" << o.platform << "' (known: ws63, 3066h)\n";
        return kMcuUsage;
    }
    if (o.requant != "float" && o.requant != "fixed") {
        err << "error: --requant must be 'float' or 'fixed'\n";
        return kMcuUsage;
    }
    drv::ir::Graph g, float_model;
    std::optional<drv::quant::QuantizedModel> qm;
    std::map<std::string, num::Tensor> inputs;
    try {
        drv::importer::ImportOptions io;
        for (const auto& s : o.input_shapes) drv::importer::parse_input_shape(s, io);
        g = drv::importer::load_model(o.model, io);
        if (o.quantize == "int8") {
            drv::quant::PipelineOptions po;
            po.calibration = o.calibration;
            po.seed = o.seed;
            po.input_shapes = o.input_shapes;
            po.accuracy = false;
            if (!o.calibration_method.empty() && !drv::quant::parse_method(o.calibration_method, po.quantize.method)) {
                err << "npusim: error: --calibration-method '" << o.calibration_method << "' (minmax, kl, mmse)\n";
                return kMcuUsage;
            }
            float_model = std::move(g);
            qm.emplace(drv::quant::quantize_file(o.model, po));
            g = qm->folded;
            out << "quantized for " << t->name << ": " << qm->summary() << "\n";
        } else if (!o.quantize.empty() && o.quantize != "none") {
            err << "npusim: error: --quantize " << o.quantize << " does not apply to " << t->name << " (int8 or none)\n";
            return kMcuUsage;
        }
        if (!seed_check(*t, o, qm ? &qm->result.qdq : nullptr, out, err)) {
            err << "error: the model uses operators/configurations that MindSpore Lite Micro v106 spec does not support on " << t->name
                << " (--skip-check runs it anyway)\n";
            return kMcuUnsupported;
        }
        for (size_t i = 0; i < g.inputs().size(); ++i) {
            const auto& v = g.value(g.inputs()[i]);
            inputs[v.name] = i < o.inputs.size() ? num::read_npy(o.inputs[i]) : drv::ref::random_input(v, o.seed, i);
        }
    } catch (const std::exception& e) {
        err << "error: " << num::error_text(e) << "\n";
        return kMcuModelError;
    }
    Blob blob;
    try {
        ConvertOptions co;
        co.float_requant = o.requant == "float";
        blob = convert_graph(g, inputs, co);
    } catch (const std::exception& e) {
        // Even a graph the converter cannot take is checked for size: "does not fit" is the more
        // useful answer when it is also true.
        uint32_t cb = 0, ab = 0;
        estimate_footprint(g, cb, ab);
        const ElfFootprint fw = elf_footprint(firmware_elf(*t, "runtime"), *t);
        const FitReport fit = check_fit(*t, fw, cb, ab);
        if (fw.ok && !fit.fits) {
            out << "memory estimate from the graph (lower bounds; conversion stopped: " << e.what() << ")\n" << fit.text();
            err << "error: model does not fit " << t->name << "; not run\n";
            return kMcuDoesNotFit;
        }
        err << "npusim: error: " << no_kernel_text(e.what()) << ", on " << t->name << " (the checker accepts it; the MCU runtime does not run it)\n";
        return kMcuUnsupported;
    }
    if (!o.write_blob.empty()) std::ofstream(o.write_blob, std::ios::binary).write(reinterpret_cast<const char*>(blob.bytes.data()), std::streamsize(blob.bytes.size()));

    const std::string elf = firmware_elf(*t, "runtime");
    const ElfFootprint fw = elf_footprint(elf, *t);
    if (!fw.ok) {
        err << "error: " << fw.error << "\n";
        return kMcuRunError;
    }
    out << "platform " << t->name << ": RV32IMFC @ " << t->clock_hz / 1000000 << " MHz, flash " << t->flash_bytes / 1024
        << " KiB, SRAM " << t->sram_bytes / 1024 << " KiB; model " << o.model << " (" << blob.layers.size() << " layers, "
        << (g.opset("tflite") > 0 ? "TFLite model: int8 arithmetic of the TFLite quantization spec"
            : o.requant == "float" ? "int8 requantization: float, onnxruntime-exact" : "int8 requantization: Q31 fixed point") << ")\n";
    const FitReport fit = check_fit(*t, fw, uint32_t(blob.bytes.size()), blob.arena_bytes);
    out << fit.text();
    if (o.report) {
        o.report->platform = t->name;
        o.report->model = o.model;
        o.report->clock_hz = t->clock_hz;
        o.report->fit = fit;
        o.report->executor = o.executor_name;
        o.report->arithmetic = g.opset("tflite") > 0 ? "tflite" : o.requant == "float" ? "onnxruntime-float" : "q31-fixed";
        if (qm) o.report->quantization = qm->summary();
    }
    if (!fit.fits) {
        err << "error: model does not fit " << t->name << "; not run\n";
        return kMcuDoesNotFit;
    }
    // Reference executor; an operator it lacks leaves the host build of the runtime as the
    // only comparison, said so in the report.
    std::map<std::string, num::Tensor> ref;
    std::string ref_error;
    try {
        ref = drv::ref::execute(g, inputs);
    } catch (const std::exception& e) {
        ref_error = num::error_text(e);
    }
    std::string host_error;
    const std::vector<std::vector<uint8_t>> host_out = run_blob_on_host(blob, host_error);
    const FirmwareRun run = o.executor ? o.executor(*t, elf, blob.bytes, o.max_insns) : run_firmware(*t, elf, blob.bytes, o.max_insns);
    if (!run.error.empty()) {
        err << "error: " << run.error << "\n" << run.console;
        return kMcuRunError;
    }
    if (run.layers.size() != blob.layers.size() || run.outputs.size() != blob.outputs.size()) {
        err << "error: firmware reported " << run.layers.size() << " layers / " << run.outputs.size() << " outputs\n";
        return kMcuRunError;
    }
    // Per-layer table.
    out << "\n  #  node                      kernel               MACs      cycles   instret        time  cyc/MAC\n";
    uint64_t macs_total = 0;
    for (size_t i = 0; i < run.layers.size(); ++i) {
        const auto& l = run.layers[i];
        const auto& info = blob.layers[i];
        macs_total += info.macs;
        out << std::setw(3) << i << "  " << std::left << std::setw(25) << info.node.substr(0, 25) << " " << std::setw(18)
            << op_name(l.op) << std::right << std::setw(8) << info.macs << std::setw(12) << l.cycles << std::setw(10)
            << l.instret << std::setw(12) << fmt_time(l.cycles, t->clock_hz);
        if (info.macs > 0 && (info.kernel.find("conv") != std::string::npos || info.kernel.find("fully") != std::string::npos))
            out << std::setw(9) << std::fixed << std::setprecision(2) << double(l.cycles) / double(info.macs);
        out << "\n";
    }
    if (o.report) {
        McuRunReport& rp = *o.report;
        rp.ran = true;
        rp.schedule_cycles = run.schedule_cycles;
        rp.schedule_instret = run.schedule_instret;
        rp.total_cycles = run.total_cycles;
        rp.total_instret = run.total_instret;
        for (size_t i = 0; i < run.layers.size(); ++i)
            rp.layers.push_back({blob.layers[i].node, blob.layers[i].op_type, op_name(run.layers[i].op), kernel_symbol(run.layers[i].op),
                                 blob.layers[i].macs, run.layers[i].cycles, run.layers[i].instret});
    }
    out << "total: " << run.schedule_cycles << " cycles, " << run.schedule_instret << " instructions, "
        << fmt_time(run.schedule_cycles, t->clock_hz) << " at " << t->clock_hz / 1000000 << " MHz; " << macs_total << " MACs\n";
    const double mips = run.host_cpu_seconds > 0 ? double(run.total_instret) / run.host_cpu_seconds / 1e6 : 0.0;
    out << "ISS: " << run.total_instret << " instructions (whole run, start-up included) in " << std::fixed
        << std::setprecision(3) << run.host_cpu_seconds << " s host CPU = " << std::setprecision(1) << mips
        << " M instructions/s\n";
    // Outputs: host build of the runtime (must be byte-identical) and the reference executor.
    bool all_equal = true, unverified = false;
    if (!host_error.empty()) {
        out << "host runtime: " << host_error << "\n";
        all_equal = false;
    } else {
        const bool same = host_out == run.outputs;
        all_equal = same;
        out << "host build of the runtime: outputs " << (same ? "byte-identical to the ISS run" : "DIFFER from the ISS run") << "\n";
    }
    if (!ref_error.empty()) {
        out << "reference executor unavailable (" << ref_error << "): outputs compared with the host build only\n";
        // Issue 23: an unverified run is not a success unless the caller's expected outputs check it.
        if (o.expected.size() < blob.outputs.size()) {
            err << "npusim: error: outputs unverified, the reference executor could not run the model (" << ref_error
                << ") (give --expect FILE.npy per output)\n";
            unverified = true;
        }
    }
    for (size_t k = 0; k < blob.outputs.size(); ++k) {
        const BlobOutput& bo = blob.outputs[k];
        const num::Tensor got = output_tensor(bo, run.outputs[k]);
        const float lsb = bo.dtype == num::DType::F32 ? output_lsb(g, bo.value) : 1.0f;
        out << "output '" << bo.value << "' " << num::dtype_name(bo.dtype) << " " << got.shape_str() << ": ";
        McuOutputRow row{bo.value, num::dtype_name(bo.dtype), got.shape_str(), "unverified", 0.0, -1.0, got};
        if (ref_error.empty()) {
            const Compare c = compare(got, ref.at(bo.value), lsb);
            const bool equal = c.differing == 0;
            row.verdict = equal ? "equal" : std::to_string(c.differing) + " of " + std::to_string(c.elements) + " differ";
            row.max_diff = c.max_lsb;
            all_equal = all_equal && equal;
            out << (equal ? (lsb > 0 || bo.dtype != num::DType::F32 ? "equal to the reference" : "equal to the reference within 1e-5")
                          : std::to_string(c.differing) + " of " + std::to_string(c.elements) + " differ")
                << " (max " << std::setprecision(2) << c.max_lsb << (lsb > 0 || bo.dtype != num::DType::F32 ? " LSB" : " x 1e-5 rel") << ")";
        }
        if (o.report) o.report->outputs.push_back(row);
        if (got.numel() <= 16 && got.dtype() == num::DType::F32) {
            out << " [";
            for (size_t i = 0; i < got.numel(); ++i) out << (i ? " " : "") << std::setprecision(4) << got.data<float>()[i];
            out << "]";
        }
        out << "\n";
    }
    if (qm) compare_with_float(float_model, inputs, blob, run, out, o.report);
    for (const auto& u : t->unknowns) out << "note (" << t->name << "): " << u << "\n";
    if (unverified) return kMcuRunError;
    if (!all_equal) {
        // Fixed-point requantization may differ by 1 LSB per layer from onnxruntime's float requantization.
        err << (o.requant == "fixed" ? "note" : "error") << ": outputs differ from the reference executor\n";
        return o.requant == "fixed" ? kMcuOk : kMcuMismatch;
    }
    return kMcuOk;
}

std::vector<std::pair<std::string, std::string>> engine_refusals(const std::string& model_path, const drv::ir::Graph& g) {
    std::vector<std::pair<std::string, std::string>> out;
    try {
        const std::string q = qdq_refusal(model_path);
        if (!q.empty()) {
            out.emplace_back("", q);
            return out;  // the per-node kernels are beside the point then
        }
    } catch (const std::exception&) {
        // the checker reports load errors itself
    }
    for (auto& [node, why] : conversion_gaps(g)) out.emplace_back(node, why);
    return out;
}

const char* kernel_symbol(uint32_t op) {
    switch (op) {
        case MK_OP_CONV2D_S8: return "mk_conv2d_s8";
        case MK_OP_DWCONV_S8: return "mk_depthwise_conv2d_s8";
        case MK_OP_FC_S8: return "mk_fully_connected_s8";
        case MK_OP_ADD_S8: return "mk_add_s8";
        case MK_OP_MUL_S8: return "mk_mul_s8";
        case MK_OP_MAXPOOL_S8: return "mk_max_pool_s8";
        case MK_OP_AVGPOOL_S8: return "mk_avg_pool_s8";
        case MK_OP_CLAMP_S8: return "mk_clamp_s8";
        case MK_OP_LUT_S8: return "mk_lut_s8";
        case MK_OP_SOFTMAX_S8: return "mk_softmax_s8";
        case MK_OP_SOFTMAX_LUT_S8: return "mk_softmax_s8_lut";
        case MK_OP_GAP_S8: return "mk_global_avg_pool_s8";
        case MK_OP_QUANTIZE: return "mk_quantize_f32_s8";
        case MK_OP_DEQUANTIZE: return "mk_dequantize_s8_f32";
        case MK_OP_COPY: return "memmove";
        case MK_OP_TRANSPOSE: return "mk_transpose4";
        case MK_OP_CONCAT: return "mk_concat";
        case MK_OP_CONV2D_F32: return "mk_conv2d_f32";
        case MK_OP_DWCONV_F32: return "mk_depthwise_conv2d_f32";
        case MK_OP_FC_F32: return "mk_fully_connected_f32";
        case MK_OP_BINARY_F32: return "mk_binary_f32";
        case MK_OP_UNARY_F32: return "mk_unary_f32";
        case MK_OP_MAXPOOL_F32: return "mk_max_pool_f32";
        case MK_OP_AVGPOOL_F32: return "mk_avg_pool_f32";
        case MK_OP_SOFTMAX_F32: return "mk_softmax_f32";
        case MK_OP_GRU_F32: return "mk_gru_f32";
        case MK_OP_LSTM_F32: return "mk_lstm_f32";
        case MK_OP_RNN_F32: return "mk_rnn_f32";
        case MK_OP_RESIZE_TFL: return "mk_resize_tfl";
        case MK_OP_BATCH_MATMUL: return "mk_batch_matmul";
        case MK_OP_TCONV_F32: return "mk_transpose_conv_f32";
        case MK_OP_TCONV_S8: return "mk_transpose_conv_s8";
        case MK_OP_PRELU_F32: return "mk_prelu_f32";
        case MK_OP_ARGMAX: return "mk_argmax";
        case MK_OP_PAD: return "mk_pad4";
        case MK_OP_SLICE: return "mk_slice4";
        case MK_OP_RESIZE_F32: return "mk_resize_f32";
        case MK_OP_REDUCE_F32: return "mk_reduce_f32";
        case MK_OP_REDUCE_S8: return "mk_reduce_s8";
        case MK_OP_MINMAX_S8: return "mk_minmax_s8";
        case MK_OP_ARGMIN: return "mk_argmin";
        case MK_OP_GATHER: return "mk_gather";
        case MK_OP_TILE: return "mk_tile4";
        default: return "?";
    }
}

int bench_cli(const std::string& platform, std::ostream& out, std::ostream& err) {
    const McuTarget* t = find_target(platform);
    if (!t) {
        err << "error: unknown MCU platform '" << platform << "'\n";
        return kMcuUsage;
    }
    const FirmwareRun r = run_firmware(*t, firmware_elf(*t, "bench"), {});
    if (!r.error.empty()) {
        err << "error: " << r.error << "\n";
        return kMcuRunError;
    }
    out << "kernel benchmark on " << t->name << " (" << t->clock_hz / 1000000 << " MHz, ISS preset '" << t->iss_preset << "')\n";
    std::istringstream in(r.console);
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream ls(line);
        std::string tag, kernel, shape;
        uint64_t macs = 0, cyc = 0, ins = 0;
        if (!(ls >> tag >> kernel >> shape >> macs >> cyc >> ins) || tag != "B" || macs == 0) continue;
        out << "  " << std::left << std::setw(10) << kernel << std::setw(20) << shape << std::right << std::setw(9) << macs
            << " MACs " << std::setw(10) << cyc << " cycles  " << std::fixed << std::setprecision(2)
            << double(cyc) / double(macs) << " cycles/MAC  " << double(ins) / double(macs) << " instr/MAC\n";
    }
    const double mips = r.host_cpu_seconds > 0 ? double(r.total_instret) / r.host_cpu_seconds / 1e6 : 0.0;
    out << "ISS: " << r.total_instret << " instructions, " << r.total_cycles << " cycles in " << std::setprecision(3)
        << r.host_cpu_seconds << " s host CPU = " << std::setprecision(1) << mips << " M instructions/s\n";
    return kMcuOk;
}

}  // namespace mcu
