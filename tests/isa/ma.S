/* SPDX-License-Identifier: MIT */
/* Misaligned loads and stores, every width and offset, crossing a word or not (riscv-tests ma_data /
   rv32mi-p-ma_addr and arch-test misalign-*, issue 22). Built twice: MA_EMULATE for presets whose core
   performs them (cv32e40p: openhwgroup/cv32e40p load_store_unit.rst), MA_TRAP for presets whose core
   raises address-misaligned (cause 4 / 6, mtval = the address, no register or memory change). AMOs and
   LR/SC always trap (cause 6 / 4). Self-checking; the data block is 0x00 0x11 0x22 ... 0xff. */
#include "test_macros.h"

#ifdef MA_EMULATE
/* the access works: check the value */
#define MA_LOAD(n, insn, off, expected)                                  \
    li TESTNUM, n; li a4, 0x5555; insn a4, off(s0); li t6, expected; bne a4, t6, fail;
#else
/* it traps with the address in mtval and a4 unchanged */
#define MA_LOAD(n, insn, off, expected)                                  \
    li TESTNUM, n; li a4, 0x5555; EXPECT_TRAP(10f); insn a4, off(s0); j fail; \
10: li t6, 4; bne s10, t6, fail; addi t6, s0, off; bne s11, t6, fail;   \
    li t6, 0x5555; bne a4, t6, fail;
#endif

TEST_BEGIN
    la s0, mdat
    MA_LOAD(2, lh, 1, 0x00002211)
    MA_LOAD(3, lhu, 1, 0x00002211)
    MA_LOAD(4, lh, 3, 0x00004433)            /* crosses into the next word */
    MA_LOAD(5, lh, 0xd, 0xffffeedd)          /* sign extension */
    MA_LOAD(6, lhu, 0xf, 0x000010ff)         /* crosses */
    MA_LOAD(7, lw, 1, 0x44332211)
    MA_LOAD(8, lw, 2, 0x55443322)
    MA_LOAD(9, lw, 3, 0x66554433)
    MA_LOAD(10, lw, 0xd, 0x10ffeedd)
    /* stores: write, then read back bytewise (emulate) or check nothing changed (trap) */
    li TESTNUM, 20
    la s1, sdat
    li t0, 0xa1b2c3d4
#ifdef MA_EMULATE
    sw t0, 1(s1)
    lbu t1, 0(s1); li t6, 0x00; bne t1, t6, fail
    lbu t1, 1(s1); li t6, 0xd4; bne t1, t6, fail
    lbu t1, 2(s1); li t6, 0xc3; bne t1, t6, fail
    lbu t1, 3(s1); li t6, 0xb2; bne t1, t6, fail
    lbu t1, 4(s1); li t6, 0xa1; bne t1, t6, fail
    lbu t1, 5(s1); li t6, 0x00; bne t1, t6, fail
    li TESTNUM, 21
    sh t0, 7(s1)                             /* crosses */
    lbu t1, 7(s1); li t6, 0xd4; bne t1, t6, fail
    lbu t1, 8(s1); li t6, 0xc3; bne t1, t6, fail
    lbu t1, 9(s1); li t6, 0x00; bne t1, t6, fail
    li TESTNUM, 22
    sh t0, 13(s1)                            /* does not cross */
    lhu t1, 12(s1); li t6, 0xd400; bne t1, t6, fail
    lbu t1, 14(s1); li t6, 0xc3; bne t1, t6, fail
    li TESTNUM, 23
    li t0, 0x2000; csrs mstatus, t0          /* FS = Initial */
    li t0, 0x3f800000; fmv.w.x fa0, t0
    fsw fa0, 17(s1)
    flw fa1, 17(s1)
    fmv.x.w t1, fa1; li t6, 0x3f800000; bne t1, t6, fail
#else
    EXPECT_TRAP(1f); sw t0, 1(s1); j fail
1:  li t6, 6; bne s10, t6, fail
    addi t6, s1, 1; bne s11, t6, fail
    li TESTNUM, 21
    EXPECT_TRAP(1f); sh t0, 7(s1); j fail
1:  li t6, 6; bne s10, t6, fail
    lw t1, 0(s1); bnez t1, fail
    lw t1, 4(s1); bnez t1, fail
    lw t1, 8(s1); bnez t1, fail
#endif
    /* atomics never emulate: AMO and SC -> store/AMO misaligned (6), LR -> load misaligned (4) */
    li TESTNUM, 30
    addi a0, s1, 2
    EXPECT_TRAP(1f); amoadd.w a1, t0, (a0); j fail
1:  li t6, 6; bne s10, t6, fail
    bne s11, a0, fail
    li TESTNUM, 31
    EXPECT_TRAP(1f); lr.w a1, (a0); j fail
1:  li t6, 4; bne s10, t6, fail
    li TESTNUM, 32
    EXPECT_TRAP(1f); sc.w a1, t0, (a0); j fail
1:  li t6, 6; bne s10, t6, fail
TEST_END
    .data
    .align 4
mdat: .byte 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff
      .byte 0x10, 0x0f, 0x0e, 0x0d
    .align 4
sdat: .fill 8, 4, 0
