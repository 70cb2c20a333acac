/* SPDX-License-Identifier: MIT */
/* RV32A: LR/SC reservation rules and every AMO (old value returned, memory updated), misaligned AMO trap. */
#include "test_macros.h"
#define AMO_CASE(n, inst, init, operand, expected_old, expected_mem) \
    li TESTNUM, n; la a0, amo_word; li t0, init; sw t0, 0(a0); li a1, operand; \
    inst a4, a1, (a0); li t6, expected_old; bne a4, t6, fail; \
    lw a5, 0(a0); li t6, expected_mem; bne a5, t6, fail;
TEST_BEGIN
    AMO_CASE(2, amoswap.w, 0x11111111, 0x22222222, 0x11111111, 0x22222222)
    AMO_CASE(3, amoadd.w, 0x7fffffff, 1, 0x7fffffff, 0x80000000)
    AMO_CASE(4, amoxor.w, 0xff00ff00, 0x0ff00ff0, 0xff00ff00, 0xf0f0f0f0)
    AMO_CASE(5, amoand.w, 0xff00ff00, 0x0ff00ff0, 0xff00ff00, 0x0f000f00)
    AMO_CASE(6, amoor.w, 0xff00ff00, 0x0ff00ff0, 0xff00ff00, 0xfff0fff0)
    AMO_CASE(7, amomin.w, 0xffffffff, 1, 0xffffffff, 0xffffffff)   /* -1 < 1 signed */
    AMO_CASE(8, amomax.w, 0xffffffff, 1, 0xffffffff, 1)
    AMO_CASE(9, amominu.w, 0xffffffff, 1, 0xffffffff, 1)          /* 1 < 0xffffffff unsigned */
    AMO_CASE(10, amomaxu.w, 0xffffffff, 1, 0xffffffff, 0xffffffff)
    AMO_CASE(11, amoadd.w.aqrl, 5, 6, 5, 11)
    /* LR/SC success: sc writes 0 to rd and stores */
    TEST_CASE(20, a4, 0, la a0, amo_word; li t0, 40; sw t0, 0(a0); lr.w a1, (a0); addi a1, a1, 2; sc.w a4, a1, (a0))
    TEST_CASE(21, a5, 42, lw a5, 0(a0))
    /* SC without a reservation fails (rd = 1) and does not store */
    TEST_CASE(22, a4, 1, li a1, 99; sc.w a4, a1, (a0))
    TEST_CASE(23, a5, 42, lw a5, 0(a0))
    /* SC to another address than the reservation fails */
    TEST_CASE(24, a4, 1, lr.w a1, (a0); la a2, amo_word2; sc.w a4, a1, (a2))
    /* misaligned AMO: store/AMO address misaligned (cause 6), mtval = address */
    EXPECT_TRAP(1f); la a0, amo_word; addi a0, a0, 2; amoadd.w a4, a1, (a0); j fail; 1:
    CHECK_TRAP(30, 6)
    TEST_CASE(31, s11, 1, la t0, amo_word; addi t0, t0, 2; sub s11, s11, t0; addi s11, s11, 1)
TEST_END
    .data
    .align 4
amo_word: .word 0
amo_word2: .word 0
