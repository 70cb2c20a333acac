// SPDX-License-Identifier: MIT
// Host floating-point environment helpers for the F extension: RISC-V rounding modes on the host FPU,
// IEEE flags -> fflags, canonical NaNs, and the roundTiesToAway (RMM) correction the host lacks.
// Compiled with -frounding-math -fsignaling-nans so GCC keeps operations inside the scopes below.
#pragma once
#include <cfenv>
#include <cmath>
#include <cstdint>
#include <cstring>
#if defined(__SSE__)
#include <xmmintrin.h>
#endif

namespace iss::fp {

constexpr uint32_t kCanonicalNan = 0x7fc00000u;                   // ISA manual Vol. I 11.3
constexpr uint32_t kNx = 1, kUf = 2, kOf = 4, kDz = 8, kNv = 16;  // fflags bits
constexpr unsigned kRne = 0, kRtz = 1, kRdn = 2, kRup = 3, kRmm = 4;

inline float as_f(uint32_t v) {
    float f;
    std::memcpy(&f, &v, 4);
    return f;
}
inline uint32_t as_u(float f) {
    uint32_t v;
    std::memcpy(&v, &f, 4);
    return v;
}
inline bool is_nan(uint32_t v) { return (v & 0x7fffffffu) > 0x7f800000u; }
inline bool is_snan(uint32_t v) { return is_nan(v) && !(v & 0x00400000u); }

/// Sets the host rounding mode for one operation and collects the IEEE flags it raised. On x86-64 this
/// talks to MXCSR directly (glibc's fenv calls cost more than the arithmetic, measured with perf); float
/// arithmetic there is SSE, so MXCSR is the whole environment. Elsewhere it uses <cfenv>.
/// Callers read their operands from volatile locals so the compiler cannot hoist the operation above
/// the mode switch, and store the result to a volatile before flags() is read.
class HostRounding {
public:
    explicit HostRounding(unsigned rm) {
#if defined(__SSE__)
        // MXCSR: flags in bits 0..5, DAZ bit 6, rounding control bits 13..14 (RN, RD, RU, RZ), FTZ bit 15.
        static const unsigned kRc[5] = {0x0000u, 0x6000u, 0x2000u, 0x4000u, 0x0000u};
        old_ = _mm_getcsr();
        _mm_setcsr((old_ & ~0xe07fu) | kRc[rm]);
#else
        static const int kHost[5] = {FE_TONEAREST, FE_TOWARDZERO, FE_DOWNWARD, FE_UPWARD, FE_TONEAREST};
        old_ = static_cast<unsigned>(std::fegetround());
        std::fesetround(kHost[rm]);
        std::feclearexcept(FE_ALL_EXCEPT);
#endif
    }
    ~HostRounding() {
#if defined(__SSE__)
        _mm_setcsr(old_);
#else
        std::fesetround(static_cast<int>(old_));
#endif
    }
    HostRounding(const HostRounding&) = delete;
    HostRounding& operator=(const HostRounding&) = delete;
    /// RISC-V fflags for everything raised since construction.
    static uint32_t flags() {
#if defined(__SSE__)
        const unsigned c = _mm_getcsr();
        return ((c & 0x20u) ? kNx : 0) | ((c & 0x10u) ? kUf : 0) | ((c & 0x08u) ? kOf : 0) | ((c & 0x04u) ? kDz : 0) |
               ((c & 0x01u) ? kNv : 0);
#else
        const int e = std::fetestexcept(FE_ALL_EXCEPT);
        return ((e & FE_INEXACT) ? kNx : 0) | ((e & FE_UNDERFLOW) ? kUf : 0) | ((e & FE_OVERFLOW) ? kOf : 0) |
               ((e & FE_DIVBYZERO) ? kDz : 0) | ((e & FE_INVALID) ? kNv : 0);
#endif
    }

private:
    unsigned old_;
};

/// RMM correction: `rne` is the round-to-nearest-even result of an operation whose exact value is
/// `exact` (only meaningful when exact_known). At a tie RNE picks the even neighbour, RMM the one away
/// from zero. Square roots never tie (a float's square root is never a midpoint); quotients can tie when
/// the result is subnormal.
inline float rmm_fix(float rne, long double exact, bool exact_known) {
    if (!exact_known || std::isnan(rne) || std::isinf(rne)) return rne;
    const float toward_zero_neighbour =
        std::fabs(static_cast<long double>(rne)) <= std::fabs(exact) ? rne : std::nextafter(rne, 0.0f);
    const float away = std::nextafter(toward_zero_neighbour, exact < 0 ? -INFINITY : INFINITY);
    const long double mid = (static_cast<long double>(toward_zero_neighbour) + away) / 2;
    return (exact == mid) ? away : rne;
}

}  // namespace iss::fp
