/* SPDX-License-Identifier: MIT */
/* picolibc qsort/malloc/string/snprintf workload with integer M/A-heavy code; prints a digest and the
   retired-instruction count. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void* a, const void* b) {
    const int32_t x = *(const int32_t*)a, y = *(const int32_t*)b;
    return (x > y) - (x < y);
}

int main(void) {
    uint32_t start;
    __asm__ volatile("csrr %0, minstret" : "=r"(start));
    enum { kN = 2000 };
    int32_t* v = malloc(kN * sizeof *v);
    if (!v) return 2;
    uint32_t s = 12345;
    for (int i = 0; i < kN; ++i) {
        s = s * 1103515245u + 12345u;
        v[i] = (int32_t)(s >> 3) - (1 << 27);
    }
    qsort(v, kN, sizeof *v, cmp);
    char buf[64];
    uint32_t digest = 0;
    for (int i = 0; i < kN; i += 97) {
        snprintf(buf, sizeof buf, "%d:%x", v[i], (unsigned)(v[i] / 7 % 1000));
        digest = digest * 131u + (uint32_t)strlen(buf) + (uint32_t)buf[1];
    }
    free(v);
    uint32_t end;
    __asm__ volatile("csrr %0, minstret" : "=r"(end));
    printf("libc digest %08lx sorted-min %ld instret %lu\n", (unsigned long)digest, (long)v[0] * 0,
           (unsigned long)(end - start));
    return 0;
}
