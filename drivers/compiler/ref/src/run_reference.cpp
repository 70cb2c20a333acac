// SPDX-License-Identifier: MIT
// `npusim run --reference MODEL --input x.npy --output y.npy`: import, feed, run, write. Errors are
// reported as one "error: ..." line naming the file/node and mapped to RefExit codes (SG-8.8.3).
#include <fstream>
#include <stdexcept>

#include "compiler/model_loader.h"
#include "compiler/ref/reference.h"
#include "numerics/limits.h"
#include "numerics/npy.h"
#include "numerics/ops.h"

namespace drv::ref {

namespace {

std::string output_path(const RefRunOptions& o, size_t k) {
    if (k < o.outputs.size()) return o.outputs[k];
    std::string base = o.outputs.empty() ? std::string("output") : o.outputs[0];
    if (base.size() > 4 && base.compare(base.size() - 4, 4, ".npy") == 0) base.resize(base.size() - 4);
    return base + "_" + std::to_string(k) + ".npy";
}

std::map<std::string, num::Tensor> gather_inputs(const RefRunOptions& o, const ir::Graph& g, std::ostream& log) {
    std::map<std::string, num::Tensor> in;
    if (!o.inputs.empty() && o.inputs.size() != g.inputs().size())
        throw std::runtime_error(std::to_string(o.inputs.size()) + " --input file(s) given, the model has " +
                       std::to_string(g.inputs().size()) + " input(s)");
    for (size_t k = 0; k < g.inputs().size(); ++k) {
        const ir::Value& v = g.value(g.inputs()[k]);
        if (!o.inputs.empty()) {
            in[v.name] = num::read_npy(o.inputs[k]);
            continue;
        }
        in[v.name] = random_input(v, o.seed, k);
        log << "input '" << v.name << "': random " << num::dtype_name(v.dtype) << " " << v.shape_str() << " (seed " << o.seed << ")\n";
        if (!o.dump_inputs_dir.empty())
            num::write_npy(o.dump_inputs_dir + "/input_" + std::to_string(k) + ".npy", in[v.name]);
    }
    return in;
}

}  // namespace

int run_reference(const RefRunOptions& o, std::ostream& log) {
    if (o.model.empty()) {
        log << "error: no model given\n";
        return kRefUsage;
    }
    ir::Graph g;
    try {
        importer::ImportOptions io;
        for (const auto& s : o.input_shapes) importer::parse_input_shape(s, io);
        io.qdq = o.keep_qdq ? importer::QdqMode::Fold : importer::QdqMode::Rewrite;
        io.ort_cpu = importer::OrtCpu::X86_64;  // the onnxruntime-node oracle (x86-64)
        g = importer::load_model(o.model, io);
        for (const auto& n : g.nodes())
            if (!num::op_supported(n.op_type, n.domain))
                throw std::runtime_error(o.model + ": node " + n.label() + ": the reference operator library has no " +
                                         (n.domain.empty() ? std::string("ai.onnx") : n.domain) + ":" + n.op_type +
                                         (n.domain == "tflite" ? " (TFLite graphs are import-only for now)" : ""));
    } catch (const std::exception& e) {
        log << "error: " << num::error_text(e) << "\n";
        return kRefModelError;
    }
    std::map<std::string, num::Tensor> in;
    try {
        in = gather_inputs(o, g, log);
    } catch (const std::exception& e) {
        log << "error: " << num::error_text(e) << "\n";
        return kRefInputError;
    }
    std::map<std::string, num::Tensor> out;
    try {
        out = execute(g, in);
    } catch (const ir::GraphError& e) {
        log << "error: " << num::error_text(e) << "\n";
        return kRefInputError;
    } catch (const std::exception& e) {
        log << "error: " << num::error_text(e) << "\n";
        return kRefOpError;
    }
    if (o.results) {
        for (const std::string& name : g.outputs()) o.results->emplace_back(name, out.at(name));
        return kRefOk;
    }
    try {
        for (size_t k = 0; k < g.outputs().size(); ++k) {
            const auto& t = out.at(g.outputs()[k]);
            std::string path = output_path(o, k);
            num::write_npy(path, t);
            log << "output '" << g.outputs()[k] << "': " << num::dtype_name(t.dtype()) << " " << t.shape_str() << " -> " << path << "\n";
        }
    } catch (const std::exception& e) {
        log << "error: " << num::error_text(e) << "\n";
        return kRefInputError;
    }
    return kRefOk;
}

}  // namespace drv::ref
