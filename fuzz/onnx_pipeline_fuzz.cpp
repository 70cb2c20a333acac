// SPDX-License-Identifier: MIT
// libFuzzer target: ONNX bytes through import (shape inference, constant folding, QDQ fold) and the
// rk3588 timing-only compile with the operator-spec checker (pipeline_common.h). Seeds: corpus/onnx.
#include <cstddef>
#include <cstdint>

#include "pipeline_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    npusim_fuzz::run_pipeline(
        [&](const drv::importer::ImportOptions& io) { return drv::importer::import_onnx_bytes(data, size, io, "fuzz.onnx"); },
        size);
    return 0;
}
