/* SPDX-License-Identifier: MIT */
/* Kernel self-test firmware: prints "K <case> <fnv1a> <bytes>" per kernel case and "N <count>", the
 * same lines the host build prints (tests/mcu compares them), then exits 0. */
#include <stdint.h>
#include <stdio.h>

#include "mk_selftest.h"

static uint8_t pool[MK_SELFTEST_POOL_BYTES] __attribute__((aligned(16)));

static void emit(void* ctx, const char* name, uint32_t hash, uint32_t bytes) {
    (void)ctx;
    printf("K %s %08lx %lu\n", name, (unsigned long)hash, (unsigned long)bytes);
}

int main(void) {
    const int n = mk_selftest_run(pool, emit, 0);
    printf("N %d\n", n);
    return 0;
}
