/* SPDX-License-Identifier: MIT */
/* exp/log/tanh/sigmoid in plain float arithmetic (no libm): identical bits on the host and on the
 * RV32F target because every step is an IEEE-754 single operation (built with -ffp-contract=off).
 * exp: Cody-Waite reduction x = n ln2 + r, |r| <= ln2/2, degree-7 Taylor polynomial (truncation
 * error < 6e-9 relative); log: x = m 2^e, m in [sqrt(1/2), sqrt(2)), 2 atanh((m-1)/(m+1)) series. */
#include <string.h>

#include "mk/mk_f32.h"

static float from_bits(uint32_t b) {
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}
static uint32_t to_bits(float f) {
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    return b;
}

/* 2^n for n in [-126, 127]. */
static float pow2i(int32_t n) { return from_bits((uint32_t)(n + 127) << 23); }

MK_HOT float mk_expf(float x) {
    if (x != x) return x;
    if (x > 88.7228394f) return from_bits(0x7f800000u);
    if (x < -103.972084f) return 0.0f;
    const float log2e = 1.44269504f, ln2_hi = 0.693145751953125f, ln2_lo = 1.42860677e-06f;
    const float t = x * log2e;
    const int32_t n = (int32_t)(t >= 0.0f ? t + 0.5f : t - 0.5f);
    const float fn = (float)n;
    const float r = (x - fn * ln2_hi) - fn * ln2_lo;
    float p = 1.0f / 5040.0f;
    p = p * r + 1.0f / 720.0f;
    p = p * r + 1.0f / 120.0f;
    p = p * r + 1.0f / 24.0f;
    p = p * r + 1.0f / 6.0f;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    if (n < -126) return p * pow2i(n + 64) * pow2i(-64); /* subnormal result */
    if (n > 127) return p * pow2i(n - 1) * 2.0f;
    return p * pow2i(n);
}

MK_HOT float mk_logf(float x) {
    if (x != x || x < 0.0f) return from_bits(0x7fc00000u);
    if (x == 0.0f) return from_bits(0xff800000u);
    if (x > 3.4028235e38f) return x;
    int32_t e = 0;
    if (x < 1.17549435e-38f) { x *= 8388608.0f; e = -23; } /* subnormal: scale up by 2^23 */
    const uint32_t b = to_bits(x);
    e += (int32_t)((b >> 23) & 0xff) - 127;
    float m = from_bits((b & 0x007fffffu) | 0x3f800000u); /* [1, 2) */
    if (m > 1.41421356f) { m *= 0.5f; ++e; }
    const float s = (m - 1.0f) / (m + 1.0f), s2 = s * s;
    float p = 1.0f / 11.0f;
    p = p * s2 + 1.0f / 9.0f;
    p = p * s2 + 1.0f / 7.0f;
    p = p * s2 + 1.0f / 5.0f;
    p = p * s2 + 1.0f / 3.0f;
    p = p * s2 + 1.0f;
    const float ln2_hi = 0.693145751953125f, ln2_lo = 1.42860677e-06f;
    const float fe = (float)e;
    return fe * ln2_hi + (2.0f * s * p + fe * ln2_lo);
}

MK_HOT float mk_tanhf(float x) {
    const float ax = x < 0.0f ? -x : x;
    if (ax > 9.0f) return x < 0.0f ? -1.0f : 1.0f;
    float r;
    if (ax < 0.0625f) { /* odd Taylor series: keeps relative accuracy near 0 */
        const float x2 = ax * ax;
        r = ax * (1.0f + x2 * (-1.0f / 3.0f + x2 * (2.0f / 15.0f + x2 * (-17.0f / 315.0f))));
    } else {
        const float e = mk_expf(2.0f * ax);
        r = (e - 1.0f) / (e + 1.0f);
    }
    return x < 0.0f ? -r : r;
}

MK_HOT float mk_sigmoidf(float x) {
    if (x >= 0.0f) return 1.0f / (1.0f + mk_expf(-x));
    const float e = mk_expf(x);
    return e / (1.0f + e);
}
