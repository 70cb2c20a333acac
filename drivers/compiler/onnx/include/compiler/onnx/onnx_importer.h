// SPDX-License-Identifier: MIT
// ONNX import (issue 3): ModelProto (libonnx/protobuf, opsets 7-17 plus com.microsoft) -> graph IR
// with initializers, attributes, per-op shape inference and QDQ handling.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "compiler/ir/graph.h"

namespace drv::importer {

/// A model that cannot be imported (malformed file, unsupported op or opset, dynamic shape):
/// the message names the file and the node/tensor/offset. Caught by the CLI and mapped to an
/// exit code; never a crash.
class ImportError : public ir::GraphError {
   public:
    using ir::GraphError::GraphError;
};

/// How QDQ (QuantizeLinear/DequantizeLinear) pairs are treated.
enum class QdqMode {
    Keep,     ///< leave Q/DQ nodes as written (float semantics)
    Fold,     ///< record quant params on the int8 tensors (weights, activations) only
    Rewrite,  ///< Fold, then replace DQ->op->Q units by the fused integer ops onnxruntime runs
              ///< (QLinearConv, QLinearMatMul, QGemm, QLinearAdd, ...): bit-exact executor input
};

/// The onnxruntime CPU execution provider whose QDQ handling QdqMode::Rewrite mirrors. The two differ
/// only for int8 activations (onnxruntime QDQIsInt8Allowed()): on ARM64 int8 Conv/MatMul units run as
/// integer ops; on x86-64 int8 Q->DQ pairs with one consumer are first turned into uint8 and the int8
/// Conv/MatMul units left run in float (DQ -> float op -> Q). npusim's oracle is onnxruntime-node on
/// an x86-64 host, so the simulator's reference uses X86_64.
enum class OrtCpu { Arm64, X86_64 };

struct ImportOptions {
    /// Fixed shapes for graph inputs with dynamic/unknown dims ("--input-shape name=1x3x224x224").
    std::map<std::string, std::vector<int64_t>> input_shapes;
    QdqMode qdq = QdqMode::Rewrite;
    OrtCpu ort_cpu = OrtCpu::Arm64;
    /// Timing-only runs (no data moves): raw_data initializers of at least this many bytes get
    /// their dtype, shape and quantization but unspecified contents, saving the copy of the
    /// weights (ResNet50: 25 MB). Import decisions read only small constants (shapes, scales, zero
    /// points, pads, per-channel parameters), so the graph is otherwise the same. 0: all contents.
    size_t skip_data_from_bytes = 0;
};

/// Parses "name=1x3x224x224" (or "1x3x224x224" for the only input, stored under "") into `opts`.
/// Throws ImportError on malformed text.
void parse_input_shape(const std::string& spec, ImportOptions& opts);

/// Imports an ONNX model file. Throws ImportError.
ir::Graph import_onnx_file(const std::string& path, const ImportOptions& opts = {});
/// Imports an ONNX model from memory; `source` names it in messages. Throws ImportError.
ir::Graph import_onnx_bytes(const void* data, size_t size, const ImportOptions& opts = {},
                            const std::string& source = "<memory>");

/// Whether the bytes look like a TFLite flatbuffer (file identifier "TFL3" at offset 4).
bool looks_like_tflite(const void* data, size_t size);

}  // namespace drv::importer
