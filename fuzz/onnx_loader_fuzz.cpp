// SPDX-License-Identifier: MIT
// libFuzzer target: ONNX importer on arbitrary bytes. Every input must import or throw
// ImportError; anything else (crash, sanitizer report, other exception, hang) is a finding.
#include <cstddef>
#include <cstdint>

#include "compiler/onnx/onnx_importer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    try {
        drv::importer::import_onnx_bytes(data, size, {}, "fuzz.onnx");
    } catch (const drv::importer::ImportError&) {
    }
    return 0;
}
