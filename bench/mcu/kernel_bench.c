/* SPDX-License-Identifier: MIT */
/* Firmware benchmark (issue 8 acceptance 4): cycles per MAC of the int8 Conv2D and DepthwiseConv2D
 * kernels, read from mcycle/minstret around each call on the target core. Prints
 *   B <kernel> <shape> <macs> <cycles> <instret>
 * cycles/MAC = cycles / macs (drivers/mcu prints the division and the MCU time). */
#include <stdint.h>
#include <stdio.h>

#include "mk/mk_int8.h"

static uint32_t rd_cycle(void) {
    uint32_t v;
    __asm__ volatile("csrr %0, mcycle" : "=r"(v));
    return v;
}
static uint32_t rd_instret(void) {
    uint32_t v;
    __asm__ volatile("csrr %0, minstret" : "=r"(v));
    return v;
}

/* Buffers sized for the 3066H's 64 KB SRAM. */
static int8_t in_buf[16 * 16 * 32];
static int8_t w_buf[32 * 3 * 3 * 32];
static int8_t out_buf[16 * 16 * 32];
static int32_t bias[64], mult[64], shift[64];

static void fill(int8_t* p, uint32_t n, uint32_t seed) {
    for (uint32_t i = 0; i < n; ++i) {
        seed = seed * 1664525u + 1013904223u;
        p[i] = (int8_t)(seed >> 24);
    }
}

static void run(const char* name, int dw, int32_t hw, int32_t cin, int32_t cout, int32_t k) {
    const mk_shape4 is = {1, hw, hw, cin}, os = {1, hw, hw, cout};
    mk_conv_s8_params p = {1, 1, 1, 1, k / 2, k / 2, 3, -2, -128, 127, mult, shift, 0, 0};
    const uint32_t c0 = rd_cycle(), i0 = rd_instret();
    if (dw) mk_depthwise_conv2d_s8(in_buf, is, w_buf, k, k, bias, out_buf, os, &p);
    else mk_conv2d_s8(in_buf, is, w_buf, k, k, bias, out_buf, os, &p);
    const uint32_t c1 = rd_cycle(), i1 = rd_instret();
    /* MACs of the interior formula (padding taps excluded, as the kernel skips them). */
    uint32_t taps = 0;
    for (int32_t y = 0; y < hw; ++y)
        for (int32_t ky = 0; ky < k; ++ky) {
            const int32_t iy = y + ky - k / 2;
            if (iy < 0 || iy >= hw) continue;
            for (int32_t x = 0; x < hw; ++x)
                for (int32_t kx = 0; kx < k; ++kx) {
                    const int32_t ix = x + kx - k / 2;
                    if (ix >= 0 && ix < hw) ++taps;
                }
        }
    const uint32_t macs = taps * (uint32_t)(dw ? cout : cin * cout);
    printf("B %s %ldx%ldx%ld->%ld_k%ld %lu %lu %lu\n", name, (long)hw, (long)hw, (long)cin, (long)cout, (long)k,
           (unsigned long)macs, (unsigned long)(c1 - c0), (unsigned long)(i1 - i0));
}

int main(void) {
    fill(in_buf, sizeof in_buf, 1u);
    fill(w_buf, sizeof w_buf, 2u);
    for (int i = 0; i < 64; ++i) {
        const mk_qscale q = mk_quantize_scale(0.0007);
        bias[i] = i * 13 - 300;
        mult[i] = q.multiplier;
        shift[i] = q.shift;
    }
    run("conv2d_s8", 0, 16, 16, 32, 3);
    run("conv2d_s8", 0, 16, 32, 16, 1);
    run("dwconv_s8", 1, 16, 32, 32, 3);
    return 0;
}
