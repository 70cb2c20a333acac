/* SPDX-License-Identifier: MIT */
/* picolibc libm and printf over semihosting: single-precision math through the F extension, printed
   bit-exactly, with the retired-instruction count; exit code 5 checks SYS_EXIT_EXTENDED. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static uint32_t bits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

int main(void) {
    uint32_t start;
    __asm__ volatile("csrr %0, minstret" : "=r"(start));
    uint32_t h = 0;
    for (int i = 1; i < 200; ++i) {
        const float x = (float)i * 0.37f - 20.0f;
        h = h * 31u + bits(sinf(x)) + bits(expf(x * 0.1f)) + bits(sqrtf(fabsf(x))) + bits(powf(fabsf(x), 0.3f));
        h ^= bits(fmaf(x, x, -1.0f)) + (uint32_t)lrintf(x * 3.3f);
    }
    printf("libm hash %08lx, %.6f %.3e %g\n", (unsigned long)h, (double)sinf(1.0f), (double)expf(10.0f),
           (double)atan2f(1.0f, -1.0f));
    uint32_t end;
    __asm__ volatile("csrr %0, minstret" : "=r"(end));
    printf("instret %lu\n", (unsigned long)(end - start));
    return 5;
}
