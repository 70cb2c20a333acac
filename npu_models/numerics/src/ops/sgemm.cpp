// SPDX-License-Identifier: MIT
// fp32 GEMM: B packed in 16-column panels ([k][16]), 6x32 register tiles, k blocked so a panel
// pair stays in L1/L2. AVX-512F kernel behind a runtime check, portable kernel otherwise.
#include <algorithm>
#include <vector>

#include "numerics/gemm.h"
#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace num {
namespace {

constexpr int64_t kNr = 16;
constexpr int64_t kMr = 6;
constexpr int64_t kKc = 256;

struct PackedB {
    std::vector<float> data;  // panels x K x 16
    int64_t panels = 0;
};

PackedB pack_b(int64_t K, int64_t N, const float* B, int64_t ldb) {
    PackedB p;
    p.panels = (N + kNr - 1) / kNr;
    p.data.assign(static_cast<size_t>(p.panels * K * kNr), 0.0f);
    for (int64_t pn = 0; pn < p.panels; ++pn) {
        const int64_t nc = std::min(kNr, N - pn * kNr);
        float* dst = p.data.data() + pn * K * kNr;
        for (int64_t k = 0; k < K; ++k) std::copy(B + k * ldb + pn * kNr, B + k * ldb + pn * kNr + nc, dst + k * kNr);
    }
    return p;
}

// acc[mr][32] += A[m0.., k0..k1) * panels (pa, pb); portable version.
void kernel_generic(const float* A, int64_t lda, const float* pa, const float* pb, int64_t np, int64_t mr,
                    int64_t k0, int64_t k1, float* acc) {
    for (int64_t i = 0; i < mr; ++i) {
        float* c = acc + i * 32;
        for (int64_t k = k0; k < k1; ++k) {
            const float a = A[i * lda + k];
            const float* b0 = pa + k * kNr;
            for (int64_t j = 0; j < kNr; ++j) c[j] += a * b0[j];
            if (np > 1) {
                const float* b1 = pb + k * kNr;
                for (int64_t j = 0; j < kNr; ++j) c[16 + j] += a * b1[j];
            }
        }
    }
}

#if defined(__x86_64__)
__attribute__((target("avx512f"))) void kernel_avx512(const float* A, int64_t lda, const float* pa, const float* pb,
                                                      int64_t np, int64_t mr, int64_t k0, int64_t k1, float* acc) {
    __m512 c0[kMr], c1[kMr];
    const float* ar[kMr];
    for (int64_t i = 0; i < kMr; ++i) {
        c0[i] = i < mr ? _mm512_loadu_ps(acc + i * 32) : _mm512_setzero_ps();
        c1[i] = i < mr ? _mm512_loadu_ps(acc + i * 32 + 16) : _mm512_setzero_ps();
        ar[i] = A + std::min(i, mr - 1) * lda;
    }
    for (int64_t k = k0; k < k1; ++k) {
        const __m512 b0 = _mm512_loadu_ps(pa + k * kNr);
        const __m512 b1 = _mm512_loadu_ps(pb + k * kNr);
        for (int64_t i = 0; i < kMr; ++i) {
            const __m512 av = _mm512_set1_ps(ar[i][k]);
            c0[i] = _mm512_fmadd_ps(av, b0, c0[i]);
            c1[i] = _mm512_fmadd_ps(av, b1, c1[i]);
        }
    }
    for (int64_t i = 0; i < mr; ++i) {
        _mm512_storeu_ps(acc + i * 32, c0[i]);
        if (np > 1) _mm512_storeu_ps(acc + i * 32 + 16, c1[i]);
    }
}

bool have_avx512() {
    static const bool v = __builtin_cpu_supports("avx512f");
    return v;
}
#endif

bool g_generic_only = false;

}  // namespace

void sgemm_force_generic_internal(bool on) { g_generic_only = on; }

void sgemm(int64_t M, int64_t N, int64_t K, const float* A, int64_t lda, const float* B, int64_t ldb, float* C,
           int64_t ldc) {
    if (M <= 0 || N <= 0) return;
    const PackedB b = pack_b(K, N, B, ldb);
    bool fast = false;
#if defined(__x86_64__)
    fast = !g_generic_only && have_avx512();
#endif
    std::vector<float> acc(static_cast<size_t>(kMr * 32));
    for (int64_t p = 0; p < b.panels; p += 2) {
        const int64_t np = std::min<int64_t>(2, b.panels - p);
        const float* pa = b.data.data() + p * K * kNr;
        const float* pb = np > 1 ? pa + K * kNr : pa;
        const int64_t nc = std::min(kNr * np, N - p * kNr);
        for (int64_t m0 = 0; m0 < M; m0 += kMr) {
            const int64_t mr = std::min(kMr, M - m0);
            std::fill(acc.begin(), acc.end(), 0.0f);
            for (int64_t k0 = 0; k0 < K; k0 += kKc) {
                const int64_t k1 = std::min(K, k0 + kKc);
#if defined(__x86_64__)
                if (fast) {
                    kernel_avx512(A + m0 * lda, lda, pa, pb, np, mr, k0, k1, acc.data());
                    continue;
                }
#endif
                kernel_generic(A + m0 * lda, lda, pa, pb, np, mr, k0, k1, acc.data());
            }
            for (int64_t i = 0; i < mr; ++i)
                std::copy(acc.begin() + i * 32, acc.begin() + i * 32 + nc, C + (m0 + i) * ldc + p * kNr);
        }
    }
}

}  // namespace num
