/* SPDX-License-Identifier: MIT */
/* Self-modifying code without fence.i (issue 22: the block engine invalidates translated code on stores
   into it). The ISA manual only promises visibility after fence.i; rviss, like QEMU, makes a store into
   already-decoded code visible to the next instruction, in both engines: an instruction later in the
   same straight-line run, a function called in a loop and patched between calls, a compressed
   instruction patched with sh, and a store next to code that must not disturb it. Self-checking. */
#include "test_macros.h"
TEST_BEGIN
    /* 1: patch an instruction three instructions ahead (addi a0, x0, 0 -> addi a0, x0, 5) */
    li TESTNUM, 1
    la t0, 1f
    li t1, 0x00500513                        /* addi a0, x0, 5 */
    li a0, 0
    sw t1, 0(t0)
    nop
    .option push
    .option norvc
1:  addi a0, x0, 0
    .option pop
    li t6, 5
    bne a0, t6, fail
    /* 2: a function patched between calls, no fence.i: returns 0, then 1, 2, ... 7 */
    li TESTNUM, 2
    li s2, 0                                 /* call count */
    li s3, 0                                 /* sum of results */
2:  call patched_fn
    add s3, s3, a0
    addi s2, s2, 1
    la t0, patched_fn
    li t1, 0x00000513                        /* addi a0, x0, imm: imm in bits 31:20 */
    slli t2, s2, 20
    or t1, t1, t2
    sw t1, 0(t0)
    li t3, 8
    bne s2, t3, 2b
    li t6, 28                                /* 0 + 1 + ... + 7 */
    bne s3, t6, fail
    /* 3: a compressed instruction patched with sh (c.li a1, 0 -> c.li a1, 9) */
    li TESTNUM, 3
    la t0, 3f
    li t1, 0x45a5                            /* c.li a1, 9 */
    sh t1, 0(t0)
    .option push
    .option rvc
3:  c.li a1, 0
    .option pop
    li t6, 9
    bne a1, t6, fail
    /* 4: a store into the same page as code, next to it, leaves the code alone */
    li TESTNUM, 4
    la t0, scratch_in_text
    li t1, 0x12345678
    sw t1, 0(t0)
    call plain_fn
    li t6, 42
    bne a0, t6, fail
    lw t2, 0(t0)
    bne t1, t2, fail
TEST_END

    .text
    .align 2
    .option push
    .option norvc
patched_fn:
    addi a0, x0, 0
    ret
plain_fn:
    addi a0, x0, 42
    ret
    .option pop
    .align 2
scratch_in_text:
    .word 0
