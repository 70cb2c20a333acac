// SPDX-License-Identifier: MIT
// Cycle cost of the MAC array for one convolution task (no data; SG-8.4). The CORE processes
// C2-channel input atomics against 16-kernel output atomics, so both channel counts are padded
// before dividing by the profile's MACs per cycle (hardware-facts.md §5.1); output planes shorter
// than a stripe's weight load pay for the load (npu.stripe_max_pixels, npu.cbuf_read_bytes_per_cycle).
#pragma once
#include <cstdint>

#include "hw/profile.h"
#include "npu/rknpu/conv_config.h"

namespace npu::rknpu {

struct ConvCost {
    uint64_t macs = 0;          ///< useful MACs (real channels)
    uint64_t macs_padded = 0;   ///< MACs the array performs (padded channels)
    uint64_t compute_cycles = 0;
    uint64_t stripe_pixels = 0;  ///< output pixels as the array spends them (>= real: short stripes wait)
};

ConvCost conv_cost(const ConvConfig& c, const hw::SocProfile& p);

}  // namespace npu::rknpu
