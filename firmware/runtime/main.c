/* SPDX-License-Identifier: MIT */
/* Firmware entry: run the model blob the host placed at __model_blob, time each layer with
 * mcycle/minstret, print per-layer counters and the output tensors over semihosting, exit with the
 * runtime status. Output lines (parsed by drivers/mcu):
 *   MKRT <blob_bytes> <arena_bytes> <arena_capacity>
 *   L <index> <op> <cycles> <instret> <name>
 *   O <output#> <tensor> <bytes> <hex bytes>
 *   T <cycles> <instret>                        (whole schedule)
 *   E <status> <layer>                          (on error) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "mk_runtime.h"

extern const uint8_t __model_blob[];
extern const uint8_t __model_blob_size[];
extern uint8_t __heap_start[];
extern uint8_t __heap_end[];

static uint64_t read_mcycle(void) {
    uint32_t hi, lo, hi2;
    do {
        __asm__ volatile("csrr %0, mcycleh" : "=r"(hi));
        __asm__ volatile("csrr %0, mcycle" : "=r"(lo));
        __asm__ volatile("csrr %0, mcycleh" : "=r"(hi2));
    } while (hi != hi2);
    return ((uint64_t)hi << 32) | lo;
}

static uint64_t read_minstret(void) {
    uint32_t hi, lo, hi2;
    do {
        __asm__ volatile("csrr %0, minstreth" : "=r"(hi));
        __asm__ volatile("csrr %0, minstret" : "=r"(lo));
        __asm__ volatile("csrr %0, minstreth" : "=r"(hi2));
    } while (hi != hi2);
    return ((uint64_t)hi << 32) | lo;
}

/* Decimal without printf's 64-bit support (picolibc's integer printf variant lacks %llu). */
static void put_u64(uint64_t v) {
    char buf[24];
    int n = 0;
    do {
        buf[n++] = (char)('0' + (int)(v % 10u));
        v /= 10u;
    } while (v != 0);
    while (n > 0) putchar(buf[--n]);
}

static void on_layer(void* ctx, uint32_t index, const mk_blob_layer* l, uint64_t cycles, uint64_t instret) {
    (void)ctx;
    printf("L %lu %lu ", (unsigned long)index, (unsigned long)l->op);
    put_u64(cycles);
    putchar(' ');
    put_u64(instret);
    printf(" %.24s\n", l->name);
}

int main(void) {
    const uint8_t* blob = __model_blob;
    const uint32_t blob_cap = (uint32_t)(uintptr_t)__model_blob_size;
    uint8_t* arena = (uint8_t*)(((uintptr_t)__heap_start + 15u) & ~(uintptr_t)15u);
    const uint32_t arena_cap = (uint32_t)(__heap_end - arena);
    const mk_blob_header* h = (const mk_blob_header*)(const void*)blob;
    int rc = mk_rt_check(blob, blob_cap, arena_cap);
    printf("MKRT %lu %lu %lu\n", (unsigned long)(rc == MK_RT_BAD_BLOB ? 0 : h->total_bytes),
           (unsigned long)(rc == MK_RT_BAD_BLOB ? 0 : h->arena_bytes), (unsigned long)arena_cap);
    if (rc != MK_RT_OK) {
        printf("E %d 0\n", rc);
        return 10 + rc;
    }
    mk_rt_hooks hooks = {read_mcycle, read_minstret, on_layer, 0};
    uint32_t bad = 0;
    const uint64_t c0 = read_mcycle(), i0 = read_minstret();
    rc = mk_rt_run(blob, arena, arena_cap, &hooks, &bad);
    const uint64_t c1 = read_mcycle(), i1 = read_minstret();
    if (rc != MK_RT_OK) {
        printf("E %d %lu\n", rc, (unsigned long)bad);
        return 10 + rc;
    }
    const uint32_t* io = (const uint32_t*)(const void*)(blob + h->io_off);
    for (uint32_t k = 0; k < h->n_outputs; ++k) {
        const uint32_t idx = io[h->n_inputs + k];
        const mk_blob_tensor* t = &((const mk_blob_tensor*)(const void*)(blob + h->tensors_off))[idx];
        const uint8_t* d = (const uint8_t*)mk_rt_tensor(blob, arena, idx);
        printf("O %lu %lu %lu ", (unsigned long)k, (unsigned long)idx, (unsigned long)t->bytes);
        for (uint32_t i = 0; i < t->bytes; ++i) printf("%02x", d[i]);
        putchar('\n');
    }
    printf("T ");
    put_u64(c1 - c0);
    putchar(' ');
    put_u64(i1 - i0);
    putchar('\n');
    return 0;
}
