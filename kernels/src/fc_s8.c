/* SPDX-License-Identifier: MIT */
/* int8 FullyConnected / Gemm (transB = 1) / MatMul with constant B: four output features per pass so
 * each input element is loaded once for four multiply-accumulates. */
#include "mk/mk_int8.h"

MK_HOT void mk_fully_connected_s8(const int8_t* in, int32_t m, int32_t k, const int8_t* weights, int32_t n,
                           const int32_t* bias, int8_t* out, int32_t in_zp, int32_t out_zp, const int32_t* mult,
                           const int32_t* shift, const float* fscale, int32_t act_min, int32_t act_max, int32_t tfl) {
    const int32_t in_off = -in_zp;
    for (int32_t r = 0; r < m; ++r) {
        const int8_t* x = in + r * k;
        int8_t* o = out + r * n;
        int32_t j = 0;
        for (; j + 4 <= n; j += 4) {
            const int8_t* w0 = weights + j * k;
            const int8_t* w1 = w0 + k;
            const int8_t* w2 = w1 + k;
            const int8_t* w3 = w2 + k;
            int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
            for (int32_t i = 0; i < k; ++i) {
                const int32_t xv = x[i] + in_off;
                a0 += xv * w0[i];
                a1 += xv * w1[i];
                a2 += xv * w2[i];
                a3 += xv * w3[i];
            }
            int32_t acc[4] = {a0, a1, a2, a3};
            for (int32_t t = 0; t < 4; ++t) {
                const int32_t c = j + t;
                const int32_t a = acc[t] + (bias ? bias[c] : 0);
                const int32_t v = fscale ? mk_requant_float(a, fscale[c], out_zp)
                                  : (tfl ? mk_tfl_mbqm(a, mult[c], shift[c]) : mk_requant(a, mult[c], shift[c])) + out_zp;
                o[c] = (int8_t)mk_clamp_i32(v, act_min, act_max);
            }
        }
        for (; j < n; ++j) {
            const int8_t* w = weights + j * k;
            int32_t a = bias ? bias[j] : 0;
            for (int32_t i = 0; i < k; ++i) a += (x[i] + in_off) * w[i];
            const int32_t v = fscale ? mk_requant_float(a, fscale[j], out_zp)
                              : (tfl ? mk_tfl_mbqm(a, mult[j], shift[j]) : mk_requant(a, mult[j], shift[j])) + out_zp;
            o[j] = (int8_t)mk_clamp_i32(v, act_min, act_max);
        }
    }
}
