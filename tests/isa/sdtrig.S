/* SPDX-License-Identifier: MIT */
/* Sdtrig trigger CSRs (issue 22; riscv-tests rv32mi-p-breakpoint): tselect, tdata1-3, tinfo, for the
   three trigger configurations of the presets, chosen at build time:
     TRIG_NONE      no trigger (ws63, 3066h): tdata1 reads type 0, tinfo = 1, writes are ignored
     TRIG_DEBUGGER  one execute trigger owned by the debugger (cv32e40p: tdata1.dmode hardwired to 1,
                    openhwgroup/cv32e40p debug.rst): M-mode reads type 2 / dmode 1, its writes are ignored
     TRIG_MMODE     two mcontrol triggers matching execute/load/store usable from M-mode (test preset):
                    breakpoint exceptions before the instruction / access, mtval = its address, WARL fields
   Self-checking. */
#include "test_macros.h"
#define MC_TYPE2   0x20000000
#define MC_DMODE   0x08000000
#define MC_M       0x40
#define MC_U       0x08
#define MC_X       0x04
#define MC_S       0x02
#define MC_L       0x01
#define MATCH_GE   (2 << 7)
#define MATCH_LT   (3 << 7)
TEST_BEGIN
#if defined(TRIG_NONE)
    TEST_CASE(2, a0, 0, li t0, 1; csrw tselect, t0; csrr a0, tselect)
    TEST_CASE(3, a0, 0, csrr a0, tdata1)
    TEST_CASE(4, a0, 1, csrr a0, tinfo)
    TEST_CASE(5, a0, 0, li t0, MC_TYPE2 | MC_M | MC_X; csrw tdata1, t0; csrr a0, tdata1)
    TEST_CASE(6, a0, 0, li t0, 0x1234; csrw tdata2, t0; csrr a0, tdata2)
#elif defined(TRIG_DEBUGGER)
    TEST_CASE(2, a0, 0, li t0, 1; csrw tselect, t0; csrr a0, tselect)   /* one trigger: stays 0 */
    TEST_CASE(3, a0, MC_TYPE2 | MC_DMODE, csrr a0, tdata1)
    TEST_CASE(4, a0, 4, csrr a0, tinfo)                                  /* mcontrol only */
    TEST_CASE(5, a0, MC_TYPE2 | MC_DMODE, li t0, MC_TYPE2 | MC_M | MC_X; csrw tdata1, t0; csrr a0, tdata1)
    TEST_CASE(6, a0, 0, la t0, pass; csrw tdata2, t0; csrr a0, tdata2)
    TEST_CASE(7, a0, 0, csrr a0, tdata3)
#elif defined(TRIG_MMODE)
    TEST_CASE(2, a0, 1, li t0, 1; csrw tselect, t0; csrr a0, tselect)
    TEST_CASE(3, a0, 1, li t0, 2; csrw tselect, t0; csrr a0, tselect)   /* no trigger 2: stays 1 */
    csrw tselect, zero
    TEST_CASE(5, a0, MC_TYPE2, csrr a0, tdata1)
    /* execute trigger on the instruction at 1f: breakpoint exception before it executes */
    li TESTNUM, 10
    la a2, 1f
    csrw tdata2, a2
    li t0, MC_TYPE2 | MC_M | MC_X; csrw tdata1, t0
    li a3, 0
    EXPECT_TRAP(2f)
1:  li a3, 1                                 /* must not execute */
    j fail
2:  CHECK_TRAP(11, 3)
    TEST_CASE(12, s9, 0, sub s9, s9, a2)     /* mepc = the instruction */
    sub s11, s11, a2; la t0, mtvals; sw s11, 0(t0)   /* mtval - address: checked at the end */
    TEST_CASE(14, a3, 0, nop)
    /* a U-only trigger does not fire in M-mode; with M set it fires at the function's entry */
    li TESTNUM, 15
    la a2, utrig_fn
    csrw tdata2, a2
    li t0, MC_TYPE2 | MC_U | MC_X; csrw tdata1, t0
    li a3, 0
    call utrig_fn
    li t6, 5; bne a3, t6, fail
    li TESTNUM, 16
    li t0, MC_TYPE2 | MC_M | MC_X; csrw tdata1, t0
    EXPECT_TRAP(1f); call utrig_fn; j fail
1:  CHECK_TRAP(17, 3)
    TEST_CASE(18, s9, 0, sub s9, s9, a2)
    /* load trigger: the load does not happen, mtval = the load address */
    li TESTNUM, 20
    la a2, data1
    csrw tdata2, a2
    li t0, MC_TYPE2 | MC_M | MC_L; csrw tdata1, t0
    li a4, 77
    EXPECT_TRAP(1f); lw a4, 0(a2); j fail
1:  CHECK_TRAP(21, 3)
    sub s11, s11, a2; la t0, mtvals; sw s11, 4(t0)
    TEST_CASE(23, a4, 77, nop)
    TEST_CASE(24, a4, 0, sw zero, 0(a2); lw a4, 4(a2))                   /* stores and other words are fine */
    /* store trigger: memory unchanged */
    li TESTNUM, 30
    li t0, MC_TYPE2 | MC_M | MC_S; csrw tdata1, t0
    li t1, 0x1234
    EXPECT_TRAP(1f); sw t1, 0(a2); j fail
1:  CHECK_TRAP(31, 3)
    TEST_CASE(32, a4, 0, lw a4, 0(a2))
    /* second trigger: a load range (match >=) on data2.. while trigger 0 still watches stores to data1 */
    li TESTNUM, 40
    li t0, 1; csrw tselect, t0
    la a3, data2
    csrw tdata2, a3
    li t0, MC_TYPE2 | MC_M | MC_L | MATCH_GE; csrw tdata1, t0
    EXPECT_TRAP(1f); lw a4, 8(a3); j fail                            /* above data2: fires */
1:  CHECK_TRAP(41, 3)
    sub s11, s11, a3; la t0, mtvals; sw s11, 8(t0)
    TEST_CASE(43, a4, 0x5a, lw a4, -4(a3))                              /* below: no trigger */
    li TESTNUM, 44
    EXPECT_TRAP(1f); sw t1, 0(a2); j fail                             /* trigger 0 still armed */
1:  CHECK_TRAP(45, 3)
    /* disarm both; everything runs normally again */
    csrw tdata1, zero
    csrw tselect, zero
    csrw tdata1, zero
    TEST_CASE(50, a4, 0x1234, sw t1, 0(a2); lw a4, 0(a2))
    /* Last, so QEMU checks the behaviour above: mtval = the address of the instruction or access (the
       Privileged spec allows 0 or the address; QEMU writes 0), and the fields this core keeps (QEMU's
       trigger module has more). */
    TEST_CASE(62, a0, 0, la t0, mtvals; lw a0, 0(t0))
    TEST_CASE(63, a0, 0, la t0, mtvals; lw a0, 4(t0))
    TEST_CASE(64, a0, 8, la t0, mtvals; lw a0, 8(t0))
    TEST_CASE(60, a0, 4, csrr a0, tinfo)
    /* WARL: dmode, action 1 (needs dmode), match 1 (unsupported), hit/select/timing are not kept */
    TEST_CASE(61, a0, MC_TYPE2 | MC_M | MC_X, li t0, 0xf81f1044 | MC_DMODE | (1 << 7); csrw tdata1, t0; csrr a0, tdata1)
    csrw tdata1, zero
#else
#error "define TRIG_NONE, TRIG_DEBUGGER or TRIG_MMODE"
#endif
TEST_END

    .text
utrig_fn:
    .option push
    .option norvc
    li a3, 5                                 /* the U-only trigger must not stop this */
    .option pop
    ret
    .data
    .align 4
data1: .word 0, 0
    .word 0x5a
data2: .word 0, 0, 0, 0
mtvals: .word -1, -1, -1
