/* SPDX-License-Identifier: MIT */
/* The blob interpreter: runs the layers of a model blob (mcu_blob.h) with the mcu_kernels library.
 * Built into the RISC-V firmware and, unchanged, into the host library mcu_runtime_host so the host
 * can run the same schedule in-process (host == ISS comparisons). */
#ifndef MK_RUNTIME_H
#define MK_RUNTIME_H
#include <stdint.h>

#include "mcu_blob.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { MK_RT_OK = 0, MK_RT_BAD_BLOB = 1, MK_RT_ARENA_TOO_SMALL = 2, MK_RT_BAD_LAYER = 3 };

typedef struct {
    /** Counter reads around each layer (mcycle/minstret on the target; may be NULL). */
    uint64_t (*cycles)(void);
    uint64_t (*instret)(void);
    /** Called after each layer with the counter deltas. */
    void (*on_layer)(void* ctx, uint32_t index, const mk_blob_layer* layer, uint64_t cycles, uint64_t instret);
    void* ctx;
} mk_rt_hooks;

/** Validates the header and tables (sizes, indices, offsets inside the blob/arena). */
int mk_rt_check(const uint8_t* blob, uint32_t blob_bytes, uint32_t arena_bytes);

/** Fills the inputs from their payloads and runs every layer. Returns MK_RT_*; on MK_RT_BAD_LAYER
 * *bad_layer names the layer. */
int mk_rt_run(const uint8_t* blob, uint8_t* arena, uint32_t arena_bytes, const mk_rt_hooks* hooks,
              uint32_t* bad_layer);

/** Address of tensor `idx` (in the blob or the arena). */
void* mk_rt_tensor(const uint8_t* blob, uint8_t* arena, uint32_t idx);

#ifdef __cplusplus
}
#endif
#endif
