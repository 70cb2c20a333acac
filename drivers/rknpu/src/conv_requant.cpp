// SPDX-License-Identifier: MIT
// Requantization planning for the int8 conv lowering (conv_requant.h): the (M1, M2) pair search,
// scored in blocks with AVX-512 / AVX2 / portable builds chosen at run time (the same pair on
// each).
#include "conv_requant.h"

#include "conv_prelu.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "numerics/half.h"

namespace drv::rknpu::conv_detail {

namespace {

/// BN multipliers for large M1: M2 in [2^14, 2^15), the top kM2Candidates int16 values first (the
/// total shift puts the largest channel's M1 * M2 below 32767 * kM2Lo); v1 = y * 2^(S2 + S3) / M2
/// stays <= y * 2^23.
constexpr int kM2Candidates = 1024;
constexpr int kM2Lo = 32767 - kM2Candidates + 1;

/// Candidate (M1, M2) pairs scored as plan_requant's consider() does: m1_first, M1 = fixed + j
/// and M2 = nearest(target / M1); else M2 = fixed - j and M1 = nearest(target / M2); err[j] =
/// |M1 M2 - target|, +inf when the computed factor is out of its range ([1, 32767] for M1,
/// [2^14, 2^15) for M2; the fixed one is in range by construction).
constexpr int kPairBlock = 16;
struct PairBlock {
    int64_t fixed = 0;
    int64_t other[kPairBlock];
    double err[kPairBlock];
};

__attribute__((always_inline)) inline void pair_block_body(double target, int64_t fixed, bool m1_first, PairBlock& b) {
    b.fixed = fixed;
    const int64_t lo = m1_first ? 16384 : 1, hi = 32767;
    for (int j = 0; j < kPairBlock; ++j) {
        const int64_t f = m1_first ? fixed + j : fixed - j;
        const int64_t o = static_cast<int64_t>(target / static_cast<double>(f) + 0.5);
        const double e = std::fabs(static_cast<double>(f * o) - target);
        b.other[j] = o;
        b.err[j] = o < lo || o > hi ? std::numeric_limits<double>::infinity() : e;
    }
}

void pair_block_generic(double target, int64_t fixed, bool m1_first, PairBlock& b) {
    pair_block_body(target, fixed, m1_first, b);
}
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx512f,avx512dq,avx512vl"))) void pair_block_avx512(double target, int64_t fixed, bool m1_first,
                                                                             PairBlock& b) {
    pair_block_body(target, fixed, m1_first, b);
}
__attribute__((target("avx2"))) void pair_block_avx2(double target, int64_t fixed, bool m1_first, PairBlock& b) {
    pair_block_body(target, fixed, m1_first, b);
}
#endif

void pair_block(double target, int64_t fixed, bool m1_first, PairBlock& b) {
#if defined(__x86_64__) && defined(__GNUC__)
    static const int isa = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
                                   __builtin_cpu_supports("avx512vl")
                               ? 2
                               : __builtin_cpu_supports("avx2") ? 1 : 0;
    if (isa == 2) return pair_block_avx512(target, fixed, m1_first, b);
    if (isa == 1) return pair_block_avx2(target, fixed, m1_first, b);
#endif
    pair_block_generic(target, fixed, m1_first, b);
}

}  // namespace

/// shifts_only: the shifts (from the scales) and no per-channel bias/M1/M2 (timing-only compile,
/// where no operand bytes are written and the weights are absent).
Requant plan_requant(const ConvOp& op, bool shifts_only) {
    Requant r;
    if (op.fp16) return r;  // no requantization on the float path
    const size_t n = static_cast<size_t>(op.out_c);
    const int taps = op.kernel_h * op.kernel_w;
    const int per_out = (op.depthwise ? 1 : op.in_c) * taps;
    if (!shifts_only) r.bias.resize(n);
    const int8_t* wd = weight_data(op);
    std::vector<double> m(n);
    double m_max = 0;
    for (size_t k = 0; k < n && !shifts_only; ++k) {
        int64_t wsum = 0;
        for (int i = 0; i < per_out; ++i) wsum += wd[k * static_cast<size_t>(per_out) + static_cast<size_t>(i)];
        // sum((x - zp) w) + b = sum(x w) + (b - zp sum(w)); padded taps read PAD_VALUE = zp.
        const int64_t b = (op.bias.empty() ? 0 : op.bias[k]) - int64_t{op.in_zp} * wsum;
        if (b < INT32_MIN || b > INT32_MAX) fail(op, fmt::format("folded bias of channel {} overflows int32", k));
        r.bias[k] = static_cast<int32_t>(b);
    }
    for (size_t k = 0; k < n; ++k) {
        // The reference (onnxruntime) forms the scale in float: x_scale * w_scale / y_scale.
        const float ws = op.w_scales.size() == 1 ? op.w_scales[0] : op.w_scales[k];
        const float mf = op.in_scale * ws / op.out_scale;
        if (!(mf > 0) || !std::isfinite(mf))
            fail(op, fmt::format("requantization scale of channel {} is not positive", k));
        m[k] = mf;
        m_max = std::max(m_max, m[k]);
    }
    // Total shift: the largest channel's M1 * M2 just below 32767 * kM2Lo.
    const int s_tot = static_cast<int>(std::floor(std::log2(32767.0 * kM2Lo / m_max)));
    r.s3 = prelu_max_s3(op, kMaxFracBits - 1);  // v2 = y * 2^S3: |y| < 512 stays inside int32 (PRelu: conv_prelu.h)
    r.s2 = 15;                // v1 = y * 2^(S2 + S3) / M2 ~ y * 2^22
    r.s1 = s_tot - r.s2 - r.s3;
    if (r.s1 < 0) r.s2 += r.s1, r.s1 = 0;  // large multipliers (small accumulators): fewer fraction bits
    if (r.s2 < 0) r.s3 += r.s2, r.s2 = 0;
    if (r.s3 < 0) fail(op, "requantization scale too large for the DPU");
    if (r.s1 > 63) fail(op, "requantization scale too small for the DPU MUL shift");
    if (shifts_only) return r;
    r.m1.resize(n);
    r.m2.resize(n);
    for (size_t k = 0; k < n; ++k) {
        const double target = std::ldexp(m[k], s_tot);  // M1 * M2 ~ m * 2^(S1 + S2 + S3)
        double best = std::numeric_limits<double>::max();
        int64_t b1 = 0, b2 = 32767;
        // Good enough: 2^-28 relative, far below the reference's own float rounding (2^-24).
        const double enough = std::ldexp(target, -28);
        auto nearest = [](double x) { return static_cast<int64_t>(x + 0.5); };  // x >= 0
        auto consider = [&](int64_t m1, int64_t m2) {
            if (m1 < 1 || m1 > 32767 || m2 < 16384 || m2 > 32767) return;
            const double err = std::fabs(static_cast<double>(m1 * m2) - target);
            if (err < best) best = err, b1 = m1, b2 = m2;
        };
        // Small M1 (a channel far below the largest): try every M1 with M2 in [2^14, 2^15).
        const int64_t lo1 = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(target / 32767.0)));
        const int64_t hi1 = std::min<int64_t>(32767, static_cast<int64_t>(std::floor(target / 16384.0)));
        // Blocks of kPairBlock candidates are scored together (pair_block: vectorised quotients,
        // roundings and errors, consider()'s arithmetic), then taken in the same order with the
        // same stop test as one-by-one consider() calls; a block whose least error does not beat
        // the best so far changes nothing and is skipped. The same pair as the plain loops.
        PairBlock blk;
        auto take = [&](bool m1_first) {
            double least = blk.err[0];
            for (int j = 1; j < kPairBlock; ++j) least = std::min(least, blk.err[j]);
            if (!(least < best)) return;
            for (int j = 0; j < kPairBlock && best > enough; ++j)
                if (blk.err[j] < best)
                    best = blk.err[j], b1 = m1_first ? blk.fixed + j : blk.other[j],
                    b2 = m1_first ? blk.other[j] : blk.fixed - j;
        };
        if (hi1 >= lo1 && hi1 - lo1 < 4 * kM2Candidates) {
            int64_t m1 = lo1;
            for (; m1 + kPairBlock - 1 <= hi1 && best > enough; m1 += kPairBlock) {
                pair_block(target, m1, true, blk);
                take(true);
            }
            for (; m1 <= hi1 && best > enough; ++m1) consider(m1, nearest(target / static_cast<double>(m1)));
        } else {
            // The top kM2Candidates first, then the rest of [2^14, 2^15) while the pair is not good
            // enough: the top 1024 alone leave up to ~2^-22 relative (1-LSB differences from
            // onnxruntime on values within 3e-5 LSB of x.5), the whole range ~2^-27.
            static_assert(kM2Candidates % kPairBlock == 0 && (32768 - 16384) % kPairBlock == 0, "whole blocks");
            for (int64_t m2 = 32767; m2 >= 16384 && best > enough; m2 -= kPairBlock) {
                pair_block(target, m2, false, blk);
                take(false);
            }
        }
        if (b1 == 0 || (target < 16384.0 && std::fabs(static_cast<double>(std::llround(target)) - target) < best)) {
            // More than ~2^16 below the largest channel: M1 = 1 and a coarser M2 carry it (also when
            // that beats the pairs found with M2 >= 2^14, M1 = 1 then being far from the target);
            // v1 is then the raw accumulator >> S1, which cannot saturate harmfully.
            b1 = 1, b2 = std::llround(target);
        }
        r.m1[k] = static_cast<int16_t>(b1);
        r.m2[k] = static_cast<int16_t>(b2);
    }
    return r;
}

FloatOut plan_float_out(const ConvOp& op, bool shapes_only) {
    FloatOut r;
    const size_t n = static_cast<size_t>(op.out_c);
    std::vector<double> m(n);
    double m_max = 0;
    for (size_t k = 0; k < n; ++k) {
        // The reference's own product: float32 in_scale x w_scale (a DequantizeLinear of each).
        m[k] = static_cast<double>(op.in_scale * op.w_scales[op.w_scales.size() == 1 ? 0 : k]);
        if (!(m[k] > 0) || !std::isfinite(m[k])) fail(op, fmt::format("scale product {} is not positive", m[k]));
        m_max = std::max(m_max, m[k]);
    }
    // m_max 2^exp in [0.5, 1): every m_c 2^exp <= 1 and in fp16's normal range unless m_c is 2^13
    // below m_max; 2^-exp is an fp16 power of two for exp in [-15, 24] (2^-24: the least subnormal).
    r.exp = -static_cast<int>(std::floor(std::log2(m_max))) - 1;
    if (r.exp > 24) r.exp = 24;
    if (r.exp < -15) fail(op, fmt::format("scale product {} too large for the fp16 operands", m_max));
    r.post = num::fp32_to_fp16(std::ldexp(1.0f, -r.exp));
    if (shapes_only) return r;
    r.offset.resize(n);
    r.mul.resize(n);
    const int8_t* wd = weight_data(op);
    const size_t per = static_cast<size_t>(op.depthwise ? 1 : op.in_c) * static_cast<size_t>(op.kernel_h * op.kernel_w);
    for (size_t k = 0; k < n; ++k) {
        const float f = static_cast<float>(std::ldexp(m[k], r.exp));
        if (f < std::ldexp(1.0f, -14))
            fail(op, fmt::format("channel {} scale {} is more than 2^13 below the largest ({}): the fp16 multiplier would lose "
                                 "precision",
                                 k, m[k], m_max));
        r.mul[k] = num::fp32_to_fp16(f);
        int64_t sum = 0;
        for (size_t j = 0; j < per; ++j) sum += wd[k * per + j];
        const double b = op.bias_f.empty() ? 0.0 : static_cast<double>(op.bias_f[k]);
        r.offset[k] = static_cast<float>(b / m[k] - static_cast<double>(op.in_zp) * static_cast<double>(sum));
    }
    return r;
}

}  // namespace drv::rknpu::conv_detail
