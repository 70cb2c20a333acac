/* SPDX-License-Identifier: MIT */
/* Interrupts landing anywhere in straight-line code (issue 22: the block engine must take them at the
   same instruction boundaries as the step engine): a timer interrupt re-armed with varying deltas and
   software interrupts raised by the loop itself preempt a mixed integer/memory/divide/FP loop. The loop
   runs once with interrupts off and once with them on; the handler preserves every register it uses, so
   both passes must give the same checksum, and interrupts must have been taken. External and local lines
   (raised by iss_engine_diff --irq-every) are counted and masked in the handler, re-enabled by the loop.
   Ends with WFI woken by the timer. Self-checking (tohost); also runs on QEMU. */
#include "test_macros.h"
#define CLINT_MSIP      0x02000000
#define CLINT_MTIMECMP  0x02004000
#define CLINT_MTIME     0x0200bff8
#define MIE_BITS        0xffff0888   /* local lines 16..31, MEIE, MTIE, MSIE */
TEST_BEGIN
    li t0, 0x2000; csrs mstatus, t0          /* FS = Initial */
    la t0, handler; csrw mtvec, t0
    la s2, counts                            /* counts: +0 timer, +4 software, +8 external/local */
    /* pass 1: interrupts off */
    li a0, 0
    call work
    mv s3, a0
    /* pass 2: timer + software interrupts on */
    li t0, CLINT_MTIME; lw t1, 0(t0)
    addi t1, t1, 7
    li t0, CLINT_MTIMECMP; sw t1, 0(t0); sw zero, 4(t0)
    li t0, MIE_BITS; csrw mie, t0
    csrsi mstatus, 8                         /* MIE */
    li a0, 1
    call work
    csrci mstatus, 8
    TEST_CASE(2, a0, 0, sub a0, a0, s3)      /* same checksum with and without interrupts */
    TEST_CASE(3, a1, 1, lw a1, 0(s2); sltiu a1, a1, 2; xori a1, a1, 1)   /* >= 2 timer interrupts */
    TEST_CASE(4, a1, 1, lw a1, 4(s2); sltiu a1, a1, 2; xori a1, a1, 1)   /* >= 2 software interrupts */
    /* WFI: the next timer interrupt wakes the hart (MIE off: WFI completes, no trap) */
    li TESTNUM, 5
    li t0, CLINT_MTIME; lw t1, 0(t0)
    addi t1, t1, 20
    li t0, CLINT_MTIMECMP; sw t1, 0(t0); sw zero, 4(t0)
    li t0, 0x80; csrw mie, t0
    wfi
    csrr a1, mip
    andi a1, a1, 0x80
    beqz a1, fail
    csrw mie, zero
TEST_END

    .text

/* work(a0 = raise software interrupts): returns a checksum in a0. Uses s4..s11, a1..a5, t3..t5, fa0..fa2. */
work:
    mv t5, a0
    la s7, buffer
    li s10, 64
    li a1, 0x5a5a1234
3:  sw a1, 0(s7)                             /* same buffer contents on every pass */
    addi s7, s7, 4
    addi s10, s10, -1
    bnez s10, 3b
    li s4, 0x12345678
    li s5, 1
    li s6, 400                               /* iterations */
    la s7, buffer
    li s9, 0
    fcvt.s.w fa0, s5
    li s10, 0x3f800000; fmv.w.x fa1, s10     /* 1.0 */
1:  andi s10, s6, 63
    slli s10, s10, 2
    add s10, s10, s7
    lw a1, 0(s10)
    add a1, a1, s4
    xor a1, a1, s6
    sw a1, 0(s10)
    mul a2, a1, s5
    srli a3, a2, 7
    add s4, s4, a3
    ori s11, s6, 1
    divu a4, s4, s11
    remu a5, s4, s11
    add s9, s9, a4
    xor s9, s9, a5
    lbu a3, 1(s10)
    add s9, s9, a3
    sh s9, 2(s10)
    fadd.s fa0, fa0, fa1
    fmul.s fa2, fa0, fa1
    fcvt.w.s a3, fa2
    add s9, s9, a3
    addi s5, s5, 3
    beqz t5, 2f
    andi a3, s6, 31                          /* every 32 iterations: software interrupt */
    bnez a3, 2f
    li a3, CLINT_MSIP; li a4, 1; sw a4, 0(a3)
    li a3, MIE_BITS; csrs mie, a3            /* re-enable lines the handler masked */
2:  addi s6, s6, -1
    bnez s6, 1b
    add a0, s9, s4
    ret

    .align 2
handler:
    csrw mscratch, t0
    la t0, save
    sw t1, 0(t0); sw t2, 4(t0); sw t3, 8(t0)
    csrr t1, mcause
    bgez t1, fail                            /* only interrupts are expected here */
    slli t1, t1, 1; srli t1, t1, 1
    li t2, 7; bne t1, t2, 1f
    /* timer: count, re-arm with a delta of 1..47 ticks that changes every time */
    lw t2, 0(s2); addi t2, t2, 1; sw t2, 0(s2)
    li t3, 13; mul t3, t2, t3; andi t3, t3, 31; addi t3, t3, 1
    li t1, CLINT_MTIME; lw t2, 0(t1)
    add t2, t2, t3
    li t1, CLINT_MTIMECMP; sw t2, 0(t1); sw zero, 4(t1)
    j 9f
1:  li t2, 3; bne t1, t2, 2f
    lw t2, 4(s2); addi t2, t2, 1; sw t2, 4(s2)
    li t1, CLINT_MSIP; sw zero, 0(t1)
    j 9f
2:  lw t2, 8(s2); addi t2, t2, 1; sw t2, 8(s2)  /* external (11) or local (16..31): mask it */
    li t2, 1; sll t2, t2, t1
    csrc mie, t2
9:  la t0, save
    lw t1, 0(t0); lw t2, 4(t0); lw t3, 8(t0)
    csrr t0, mscratch
    mret

    .data
    .align 4
counts: .word 0, 0, 0, 0
save:   .word 0, 0, 0, 0
buffer: .fill 64, 4, 0
