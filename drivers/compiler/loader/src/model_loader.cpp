// SPDX-License-Identifier: MIT
#include "compiler/model_loader.h"

#include <fstream>
#include <vector>

#include "compiler/tflite/tflite_importer.h"


namespace drv::importer {

ir::Graph load_model(const std::string& path, const ImportOptions& opts) {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw ImportError(path + ": cannot open file");
    // One sized read: a byte-by-byte istreambuf_iterator copy took ~0.15 s CPU for ResNet50 (26 MB).
    f.seekg(0, std::ios::end);
    const std::streamoff size = f.tellg();
    f.seekg(0, std::ios::beg);
    std::vector<char> bytes(size > 0 ? static_cast<size_t>(size) : 0);
    if (!bytes.empty() && !f.read(bytes.data(), static_cast<std::streamsize>(bytes.size())))
        throw ImportError(path + ": cannot read file");
    if (looks_like_tflite(bytes.data(), bytes.size())) return import_tflite_bytes(bytes.data(), bytes.size(), opts, path);
    return import_onnx_bytes(bytes.data(), bytes.size(), opts, path);
}

}  // namespace drv::importer
