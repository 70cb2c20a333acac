// SPDX-License-Identifier: MIT
// Requantization planning for the int8 conv lowering (conv_requant.h): the (M1, M2) pair search,
// candidates scored in chunks with AVX-512 or portable code chosen at run time (the same pair on
// each, and the same as the one-candidate-at-a-time reference search), and the per-channel
// weight sums of the folded bias (AVX-512 / AVX2 / portable builds of one loop).
#include "conv_requant.h"

#include "conv_prelu.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include "numerics/half.h"

namespace drv::rknpu::conv_detail {

namespace {

/// BN multipliers for large M1: M2 in [2^14, 2^15), the top kM2Candidates int16 values first (the
/// total shift puts the largest channel's M1 * M2 below 32767 * kM2Lo); v1 = y * 2^(S2 + S3) / M2
/// stays <= y * 2^23.
constexpr int kM2Candidates = 1024;
constexpr int kM2Lo = 32767 - kM2Candidates + 1;

/// Candidate (M1, M2) pairs scored as the reference search (requant_pair_reference) does: the
/// candidate factor f runs over M1 (ascending) or M2 (descending), the other factor is o =
/// nearest(target / f), err = |f o - target|, +inf when o is out of its range ([2^14, 2^15) for
/// M2, [1, 32767] for M1; f is in range by construction); least = min(err) per block.
///
/// The quotient is target x (1/f) from a table instead of a division: it is within 2^-35 of the
/// reference's rounded target / f (both below 2^16, each 2 roundings of 2^-53 relative), so unless
/// it lies within 2^-20 of a half-integer both round to the same nearest integer (and adding 0.5
/// to either rounds exactly); a quotient that close is recomputed by the division itself. The
/// errors are then the reference's, bit for bit (f x o and target are doubles whose difference
/// is exact: both multiples of target's ulp below 2^31).
constexpr int kPairBlock = 16;  ///< candidates whose least error is kept (a block skipped when it cannot win)
constexpr int kScoreChunk = 256;  ///< candidates scored per call (a search that stops early wastes at most this)
struct Scored {
    int64_t other[kScoreChunk];
    double err[kScoreChunk];
    double least[kScoreChunk / kPairBlock];
};

/// 1/f for f in [1, 32767] (index 0 unused).
const double* reciprocals() {
    static const std::vector<double> t = [] {
        std::vector<double> v(32768, 0.0);
        for (int f = 1; f < 32768; ++f) v[static_cast<size_t>(f)] = 1.0 / f;
        return v;
    }();
    return t.data();
}

constexpr double kCloseToHalf = 1.0 / (1 << 20);

/// Candidates f = first + step i, i < count (a multiple of kPairBlock); the computed factor
/// nearest(target / f) must lie in [lo, hi].
void score_portable(double target, int64_t first, int64_t step, int count, int64_t lo, int64_t hi, const double* inv,
                    Scored& s) {
    for (int i = 0; i < count; ++i) {
        const int64_t f = first + step * i;
        double q = target * inv[f];
        if (std::fabs(q - std::floor(q) - 0.5) < kCloseToHalf) q = target / static_cast<double>(f);  // rare: exactly
        const int64_t o = static_cast<int64_t>(q + 0.5);
        const double e = std::fabs(static_cast<double>(f * o) - target);
        s.other[i] = o;
        s.err[i] = o < lo || o > hi ? std::numeric_limits<double>::infinity() : e;
    }
    for (int bl = 0; bl < count / kPairBlock; ++bl) {
        double least = s.err[bl * kPairBlock];
        for (int j = 1; j < kPairBlock; ++j) least = std::min(least, s.err[bl * kPairBlock + j]);
        s.least[bl] = least;
    }
}

#if defined(__x86_64__) && defined(__GNUC__)
// The masked forms with every lane selected: the plain ones pass GCC 12 an undefined vector that
// -Wmaybe-uninitialized reports.
__attribute__((target("avx512f"))) inline __m512d reversed(__m512i idx, __m512d v) {
    return _mm512_mask_permutexvar_pd(v, 0xff, idx, v);
}

/// score_portable eight lanes at a time: the same quotients (a lane near a half-integer divided
/// exactly), truncations, products and errors.
__attribute__((target("avx512f,avx512dq,avx512vl"))) void score_avx512(double target, int64_t first, int64_t step,
                                                                        int count, int64_t lo, int64_t hi,
                                                                        const double* inv, Scored& s) {
    const __m512d t = _mm512_set1_pd(target), half = _mm512_set1_pd(0.5), close = _mm512_set1_pd(kCloseToHalf);
    const __m512d inf = _mm512_set1_pd(std::numeric_limits<double>::infinity());
    const __m512i lane = _mm512_mullo_epi64(_mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0), _mm512_set1_epi64(step));
    const __m512i rev = _mm512_set_epi64(0, 1, 2, 3, 4, 5, 6, 7), lov = _mm512_set1_epi64(lo), hiv = _mm512_set1_epi64(hi);
    for (int i = 0; i < count; i += 8) {
        const int64_t f0 = first + step * i;
        const __m512i f = _mm512_add_epi64(_mm512_set1_epi64(f0), lane);
        // 1/f of the eight lanes: contiguous in the table, descending when step < 0.
        const __m512d r = step > 0 ? _mm512_loadu_pd(inv + f0) : reversed(rev, _mm512_loadu_pd(inv + f0 - 7));
        __m512d q = _mm512_mul_pd(t, r);
        const __m512d frac = _mm512_sub_pd(_mm512_sub_pd(q, _mm512_mask_roundscale_pd(q, 0xff, q, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC)), half);
        const __mmask8 near = _mm512_cmp_pd_mask(_mm512_abs_pd(frac), close, _CMP_LT_OQ);
        if (near) q = _mm512_mask_div_pd(q, near, t, _mm512_cvtepi64_pd(f));
        const __m512i o = _mm512_cvttpd_epi64(_mm512_add_pd(q, half));
        const __m512d e = _mm512_abs_pd(_mm512_sub_pd(_mm512_cvtepi64_pd(_mm512_mullo_epi64(f, o)), t));
        const __mmask8 out = _mm512_cmp_epi64_mask(o, lov, _MM_CMPINT_LT) | _mm512_cmp_epi64_mask(o, hiv, _MM_CMPINT_NLE);
        _mm512_storeu_si512(s.other + i, o);
        _mm512_storeu_pd(s.err + i, _mm512_mask_blend_pd(out, e, inf));
    }
    for (int bl = 0; bl < count / kPairBlock; ++bl)
    {
        const __m512d a = _mm512_loadu_pd(s.err + bl * kPairBlock);
        double m8[8];
        _mm512_storeu_pd(m8, _mm512_mask_min_pd(a, 0xff, a, _mm512_loadu_pd(s.err + bl * kPairBlock + 8)));
        double least = m8[0];
        for (int j = 1; j < 8; ++j) least = std::min(least, m8[j]);
        s.least[bl] = least;
    }
}
#endif

int engine_isa() {
#if defined(__x86_64__) && defined(__GNUC__)
    static const int isa = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
                                   __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw")
                               ? 2
                               : __builtin_cpu_supports("avx2") ? 1 : 0;
    return isa;
#else
    return 0;
#endif
}

void score(double target, int64_t first, int64_t step, int count, int64_t lo, int64_t hi, bool portable, Scored& s) {
    const double* inv = reciprocals();
#if defined(__x86_64__) && defined(__GNUC__)
    if (!portable && engine_isa() == 2) return score_avx512(target, first, step, count, lo, hi, inv, s);
#endif
    score_portable(target, first, step, count, lo, hi, inv, s);
}

/// sums[k] = sum of the `per` int8 weights of output channel k (int32 partial sums of at most
/// 2^23 values, |partial| < 2^30).
__attribute__((always_inline)) inline void weight_sums_body(const int8_t* w, size_t n, size_t per, int64_t* sums) {
    constexpr size_t kChunk = size_t{1} << 23;
    for (size_t k = 0; k < n; ++k) {
        const int8_t* p = w + k * per;
        int64_t total = 0;
        for (size_t i0 = 0; i0 < per; i0 += kChunk) {
            const size_t i1 = std::min(per, i0 + kChunk);
            int32_t acc = 0;
            for (size_t i = i0; i < i1; ++i) acc += p[i];
            total += acc;
        }
        sums[k] = total;
    }
}
void weight_sums_generic(const int8_t* w, size_t n, size_t per, int64_t* sums) { weight_sums_body(w, n, per, sums); }
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx512f,avx512bw,avx512vl"))) void weight_sums_avx512(const int8_t* w, size_t n, size_t per,
                                                                              int64_t* sums) {
    weight_sums_body(w, n, per, sums);
}
__attribute__((target("avx2"))) void weight_sums_avx2(const int8_t* w, size_t n, size_t per, int64_t* sums) {
    weight_sums_body(w, n, per, sums);
}
#endif

void weight_sums(const int8_t* w, size_t n, size_t per, int64_t* sums) {
#if defined(__x86_64__) && defined(__GNUC__)
    const int isa = engine_isa();
    if (isa == 2) return weight_sums_avx512(w, n, per, sums);
    if (isa == 1) return weight_sums_avx2(w, n, per, sums);
#endif
    weight_sums_generic(w, n, per, sums);
}

}  // namespace

namespace {

/// What both searches do with no pair found: M1 = 1 and a coarser M2 carry the channel (more than
/// ~2^16 below the largest; v1 is then the raw accumulator >> S1, which cannot saturate harmfully).
/// Also when that beats the best pair with M2 >= 2^14 (M1 = 1 then being far from the target).
RequantPair finish(double target, double best, int64_t b1, int64_t b2) {
    if (b1 == 0 || (target < 16384.0 && std::fabs(static_cast<double>(std::llround(target)) - target) < best))
        b1 = 1, b2 = std::llround(target);
    return {static_cast<int16_t>(b1), static_cast<int16_t>(b2)};
}

/// Good enough: 2^-28 relative, far below the reference's own float rounding (2^-24).
double enough_for(double target) { return std::ldexp(target, -28); }

/// Beyond the top kM2Candidates BN multipliers the search goes on only while the pair is worse than
/// 2^-26 relative: the rest of [2^14, 2^15) is for the channels the top candidates leave near 2^-22;
/// scanning it to 2^-28 for every channel was 39 % of a whole ResNet50 v2 `npusim run` (2^-24 moved
/// outputs: the README's MobileNetV2 example had 405 instead of 524 values equal to onnxruntime's).
double enough_rest(double target) { return std::ldexp(target, -26); }

/// Candidate M1 range when M1 is small (a channel far below the largest): every M1 with M2 in
/// [2^14, 2^15); searched that way when it has fewer than 4 kM2Candidates values.
void small_m1_range(double target, int64_t& lo1, int64_t& hi1) {
    lo1 = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(target / 32767.0)));
    hi1 = std::min<int64_t>(32767, static_cast<int64_t>(std::floor(target / 16384.0)));
}

}  // namespace

RequantPair requant_pair_reference(double target) {
    double best = std::numeric_limits<double>::max();
    int64_t b1 = 0, b2 = 32767;
    const double enough = enough_for(target);
    auto consider = [&](int64_t m1, int64_t m2) {
        if (m1 < 1 || m1 > 32767 || m2 < 16384 || m2 > 32767) return;
        const double err = std::fabs(static_cast<double>(m1 * m2) - target);
        if (err < best) best = err, b1 = m1, b2 = m2;
    };
    auto nearest = [](double x) { return static_cast<int64_t>(x + 0.5); };  // x >= 0
    int64_t lo1 = 0, hi1 = 0;
    small_m1_range(target, lo1, hi1);
    if (hi1 >= lo1 && hi1 - lo1 < 4 * kM2Candidates) {
        for (int64_t m1 = lo1; m1 <= hi1 && best > enough; ++m1) consider(m1, nearest(target / static_cast<double>(m1)));
    } else {
        // The top kM2Candidates until 2^-28, then the rest of [2^14, 2^15) while the pair is worse
        // than 2^-26: the top 1024 alone leave up to ~2^-22 relative on some channels (1-LSB
        // differences from onnxruntime on values within 3e-5 LSB of x.5).
        for (int64_t m2 = 32767; m2 >= kM2Lo && best > enough; --m2) consider(nearest(target / static_cast<double>(m2)), m2);
        for (int64_t m2 = kM2Lo - 1; m2 >= 16384 && best > enough_rest(target); --m2)
            consider(nearest(target / static_cast<double>(m2)), m2);
    }
    return finish(target, best, b1, b2);
}

RequantPair requant_pair(double target, bool portable) {
    double best = std::numeric_limits<double>::max();
    int64_t b1 = 0, b2 = 32767;
    double enough = enough_for(target);
    int64_t lo1 = 0, hi1 = 0;
    small_m1_range(target, lo1, hi1);
    // Chunks of candidates are scored together (score), then taken in the same order with the
    // same stop test as the reference's one-by-one consider() calls; a block whose least error
    // does not beat the best so far changes nothing and is skipped.
    Scored sc;
    auto search = [&](int64_t first, int64_t step, int64_t n, bool m1_first) {
        const int64_t lo = m1_first ? 16384 : 1;
        for (int64_t c0 = 0; c0 < n && best > enough; c0 += kScoreChunk) {
            const int count = static_cast<int>(std::min<int64_t>(kScoreChunk, n - c0));
            const int64_t f0 = first + step * c0;
            score(target, f0, step, count, lo, 32767, portable, sc);
            for (int bl = 0; bl < count / kPairBlock && best > enough; ++bl) {
                if (!(sc.least[bl] < best)) continue;
                for (int i = bl * kPairBlock; i < (bl + 1) * kPairBlock && best > enough; ++i)
                    if (sc.err[i] < best) {
                        const int64_t f = f0 + step * i;
                        best = sc.err[i], b1 = m1_first ? f : sc.other[i], b2 = m1_first ? sc.other[i] : f;
                    }
            }
        }
    };
    if (hi1 >= lo1 && hi1 - lo1 < 4 * kM2Candidates) {
        const int64_t whole = (hi1 - lo1 + 1) / kPairBlock * kPairBlock;
        search(lo1, 1, whole, true);
        for (int64_t m1 = lo1 + whole; m1 <= hi1 && best > enough; ++m1) {  // the tail, one by one as the reference
            const int64_t m2 = static_cast<int64_t>(target / static_cast<double>(m1) + 0.5);
            const double err = std::fabs(static_cast<double>(m1 * m2) - target);
            if (m2 >= 16384 && m2 <= 32767 && err < best) best = err, b1 = m1, b2 = m2;
        }
    } else {
        static_assert(kM2Candidates % kPairBlock == 0 && (32768 - 16384) % kPairBlock == 0, "whole blocks");
        search(32767, -1, kM2Candidates, false);  // as the reference: the top candidates, then the rest
        enough = enough_rest(target);
        search(kM2Lo - 1, -1, kM2Lo - 16384, false);
    }
    return finish(target, best, b1, b2);
}

/// shifts_only: the shifts (from the scales) and no per-channel bias/M1/M2 (timing-only compile,
/// where no operand bytes are written and the weights are absent).
Requant plan_requant(const ConvOp& op, bool shifts_only) {
    Requant r;
    if (op.fp16) return r;  // no requantization on the float path
    const size_t n = static_cast<size_t>(op.out_c);
    const int taps = op.kernel_h * op.kernel_w;
    const int per_out = (op.depthwise ? 1 : op.in_c) * taps;
    if (!shifts_only) r.bias.resize(n);
    std::vector<double> m(n);
    double m_max = 0;
    const bool fold = !shifts_only && !op.runtime_weights;  // runtime weights: bias 0
    std::vector<int64_t> wsums(fold ? n : 0);
    if (fold) weight_sums(weight_data(op), n, static_cast<size_t>(per_out), wsums.data());
    const bool frac = has_bias_fraction(op);
    if (frac && !op.bias.empty()) fail(op, "a conv with a float bias (float_ref) takes it in bias_f only");
    if (frac && op.bias_f.size() != n) fail(op, "bias size != output channels");
    std::vector<double> bias_frac(frac && fold ? n : 0);  // accumulator units
    for (size_t k = 0; k < n && fold; ++k) {
        int64_t bq = op.bias.empty() ? 0 : op.bias[k];
        if (frac) {
            // The float bias in accumulator units: its integer part joins the folded bias, the
            // fraction (|f| <= 1/2) goes to the BN ALU below.
            const double ws = op.w_scales.size() == 1 ? op.w_scales[0] : op.w_scales[k];
            const double ba = static_cast<double>(op.bias_f[k]) / (static_cast<double>(op.in_scale) * ws);
            if (!std::isfinite(ba) || std::fabs(ba) > 2147483647.0)
                fail(op, fmt::format("float bias of channel {} overflows int32 at in_scale x w_scale", k));
            bq = static_cast<int64_t>(std::nearbyint(ba));
            bias_frac[k] = ba - static_cast<double>(bq);
        }
        // sum((x - zp) w) + b = sum(x w) + (b - zp sum(w)); padded taps read PAD_VALUE = zp.
        const int64_t b = bq - int64_t{op.in_zp} * wsums[k];
        if (b < INT32_MIN || b > INT32_MAX) fail(op, fmt::format("folded bias of channel {} overflows int32", k));
        r.bias[k] = static_cast<int32_t>(b);
    }
    for (size_t k = 0; k < n; ++k) {
        // The reference forms the scale x_scale * w_scale / y_scale in float (onnxruntime's
        // QLinearConv), or exactly where it runs the conv in float (float_ref: Q(float conv)).
        const float ws = op.w_scales.size() == 1 ? op.w_scales[0] : op.w_scales[k];
        const double mf = op.float_ref
                              ? static_cast<double>(op.in_scale) * static_cast<double>(ws) / static_cast<double>(op.out_scale)
                              : static_cast<double>(op.in_scale * ws / op.out_scale);
        if (!(mf > 0) || !std::isfinite(mf) || (!op.float_ref && !std::isfinite(op.in_scale * ws / op.out_scale)))
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
        if (k > 0 && m[k] == m[k - 1]) {  // a per-tensor weight scale: the same scale and shift, the same pair
            r.m1[k] = r.m1[k - 1];
            r.m2[k] = r.m2[k - 1];
            continue;
        }
        const RequantPair p = requant_pair(std::ldexp(m[k], s_tot));  // M1 * M2 ~ m * 2^(S1 + S2 + S3)
        r.m1[k] = p.m1;
        r.m2[k] = p.m2;
    }
    if (frac) {
        // BS: v1 = (acc + b') M1 2^-S1; BN: (v1 + f M1 2^-S1) M2 2^-S2. |f| <= 1/2 keeps the add
        // within M1 / 2^(S1 + 1) <= 2^15 of the value it joins.
        r.bn_add.resize(n);
        for (size_t k = 0; k < n; ++k)
            r.bn_add[k] = bias_frac.empty() ? 0
                                            : static_cast<int32_t>(std::nearbyint(std::ldexp(bias_frac[k] * r.m1[k], -r.s1)));
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
