// SPDX-License-Identifier: MIT
// libFuzzer target: TFLite importer (flatbuffers verifier + our checks) on arbitrary bytes.
#include <cstddef>
#include <cstdint>

#include "compiler/tflite/tflite_importer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    try {
        drv::importer::import_tflite_bytes(data, size, {}, "fuzz.tflite");
    } catch (const drv::importer::ImportError&) {
    }
    return 0;
}
