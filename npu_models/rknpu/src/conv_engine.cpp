// SPDX-License-Identifier: MIT
#include "npu/rknpu/conv_engine.h"

#include <cstring>

#include "numerics/requant.h"

namespace npu::rknpu {

uint64_t compact_feature_offset(const ConvConfig& c, uint32_t ch, uint32_t h, uint32_t w) {
    return nc1hwc2_offset(ch, h, w, c.in_w * 16u, static_cast<uint64_t>(c.in_w) * c.in_h * 16u);
}

namespace {

/// DPU output convert: (x * scale) >> shift, rounded half up (UNVERIFIED: the CVT_ROUND
/// encoding is not public; half-up is the usual hardware adder-then-shift), plus offset, saturated.
int8_t out_convert(int64_t x, const ConvConfig& c) {
    const int64_t y = num::mul_shift(x, static_cast<int32_t>(c.out_cvt_scale), static_cast<int>(c.out_cvt_shift),
                                     num::Rounding::HalfUp);
    return num::saturate_i8(y + c.out_cvt_offset);
}

int64_t bs_stage(int64_t acc, uint32_t k, const ConvConfig& c, const ConvOperands& ops) {
    if (c.bs_bypass) return acc;
    if (!c.bs_alu_bypass) {
        int64_t operand = c.bs_alu_operand;
        if (c.bs_alu_src) {
            int32_t b = 0;
            std::memcpy(&b, ops.bias.data() + 4ull * k, 4);
            operand = b;
        }
        switch (c.bs_alu_algo) {
            case AluAlgo::Add: acc += operand; break;
            case AluAlgo::Max: acc = acc > operand ? acc : operand; break;
            case AluAlgo::Min: acc = acc < operand ? acc : operand; break;
        }
    }
    if (!c.bs_relu_bypass && acc < 0) acc = 0;
    return acc;
}

}  // namespace

std::vector<uint8_t> run_conv(const ConvConfig& c, const ConvOperands& ops) {
    const uint64_t out_c1 = (c.out_c + 15) / 16;
    const uint64_t surf = static_cast<uint64_t>(c.out_w) * c.out_h * 16;
    std::vector<uint8_t> out(out_c1 * surf, 0);
    const auto* feat = reinterpret_cast<const int8_t*>(ops.feature.data());
    const auto* wts = reinterpret_cast<const int8_t*>(ops.weights.data());
    const int8_t pad = static_cast<int8_t>(c.pad_value);
    for (uint32_t k = 0; k < c.out_c; ++k) {
        for (uint32_t oy = 0; oy < c.out_h; ++oy) {
            for (uint32_t ox = 0; ox < c.out_w; ++ox) {
                int64_t acc = 0;
                for (uint32_t ky = 0; ky < c.kernel_h; ++ky) {
                    const int64_t iy = static_cast<int64_t>(oy) * c.stride_y - c.pad_top + ky * c.dilation_y;
                    for (uint32_t kx = 0; kx < c.kernel_w; ++kx) {
                        const int64_t ix = static_cast<int64_t>(ox) * c.stride_x - c.pad_left + kx * c.dilation_x;
                        const bool inside = iy >= 0 && iy < c.in_h && ix >= 0 && ix < c.in_w;
                        const int8_t* wrow = wts + weight_index(c, k, ky, kx, 0);
                        for (uint32_t ch = 0; ch < c.in_c; ++ch) {
                            const int8_t x = inside ? feat[compact_feature_offset(c, ch, static_cast<uint32_t>(iy),
                                                                                  static_cast<uint32_t>(ix))]
                                                    : pad;
                            acc += static_cast<int32_t>(x) * wrow[ch];
                        }
                    }
                }
                // CORE accumulates in 32 bits (wraps like the hardware would on overflow).
                const int64_t acc32 = static_cast<int32_t>(static_cast<uint32_t>(acc));
                const int8_t y = out_convert(bs_stage(acc32, k, c, ops), c);
                out[nc1hwc2_offset(k, oy, ox, c.out_w * 16u, surf)] = static_cast<uint8_t>(y);
            }
        }
    }
    return out;
}

}  // namespace npu::rknpu
