/* SPDX-License-Identifier: MIT */
/* Self-checking ISA test macros in the riscv-tests style (own implementation): gp holds the current
   test number; on a mismatch the test writes (gp << 1) | 1 to tohost, on success 1 (HTIF exit 0).
   Traps go to trap_vector, which fails the test unless the test armed s8 with a resume address; then
   it stores mcause/mepc/mtval in s10/s9/s11, disarms s8 and jumps there. */
#ifndef NPUSIM_ISA_TEST_MACROS_H
#define NPUSIM_ISA_TEST_MACROS_H

#define TESTNUM gp

#define TEST_BEGIN                                   \
    .section .text.init;                             \
    .globl _start;                                   \
_start:                                              \
    la t0, trap_vector;                              \
    csrw mtvec, t0;                                  \
    li s8, 0;                                        \
    li TESTNUM, 0;                                   \
    j test_body;                                     \
    .align 2;                                        \
trap_vector:                                         \
    beqz s8, fail;                                   \
    csrr s10, mcause;                                \
    csrr s9, mepc;                                   \
    csrr s11, mtval;                                 \
    mv t0, s8;                                       \
    li s8, 0;                                        \
    jr t0;                                           \
test_body:

#define TEST_END                                     \
pass:                                                \
    li t0, 1;                                        \
    la t1, tohost;                                   \
    sw t0, 0(t1);                                    \
    sw zero, 4(t1);  /* QEMU's HTIF acts on the high word */ \
1:  j 1b;                                            \
fail:                                                \
    slli t0, TESTNUM, 1;                             \
    ori t0, t0, 1;                                   \
    la t1, tohost;                                   \
    sw t0, 0(t1);                                    \
    sw zero, 4(t1);                                  \
2:  j 2b;                                            \
    .section .tohost, "aw", @progbits;               \
    .align 6;                                        \
    .globl tohost;                                   \
tohost: .dword 0; .size tohost, 8;                  \
    .align 6;                                        \
    .globl fromhost;                                 \
fromhost: .dword 0; .size fromhost, 8;

/* Run `code`, then require register `reg` == `expected`. */
#define TEST_CASE(n, reg, expected, code...)         \
    li TESTNUM, n;                                   \
    code;                                            \
    li t6, expected;                                 \
    bne reg, t6, fail;

#define TEST_RR(n, inst, expected, v1, v2) \
    TEST_CASE(n, a4, expected, li a1, v1; li a2, v2; inst a4, a1, a2)
#define TEST_RR_SRC1_EQ_DEST(n, inst, expected, v1, v2) \
    TEST_CASE(n, a1, expected, li a1, v1; li a2, v2; inst a1, a1, a2)
#define TEST_RR_ZERO_DEST(n, inst, v1, v2) \
    TEST_CASE(n, x0, 0, li a1, v1; li a2, v2; inst x0, a1, a2)
#define TEST_IMM(n, inst, expected, v1, imm) \
    TEST_CASE(n, a4, expected, li a1, v1; inst a4, a1, imm)

/* Arm the trap handler: the next trap resumes at label `resume`. */
#define EXPECT_TRAP(resume) la s8, resume

/* Require that a trap happened with cause `c` (mepc in s9, mtval in s11). */
#define CHECK_TRAP(n, c)                             \
    li TESTNUM, n;                                   \
    li t6, c;                                        \
    bne s10, t6, fail;

/* Floating point: operands and the result as raw IEEE-754 single bit patterns, plus fflags. */
#define FP_SETUP                                     \
    li t0, 0x2000;  /* mstatus.FS = Initial */       \
    csrs mstatus, t0;

#define TEST_FP_CHECK(n, expected_bits, expected_flags) \
    fmv.x.w a4, fa0;                                 \
    li t6, expected_bits;                            \
    bne a4, t6, fail;                                \
    frflags a5;                                      \
    li t6, expected_flags;                           \
    bne a5, t6, fail;

#define TEST_FP_OP2(n, inst, expected_flags, expected_bits, a_bits, b_bits) \
    li TESTNUM, n;                                   \
    li t0, a_bits; fmv.w.x fa1, t0;                  \
    li t0, b_bits; fmv.w.x fa2, t0;                  \
    fsflags x0;                                      \
    inst fa0, fa1, fa2;                              \
    TEST_FP_CHECK(n, expected_bits, expected_flags)

#define TEST_FP_OP2_RM(n, inst, rm, expected_flags, expected_bits, a_bits, b_bits) \
    li TESTNUM, n;                                   \
    li t0, a_bits; fmv.w.x fa1, t0;                  \
    li t0, b_bits; fmv.w.x fa2, t0;                  \
    fsflags x0;                                      \
    inst fa0, fa1, fa2, rm;                          \
    TEST_FP_CHECK(n, expected_bits, expected_flags)

#define TEST_FP_OP1(n, inst, expected_flags, expected_bits, a_bits) \
    li TESTNUM, n;                                   \
    li t0, a_bits; fmv.w.x fa1, t0;                  \
    fsflags x0;                                      \
    inst fa0, fa1;                                   \
    TEST_FP_CHECK(n, expected_bits, expected_flags)

#define TEST_FP_OP3(n, inst, expected_flags, expected_bits, a_bits, b_bits, c_bits) \
    li TESTNUM, n;                                   \
    li t0, a_bits; fmv.w.x fa1, t0;                  \
    li t0, b_bits; fmv.w.x fa2, t0;                  \
    li t0, c_bits; fmv.w.x fa3, t0;                  \
    fsflags x0;                                      \
    inst fa0, fa1, fa2, fa3;                         \
    TEST_FP_CHECK(n, expected_bits, expected_flags)

/* FP -> integer register results (compare, classify, convert). */
#define TEST_FP_INT_OP2(n, inst, expected_flags, expected, a_bits, b_bits) \
    li TESTNUM, n;                                   \
    li t0, a_bits; fmv.w.x fa1, t0;                  \
    li t0, b_bits; fmv.w.x fa2, t0;                  \
    fsflags x0;                                      \
    inst a4, fa1, fa2;                               \
    li t6, expected; bne a4, t6, fail;               \
    frflags a5; li t6, expected_flags; bne a5, t6, fail;

#define TEST_FP_INT_OP1(n, inst, expected_flags, expected, a_bits) \
    li TESTNUM, n;                                   \
    li t0, a_bits; fmv.w.x fa1, t0;                  \
    fsflags x0;                                      \
    inst a4, fa1;                                    \
    li t6, expected; bne a4, t6, fail;               \
    frflags a5; li t6, expected_flags; bne a5, t6, fail;

#define TEST_FP_INT_OP1_RM(n, inst, rm, expected_flags, expected, a_bits) \
    li TESTNUM, n;                                   \
    li t0, a_bits; fmv.w.x fa1, t0;                  \
    fsflags x0;                                      \
    inst a4, fa1, rm;                                \
    li t6, expected; bne a4, t6, fail;               \
    frflags a5; li t6, expected_flags; bne a5, t6, fail;

#define TEST_INT_FP_OP1_RM(n, inst, rm, expected_flags, expected_bits, int_val) \
    li TESTNUM, n;                                   \
    li t0, int_val;                                  \
    fsflags x0;                                      \
    inst fa0, t0, rm;                                \
    TEST_FP_CHECK(n, expected_bits, expected_flags)

#endif
