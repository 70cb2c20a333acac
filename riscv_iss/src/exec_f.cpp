// SPDX-License-Identifier: MIT
// F extension (ISA manual Vol. I ch. 11), bit-exact: arithmetic runs on the host FPU in the requested
// rounding mode (RMM corrected at ties), flags map 1:1 to fflags, NaN results become the canonical NaN,
// and min/max/compare/convert/classify implement the RISC-V rules in integer code.
#include "fp_env.h"
#include "riscv_iss/hart.h"
#include "riscv_iss_isa_table.inc"

namespace iss {

#if defined(__SSE__)
namespace {
// MXCSR rounding control for the RISC-V modes RNE, RTZ, RDN, RUP (RMM: RNE, corrected where it can tie).
constexpr unsigned kMxcsrRc[5] = {0x0000u, 0x6000u, 0x2000u, 0x4000u, 0x0000u};
}  // namespace

void Hart::fp_switch(unsigned rm) {
    if (!fp_active_) {
        fp_host_csr_ = _mm_getcsr();
        fp_active_ = true;
        // Flags, DAZ, rounding control and FTZ cleared (IEEE behaviour); exception masks kept.
        _mm_setcsr((fp_host_csr_ & ~0xe07fu) | kMxcsrRc[rm]);
    } else {
        _mm_setcsr((_mm_getcsr() & ~0x6000u) | kMxcsrRc[rm]);
    }
    fp_rm_ = rm;
}

void Hart::fp_harvest() {
    const unsigned c = _mm_getcsr();
    fflags_ |= ((c & 0x20u) ? fp::kNx : 0) | ((c & 0x10u) ? fp::kUf : 0) | ((c & 0x08u) ? fp::kOf : 0) |
               ((c & 0x04u) ? fp::kDz : 0) | ((c & 0x01u) ? fp::kNv : 0);
    _mm_setcsr(fp_host_csr_);
    fp_active_ = false;
}
#else
void Hart::fp_switch(unsigned) {}
void Hart::fp_harvest() { fp_active_ = false; }
#endif

namespace exec {
namespace {
using namespace iss::fp;

// The host FP session needs an FPU whose flags and rounding mode are one register (x86-64 SSE) and a
// fused multiply-add that does not touch the FP environment itself (glibc's fmaf without FMA hardware
// does); otherwise every operation runs in its own HostRounding scope.
#if defined(__SSE__)
const bool kHostSessionOk = __builtin_cpu_supports("fma");
#else
constexpr bool kHostSessionOk = false;
#endif

/// Checks mstatus.FS and resolves the rounding mode; raises illegal-instruction and returns false for
/// FS=Off or a reserved rounding mode (5, 6, or dynamic with frm >= 5).
bool begin(Hart& h, const DecodedInsn& d, unsigned& rm) {
    rm = d.rm == 7 ? h.frm_ : d.rm;
    if (!h.fp_enabled() || rm > kRmm) {
        h.raise_illegal(d);
        return false;
    }
    return true;
}
bool begin(Hart& h, const DecodedInsn& d) {
    if (h.fp_enabled()) return true;
    h.raise_illegal(d);
    return false;
}

void write_f(Hart& h, uint8_t rd, float r, uint32_t flags) {
    const uint32_t bits = as_u(r);
    h.f_[rd] = is_nan(bits) ? kCanonicalNan : bits;
    h.fflags_ |= flags;
    h.fp_dirty();
}
void write_x(Hart& h, uint8_t rd, uint32_t v, uint32_t flags) {
    h.x_[rd] = v;
    if (flags) {
        h.fflags_ |= flags;
        h.fp_dirty();
    }
}

/// Runs `op` in rounding mode rm; for RMM, corrects a tie using `exact` (a long double that is exact
/// whenever the host raises no inexact computing it). Other modes run in the hart's host FP session
/// (Hart::fp_enter): the flags accrue in the host FPU and reach fflags_ when the session ends, which
/// avoids two MXCSR writes and a flag read per operation (those cost more than the arithmetic).
template <bool kCanTie, typename Op, typename Exact>
void arith(Hart& h, const DecodedInsn& d, uint32_t cost, Op op, Exact exact) {
    unsigned rm;
    if (!begin(h, d, rm)) return;
    h.cycles_ += cost;
    if (!(kCanTie && rm == kRmm) && kHostSessionOk) {
        h.fp_enter(rm);
        volatile float v = op();
        write_f(h, d.rd, v, 0);
        return;
    }
    h.fp_leave();
    float r;
    uint32_t flags;
    {
        HostRounding scope(rm);
        volatile float v = op();
        r = v;
        flags = HostRounding::flags();
    }
    if (kCanTie && rm == kRmm && (flags & kNx)) {
        std::feclearexcept(FE_ALL_EXCEPT);
        volatile long double e = exact();
        const bool known = !std::fetestexcept(FE_INEXACT);
        r = rmm_fix(r, e, known);
    }
    write_f(h, d.rd, r, flags);
}

inline float fr(const Hart& h, uint8_t r) { return as_f(h.f_[r]); }
// Operands are read through volatile locals (see HostRounding) and captured by reference.
inline long double ld(float f) { return static_cast<long double>(f); }
constexpr auto kNoExact = [] { return 0.0L; };

template <typename Op, typename Exact>
void fused(Hart& h, const DecodedInsn& d, float a, float b, Op op, Exact exact) {  // a, b: for the inf*0 check
    // inf * 0 is invalid even when the addend is a quiet NaN (ISA manual Vol. I 11.6).
    if ((std::isinf(a) && b == 0.0f) || (a == 0.0f && std::isinf(b))) {
        unsigned rm;
        if (!begin(h, d, rm)) return;
        write_f(h, d.rd, as_f(kCanonicalNan), kNv);
        return;
    }
    arith<true>(h, d, 0, op, exact);
}

int32_t class_bits(uint32_t v) {
    const bool neg = v >> 31;
    const uint32_t exp = (v >> 23) & 0xff, man = v & 0x7fffff;
    if (exp == 0xff) {
        if (man == 0) return neg ? 1 << 0 : 1 << 7;
        return (man & 0x400000) ? 1 << 9 : 1 << 8;
    }
    if (exp == 0) {
        if (man == 0) return neg ? 1 << 3 : 1 << 4;
        return neg ? 1 << 2 : 1 << 5;
    }
    return neg ? 1 << 1 : 1 << 6;
}

/// Rounds a float to an integral value in mode rm with exact double arithmetic (no host rounding mode).
double round_integral(float a, unsigned rm) {
    const double x = a;
    if (!(std::fabs(x) < 8388608.0)) return x;  // |a| >= 2^23 (or inf): already integral
    const double t = std::trunc(x);
    const double frac = x - t;  // exact: |x| < 2^23
    if (frac == 0.0) return t;
    const double away = t + (x < 0 ? -1.0 : 1.0);
    switch (rm) {
        case kRtz: return t;
        case kRdn: return x < 0 ? away : t;
        case kRup: return x > 0 ? away : t;
        case kRmm: return std::fabs(frac) >= 0.5 ? away : t;
        default:  // RNE
            if (std::fabs(frac) != 0.5) return std::fabs(frac) > 0.5 ? away : t;
            return std::fmod(t, 2.0) == 0.0 ? t : away;
    }
}

void min_max(Hart& h, const DecodedInsn& d, bool is_max) {
    if (!begin(h, d)) return;
    const uint32_t a = h.f_[d.rs1], b = h.f_[d.rs2];
    const uint32_t flags = (is_snan(a) || is_snan(b)) ? kNv : 0;
    uint32_t r;
    if (is_nan(a) && is_nan(b))
        r = kCanonicalNan;
    else if (is_nan(a))
        r = b;
    else if (is_nan(b))
        r = a;
    else if (as_f(a) == as_f(b))
        r = is_max ? (a & b) : (a | b);  // -0 < +0 (bitwise on the sign)
    else
        r = (as_f(a) < as_f(b)) != is_max ? a : b;
    write_f(h, d.rd, as_f(r), flags);
}
}  // namespace

void ex_flw(Hart& h, const DecodedInsn& d) {
    if (!begin(h, d)) return;
    uint32_t v;
    if (!h.load<uint32_t>(h.x_[d.rs1] + static_cast<uint32_t>(d.imm), v)) return;
    h.f_[d.rd] = v;
    h.fp_dirty();
}
void ex_fsw(Hart& h, const DecodedInsn& d) {
    if (!begin(h, d)) return;
    h.store<uint32_t>(h.x_[d.rs1] + static_cast<uint32_t>(d.imm), h.f_[d.rs2]);
}
void ex_fadd_s(Hart& h, const DecodedInsn& d) {
    volatile float a = fr(h, d.rs1), b = fr(h, d.rs2);
    arith<true>(
        h, d, 0, [&] { return a + b; }, [&] { return ld(a) + ld(b); });
}
void ex_fsub_s(Hart& h, const DecodedInsn& d) {
    volatile float a = fr(h, d.rs1), b = fr(h, d.rs2);
    arith<true>(
        h, d, 0, [&] { return a - b; }, [&] { return ld(a) - ld(b); });
}
void ex_fmul_s(Hart& h, const DecodedInsn& d) {
    volatile float a = fr(h, d.rs1), b = fr(h, d.rs2);
    arith<true>(
        h, d, 0, [&] { return a * b; }, [&] { return ld(a) * ld(b); });
}
void ex_fdiv_s(Hart& h, const DecodedInsn& d) {
    volatile float a = fr(h, d.rs1), b = fr(h, d.rs2);
    // Quotients can tie at subnormal precision (found by the QEMU differential run, seed 5223).
    arith<true>(
        h, d, 0, [&] { return a / b; }, [&] { return ld(a) / ld(b); });
}
void ex_fsqrt_s(Hart& h, const DecodedInsn& d) {
    volatile float a = fr(h, d.rs1);
    arith<false>(
        h, d, 0, [&] { return std::sqrt(a); }, kNoExact);
}
void ex_fmadd_s(Hart& h, const DecodedInsn& d) {
    volatile float a = fr(h, d.rs1), b = fr(h, d.rs2), c = fr(h, d.rs3);
    fused(
        h, d, a, b, [&] { return std::fma(a, b, c); }, [&] { return ld(a) * ld(b) + ld(c); });
}
void ex_fmsub_s(Hart& h, const DecodedInsn& d) {
    volatile float a = fr(h, d.rs1), b = fr(h, d.rs2), c = fr(h, d.rs3);
    fused(
        h, d, a, b, [&] { return std::fma(a, b, -c); }, [&] { return ld(a) * ld(b) - ld(c); });
}
void ex_fnmsub_s(Hart& h, const DecodedInsn& d) {
    volatile float a = fr(h, d.rs1), b = fr(h, d.rs2), c = fr(h, d.rs3);
    fused(
        h, d, a, b, [&] { return std::fma(-a, b, c); }, [&] { return -(ld(a) * ld(b)) + ld(c); });
}
void ex_fnmadd_s(Hart& h, const DecodedInsn& d) {
    volatile float a = fr(h, d.rs1), b = fr(h, d.rs2), c = fr(h, d.rs3);
    fused(
        h, d, a, b, [&] { return std::fma(-a, b, -c); }, [&] { return -(ld(a) * ld(b)) - ld(c); });
}
void ex_fsgnj_s(Hart& h, const DecodedInsn& d) {
    if (!begin(h, d)) return;
    h.f_[d.rd] = (h.f_[d.rs1] & 0x7fffffffu) | (h.f_[d.rs2] & 0x80000000u);
    h.fp_dirty();
}
void ex_fsgnjn_s(Hart& h, const DecodedInsn& d) {
    if (!begin(h, d)) return;
    h.f_[d.rd] = (h.f_[d.rs1] & 0x7fffffffu) | (~h.f_[d.rs2] & 0x80000000u);
    h.fp_dirty();
}
void ex_fsgnjx_s(Hart& h, const DecodedInsn& d) {
    if (!begin(h, d)) return;
    h.f_[d.rd] = h.f_[d.rs1] ^ (h.f_[d.rs2] & 0x80000000u);
    h.fp_dirty();
}
void ex_fmin_s(Hart& h, const DecodedInsn& d) { min_max(h, d, false); }
void ex_fmax_s(Hart& h, const DecodedInsn& d) { min_max(h, d, true); }
void ex_fcvt_w_s(Hart& h, const DecodedInsn& d) {
    unsigned rm;
    if (!begin(h, d, rm)) return;
    const uint32_t bits = h.f_[d.rs1];
    if (is_nan(bits)) return write_x(h, d.rd, 0x7fffffffu, kNv);
    const float a = as_f(bits);
    const double r = round_integral(a, rm);
    if (r > 2147483647.0) return write_x(h, d.rd, 0x7fffffffu, kNv);
    if (r < -2147483648.0) return write_x(h, d.rd, 0x80000000u, kNv);
    write_x(h, d.rd, static_cast<uint32_t>(static_cast<int32_t>(r)), r != a ? kNx : 0);
}
void ex_fcvt_wu_s(Hart& h, const DecodedInsn& d) {
    unsigned rm;
    if (!begin(h, d, rm)) return;
    const uint32_t bits = h.f_[d.rs1];
    if (is_nan(bits)) return write_x(h, d.rd, 0xffffffffu, kNv);
    const float a = as_f(bits);
    const double r = round_integral(a, rm);
    if (r > 4294967295.0) return write_x(h, d.rd, 0xffffffffu, kNv);
    if (r < 0.0) return write_x(h, d.rd, 0, kNv);
    write_x(h, d.rd, static_cast<uint32_t>(r), r != a ? kNx : 0);
}
void ex_fmv_x_w(Hart& h, const DecodedInsn& d) {
    if (begin(h, d)) h.x_[d.rd] = h.f_[d.rs1];
}
void ex_fclass_s(Hart& h, const DecodedInsn& d) {
    if (begin(h, d)) h.x_[d.rd] = static_cast<uint32_t>(class_bits(h.f_[d.rs1]));
}
void ex_feq_s(Hart& h, const DecodedInsn& d) {
    if (!begin(h, d)) return;
    const uint32_t a = h.f_[d.rs1], b = h.f_[d.rs2];
    const bool nan = is_nan(a) || is_nan(b);
    write_x(h, d.rd, !nan && as_f(a) == as_f(b), (is_snan(a) || is_snan(b)) ? kNv : 0);
}
void ex_flt_s(Hart& h, const DecodedInsn& d) {
    if (!begin(h, d)) return;
    const uint32_t a = h.f_[d.rs1], b = h.f_[d.rs2];
    const bool nan = is_nan(a) || is_nan(b);
    write_x(h, d.rd, !nan && as_f(a) < as_f(b), nan ? kNv : 0);
}
void ex_fle_s(Hart& h, const DecodedInsn& d) {
    if (!begin(h, d)) return;
    const uint32_t a = h.f_[d.rs1], b = h.f_[d.rs2];
    const bool nan = is_nan(a) || is_nan(b);
    write_x(h, d.rd, !nan && as_f(a) <= as_f(b), nan ? kNv : 0);
}
void ex_fcvt_s_w(Hart& h, const DecodedInsn& d) {
    volatile int32_t v = static_cast<int32_t>(h.x_[d.rs1]);
    arith<true>(
        h, d, 0, [&] { return static_cast<float>(v); }, [&] { return static_cast<long double>(v); });
}
void ex_fcvt_s_wu(Hart& h, const DecodedInsn& d) {
    volatile uint32_t v = h.x_[d.rs1];
    arith<true>(
        h, d, 0, [&] { return static_cast<float>(v); }, [&] { return static_cast<long double>(v); });
}
void ex_fmv_w_x(Hart& h, const DecodedInsn& d) {
    if (!begin(h, d)) return;
    h.f_[d.rd] = h.x_[d.rs1];
    h.fp_dirty();
}

}  // namespace exec
}  // namespace iss
