/* SPDX-License-Identifier: MIT */
/* Kernel self-test: every kernel on seeded data (xorshift32), one FNV-1a hash of each output. Built
 * into the RISC-V firmware (kernel_selftest_<board>.elf) and into the host unit tests, whose hash
 * lists must be identical: the "host == ISS" half of issue 8 acceptance 1. */
#ifndef MK_SELFTEST_H
#define MK_SELFTEST_H
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef void (*mk_selftest_emit)(void* ctx, const char* name, uint32_t hash, uint32_t bytes);

/** Runs all cases; `pool` is scratch memory of at least MK_SELFTEST_POOL_BYTES. Returns the case count. */
int mk_selftest_run(uint8_t* pool, mk_selftest_emit emit, void* ctx);
#define MK_SELFTEST_POOL_BYTES 24576u

#ifdef __cplusplus
}
#endif
#endif
