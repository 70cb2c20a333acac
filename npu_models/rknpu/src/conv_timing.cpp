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
    // int16 uses the fp16 C2 and MAC rate: both take two 8-bit cells per product (hardware-facts
    // §3.1, §3.4). UNVERIFIED for int16; profile candidate npu.int16_macs_per_cycle.
    const bool wide = c.precision != Precision::Int8;
    const uint64_t c2 = static_cast<uint64_t>(wide ? p.npu.c2_fp16.value : p.npu.c2_int8.value);
    const uint64_t rate = static_cast<uint64_t>(wide ? p.npu.fp16_macs_per_cycle.value : p.npu.int8_macs_per_cycle.value);
    if (c.depthwise) {
        // Each output channel reads only its own input channel. The array takes one feature atom
        // (C2 channels of one pixel) per MAC cell and multiplies it against a C2-wide weight
        // slice: in depthwise mode only one product per cell is useful, so the useful rate is
        // MACs/cycle / C2 (64 on RK3588 int8). UNVERIFIED and derived from the profile's MAC
        // rate, not a profile parameter of its own (hardware-facts.md §5.4 notes the real
        // depthwise rate is "far lower" than the full rate).
        r.macs = pixels * c.out_c * taps;
        r.macs_padded = pixels * round_up(c.out_c, c2) * taps;
        const uint64_t dw_rate = rate / c2 ? rate / c2 : 1;
        r.compute_cycles = (r.macs_padded + dw_rate - 1) / dw_rate;
        return r;
    }
    r.macs = pixels * c.out_c * c.in_c_real * taps;
    const uint64_t cin = round_up(c.in_c, c2);
    const uint64_t cout = round_up(c.out_c, 16);
    r.macs_padded = pixels * cout * cin * taps;
    r.compute_cycles = (r.macs_padded + rate - 1) / rate;
    return r;
}

}  // namespace npu::rknpu
