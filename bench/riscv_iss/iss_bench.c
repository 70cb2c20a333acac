/* SPDX-License-Identifier: MIT */
/* Compute-heavy RV32IMFC guest workload for ISS speed measurements (issue 7 acceptance 3): CRC-32,
   int32 matrix multiply, a float FMA kernel and a prime sieve. Prints a checksum (so every simulator
   must compute the same thing) and the retired-instruction count. SCALE sets the size (~4 M insns/unit). */
#include <stdint.h>
#include <stdio.h>

#ifndef SCALE
#define SCALE 128
#endif

static uint32_t crc32(const uint8_t* p, unsigned n, uint32_t crc) {
    crc = ~crc;
    for (unsigned i = 0; i < n; ++i) {
        crc ^= p[i];
        for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
    }
    return ~crc;
}

#define N 24
static int32_t ma[N][N], mb[N][N], mc[N][N];
static float fa[256], fb[256];
static uint8_t buf[4096], sieve[8192];

static uint32_t matmul(void) {
    for (int i = 0; i < N; ++i)
        for (int j = 0; j < N; ++j) {
            int32_t s = 0;
            for (int k = 0; k < N; ++k) s += ma[i][k] * mb[k][j];
            mc[i][j] = s;
        }
    uint32_t h = 0;
    for (int i = 0; i < N; ++i) h = h * 31u + (uint32_t)mc[i][(i * 7) % N];
    return h;
}

static float fma_kernel(void) {
    float acc = 0.0f;
    for (int r = 0; r < 16; ++r)
        for (int i = 0; i < 256; ++i) acc = acc * 0.999f + fa[i] * fb[(i + r) & 255];
    return acc;
}

static unsigned primes(void) {
    unsigned count = 0;
    for (unsigned i = 0; i < sizeof sieve; ++i) sieve[i] = 1;
    for (unsigned i = 2; i < sizeof sieve; ++i) {
        if (!sieve[i]) continue;
        ++count;
        for (unsigned j = i * 2; j < sizeof sieve; j += i) sieve[j] = 0;
    }
    return count;
}

static uint32_t rdinstret(void) {
    uint32_t v;
    __asm__ volatile("csrr %0, minstret" : "=r"(v));
    return v;
}

int main(void) {
    const uint32_t start = rdinstret();
    for (unsigned i = 0; i < sizeof buf; ++i) buf[i] = (uint8_t)(i * 131u + 7u);
    for (int i = 0; i < N; ++i)
        for (int j = 0; j < N; ++j) ma[i][j] = i - j, mb[i][j] = i * j + 1;
    for (int i = 0; i < 256; ++i) fa[i] = (float)i * 0.01f, fb[i] = 1.0f / (float)(i + 1);
    uint32_t sum = 0;
    float fsum = 0.0f;
    for (int it = 0; it < SCALE; ++it) {
        sum = sum * 33u + crc32(buf, 1024, (uint32_t)it);
        sum = sum * 33u + matmul();
        fsum += fma_kernel();
        sum = sum * 33u + primes();
        ma[it % N][(it * 5) % N] += 1;
    }
    const uint32_t insns = rdinstret() - start;
    printf("checksum %08lx %08lx instret %lu\n", (unsigned long)sum, (unsigned long)*(uint32_t*)&fsum,
           (unsigned long)insns);
    return 0;
}
