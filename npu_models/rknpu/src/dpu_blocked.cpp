// SPDX-License-Identifier: MIT
#include "dpu_blocked.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "engine_cache.h"
#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace npu::rknpu::detail {

namespace {

inline int64_t sat32(int64_t v) { return v < INT32_MIN ? INT32_MIN : (v > INT32_MAX ? INT32_MAX : v); }

/// mul_shift(x, mul, shift, HalfUp) as dpu_engine.cpp's fast_shr.
inline int64_t shr(int64_t x, int64_t mul, uint32_t shift) {
    const int64_t p = x * static_cast<int64_t>(static_cast<int32_t>(mul));
    if (shift == 0) return p;
    return (p >> shift) + ((p >> (shift - 1)) & 1);
}

bool ew_from_mem(const DpuConfig& d) { return !d.ew.bypass && !d.ew.op_bypass && d.ew.op_from_mem; }

/// One output surface, pixels [0, n): input lanes at in[p * 16 + j], EW operand and output at
/// [p * kLanes + j]. The arithmetic of dpu_engine.cpp's simple_row_body (BS, BN, EW add, output
/// convert), with the per-channel constants per lane; branch-free so that it vectorises.
template <bool kI8In, bool kEwMem, bool kEwCvt, uint32_t kLanes>
__attribute__((always_inline)) inline void blocked_body(const void* __restrict in_v, const int8_t* __restrict ew,
                                                        int8_t* __restrict out, uint64_t n, const DpuBlocked::Lanes& L,
                                                        const DpuBlocked::Scalars& k) {
    int64_t a[kLanes], m[kLanes], lo[kLanes], hi[kLanes], a2[kLanes], m2[kLanes], lo2[kLanes], hi2[kLanes], ec[kLanes];
    for (uint32_t j = 0; j < kLanes; ++j) {
        a[j] = L.a[j], m[j] = L.m[j], lo[j] = L.lo[j], hi[j] = L.hi[j];
        a2[j] = L.a2[j], m2[j] = L.m2[j], lo2[j] = L.lo2[j], hi2[j] = L.hi2[j], ec[j] = L.e[j];
    }
    const int64_t m_half = k.m_half, msh = k.msh, m2_half = k.m2_half, msh2 = k.msh2;
    const int64_t e_off = k.e_off, e_scale = k.e_scale, e_half = k.e_half, e_shift = k.e_shift;
    const int64_t ew_lo = k.ew_lo, ew_hi = k.ew_hi, scale = k.scale, s_half = k.s_half, shift = k.shift, offset = k.offset;
    const auto* in32 = static_cast<const int32_t*>(in_v);
    const auto* in8 = static_cast<const int8_t*>(in_v);
    for (uint64_t p = 0; p < n; ++p)
        for (uint32_t j = 0; j < kLanes; ++j) {
            int64_t v = (kI8In ? int64_t{in8[p * kLanes + j]} : int64_t{in32[p * kAccBlock + j]}) + a[j];
            v = v < INT32_MIN ? INT32_MIN : (v > INT32_MAX ? INT32_MAX : v);
            v = (v * m[j] + m_half) >> msh;
            v = v < INT32_MIN ? INT32_MIN : (v > INT32_MAX ? INT32_MAX : v);
            v = v < lo[j] ? lo[j] : v;
            v = v > hi[j] ? hi[j] : v;
            v += a2[j];
            v = v < INT32_MIN ? INT32_MIN : (v > INT32_MAX ? INT32_MAX : v);
            v = (v * m2[j] + m2_half) >> msh2;
            v = v < INT32_MIN ? INT32_MIN : (v > INT32_MAX ? INT32_MAX : v);
            v = v < lo2[j] ? lo2[j] : v;
            v = v > hi2[j] ? hi2[j] : v;
            int64_t e = ec[j];
            if constexpr (kEwMem) {
                e = ew[p * kLanes + j];
                if constexpr (kEwCvt) {
                    e = ((e + e_off) * e_scale + e_half) >> e_shift;
                    e = e < INT32_MIN ? INT32_MIN : (e > INT32_MAX ? INT32_MAX : e);
                }
            }
            v += e;
            v = v < INT32_MIN ? INT32_MIN : (v > INT32_MAX ? INT32_MAX : v);
            v = v < ew_lo ? ew_lo : v;
            v = v > ew_hi ? ew_hi : v;
            int64_t q = ((v * scale + s_half) >> shift) + offset;
            q = q < -128 ? -128 : (q > 127 ? 127 : q);
            out[p * kLanes + j] = static_cast<int8_t>(q);
        }
}

using BodyFn = void (*)(const void*, const int8_t*, int8_t*, uint64_t, const DpuBlocked::Lanes&, const DpuBlocked::Scalars&);

template <bool kI8In, bool kEwMem, bool kEwCvt, uint32_t kLanes>
void body_portable(const void* in, const int8_t* ew, int8_t* out, uint64_t n, const DpuBlocked::Lanes& L,
                   const DpuBlocked::Scalars& k) {
    blocked_body<kI8In, kEwMem, kEwCvt, kLanes>(in, ew, out, n, L, k);
}
#if defined(__x86_64__) && defined(__GNUC__)
#define NPUSIM_X86_DISPATCH 1
#define NPUSIM_T512 __attribute__((target("avx512f,avx512dq,avx512bw,avx512vl")))
// maskz forms with a full mask: the same instructions, without the _mm512_undefined_* operand that
// GCC 12 reports as maybe-uninitialised.
constexpr __mmask8 kAll8 = 0xFF;
NPUSIM_T512 inline __m512i add64(__m512i a, __m512i b) { return _mm512_maskz_add_epi64(kAll8, a, b); }
NPUSIM_T512 inline __m512i clamp64(__m512i v, __m512i lo, __m512i hi) {
    return _mm512_maskz_min_epi64(kAll8, _mm512_maskz_max_epi64(kAll8, v, lo), hi);
}
NPUSIM_T512 inline __m512i mul32(__m512i a, __m512i b) { return _mm512_maskz_mul_epi32(kAll8, a, b); }
NPUSIM_T512 inline __m512i sra64(__m512i a, __m128i n) { return _mm512_maskz_sra_epi64(kAll8, a, n); }

template <bool kI8In, bool kEwMem, bool kEwCvt, uint32_t kLanes>
__attribute__((target("avx2"))) void body_avx2(const void* in, const int8_t* ew, int8_t* out, uint64_t n,
                                               const DpuBlocked::Lanes& L, const DpuBlocked::Scalars& k) {
    blocked_body<kI8In, kEwMem, kEwCvt, kLanes>(in, ew, out, n, L, k);
}
/// blocked_body written out for AVX-512 (the compiler does not vectorise the lane loop well): 8
/// lanes per register as int64, the same operations in the same order, with the steps that are
/// identities for the task left out (kBn: 0 BN bypassed, 1 BN without its ALU add, 2 full BN; kEw:
/// an EW addend or clamp). The multiplies take int32 operands (values saturated to 32 bits times
/// 16-bit or 32-bit constants), so VPMULDQ gives the exact 64-bit product; the EW convert's
/// (e + offset) may exceed 32 bits and uses VPMULLQ. A saturation to int32 followed by a ReLU /
/// ReLUX clamp is one clamp to the intersected bounds (Lanes::lo1 etc.: exact, as the lower bound
/// is 0 or -inf). kBsShift false: the BS multiply's shift is 0 (its rounding half 0), the add and
/// shift left out. The output's clamp to [-128, 127] and narrowing are one VPMOVSQB (signed
/// saturation to int8: the same value). kUnitOut: OUT_CVT_SCALE 1 and OUT_CVT_SHIFT <= 30, the
/// offset folded into the rounding addend ((x + h) >> s) + o = (x + h + (o << s)) >> s (floor
/// division; |x + h + (o << s)| < 2^63 for int32 x and o).
template <bool kI8In, bool kEwMem, bool kEwCvt, uint32_t kLanes, int kBn, bool kEw, bool kBsShift, bool kUnitOut>
NPUSIM_T512 void body_avx512(const void* in_v, const int8_t* ew, int8_t* out, uint64_t n, const DpuBlocked::Lanes& L,
                             const DpuBlocked::Scalars& k) {
    constexpr uint32_t kH = kLanes / 8;
    __m512i a[kH], m[kH], lo[kH], hi[kH], a2[kH], m2[kH], lo2[kH], hi2[kH], ec[kH];
    const auto bound = [](int64_t v) { return std::min<int64_t>(std::max<int64_t>(v, INT32_MIN), INT32_MAX); };
    for (uint32_t h = 0; h < kH; ++h) {
        int64_t l1[8], h1[8], l2[8], h2[8];
        for (uint32_t j = 0; j < 8; ++j) {
            l1[j] = bound(L.lo[8 * h + j]), h1[j] = bound(L.hi[8 * h + j]);
            l2[j] = bound(L.lo2[8 * h + j]), h2[j] = bound(L.hi2[8 * h + j]);
        }
        a[h] = _mm512_loadu_si512(L.a + 8 * h), m[h] = _mm512_loadu_si512(L.m + 8 * h);
        lo[h] = _mm512_loadu_si512(l1), hi[h] = _mm512_loadu_si512(h1);
        a2[h] = _mm512_loadu_si512(L.a2 + 8 * h), m2[h] = _mm512_loadu_si512(L.m2 + 8 * h);
        lo2[h] = _mm512_loadu_si512(l2), hi2[h] = _mm512_loadu_si512(h2);
        ec[h] = _mm512_loadu_si512(L.e + 8 * h);
    }
    const __m512i i32lo = _mm512_set1_epi64(INT32_MIN), i32hi = _mm512_set1_epi64(INT32_MAX);
    const __m512i mh = _mm512_set1_epi64(k.m_half), m2h = _mm512_set1_epi64(k.m2_half);
    const __m512i eoff = _mm512_set1_epi64(k.e_off), escale = _mm512_set1_epi64(k.e_scale), ehalf = _mm512_set1_epi64(k.e_half);
    const __m512i ewlo = _mm512_set1_epi64(bound(k.ew_lo)), ewhi = _mm512_set1_epi64(bound(k.ew_hi));
    const __m512i scale = _mm512_set1_epi64(k.scale), shalf = _mm512_set1_epi64(k.s_half), offset = _mm512_set1_epi64(k.offset);
    const bool unit_scale = k.scale == 1;
    const __m512i shalf_off = _mm512_set1_epi64(kUnitOut ? k.s_half + k.offset * (int64_t{1} << k.shift) : 0);
    const __m128i sh1 = _mm_cvtsi64_si128(k.msh), sh2 = _mm_cvtsi64_si128(k.msh2), she = _mm_cvtsi64_si128(k.e_shift);
    const __m128i shq = _mm_cvtsi64_si128(k.shift);
    const auto* in32 = static_cast<const int32_t*>(in_v);
    const auto* in8 = static_cast<const int8_t*>(in_v);
    for (uint64_t p = 0; p < n; ++p)
        for (uint32_t h = 0; h < kH; ++h) {
            __m512i v;
            if constexpr (kI8In)
                v = _mm512_maskz_cvtepi8_epi64(kAll8, _mm_loadl_epi64(reinterpret_cast<const __m128i*>(in8 + p * kLanes + 8 * h)));
            else
                v = _mm512_maskz_cvtepi32_epi64(kAll8, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in32 + p * kAccBlock + 8 * h)));
            v = clamp64(add64(v, a[h]), i32lo, i32hi);
            if constexpr (kBsShift) v = clamp64(sra64(add64(mul32(v, m[h]), mh), sh1), lo[h], hi[h]);
            else v = clamp64(mul32(v, m[h]), lo[h], hi[h]);
            if constexpr (kBn > 0) {
                if constexpr (kBn > 1) v = clamp64(add64(v, a2[h]), i32lo, i32hi);
                v = clamp64(sra64(add64(mul32(v, m2[h]), m2h), sh2), lo2[h], hi2[h]);
            }
            if constexpr (kEw) {
                __m512i e = ec[h];
                if constexpr (kEwMem) {
                    e = _mm512_maskz_cvtepi8_epi64(kAll8, _mm_loadl_epi64(reinterpret_cast<const __m128i*>(ew + p * kLanes + 8 * h)));
                    if constexpr (kEwCvt)
                        e = clamp64(sra64(add64(_mm512_maskz_mullo_epi64(kAll8, add64(e, eoff), escale), ehalf), she), i32lo, i32hi);
                }
                v = clamp64(add64(v, e), ewlo, ewhi);
            }
            // OUT_CVT_SCALE 1 (every requantizing conv): v * 1 = v, the multiply left out.
            __m512i q;
            if constexpr (kUnitOut) q = sra64(add64(v, shalf_off), shq);
            else q = add64(sra64(add64(unit_scale ? v : mul32(v, scale), shalf), shq), offset);
            _mm_storel_epi64(reinterpret_cast<__m128i*>(out + p * kLanes + 8 * h), _mm512_maskz_cvtsepi64_epi8(kAll8, q));
        }
}

/// dpu_engine.cpp's simple_surface_body for AVX-512. Its first step adds the int32 ALU operand to
/// the int8 input without saturating, so the sum may take 33 bits: the BS multiply is VPMULDQ
/// only when every lane's operand keeps it inside int32 (kWide: VPMULLQ otherwise). The output's
/// clamp and narrowing are one VPMOVSQB, as in body_avx512.
template <bool kEwMem, bool kEwCvt, uint32_t kLanes, bool kWide>
NPUSIM_T512 void surface_avx512(const int8_t* in, const int8_t* ew, int8_t* out, uint64_t P, const SurfaceK& k) {
    constexpr uint32_t kH = kLanes / 8;
    __m512i a[kH], m[kH], lo[kH], hi[kH];
    const auto bound = [](int64_t v) { return std::min<int64_t>(std::max<int64_t>(v, INT32_MIN), INT32_MAX); };
    for (uint32_t h = 0; h < kH; ++h) {
        int64_t l1[8], h1[8];
        for (uint32_t j = 0; j < 8; ++j) l1[j] = bound(k.lo[8 * h + j]), h1[j] = bound(k.hi[8 * h + j]);
        a[h] = _mm512_loadu_si512(k.a + 8 * h), m[h] = _mm512_loadu_si512(k.m + 8 * h);
        lo[h] = _mm512_loadu_si512(l1), hi[h] = _mm512_loadu_si512(h1);
    }
    const __m512i i32lo = _mm512_set1_epi64(INT32_MIN), i32hi = _mm512_set1_epi64(INT32_MAX);
    const __m512i mh = _mm512_set1_epi64(k.m_half), econst = _mm512_set1_epi64(k.e_const);
    const __m512i eoff = _mm512_set1_epi64(k.e_off), escale = _mm512_set1_epi64(k.e_scale), ehalf = _mm512_set1_epi64(k.e_half);
    const __m512i ewlo = _mm512_set1_epi64(bound(k.ew_lo)), ewhi = _mm512_set1_epi64(bound(k.ew_hi));
    const __m512i scale = _mm512_set1_epi64(k.scale), shalf = _mm512_set1_epi64(k.s_half), offset = _mm512_set1_epi64(k.offset);
    const bool unit_scale = k.scale == 1;
    const __m128i sh1 = _mm_cvtsi64_si128(k.msh), she = _mm_cvtsi64_si128(k.e_shift), shq = _mm_cvtsi64_si128(k.shift);
    for (uint64_t p = 0; p < P; ++p)
        for (uint32_t h = 0; h < kH; ++h) {
            const uint64_t i = p * kLanes + 8 * h;
            __m512i v = _mm512_maskz_cvtepi8_epi64(kAll8, _mm_loadl_epi64(reinterpret_cast<const __m128i*>(in + i)));
            v = add64(v, a[h]);
            v = kWide ? _mm512_maskz_mullo_epi64(kAll8, v, m[h]) : mul32(v, m[h]);
            v = clamp64(sra64(add64(v, mh), sh1), lo[h], hi[h]);
            __m512i e = econst;
            if constexpr (kEwMem) {
                e = _mm512_maskz_cvtepi8_epi64(kAll8, _mm_loadl_epi64(reinterpret_cast<const __m128i*>(ew + i)));
                if constexpr (kEwCvt)
                    e = clamp64(sra64(add64(_mm512_maskz_mullo_epi64(kAll8, add64(e, eoff), escale), ehalf), she), i32lo, i32hi);
            }
            v = clamp64(add64(v, e), ewlo, ewhi);
            // OUT_CVT_SCALE 1 (every requantizing conv): v * 1 = v, the multiply left out.
            __m512i q = add64(sra64(add64(unit_scale ? v : mul32(v, scale), shalf), shq), offset);
            _mm_storel_epi64(reinterpret_cast<__m128i*>(out + i), _mm512_maskz_cvtsepi64_epi8(kAll8, q));
        }
}

/// Whether surface_avx512's arithmetic stays inside int32 for every int8 input and EW operand, so
/// that surface32_avx512 may run it on 16 int32 lanes: each step is monotone in its input (a
/// multiply by a constant, an add, a floor shift, a clamp), so the extremes of every intermediate
/// come from the extremes before it, starting from in, ew in [-128, 127]. The int32 saturations
/// are then no-ops, and the output's clamp to int8 is VPMOVSDB's signed saturation.
/// Returns 0 (no), 1 (every step in int32) or 2 (every step but the output convert, whose product
/// with OUT_CVT_SCALE is formed in int64 as in surface_avx512, offset folded into the rounding
/// addend: ((x + h) >> s) + o = (x + h + (o << s)) >> s).
int surface32_ok(bool ew_mem, bool ew_cvt, uint32_t lanes, const SurfaceK& k) {
    const auto fits = [](int64_t v) { return v >= INT32_MIN && v <= INT32_MAX; };
    const auto bound = [](int64_t v) { return std::min<int64_t>(std::max<int64_t>(v, INT32_MIN), INT32_MAX); };
    if (k.msh > 31 || k.shift > 62 || (ew_mem && ew_cvt && k.e_shift > 31)) return 0;
    bool narrow = k.shift <= 31;
    // (x * mul + add) >> sh over [lo, hi]: false when a value leaves int32; else the new extremes.
    const auto step = [&](int64_t& lo, int64_t& hi, int64_t mul, int64_t add, int64_t sh) {
        const int64_t p = lo * mul, q = hi * mul;
        if (!fits(p) || !fits(q) || !fits(p + add) || !fits(q + add)) return false;
        lo = (std::min(p, q) + add) >> sh, hi = (std::max(p, q) + add) >> sh;
        return true;
    };
    int64_t elo = k.e_const, ehi = k.e_const;
    if (ew_mem) {
        elo = -128, ehi = 127;
        if (ew_cvt && (!fits(elo + k.e_off) || !fits(ehi + k.e_off))) return 0;
        if (ew_cvt) elo += k.e_off, ehi += k.e_off;
        if (ew_cvt && !step(elo, ehi, k.e_scale, k.e_half, k.e_shift)) return 0;
    }
    if (!fits(elo) || !fits(ehi)) return 0;
    for (uint32_t j = 0; j < lanes; ++j) {
        int64_t lo = -128 + k.a[j], hi = 127 + k.a[j];
        if (!fits(lo) || !fits(hi) || !step(lo, hi, k.m[j], k.m_half, k.msh)) return 0;
        const int64_t l1 = bound(k.lo[j]), h1 = bound(k.hi[j]);
        lo = std::min(std::max(lo, l1), h1), hi = std::min(std::max(hi, l1), h1);
        lo += elo, hi += ehi;
        if (!fits(lo) || !fits(hi)) return 0;
        const int64_t l2 = bound(k.ew_lo), h2 = bound(k.ew_hi);
        lo = std::min(std::max(lo, l2), h2), hi = std::min(std::max(hi, l2), h2);
        // The output convert: in int32, or the int64 form (|v| < 2^31, |scale| < 2^31, |h + (o << s)| < 2^61).
        if (narrow) {
            int64_t l3 = lo, h3 = hi;
            narrow = step(l3, h3, k.scale, k.s_half, k.shift) && fits(l3 + k.offset) && fits(h3 + k.offset);
        }
    }
    if (narrow) return 1;
    if (k.scale > INT32_MAX || k.scale < INT32_MIN || k.offset > INT32_MAX || k.offset < INT32_MIN) return 0;
    int64_t t = 0;
    if (__builtin_mul_overflow(k.offset, int64_t{1} << k.shift, &t) || __builtin_add_overflow(t, k.s_half, &t)) return 0;
    return t <= (int64_t{1} << 61) && t >= -(int64_t{1} << 61) ? 2 : 0;
}

constexpr __mmask16 kAll16 = 0xFFFF;
NPUSIM_T512 inline __m512i sra32(__m512i a, __m128i n) { return _mm512_maskz_sra_epi32(kAll16, a, n); }
NPUSIM_T512 inline __m512i max32(__m512i a, __m512i b) { return _mm512_maskz_max_epi32(kAll16, a, b); }
NPUSIM_T512 inline __m512i min32(__m512i a, __m512i b) { return _mm512_maskz_min_epi32(kAll16, a, b); }

/// surface_avx512 on 16 int32 lanes where surface32_ok holds (one pixel of a 16-lane atom, two of
/// an 8-lane one per vector): the same operations in the same order without the int32
/// saturations (no-ops there). An odd last pixel of 8 lanes goes to surface_avx512.
template <bool kEwMem, bool kEwCvt, uint32_t kLanes, bool kWideOut>
NPUSIM_T512 void surface32_avx512(const int8_t* in, const int8_t* ew, int8_t* out, uint64_t P, const SurfaceK& k) {
    const auto bound = [](int64_t v) { return static_cast<int32_t>(std::min<int64_t>(std::max<int64_t>(v, INT32_MIN), INT32_MAX)); };
    int32_t a[16], m[16], lo[16], hi[16];
    for (uint32_t j = 0; j < 16; ++j) {
        const uint32_t l = j % kLanes;
        a[j] = static_cast<int32_t>(k.a[l]), m[j] = static_cast<int32_t>(k.m[l]), lo[j] = bound(k.lo[l]), hi[j] = bound(k.hi[l]);
    }
    const __m512i A = _mm512_loadu_si512(a), M = _mm512_loadu_si512(m), LO = _mm512_loadu_si512(lo), HI = _mm512_loadu_si512(hi);
    const __m512i MH = _mm512_set1_epi32(static_cast<int32_t>(k.m_half)), EC = _mm512_set1_epi32(static_cast<int32_t>(k.e_const));
    const __m512i EOFF = _mm512_set1_epi32(static_cast<int32_t>(k.e_off)), ESC = _mm512_set1_epi32(static_cast<int32_t>(k.e_scale));
    const __m512i EH = _mm512_set1_epi32(static_cast<int32_t>(k.e_half));
    const __m512i EWLO = _mm512_set1_epi32(bound(k.ew_lo)), EWHI = _mm512_set1_epi32(bound(k.ew_hi));
    const __m512i SC = _mm512_set1_epi32(static_cast<int32_t>(k.scale)), SH = _mm512_set1_epi32(static_cast<int32_t>(k.s_half));
    const __m512i OFF = _mm512_set1_epi32(static_cast<int32_t>(k.offset));
    const __m128i sh1 = _mm_cvtsi64_si128(k.msh), she = _mm_cvtsi64_si128(k.e_shift), shq = _mm_cvtsi64_si128(k.shift);
    const bool unit_scale = k.scale == 1;
    const __m512i SC64 = _mm512_set1_epi64(k.scale), HO64 = _mm512_set1_epi64(kWideOut ? k.s_half + k.offset * (int64_t{1} << k.shift) : 0);
    const __m512i Q8LO = _mm512_set1_epi64(-128), Q8HI = _mm512_set1_epi64(127);
    const uint64_t bytes = P * kLanes, full = bytes / 16 * 16;
    for (uint64_t i = 0; i < full; i += 16) {
        __m512i v = _mm512_maskz_cvtepi8_epi32(0xFFFF, _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i)));
        v = _mm512_add_epi32(v, A);
        v = _mm512_add_epi32(_mm512_mullo_epi32(v, M), MH);
        v = min32(max32(sra32(v, sh1), LO), HI);
        __m512i e = EC;
        if constexpr (kEwMem) {
            e = _mm512_maskz_cvtepi8_epi32(0xFFFF, _mm_loadu_si128(reinterpret_cast<const __m128i*>(ew + i)));
            if constexpr (kEwCvt) e = sra32(_mm512_add_epi32(_mm512_mullo_epi32(_mm512_add_epi32(e, EOFF), ESC), EH), she);
        }
        v = min32(max32(_mm512_add_epi32(v, e), EWLO), EWHI);
        if constexpr (kWideOut) {  // even / odd lanes as int64 (VPMULDQ), clamped to int8, interleaved back
            const __m512i ve = sra64(add64(mul32(v, SC64), HO64), shq), vo = sra64(add64(mul32(_mm512_maskz_srli_epi64(kAll8, v, 32), SC64), HO64), shq);
            v = _mm512_mask_blend_epi32(0xAAAA, clamp64(ve, Q8LO, Q8HI), _mm512_maskz_slli_epi64(kAll8, clamp64(vo, Q8LO, Q8HI), 32));
        } else {
            if (!unit_scale) v = _mm512_mullo_epi32(v, SC);
            v = _mm512_add_epi32(sra32(_mm512_add_epi32(v, SH), shq), OFF);
        }
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), _mm512_maskz_cvtsepi32_epi8(0xFFFF, v));
    }
    if (full < bytes) surface_avx512<kEwMem, kEwCvt, kLanes, false>(in + full, kEwMem ? ew + full : ew, out + full, (bytes - full) / kLanes, k);
}

template <bool kEwMem, bool kEwCvt, uint32_t kLanes>
void surface_lanes(const int8_t* in, const int8_t* ew, int8_t* out, uint64_t P, const SurfaceK& k) {
    if (const int r = surface32_ok(kEwMem, kEwCvt, kLanes, k)) {
        if (r == 1) return surface32_avx512<kEwMem, kEwCvt, kLanes, false>(in, ew, out, P, k);
        return surface32_avx512<kEwMem, kEwCvt, kLanes, true>(in, ew, out, P, k);
    }
    bool wide = false;
    for (uint32_t j = 0; j < kLanes; ++j) wide = wide || k.a[j] < INT32_MIN + 128 || k.a[j] > INT32_MAX - 127;
    if (wide) surface_avx512<kEwMem, kEwCvt, kLanes, true>(in, ew, out, P, k);
    else surface_avx512<kEwMem, kEwCvt, kLanes, false>(in, ew, out, P, k);
}
#endif

/// blocked_body of one lane folded into one map (no per-pixel EW operand, BS shift 0, OUT_CVT_SCALE
/// 1): every step is a monotone map (x + a, x * m, floor((x * m2 + h) / 2^s), floor((x + h) / 2^s)
/// + o; non-increasing for a negative multiplier) or a clamp (the int32 saturations, ReLU/ReLUX,
/// the int8 output). A clamp moves past a monotone map f as clamp(f(x), f(lo), f(hi)) (bounds
/// swapped when f decreases), two clamps with lo <= hi compose to clamp(x, clamp(lo1, lo2, hi2),
/// clamp(hi1, lo2, hi2)), and floor(floor(y / 2^a) + b) / 2^c) = floor((y + b * 2^a) / 2^(a + c))
/// for integer b; so out = clamp(floor((x * m * m2 + R) / 2^(s2 + s3)), lo, hi) exactly, with
/// R = (a * m + a2) * m2 + h2 + (e + h3) * 2^s2 + o * 2^(s2 + s3). Returns false (the step-by-step
/// body runs) when a clamp has lo > hi or a constant could leave the range where x * M + R stays
/// inside int64 (|M| <= 2^30, |R| <= 2^61, |x| <= 2^31).
bool fuse_lane(const DpuBlocked::Lanes& L, uint32_t j, const DpuBlocked::Scalars& k, int64_t& M, int64_t& R, int64_t& lo,
               int64_t& hi) {
    if (k.msh != 0 || k.m_half != 0 || k.scale != 1 || k.msh2 + k.shift > 62) return false;
    const int64_t m = L.m[j], m2 = L.m2[j];
    if (m < INT16_MIN || m > INT16_MAX || m2 < INT16_MIN || m2 > INT16_MAX) return false;
    int64_t l = INT32_MIN, u = INT32_MAX;  // after x + a and its saturation
    const auto clamp = [&](int64_t a, int64_t b) {
        if (a > b) return false;
        l = std::min(std::max(l, a), b), u = std::min(std::max(u, a), b);
        return true;
    };
    const auto map = [&](int64_t mul, int64_t add, int64_t shift) {  // floor((x * mul + add) / 2^shift)
        int64_t fl = ((l * mul) + add) >> shift, fu = ((u * mul) + add) >> shift;
        if (mul < 0) std::swap(fl, fu);
        l = fl, u = fu;
    };
    // |l|, |u| <= 2^31 at each map: the products stay below 2^47.
    map(m, 0, 0);
    if (!clamp(INT32_MIN, INT32_MAX) || !clamp(L.lo[j], L.hi[j])) return false;
    map(1, L.a2[j], 0);
    if (!clamp(INT32_MIN, INT32_MAX)) return false;
    map(m2, k.m2_half, k.msh2);
    if (!clamp(INT32_MIN, INT32_MAX) || !clamp(L.lo2[j], L.hi2[j])) return false;
    map(1, L.e[j], 0);
    if (!clamp(INT32_MIN, INT32_MAX) || !clamp(k.ew_lo, k.ew_hi)) return false;
    if (k.s_half > (int64_t{1} << 61)) return false;
    map(1, k.s_half, k.shift);
    l += k.offset, u += k.offset;
    if (!clamp(-128, 127)) return false;
    // R by parts, each checked against int64 overflow.
    int64_t r = 0, t = 0;
    const int64_t p2 = int64_t{1} << k.msh2, p3 = int64_t{1} << (k.msh2 + k.shift);
    if (__builtin_mul_overflow(L.a[j], m, &t) || __builtin_add_overflow(t, L.a2[j], &t) ||
        __builtin_mul_overflow(t, m2, &r) || __builtin_add_overflow(r, k.m2_half, &r))
        return false;
    if (__builtin_add_overflow(L.e[j], k.s_half, &t) || __builtin_mul_overflow(t, p2, &t) || __builtin_add_overflow(r, t, &r))
        return false;
    if (__builtin_mul_overflow(k.offset, p3, &t) || __builtin_add_overflow(r, t, &r)) return false;
    if (r > (int64_t{1} << 61) || r < -(int64_t{1} << 61)) return false;
    M = m * m2, R = r, lo = l, hi = u;
    return true;
}

/// fuse_lane for a BS multiply with a shift (S1 > 0, whose floor keeps BS apart from BN): two maps,
/// y = clamp(floor((x * m + a * m + h1) / 2^S1), lo1, hi1) (x + a's saturation and BS's clamps
/// moved past the BS map; y inside int32), then out = clamp(floor((y * m2 + R) / 2^(S2 + S3)), lo,
/// hi) with R = a2 * m2 + h2 + (e + h3) * 2^S2 + o * 2^(S2 + S3), by the same rules.
bool fuse_lane2(const DpuBlocked::Lanes& L, uint32_t j, const DpuBlocked::Scalars& k, DpuBlocked::Fused& f) {
    if (k.msh == 0 || k.msh > 62 || k.scale != 1 || k.msh2 + k.shift > 62) return false;
    const int64_t m = L.m[j], m2 = L.m2[j];
    if (m < INT16_MIN || m > INT16_MAX || m2 < INT16_MIN || m2 > INT16_MAX) return false;
    int64_t l = INT32_MIN, u = INT32_MAX;  // after x + a and its saturation
    const auto clamp = [&](int64_t a, int64_t b) {
        if (a > b) return false;
        l = std::min(std::max(l, a), b), u = std::min(std::max(u, a), b);
        return true;
    };
    const auto map = [&](int64_t mul, int64_t add, int64_t shift) {  // floor((x * mul + add) / 2^shift)
        int64_t fl = ((l * mul) + add) >> shift, fu = ((u * mul) + add) >> shift;
        if (mul < 0) std::swap(fl, fu);
        l = fl, u = fu;
    };
    map(m, k.m_half, k.msh);
    if (!clamp(INT32_MIN, INT32_MAX) || !clamp(L.lo[j], L.hi[j])) return false;
    f.M1[j] = m, f.R1[j] = L.a[j] * m + k.m_half, f.lo1[j] = l, f.hi1[j] = u;  // |a * m| < 2^47
    l = INT32_MIN, u = INT32_MAX;  // y is inside int32: clamping it there is the identity
    map(1, L.a2[j], 0);
    if (!clamp(INT32_MIN, INT32_MAX)) return false;
    map(m2, k.m2_half, k.msh2);
    if (!clamp(INT32_MIN, INT32_MAX) || !clamp(L.lo2[j], L.hi2[j])) return false;
    map(1, L.e[j], 0);
    if (!clamp(INT32_MIN, INT32_MAX) || !clamp(k.ew_lo, k.ew_hi)) return false;
    if (k.s_half > (int64_t{1} << 61)) return false;
    map(1, k.s_half, k.shift);
    l += k.offset, u += k.offset;
    if (!clamp(-128, 127)) return false;
    int64_t r = 0, t = 0;
    const int64_t p2 = int64_t{1} << k.msh2, p3 = int64_t{1} << (k.msh2 + k.shift);
    if (__builtin_mul_overflow(L.a2[j], m2, &r) || __builtin_add_overflow(r, k.m2_half, &r)) return false;
    if (__builtin_add_overflow(L.e[j], k.s_half, &t) || __builtin_mul_overflow(t, p2, &t) || __builtin_add_overflow(r, t, &r))
        return false;
    if (__builtin_mul_overflow(k.offset, p3, &t) || __builtin_add_overflow(r, t, &r)) return false;
    if (r > (int64_t{1} << 61) || r < -(int64_t{1} << 61)) return false;
    f.M[j] = m2, f.R[j] = r, f.lo[j] = l, f.hi[j] = u;
    return true;
}

#ifdef NPUSIM_X86_DISPATCH
/// The folded sweep (fuse_lane) for AVX-512: 16 lanes are one int32 vector; VPMULDQ multiplies
/// its even lanes and (after a 32-bit shift) its odd lanes by M into exact 64-bit products, then
/// add R, shift, clamp to [lo, hi] (inside int8), and the two halves interleave back into one
/// int32 vector narrowed by VPMOVDB (values inside int8: the same bytes). 8-lane atoms: one int64
/// vector in lane order.
/// The first map of a two-stage lane (fuse_lane2) in even / odd int64 lanes.
struct FirstMap {
    __m512i Me, Mo, Re, Ro, Le, Lo, He, Ho;
};

/// Pixel p's 16 lanes (int32 accumulators, or int8 image bytes) as even / odd int64 lanes (the low
/// dwords hold the values; VPMULDQ reads them), through the first map when kTwo.
template <bool kI8In, bool kTwo>
NPUSIM_T512 inline void even_odd_lanes(const void* in_v, uint64_t p, const FirstMap& f, __m128i sh1, __m512i& xe,
                                       __m512i& xo) {
    __m512i x;
    if constexpr (kI8In)
        x = _mm512_maskz_cvtepi8_epi32(0xFFFF, _mm_loadu_si128(reinterpret_cast<const __m128i*>(static_cast<const int8_t*>(in_v) + p * 16)));
    else
        x = _mm512_loadu_si512(static_cast<const int32_t*>(in_v) + p * kAccBlock);
    xe = x, xo = _mm512_maskz_srli_epi64(kAll8, x, 32);
    if constexpr (kTwo) {
        xe = clamp64(sra64(add64(mul32(xe, f.Me), f.Re), sh1), f.Le, f.He);
        xo = clamp64(sra64(add64(mul32(xo, f.Mo), f.Ro), sh1), f.Lo, f.Ho);
    }
}

template <bool kI8In, uint32_t kLanes, bool kTwo>
NPUSIM_T512 void fused_avx512(const void* in_v, int8_t* out, uint64_t n, const DpuBlocked::Fused& F, int64_t S, int64_t S1) {
    const __m128i sh = _mm_cvtsi64_si128(S), sh1 = _mm_cvtsi64_si128(S1);
    const auto* in32 = static_cast<const int32_t*>(in_v);
    const auto* in8 = static_cast<const int8_t*>(in_v);
    if constexpr (kLanes == 16) {
        int64_t me[8], mo[8], re[8], ro[8], le[8], lo_[8], he[8], ho[8];
        for (uint32_t i = 0; i < 8; ++i) {
            me[i] = F.M[2 * i], mo[i] = F.M[2 * i + 1], re[i] = F.R[2 * i], ro[i] = F.R[2 * i + 1];
            le[i] = F.lo[2 * i], lo_[i] = F.lo[2 * i + 1], he[i] = F.hi[2 * i], ho[i] = F.hi[2 * i + 1];
        }
        const __m512i Me = _mm512_loadu_si512(me), Mo = _mm512_loadu_si512(mo), Re = _mm512_loadu_si512(re),
                      Ro = _mm512_loadu_si512(ro), Le = _mm512_loadu_si512(le), Lo = _mm512_loadu_si512(lo_),
                      He = _mm512_loadu_si512(he), Ho = _mm512_loadu_si512(ho);
        int64_t ae[8], ao[8], be[8], bo[8], ce[8], co[8], de[8], dd[8];  // the first map (kTwo)
        for (uint32_t i = 0; i < 8; ++i) {
            ae[i] = F.M1[2 * i], ao[i] = F.M1[2 * i + 1], be[i] = F.R1[2 * i], bo[i] = F.R1[2 * i + 1];
            ce[i] = F.lo1[2 * i], co[i] = F.lo1[2 * i + 1], de[i] = F.hi1[2 * i], dd[i] = F.hi1[2 * i + 1];
        }
        const FirstMap f1{_mm512_loadu_si512(ae), _mm512_loadu_si512(ao), _mm512_loadu_si512(be), _mm512_loadu_si512(bo),
                          _mm512_loadu_si512(ce), _mm512_loadu_si512(co), _mm512_loadu_si512(de), _mm512_loadu_si512(dd)};
        for (uint64_t p = 0; p < n; ++p) {
            __m512i xe, xo;
            even_odd_lanes<kI8In, kTwo>(in_v, p, f1, sh1, xe, xo);
            const __m512i e = clamp64(sra64(add64(mul32(xe, Me), Re), sh), Le, He);
            const __m512i o = clamp64(sra64(add64(mul32(xo, Mo), Ro), sh), Lo, Ho);
            const __m512i v = _mm512_mask_blend_epi32(0xAAAA, e, _mm512_maskz_slli_epi64(kAll8, o, 32));
            _mm_storeu_si128(reinterpret_cast<__m128i*>(out + p * 16), _mm512_maskz_cvtepi32_epi8(0xFFFF, v));
        }
    } else {
        const __m512i M = _mm512_loadu_si512(F.M), R = _mm512_loadu_si512(F.R), L = _mm512_loadu_si512(F.lo),
                      H = _mm512_loadu_si512(F.hi);
        const __m512i M1 = _mm512_loadu_si512(F.M1), R1 = _mm512_loadu_si512(F.R1), L1 = _mm512_loadu_si512(F.lo1),
                      H1 = _mm512_loadu_si512(F.hi1);
        for (uint64_t p = 0; p < n; ++p) {
            __m512i x;
            if constexpr (kI8In)
                x = _mm512_maskz_cvtepi8_epi64(kAll8, _mm_loadl_epi64(reinterpret_cast<const __m128i*>(in8 + p * 8)));
            else
                x = _mm512_maskz_cvtepi32_epi64(kAll8, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in32 + p * kAccBlock)));
            if constexpr (kTwo) x = clamp64(sra64(add64(mul32(x, M1), R1), sh1), L1, H1);
            const __m512i v = clamp64(sra64(add64(mul32(x, M), R), sh), L, H);
            _mm_storel_epi64(reinterpret_cast<__m128i*>(out + p * 8), _mm512_maskz_cvtepi64_epi8(kAll8, v));
        }
    }
}
#endif

#ifdef NPUSIM_X86_DISPATCH
/// fused_avx512 for 16 lanes in the high-dword form (DpuBlocked::FusedHi, fused_hi): the 64-bit
/// products x * M' + R' of the even and odd lanes keep only their high dwords, which VPBLENDMD
/// puts back in lane order, so the shift by S - 32 and the clamp run on one int32 vector:
/// floor(y / 2^S) = floor(floor(y / 2^32) / 2^(S - 32)) for the arithmetic shifts, and
/// |y| < 2^62 keeps floor(y / 2^32) inside int32. Same values as fused_avx512.
template <bool kI8In, bool kTwo>
NPUSIM_T512 void fused_hi_avx512(const void* in_v, int8_t* out, uint64_t n, const DpuBlocked::FusedHi& F, int64_t S,
                                 int64_t S1) {
    const __m128i sh = _mm_cvtsi64_si128(S), sh1 = _mm_cvtsi64_si128(S1);
    const __m512i Me = _mm512_loadu_si512(F.Me), Mo = _mm512_loadu_si512(F.Mo), Re = _mm512_loadu_si512(F.Re),
                  Ro = _mm512_loadu_si512(F.Ro), Lo = _mm512_loadu_si512(F.lo), Hi = _mm512_loadu_si512(F.hi);
    const FirstMap f1{_mm512_loadu_si512(F.M1e), _mm512_loadu_si512(F.M1o), _mm512_loadu_si512(F.R1e), _mm512_loadu_si512(F.R1o),
                      _mm512_loadu_si512(F.L1e), _mm512_loadu_si512(F.L1o), _mm512_loadu_si512(F.H1e), _mm512_loadu_si512(F.H1o)};
    for (uint64_t p = 0; p < n; ++p) {
        __m512i xe, xo;
        even_odd_lanes<kI8In, kTwo>(in_v, p, f1, sh1, xe, xo);
        const __m512i e = add64(mul32(xe, Me), Re), o = add64(mul32(xo, Mo), Ro);
        __m512i v = _mm512_mask_blend_epi32(0xAAAA, _mm512_maskz_srli_epi64(kAll8, e, 32), o);
        v = _mm512_maskz_sra_epi32(0xFFFF, v, sh);
        v = _mm512_maskz_min_epi32(0xFFFF, _mm512_maskz_max_epi32(0xFFFF, v, Lo), Hi);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out + p * 16), _mm512_maskz_cvtepi32_epi8(0xFFFF, v));
    }
}
#endif

#ifdef NPUSIM_X86_DISPATCH
template <bool kI8In, bool kEwMem, bool kEwCvt, uint32_t kLanes, bool kS, bool kU>
BodyFn pick512(int bn, bool ew) {
    if (bn == 0) return ew ? body_avx512<kI8In, kEwMem, kEwCvt, kLanes, 0, true, kS, kU> : body_avx512<kI8In, kEwMem, kEwCvt, kLanes, 0, false, kS, kU>;
    if (bn == 1) return ew ? body_avx512<kI8In, kEwMem, kEwCvt, kLanes, 1, true, kS, kU> : body_avx512<kI8In, kEwMem, kEwCvt, kLanes, 1, false, kS, kU>;
    return ew ? body_avx512<kI8In, kEwMem, kEwCvt, kLanes, 2, true, kS, kU> : body_avx512<kI8In, kEwMem, kEwCvt, kLanes, 2, false, kS, kU>;
}
#endif

template <bool kI8In, bool kEwMem, bool kEwCvt, uint32_t kLanes>
BodyFn pick_isa(int bn, bool ew, bool bs_shift, bool unit_out) {
#ifdef NPUSIM_X86_DISPATCH
    const EngineIsa i = engine_isa();
    if (i == EngineIsa::Avx512) {
        if (kEwMem) ew = true;
        if (unit_out)
            return bs_shift ? pick512<kI8In, kEwMem, kEwCvt, kLanes, true, true>(bn, ew) : pick512<kI8In, kEwMem, kEwCvt, kLanes, false, true>(bn, ew);
        return bs_shift ? pick512<kI8In, kEwMem, kEwCvt, kLanes, true, false>(bn, ew) : pick512<kI8In, kEwMem, kEwCvt, kLanes, false, false>(bn, ew);
    }
    if (i == EngineIsa::Avx2) return body_avx2<kI8In, kEwMem, kEwCvt, kLanes>;
#else
    (void)bn, (void)ew, (void)bs_shift, (void)unit_out;
#endif
    return body_portable<kI8In, kEwMem, kEwCvt, kLanes>;
}

template <bool kI8In, uint32_t kLanes>
BodyFn pick_lanes(bool ew_mem, bool ew_cvt, int bn, bool ew, bool bs_shift, bool unit_out) {
    if (!ew_mem) return pick_isa<kI8In, false, false, kLanes>(bn, ew, bs_shift, unit_out);
    return ew_cvt ? pick_isa<kI8In, true, true, kLanes>(bn, ew, bs_shift, unit_out) : pick_isa<kI8In, true, false, kLanes>(bn, ew, bs_shift, unit_out);
}

BodyFn pick(bool i8_in, uint32_t lanes, bool ew_mem, bool ew_cvt, int bn, bool ew, bool bs_shift, bool unit_out) {
    if (i8_in)
        return lanes == 16 ? pick_lanes<true, 16>(ew_mem, ew_cvt, bn, ew, bs_shift, unit_out) : pick_lanes<true, 8>(ew_mem, ew_cvt, bn, ew, bs_shift, unit_out);
    return lanes == 16 ? pick_lanes<false, 16>(ew_mem, ew_cvt, bn, ew, bs_shift, unit_out) : pick_lanes<false, 8>(ew_mem, ew_cvt, bn, ew, bs_shift, unit_out);
}

}  // namespace

void simple_surface_avx512(bool ew_mem, bool ew_cvt, uint32_t lanes, const int8_t* in, const int8_t* ew, int8_t* out,
                           uint64_t P, const SurfaceK& k) {
#ifdef NPUSIM_X86_DISPATCH
    if (lanes == 16) {
        if (!ew_mem) return surface_lanes<false, false, 16>(in, ew, out, P, k);
        return ew_cvt ? surface_lanes<true, true, 16>(in, ew, out, P, k) : surface_lanes<true, false, 16>(in, ew, out, P, k);
    }
    if (!ew_mem) return surface_lanes<false, false, 8>(in, ew, out, P, k);
    return ew_cvt ? surface_lanes<true, true, 8>(in, ew, out, P, k) : surface_lanes<true, false, 8>(in, ew, out, P, k);
#else
    (void)ew_mem, (void)ew_cvt, (void)lanes, (void)in, (void)ew, (void)out, (void)P, (void)k;
    throw std::logic_error("simple_surface_avx512: not an x86-64 build");
#endif
}

bool dpu_blocked_ok(const DpuConfig& d) {
    if (!dpu_fast_ok(d) || !dpu_simple_config(d) || d.out != Precision::Int8 || (d.atom != 16 && d.atom != 8)) return false;
    return !ew_from_mem(d) || d.ew_prec() == Precision::Int8;
}

namespace {

/// DpuBlocked's constants for a configuration dpu_blocked_ok admits.
void fuse_hi(DpuBlocked::Prepared& t);

std::shared_ptr<const DpuBlocked::Prepared> prepare(const DpuConfig& d, const DpuOperands& ops) {
    auto t = std::make_shared<DpuBlocked::Prepared>();
    const uint32_t C = d.c;
    t->lanes = d.atom;  // int8 output: one atom holds `atom` channels
    t->surfaces = (C + t->lanes - 1) / t->lanes;
    DpuBlocked::Scalars& k = t->k;
    const DpuStage& s = d.bs;
    const bool on = !s.bypass, alu = on && !s.alu_bypass, mul = on && !s.mul_bypass, relu = on && !s.relu_bypass;
    const DpuStage& s2 = d.bn;
    const bool on2 = !s2.bypass, alu2 = on2 && !s2.alu_bypass, mul2 = on2 && !s2.mul_bypass, relu2 = on2 && !s2.relu_bypass;
    k.msh = mul ? s.mul_shift : 0;
    k.m_half = k.msh ? int64_t{1} << (k.msh - 1) : 0;
    k.msh2 = mul2 ? s2.mul_shift : 0;
    k.m2_half = k.msh2 ? int64_t{1} << (k.msh2 - 1) : 0;
    k.scale = static_cast<int32_t>(d.out_cvt_scale), k.shift = d.out_cvt_shift, k.offset = d.out_cvt_offset;
    k.s_half = k.shift ? int64_t{1} << (k.shift - 1) : 0;
    const bool ew_on = !d.ew.bypass, ew_add = ew_on && !d.ew.op_bypass, ew_mem = ew_from_mem(d);
    if (ew_on && !d.ew.relu_bypass) {
        k.ew_lo = 0;
        if (d.ew.relux_en) k.ew_hi = static_cast<int32_t>(d.ew.relux_cmp);
    }
    k.e_off = d.ew.cvt_offset, k.e_scale = static_cast<int32_t>(d.ew.cvt_scale), k.e_shift = d.ew.cvt_shift;
    k.e_half = k.e_shift ? int64_t{1} << (k.e_shift - 1) : 0;
    const bool per_channel = ew_mem && d.ew_per_channel();
    t->ew_mem = ew_mem && !per_channel;
    t->bn_mode = !on2 ? 0 : (alu2 ? 2 : 1);
    t->ew_used = ew_add || k.ew_lo != INT64_MIN || k.ew_hi != INT64_MAX;
    t->ew_cvt = !d.ew.cvt_bypass;
    t->ew_surf = surface_bytes(d.ew_w(), d.ew_h(), d.atom);
    const uint32_t lanes = t->lanes;
    t->lane.resize(t->surfaces);
    for (uint32_t sf = 0; sf < t->surfaces; ++sf) {
        DpuBlocked::Lanes& L = t->lane[sf];
        for (uint32_t j = 0; j < 16; ++j) {
            const uint32_t ch = sf * lanes + j;
            L.a[j] = 0, L.m[j] = 1, L.lo[j] = INT64_MIN, L.hi[j] = INT64_MAX;
            L.a2[j] = 0, L.m2[j] = 1, L.lo2[j] = INT64_MIN, L.hi2[j] = INT64_MAX;
            L.e[j] = ew_add && !ew_mem ? static_cast<int32_t>(d.ew.operand) : 0;
            if (j >= lanes || ch >= C) continue;  // padding lanes: zeroed after the sweep
            if (on) {
                const DpuStageOperands o = dpu_stage_operands(s, ch, C, ops.bs);
                if (alu) L.a[j] = static_cast<int32_t>(o.alu);
                if (mul) L.m[j] = static_cast<int16_t>(o.mul);
                if (relu) L.lo[j] = 0;
                if (relu && s.relux_en) L.hi[j] = static_cast<int32_t>(s.relux_cmp);
            }
            if (on2) {
                const DpuStageOperands o = dpu_stage_operands(s2, ch, C, ops.bn);
                if (alu2) L.a2[j] = static_cast<int32_t>(o.alu);
                if (mul2) L.m2[j] = static_cast<int16_t>(o.mul);
                if (relu2) L.lo2[j] = 0;
                if (relu2 && s2.relux_en) L.hi2[j] = static_cast<int32_t>(s2.relux_cmp);
            }
            if (per_channel) {  // one operand per channel, through the EW convert
                int64_t e = static_cast<int8_t>(ops.ew[(ch / lanes) * t->ew_surf + ch % lanes]);
                if (!d.ew.cvt_bypass) e = sat32(shr(e + d.ew.cvt_offset, d.ew.cvt_scale, d.ew.cvt_shift));
                L.e[j] = e;
            }
        }
    }
    // The folded sweep (fuse_lane, or fuse_lane2 with a BS shift) when every live lane folds;
    // AVX-512 builds only.
    t->fused = !t->ew_mem && engine_isa() == EngineIsa::Avx512;
    t->two_stage = k.msh != 0;
    t->fused_shift = k.msh2 + k.shift;
    t->fused_lane.resize(t->fused ? t->surfaces : 0);
    for (uint32_t sf = 0; t->fused && sf < t->surfaces; ++sf)
        for (uint32_t j = 0; t->fused && j < 16; ++j) {
            DpuBlocked::Fused& f = t->fused_lane[sf];
            f.M[j] = 0, f.R[j] = 0, f.lo[j] = 0, f.hi[j] = 0;  // padding lanes: zeroed after the sweep
            f.M1[j] = 0, f.R1[j] = 0, f.lo1[j] = 0, f.hi1[j] = 0;
            if (j >= lanes || sf * lanes + j >= C) continue;
            t->fused = t->two_stage ? fuse_lane2(t->lane[sf], j, k, f)
                                    : fuse_lane(t->lane[sf], j, k, f.M[j], f.R[j], f.lo[j], f.hi[j]);
        }
    if (t->fused && t->lanes == 16) fuse_hi(*t);
    return t;
}

/// Prepared::fused_hi from fused_lane: with S = fused_shift >= 32 the constants as they are and a
/// shift of S - 32 after the high dword; with S < 32, M and R scaled by 2^(32 - S) (the same
/// floor((x * M + R) / 2^S)) where M' stays inside int32 (VPMULDQ's operand) and |R'| <= 2^61, so
/// that |x * M' + R'| < 2^62 for any int32 x. Left empty when a lane does not fit.
void fuse_hi(DpuBlocked::Prepared& t) {
    const int64_t S = t.fused_shift;
    if (S < 0 || S > 62) return;
    const int up = S < 32 ? static_cast<int>(32 - S) : 0;
    std::vector<DpuBlocked::FusedHi> hi(t.surfaces);
    for (uint32_t sf = 0; sf < t.surfaces; ++sf) {
        const DpuBlocked::Fused& f = t.fused_lane[sf];
        DpuBlocked::FusedHi& h = hi[sf];
        for (uint32_t j = 0; j < 16; ++j) {
            const int64_t M = f.M[j] * (int64_t{1} << up);  // |f.M| <= 2^30 (fuse_lane): no overflow before the check
            if (M < INT32_MIN || M > INT32_MAX || f.lo[j] < INT32_MIN || f.hi[j] > INT32_MAX) return;
            const int64_t lim = (int64_t{1} << 61) >> up;
            if (f.R[j] > lim || f.R[j] < -lim) return;
            const int64_t R = f.R[j] * (int64_t{1} << up);
            const uint32_t i = j / 2;
            (j % 2 ? h.Mo : h.Me)[i] = M, (j % 2 ? h.Ro : h.Re)[i] = R;
            h.lo[j] = static_cast<int32_t>(f.lo[j]), h.hi[j] = static_cast<int32_t>(f.hi[j]);
            (j % 2 ? h.M1o : h.M1e)[i] = f.M1[j], (j % 2 ? h.R1o : h.R1e)[i] = f.R1[j];
            (j % 2 ? h.L1o : h.L1e)[i] = f.lo1[j], (j % 2 ? h.H1o : h.H1e)[i] = f.hi1[j];
        }
    }
    t.fused_hi = std::move(hi);
    t.hi_shift = S < 32 ? 0 : S - 32;
}

/// Bound of the DPU constants cache per thread.
constexpr uint64_t kDpuCacheBytes = uint64_t{64} << 20;

}  // namespace

DpuBlocked::DpuBlocked(const DpuConfig& d, const DpuOperands& ops) : d_(d), ops_(ops) {
    if (!dpu_blocked_ok(d)) throw std::logic_error("DpuBlocked: configuration outside the fused sweep");
    const bool ew_mem = ew_from_mem(d), per_channel = ew_mem && d.ew_per_channel();
    if (ew_mem && ops.ew.size() < cube_bytes(d.ew_w(), d.ew_h(), d.c, d.ew_prec(), d.atom))
        throw std::logic_error("unpack_cube: image smaller than the cube");
    // Every field prepare() reads, and its operand images (a per-pixel EW cube is only read by the
    // sweep): a repeated inference finds its tasks' constants (engine_cache.h).
    const DpuStage &s = d.bs, &s2 = d.bn;
    const DpuEw& e = d.ew;
    const std::vector<int64_t> params{
        d.c, d.w, d.h, d.atom, static_cast<int64_t>(d.proc), static_cast<int64_t>(engine_isa()),
        s.bypass, s.alu_bypass, s.mul_bypass, s.relu_bypass, s.relux_en, s.alu_from_mem, s.mul_from_mem,
        s.alu_operand, s.mul_operand, s.mul_shift, s.relux_cmp,
        s2.bypass, s2.alu_bypass, s2.mul_bypass, s2.relu_bypass, s2.relux_en, s2.alu_from_mem, s2.mul_from_mem,
        s2.alu_operand, s2.mul_operand, s2.mul_shift, s2.relux_cmp,
        e.bypass, e.op_bypass, e.op_from_mem, e.relu_bypass, e.relux_en, e.relux_cmp, e.cvt_bypass, e.cvt_offset,
        e.cvt_scale, e.cvt_shift, e.operand, e.data_mode, e.erdma_data_size,
        d.out_cvt_scale, d.out_cvt_shift, d.out_cvt_offset};
    const CacheBytes bs{ops.bs.data(), ops.bs.size()}, bn{ops.bn.data(), ops.bn.size()};
    const CacheBytes ew{ops.ew.data(), per_channel ? ops.ew.size() : 0};
    thread_local ContentCache<Prepared> cache(kDpuCacheBytes);
    t_ = cache.find(params, {bs, bn, ew});
    if (!t_) {
        t_ = prepare(d, ops);
        cache.insert(params, {bs, bn, ew}, t_,
                     sizeof(Prepared) + t_->lane.size() * sizeof(Lanes) + t_->fused_lane.size() * sizeof(Fused) +
                         t_->fused_hi.size() * sizeof(FusedHi));
    }
}

void DpuBlocked::run(const int32_t* acc, uint64_t p0, uint64_t n, Surfaces& out) const {
    sweep(acc, nullptr, p0, n, out, 0, t_->surfaces);
}

void DpuBlocked::run(const int32_t* acc, uint64_t p0, uint64_t n, Surfaces& out, uint32_t b0, uint32_t b1) const {
    const uint32_t per = kAccBlock / t_->lanes;  // surfaces per accumulator block
    sweep(acc, nullptr, p0, n, out, std::min(b0 * per, t_->surfaces), std::min(b1 * per, t_->surfaces));
}

void DpuBlocked::run_image(const uint8_t* img, Surfaces& out) const {
    sweep(nullptr, img, 0, static_cast<uint64_t>(d_.w) * d_.h, out, 0, t_->surfaces);
}

void DpuBlocked::sweep(const int32_t* acc, const uint8_t* img, uint64_t p0, uint64_t n, Surfaces& out, uint32_t sf0,
                       uint32_t sf1) const {
    const Prepared& t = *t_;
    const BodyFn fn = pick(img != nullptr, t.lanes, t.ew_mem, t.ew_cvt, t.bn_mode, t.ew_used, t.k.msh != 0,
                           t.k.scale == 1 && t.k.shift <= 30);
    using FusedFn = void (*)(const void*, int8_t*, uint64_t, const Fused&, int64_t, int64_t);
    using FusedHiFn = void (*)(const void*, int8_t*, uint64_t, const FusedHi&, int64_t, int64_t);
    FusedFn ffn = nullptr;
    FusedHiFn hfn = nullptr;
#ifdef NPUSIM_X86_DISPATCH
    if (!t.fused_hi.empty())
        hfn = img ? (t.two_stage ? fused_hi_avx512<true, true> : fused_hi_avx512<true, false>)
                  : (t.two_stage ? fused_hi_avx512<false, true> : fused_hi_avx512<false, false>);
    else if (t.fused && t.two_stage)
        ffn = img ? (t.lanes == 16 ? fused_avx512<true, 16, true> : fused_avx512<true, 8, true>)
                  : (t.lanes == 16 ? fused_avx512<false, 16, true> : fused_avx512<false, 8, true>);
    else if (t.fused)
        ffn = img ? (t.lanes == 16 ? fused_avx512<true, 16, false> : fused_avx512<true, 8, false>)
                  : (t.lanes == 16 ? fused_avx512<false, 16, false> : fused_avx512<false, 8, false>);
#endif
    const uint32_t atom = d_.atom, lanes = t.lanes;
    for (uint32_t sf = sf0; sf < sf1; ++sf) {
        const uint32_t ch0 = sf * lanes;
        const void* in = img ? static_cast<const void*>(img + sf * n * atom)
                             : static_cast<const void*>(acc + (ch0 / kAccBlock) * n * kAccBlock + ch0 % kAccBlock);
        auto* dst = reinterpret_cast<int8_t*>(out[sf].data() + p0 * atom);
        const auto* e = t.ew_mem ? reinterpret_cast<const int8_t*>(ops_.ew.data() + sf * t.ew_surf + p0 * atom) : nullptr;
        if (hfn) hfn(in, dst, n, t.fused_hi[sf], t.hi_shift, t.k.msh);
        else if (ffn) ffn(in, dst, n, t.fused_lane[sf], t.fused_shift, t.k.msh);
        else fn(in, e, dst, n, t.lane[sf], t.k);
        const uint32_t valid = std::min(lanes, d_.c - ch0);  // padding channels of the last atom are zero
        if (valid < lanes)
            for (uint64_t p = 0; p < n; ++p) std::memset(dst + p * atom + valid, 0, lanes - valid);
    }
}

void blocked_to_planar(const int32_t* acc, uint64_t P, uint32_t C, int32_t* planar) {
    for (uint32_t ch = 0; ch < C; ++ch) {
        const int32_t* src = acc + (ch / kAccBlock) * P * kAccBlock + ch % kAccBlock;
        int32_t* dst = planar + ch * P;
        for (uint64_t p = 0; p < P; ++p) dst[p] = src[p * kAccBlock];
    }
}

}  // namespace npu::rknpu::detail
