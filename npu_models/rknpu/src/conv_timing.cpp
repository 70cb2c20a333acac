// SPDX-License-Identifier: MIT
#include "npu/rknpu/conv_timing.h"

#include <algorithm>
#include <cmath>

namespace npu::rknpu {

namespace {
uint64_t round_up(uint64_t v, uint64_t m) { return m ? (v + m - 1) / m * m : v; }
}  // namespace

ConvCost conv_cost(const ConvConfig& c, const hw::SocProfile& p) {
    ConvCost r;
    const hw::NpuParams& n = p.npu;
    const uint64_t pixels = static_cast<uint64_t>(c.out_w) * c.out_h;
    const uint64_t taps = static_cast<uint64_t>(c.kernel_w) * c.kernel_h;
    // fp16 and int16 use the wide C2 (two 8-bit cells per product, hardware-facts §3.1, §3.4) and
    // their own MAC rates and output-channel padding (npu.fp16/int16_macs_per_cycle,
    // npu.cout_align_fp16); int8 the narrow ones.
    // int4 (UNVERIFIED encoding, cube.h): twice the int8 C2 and npu.int4_macs_per_cycle, int8 padding.
    const bool int4 = c.precision == Precision::Int4;
    const bool wide = c.precision != Precision::Int8 && !int4;
    const uint64_t c2 = int4 ? 2 * static_cast<uint64_t>(n.c2_int8.value)
                             : static_cast<uint64_t>(wide ? n.c2_fp16.value : n.c2_int8.value);
    const int rate_param = c.precision == Precision::Int8   ? n.int8_macs_per_cycle.value
                           : int4                           ? n.int4_macs_per_cycle.value
                           : c.precision == Precision::Fp16 ? n.fp16_macs_per_cycle.value
                                                            : n.int16_macs_per_cycle.value;
    const uint64_t rate = rate_param > 0 ? static_cast<uint64_t>(rate_param) : 1;
    if (c.depthwise) {
        // Each output channel reads only its own input channel: the array does one useful product
        // per cell instead of C2. Output channels are padded to npu.depthwise_cout_align (Mesa: 64)
        // and the padded MACs run at npu.depthwise_mac_efficiency x the peak (hardware-facts III
        // §5.1, §5.4; the efficiency is a calibration parameter).
        r.macs = pixels * c.out_c * taps;
        r.macs_padded = pixels * round_up(c.out_c, static_cast<uint64_t>(n.depthwise_cout_align.value)) * taps;
        double dw_rate = static_cast<double>(rate) * n.depthwise_mac_efficiency.value;
        if (dw_rate < 1.0) dw_rate = 1.0;
        r.compute_cycles = static_cast<uint64_t>(std::ceil(static_cast<double>(r.macs_padded) / dw_rate - 1e-9));
        r.stripe_pixels = pixels;
        return r;
    }
    r.macs = pixels * c.out_c * c.in_c_real * taps;
    // Padded MACs (hardware-facts III §5.1): input channels to C2, output channels to the kernel
    // group the array computes at once (npu.cout_align_int8 / _fp16).
    const uint64_t cin = round_up(c.in_c, c2);
    const int cout_align = wide ? n.cout_align_fp16.value : n.cout_align_int8.value;
    const uint64_t cout = round_up(c.out_c, static_cast<uint64_t>(cout_align));
    r.macs_padded = pixels * cout * cin * taps;
    // Stripes (NVDLA stripe operation): the array keeps one pass's weights for a stripe of up to
    // npu.stripe_max_pixels output pixels while the next pass's weights (npu.int8_macs_per_cycle
    // bytes: one byte per 8-bit cell whatever the precision) come from the CBUF at
    // npu.cbuf_read_bytes_per_cycle. A stripe shorter than that load waits for it, so small output
    // planes (7x7 and below, 1x1 fully-connected) run below the peak.
    const uint64_t stripe = static_cast<uint64_t>(std::max(n.stripe_max_pixels.value, 1));
    const uint64_t load = (static_cast<uint64_t>(n.int8_macs_per_cycle.value) +
                           static_cast<uint64_t>(std::max(n.cbuf_read_bytes_per_cycle.value, 1)) - 1) /
                          static_cast<uint64_t>(std::max(n.cbuf_read_bytes_per_cycle.value, 1));
    const uint64_t rest = pixels % stripe;
    r.stripe_pixels = pixels / stripe * std::max(stripe, load) + (rest ? std::max(rest, load) : 0);
    // npu.conv_mac_efficiency: the array's sustained share of that rate on dense convolutions.
    const double dense_rate = static_cast<double>(rate) * n.conv_mac_efficiency.value;
    r.compute_cycles = static_cast<uint64_t>(
        std::ceil(static_cast<double>(r.stripe_pixels * cout * cin * taps) / std::max(dense_rate, 1.0) - 1e-9));
    return r;
}

}  // namespace npu::rknpu
