// SPDX-License-Identifier: MIT
#include "compiler/model_loader.h"

#include <fstream>
#include <iterator>
#include <vector>

#include "compiler/tflite/tflite_importer.h"


namespace drv::importer {

ir::Graph load_model(const std::string& path, const ImportOptions& opts) {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw ImportError(path + ": cannot open file");
    std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    if (looks_like_tflite(bytes.data(), bytes.size())) return import_tflite_bytes(bytes.data(), bytes.size(), opts, path);
    return import_onnx_bytes(bytes.data(), bytes.size(), opts, path);
}

}  // namespace drv::importer
