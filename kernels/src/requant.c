/* SPDX-License-Identifier: MIT */
/* Scale conversion for the fixed-point requantization contract of mk_common.h. */
#include "mk/mk_common.h"

mk_qscale mk_quantize_scale(double real_scale) {
    mk_qscale q = {0, 0};
    if (!(real_scale > 0.0)) return q;
    /* Normalise real_scale = f * 2^e with f in [0.5, 1) without frexp (no libm on the target). */
    int e = 0;
    double f = real_scale;
    while (f >= 1.0) { f *= 0.5; ++e; }
    while (f < 0.5) { f *= 2.0; --e; }
    int64_t m = (int64_t)(f * 2147483648.0 + 0.5); /* f * 2^31, rounded; f > 0 */
    if (m == ((int64_t)1 << 31)) { m >>= 1; ++e; }
    int shift = -e;
    if (shift < -30) return q; /* scale >= 2^30: not representable, never needed by int8 kernels */
    while (shift > 30) {       /* tiny scale: give up leading precision instead of failing */
        m = (m + 1) >> 1;
        --shift;
        if (m == 0) return q;
    }
    q.multiplier = (int32_t)m;
    q.shift = shift;
    return q;
}

void mk_act_range_s8(mk_act act, float out_scale, int32_t out_zp, int32_t* act_min, int32_t* act_max) {
    int32_t lo = -128, hi = 127;
    if (act == MK_ACT_RELU || act == MK_ACT_RELU6) lo = out_zp;
    if (act == MK_ACT_RELU6) hi = out_zp + (int32_t)mk_round_half_even(6.0f / out_scale);
    *act_min = mk_clamp_i32(lo, -128, 127);
    *act_max = mk_clamp_i32(hi, -128, 127);
}
