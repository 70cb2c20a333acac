// SPDX-License-Identifier: MIT
// `npusim train --platform ws63 MODEL --data x.npy --labels y.npy --epochs N --lr L`: on-device
// training on ws63 (seed 000's training tables: FP32 rows, or QAS INT8 rows with --quantize int8): the
// model mapped onto the training firmware's layers, the samples and labels in the training blob, SGD with batch 1 and softmax
// cross-entropy on the ISS; loss and accuracy per epoch, cycles per epoch and per step, flash/SRAM
// use, and the host build of the same trainer as the check (host == ISS, bit for bit).
#pragma once
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "mcu/firmware_runner.h"

namespace mcu {

struct TrainOptions {
    std::string model, platform = "ws63", data, labels;
    std::string quantize;                  ///< "int8": QAS INT8 training of the toolchain-quantized model
    std::vector<std::string> calibration;  ///< --quantize int8: calibration data (default: --data)
    std::string calibration_method;        ///< minmax (default), kl, mmse
    uint64_t seed = 0;
    uint32_t epochs = 5;
    float lr = 0.01f;
    uint64_t max_insns = 50000000000ull;
    FirmwareExecutor executor;  ///< empty = run_firmware (standalone ISS)
};

/// Exit codes as cli.md: 0 trained, 1 the run failed (ISS, host mismatch), 2 usage/bad data, 3 model
/// cannot be loaded, 4 refused (3066H, operators outside the training tables, does not fit).
int train_cli(const TrainOptions& o, std::ostream& out, std::ostream& err);

}  // namespace mcu
