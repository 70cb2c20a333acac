// SPDX-License-Identifier: MIT
// One entry for every consumer (checker, lowering, MCU code generator, reference executor): load a
// model file, ONNX or TFLite by content (TFLite's "TFL3" identifier), into the graph IR.
#pragma once
#include <string>

#include "compiler/onnx/onnx_importer.h"

namespace drv::importer {

/// Loads `path` as TFLite when it carries the TFL3 identifier, else as ONNX. Throws ImportError.
ir::Graph load_model(const std::string& path, const ImportOptions& opts = {});

}  // namespace drv::importer
