// SPDX-License-Identifier: MIT
// The quantization job (pipeline.h).
#include "compiler/quantize/pipeline.h"

#include <fmt/format.h>

#include <filesystem>

#include "compiler/model_loader.h"
#include "compiler/onnx/onnx_importer.h"
#include "compiler/quantize/onnx_writer.h"

namespace drv::quant {

std::string QuantizedModel::summary() const {
    const QuantizeResult& r = result;
    return fmt::format(
        "quantized {}: {} nodes with an integer form, {} activations, {} weights, {} biases, {} Relu/Clip folded into "
        "their producers, {} groups sharing parameters, {} nodes left in float; calibration {}, method {}",
        r.scheme, r.quantized_nodes, r.tensors.size(), r.weights, r.biases, r.removed_activations, r.shared_groups,
        r.float_nodes.size(), r.calibration, r.method);
}

QuantizedModel quantize_graph(const ir::Graph& g, const std::string& name, const PipelineOptions& o) {
    QuantizedModel m;
    const CalibrationSet cal =
        o.calibration.empty() ? seeded_calibration(g, o.seed) : load_calibration(g, o.calibration);
    m.result = quantize_model(g, cal, o.quantize);
    OnnxWriteOptions wo;
    wo.graph_name = name + "_qdq";
    wo.producer_name = "npusim-quantize";
    wo.doc = m.summary();
    m.onnx = onnx_bytes(m.result.qdq, wo);
    importer::ImportOptions io;
    io.qdq = importer::QdqMode::Rewrite;
    m.folded = importer::import_onnx_bytes(m.onnx.data(), m.onnx.size(), io, name + " (quantized)");
    if (o.accuracy) {
        m.accuracy = analyze_accuracy(g, m.folded, m.result, cal);
        m.has_accuracy = true;
    }
    return m;
}

QuantizedModel quantize_file(const std::string& path, const PipelineOptions& o) {
    importer::ImportOptions io;
    io.qdq = importer::QdqMode::Keep;
    for (const auto& s : o.input_shapes) importer::parse_input_shape(s, io);
    const ir::Graph g = importer::load_model(path, io);
    for (const ir::Node& n : g.nodes())
        if (n.domain == "tflite")
            throw QuantizeError(
                path + ": node " + n.label() +
                ": TFLite models cannot be quantized yet (the reference executor does not run TFLite graphs)");
    return quantize_graph(g, std::filesystem::path(path).stem().string(), o);
}

}  // namespace drv::quant
