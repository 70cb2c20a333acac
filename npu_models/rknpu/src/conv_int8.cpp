// SPDX-License-Identifier: MIT
#include "conv_int8.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "dpu_blocked.h"
#include "engine_cache.h"
#include "npu/rknpu/dpu_engine.h"
#include "numerics/gemm.h"
#include "numerics/requant.h"
#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace npu::rknpu::detail {

namespace {

template <typename T>
T* scratch(std::vector<T>& v, size_t n) {
    if (v.size() < n) v.resize(n);
    return v.data();
}

/// Bound of the weight panel cache per thread (weight images and their panels): ResNet50 v2 keeps
/// about 50 MB.
constexpr uint64_t kPackCacheBytes = uint64_t{512} << 20;

bool use_vnni() {
#if defined(__x86_64__)
    // The GEMM kernel choice of num::qgemm (gemm_force_generic selects the portable one).
    return std::strcmp(num::qgemm_kernel_name(), "avx512vnni") == 0;
#else
    return false;
#endif
}

/// The GEMM's pixel operand without an im2col: the input padded with the pad value to every
/// position a tap reads (Hp x Wp pixels per surface, rows Wp pixels apart), `bw` bytes per pixel
/// (C2 of every surface, c1s = in_c / C2; or the first 4 or 8 channels of the first surface alone,
/// c1s = 1, when the rest only meet zero weights), top bit flipped (x ^ 0x80 = x + 128 as u8, the
/// VNNI kernel's unsigned operand). Output pixel p's bytes for k block kb = tap * c1s + c1 are at
/// base + pix(p) + koff[kb]: the tap's offset is the same for every pixel.
struct AView {
    const uint8_t* base = nullptr;
    const uint64_t* koff = nullptr;
    uint32_t out_w = 1;
    uint64_t row_step = 0, col_step = 0;
    uint64_t pix(uint64_t p) const { return (p / out_w) * row_step + (p % out_w) * col_step; }
};

#if defined(__x86_64__) && defined(__GNUC__)
/// d = s ^ 0x80, 64 bytes per step (the byte loop of flip_copy compiles to 16-byte SSE2 steps).
__attribute__((target("avx512f,avx512bw"))) void flip_copy_avx512(uint8_t* __restrict d, const uint8_t* __restrict s,
                                                                   uint64_t n) {
    const __m512i m = _mm512_set1_epi8(static_cast<char>(0x80));
    uint64_t i = 0;
    for (; i + 64 <= n; i += 64)
        _mm512_storeu_si512(d + i, _mm512_xor_si512(_mm512_loadu_si512(s + i), m));
    if (i < n) {
        const __mmask64 k = ~__mmask64{0} >> (64 - (n - i));
        _mm512_mask_storeu_epi8(d + i, k, _mm512_xor_si512(_mm512_maskz_loadu_epi8(k, s + i), m));
    }
}
#endif

#if defined(__x86_64__) && defined(__GNUC__)
/// The first bw (4 or 8) bytes of each 16-byte pixel of `in`, flipped, packed: 4 pixels per 64-byte
/// load, their first dwords (or qwords) compressed together. Returns the pixels done (a multiple
/// of 4; the caller copies the rest).
__attribute__((target("avx512f,avx512bw,avx512vl"))) int64_t first_channels_avx512(uint8_t* __restrict d,
                                                                                   const uint8_t* __restrict in,
                                                                                   int64_t pixels, uint32_t bw) {
    const __m512i m = _mm512_set1_epi8(static_cast<char>(0x80));
    int64_t x = 0;
    for (; x + 4 <= pixels; x += 4) {
        const __m512i v = _mm512_xor_si512(_mm512_loadu_si512(in + x * 16), m);
        // Masked stores of the packed low bytes (no 128/256-bit casts: GCC 12's -Wmaybe-uninitialized).
        if (bw == 4) _mm512_mask_storeu_epi8(d + x * 4, __mmask64{0xFFFF}, _mm512_maskz_compress_epi32(0x1111, v));
        else _mm512_mask_storeu_epi8(d + x * 8, __mmask64{0xFFFFFFFF}, _mm512_maskz_compress_epi64(0x55, v));
    }
    return x;
}
#endif

void build_padded(const ConvConfig& c, const uint8_t* feat, uint8_t* A, uint32_t bw, uint32_t c1s, uint64_t Hp,
                  uint64_t Wp) {
    const uint32_t atom = c.atom;
    const uint64_t surf = static_cast<uint64_t>(c.in_w) * c.in_h * atom;
    const auto pad = static_cast<uint8_t>(static_cast<uint8_t>(static_cast<int8_t>(c.pad_value)) ^ 0x80u);
#if defined(__x86_64__) && defined(__GNUC__)
    const bool wide = engine_isa() == EngineIsa::Avx512;
#else
    const bool wide = false;
#endif
    const auto flip_copy = [wide](uint8_t* __restrict d, const uint8_t* __restrict s, uint64_t n) {
#if defined(__x86_64__) && defined(__GNUC__)
        if (wide && n >= 64) return flip_copy_avx512(d, s, n);
#endif
        for (uint64_t i = 0; i < n; ++i) d[i] = static_cast<uint8_t>(s[i] ^ 0x80u);
    };
    // Padded columns [lo, hi) hold input columns lo - pad_left ...
    const int64_t lo = std::min<int64_t>(c.pad_left, static_cast<int64_t>(Wp));
    const int64_t hi = std::max<int64_t>(lo, std::min<int64_t>(static_cast<int64_t>(Wp), int64_t{c.pad_left} + c.in_w));
    for (uint32_t c1 = 0; c1 < c1s; ++c1) {
        const uint8_t* plane = feat + c1 * surf;
        uint8_t* row = A + c1 * Hp * Wp * bw;
        for (uint64_t py = 0; py < Hp; ++py, row += Wp * bw) {
            const int64_t iy = static_cast<int64_t>(py) - c.pad_top;
            if (iy < 0 || iy >= c.in_h) {
                std::memset(row, pad, Wp * bw);
                continue;
            }
            if (lo > 0) std::memset(row, pad, static_cast<size_t>(lo) * bw);
            if (hi < static_cast<int64_t>(Wp)) std::memset(row + hi * bw, pad, static_cast<size_t>(static_cast<int64_t>(Wp) - hi) * bw);
            // A row of padding only (pad_left >= the padded width: lo = Wp, no input column lands in
            // it): nothing to copy, and lo - pad_left would point before the plane (regcmd_fuzz).
            if (hi <= lo) continue;
            const uint8_t* in = plane + (static_cast<uint64_t>(iy) * c.in_w + static_cast<uint64_t>(lo - c.pad_left)) * atom;
            if (bw == atom) {
                flip_copy(row + lo * bw, in, static_cast<uint64_t>(hi - lo) * bw);
            } else {
                int64_t x = 0;
#if defined(__x86_64__) && defined(__GNUC__)
                if (wide && atom == 16 && (bw == 4 || bw == 8))
                    x = first_channels_avx512(row + lo * bw, in, hi - lo, bw);
#endif
                for (; x < hi - lo; ++x) flip_copy(row + (lo + x) * bw, in + x * atom, bw);
            }
        }
    }
}

/// Weight panels: 16 kernels each, [K / 4][16][4] bytes (kernel n's weights k..k+3 together),
/// kernels past out_c zero; wsum[n] the sum of kernel n's weights.
void pack_weights(const uint8_t* W, uint32_t N, uint64_t K, uint32_t panels, int8_t* B, int32_t* wsum) {
    const uint64_t K4 = K / 4;
    std::memset(B, 0, panels * K4 * 64);
    std::fill(wsum, wsum + panels * kAccBlock, 0);
    for (uint32_t n = 0; n < N; ++n) {
        const uint8_t* row = W + n * K;
        int8_t* dst = B + (n / kAccBlock) * K4 * 64 + (n % kAccBlock) * 4;
        int32_t s = 0;
        for (uint64_t k = 0; k < K; ++k) s += static_cast<int8_t>(row[k]);
        for (uint64_t q = 0; q < K4; ++q) std::memcpy(dst + q * 64, row + q * 4, 4);
        wsum[n] = s;
    }
}

#if defined(__x86_64__)
/// pack_weights for AVX-512 VNNI: one gather of 16 kernels' 4 bytes per k group, the sums by
/// VPDPBUSD against ones (u8 1 x s8 weight, summed exactly in int32).
__attribute__((target("avx512f,avx512bw,avx512vnni"))) void pack_weights_vnni(const uint8_t* W, uint32_t N, uint64_t K,
                                                                            uint32_t panels, int8_t* B, int32_t* wsum) {
    const uint64_t K4 = K / 4;
    const __m512i ones = _mm512_set1_epi8(1);
    const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    for (uint32_t pn = 0; pn < panels; ++pn) {
        const uint32_t n0 = pn * kAccBlock, nk = std::min<uint32_t>(kAccBlock, N - n0);
        const __mmask16 live = static_cast<__mmask16>((1u << nk) - 1);
        // Byte offset of each kernel's row (K <= 32768 x 16 rows: fits int32).
        const __m512i rows = _mm512_mullo_epi32(lane, _mm512_set1_epi32(static_cast<int32_t>(K)));
        const uint8_t* base = W + static_cast<uint64_t>(n0) * K;
        int8_t* dst = B + static_cast<uint64_t>(pn) * K4 * 64;
        __m512i sum = _mm512_setzero_si512();
        for (uint64_t q = 0; q < K4; ++q) {
            const __m512i v = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), live, rows, base + 4 * q, 1);
            _mm512_storeu_si512(dst + q * 64, v);
            sum = _mm512_dpbusd_epi32(sum, ones, v);
        }
        _mm512_storeu_si512(wsum + n0, sum);
    }
}
#endif

#if defined(__x86_64__)
/// pack_weights_vnni from the CNA's block layout (hw::rknpu::weight_element: blocks of KG kernels
/// x CG channels per tap, kernel after kernel inside a block): a panel's 16 kernels lie inside one
/// block, nc bytes apart, so one gather per 4 channels still reads them. Kernels from `present` on
/// (past WEIGHT_KERNELS or out_c) are zero.
__attribute__((target("avx512f,avx512bw,avx512vnni"))) void pack_weights_raw_vnni(const ConvConfig& c, const uint8_t* W,
                                                                                uint32_t kernels, uint32_t present,
                                                                                uint32_t panels, int8_t* B,
                                                                                int32_t* wsum) {
    const uint64_t taps = static_cast<uint64_t>(c.kernel_w) * c.kernel_h, C = c.in_c, K4 = taps * C / 4;
    const uint64_t KG = c.wblocks.kernel_group, CG = c.wblocks.channel_group;
    const __m512i ones = _mm512_set1_epi8(1);
    const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    for (uint32_t pn = 0; pn < panels; ++pn) {
        const uint32_t n0 = pn * kAccBlock;
        int8_t* dst = B + static_cast<uint64_t>(pn) * K4 * 64;
        if (n0 >= present) {
            std::memset(dst, 0, K4 * 64);
            std::memset(wsum + n0, 0, kAccBlock * sizeof(int32_t));
            continue;
        }
        const __mmask16 live = static_cast<__mmask16>((1u << std::min<uint32_t>(kAccBlock, present - n0)) - 1);
        const uint64_t kg = n0 / KG, kin0 = n0 % KG, nk = std::min<uint64_t>(KG, kernels - kg * KG);
        const uint64_t gbase = kg * KG * taps * C;
        __m512i sum = _mm512_setzero_si512();
        for (uint64_t t = 0; t < taps; ++t)
            for (uint64_t ch0 = 0; ch0 < C; ch0 += CG) {
                const uint64_t nc = std::min<uint64_t>(CG, C - ch0);
                const uint8_t* base = W + gbase + nk * taps * ch0 + t * nk * nc + kin0 * nc;
                const __m512i idx = _mm512_mullo_epi32(lane, _mm512_set1_epi32(static_cast<int32_t>(nc)));
                int8_t* q = dst + (t * C + ch0) / 4 * 64;
                for (uint64_t c4 = 0; c4 < nc / 4; ++c4) {
                    const __m512i v = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), live, idx, base + 4 * c4, 1);
                    _mm512_storeu_si512(q + c4 * 64, v);
                    sum = _mm512_dpbusd_epi32(sum, ones, v);
                }
            }
        _mm512_storeu_si512(wsum + n0, sum);
    }
}
#endif

/// One panel of 16 kernels over pixels [p0, p0 + n): acc[i * 16 + j] (portable kernel).
template <uint32_t kBw>
void gemm_panel_portable(const AView& A, uint64_t K, const int8_t* B, const int32_t* wsum, uint64_t p0, uint64_t n,
                         int32_t* acc) {
    constexpr uint32_t kQ = kBw / 4;
    const uint64_t KB = K / kBw;
    for (uint64_t i = 0; i < n; ++i) {
        int32_t s[kAccBlock] = {};
        const uint8_t* ap = A.base + A.pix(p0 + i);
        for (uint64_t kb = 0; kb < KB; ++kb) {
            const uint8_t* a = ap + A.koff[kb];
            const int8_t* b = B + kb * kQ * 64;
            for (uint32_t t = 0; t < kQ; ++t)
                for (uint32_t j = 0; j < kAccBlock; ++j) {
                    const int8_t* w = b + t * 64 + j * 4;
                    s[j] += int32_t{a[4 * t]} * w[0] + int32_t{a[4 * t + 1]} * w[1] + int32_t{a[4 * t + 2]} * w[2] +
                            int32_t{a[4 * t + 3]} * w[3];
                }
        }
        for (uint32_t j = 0; j < kAccBlock; ++j) acc[i * kAccBlock + j] = s[j] - 128 * wsum[j];
    }
}

#if defined(__x86_64__)
constexpr int kMr = 8;  // pixels per register tile (x 2 panels: 16 zmm accumulators)

/// acc += u8 a x s8 b summed per 4 bytes (VPDPBUSD, the _mm512_dpbusd_epi32 operation) as an
/// in-place asm operand: with the intrinsic GCC 12 copies the 16 unrolled accumulators between
/// registers and the stack on every k step; the tied "+v" operand keeps each in one register.
__attribute__((target("avx512f,avx512vnni"), always_inline)) inline __m512i dpbusd_acc(__m512i acc, __m512i a, __m512i b) {
    asm("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(a), "v"(b));
    return acc;
}

/// kNp (1 or 2) panels of 16 kernels over pixels [p0, p0 + n): VPDPBUSD of the broadcast pixel
/// bytes (u8) against the weight panels (s8); acc0 = the first panel's block (n * 16 int32 apart).
/// kFlip: the pixel bytes are the signed input (s8), flipped to u8 (x ^ 0x80 = x + 128) as they
/// are broadcast; else they are the flipped copy already.
template <uint32_t kBw, int kNp, bool kFlip>
__attribute__((target("avx512f,avx512bw,avx512vnni"))) void gemm_vnni(const AView& A, uint64_t K, const int8_t* B,
                                                                    uint64_t panel_bytes, const int32_t* wsum,
                                                                    uint64_t p0, uint64_t n, int32_t* acc0) {
    const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));
    constexpr uint32_t kQ = kBw / 4;
    const uint64_t KB = K / kBw, blk = n * kAccBlock;
    const __m512i m128 = _mm512_set1_epi32(-128);
    const __m512i corr0 = _mm512_mullo_epi32(_mm512_loadu_si512(wsum), m128);
    const __m512i corr1 = kNp > 1 ? _mm512_mullo_epi32(_mm512_loadu_si512(wsum + kAccBlock), m128) : _mm512_setzero_si512();
    // The pixels' row and column advance one by one (A.pix without a division per pixel: with a
    // small K, as MobileNetV2's pointwise convs have, eight divisions cost as much as the tile's
    // multiply-adds).
    uint64_t py = p0 / A.out_w, px = p0 % A.out_w;
    for (uint64_t i0 = 0; i0 < n; i0 += kMr) {
        const int mr = static_cast<int>(std::min<uint64_t>(kMr, n - i0));
        const uint8_t* ar[kMr];
        __m512i c0[kMr], c1[kMr];
        for (int i = 0; i < kMr; ++i) {
            if (i < mr) {
                ar[i] = A.base + py * A.row_step + px * A.col_step;
                if (++px == A.out_w) px = 0, ++py;
            } else {
                ar[i] = ar[mr - 1];
            }
            c0[i] = _mm512_setzero_si512();
            c1[i] = _mm512_setzero_si512();
        }
        const int8_t* b = B;
        for (uint64_t kb = 0; kb < KB; ++kb, b += kQ * 64) {
            const uint64_t off = A.koff[kb];
            for (uint32_t t = 0; t < kQ; ++t) {
                const __m512i w0 = _mm512_loadu_si512(b + t * 64);
                const __m512i w1 = kNp > 1 ? _mm512_loadu_si512(b + panel_bytes + t * 64) : _mm512_setzero_si512();
                for (int i = 0; i < kMr; ++i) {
                    int32_t x;
                    std::memcpy(&x, ar[i] + off + 4 * t, 4);
                    __m512i av = _mm512_set1_epi32(x);
                    if constexpr (kFlip) av = _mm512_xor_si512(av, flip);
                    c0[i] = dpbusd_acc(c0[i], av, w0);
                    if (kNp > 1) c1[i] = dpbusd_acc(c1[i], av, w1);
                }
            }
        }
        for (int i = 0; i < mr; ++i) {
            _mm512_storeu_si512(acc0 + (i0 + i) * kAccBlock, _mm512_add_epi32(c0[i], corr0));
            if (kNp > 1) _mm512_storeu_si512(acc0 + blk + (i0 + i) * kAccBlock, _mm512_add_epi32(c1[i], corr1));
        }
    }
}
#endif

/// Depthwise: pixels [p0, p0 + n), C2 = kBw channels at a time (a direct loop over the taps,
/// vectorised across the atom's channels), into the blocked accumulators.
template <uint32_t kBw>
__attribute__((always_inline)) inline void depthwise_body(const ConvConfig& c, const int8_t* __restrict feat,
                                                          const int8_t* __restrict wts, uint64_t p0, uint64_t n,
                                                          int32_t* __restrict acc) {
    const uint64_t surf = static_cast<uint64_t>(c.in_w) * c.in_h * kBw;
    const int32_t pad = static_cast<int8_t>(c.pad_value);
    for (uint32_t ch0 = 0; ch0 < c.out_c; ch0 += kBw) {
        int32_t* dst = acc + (ch0 / kAccBlock) * n * kAccBlock + ch0 % kAccBlock;
        const int8_t* plane = feat + (ch0 / kBw) * surf;
        uint32_t oy = static_cast<uint32_t>(p0 / c.out_w), ox = static_cast<uint32_t>(p0 % c.out_w);
        for (uint64_t i = 0; i < n; ++i) {
            int32_t sum[kBw] = {};
            for (uint32_t ky = 0; ky < c.kernel_h; ++ky) {
                const int64_t iy = static_cast<int64_t>(oy) * c.stride_y - c.pad_top + static_cast<int64_t>(ky) * c.dilation_y;
                for (uint32_t kx = 0; kx < c.kernel_w; ++kx) {
                    const int64_t ix = static_cast<int64_t>(ox) * c.stride_x - c.pad_left + static_cast<int64_t>(kx) * c.dilation_x;
                    const int8_t* wv = wts + (static_cast<uint64_t>(ky) * c.kernel_w + kx) * c.in_c + ch0;
                    if (iy < 0 || iy >= c.in_h || ix < 0 || ix >= c.in_w) {
                        for (uint32_t j = 0; j < kBw; ++j) sum[j] += pad * wv[j];
                        continue;
                    }
                    const int8_t* xv = plane + (static_cast<uint64_t>(iy) * c.in_w + static_cast<uint64_t>(ix)) * kBw;
                    for (uint32_t j = 0; j < kBw; ++j) sum[j] += int32_t{xv[j]} * wv[j];
                }
            }
            for (uint32_t j = 0; j < kBw; ++j) dst[i * kAccBlock + j] = sum[j];
            if (++ox == c.out_w) ox = 0, ++oy;
        }
    }
}

using DwFn = void (*)(const ConvConfig&, const int8_t*, const int8_t*, uint64_t, uint64_t, int32_t*);
template <uint32_t kBw>
void depthwise_portable(const ConvConfig& c, const int8_t* f, const int8_t* w, uint64_t p0, uint64_t n, int32_t* acc) {
    depthwise_body<kBw>(c, f, w, p0, n, acc);
}
#if defined(__x86_64__) && defined(__GNUC__)
constexpr uint32_t kDwMaxTaps = 25;

/// depthwise_body for 16-channel atoms and up to 25 taps written out for AVX-512: the taps'
/// weights (and pad x weight) sign-extended into registers once per atom, one VPMULLD + VPADDD per
/// tap and pixel (exact int32 sums: at most 25 x 2^14). kVnni: one VPDPWSSD per tap and pixel
/// instead, the weight held as the int16 pair (w, 0) in each int32 lane: the sign-extended input
/// lane is the pair (x, sign), so the pair product x * w + sign * 0 is the same int32 product.
template <bool kVnni>
__attribute__((target("avx512f,avx512dq,avx512bw,avx512vl,avx512vnni"))) void depthwise16_avx512(const ConvConfig& c,
                                                                                                   const int8_t* feat,
                                                                                                   const int8_t* wts,
                                                                                                   uint64_t p0, uint64_t n,
                                                                                                   int32_t* acc) {
    const uint32_t taps = c.kernel_w * c.kernel_h;
    const uint64_t surf = static_cast<uint64_t>(c.in_w) * c.in_h * 16;
    const __m512i pad = _mm512_set1_epi32(static_cast<int8_t>(c.pad_value));
    __m512i w[kDwMaxTaps], pw[kDwMaxTaps];
    // Byte offset of each tap from the window's top-left pixel, and the window's extent - 1.
    uint64_t toff[kDwMaxTaps];
    for (uint32_t ky = 0, t = 0; ky < c.kernel_h; ++ky)
        for (uint32_t kx = 0; kx < c.kernel_w; ++kx, ++t)
            toff[t] = (static_cast<uint64_t>(ky) * c.dilation_y * c.in_w + static_cast<uint64_t>(kx) * c.dilation_x) * 16;
    const int64_t span_y = (static_cast<int64_t>(c.kernel_h) - 1) * c.dilation_y, span_x = (static_cast<int64_t>(c.kernel_w) - 1) * c.dilation_x;
    for (uint32_t ch0 = 0; ch0 < c.out_c; ch0 += 16) {
        for (uint32_t t = 0; t < taps; ++t) {
            w[t] = _mm512_maskz_cvtepi8_epi32(0xFFFF, _mm_loadu_si128(reinterpret_cast<const __m128i*>(wts + static_cast<uint64_t>(t) * c.in_c + ch0)));
            pw[t] = _mm512_mullo_epi32(w[t], pad);
            if constexpr (kVnni) w[t] = _mm512_and_si512(w[t], _mm512_set1_epi32(0xFFFF));
        }
        int32_t* dst = acc + (ch0 / kAccBlock) * n * kAccBlock;
        const int8_t* plane = feat + (ch0 / 16) * surf;
        uint32_t oy = static_cast<uint32_t>(p0 / c.out_w), ox = static_cast<uint32_t>(p0 % c.out_w);
        for (uint64_t i = 0; i < n; ++i) {
            __m512i sum = _mm512_setzero_si512();
            const int64_t y0 = static_cast<int64_t>(oy) * c.stride_y - c.pad_top, x0 = static_cast<int64_t>(ox) * c.stride_x - c.pad_left;
            if (y0 >= 0 && y0 + span_y < c.in_h && x0 >= 0 && x0 + span_x < c.in_w) {
                // The window inside the input: no bounds tests, the taps summed in three chains
                // (t mod 3) added at the end, so that the multiply-adds do not wait on each other's
                // latency; the sums are exact in int32 (at most 25 x 2^14), so any order gives the
                // same value.
                const int8_t* at = plane + (static_cast<uint64_t>(y0) * c.in_w + static_cast<uint64_t>(x0)) * 16;
                __m512i s1 = _mm512_setzero_si512(), s2 = _mm512_setzero_si512();
#define NPUSIM_DW_TAP(S, T)                                                                                         \
    do {                                                                                                            \
        const __m512i x_ = _mm512_maskz_cvtepi8_epi32(0xFFFF, _mm_loadu_si128(reinterpret_cast<const __m128i*>(at + toff[T]))); \
        if constexpr (kVnni) S = _mm512_dpwssd_epi32(S, x_, w[T]);                                                   \
        else S = _mm512_add_epi32(S, _mm512_mullo_epi32(x_, w[T]));                                                  \
    } while (0)
                uint32_t t = 0;
                for (; t + 3 <= taps; t += 3) {
                    NPUSIM_DW_TAP(sum, t);
                    NPUSIM_DW_TAP(s1, t + 1);
                    NPUSIM_DW_TAP(s2, t + 2);
                }
                for (; t < taps; ++t) NPUSIM_DW_TAP(sum, t);
#undef NPUSIM_DW_TAP
                sum = _mm512_add_epi32(sum, _mm512_add_epi32(s1, s2));
                _mm512_storeu_si512(dst + i * kAccBlock, sum);
                if (++ox == c.out_w) ox = 0, ++oy;
                continue;
            }
            for (uint32_t ky = 0, t = 0; ky < c.kernel_h; ++ky) {
                const int64_t iy = y0 + static_cast<int64_t>(ky) * c.dilation_y;
                for (uint32_t kx = 0; kx < c.kernel_w; ++kx, ++t) {
                    const int64_t ix = x0 + static_cast<int64_t>(kx) * c.dilation_x;
                    if (iy < 0 || iy >= c.in_h || ix < 0 || ix >= c.in_w) {
                        sum = _mm512_add_epi32(sum, pw[t]);
                        continue;
                    }
                    const auto* xv = reinterpret_cast<const __m128i*>(plane + (static_cast<uint64_t>(iy) * c.in_w + static_cast<uint64_t>(ix)) * 16);
                    const __m512i x = _mm512_maskz_cvtepi8_epi32(0xFFFF, _mm_loadu_si128(xv));
                    if constexpr (kVnni) sum = _mm512_dpwssd_epi32(sum, x, w[t]);
                    else sum = _mm512_add_epi32(sum, _mm512_mullo_epi32(x, w[t]));
                }
            }
            _mm512_storeu_si512(dst + i * kAccBlock, sum);
            if (++ox == c.out_w) ox = 0, ++oy;
        }
    }
}

/// Depthwise 16-channel atoms with the taps of a kernel row in quads (stride_x 1 or 2, dilation_x 1,
/// kernel_w <= 8), on the padded input of the GEMM path (build_padded: [group][Hp][Wp][16] bytes,
/// u = x ^ 0x80 = x + 128 as u8, padding the pad value flipped alike). One 64-byte load of four
/// consecutive pixels and a VPERMB give the quads (u[px][c], u[px+1][c], u[px+2][c], u[px+3][c])
/// of the 16 channels; one VPDPBUSD then sums four taps: sum (x + 128) w = sum x w + 128 sum w, so
/// the accumulator starts at -128 sum w (taps past kernel_w have weight 0, the bytes they meet are
/// padding or the next pixels). Exact int32 sums: the values of depthwise_body. Three loads,
/// permutes and multiply-adds per 3x3 output against nine sign extensions and multiply-adds.
struct DwPadded {
    const uint8_t* base = nullptr;
    uint64_t row_bytes = 0;    ///< Wp * 16
    uint64_t plane_bytes = 0;  ///< Hp * Wp * 16
    const int8_t* wq = nullptr;     ///< DwQuadsView::wq
    const int32_t* corr = nullptr;  ///< DwQuadsView::corr
};

/// The VPERMB index that turns four consecutive 16-byte pixels into the 16 channels' tap quads:
/// byte 4c + j of the result is byte 16j + c of the source.
struct QuadPerm {
    alignas(64) uint8_t b[64];
};
constexpr QuadPerm make_quad_perm() {
    QuadPerm p{};
    for (uint32_t ch = 0; ch < 16; ++ch)
        for (uint32_t j = 0; j < 4; ++j) p.b[4 * ch + j] = static_cast<uint8_t>(16 * j + ch);
    return p;
}
constexpr QuadPerm kQuadPerm = make_quad_perm();

/// DwQuadsView::wq / corr from the canonical depthwise weights ([tap][in_c], s8): a quad's four
/// taps' 16-channel rows in one vector, put in channel order by the VPERMB of the input quads.
__attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx512vbmi"))) void dw_weight_quads(
    const ConvConfig& c, const int8_t* wts, uint32_t nq, std::vector<int8_t>& wq, std::vector<int32_t>& corr) {
    const uint32_t kh = c.kernel_h, kw = c.kernel_w, groups = (c.out_c + 15) / 16;
    wq.resize(static_cast<size_t>(groups) * kh * nq * 64);
    corr.resize(static_cast<size_t>(groups) * 16);
    const __m512i perm = _mm512_load_si512(kQuadPerm.b);
    for (uint32_t g = 0; g < groups; ++g) {
        __m512i sum = _mm512_setzero_si512();
        for (uint32_t ky = 0; ky < kh; ++ky)
            for (uint32_t q = 0; q < nq; ++q) {
                __m512i rows = _mm512_setzero_si512();
                for (uint32_t j = 0; j < 4; ++j) {
                    const uint32_t kx = 4 * q + j;
                    if (kx >= kw) break;  // taps past the kernel: weight 0
                    const __m128i r = _mm_loadu_si128(
                        reinterpret_cast<const __m128i*>(wts + (static_cast<uint64_t>(ky) * kw + kx) * c.in_c + 16 * g));
                    rows = _mm512_mask_broadcast_i32x4(rows, static_cast<__mmask16>(0xF << (4 * j)), r);
                }
                const __m512i v = _mm512_maskz_permutexvar_epi8(~__mmask64{0}, perm, rows);
                _mm512_storeu_si512(wq.data() + ((static_cast<size_t>(g) * kh + ky) * nq + q) * 64, v);
                sum = _mm512_dpbusd_epi32(sum, _mm512_set1_epi8(static_cast<char>(0x80)), v);
            }
        _mm512_storeu_si512(corr.data() + 16 * g, _mm512_sub_epi32(_mm512_setzero_si512(), sum));
    }
}

template <uint32_t kNq>
__attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx512vbmi"))) void depthwise16_quads(
    const ConvConfig& c, const DwPadded& pd, const int8_t* wts, uint64_t p0, uint64_t n, int32_t* acc, uint32_t ch_begin,
    uint32_t ch_end) {
    constexpr uint32_t kMaxRows = 8;
    const uint32_t kh = c.kernel_h, sx = c.stride_x;
    (void)wts;
    const __m512i perm = _mm512_load_si512(kQuadPerm.b);
    for (uint32_t ch0 = ch_begin; ch0 < ch_end; ch0 += 16) {
        // Weight quads per kernel row (s8: w[ky][4q + j][c] in byte 4c + j), and -128 sum w.
        __m512i w[kMaxRows][kNq];
        const int8_t* wg = pd.wq + static_cast<uint64_t>(ch0 / 16) * kh * kNq * 64;
        for (uint32_t ky = 0; ky < kh; ++ky)
            for (uint32_t q = 0; q < kNq; ++q) w[ky][q] = _mm512_loadu_si512(wg + (ky * kNq + q) * 64);
        const __m512i corr = _mm512_loadu_si512(pd.corr + ch0);
        int32_t* dst = acc + (ch0 / kAccBlock) * n * kAccBlock;
        const uint8_t* plane = pd.base + static_cast<uint64_t>(ch0 / 16) * pd.plane_bytes;
        // Runs of output pixels within one row: the kernel rows' addresses once per run.
        const uint8_t* rows[kMaxRows];
        for (uint64_t i = 0; i < n;) {
            const uint64_t p = p0 + i;
            const uint32_t oy = static_cast<uint32_t>(p / c.out_w), ox0 = static_cast<uint32_t>(p % c.out_w);
            const uint64_t run = std::min<uint64_t>(n - i, c.out_w - ox0);
            for (uint32_t ky = 0; ky < kh; ++ky)
                rows[ky] = plane + (static_cast<uint64_t>(oy) * c.stride_y + static_cast<uint64_t>(ky) * c.dilation_y) * pd.row_bytes +
                           static_cast<uint64_t>(ox0) * sx * 16;
            const uint64_t step = static_cast<uint64_t>(sx) * 16;
            int32_t* out = dst + i * kAccBlock;
            if (kh == 3 && kNq == 1) {  // the common 3x3 (and 3x2, 3x4) kernel, unrolled
                const __m512i w0 = w[0][0], w1 = w[1][0], w2 = w[2][0];
                const uint8_t *a0 = rows[0], *a1 = rows[1], *a2 = rows[2];
                for (uint64_t k = 0; k < run; ++k, a0 += step, a1 += step, a2 += step) {
                    const __m512i x0 = _mm512_maskz_permutexvar_epi8(~__mmask64{0}, perm, _mm512_loadu_si512(a0));
                    const __m512i x1 = _mm512_maskz_permutexvar_epi8(~__mmask64{0}, perm, _mm512_loadu_si512(a1));
                    const __m512i x2 = _mm512_maskz_permutexvar_epi8(~__mmask64{0}, perm, _mm512_loadu_si512(a2));
                    __m512i s0 = _mm512_dpbusd_epi32(corr, x0, w0);
                    const __m512i s1 = _mm512_dpbusd_epi32(_mm512_setzero_si512(), x1, w1);
                    s0 = _mm512_dpbusd_epi32(s0, x2, w2);
                    _mm512_storeu_si512(out + k * kAccBlock, _mm512_add_epi32(s0, s1));
                }
            } else {
                for (uint64_t k = 0; k < run; ++k) {
                    __m512i s0 = corr, s1 = _mm512_setzero_si512();
                    for (uint32_t ky = 0; ky < kh; ++ky)
                        for (uint32_t q = 0; q < kNq; ++q) {
                            const __m512i x = _mm512_maskz_permutexvar_epi8(
                                ~__mmask64{0}, perm, _mm512_loadu_si512(rows[ky] + k * step + 64 * q));
                            if ((ky + q) & 1) s1 = _mm512_dpbusd_epi32(s1, x, w[ky][q]);
                            else s0 = _mm512_dpbusd_epi32(s0, x, w[ky][q]);
                        }
                    _mm512_storeu_si512(out + k * kAccBlock, _mm512_add_epi32(s0, s1));
                }
            }
            i += run;
        }
    }
}

/// The quad path applies: AVX-512 VBMI for the quads' byte transposition, VNNI, 16-channel atoms,
/// stride_x 1 or 2 (a quad starts at a multiple of the stride), dilation_x 1, 2..8 taps per row,
/// at most 8 kernel rows.
bool dw_quads_ok(const ConvConfig& c) {
    static const bool vbmi = __builtin_cpu_supports("avx512vbmi");
    return vbmi && use_vnni() && engine_isa() == EngineIsa::Avx512 && c.depthwise && c.c2() == 16 && c.atom == 16 &&
           (c.stride_x == 1 || c.stride_x == 2) && c.dilation_x == 1 && c.kernel_w >= 2 && c.kernel_w <= 8 &&
           c.kernel_h <= 8 && c.in_c % 16 == 0 && c.out_c <= c.in_c;
}

template <uint32_t kBw>
__attribute__((target("avx512f,avx512dq,avx512bw,avx512vl"))) void depthwise_avx512(const ConvConfig& c, const int8_t* f,
                                                                                      const int8_t* w, uint64_t p0,
                                                                                      uint64_t n, int32_t* acc) {
    if (kBw == 16 && c.kernel_w * c.kernel_h <= kDwMaxTaps)
        return use_vnni() ? depthwise16_avx512<true>(c, f, w, p0, n, acc) : depthwise16_avx512<false>(c, f, w, p0, n, acc);
    depthwise_body<kBw>(c, f, w, p0, n, acc);
}
template <uint32_t kBw>
__attribute__((target("avx2"))) void depthwise_avx2(const ConvConfig& c, const int8_t* f, const int8_t* w, uint64_t p0,
                                                    uint64_t n, int32_t* acc) {
    depthwise_body<kBw>(c, f, w, p0, n, acc);
}
#endif
template <uint32_t kBw>
DwFn pick_depthwise() {
#if defined(__x86_64__) && defined(__GNUC__)
    const EngineIsa i = engine_isa();
    if (i == EngineIsa::Avx512) return depthwise_avx512<kBw>;
    if (i == EngineIsa::Avx2) return depthwise_avx2<kBw>;
#endif
    return depthwise_portable<kBw>;
}

}  // namespace

namespace {
/// Pixel operand block width: 4 / 8 when only the first `used` <= 4 / 8 channels meet non-zero
/// weights (the C2 padding of a 3-channel stem), else C2 with every channel (those past `used`
/// meet zero weights and add exactly 0).
uint32_t block_width(const ConvConfig& c, uint32_t used) {
    if (used <= 4 && c.in_c > 4) return 4;
    if (used <= 8 && c.c2() == 16 && c.in_c > 8) return 8;
    return c.c2();
}
}  // namespace

bool conv_packs_raw_weights(const ConvConfig& c) {
    const uint32_t KG = c.wblocks.kernel_group, CG = c.wblocks.channel_group;
    return use_vnni() && !c.depthwise && KG > 0 && KG % kAccBlock == 0 && CG > 0 && CG % 4 == 0 && c.c2() == c.atom;
}

bool conv_blocked_ok(const ConvConfig& c, uint32_t used) {
    (void)used;
    return (c.atom == 16 || c.atom == 8) && c.c2() == c.atom && c.in_c % c.c2() == 0 && c.out_w > 0 && c.out_h > 0;
}

ConvBlocked::ConvBlocked(const ConvConfig& c, const ConvOperands& ops, uint32_t used) : c_(c), ops_(ops) {
    P_ = static_cast<uint64_t>(c.out_w) * c.out_h;
    bw_ = c.c2();
    blocks_ = (c.out_c + kAccBlock - 1) / kAccBlock;
    if (c.depthwise) {
#if defined(__x86_64__) && defined(__GNUC__)
        if (!reference_engines() && dw_quads_ok(c)) {
            const uint32_t nq = (c.kernel_w + 3) / 4;
            const uint64_t Hp = static_cast<uint64_t>(c.out_h - 1) * c.stride_y + static_cast<uint64_t>(c.kernel_h - 1) * c.dilation_y + 1;
            // Every quad's four pixels inside the row: up to column (out_w - 1) sx + 4 nq - 1.
            const uint64_t Wp = static_cast<uint64_t>(c.out_w - 1) * c.stride_x + 4 * nq;
            const uint32_t groups = (c.out_c + 15) / 16;
            thread_local std::vector<uint8_t> dw_buf;
            uint8_t* a = scratch(dw_buf, static_cast<uint64_t>(groups) * Hp * Wp * 16);
            build_padded(c, ops.feature.data(), a, 16, groups, Hp, Wp);
            auto q = std::make_shared<DwQuadsView>(DwQuadsView{a, Wp * 16, Hp * Wp * 16, nq, {}, {}});
            dw_weight_quads(c, reinterpret_cast<const int8_t*>(ops.weights.data()), nq, q->wq, q->corr);
            quads_ = std::move(q);
        }
#endif
        return;
    }
    bw_ = block_width(c, used);
    const uint32_t c1s = bw_ == c.c2() ? c.in_c / bw_ : 1;
    const uint64_t taps = static_cast<uint64_t>(c.kernel_w) * c.kernel_h, K_full = taps * c.in_c;
    K_ = taps * c1s * bw_;
    const std::vector<uint8_t>& wimg = ops.weight_image();
    if (ops.weights_shared && !ops.weights_raw) throw std::logic_error("conv: a shared weight image that is not raw");
    if (ops.weights_raw) {
        if (!conv_packs_raw_weights(c) || K_ != K_full) throw std::logic_error("conv: raw weights outside the blocked path");
        if (wimg.size() < static_cast<uint64_t>(ops.raw_kernels) * K_full)
            throw std::logic_error("conv: weight image smaller than the kernels");
    } else if (ops.weights.size() < K_full * c.out_c) {
        throw std::logic_error("conv: weight image smaller than the kernels");
    }
    thread_local std::vector<uint8_t> a_buf, w_buf;
    const uint64_t Hp = static_cast<uint64_t>(c.out_h - 1) * c.stride_y + static_cast<uint64_t>(c.kernel_h - 1) * c.dilation_y + 1;
    const uint64_t Wp = static_cast<uint64_t>(c.out_w - 1) * c.stride_x + static_cast<uint64_t>(c.kernel_w - 1) * c.dilation_x + 1;
    // The padded input is the input itself (no padding, every row and column read, all channels):
    // the VNNI GEMM flips the pixel bytes as it broadcasts them, so no flipped copy is made.
    const bool direct = use_vnni() && engine_isa() == EngineIsa::Avx512 && bw_ == c.atom && c1s * bw_ == c.in_c &&
                        c.pad_left == 0 && c.pad_top == 0 && Hp == c.in_h && Wp == c.in_w &&
                        ops.feature.size() >= c1s * Hp * Wp * bw_;
    const uint8_t* a = ops.feature.data();
    flip_ = direct;
    if (!direct) {
        uint8_t* padded = scratch(a_buf, c1s * Hp * Wp * bw_);
        build_padded(c, ops.feature.data(), padded, bw_, c1s, Hp, Wp);
        a = padded;
    }
    koff_.resize(K_ / bw_);
    for (uint64_t t = 0; t < taps; ++t)
        for (uint32_t c1 = 0; c1 < c1s; ++c1)
            koff_[t * c1s + c1] = (c1 * Hp * Wp + ((t / c.kernel_w) * c.dilation_y * Wp + (t % c.kernel_w) * c.dilation_x)) * bw_;
    row_step_ = c.stride_y * Wp * bw_, col_step_ = static_cast<uint64_t>(c.stride_x) * bw_;
    // The panels are a function of the weight image and these fields alone (engine_cache.h): a
    // repeated inference finds its layers' panels instead of packing them again.
    const bool vnni = use_vnni();
    const std::vector<int64_t> params{static_cast<int64_t>(K_), static_cast<int64_t>(K_full), static_cast<int64_t>(taps),
                                      bw_, c.out_c, blocks_, ops.weights_raw, ops.raw_kernels, c.in_c, c.kernel_w,
                                      c.kernel_h, c.wblocks.kernel_group, c.wblocks.channel_group, vnni};
    const CacheBytes image{wimg.data(), wimg.size()};
    thread_local ContentCache<PackedWeights> cache(kPackCacheBytes);
    // A shared image is immutable while referenced: the entry holds it, so the same address is the
    // same bytes (no comparison needed).
    thread_local IdentityCache<PackedWeights> by_image(kPackCacheBytes);
    packed_ = ops.weights_shared ? by_image.find(params, ops.weights_shared) : cache.find(params, {image});
    if (!packed_) {
        const uint8_t* W = wimg.data();
        if (K_ != K_full) {  // the kernels' weights of the channels taking part: [n][tap][bw]
            uint8_t* w = scratch(w_buf, K_ * c.out_c);
            for (uint64_t n = 0; n < c.out_c; ++n)
                for (uint64_t t = 0; t < taps; ++t) std::memcpy(w + (n * taps + t) * bw_, W + n * K_full + t * c.in_c, bw_);
            W = w;
        }
        auto p = std::make_shared<PackedWeights>();
        p->b.resize(static_cast<size_t>(blocks_) * K_ * kAccBlock);
        p->s.resize(static_cast<size_t>(blocks_ + 1) * kAccBlock);
        int8_t* b = p->b.data();
        int32_t* s = p->s.data();
#if defined(__x86_64__)
        if (ops.weights_raw)
            pack_weights_raw_vnni(c, W, ops.raw_kernels, std::min(ops.raw_kernels, c.out_c), blocks_, b, s);
        else if (vnni) pack_weights_vnni(W, c.out_c, K_, blocks_, b, s);
        else pack_weights(W, c.out_c, K_, blocks_, b, s);
#else
        (void)vnni;
        pack_weights(W, c.out_c, K_, blocks_, b, s);
#endif
        if (ops.weights_shared)
            by_image.insert(params, ops.weights_shared, p, p->b.size() + 4 * p->s.size());
        else
            cache.insert(params, {image}, p, p->b.size() + 4 * p->s.size());
        packed_ = std::move(p);
    }
    a_ = a, b_ = packed_->b.data(), wsum_ = packed_->s.data();
}

void ConvBlocked::run(uint64_t p0, uint64_t n, int32_t* acc, uint32_t b0, uint32_t b1) const {
    const ConvConfig& c = c_;
    if (c.depthwise) {
        if (!quads_) b0 = 0, b1 = blocks_;
        const auto* f = reinterpret_cast<const int8_t*>(ops_.feature.data());
        const auto* w = reinterpret_cast<const int8_t*>(ops_.weights.data());
#if defined(__x86_64__) && defined(__GNUC__)
        if (quads_) {
            const DwPadded pd{quads_->base, quads_->row_bytes, quads_->plane_bytes, quads_->wq.data(), quads_->corr.data()};
            const uint32_t ch0 = b0 * kAccBlock, ch1 = std::min(b1 * kAccBlock, c.out_c);
            if (quads_->nq == 1) depthwise16_quads<1>(c, pd, w, p0, n, acc, ch0, ch1);
            else depthwise16_quads<2>(c, pd, w, p0, n, acc, ch0, ch1);
        } else
#endif
        {
            (bw_ == 16 ? pick_depthwise<16>() : pick_depthwise<8>())(c, f, w, p0, n, acc);
        }
    } else {
        const uint64_t panel = K_ * kAccBlock;  // bytes of one weight panel
        AView av;
        av.base = a_, av.koff = koff_.data(), av.out_w = c.out_w, av.row_step = row_step_, av.col_step = col_step_;
        const uint64_t blk = n * kAccBlock;
        uint32_t pn = b0;
#if defined(__x86_64__)
        if (use_vnni()) {
            using Fn = void (*)(const AView&, uint64_t, const int8_t*, uint64_t, const int32_t*, uint64_t, uint64_t, int32_t*);
            const Fn two = flip_ ? (bw_ == 16 ? gemm_vnni<16, 2, true> : bw_ == 8 ? gemm_vnni<8, 2, true> : gemm_vnni<4, 2, true>)
                                 : (bw_ == 16 ? gemm_vnni<16, 2, false> : bw_ == 8 ? gemm_vnni<8, 2, false> : gemm_vnni<4, 2, false>);
            const Fn one = flip_ ? (bw_ == 16 ? gemm_vnni<16, 1, true> : bw_ == 8 ? gemm_vnni<8, 1, true> : gemm_vnni<4, 1, true>)
                                 : (bw_ == 16 ? gemm_vnni<16, 1, false> : bw_ == 8 ? gemm_vnni<8, 1, false> : gemm_vnni<4, 1, false>);
            for (; pn + 2 <= b1; pn += 2) two(av, K_, b_ + pn * panel, panel, wsum_ + pn * kAccBlock, p0, n, acc + pn * blk);
            if (pn < b1) one(av, K_, b_ + pn * panel, panel, wsum_ + pn * kAccBlock, p0, n, acc + pn * blk);
            pn = b1;
        }
#endif
        for (; pn < b1; ++pn) {
            const auto fn = bw_ == 16 ? gemm_panel_portable<16> : bw_ == 8 ? gemm_panel_portable<8> : gemm_panel_portable<4>;
            fn(av, K_, b_ + pn * panel, wsum_ + pn * kAccBlock, p0, n, acc + pn * blk);
        }
    }
    if (c.clip_truncate) {  // CORE_CLIP_TRUNCATE: shifted right (half up) and saturated to 32 bits
        const uint64_t total = static_cast<uint64_t>(b1) * n * kAccBlock;
        for (uint64_t i = static_cast<uint64_t>(b0) * n * kAccBlock; i < total; ++i)
            acc[i] = static_cast<int32_t>(num::saturate(
                num::mul_shift(acc[i], 1, static_cast<int>(c.clip_truncate), num::Rounding::HalfUp), INT32_MIN, INT32_MAX));
    }
}

}  // namespace npu::rknpu::detail
