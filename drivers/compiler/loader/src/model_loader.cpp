// SPDX-License-Identifier: MIT
#include "compiler/model_loader.h"

#include <fstream>
#include <iterator>
#include <vector>


namespace drv::importer {

ir::Graph load_model(const std::string& path, const ImportOptions& opts) {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw ImportError(path + ": cannot open file");
    std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    if (looks_like_tflite(bytes.data(), bytes.size()))
        throw ImportError(path + ": TFLite import is not available in this build");
    return import_onnx_bytes(bytes.data(), bytes.size(), opts, path);
}

}  // namespace drv::importer
