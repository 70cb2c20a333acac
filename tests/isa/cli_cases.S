/* SPDX-License-Identifier: MIT */
/* Programs for the runner's outcome tests (tests/isa/CMakeLists.txt, run_expect.cmake), one per -D:
     FAIL_TEST=N   riscv-tests style failure of test N through tohost ("tohost: test N failed", exit N)
     TRAP_STORM    mtvec points at an illegal instruction: every attempt traps, nothing retires (--max-insns)
     SIGNATURE     riscv-arch-test style: results stored between begin_signature and end_signature
                   (model_test.h RVMODEL_DATA_BEGIN/END), halt through tohost
   and one per fatal outcome of the exit-code table (docs/cli.md), each with mtvec = 0 (nothing is
   mapped there on the cv32e40p preset: no trap handler):
     ILLEGAL       an illegal instruction (121)      WILD    a jump to unmapped memory (122)
     ACCESS        a load from unmapped memory (123) WFI     WFI with no interrupt enabled (125)
     ECALL         an ecall, another trap (126) */
#include "test_macros.h"
#if defined(FAIL_TEST)
TEST_BEGIN
    TEST_CASE(2, a0, 5, li a0, 5)
    TEST_CASE(FAIL_TEST, a0, 1, li a0, 2)     /* 2 != 1: fails */
TEST_END
#elif defined(TRAP_STORM)
    .section .text.init
    .globl _start
_start:
    la t0, storm
    csrw mtvec, t0
storm:
    .word 0                                  /* illegal: traps to itself forever */
    .section .tohost, "aw", @progbits
    .align 6
    .globl tohost
tohost: .dword 0
    .globl fromhost
fromhost: .dword 0
#elif defined(SIGNATURE)
TEST_BEGIN
    la s0, begin_signature
    li a0, 0x12345678
    sw a0, 0(s0)
    li a1, -3
    li a2, 7
    mul a3, a1, a2                           /* -21 = 0xffffffeb */
    sw a3, 4(s0)
    divu a4, a2, zero                        /* /0 = all ones */
    sw a4, 8(s0)
    li a5, 0x0000beef
    sh a5, 12(s0)                            /* low half of word 3, high half stays 0xdead */
    sb a2, 15(s0)                            /* top byte of word 3: 0x07 */
TEST_END
    .data
    .align 4
    .globl begin_signature
begin_signature:
    .word 0xdeadbeef, 0xdeadbeef, 0xdeadbeef, 0xdeadbeef
    .globl end_signature
end_signature:
    .word 0
#elif defined(ILLEGAL) || defined(WILD) || defined(ACCESS) || defined(WFI) || defined(ECALL)
    .section .text.init
    .globl _start
_start:
    csrw mtvec, zero
    csrw mie, zero
#if defined(ILLEGAL)
    .word 0
#elif defined(WILD)
    li t0, 0x00400000
    jr t0
#elif defined(ACCESS)
    li t0, 0x00400000
    lw t1, 0(t0)
#elif defined(WFI)
    wfi
#else
    ecall
#endif
    .section .tohost, "aw", @progbits
    .align 6
    .globl tohost
tohost: .dword 0
    .globl fromhost
fromhost: .dword 0
#else
#error "define FAIL_TEST=N, TRAP_STORM, SIGNATURE, ILLEGAL, WILD, ACCESS, WFI or ECALL"
#endif
