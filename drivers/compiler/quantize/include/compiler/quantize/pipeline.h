// SPDX-License-Identifier: MIT
// The whole quantization job behind `npusim quantize` and `npusim run/check --quantize int8`:
// import the float model, read (or seed) the calibration set, quantize, serialise the QDQ model,
// re-import it the way every consumer does (QDQ folded to integer ops) and analyse its accuracy.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "compiler/ir/graph.h"
#include "compiler/quantize/accuracy.h"
#include "compiler/quantize/quantizer.h"

namespace drv::quant {

struct PipelineOptions {
    QuantizeOptions quantize;
    std::vector<std::string> calibration;   ///< --calibration specs; empty = seeded default
    uint64_t seed = 0;                      ///< seed of the default calibration input
    std::vector<std::string> input_shapes;  ///< --input-shape name=1x3x224x224
    bool accuracy = true;                   ///< run the accuracy analysis
};

struct QuantizedModel {
    QuantizeResult result;
    std::string onnx;         ///< the QDQ model's ModelProto bytes
    ir::Graph folded;         ///< onnx re-imported with QdqMode::Rewrite (integer graph)
    AccuracyReport accuracy;  ///< when PipelineOptions::accuracy
    bool has_accuracy = false;
    /// One-line summary: scheme, method, calibration, counts.
    std::string summary() const;
};

/// Runs the job on the model file `path`. Throws importer::ImportError (the file cannot be
/// loaded), QuantizeError / CalibrationError (bad input for quantization), or a reference-executor
/// error while calibrating.
QuantizedModel quantize_file(const std::string& path, const PipelineOptions& o);

/// The same on an already imported float graph (QdqMode::Keep); `name` names the model.
QuantizedModel quantize_graph(const ir::Graph& g, const std::string& name, const PipelineOptions& o);

}  // namespace drv::quant
