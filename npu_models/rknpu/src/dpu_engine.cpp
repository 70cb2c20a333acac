// SPDX-License-Identifier: MIT
#include "npu/rknpu/dpu_engine.h"
#include "npu/rknpu/buffer_pool.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <string>
#include <cstring>
#include <stdexcept>

#include "dpu_blocked.h"
#include "numerics/requant.h"

namespace npu::rknpu {

namespace {

/// Every right shift in the integer datapath (BS/BN MUL, EW convert and MUL, LUT interpolation,
/// output convert) rounds half up (add half, then arithmetic shift): UNVERIFIED for the BS/BN MUL,
/// EW_TRUNCATE and LUT shifts (no public tie rule); for the output and EW converts the TRM gives
/// one, CVT_ROUND / EW_CVT_ROUND 0 = half to even, 1 = half up, which is not modelled (the model is
/// the 1 reading whatever the bit; docs/rknpu-register-semantics.md A-ROUND); CVT_TYPE neither.
constexpr num::Rounding kDpuRounding = num::Rounding::HalfUp;

int64_t shr_round(int64_t x, int64_t mul, uint32_t shift) {
    return num::mul_shift(x, static_cast<int32_t>(mul), static_cast<int>(shift), kDpuRounding);
}

float bits_f32(uint32_t v) {
    float f = 0;
    std::memcpy(&f, &v, 4);
    return f;
}

int32_t load_i32(const std::vector<uint8_t>& b, size_t at) {
    int32_t v = 0;
    if (at + 4 > b.size()) throw std::logic_error("DPU operand image too small");
    std::memcpy(&v, b.data() + at, 4);
    return v;
}
uint16_t load_u16(const std::vector<uint8_t>& b, size_t at) {
    if (at + 2 > b.size()) throw std::logic_error("DPU operand image too small");
    return static_cast<uint16_t>(b[at] | (b[at + 1] << 8));
}

}  // namespace

DpuStageOperands dpu_stage_operands(const DpuStage& s, uint32_t ch, uint32_t channels, const std::vector<uint8_t>& mem) {
    DpuStageOperands r;
    const size_t mul_base = (!s.alu_bypass && s.alu_from_mem) ? 4ull * channels : 0;
    r.alu = (s.alu_from_mem && !s.alu_bypass) ? static_cast<uint32_t>(load_i32(mem, 4ull * ch)) : s.alu_operand;
    r.mul = (s.mul_from_mem && !s.mul_bypass) ? load_u16(mem, mul_base + 2ull * ch) : static_cast<uint16_t>(s.mul_operand);
    return r;
}

namespace {

template <typename T>
T alu(uint32_t algo, T x, T y) {
    switch (algo) {
        case static_cast<uint32_t>(AluAlgo::Max): return x > y ? x : y;
        case static_cast<uint32_t>(AluAlgo::Min): return x < y ? x : y;
        // Div / Minus: the EW float path only (dpu_config.cpp rejects them elsewhere); x the stage
        // input, y the operand (UNVERIFIED order, COMPILER.md A-EWALU).
        case static_cast<uint32_t>(AluAlgo::Div): return x / y;
        case static_cast<uint32_t>(AluAlgo::Minus): return x - y;
        default: return x + y;  // Add (validated)
    }
}

/// Per-channel operands of one BS/BN stage, resolved once per channel.
struct StageOps {
    int64_t alu_i = 0, mul_i = 1;
    float alu_f = 0, mul_f = 1, relux_f = 0;
    int64_t relux_i = 0;
};

StageOps stage_ops(const DpuStage& s, uint32_t ch, uint32_t channels, const std::vector<uint8_t>& mem, bool fl) {
    StageOps o;
    if (s.bypass) return o;
    const DpuStageOperands raw = dpu_stage_operands(s, ch, channels, mem);
    const uint32_t alu_raw = raw.alu;
    const uint16_t mul_raw = raw.mul;
    if (fl) {
        o.alu_f = bits_f32(alu_raw);
        o.mul_f = fp16_to_fp32(mul_raw);
        o.relux_f = bits_f32(s.relux_cmp);
    } else {
        o.alu_i = static_cast<int32_t>(alu_raw);
        o.mul_i = static_cast<int16_t>(mul_raw);
        o.relux_i = static_cast<int32_t>(s.relux_cmp);
    }
    return o;
}

/// UNVERIFIED: every ALU / MUL / LUT result of the integer datapath saturates to 32 bits (the
/// hardware width is not public; this keeps the model free of 64-bit overflow on any register
/// values).
int64_t sat32(int64_t v) { return num::saturate(v, INT32_MIN, INT32_MAX); }

int64_t stage_i(const DpuStage& s, const StageOps& o, int64_t x) {
    if (s.bypass) return x;
    if (!s.alu_bypass) x = sat32(alu<int64_t>(s.alu_algo, x, o.alu_i));
    if (!s.mul_bypass && (!s.mul_prelu || x < 0)) x = sat32(shr_round(x, o.mul_i, s.mul_shift));
    if (!s.relu_bypass) {
        if (x < 0) x = 0;
        if (s.relux_en && x > o.relux_i) x = o.relux_i;
    }
    return x;
}

float stage_f(const DpuStage& s, const StageOps& o, float x) {
    if (s.bypass) return x;
    if (!s.alu_bypass) x = alu<float>(s.alu_algo, x, o.alu_f);
    // Float MUL: the shift field does not apply (UNVERIFIED).
    if (!s.mul_bypass && (!s.mul_prelu || x < 0)) x = x * o.mul_f;
    if (!s.relu_bypass) {
        if (x < 0) x = 0;
        if (s.relux_en && x > o.relux_f) x = o.relux_f;
    }
    return x;
}

struct TableEval {
    bool under = false, over = false;
    int64_t y = 0;
};

/// One linear table: `n` entries, entry i at input start + (i << sel), linear interpolation
/// between neighbours; inputs outside [start, end] extrapolate from the end entries with the
/// slope (x - start or x - end) * scale >> shift. UNVERIFIED: NVDLA-lineage linear index mode;
/// the LUT input is the EW-stage value as is (no input scaling).
TableEval eval_table(const std::vector<int16_t>& t, uint32_t n, int64_t start, int64_t end, uint32_t sel,
                     int32_t uscale, uint32_t ushift, int32_t oscale, uint32_t oshift, int64_t x) {
    TableEval r;
    if (x < start) {
        r.under = true;
        r.y = t[0] + shr_round(x - start, uscale, ushift);
        return r;
    }
    if (x > end) {
        r.over = true;
        r.y = t[n - 1] + shr_round(x - end, oscale, oshift);
        return r;
    }
    const int64_t off = x - start;
    const int64_t idx = off >> sel;
    if (idx >= static_cast<int64_t>(n) - 1) {  // end lies past the last entry: hold it
        r.y = t[n - 1];
        return r;
    }
    const int64_t frac = off - (idx << sel);
    const int64_t a = t[static_cast<size_t>(idx)], b = t[static_cast<size_t>(idx) + 1];
    r.y = a + shr_round(b - a, frac, sel);
    return r;
}

struct TableEvalF {
    bool under = false, over = false;
    float y = 0;
};

/// The float-path table (UNVERIFIED encoding, after NVDLA SDP's float LUT): start/end are fp32
/// register bits, the entries fp16 bits, the index step 2^INDEX_SELECT with INDEX_SELECT read as a
/// signed 8-bit exponent (so steps below 1 exist), the slopes scale * 2^-shift; interpolation and
/// extrapolation in fp32.
TableEvalF eval_table_f(const std::vector<int16_t>& t, uint32_t n, float start, float end, uint32_t sel_raw,
                        int32_t uscale, uint32_t ushift, int32_t oscale, uint32_t oshift, float x) {
    TableEvalF r;
    auto entry = [&](size_t i) { return fp16_to_fp32(static_cast<uint16_t>(t[i])); };
    auto slope = [](int32_t scale, uint32_t shift) { return std::ldexp(static_cast<float>(scale), -static_cast<int>(shift)); };
    if (x < start) {
        r.under = true;
        const float s = slope(uscale, ushift);
        r.y = s == 0.0f ? entry(0) : entry(0) + (x - start) * s;
        return r;
    }
    if (x > end) {
        r.over = true;
        const float s = slope(oscale, oshift);
        r.y = s == 0.0f ? entry(n - 1) : entry(n - 1) + (x - end) * s;
        return r;
    }
    const int sel = static_cast<int8_t>(static_cast<uint8_t>(sel_raw & 0xffu));
    const float pos = std::ldexp(x - start, -sel);
    const float idx = std::floor(pos);
    if (!(idx < static_cast<float>(n - 1))) {  // end lies past the last entry: hold it
        r.y = entry(n - 1);
        return r;
    }
    const auto i = static_cast<size_t>(idx);
    const float a = entry(i), b = entry(i + 1);
    r.y = a + (b - a) * (pos - idx);
    return r;
}

}  // namespace

float lut_lookup_f(const DpuLut& l, float x) {
    if (std::isnan(x)) return x;
    const auto f = [](int32_t bits) {
        float v = 0;
        std::memcpy(&v, &bits, 4);
        return v;
    };
    const TableEvalF le = eval_table_f(l.le, kLutLeEntries, f(l.le_start), f(l.le_end), l.le_index_select, l.le_uflow_scale,
                                       l.le_uflow_shift, l.le_oflow_scale, l.le_oflow_shift, x);
    const TableEvalF lo = eval_table_f(l.lo, kLutLoEntries, f(l.lo_start), f(l.lo_end), l.lo_index_select, l.lo_uflow_scale,
                                       l.lo_uflow_shift, l.lo_oflow_scale, l.lo_oflow_shift, x);
    // The same priority rules as the integer table (lut_lookup).
    const bool le_hit = !le.under && !le.over, lo_hit = !lo.under && !lo.over;
    bool use_lo = false;
    if (le_hit && lo_hit) use_lo = l.hybrid_prefer_lo;
    else if (le_hit) use_lo = false;
    else if (lo_hit) use_lo = true;
    else if (le.under && lo.under) use_lo = l.uflow_prefer_lo;
    else if (le.over && lo.over) use_lo = l.oflow_prefer_lo;
    else use_lo = l.hybrid_prefer_lo;
    return use_lo ? lo.y : le.y;
}

int64_t lut_lookup(const DpuLut& l, int64_t x) {
    const TableEval le = eval_table(l.le, kLutLeEntries, l.le_start, l.le_end, l.le_index_select, l.le_uflow_scale,
                                    l.le_uflow_shift, l.le_oflow_scale, l.le_oflow_shift, x);
    const TableEval lo = eval_table(l.lo, kLutLoEntries, l.lo_start, l.lo_end, l.lo_index_select, l.lo_uflow_scale,
                                    l.lo_uflow_shift, l.lo_oflow_scale, l.lo_oflow_shift, x);
    const bool le_hit = !le.under && !le.over, lo_hit = !lo.under && !lo.over;
    // UNVERIFIED priority rules (NVDLA lineage): a table that covers x wins; when both cover it,
    // HYBRID_PRIORITY picks (1 = LO); when neither does, UFLOW/OFLOW_PRIORITY pick the table
    // whose extrapolation is used (1 = LO), mixed cases fall back to HYBRID_PRIORITY.
    bool use_lo = false;
    if (le_hit && lo_hit) use_lo = l.hybrid_prefer_lo;
    else if (le_hit) use_lo = false;
    else if (lo_hit) use_lo = true;
    else if (le.under && lo.under) use_lo = l.uflow_prefer_lo;
    else if (le.over && lo.over) use_lo = l.oflow_prefer_lo;
    else use_lo = l.hybrid_prefer_lo;
    return use_lo ? lo.y : le.y;
}

Cube run_dpu(const DpuConfig& d, const Cube& in, const DpuOperands& ops) {
    if (in.w != d.w || in.h != d.h || in.c != d.c) throw std::logic_error("run_dpu: input cube does not match the DPU cube");
    const bool fl = d.float_path();
    Cube out = Cube::make(d.w, d.h, d.c, fl);
    const bool ew_on = !d.ew.bypass;
    const bool ew_op = ew_on && !d.ew.op_bypass;
    Cube ew;
    if (ew_op && d.ew.op_from_mem) ew = unpack_cube(ops.ew, d.ew_w(), d.ew_h(), d.c, d.ew_prec(), d.atom);
    const bool ew_pc = d.ew_per_channel();
    const int64_t out_lo = d.out == Precision::Int8 ? INT8_MIN : (d.out == Precision::Int16 ? INT16_MIN : INT32_MIN);
    const int64_t out_hi = d.out == Precision::Int8 ? INT8_MAX : (d.out == Precision::Int16 ? INT16_MAX : INT32_MAX);
    const int64_t ew_reg_i = static_cast<int32_t>(d.ew.operand);
    const float ew_reg_f = bits_f32(d.ew.operand), ew_relux_f = bits_f32(d.ew.relux_cmp);
    // Float path EW operand convert (the vendor's fp16 add enables it with scale 1): x scale x 2^-shift.
    const float ew_cvt_f = d.ew.cvt_bypass ? 1.0f : std::ldexp(static_cast<float>(static_cast<int16_t>(d.ew.cvt_scale)),
                                                               -static_cast<int>(d.ew.cvt_shift));
    const int64_t ew_relux_i = static_cast<int32_t>(d.ew.relux_cmp);
    for (uint32_t ch = 0; ch < d.c; ++ch) {
        const StageOps bs = stage_ops(d.bs, ch, d.c, ops.bs, fl);
        const StageOps bn = stage_ops(d.bn, ch, d.c, ops.bn, fl);
        for (uint32_t y = 0; y < d.h; ++y)
            for (uint32_t x = 0; x < d.w; ++x) {
                const size_t k = in.idx(ch, y, x);
                if (fl) {
                    float v = in.is_float ? in.f[k] : static_cast<float>(in.i[k]);
                    v = stage_f(d.bn, bn, stage_f(d.bs, bs, v));
                    if (ew_on) {
                        if (ew_op) {
                            const float e = d.ew.op_from_mem ? ew.f[ew_pc ? ew.idx(ch, 0, 0) : k] * ew_cvt_f : ew_reg_f;
                            if (d.ew.op_is_mul) {
                                if (!d.ew.mul_prelu || v < 0) v = v * e;
                            } else {
                                v = alu<float>(d.ew.alu_algo, v, e);
                            }
                        }
                        if (!d.ew.lut_bypass) v = lut_lookup_f(d.lut, v);
                        if (!d.ew.relu_bypass) {
                            if (v < 0) v = 0;
                            if (d.ew.relux_en && v > ew_relux_f) v = ew_relux_f;
                        }
                    }
                    // UNVERIFIED: the fp16 output rounds fp32 to nearest even; OUT_CVT is not
                    // applied on the float path (producers program it as identity there).
                    out.f[k] = d.out == Precision::Fp32 ? v : round_to_fp16(v);
                } else {
                    int64_t v = sat32(in.is_float ? static_cast<int64_t>(in.f[k]) : in.i[k]);
                    v = stage_i(d.bn, bn, stage_i(d.bs, bs, v));
                    if (ew_on) {
                        if (ew_op) {
                            int64_t e = ew_reg_i;
                            if (d.ew.op_from_mem) {
                                e = ew.i[ew_pc ? ew.idx(ch, 0, 0) : k];
                                // UNVERIFIED order: (e + offset) * scale >> shift.
                                if (!d.ew.cvt_bypass) e = sat32(shr_round(e + d.ew.cvt_offset, d.ew.cvt_scale, d.ew.cvt_shift));
                            }
                            if (d.ew.op_is_mul) {
                                if (!d.ew.mul_prelu || v < 0) v = sat32(shr_round(v * e, 1, d.ew.truncate));
                            } else {
                                v = sat32(alu<int64_t>(d.ew.alu_algo, v, e));
                            }
                        }
                        if (!d.ew.lut_bypass) v = sat32(lut_lookup(d.lut, v));
                        if (!d.ew.relu_bypass) {
                            if (v < 0) v = 0;
                            if (d.ew.relux_en && v > ew_relux_i) v = ew_relux_i;
                        }
                    }
                    const int64_t q = shr_round(v, d.out_cvt_scale, d.out_cvt_shift) + d.out_cvt_offset;
                    out.i[k] = num::saturate(q, out_lo, out_hi);
                }
            }
    }
    return out;
}


namespace {

// ---- Fast integer path -------------------------------------------------------------------------
// The same arithmetic as run_dpu's integer branch, element for element, without the Cube: the
// input comes from pixel-major int32 accumulators or straight from the MRDMA's NC1HWC2 bytes, the
// per-channel operands are resolved once, shifts are inlined, and the output is written as the
// packed NC1HWC2 image. run_dpu stays the oracle (tests/unit/rknpu/engine_equivalence_test.cpp).

/// mul_shift(x, mul, shift, HalfUp) for shift in [0, 63]: floor(p / 2^s) plus bit s-1 of p
/// (rem >= half <=> that bit is set, as rem = p mod 2^s).
inline int64_t fast_shr(int64_t x, int64_t mul, uint32_t shift) {
    const int64_t p = x * static_cast<int64_t>(static_cast<int32_t>(mul));
    if (shift == 0) return p;
    return (p >> shift) + ((p >> (shift - 1)) & 1);
}

inline int64_t fast_sat32(int64_t v) { return v < INT32_MIN ? INT32_MIN : (v > INT32_MAX ? INT32_MAX : v); }

inline int64_t fast_alu(uint32_t algo, int64_t x, int64_t y) {
    if (algo == static_cast<uint32_t>(AluAlgo::Max)) return x > y ? x : y;
    if (algo == static_cast<uint32_t>(AluAlgo::Min)) return x < y ? x : y;
    return x + y;
}

inline int64_t fast_stage(const DpuStage& s, const StageOps& o, int64_t x) {
    if (!s.alu_bypass) x = fast_sat32(fast_alu(s.alu_algo, x, o.alu_i));
    if (!s.mul_bypass && (!s.mul_prelu || x < 0)) x = fast_sat32(fast_shr(x, o.mul_i, s.mul_shift));
    if (!s.relu_bypass) {
        if (x < 0) x = 0;
        if (s.relux_en && x > o.relux_i) x = o.relux_i;
    }
    return x;
}

inline int64_t load_elem(const uint8_t* b, uint32_t eb) {
    return eb == 1 ? int64_t{static_cast<int8_t>(b[0])} : int64_t{static_cast<int16_t>(static_cast<uint16_t>(b[0] | (b[1] << 8)))};
}

/// Output surfaces of d.out (one per C1, w*h*atom bytes each, padding channels zero).
Surfaces make_surfaces(const DpuConfig& d) {
    const uint32_t c2 = c2_of(d.out, d.atom);
    // Each surface zero-filled in place (not copied from a zeroed prototype: half the memory traffic),
    // in memory an earlier task's writes gave back (buffer_pool.h).
    Surfaces s((d.c + c2 - 1) / c2);
    for (auto& v : s) v = zeroed_buffer(surface_bytes(d.w, d.h, d.atom));
    return s;
}

inline int64_t shr_var(int64_t p, uint32_t shift) { return shift ? (p >> shift) + ((p >> (shift - 1)) & 1) : p; }

/// The common configuration, branch-free per element: BS (ALU add, MUL without PReLU, ReLU/ReLUX,
/// any of them bypassed), BN and EW bypassed, output convert. A bypassed step becomes an identity
/// (add 0, multiply by 1 shift 0, clamp to +-inf), exact because every value is an int32 there.
/// BS and BN alike (the requantizing conv uses both: bias + M1 >> S1 + ReLU, then M2 >> S2).
bool simple_stage(const DpuStage& s) {
    if (s.bypass) return true;
    return (s.alu_bypass || s.alu_algo == static_cast<uint32_t>(AluAlgo::Add)) && (s.mul_bypass || !s.mul_prelu);
}

bool simple_config(const DpuConfig& d) {
    // EW: bypassed, or an ALU add of the register / ERDMA operand (residual), no LUT, ReLU/ReLUX.
    if (!d.ew.bypass && (!d.ew.lut_bypass || (!d.ew.op_bypass && (d.ew.op_is_mul || d.ew.alu_algo != static_cast<uint32_t>(AluAlgo::Add)))))
        return false;
    return simple_stage(d.bs) && simple_stage(d.bn);
}

/// Per-channel constants of the simple kernel.
struct SimpleRow {
    int64_t a = 0, m = 1, m_half = 0, lo = INT64_MIN, hi = INT64_MAX;
    int64_t a2 = 0, m2 = 1, m2_half = 0, lo2 = INT64_MIN, hi2 = INT64_MAX;  ///< BN, as BS
    uint32_t msh2 = 0;
    const int32_t* e = nullptr;  ///< EW addend per pixel (zeros when the EW stage adds nothing)
    int64_t ew_lo = INT64_MIN, ew_hi = INT64_MAX;
    uint32_t msh = 0;
    int64_t scale = 1, s_half = 0, offset = 0, out_lo = 0, out_hi = 0;
    uint32_t shift = 0;
};

/// One channel row. (p + half) >> s equals mul_shift's HalfUp rounding (rem >= half <=> adding
/// half carries into bit s) and cannot overflow: |p| < 2^47 (int32 x 16-bit operands) and half <=
/// 2^62. Written without data-dependent branches so that the compiler vectorises it.
__attribute__((always_inline)) inline void simple_row_body(const int32_t* __restrict in, int16_t* __restrict out,
                                                           uint64_t n, const SimpleRow& k) {
    const int64_t a = k.a, m = k.m, m_half = k.m_half, lo = k.lo, hi = k.hi, scale = k.scale, s_half = k.s_half;
    const int64_t offset = k.offset, out_lo = k.out_lo, out_hi = k.out_hi;
    const int64_t msh = k.msh, shift = k.shift, ew_lo = k.ew_lo, ew_hi = k.ew_hi;
    const int64_t a2 = k.a2, m2 = k.m2, m2_half = k.m2_half, lo2 = k.lo2, hi2 = k.hi2, msh2 = k.msh2;
    const int32_t* __restrict e = k.e;
    for (uint64_t i = 0; i < n; ++i) {
        int64_t v = int64_t{in[i]} + a;
        v = v < INT32_MIN ? INT32_MIN : (v > INT32_MAX ? INT32_MAX : v);
        v = (v * m + m_half) >> msh;
        v = v < INT32_MIN ? INT32_MIN : (v > INT32_MAX ? INT32_MAX : v);
        v = v < lo ? lo : v;
        v = v > hi ? hi : v;
        v += a2;
        v = v < INT32_MIN ? INT32_MIN : (v > INT32_MAX ? INT32_MAX : v);
        v = (v * m2 + m2_half) >> msh2;
        v = v < INT32_MIN ? INT32_MIN : (v > INT32_MAX ? INT32_MAX : v);
        v = v < lo2 ? lo2 : v;
        v = v > hi2 ? hi2 : v;
        v += e[i];
        v = v < INT32_MIN ? INT32_MIN : (v > INT32_MAX ? INT32_MAX : v);
        v = v < ew_lo ? ew_lo : v;
        v = v > ew_hi ? ew_hi : v;
        int64_t q = ((v * scale + s_half) >> shift) + offset;
        q = q < out_lo ? out_lo : (q > out_hi ? out_hi : q);
        out[i] = static_cast<int16_t>(q);
    }
}

void simple_row_generic(const int32_t* in, int16_t* out, uint64_t n, const SimpleRow& k) { simple_row_body(in, out, n, k); }

// Run-time dispatch: the same loop bodies compiled for AVX-512 and for AVX2 (target attributes),
// chosen by the CPU unless the portable build of the bodies is forced (set_engine_isa, or
// NPUSIM_ENGINE_ISA=portable|avx2|avx512 in the environment, read once).
#if defined(__x86_64__) && defined(__GNUC__)
#define NPUSIM_X86_DISPATCH 1
__attribute__((target("avx512f,avx512dq,avx512bw,avx512vl"))) void simple_row_avx512(const int32_t* in, int16_t* out,
                                                                                       uint64_t n, const SimpleRow& k) {
    simple_row_body(in, out, n, k);
}
__attribute__((target("avx2"))) void simple_row_avx2(const int32_t* in, int16_t* out, uint64_t n, const SimpleRow& k) {
    simple_row_body(in, out, n, k);
}
#endif

EngineIsa best_isa() {
#ifdef NPUSIM_X86_DISPATCH
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl"))
        return EngineIsa::Avx512;
    if (__builtin_cpu_supports("avx2")) return EngineIsa::Avx2;
#endif
    return EngineIsa::Portable;
}

std::atomic<int> g_isa{-1};

EngineIsa isa() {
    int v = g_isa.load(std::memory_order_relaxed);
    if (v < 0) {
        EngineIsa want = best_isa();
        if (const char* e = std::getenv("NPUSIM_ENGINE_ISA"); e && *e) {
            const std::string s = e;
            want = s == "portable" ? EngineIsa::Portable : s == "avx2" ? EngineIsa::Avx2 : want;
        }
        v = static_cast<int>(std::min(want, best_isa()));
        g_isa.store(v, std::memory_order_relaxed);
    }
    return static_cast<EngineIsa>(v);
}

void simple_row(const int32_t* in, int16_t* out, uint64_t n, const SimpleRow& k) {
#ifdef NPUSIM_X86_DISPATCH
    const EngineIsa i = isa();
    if (i == EngineIsa::Avx512) return simple_row_avx512(in, out, n, k);
    if (i == EngineIsa::Avx2) return simple_row_avx2(in, out, n, k);
#endif
    simple_row_generic(in, out, n, k);
}

using detail::SurfaceK;

/// The simple configuration on int8 NC1HWC2 surfaces as they are (MRDMA input, ERDMA operand and
/// output all int8, so one atom holds the same C2 channels everywhere): no transposition, the
/// per-channel constants repeat with the atom. Same arithmetic as simple_row_body.
template <bool kEwMem, bool kEwCvt, uint32_t kLanes>
__attribute__((always_inline)) inline void simple_surface_body(const int8_t* __restrict in, const int8_t* __restrict ew,
                                                               int8_t* __restrict out, uint64_t P, const SurfaceK& k) {
    int64_t a[kLanes], m[kLanes], lo[kLanes], hi[kLanes];
    for (uint32_t j = 0; j < kLanes; ++j) a[j] = k.a[j], m[j] = k.m[j], lo[j] = k.lo[j], hi[j] = k.hi[j];
    const int64_t m_half = k.m_half, msh = k.msh, e_const = k.e_const, e_off = k.e_off, e_scale = k.e_scale;
    const int64_t e_half = k.e_half, e_shift = k.e_shift, ew_lo = k.ew_lo, ew_hi = k.ew_hi, scale = k.scale;
    const int64_t s_half = k.s_half, shift = k.shift, offset = k.offset;
    for (uint64_t p = 0; p < P; ++p)
        for (uint32_t j = 0; j < kLanes; ++j) {
            const uint64_t i = p * kLanes + j;
            int64_t v = int64_t{in[i]} + a[j];
            v = (v * m[j] + m_half) >> msh;
            v = v < INT32_MIN ? INT32_MIN : (v > INT32_MAX ? INT32_MAX : v);
            v = v < lo[j] ? lo[j] : v;
            v = v > hi[j] ? hi[j] : v;
            int64_t e = e_const;
            if constexpr (kEwMem) {
                e = ew[i];
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
            out[i] = static_cast<int8_t>(q);
        }
}

template <bool kEwMem, bool kEwCvt, uint32_t kLanes>
void simple_surface_generic(const int8_t* in, const int8_t* ew, int8_t* out, uint64_t P, const SurfaceK& k) {
    simple_surface_body<kEwMem, kEwCvt, kLanes>(in, ew, out, P, k);
}
#ifdef NPUSIM_X86_DISPATCH
template <bool kEwMem, bool kEwCvt, uint32_t kLanes>
__attribute__((target("avx2"))) void simple_surface_avx2(const int8_t* in, const int8_t* ew, int8_t* out, uint64_t P,
                                                         const SurfaceK& k) {
    simple_surface_body<kEwMem, kEwCvt, kLanes>(in, ew, out, P, k);
}
#endif

template <bool kEwMem, bool kEwCvt, uint32_t kLanes>
void simple_surface_lanes(const int8_t* in, const int8_t* ew, int8_t* out, uint64_t P, const SurfaceK& k) {
#ifdef NPUSIM_X86_DISPATCH
    const EngineIsa i = isa();
    if (i == EngineIsa::Avx512) return detail::simple_surface_avx512(kEwMem, kEwCvt, kLanes, in, ew, out, P, k);
    if (i == EngineIsa::Avx2) return simple_surface_avx2<kEwMem, kEwCvt, kLanes>(in, ew, out, P, k);
#endif
    simple_surface_generic<kEwMem, kEwCvt, kLanes>(in, ew, out, P, k);
}

/// Atoms of 16 (RK3588 class) or 8 (RK356x) int8 lanes; surface_config admits only those.
template <bool kEwMem, bool kEwCvt>
void simple_surface(const int8_t* in, const int8_t* ew, int8_t* out, uint64_t P, uint32_t lanes, const SurfaceK& k) {
    if (lanes == 16) simple_surface_lanes<kEwMem, kEwCvt, 16>(in, ew, out, P, k);
    else simple_surface_lanes<kEwMem, kEwCvt, 8>(in, ew, out, P, k);
}

bool surface_config(const DpuConfig& d) {
    const bool ew_mem = !d.ew.bypass && !d.ew.op_bypass && d.ew.op_from_mem;
    if (ew_mem && d.ew_per_channel() && uint64_t{d.w} * d.h > 1) return false;  // per-channel operands: row kernels
    return simple_config(d) && d.bn.bypass && d.src_prec == Precision::Int8 && d.out == Precision::Int8 &&
           (!ew_mem || d.ew_prec() == Precision::Int8) && (d.atom == 16 || d.atom == 8);
}

Surfaces dpu_int8_surfaces(const DpuConfig& d, const uint8_t* in, const DpuOperands& ops) {
    const uint32_t C = d.c, atom = d.atom, c2 = atom;
    const uint64_t P = static_cast<uint64_t>(d.w) * d.h, surf = P * atom;
    const DpuStage& s = d.bs;
    const bool on = !s.bypass, alu = on && !s.alu_bypass, mul = on && !s.mul_bypass, relu = on && !s.relu_bypass;
    const bool ew_on = !d.ew.bypass, ew_add = ew_on && !d.ew.op_bypass, ew_mem = ew_add && d.ew.op_from_mem;
    if (ew_mem && ops.ew.size() < cube_bytes(d.w, d.h, d.c, d.ew_prec(), atom))
        throw std::logic_error("unpack_cube: image smaller than the cube");
    SurfaceK k;
    k.msh = mul ? s.mul_shift : 0;
    k.m_half = k.msh ? int64_t{1} << (k.msh - 1) : 0;
    k.e_const = ew_add && !ew_mem ? static_cast<int32_t>(d.ew.operand) : 0;
    k.e_off = d.ew.cvt_offset, k.e_scale = static_cast<int32_t>(d.ew.cvt_scale), k.e_shift = d.ew.cvt_shift;
    k.e_half = k.e_shift ? int64_t{1} << (k.e_shift - 1) : 0;
    if (ew_on && !d.ew.relu_bypass) {
        k.ew_lo = 0;
        if (d.ew.relux_en) k.ew_hi = static_cast<int32_t>(d.ew.relux_cmp);
    }
    k.scale = static_cast<int32_t>(d.out_cvt_scale), k.shift = d.out_cvt_shift, k.offset = d.out_cvt_offset;
    k.s_half = k.shift ? int64_t{1} << (k.shift - 1) : 0;
    Surfaces out = make_surfaces(d);
    for (uint32_t c1 = 0; c1 < out.size(); ++c1) {
        for (uint32_t j = 0; j < c2; ++j) {
            const uint32_t ch = c1 * c2 + j;
            const StageOps o = ch < C ? stage_ops(s, ch, C, ops.bs, false) : StageOps{};
            k.a[j] = alu ? o.alu_i : 0;
            k.m[j] = mul ? o.mul_i : 1;
            k.lo[j] = relu ? 0 : INT64_MIN;
            k.hi[j] = relu && s.relux_en ? o.relux_i : INT64_MAX;
        }
        const auto* src = reinterpret_cast<const int8_t*>(in + c1 * surf);
        const auto* e = ew_mem ? reinterpret_cast<const int8_t*>(ops.ew.data() + c1 * surf) : nullptr;
        auto* dst = reinterpret_cast<int8_t*>(out[c1].data());
        if (!ew_mem) simple_surface<false, false>(src, e, dst, P, c2, k);
        else if (d.ew.cvt_bypass) simple_surface<true, false>(src, e, dst, P, c2, k);
        else simple_surface<true, true>(src, e, dst, P, c2, k);
        const uint32_t valid = std::min(c2, C - c1 * c2);  // padding channels of the last atom are zero
        if (valid < c2)
            for (uint64_t p = 0; p < P; ++p) std::memset(out[c1].data() + p * atom + valid, 0, c2 - valid);
    }
    return out;
}

/// `row(ch, buf)`: the input row of channel ch (P values), returned as a pointer (into the
/// accumulators, or into buf after a strided load).
template <typename Row>
void dpu_int_simple(const DpuConfig& d, const Row& row, const DpuOperands& ops, Surfaces& out) {
    const uint32_t C = d.c, atom = d.atom, out_eb = elem_bytes(d.out), out_c2 = c2_of(d.out, atom);
    const uint64_t P = static_cast<uint64_t>(d.w) * d.h;
    const DpuStage& s = d.bs;
    const bool on = !s.bypass, alu = on && !s.alu_bypass, mul = on && !s.mul_bypass, relu = on && !s.relu_bypass;
    SimpleRow k;
    k.msh = mul ? s.mul_shift : 0;
    k.m_half = k.msh ? int64_t{1} << (k.msh - 1) : 0;
    k.scale = static_cast<int32_t>(d.out_cvt_scale);
    k.shift = d.out_cvt_shift;
    k.s_half = k.shift ? int64_t{1} << (k.shift - 1) : 0;
    k.offset = d.out_cvt_offset;
    k.out_lo = d.out == Precision::Int8 ? INT8_MIN : INT16_MIN;
    k.out_hi = d.out == Precision::Int8 ? INT8_MAX : INT16_MAX;
    thread_local std::vector<int16_t> res;
    thread_local std::vector<int32_t> buf, ew;
    if (res.size() < P) res.resize(P);
    if (buf.size() < P) buf.resize(P);
    if (ew.size() < P) ew.resize(P);
    // EW stage (simple_config: bypassed or an ALU add): the addend row and the ReLU/ReLUX clamp.
    const bool ew_on = !d.ew.bypass, ew_add = ew_on && !d.ew.op_bypass, ew_mem = ew_add && d.ew.op_from_mem;
    const uint32_t ew_eb = elem_bytes(d.ew_prec()), ew_c2 = c2_of(d.ew_prec(), atom);
    const uint64_t surf = surface_bytes(d.ew_w(), d.ew_h(), atom);
    const uint64_t ew_px = d.ew_per_channel() ? 0 : atom;  // operand step per pixel
    if (ew_mem && ops.ew.size() < cube_bytes(d.ew_w(), d.ew_h(), d.c, d.ew_prec(), atom))
        throw std::logic_error("unpack_cube: image smaller than the cube");
    if (!ew_mem) std::fill(ew.begin(), ew.begin() + static_cast<std::ptrdiff_t>(P), ew_add ? static_cast<int32_t>(d.ew.operand) : 0);
    k.e = ew.data();
    if (ew_on && !d.ew.relu_bypass) {
        k.ew_lo = 0;
        if (d.ew.relux_en) k.ew_hi = static_cast<int32_t>(d.ew.relux_cmp);
    }
    const DpuStage& s2 = d.bn;
    const bool on2 = !s2.bypass, alu2 = on2 && !s2.alu_bypass, mul2 = on2 && !s2.mul_bypass, relu2 = on2 && !s2.relu_bypass;
    k.msh2 = mul2 ? s2.mul_shift : 0;
    k.m2_half = k.msh2 ? int64_t{1} << (k.msh2 - 1) : 0;
    for (uint32_t ch = 0; ch < C; ++ch) {
        const StageOps o = stage_ops(s, ch, C, ops.bs, false);
        k.a = alu ? o.alu_i : 0;
        k.m = mul ? o.mul_i : 1;
        k.lo = relu ? 0 : INT64_MIN;
        k.hi = relu && s.relux_en ? o.relux_i : INT64_MAX;
        if (on2) {
            const StageOps o2 = stage_ops(s2, ch, C, ops.bn, false);
            k.a2 = alu2 ? o2.alu_i : 0;
            k.m2 = mul2 ? o2.mul_i : 1;
            k.lo2 = relu2 ? 0 : INT64_MIN;
            k.hi2 = relu2 && s2.relux_en ? o2.relux_i : INT64_MAX;
        }
        if (ew_mem) {  // the ERDMA operand, through its convert: (e + offset) * scale >> shift, saturated
            const uint8_t* src = ops.ew.data() + (ch / ew_c2) * surf + (ch % ew_c2) * ew_eb;
            for (uint64_t p = 0; p < P; ++p) {
                int64_t e = load_elem(src + p * ew_px, ew_eb);
                if (!d.ew.cvt_bypass) e = fast_sat32(fast_shr(e + d.ew.cvt_offset, d.ew.cvt_scale, d.ew.cvt_shift));
                ew[p] = static_cast<int32_t>(e);
            }
        }
        simple_row(row(ch, buf.data()), res.data(), P, k);
        const int16_t* r = res.data();
        uint8_t* o8 = out[ch / out_c2].data() + (ch % out_c2) * out_eb;
        if (out_eb == 1) {
            for (uint64_t p = 0; p < P; ++p) o8[p * atom] = static_cast<uint8_t>(r[p]);
        } else {
            for (uint64_t p = 0; p < P; ++p) {
                o8[p * atom] = static_cast<uint8_t>(r[p] & 0xff);
                o8[p * atom + 1] = static_cast<uint8_t>((r[p] >> 8) & 0xff);
            }
        }
    }
}

/// `in(p, ch)`: the input value of channel ch at pixel p (p = y * w + x).
template <typename In, typename Row>
Surfaces dpu_int_fast(const DpuConfig& d, const In& in, const Row& row, const DpuOperands& ops) {
    Surfaces out = make_surfaces(d);
    if (simple_config(d)) {
        dpu_int_simple(d, row, ops, out);
        return out;
    }
    const uint32_t C = d.c, atom = d.atom;
    const uint64_t P = static_cast<uint64_t>(d.w) * d.h;
    std::vector<StageOps> bs(C), bn(C);
    for (uint32_t ch = 0; ch < C; ++ch) {
        bs[ch] = stage_ops(d.bs, ch, C, ops.bs, false);
        bn[ch] = stage_ops(d.bn, ch, C, ops.bn, false);
    }
    const bool bs_on = !d.bs.bypass, bn_on = !d.bn.bypass, ew_on = !d.ew.bypass;
    const bool ew_op = ew_on && !d.ew.op_bypass, ew_mem = ew_op && d.ew.op_from_mem;
    const uint32_t out_eb = elem_bytes(d.out), out_c2 = c2_of(d.out, atom);
    const uint32_t ew_eb = elem_bytes(d.ew_prec()), ew_c2 = c2_of(d.ew_prec(), atom);
    const uint64_t surf = surface_bytes(d.ew_w(), d.ew_h(), atom);
    const uint64_t ew_px = d.ew_per_channel() ? 0 : atom;  // operand step per pixel
    if (ew_mem && ops.ew.size() < cube_bytes(d.ew_w(), d.ew_h(), d.c, d.ew_prec(), atom))
        throw std::logic_error("unpack_cube: image smaller than the cube");
    const int64_t out_lo = d.out == Precision::Int8 ? INT8_MIN : INT16_MIN;
    const int64_t out_hi = d.out == Precision::Int8 ? INT8_MAX : INT16_MAX;
    const int64_t ew_reg_i = static_cast<int32_t>(d.ew.operand);
    const int64_t ew_relux_i = static_cast<int32_t>(d.ew.relux_cmp);
    for (uint32_t ch = 0; ch < C; ++ch) {
        uint8_t* o8 = out[ch / out_c2].data() + (ch % out_c2) * out_eb;
        const uint8_t* e8 = ew_mem ? ops.ew.data() + (ch / ew_c2) * surf + (ch % ew_c2) * ew_eb : nullptr;
        for (uint64_t p = 0; p < P; ++p) {
            int64_t v = fast_sat32(in(p, ch));
            if (bs_on) v = fast_stage(d.bs, bs[ch], v);
            if (bn_on) v = fast_stage(d.bn, bn[ch], v);
            if (ew_on) {
                if (ew_op) {
                    int64_t e = ew_reg_i;
                    if (ew_mem) {
                        e = load_elem(e8 + p * ew_px, ew_eb);
                        if (!d.ew.cvt_bypass) e = fast_sat32(fast_shr(e + d.ew.cvt_offset, d.ew.cvt_scale, d.ew.cvt_shift));
                    }
                    if (d.ew.op_is_mul) {
                        if (!d.ew.mul_prelu || v < 0) v = fast_sat32(fast_shr(v * e, 1, d.ew.truncate));
                    } else {
                        v = fast_sat32(fast_alu(d.ew.alu_algo, v, e));
                    }
                }
                if (!d.ew.lut_bypass) v = fast_sat32(lut_lookup(d.lut, v));
                if (!d.ew.relu_bypass) {
                    if (v < 0) v = 0;
                    if (d.ew.relux_en && v > ew_relux_i) v = ew_relux_i;
                }
            }
            int64_t q = fast_shr(v, d.out_cvt_scale, d.out_cvt_shift) + d.out_cvt_offset;
            q = q < out_lo ? out_lo : (q > out_hi ? out_hi : q);
            o8[p * atom] = static_cast<uint8_t>(q & 0xff);
            if (out_eb == 2) o8[p * atom + 1] = static_cast<uint8_t>((q >> 8) & 0xff);
        }
    }
    return out;
}

void check_fast(const DpuConfig& d) {
    if (d.float_path()) throw std::logic_error("dpu fast path: the float path is not handled");
    if (d.out_cvt_shift > 63 || d.ew.truncate > 63 || d.ew.cvt_shift > 63 || d.bs.mul_shift > 63 || d.bn.mul_shift > 63)
        throw std::logic_error("dpu fast path: shift beyond 63");
}

}  // namespace

bool detail::dpu_simple_config(const DpuConfig& d) { return simple_config(d); }

void set_engine_isa(EngineIsa want) { g_isa.store(static_cast<int>(std::min(want, best_isa())), std::memory_order_relaxed); }
EngineIsa engine_isa() { return isa(); }
EngineIsa best_engine_isa() {
    static const EngineIsa b = best_isa();
    return b;
}
const char* engine_isa_name(EngineIsa i) {
    return i == EngineIsa::Avx512 ? "avx512" : i == EngineIsa::Avx2 ? "avx2" : "portable";
}

bool dpu_fast_ok(const DpuConfig& d) {
    return !d.float_path() && d.out_cvt_shift <= 63 && d.ew.truncate <= 63 && d.ew.cvt_shift <= 63 &&
           d.bs.mul_shift <= 63 && d.bn.mul_shift <= 63 && (d.out == Precision::Int8 || d.out == Precision::Int16) &&
           !d.transpose;  // a notch spaces the output rows in memory only: the packed image is the same
}

Surfaces run_dpu_int_acc(const DpuConfig& d, const int32_t* acc, const DpuOperands& ops) {
    check_fast(d);
    const uint64_t P = static_cast<uint64_t>(d.w) * d.h;
    return dpu_int_fast(
        d, [acc, P](uint64_t p, uint32_t ch) { return int64_t{acc[ch * P + p]}; },
        [acc, P](uint32_t ch, int32_t*) { return acc + ch * P; }, ops);
}

Surfaces run_dpu_int_image(const DpuConfig& d, const std::vector<uint8_t>& in, const DpuOperands& ops) {
    check_fast(d);
    const uint32_t eb = elem_bytes(d.src_prec), c2 = c2_of(d.src_prec, d.atom), atom = d.atom;
    const uint64_t surf = surface_bytes(d.w, d.h, atom);
    if (in.size() < cube_bytes(d.w, d.h, d.c, d.src_prec, atom)) throw std::logic_error("unpack_cube: image smaller than the cube");
    const uint8_t* b = in.data();
    const uint64_t P = static_cast<uint64_t>(d.w) * d.h;
    if (surface_config(d)) return dpu_int8_surfaces(d, b, ops);
    if (d.src_prec == Precision::Int8 && detail::dpu_blocked_ok(d)) {  // BN, per-channel EW: the fused sweep
        Surfaces out = make_surfaces(d);
        detail::DpuBlocked(d, ops).run_image(b, out);
        return out;
    }
    return dpu_int_fast(
        d, [=](uint64_t p, uint32_t ch) { return load_elem(b + (ch / c2) * surf + p * atom + (ch % c2) * eb, eb); },
        [=](uint32_t ch, int32_t* buf) {
            const uint8_t* src = b + (ch / c2) * surf + (ch % c2) * eb;
            for (uint64_t p = 0; p < P; ++p) buf[p] = static_cast<int32_t>(load_elem(src + p * atom, eb));
            return static_cast<const int32_t*>(buf);
        },
        ops);
}

}  // namespace npu::rknpu
