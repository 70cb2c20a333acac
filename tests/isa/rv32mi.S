/* SPDX-License-Identifier: MIT */
/* Machine/user mode and Zicsr/Zicntr/Zifencei: precise traps (mcause/mepc/mtval), unimplemented and
   read-only CSRs, U-mode privilege checks, mret, vectored mtvec with a CLINT software interrupt,
   timer interrupt + WFI, counters, and fence.i over self-modified code. */
#include "test_macros.h"
#define CLINT_MSIP      0x02000000
#define CLINT_MTIMECMP  0x02004000
#define CLINT_MTIME     0x0200bff8
TEST_BEGIN
    /* ecall from M: cause 11, mepc = the ecall, mtval = 0 */
    EXPECT_TRAP(1f); 3: ecall; j fail; 1:
    CHECK_TRAP(2, 11)
    TEST_CASE(3, s9, 0, la t0, 3b; sub s9, s9, t0)
    TEST_CASE(4, s11, 0, nop)
    /* ebreak without the semihosting sequence: cause 3 */
    EXPECT_TRAP(1f); 3: ebreak; j fail; 1:
    CHECK_TRAP(5, 3)
    TEST_CASE(6, s9, 0, la t0, 3b; sub s9, s9, t0)
    /* illegal instruction: cause 2, mtval = the instruction word */
    EXPECT_TRAP(1f); 3: .word 0xfe000033; j fail; 1:
    CHECK_TRAP(7, 2)
    TEST_CASE(8, s11, 0xfe000033, nop)
    TEST_CASE(9, s9, 0, la t0, 3b; sub s9, s9, t0)
    /* load/store access faults on unmapped memory: cause 5/7, mtval = address */
    EXPECT_TRAP(1f); li a0, 0x40; lw a1, 0(a0); j fail; 1:
    CHECK_TRAP(10, 5)
    TEST_CASE(11, s11, 0x40, nop)
    EXPECT_TRAP(1f); li a0, 0x44; sw a1, 0(a0); j fail; 1:
    CHECK_TRAP(12, 7)
    TEST_CASE(13, s11, 0x44, nop)
    /* unimplemented CSR (custom 0x7c0) and a write to a read-only CSR (mvendorid) are illegal */
    EXPECT_TRAP(1f); csrr a0, 0x7c0; j fail; 1:
    CHECK_TRAP(14, 2)
    EXPECT_TRAP(1f); csrw mvendorid, a0; j fail; 1:
    CHECK_TRAP(15, 2)
    TEST_CASE(16, a0, 0, csrr a0, mhartid)
    /* Zicsr read-modify-write semantics on mscratch */
    TEST_CASE(20, a0, 0x0000f0f0, li t0, 0x0000f0f0; csrw mscratch, t0; csrr a0, mscratch)
    TEST_CASE(21, a0, 0x0000f0f0, li t0, 0x0f; csrrs a0, mscratch, t0)          /* returns old */
    TEST_CASE(22, a0, 0x0000f0ff, csrr a0, mscratch)
    TEST_CASE(23, a0, 0x0000f0f0, csrrci a0, mscratch, 0x0f; csrr a0, mscratch)
    TEST_CASE(24, a0, 0x0000f0f0, csrrwi a0, mscratch, 0x1f)
    TEST_CASE(25, a0, 0x1f, csrrsi a0, mscratch, 0; csrr a0, mscratch)
    TEST_CASE(26, a0, 0x1f, li t0, 0x10; csrrc a0, mscratch, t0)
    TEST_CASE(27, a0, 0x0f, csrr a0, mscratch)
    /* minstret: the first read sees the instructions before it; 1 csrr + 3 nops in between */
    TEST_CASE(30, a0, 4, csrr a1, minstret; nop; nop; nop; csrr a2, minstret; sub a0, a2, a1)
    TEST_CASE(31, a0, 4, rdinstret a1; nop; nop; nop; rdinstret a2; sub a0, a2, a1)
    /* fence.i makes a store into the instruction stream visible */
    TEST_CASE(40, a4, 1, la a0, smc_target; li t0, 0x00100713; sw t0, 0(a0); fence.i; jal smc_target)
    /* U mode: mret with MPP=U; privileged CSR access traps; ecall from U is cause 8. PMP entry 0 grants
       U-mode access to everything (QEMU refuses mret to U with no PMP rule; rviss stores PMP only). */
    li t0, -1; csrw pmpaddr0, t0
    li t0, 0x1f; csrw pmpcfg0, t0
    li t0, 0x1800; csrc mstatus, t0        /* MPP = U */
    la t0, 3f; csrw mepc, t0
    EXPECT_TRAP(4f)
    mret
3:  csrr a0, mstatus                        /* illegal in U-mode */
    j fail
4:  CHECK_TRAP(50, 2)
    TEST_CASE(51, s9, 0, la t0, 3b; sub s9, s9, t0)
    /* still in U after the trap? no: traps enter M; mstatus.MPP records U (0) */
    TEST_CASE(52, a0, 0, csrr a0, mstatus; li t0, 0x1800; and a0, a0, t0)
    li t0, 0x1800; csrc mstatus, t0
    la t0, 3f; csrw mepc, t0
    EXPECT_TRAP(4f)
    mret
3:  ecall
    j fail
4:  CHECK_TRAP(53, 8)
    /* vectored mtvec: machine software interrupt (CLINT msip) goes to base + 4*3 */
    la t0, vtable; ori t0, t0, 1; csrw mtvec, t0
    li t0, 8; csrw mie, t0                  /* MSIE */
    li s10, 0
    li a0, CLINT_MSIP; li t0, 1; sw t0, 0(a0)
    csrsi mstatus, 8                        /* MIE: the interrupt is taken here */
    nop
    TEST_CASE(60, s10, 0x80000003, nop)
    TEST_CASE(61, a0, 0, csrr a0, mip; andi a0, a0, 8)   /* handler cleared msip */
    /* timer: WFI with MIE=0 still wakes on a pending enabled interrupt (no trap) */
    la t0, trap_vector; csrw mtvec, t0
    li t0, 0x80; csrw mie, t0               /* MTIE */
    li a0, CLINT_MTIME; lw t1, 0(a0)
    li a1, CLINT_MTIMECMP; addi t1, t1, 50; sw t1, 0(a1); sw x0, 4(a1)
    wfi
    1: csrr a2, mip; andi a2, a2, 0x80; beqz a2, 1b
    TEST_CASE(70, a2, 0x80, nop)
    /* ... and with MIE=1 it traps with cause 0x80000007 */
    EXPECT_TRAP(1f); csrsi mstatus, 8; nop; j fail; 1:
    CHECK_TRAP(71, 0x80000007)
    li t0, -1; sw t0, 4(a1); sw t0, 0(a1)   /* mtimecmp = max clears MTIP */
    TEST_CASE(72, a2, 0, csrr a2, mip; andi a2, a2, 0x80)
    csrw mie, x0
    la t0, trap_vector; csrw mtvec, t0
    /* U-mode counter access needs mcounteren (last: QEMU's CPU also has S-mode and wants scounteren) */
    csrw mcounteren, x0
    li t0, 0x1800; csrc mstatus, t0
    la t0, 3f; csrw mepc, t0
    EXPECT_TRAP(4f)
    mret
3:  rdcycle a0
    j fail
4:  CHECK_TRAP(80, 2)
    li t0, 7; csrw mcounteren, t0
    li t0, 0x1800; csrc mstatus, t0
    la t0, 3f; csrw mepc, t0
    EXPECT_TRAP(4f)
    mret
3:  rdinstret a0
    ecall
    j fail
4:  CHECK_TRAP(81, 8)
TEST_END

    .text
    .align 2
    .option push
    .option norvc
smc_target:                                  /* patched to addi a4, x0, 1 by test 40 */
    addi a4, x0, 0
    ret
    .option pop
    .align 6
vtable:
    j fail                                   /* 0: exceptions */
    j fail
    j fail
    j msi_handler                            /* 3: machine software interrupt */
    j fail
    j fail
    j fail
    j fail
msi_handler:
    csrr s10, mcause
    li t0, CLINT_MSIP
    sw x0, 0(t0)
    csrci mstatus, 8
    li t0, 0x80; csrc mstatus, t0            /* keep MIE off after mret (MPIE=0) */
    mret
