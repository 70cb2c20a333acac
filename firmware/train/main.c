/* SPDX-License-Identifier: MIT */
/* ws63 on-device training firmware: runs the training blob the host placed at __model_blob and prints
 * per epoch (parsed by drivers/mcu/src/train.cpp):
 *   MKTR <blob_bytes> <sram_needed> <arena_capacity>
 *   EP <epoch> <mean loss, float bits hex> <correct> <cycles>
 *   P <params> <hex bytes of the trained parameters>
 *   E <status>                                      (on error) */
#include <stdint.h>
#include <stdio.h>

#include "mk_trainer.h"

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

static void put_u64(uint64_t v) {
    char buf[24];
    int n = 0;
    do {
        buf[n++] = (char)('0' + (int)(v % 10u));
        v /= 10u;
    } while (v != 0);
    while (n > 0) putchar(buf[--n]);
}

static void on_epoch(void* ctx, uint32_t epoch, float loss, uint32_t correct, uint64_t cycles) {
    (void)ctx;
    union { float f; uint32_t u; } b;
    b.f = loss;
    printf("EP %lu %08lx %lu ", (unsigned long)epoch, (unsigned long)b.u, (unsigned long)correct);
    put_u64(cycles);
    putchar('\n');
}

int main(void) {
    const uint8_t* blob = __model_blob;
    uint8_t* arena = (uint8_t*)(((uintptr_t)__heap_start + 15u) & ~(uintptr_t)15u);
    const uint32_t cap = (uint32_t)(__heap_end - arena);
    const mk_train_header* h = (const mk_train_header*)(const void*)blob;
    const int known = h->magic == MK_TRAIN_MAGIC || h->magic == MK_TRAIN_MAGIC_QAS;
    const uint32_t need = known ? mk_tr_sram_bytes(blob) : 0;
    printf("MKTR %lu %lu %lu\n", (unsigned long)(known ? h->total_bytes : 0), (unsigned long)need, (unsigned long)cap);
    const mk_tr_hooks hooks = {read_mcycle, on_epoch, 0};
    const int rc = mk_tr_run(blob, (uint32_t)(uintptr_t)__model_blob_size, arena, cap, &hooks);
    if (rc != MK_TR_OK) {
        printf("E %d\n", rc);
        return 10 + rc;
    }
    printf("P %lu ", (unsigned long)h->params_floats);
    for (uint32_t i = 0; i < h->params_floats * 4u; ++i) printf("%02x", arena[i]);
    putchar('\n');
    return 0;
}
