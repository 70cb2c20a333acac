// SPDX-License-Identifier: MIT
// libFuzzer target: TFLite bytes through import (verifier, shape inference, constant folding) and the
// rk3588 timing-only compile with the operator-spec checker (pipeline_common.h). Seeds: corpus/tflite.
#include <cstddef>
#include <cstdint>

#include "compiler/tflite/tflite_importer.h"
#include "pipeline_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    npusim_fuzz::run_pipeline(
        [&](const drv::importer::ImportOptions& io) {
            return drv::importer::import_tflite_bytes(data, size, io, "fuzz.tflite");
        },
        size);
    return 0;
}
