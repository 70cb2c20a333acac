// SPDX-License-Identifier: MIT
// Minimal .npy (NumPy format 1.0/2.0/3.0) reader/writer for the reference executor's --input and
// --output files: little-endian float32/float16/int8/uint8/int16/uint16/int32/int64/bool,
// C order. TODO(front-end): switch to numerics/npy.h once the operator library ships it.
#pragma once
#include <stdexcept>
#include <string>

#include "numerics/tensor.h"

namespace drv::ref {

/// Bad or unsupported .npy file; the message names the file and the problem.
class NpyError : public std::runtime_error {
   public:
    using std::runtime_error::runtime_error;
};

num::Tensor read_npy(const std::string& path);
/// Parses .npy bytes; `source` names them in messages.
num::Tensor parse_npy(const std::string& bytes, const std::string& source);
void write_npy(const std::string& path, const num::Tensor& t);
std::string encode_npy(const num::Tensor& t);

}  // namespace drv::ref
