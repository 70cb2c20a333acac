// SPDX-License-Identifier: MIT
#include "npu/rknpu/dpu_engine.h"

#include <cstring>
#include <stdexcept>

#include "numerics/requant.h"

namespace npu::rknpu {

namespace {

/// UNVERIFIED: every right shift in the integer datapath (BS/BN MUL, EW convert and MUL, LUT
/// interpolation, output convert) rounds half up (add half, then arithmetic shift), the usual
/// hardware adder-then-shift; CVT_ROUND / CVT_TYPE are not modelled.
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

template <typename T>
T alu(uint32_t algo, T x, T y) {
    switch (algo) {
        case static_cast<uint32_t>(AluAlgo::Max): return x > y ? x : y;
        case static_cast<uint32_t>(AluAlgo::Min): return x < y ? x : y;
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
    const size_t mul_base = (!s.alu_bypass && s.alu_from_mem) ? 4ull * channels : 0;
    const uint32_t alu_raw = (s.alu_from_mem && !s.alu_bypass) ? static_cast<uint32_t>(load_i32(mem, 4ull * ch)) : s.alu_operand;
    const uint16_t mul_raw = (s.mul_from_mem && !s.mul_bypass) ? load_u16(mem, mul_base + 2ull * ch)
                                                                : static_cast<uint16_t>(s.mul_operand);
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

}  // namespace

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
    if (ew_op && d.ew.op_from_mem) ew = unpack_cube(ops.ew, d.w, d.h, d.c, d.ew_prec(), d.atom);
    const int64_t out_lo = d.out == Precision::Int8 ? INT8_MIN : INT16_MIN;
    const int64_t out_hi = d.out == Precision::Int8 ? INT8_MAX : INT16_MAX;
    const int64_t ew_reg_i = static_cast<int32_t>(d.ew.operand);
    const float ew_reg_f = bits_f32(d.ew.operand), ew_relux_f = bits_f32(d.ew.relux_cmp);
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
                            const float e = d.ew.op_from_mem ? ew.f[k] : ew_reg_f;
                            if (d.ew.op_is_mul) {
                                if (!d.ew.mul_prelu || v < 0) v = v * e;
                            } else {
                                v = alu<float>(d.ew.alu_algo, v, e);
                            }
                        }
                        if (!d.ew.relu_bypass) {
                            if (v < 0) v = 0;
                            if (d.ew.relux_en && v > ew_relux_f) v = ew_relux_f;
                        }
                    }
                    // UNVERIFIED: the fp16 output rounds fp32 to nearest even; OUT_CVT is not
                    // applied on the float path.
                    out.f[k] = round_to_fp16(v);
                } else {
                    int64_t v = sat32(in.is_float ? static_cast<int64_t>(in.f[k]) : in.i[k]);
                    v = stage_i(d.bn, bn, stage_i(d.bs, bs, v));
                    if (ew_on) {
                        if (ew_op) {
                            int64_t e = ew_reg_i;
                            if (d.ew.op_from_mem) {
                                e = ew.i[k];
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

}  // namespace npu::rknpu
