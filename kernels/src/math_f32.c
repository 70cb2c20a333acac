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

/* sin(r) and cos(r) for |r| <= pi/4 (minimax-style odd/even polynomials in single precision). */
static float sin_kernel(float r) {
    const float z = r * r;
    return r + r * z * (-1.6666654611e-1f + z * (8.3321608736e-3f + z * -1.9515295891e-4f));
}
static float cos_kernel(float r) {
    const float z = r * r;
    return 1.0f - 0.5f * z + z * z * (4.166664568298827e-2f + z * (-1.388731625493765e-3f + z * 2.443315711809948e-5f));
}

/* x = j pi/2 + r: j the nearest integer to x 2/pi, r in double with fdlibm's pio2_1 (33 bits, so j pio2_1
 * is exact for |j| < 2^20) and its tail pio2_1t. */
static float reduce_pio2(float x, int32_t* quadrant) {
    const double pio2_1 = 1.57079632673412561417e+00, pio2_1t = 6.07710050650619224932e-11, two_over_pi = 6.36619772367581382433e-01;
    const double t = (double)x * two_over_pi;
    const int64_t j = (int64_t)(t >= 0.0 ? t + 0.5 : t - 0.5);
    *quadrant = (int32_t)(j & 3);
    return (float)(((double)x - (double)j * pio2_1) - (double)j * pio2_1t);
}

float mk_sinf(float x) {
    if (x != x || x - x != 0.0f) return from_bits(0x7fc00000u); /* NaN, +-inf */
    const float ax = x < 0.0f ? -x : x;
    if (ax < 0.78539816f) return sin_kernel(x);
    int32_t q;
    const float r = reduce_pio2(x, &q);
    return q == 0 ? sin_kernel(r) : q == 1 ? cos_kernel(r) : q == 2 ? -sin_kernel(r) : -cos_kernel(r);
}

float mk_cosf(float x) {
    if (x != x || x - x != 0.0f) return from_bits(0x7fc00000u);
    const float ax = x < 0.0f ? -x : x;
    if (ax < 0.78539816f) return cos_kernel(x);
    int32_t q;
    const float r = reduce_pio2(x, &q);
    return q == 0 ? cos_kernel(r) : q == 1 ? -sin_kernel(r) : q == 2 ? -cos_kernel(r) : sin_kernel(r);
}

float mk_erff(float x) {
    if (x != x) return x;
    const float ax = x < 0.0f ? -x : x;
    if (ax > 6.0f) return x < 0.0f ? -1.0f : 1.0f;
    const float t = 1.0f / (1.0f + 0.3275911f * ax);
    const float p = t * (0.254829592f + t * (-0.284496736f + t * (1.421413741f + t * (-1.453152027f + t * 1.061405429f))));
    const float r = 1.0f - p * mk_expf(-ax * ax);
    return x < 0.0f ? -r : r;
}
