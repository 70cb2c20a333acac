/* SPDX-License-Identifier: MIT */
/* The on-device training loop (SGD, batch 1, softmax cross-entropy) over a training blob; built into
 * the ws63 firmware and, unchanged, for the host (mcu_trainer_host) so that host == ISS is checked. */
#ifndef MK_TRAINER_H
#define MK_TRAINER_H
#include <stdint.h>

#include "mk_train_blob.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { MK_TR_OK = 0, MK_TR_BAD_BLOB = 1, MK_TR_NO_MEMORY = 2 };

typedef struct {
    uint64_t (*cycles)(void);
    void (*on_epoch)(void* ctx, uint32_t epoch, float mean_loss, uint32_t correct, uint64_t cycles);
    void* ctx;
} mk_tr_hooks;

/** SRAM the trainer needs for a blob: parameters, gradients, saved activations and their gradients. */
uint32_t mk_tr_sram_bytes(const uint8_t* blob);
/** Validates and runs `epochs` epochs (FP32 or QAS INT8 by the blob's magic); trained parameters (QAS: the
 * master codes) are left at `arena` (params_floats floats). */
int mk_tr_run(const uint8_t* blob, uint32_t blob_bytes, uint8_t* arena, uint32_t arena_bytes, const mk_tr_hooks* hooks);
/** The QAS INT8 loop (trainer_qas.c) that mk_tr_run dispatches to. */
uint32_t mk_tr_qas_sram_bytes(const uint8_t* blob);
int mk_tr_qas_run(const uint8_t* blob, uint32_t blob_bytes, uint8_t* arena, uint32_t arena_bytes, const mk_tr_hooks* hooks);

#ifdef __cplusplus
}
#endif
#endif
