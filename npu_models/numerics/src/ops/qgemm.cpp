// SPDX-License-Identifier: MIT
// 8-bit GEMM with exact int32 accumulation. Operands are normalised to s8 (A, broadcast side) and
// u8 (B, vector side) by flipping the top bit (x ^ 0x80 == x -/+ 128, zero point moved with it), so
// one u8 x s8 dot-product kernel serves u8/s8 on either side. Zero points are applied afterwards:
//   sum (a-za)(b-zb) = sum ab - zb*rowsum(a) - za*colsum(b) + K*za*zb.
// B is packed in 16-column panels of 4-deep k groups ([k/4][16][4] bytes), the AVX-512 VNNI
// VPDPBUSD layout; the portable kernel reads the same layout.
#include <algorithm>
#include <cstring>

#include "numerics/gemm.h"
#include "qcommon.h"
#include "scratch.h"
#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace num {
namespace {

constexpr int64_t kNr = 16;    // columns per B panel
constexpr int64_t kKc = 1024;  // k block (multiple of 4): B panel pair stays in L1/L2

bool g_force_generic = false;

// Packed operands live in per-thread buffers reused across calls: fresh multi-megabyte
// allocations per convolution cost more in page faults than the packing itself.
struct PackedA {  // s8, rows padded to kp bytes, row stride ld (may alias the caller's matrix)
    ops::Scratch<int8_t> buf;
    const int8_t* data = nullptr;
    int64_t ld = 0;
    std::vector<int32_t> rowsum;
    int64_t kp = 0;
};
struct PackedB {  // u8 panels
    ops::Scratch<uint8_t> buf;
    uint8_t* data = nullptr;
    std::vector<int32_t> colsum;
    std::vector<uint8_t> pad_row;  // stands in for rows k >= K (flip value: packs to 0)
    int64_t kp = 0, panels = 0;
};

#define NUM_HOT inline __attribute__((always_inline))
// Packing bodies are always-inlined into a plain and an AVX-512 wrapper so the byte loops get
// wide vectors where the CPU has them (the library is built for baseline x86-64).
NUM_HOT void pack_a_body(int64_t M, int64_t K, const Q8Operand& A, PackedA& p) {
    p.kp = (K + 3) / 4 * 4;
    p.rowsum.resize(static_cast<size_t>(M));
    if (A.is_signed && K == p.kp) {  // already s8 with whole k groups: use in place, row sums only
        p.data = static_cast<const int8_t*>(A.data);
        p.ld = A.ld;
        for (int64_t m = 0; m < M; ++m) {
            const int8_t* row = p.data + m * p.ld;
            int32_t s = 0;
            for (int64_t k = 0; k < K; ++k) s += row[k];
            p.rowsum[static_cast<size_t>(m)] = s;
        }
        return;
    }
    int8_t* out = p.buf.get(static_cast<size_t>(M * p.kp));
    p.data = out;
    p.ld = p.kp;
    const uint8_t flip = A.is_signed ? 0 : 0x80;
    for (int64_t m = 0; m < M; ++m) {
        const uint8_t* src = static_cast<const uint8_t*>(A.data) + m * A.ld;
        int8_t* dst = out + m * p.kp;
        int32_t s = 0;
        for (int64_t k = 0; k < K; ++k) {
            dst[k] = static_cast<int8_t>(src[k] ^ flip);
            s += dst[k];
        }
        for (int64_t k = K; k < p.kp; ++k) dst[k] = 0;
        p.rowsum[static_cast<size_t>(m)] = s;
    }
}

// Interleaves 4 rows into [col][4] groups for columns [0, nc).
NUM_HOT void interleave4(const uint8_t* r0, const uint8_t* r1, const uint8_t* r2, const uint8_t* r3, uint8_t flip,
                        int64_t nc, uint8_t* dst) {
#if defined(__SSE2__)
    if (nc == kNr) {  // full panel: byte/word unpacks build the 4-byte groups (SSE2 is x86-64 baseline)
        const __m128i f = _mm_set1_epi8(static_cast<char>(flip));
        const __m128i a = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(r0)), f);
        const __m128i b = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(r1)), f);
        const __m128i c = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(r2)), f);
        const __m128i d = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(r3)), f);
        const __m128i ab_lo = _mm_unpacklo_epi8(a, b), ab_hi = _mm_unpackhi_epi8(a, b);
        const __m128i cd_lo = _mm_unpacklo_epi8(c, d), cd_hi = _mm_unpackhi_epi8(c, d);
        __m128i* o = reinterpret_cast<__m128i*>(dst);
        _mm_storeu_si128(o, _mm_unpacklo_epi16(ab_lo, cd_lo));
        _mm_storeu_si128(o + 1, _mm_unpackhi_epi16(ab_lo, cd_lo));
        _mm_storeu_si128(o + 2, _mm_unpacklo_epi16(ab_hi, cd_hi));
        _mm_storeu_si128(o + 3, _mm_unpackhi_epi16(ab_hi, cd_hi));
        return;
    }
#endif
    for (int64_t c = 0; c < nc; ++c) {
        dst[c * 4] = r0[c] ^ flip;
        dst[c * 4 + 1] = r1[c] ^ flip;
        dst[c * 4 + 2] = r2[c] ^ flip;
        dst[c * 4 + 3] = r3[c] ^ flip;
    }
}

// get_row(k, slot) returns row k < K of B (raw bytes, N of them); slot in [0, 4) lets a generator
// reuse four row buffers.
template <typename GetRow>
NUM_HOT void pack_b_body(int64_t K, int64_t N, uint8_t flip, GetRow&& get_row, PackedB& p, bool with_colsum) {
    p.kp = (K + 3) / 4 * 4;
    p.panels = (N + kNr - 1) / kNr;
    p.data = p.buf.get(static_cast<size_t>(p.panels * p.kp * kNr));
    // Sized to an even panel count: the VNNI epilogue reads column data for panel pairs.
    p.colsum.assign(static_cast<size_t>((p.panels + 1) / 2 * 2 * kNr), 0);
    p.pad_row.assign(static_cast<size_t>(p.panels * kNr), flip);
    const int64_t tail = N % kNr;
    if (tail) {  // the last panel's missing columns must pack to zero
        uint8_t* last = p.data + (p.panels - 1) * p.kp * kNr;
        std::fill(last, last + p.kp * kNr, 0);
    }
    int32_t* cs = p.colsum.data();
    for (int64_t k4 = 0; k4 < p.kp / 4; ++k4) {
        const uint8_t* rows[4];
        for (int64_t t = 0; t < 4; ++t) {
            const int64_t k = k4 * 4 + t;
            rows[t] = k < K ? get_row(k, t) : p.pad_row.data();
            if (with_colsum && k < K)  // column sums in the flipped domain (VNNI path: colsum_vnni)
                for (int64_t n = 0; n < N; ++n) cs[n] += static_cast<uint8_t>(rows[t][n] ^ flip);
        }
        for (int64_t pn = 0; pn < p.panels; ++pn) {
            uint8_t* dst = p.data + pn * p.kp * kNr + k4 * kNr * 4;
            const int64_t off = pn * kNr, nc = std::min(kNr, N - off);
            interleave4(rows[0] + off, rows[1] + off, rows[2] + off, rows[3] + off, flip, nc, dst);
        }
    }
}

#if defined(__x86_64__)
// Column sums of the packed panels with VPDPBUSD against a vector of ones: one instruction per
// 64 packed bytes (16 columns x 4 k) instead of a second pass over B.
__attribute__((target("avx512f,avx512bw,avx512vnni"))) void colsum_vnni(PackedB& p) {
    const __m512i ones = _mm512_set1_epi8(1);
    for (int64_t pn = 0; pn < p.panels; ++pn) {
        const uint8_t* src = p.data + pn * p.kp * kNr;
        __m512i acc = _mm512_setzero_si512();
        for (int64_t k4 = 0; k4 < p.kp / 4; ++k4) acc = _mm512_dpbusd_epi32(acc, _mm512_loadu_si512(src + k4 * 64), ones);
        _mm512_storeu_si512(p.colsum.data() + pn * kNr, acc);
    }
}
#endif

// B source: rows in memory, or produced on demand into four reusable buffers.
struct RowSource {
    const uint8_t* src = nullptr;
    int64_t ld = 0;
    const QGemmRowFn* fn = nullptr;
    int64_t n = 0;
    uint8_t* bufs = nullptr;  // 4 x n
    const uint8_t* operator()(int64_t k, int64_t slot) const {
        if (!fn) return src + k * ld;
        uint8_t* dst = bufs + slot * n;
        (*fn)(k, dst);
        return dst;
    }
};

void pack_a(int64_t M, int64_t K, const Q8Operand& A, PackedA& p) { pack_a_body(M, K, A, p); }
void pack_b(int64_t K, int64_t N, uint8_t flip, const RowSource& rs, PackedB& p) { pack_b_body(K, N, flip, rs, p, true); }
#if defined(__x86_64__)
__attribute__((target("avx512f,avx512bw,avx512vnni"))) void pack_a_avx512(int64_t M, int64_t K, const Q8Operand& A,
                                                                          PackedA& p) {
    pack_a_body(M, K, A, p);
}
__attribute__((target("avx512f,avx512bw,avx512vnni"))) void pack_b_avx512(int64_t K, int64_t N, uint8_t flip,
                                                                          const RowSource& rs, PackedB& p) {
    pack_b_body(K, N, flip, rs, p, false);
}
#endif

// Portable micro-kernel: rows [m0, m0+mr) x one panel, k range [k0, k1) (multiples of 4).
void kernel_generic(const PackedA& a, const uint8_t* panel, int64_t m0, int64_t mr, int64_t k0, int64_t k1,
                    int32_t* acc /* mr x 16, accumulated */) {
    for (int64_t i = 0; i < mr; ++i) {
        const int8_t* ar = a.data + (m0 + i) * a.ld;
        int32_t* c = acc + i * kNr;
        for (int64_t k = k0; k < k1; k += 4) {
            const uint8_t* b = panel + (k / 4) * kNr * 4;
            const int32_t a0 = ar[k], a1 = ar[k + 1], a2 = ar[k + 2], a3 = ar[k + 3];
            for (int64_t j = 0; j < kNr; ++j)
                c[j] += a0 * b[4 * j] + a1 * b[4 * j + 1] + a2 * b[4 * j + 2] + a3 * b[4 * j + 3];
        }
    }
}

#if defined(__x86_64__)
constexpr int64_t kMrVnni = 6;

// Zero-point correction applied in the kernel epilogue: c = raw - za[m]*colsum[n] + zb[n]*t[m]
// with t[m] = K*za[m] - rowsum[m] (all modulo 2^32; the exact result fits in int32).
struct Epilogue {
    const int32_t* za;      // per row
    const int32_t* t;       // per row
    const int32_t* colsum;  // per column, padded to whole panels
    const int32_t* zb;      // per column, padded to whole panels
    const QGemmRequant* rq;  // optional: requantize to 8 bits instead of storing int32
};

// 16 lanes of requant_row: float(acc + bias) * scale, clamp, RNE (MXCSR default), + zp.
__attribute__((target("avx512f,avx512bw,avx512vnni"))) inline __m512i requant16(__m512i v, __m512i bias, __m512 sc,
                                                                               __m512 lo, __m512 hi, __m512i zp) {
    // maskz forms with a full mask: same instructions, and no _mm512_undefined_* operand that
    // GCC 12 reports as maybe-uninitialised.
    const __mmask16 all = 0xFFFF;
    __m512 f = _mm512_maskz_mul_ps(all, _mm512_maskz_cvtepi32_ps(all, _mm512_add_epi32(v, bias)), sc);
    f = _mm512_maskz_min_ps(all, _mm512_maskz_max_ps(all, f, lo), hi);
    return _mm512_add_epi32(_mm512_maskz_cvtps_epi32(all, f), zp);
}

// C[m0..m0+mr) x 32 columns from panels pa, pb (np = 1 or 2; nc valid columns) over k in [k0, k1).
// The first k block starts from zero, later ones accumulate into C; the last applies the epilogue.
__attribute__((target("avx512f,avx512bw,avx512vnni"))) void kernel_vnni(const PackedA& a, const uint8_t* pa,
                                                                        const uint8_t* pb, int64_t np, int64_t m0,
                                                                        int64_t mr, int64_t k0, int64_t k1, int32_t* C,
                                                                        int64_t ldc, int64_t nc, const Epilogue* epi,
                                                                        int64_t col0) {
    const __mmask16 m_lo = nc >= 16 ? 0xFFFF : static_cast<__mmask16>((1u << nc) - 1);
    const __mmask16 m_hi = nc >= 32 ? 0xFFFF : (nc > 16 ? static_cast<__mmask16>((1u << (nc - 16)) - 1) : 0);
    __m512i c0[kMrVnni], c1[kMrVnni];
    const int8_t* ar[kMrVnni];
    for (int64_t i = 0; i < kMrVnni; ++i) {
        const bool live = i < mr && k0 > 0;
        c0[i] = live ? _mm512_maskz_loadu_epi32(m_lo, C + i * ldc) : _mm512_setzero_si512();
        c1[i] = live ? _mm512_maskz_loadu_epi32(m_hi, C + i * ldc + 16) : _mm512_setzero_si512();
        ar[i] = a.data + (m0 + std::min(i, mr - 1)) * a.ld;
    }
    for (int64_t k = k0; k < k1; k += 4) {
        const __m512i b0 = _mm512_loadu_si512(pa + k * kNr);
        const __m512i b1 = np > 1 ? _mm512_loadu_si512(pb + k * kNr) : _mm512_setzero_si512();
        for (int64_t i = 0; i < kMrVnni; ++i) {
            int32_t w;
            std::memcpy(&w, ar[i] + k, 4);
            const __m512i av = _mm512_set1_epi32(w);
            c0[i] = _mm512_dpbusd_epi32(c0[i], b0, av);
            c1[i] = _mm512_dpbusd_epi32(c1[i], b1, av);
        }
    }
    if (epi) {
        const __m512i cs0 = _mm512_loadu_si512(epi->colsum + col0), cs1 = _mm512_loadu_si512(epi->colsum + col0 + 16);
        const __m512i zb0 = _mm512_loadu_si512(epi->zb + col0), zb1 = _mm512_loadu_si512(epi->zb + col0 + 16);
        for (int64_t i = 0; i < kMrVnni; ++i) {
            if (i >= mr) break;
            const __m512i za = _mm512_set1_epi32(epi->za[m0 + i]), t = _mm512_set1_epi32(epi->t[m0 + i]);
            c0[i] = _mm512_add_epi32(_mm512_sub_epi32(c0[i], _mm512_mullo_epi32(za, cs0)), _mm512_mullo_epi32(zb0, t));
            c1[i] = _mm512_add_epi32(_mm512_sub_epi32(c1[i], _mm512_mullo_epi32(za, cs1)), _mm512_mullo_epi32(zb1, t));
        }
    }
    if (epi && epi->rq) {  // same arithmetic as requant_row: float(acc + bias) * scale, clamp, RNE, + zp
        const QGemmRequant& rq = *epi->rq;
        const int32_t qmin = rq.out_signed ? -128 : 0, qmax = rq.out_signed ? 127 : 255;
        const __m512 lo = _mm512_set1_ps(static_cast<float>(qmin - rq.zp)), hi = _mm512_set1_ps(static_cast<float>(qmax - rq.zp));
        const __m512i zp = _mm512_set1_epi32(rq.zp);
        for (int64_t i = 0; i < kMrVnni; ++i) {
            if (i >= mr) break;
            const int64_t m = m0 + i;
            const __m512i bias = _mm512_set1_epi32(rq.bias ? rq.bias[m] : 0);
            const __m512 sc = _mm512_set1_ps(rq.scale[m]);
            uint8_t* out = static_cast<uint8_t*>(rq.out) + m * rq.ldo + col0;
            _mm512_mask_cvtepi32_storeu_epi8(out, m_lo, requant16(c0[i], bias, sc, lo, hi, zp));
            _mm512_mask_cvtepi32_storeu_epi8(out + 16, m_hi, requant16(c1[i], bias, sc, lo, hi, zp));
        }
        return;
    }
    for (int64_t i = 0; i < mr; ++i) {
        _mm512_mask_storeu_epi32(C + i * ldc, m_lo, c0[i]);
        _mm512_mask_storeu_epi32(C + i * ldc + 16, m_hi, c1[i]);
    }
}

bool have_vnni() {
    static const bool v = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                          __builtin_cpu_supports("avx512vnni");
    return v;
}
#endif

void raw_gemm_generic(const PackedA& a, const PackedB& b, int64_t M, int64_t N, int32_t* C, int64_t ldc) {
    int32_t acc[4 * kNr];
    for (int64_t p = 0; p < b.panels; ++p) {
        const uint8_t* panel = b.data + p * b.kp * kNr;
        const int64_t nc = std::min(kNr, N - p * kNr);
        for (int64_t m0 = 0; m0 < M; m0 += 4) {
            const int64_t mr = std::min<int64_t>(4, M - m0);
            std::fill(acc, acc + 4 * kNr, 0);
            kernel_generic(a, panel, m0, mr, 0, a.kp, acc);
            for (int64_t i = 0; i < mr; ++i) std::copy(acc + i * kNr, acc + i * kNr + nc, C + (m0 + i) * ldc + p * kNr);
        }
    }
}

#if defined(__x86_64__)
void raw_gemm_vnni(const PackedA& a, const PackedB& b, int64_t M, int64_t N, int32_t* C, int64_t ldc, const Epilogue& epi) {
    for (int64_t p = 0; p < b.panels; p += 2) {
        const int64_t np = std::min<int64_t>(2, b.panels - p);
        const uint8_t* pa = b.data + p * b.kp * kNr;
        const uint8_t* pb = np > 1 ? pa + b.kp * kNr : pa;
        const int64_t nc = std::min(kNr * np, N - p * kNr);
        for (int64_t m0 = 0; m0 < M; m0 += kMrVnni) {
            const int64_t mr = std::min(kMrVnni, M - m0);
            for (int64_t k0 = 0; k0 < a.kp || k0 == 0; k0 += kKc) {
                const int64_t k1 = std::min(a.kp, k0 + kKc);
                kernel_vnni(a, pa, pb, np, m0, mr, k0, k1, C + m0 * ldc + p * kNr, ldc, nc, k1 == a.kp ? &epi : nullptr,
                            p * kNr);
                if (k1 == a.kp) break;
            }
        }
    }
}
#endif

}  // namespace

const char* qgemm_kernel_name() {
#if defined(__x86_64__)
    if (!g_force_generic && have_vnni()) return "avx512vnni";
#endif
    return "generic";
}

void sgemm_force_generic_internal(bool on);
void gemm_force_generic(bool on) {
    g_force_generic = on;
    sgemm_force_generic_internal(on);
}

namespace {

void qgemm_impl(int64_t M, int64_t N, int64_t K, const Q8Operand& A, const RowSource& rs, bool b_signed,
                const std::vector<int32_t>& b_zp, int32_t* C, int64_t ldc, const QGemmRequant* rq) {
    if (M <= 0 || N <= 0) return;
    thread_local PackedA a;
    thread_local PackedB b;
    const uint8_t flip = b_signed ? 0x80 : 0;
    bool vnni = false;
#if defined(__x86_64__)
    vnni = !g_force_generic && have_vnni();
    if (vnni) {
        pack_a_avx512(M, K, A, a);
        pack_b_avx512(K, N, flip, rs, b);
        colsum_vnni(b);
    }
#endif
    if (!vnni) {
        pack_a(M, K, A, a);
        pack_b(K, N, flip, rs, b);
    }
    // Zero-point correction in the flipped domain (see file comment):
    //   c = raw - za*colsum[n] + zb[n]*(K*za - rowsum[m]).
    // The exact result fits in int32, so modular (uint32) arithmetic yields it exactly.
    const int32_t sa = A.is_signed ? 0 : -128, sb = b_signed ? 128 : 0;
    thread_local std::vector<int32_t> za, t, zb;
    za.resize(static_cast<size_t>(M));
    t.resize(static_cast<size_t>(M));
    zb.assign(b.colsum.size(), 0);
    for (int64_t m = 0; m < M; ++m) {
        const size_t i = static_cast<size_t>(m);
        za[i] = (A.zp.size() > 1 ? A.zp[i] : A.zp[0]) + sa;
        t[i] = static_cast<int32_t>(static_cast<uint32_t>(K) * static_cast<uint32_t>(za[i]) - static_cast<uint32_t>(a.rowsum[i]));
    }
    for (int64_t n = 0; n < N; ++n) zb[static_cast<size_t>(n)] = (b_zp.size() > 1 ? b_zp[static_cast<size_t>(n)] : b_zp[0]) + sb;
#if defined(__x86_64__)
    if (vnni) {
        if (rq && !C) {  // int32 scratch only for partial sums when K spans several k blocks
            thread_local ops::Scratch<int32_t> partial;
            C = partial.get(static_cast<size_t>(M * N));
            ldc = N;
        }
        raw_gemm_vnni(a, b, M, N, C, ldc, Epilogue{za.data(), t.data(), b.colsum.data(), zb.data(), rq});
        return;
    }
#endif
    thread_local ops::Scratch<int32_t> full;
    if (rq && !C) {
        C = full.get(static_cast<size_t>(M * N));
        ldc = N;
    }
    raw_gemm_generic(a, b, M, N, C, ldc);
    const uint32_t* cs = reinterpret_cast<const uint32_t*>(b.colsum.data());
    const uint32_t* zbu = reinterpret_cast<const uint32_t*>(zb.data());
    for (int64_t m = 0; m < M; ++m) {
        const uint32_t zam = static_cast<uint32_t>(za[static_cast<size_t>(m)]), tm = static_cast<uint32_t>(t[static_cast<size_t>(m)]);
        uint32_t* c = reinterpret_cast<uint32_t*>(C + m * ldc);
        for (int64_t n = 0; n < N; ++n) c[n] = c[n] - zam * cs[n] + zbu[n] * tm;
    }
    if (rq)
        for (int64_t m = 0; m < M; ++m) {
            const int32_t bias = rq->bias ? rq->bias[m] : 0;
            uint8_t* out = static_cast<uint8_t*>(rq->out) + m * rq->ldo;
            if (rq->out_signed) ops::requant_row<int8_t>(C + m * ldc, N, bias, rq->scale[m], rq->zp, reinterpret_cast<int8_t*>(out));
            else ops::requant_row<uint8_t>(C + m * ldc, N, bias, rq->scale[m], rq->zp, out);
        }
}

}  // namespace

void qgemm_requant(int64_t M, int64_t N, int64_t K, const Q8Operand& A, const Q8Operand& B, const QGemmRequant& rq) {
    RowSource rs;
    rs.src = static_cast<const uint8_t*>(B.data);
    rs.ld = B.ld;
    qgemm_impl(M, N, K, A, rs, B.is_signed, B.zp, nullptr, 0, &rq);
}

void qgemm(int64_t M, int64_t N, int64_t K, const Q8Operand& A, const Q8Operand& B, int32_t* C, int64_t ldc) {
    RowSource rs;
    rs.src = static_cast<const uint8_t*>(B.data);
    rs.ld = B.ld;
    qgemm_impl(M, N, K, A, rs, B.is_signed, B.zp, C, ldc, nullptr);
}

void qgemm_rows(int64_t M, int64_t N, int64_t K, const Q8Operand& A, const QGemmRowFn& b_row, bool b_signed,
                const std::vector<int32_t>& b_zp, int32_t* C, int64_t ldc, const QGemmRequant* rq) {
    thread_local ops::Scratch<uint8_t> bufs;
    RowSource rs;
    rs.fn = &b_row;
    rs.n = N;
    rs.bufs = bufs.get(static_cast<size_t>(4 * std::max<int64_t>(N, 1)));
    qgemm_impl(M, N, K, A, rs, b_signed, b_zp, C, ldc, rq);
}

}  // namespace num
