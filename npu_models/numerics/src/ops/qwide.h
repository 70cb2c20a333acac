// SPDX-License-Identifier: MIT
// Wide (16-bit data, 16/20-bit weights) and narrowed-grid (`_qbits`) forms of the 8-bit integer
// operators (qwide.cpp). The 8-bit entry points call them when needs_wide() says so, so 8-bit
// models keep onnxruntime's exact 8-bit arithmetic.
#pragma once
#include "op_common.h"

namespace num::ops {

/// Element i of an int8/uint8/int16/uint16/int32 tensor.
int64_t qint_at(const Tensor& t, size_t i);
/// True unless x, w and y are all 8-bit and no `_qbits` narrows the output grid.
bool needs_wide(DType x, DType w, DType y, int64_t qbits);

Outputs qlinear_conv_wide(const Attributes& a, const Inputs& in);
Outputs qlinear_matmul_wide(const Attributes& a, const Inputs& in);
Outputs qgemm_wide(const Attributes& a, const Inputs& in);

}  // namespace num::ops
