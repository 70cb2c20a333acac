// SPDX-License-Identifier: MIT
// IEEE 754 binary16 <-> binary32 (round to nearest even, subnormals, inf and NaN kept): the one
// conversion the NPU model (fp16 cubes) and the RKNPU driver (fp16 host boundary, fp16 weights)
// share.
#pragma once
#include <cstdint>

namespace num {

uint16_t fp32_to_fp16(float f);
float fp16_to_fp32(uint16_t h);
inline float round_to_fp16(float f) { return fp16_to_fp32(fp32_to_fp16(f)); }

}  // namespace num
