// SPDX-License-Identifier: MIT
#include "npu/rknpu/conv_engine.h"

#include <cstring>

#include "npu/rknpu/dpu_engine.h"
#include "numerics/requant.h"

namespace npu::rknpu {

uint64_t compact_feature_offset(const ConvConfig& c, uint32_t ch, uint32_t h, uint32_t w) {
    return (ch / c.c2()) * surface_bytes(c.in_w, c.in_h, c.atom) + (static_cast<uint64_t>(h) * c.in_w + w) * c.atom +
           (ch % c.c2()) * c.elem();
}

namespace {

uint16_t load_u16(const std::vector<uint8_t>& b, uint64_t at) {
    return static_cast<uint16_t>(b[at] | (b[at + 1] << 8));
}

/// Accumulator of the int16 path: 48 bits, wrapping (UNVERIFIED: the NVDLA-lineage CACC width).
int64_t wrap48(int64_t v) {
    const uint64_t u = static_cast<uint64_t>(v) & ((uint64_t{1} << 48) - 1);
    return (u & (uint64_t{1} << 47)) ? static_cast<int64_t>(u) - (int64_t{1} << 48) : static_cast<int64_t>(u);
}

/// CORE_CLIP_TRUNCATE: the accumulator is shifted right (rounded half up; ROUND_TYPE is not
/// modelled, UNVERIFIED) and saturated to the DPU's 32-bit input.
int64_t clip_truncate(int64_t acc, uint32_t shift) {
    if (shift) acc = num::mul_shift(acc, 1, static_cast<int>(shift), num::Rounding::HalfUp);
    return num::saturate(acc, INT32_MIN, INT32_MAX);
}

enum class Mode { I8, I16, F16 };

/// One output element's accumulation. int8: exact products summed in 64 bits then wrapped to the
/// 32-bit accumulator. int16: 48-bit wrapping accumulator, then CLIP_TRUNCATE to 32 bits. fp16:
/// products and sums in fp32 in (ky, kx, ch) order (UNVERIFIED: the CORE's fp32 adder-tree order
/// is not public; tests compare with a tolerance).
template <Mode kMode>
void accumulate(const ConvConfig& c, const ConvOperands& ops, Cube& acc) {
    constexpr bool kFloat = kMode == Mode::F16;
    const auto* feat = reinterpret_cast<const int8_t*>(ops.feature.data());
    const auto* wts = reinterpret_cast<const int8_t*>(ops.weights.data());
    const int8_t pad_i8 = static_cast<int8_t>(c.pad_value);
    const int16_t pad_i16 = static_cast<int16_t>(static_cast<uint16_t>(static_cast<uint32_t>(c.pad_value) & 0xffffu));
    // UNVERIFIED: on the fp16 path PAD_VALUE's low 16 bits are the fp16 pad value.
    const float pad_f = fp16_to_fp32(static_cast<uint16_t>(static_cast<uint32_t>(c.pad_value) & 0xffffu));
    const uint32_t cin_per_out = c.depthwise ? 1 : c.in_c;
    for (uint32_t k = 0; k < c.out_c; ++k)
        for (uint32_t oy = 0; oy < c.out_h; ++oy)
            for (uint32_t ox = 0; ox < c.out_w; ++ox) {
                int64_t isum = 0;
                float fsum = 0.0f;
                for (uint32_t ky = 0; ky < c.kernel_h; ++ky) {
                    const int64_t iy = static_cast<int64_t>(oy) * c.stride_y - c.pad_top + ky * c.dilation_y;
                    for (uint32_t kx = 0; kx < c.kernel_w; ++kx) {
                        const int64_t ix = static_cast<int64_t>(ox) * c.stride_x - c.pad_left + kx * c.dilation_x;
                        const bool inside = iy >= 0 && iy < c.in_h && ix >= 0 && ix < c.in_w;
                        for (uint32_t j = 0; j < cin_per_out; ++j) {
                            const uint32_t ch = c.depthwise ? k : j;
                            const uint64_t wi = c.depthwise ? weight_index(c, 0, ky, kx, k) : weight_index(c, k, ky, kx, j);
                            const uint64_t fo = inside ? compact_feature_offset(c, ch, static_cast<uint32_t>(iy),
                                                                                static_cast<uint32_t>(ix))
                                                       : 0;
                            if constexpr (kFloat) {
                                const float x = inside ? fp16_to_fp32(load_u16(ops.feature, fo)) : pad_f;
                                fsum += x * fp16_to_fp32(load_u16(ops.weights, 2 * wi));
                            } else if constexpr (kMode == Mode::I16) {
                                const int16_t x = inside ? static_cast<int16_t>(load_u16(ops.feature, fo)) : pad_i16;
                                isum += int64_t{x} * static_cast<int16_t>(load_u16(ops.weights, 2 * wi));
                            } else {
                                const int8_t x = inside ? feat[fo] : pad_i8;
                                isum += static_cast<int32_t>(x) * wts[wi];
                            }
                        }
                    }
                }
                const size_t o = acc.idx(k, oy, ox);
                if constexpr (kFloat) acc.f[o] = fsum;
                else if constexpr (kMode == Mode::I16) acc.i[o] = clip_truncate(wrap48(isum), c.clip_truncate);
                else acc.i[o] = clip_truncate(static_cast<int32_t>(static_cast<uint32_t>(isum)), c.clip_truncate);  // 32-bit accumulator wraps
            }
}

}  // namespace

Cube conv_accumulate(const ConvConfig& c, const ConvOperands& ops) {
    const bool fl = c.precision == Precision::Fp16;
    Cube acc = Cube::make(c.out_w, c.out_h, c.out_c, fl);
    if (fl) accumulate<Mode::F16>(c, ops, acc);
    else if (c.precision == Precision::Int16) accumulate<Mode::I16>(c, ops, acc);
    else accumulate<Mode::I8>(c, ops, acc);
    return acc;
}

Cube conv_dpu_cube(const ConvConfig& c, const ConvOperands& ops, const std::vector<uint8_t>& bn,
                   const std::vector<uint8_t>& ew) {
    DpuConfig d = c.dpu;
    d.w = c.out_w, d.h = c.out_h, d.c = c.out_c, d.atom = c.atom;
    return run_dpu(d, conv_accumulate(c, ops), DpuOperands{ops.bias, bn, ew});
}

std::vector<uint8_t> run_conv(const ConvConfig& c, const ConvOperands& ops, const std::vector<uint8_t>& bn,
                              const std::vector<uint8_t>& ew) {
    return pack_cube(conv_dpu_cube(c, ops, bn, ew), c.dpu.out, c.atom);
}

}  // namespace npu::rknpu
