// SPDX-License-Identifier: MIT
// Minimal NumPy .npy (format 1.0/2.0, little-endian, C order) reader and writer for the CLI's
// --input/--output and the oracle tests. Types: float32, int8, uint8, int32, int64 (and bool on
// read). Errors throw std::runtime_error naming the file.
#pragma once
#include <string>

#include "numerics/tensor.h"

namespace num {

/// Reads a .npy file into a Tensor (dtype and shape from the header).
Tensor read_npy(const std::string& path);
/// Writes t as a version 1.0 .npy file.
void write_npy(const std::string& path, const Tensor& t);

}  // namespace num
