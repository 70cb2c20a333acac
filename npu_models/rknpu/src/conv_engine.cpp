// SPDX-License-Identifier: MIT
#include "npu/rknpu/conv_engine.h"
#include "npu/rknpu/buffer_pool.h"

#include <algorithm>
#include <atomic>
#include <cstring>

#include "conv_int8.h"
#include "dpu_blocked.h"
#include "npu/rknpu/dpu_engine.h"
#include "numerics/gemm.h"
#include "numerics/requant.h"

namespace npu::rknpu {

uint64_t compact_feature_offset(const ConvConfig& c, uint32_t ch, uint32_t h, uint32_t w) {
    const uint64_t in_atom = c.precision == Precision::Int4 ? (ch % c.c2()) / 2 : (ch % c.c2()) * c.elem();
    return (ch / c.c2()) * surface_bytes(c.in_w, c.in_h, c.atom) + (static_cast<uint64_t>(h) * c.in_w + w) * c.atom +
           in_atom;
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

enum class Mode { I8, I16, F16, I4 };

/// Signed 4-bit element `idx` of a packed int4 image (even index in the low nibble, UNVERIFIED).
int32_t nibble(const uint8_t* b, uint64_t byte, uint64_t idx) {
    const uint8_t v = b[byte];
    return (idx & 1) ? static_cast<int8_t>(v) >> 4 : static_cast<int8_t>(static_cast<uint8_t>(v << 4)) >> 4;
}

/// One output element's accumulation. int8: exact products summed in 64 bits then wrapped to the
/// 32-bit accumulator. int16: 48-bit wrapping accumulator, then CLIP_TRUNCATE to 32 bits. fp16:
/// products and sums in fp32 in (ky, kx, ch) order (UNVERIFIED: the CORE's fp32 adder-tree order
/// is not public; tests compare with a tolerance). int4: as int8 (exact sums wrapped to 32 bits).
template <Mode kMode>
void accumulate(const ConvConfig& c, const ConvOperands& ops, Cube& acc) {
    constexpr bool kFloat = kMode == Mode::F16;
    const auto* feat = reinterpret_cast<const int8_t*>(ops.feature.data());
    const auto* wts = reinterpret_cast<const int8_t*>(ops.weights.data());
    const int8_t pad_i8 = static_cast<int8_t>(c.pad_value);
    // UNVERIFIED: on the int4 path PAD_VALUE's low 4 bits are the signed pad value.
    const int32_t pad_i4 = static_cast<int8_t>(static_cast<uint8_t>(static_cast<uint32_t>(c.pad_value) << 4)) >> 4;
    const int16_t pad_i16 = static_cast<int16_t>(static_cast<uint16_t>(static_cast<uint32_t>(c.pad_value) & 0xffffu));
    // UNVERIFIED: on the fp16 path PAD_VALUE's low 16 bits are the fp16 pad value.
    const float pad_f = fp16_to_fp32(static_cast<uint16_t>(static_cast<uint32_t>(c.pad_value) & 0xffffu));
    const uint32_t cin_per_out = c.depthwise ? 1 : c.in_c;
    for (uint32_t k = 0; k < c.out_c; ++k) {
        // A-OW: BS_OW_OP is added to every weight of a kernel that exists.
        const int32_t ow = k < c.present_kernels ? c.weight_offset : 0;
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
                            } else if constexpr (kMode == Mode::I4) {
                                const int32_t x = inside ? nibble(ops.feature.data(), fo, ch) : pad_i4;
                                isum += x * nibble(ops.weights.data(), wi / 2, wi);
                            } else if constexpr (kMode == Mode::I16) {
                                const int16_t x = inside ? static_cast<int16_t>(load_u16(ops.feature, fo)) : pad_i16;
                                isum += int64_t{x} * static_cast<int16_t>(load_u16(ops.weights, 2 * wi));
                            } else {
                                const int8_t x = inside ? feat[fo] : pad_i8;
                                isum += static_cast<int32_t>(x) * (wts[wi] + ow);
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
}

}  // namespace

Cube conv_accumulate_reference(const ConvConfig& c, const ConvOperands& ops) {
    const bool fl = c.precision == Precision::Fp16;
    Cube acc = Cube::make(c.out_w, c.out_h, c.out_c, fl);
    if (fl) accumulate<Mode::F16>(c, ops, acc);
    else if (c.precision == Precision::Int16) accumulate<Mode::I16>(c, ops, acc);
    else if (c.precision == Precision::Int4) accumulate<Mode::I4>(c, ops, acc);
    else accumulate<Mode::I8>(c, ops, acc);
    return acc;
}

namespace {

std::atomic<bool> g_reference{false};

/// The fast int8 path keeps int32 sums exact: every product is at most 128 * 128 = 2^14 in
/// magnitude, so K products stay inside int32 while K <= 2^31 / 2^14 = 131072. The limit below
/// leaves a factor 4 for the GEMM kernel's internal operand offsets (u8 x s8 with +128 bias);
/// beyond it the reference loop (exact 64-bit sums wrapped to 32 bits) runs instead. Within the
/// bound the 32-bit wrap of the reference never triggers, so both agree bit for bit.
constexpr uint64_t kMaxFastK = 32768;

bool fast_int8_ok(const ConvConfig& c) {
    if (g_reference.load(std::memory_order_relaxed) || c.precision != Precision::Int8 || c.weight_offset != 0) return false;
    const uint64_t taps = static_cast<uint64_t>(c.kernel_w) * c.kernel_h;
    const uint64_t k = c.depthwise ? taps : taps * c.in_c;
    return k <= kMaxFastK && c.c2() == c.atom && c.in_c % c.c2() == 0;
}

/// Reusable per-thread scratch (no page faults or zeroing per task).
template <typename T>
T* scratch(std::vector<T>& v, size_t n) {
    if (v.size() < n) v.resize(n);
    return v.data();
}

/// CORE_CLIP_TRUNCATE on an exact int32 accumulator (same arithmetic as clip_truncate()).
void apply_clip_truncate(int32_t* acc, size_t n, uint32_t shift) {
    if (!shift) return;
    for (size_t i = 0; i < n; ++i) acc[i] = static_cast<int32_t>(clip_truncate(acc[i], shift));
}

/// One surface of C2 (a compile-time 8 or 16) channels, pixel-major -> channel rows: tiles of 16
/// pixels copied in whole (the compiler unrolls the fixed-size transpose), the tail one by one.
template <uint32_t C2>
void surface_to_planar(const uint8_t* __restrict src, uint8_t* __restrict dst, uint64_t P) {
    constexpr uint64_t kTile = 16;
    uint64_t p = 0;
    for (; p + kTile <= P; p += kTile) {
        uint8_t tile[kTile * C2];
        std::memcpy(tile, src + p * C2, sizeof tile);
        for (uint32_t j = 0; j < C2; ++j)
            for (uint64_t i = 0; i < kTile; ++i) dst[j * P + p + i] = tile[i * C2 + j];
    }
    for (; p < P; ++p)
        for (uint32_t j = 0; j < C2; ++j) dst[j * P + p] = src[p * C2 + j];
}

/// NC1HWC2 int8 (compact, C2 = atom) -> planar [in_c][in_h*in_w].
void to_planar(const ConvConfig& c, const uint8_t* feat, uint8_t* planar) {
    const uint32_t c2 = c.c2(), c1s = c.in_c / c2;
    const uint64_t P = static_cast<uint64_t>(c.in_w) * c.in_h;
    for (uint32_t c1 = 0; c1 < c1s; ++c1) {
        const uint8_t* src = feat + c1 * P * c2;
        uint8_t* dst = planar + static_cast<uint64_t>(c1) * c2 * P;
        if (c2 == 16) {
            surface_to_planar<16>(src, dst, P);
        } else if (c2 == 8) {
            surface_to_planar<8>(src, dst, P);
        } else {
            for (uint64_t p = 0; p < P; ++p)
                for (uint32_t j = 0; j < c2; ++j) dst[j * P + p] = src[p * c2 + j];
        }
    }
}

/// Normal int8 convolution as one GEMM in the reference executor's orientation: A = the weights
/// as the CNA reads them (out_c x K, K = kh*kw*in_c in [kh][kw][C] order), B = the im2col rows
/// (K x P) built from the planar input (a pointwise conv uses the planar input itself), C = the
/// accumulators planar (out_c x P).
/// Input channels the sums need: channels from DATAIN_CHANNEL_REAL up whose weights are all zero
/// add exactly 0 and are left out (the C2 padding of a 3-channel stem: 16 -> 3, a 5x smaller GEMM).
uint32_t used_channels(const ConvConfig& c, const uint8_t* w) {
    const uint32_t real = std::min(c.in_c, c.in_c_real);
    if (real == 0 || real == c.in_c) return c.in_c;
    const uint64_t taps = static_cast<uint64_t>(c.kernel_h) * c.kernel_w, K = taps * c.in_c;
    for (uint64_t n = 0; n < c.out_c; ++n)
        for (uint64_t t = 0; t < taps; ++t) {
            const uint8_t* p = w + n * K + t * c.in_c;
            for (uint32_t ch = real; ch < c.in_c; ++ch)
                if (p[ch]) return c.in_c;
        }
    return real;
}

void accumulate_int8_gemm(const ConvConfig& c, const ConvOperands& ops, int32_t* acc) {
    const uint64_t taps = static_cast<uint64_t>(c.kernel_h) * c.kernel_w;
    const uint32_t used = used_channels(c, ops.weights.data());
    const uint64_t K = taps * used;
    const uint64_t P = static_cast<uint64_t>(c.out_w) * c.out_h, HW = static_cast<uint64_t>(c.in_w) * c.in_h;
    thread_local std::vector<uint8_t> planar_buf, b_buf, w_buf;
    const uint8_t* W = ops.weights.data();
    if (used < c.in_c) {  // the weights without the all-zero channels
        uint8_t* w = scratch(w_buf, c.out_c * K);
        for (uint64_t n = 0; n < c.out_c; ++n)
            for (uint64_t t = 0; t < taps; ++t)
                std::memcpy(w + n * K + t * used, ops.weights.data() + (n * taps + t) * c.in_c, used);
        W = w;
    }
    uint8_t* planar = scratch(planar_buf, HW * c.in_c);
    to_planar(c, ops.feature.data(), planar);
    const bool pointwise = c.kernel_w == 1 && c.kernel_h == 1 && c.stride_x == 1 && c.stride_y == 1 && c.pad_left == 0 &&
                           c.pad_top == 0 && c.out_w == c.in_w && c.out_h == c.in_h;
    const uint8_t* B = planar;
    if (!pointwise) {
        uint8_t* b = scratch(b_buf, K * P);
        B = b;
        const auto pad = static_cast<uint8_t>(static_cast<int8_t>(c.pad_value));
        for (uint32_t ky = 0; ky < c.kernel_h; ++ky)
            for (uint32_t kx = 0; kx < c.kernel_w; ++kx) {
                const int64_t x0 = static_cast<int64_t>(kx) * c.dilation_x - c.pad_left;  // ix = ox * sx + x0
                // Output columns whose input column is inside: ox in [lo, hi).
                int64_t lo = 0, hi = c.out_w;
                while (lo < hi && lo * c.stride_x + x0 < 0) ++lo;
                while (hi > lo && (hi - 1) * c.stride_x + x0 >= c.in_w) --hi;
                for (uint32_t ch = 0; ch < used; ++ch) {
                    const uint64_t k = (static_cast<uint64_t>(ky) * c.kernel_w + kx) * used + ch;
                    uint8_t* row = b + k * P;
                    const uint8_t* plane = planar + ch * HW;
                    for (uint32_t oy = 0; oy < c.out_h; ++oy, row += c.out_w) {
                        const int64_t iy =
                            static_cast<int64_t>(oy) * c.stride_y - c.pad_top + static_cast<int64_t>(ky) * c.dilation_y;
                        if (iy < 0 || iy >= c.in_h) {
                            std::memset(row, pad, c.out_w);
                            continue;
                        }
                        if (lo > 0) std::memset(row, pad, static_cast<size_t>(lo));
                        if (hi < c.out_w) std::memset(row + hi, pad, static_cast<size_t>(c.out_w - hi));
                        const uint8_t* in = plane + static_cast<uint64_t>(iy) * c.in_w;
                        if (c.stride_x == 1) {
                            if (hi > lo) std::memcpy(row + lo, in + lo + x0, static_cast<size_t>(hi - lo));
                        } else {
                            for (int64_t ox = lo; ox < hi; ++ox) row[ox] = in[ox * c.stride_x + x0];
                        }
                    }
                }
            }
    }
    num::Q8Operand qa, qb;
    qa.data = W, qa.is_signed = true, qa.ld = static_cast<int64_t>(K);
    qb.data = B, qb.is_signed = true, qb.ld = static_cast<int64_t>(P);
    num::qgemm(static_cast<int64_t>(c.out_c), static_cast<int64_t>(P), static_cast<int64_t>(K), qa, qb, acc,
               static_cast<int64_t>(P));
}

/// Depthwise int8: a direct loop vectorised across the C2 channels of an atom.
void accumulate_int8_depthwise(const ConvConfig& c, const ConvOperands& ops, int32_t* acc) {
    constexpr uint32_t kMaxC2 = 64;
    const uint32_t c2 = c.c2();
    const uint64_t surf = surface_bytes(c.in_w, c.in_h, c.atom);
    const auto* feat = reinterpret_cast<const int8_t*>(ops.feature.data());
    const auto* wts = reinterpret_cast<const int8_t*>(ops.weights.data());
    const int32_t pad = static_cast<int8_t>(c.pad_value);
    const uint32_t N = c.out_c;
    for (uint32_t c1 = 0; c1 * c2 < N; ++c1) {
        const uint32_t ch0 = c1 * c2, nch = std::min(c2, N - ch0);
        for (uint32_t oy = 0; oy < c.out_h; ++oy)
            for (uint32_t ox = 0; ox < c.out_w; ++ox) {
                int32_t sum[kMaxC2] = {};
                for (uint32_t ky = 0; ky < c.kernel_h; ++ky) {
                    const int64_t iy =
                        static_cast<int64_t>(oy) * c.stride_y - c.pad_top + static_cast<int64_t>(ky) * c.dilation_y;
                    for (uint32_t kx = 0; kx < c.kernel_w; ++kx) {
                        const int64_t ix =
                            static_cast<int64_t>(ox) * c.stride_x - c.pad_left + static_cast<int64_t>(kx) * c.dilation_x;
                        const int8_t* wv = wts + (static_cast<uint64_t>(ky) * c.kernel_w + kx) * c.in_c + ch0;
                        if (iy < 0 || iy >= c.in_h || ix < 0 || ix >= c.in_w) {
                            for (uint32_t j = 0; j < c2; ++j) sum[j] += pad * wv[j];
                            continue;
                        }
                        const int8_t* xv =
                            feat + c1 * surf + (static_cast<uint64_t>(iy) * c.in_w + static_cast<uint64_t>(ix)) * c.atom;
                        for (uint32_t j = 0; j < c2; ++j) sum[j] += int32_t{xv[j]} * wv[j];
                    }
                }
                const uint64_t p = static_cast<uint64_t>(oy) * c.out_w + ox, P = static_cast<uint64_t>(c.out_w) * c.out_h;
                for (uint32_t j = 0; j < nch; ++j) acc[(ch0 + j) * P + p] = sum[j];
            }
    }
}

/// Planar int32 accumulators (out_c x out_h*out_w) of an int8 conv, CLIP_TRUNCATE applied.
int32_t* accumulate_int8_fast(const ConvConfig& c, const ConvOperands& ops) {
    thread_local std::vector<int32_t> acc_buf;
    const size_t n = static_cast<size_t>(c.out_w) * c.out_h * c.out_c;
    int32_t* acc = scratch(acc_buf, n);
    if (c.depthwise) accumulate_int8_depthwise(c, ops, acc);
    else accumulate_int8_gemm(c, ops, acc);
    apply_clip_truncate(acc, n, c.clip_truncate);
    return acc;
}

/// Pixels per GEMM + DPU round of the blocked path: the round's accumulators (out_c x 96 int32)
/// and im2col rows stay in the L2 cache between the GEMM that writes them and the DPU sweep.
constexpr uint64_t kChunkPixels = 96;

Surfaces conv_blocked_surfaces(const ConvConfig& c, const ConvOperands& ops, uint32_t used, const DpuConfig& d,
                               const DpuOperands& dops) {
    const detail::ConvBlocked g(c, ops, used);
    const uint64_t P = g.pixels();
    thread_local std::vector<int32_t> acc_buf, planar_buf;
    if (detail::dpu_blocked_ok(d)) {
        const detail::DpuBlocked dpu(d, dops);
        // The sweep writes every byte of every surface (all pixels, the padding lanes of the last
        // atom as zeros: DpuBlocked::sweep), so the buffers need no zero fill (buffer_pool.h).
        Surfaces out((d.c + d.atom - 1) / d.atom);
        for (auto& v : out) v = overwritten_buffer(surface_bytes(d.w, d.h, d.atom));
        int32_t* acc = scratch(acc_buf, static_cast<size_t>(g.blocks()) * detail::kAccBlock * std::min(P, kChunkPixels));
        for (uint64_t p0 = 0; p0 < P; p0 += kChunkPixels) {
            const uint64_t n = std::min(kChunkPixels, P - p0);
            if (!g.by_blocks()) {
                g.run(p0, n, acc);
                dpu.run(acc, p0, n, out);
                continue;
            }
            // Two blocks at a time (the GEMM's panel pair; 32 depthwise channels): their
            // accumulators (2 x 16 x 96 int32, 12 KiB) are still in the L1 cache when the sweep
            // reads them.
            for (uint32_t b = 0; b < g.blocks(); b += 2) {
                const uint32_t b1 = std::min(b + 2, g.blocks());
                g.run(p0, n, acc, b, b1);
                dpu.run(acc, p0, n, out, b, b1);
            }
        }
        return out;
    }
    int32_t* acc = scratch(acc_buf, static_cast<size_t>(g.blocks()) * detail::kAccBlock * P);
    g.run(0, P, acc);
    int32_t* planar = scratch(planar_buf, static_cast<size_t>(c.out_c) * P);
    detail::blocked_to_planar(acc, P, c.out_c, planar);
    return run_dpu_int_acc(d, planar, dops);
}

}  // namespace

DpuConfig conv_dpu_config(const ConvConfig& c) {
    DpuConfig d = c.dpu;
    d.w = c.out_w, d.h = c.out_h, d.c = c.out_c, d.atom = c.atom;
    return d;
}

void set_reference_engines(bool on) { g_reference.store(on, std::memory_order_relaxed); }
bool reference_engines() { return g_reference.load(std::memory_order_relaxed); }

Cube conv_accumulate(const ConvConfig& c, const ConvOperands& ops) {
    if (!fast_int8_ok(c)) return conv_accumulate_reference(c, ops);
    const int32_t* acc = accumulate_int8_fast(c, ops);
    Cube q = Cube::make(c.out_w, c.out_h, c.out_c, false);
    std::copy(acc, acc + q.size(), q.i.begin());  // planar = the cube's (c, y, x) order
    return q;
}

Cube conv_dpu_cube(const ConvConfig& c, const ConvOperands& ops, const std::vector<uint8_t>& bn,
                   const std::vector<uint8_t>& ew) {
    return run_dpu(conv_dpu_config(c), conv_accumulate(c, ops), DpuOperands{ops.bias, bn, ew});
}

bool conv_takes_raw_weights(const ConvConfig& c, uint64_t raw_bytes) {
    if (c.depthwise || !fast_int8_ok(c) || !dpu_fast_ok(conv_dpu_config(c)) || !detail::conv_blocked_ok(c, c.in_c) ||
        !detail::conv_packs_raw_weights(c))
        return false;
    if (c.in_c_real != 0 && c.in_c_real < c.in_c) return false;  // the C2 padding's weights are checked on the canonical copy
    const uint64_t elems = static_cast<uint64_t>(c.kernels) * c.kernel_w * c.kernel_h * c.in_c;
    return c.kernels > 0 && elems <= c.weight_bytes && c.weight_bytes <= raw_bytes;
}

Surfaces run_conv_surfaces(const ConvConfig& c, const ConvOperands& ops, const std::vector<uint8_t>& bn,
                           const std::vector<uint8_t>& ew) {
    const DpuConfig d = conv_dpu_config(c);
    if (ops.weights_raw) {  // execute_task checked conv_takes_raw_weights
        if (!fast_int8_ok(c) || !dpu_fast_ok(d) || !detail::conv_blocked_ok(c, c.in_c))
            throw std::logic_error("run_conv_surfaces: raw weights outside the blocked int8 path");
        return conv_blocked_surfaces(c, ops, c.in_c, d, DpuOperands{ops.bias, bn, ew});
    }
    if (fast_int8_ok(c) && dpu_fast_ok(d)) {
        const uint32_t used = c.depthwise ? c.in_c : used_channels(c, ops.weights.data());
        if (detail::conv_blocked_ok(c, used)) return conv_blocked_surfaces(c, ops, used, d, DpuOperands{ops.bias, bn, ew});
        return run_dpu_int_acc(d, accumulate_int8_fast(c, ops), DpuOperands{ops.bias, bn, ew});
    }
    const std::vector<uint8_t> img = pack_cube(run_dpu(d, conv_accumulate(c, ops), DpuOperands{ops.bias, bn, ew}), c.dpu.out, c.atom);
    const uint64_t surf = surface_bytes(c.out_w, c.out_h, c.atom);
    Surfaces out;
    for (uint64_t at = 0; at < img.size(); at += surf)
        out.emplace_back(img.begin() + static_cast<std::ptrdiff_t>(at), img.begin() + static_cast<std::ptrdiff_t>(at + surf));
    return out;
}

std::vector<uint8_t> run_conv(const ConvConfig& c, const ConvOperands& ops, const std::vector<uint8_t>& bn,
                              const std::vector<uint8_t>& ew) {
    std::vector<uint8_t> img;
    for (const auto& s : run_conv_surfaces(c, ops, bn, ew)) img.insert(img.end(), s.begin(), s.end());
    return img;
}

}  // namespace npu::rknpu
