// SPDX-License-Identifier: MIT
// Graph IR -> ONNX ModelProto (libonnx protobuf, the same library the importer reads with): what
// `npusim quantize -o` writes and what the in-memory `--quantize int8` path re-imports, so that
// onnxruntime, the reference executor and the NPU compiler all read the same bytes.
#pragma once
#include <string>

#include "compiler/ir/graph.h"

namespace drv::quant {

struct OnnxWriteOptions {
    std::string graph_name = "graph";
    std::string producer_name = "npusim";
    std::string producer_version;
    std::string doc;  ///< ModelProto doc_string (the quantization summary)
};

/// Serialises `g`: graph inputs/outputs with their dtypes and shapes, every constant a value reads
/// as an initializer (raw_data, little-endian), nodes in their order with their attributes, the
/// graph's opsets (IR version 8 for ai.onnx opsets up to 17). Throws std::invalid_argument for
/// what ONNX cannot express (a node of the internal "tflite" domain, an attribute name starting
/// with '_').
std::string onnx_bytes(const ir::Graph& g, const OnnxWriteOptions& o = {});

/// onnx_bytes() written to `path`; throws std::runtime_error naming the path when it cannot be written.
void write_onnx(const ir::Graph& g, const std::string& path, const OnnxWriteOptions& o = {});

}  // namespace drv::quant
