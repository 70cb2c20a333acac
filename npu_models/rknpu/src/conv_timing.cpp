// SPDX-License-Identifier: MIT
#include "npu/rknpu/conv_timing.h"

namespace npu::rknpu {

namespace {
uint64_t round_up(uint64_t v, uint64_t m) { return (v + m - 1) / m * m; }
}  // namespace

ConvCost conv_cost(const ConvConfig& c, const hw::SocProfile& p) {
    ConvCost r;
    const uint64_t pixels = static_cast<uint64_t>(c.out_w) * c.out_h;
    const uint64_t taps = static_cast<uint64_t>(c.kernel_w) * c.kernel_h;
    r.macs = pixels * c.out_c * c.in_c_real * taps;
    const uint64_t cin = round_up(c.in_c, static_cast<uint64_t>(p.npu.c2_int8.value));
    const uint64_t cout = round_up(c.out_c, 16);
    r.macs_padded = pixels * cout * cin * taps;
    const uint64_t rate = static_cast<uint64_t>(p.npu.int8_macs_per_cycle.value);
    r.compute_cycles = (r.macs_padded + rate - 1) / rate;
    return r;
}

}  // namespace npu::rknpu
