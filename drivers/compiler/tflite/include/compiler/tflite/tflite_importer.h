// SPDX-License-Identifier: MIT
// TFLite import (issue 3): flatbuffer (our own schema, drivers/compiler/tflite/schema/npusim_tflite.fbs,
// compiled by flatc at build time) -> graph IR. Every load runs the flatbuffers verifier first, so
// bad offsets are reported, never followed. Operators keep their TFLite names in domain "tflite"
// (e.g. tflite.CONV_2D, NHWC), with int8 per-tensor/per-channel quantization on the tensors.
#pragma once
#include <cstddef>
#include <string>

#include "compiler/onnx/onnx_importer.h"

namespace drv::importer {

ir::Graph import_tflite_file(const std::string& path, const ImportOptions& opts = {});
ir::Graph import_tflite_bytes(const void* data, size_t size, const ImportOptions& opts = {},
                              const std::string& source = "<memory>");

}  // namespace drv::importer
