/* SPDX-License-Identifier: MIT */
/* RV32C (+ the RV32FC loads/stores): every compressed instruction, written with explicit c.* mnemonics so
   the assembler cannot pick 32-bit forms. */
#include "test_macros.h"
TEST_BEGIN
    FP_SETUP
    la sp, cstack + 256
    TEST_CASE(2, a4, 16, c.addi4spn a4, sp, 16; sub a4, a4, sp)
    TEST_CASE(3, a2, 0x12345678, la a0, cdat; li a1, 0x12345678; c.sw a1, 4(a0); c.lw a2, 4(a0))
    TEST_CASE(4, a4, 0xbadcafe, li a4, 0xbadcaff; c.addi a4, -1)
    TEST_CASE(5, a4, 0xffffffe0, c.li a4, -32)
    TEST_CASE(6, a4, 0xfffe1000, c.lui a4, 0xfffe1)
    TEST_CASE(7, a4, 0x0001f000, c.lui a4, 0x1f)
    TEST_CASE(8, a4, -64, mv t0, sp; c.addi16sp sp, -64; sub a4, sp, t0; c.addi16sp sp, 64)
    TEST_CASE(9, a4, 496, mv t0, sp; c.addi16sp sp, 496; sub a4, sp, t0; addi sp, sp, -496)
    TEST_CASE(10, a0, 0x0fffffff, li a0, 0xffffffff; c.srli a0, 4)
    TEST_CASE(11, a0, 0xffffffff, li a0, 0xf0000000; c.srai a0, 28)
    TEST_CASE(12, a0, 0x00000010, li a0, 0xff; c.andi a0, 0x10)
    TEST_CASE(13, a0, 0xfffffff0, li a0, 0xfffffff5; c.andi a0, -16)
    TEST_CASE(14, a0, 2, li a0, 5; li a1, 3; c.sub a0, a1)
    TEST_CASE(15, a0, 6, li a0, 5; li a1, 3; c.xor a0, a1)
    TEST_CASE(16, a0, 7, li a0, 5; li a1, 3; c.or a0, a1)
    TEST_CASE(17, a0, 1, li a0, 5; li a1, 3; c.and a0, a1)
    TEST_CASE(18, a4, 0x80000000, li a4, 1; c.slli a4, 31)
    TEST_CASE(19, a4, 77, li a5, 77; c.mv a4, a5)
    TEST_CASE(20, a4, 100, li a4, 23; li a5, 77; c.add a4, a5)
    TEST_CASE(21, a4, 0x5a5a5a5a, li a5, 0x5a5a5a5a; c.swsp a5, 12(sp); c.lwsp a4, 12(sp))
    /* jumps and branches */
    TEST_CASE(30, a4, 1, li a4, 0; c.j 1f; li a4, 99; 1: c.li a4, 1)
    TEST_CASE(31, a4, 2, li a4, 0; c.jal 1f; 3: li a4, 99; 1: la t0, 3b; bne ra, t0, fail; li a4, 2)
    TEST_CASE(32, a4, 1, li a4, 0; la a5, 1f; c.jr a5; li a4, 99; 1: li a4, 1)
    TEST_CASE(33, a4, 1, li a4, 0; la a5, 1f; c.jalr a5; 3: li a4, 99; 1: la t0, 3b; bne ra, t0, fail; li a4, 1)
    TEST_CASE(34, a4, 1, li a4, 0; li a0, 0; c.beqz a0, 1f; j 2f; 1: li a4, 1; 2: nop)
    TEST_CASE(35, a4, 0, li a4, 0; li a0, 1; c.beqz a0, 1f; j 2f; 1: li a4, 1; 2: nop)
    TEST_CASE(36, a4, 1, li a4, 0; li a0, -1; c.bnez a0, 1f; j 2f; 1: li a4, 1; 2: nop)
    TEST_CASE(37, a4, 0, li a4, 0; li a0, 0; c.bnez a0, 1f; j 2f; 1: li a4, 1; 2: nop)
    /* F loads/stores */
    TEST_CASE(40, a4, 0x3fc00000, la a0, cdat; li t0, 0x3fc00000; sw t0, 8(a0); c.flw fa0, 8(a0); c.fsw fa0, 12(a0); lw a4, 12(a0))
    TEST_CASE(41, a4, 0x40490fdb, li t0, 0x40490fdb; fmv.w.x fa1, t0; c.fswsp fa1, 16(sp); c.flwsp fa2, 16(sp); fmv.x.w a4, fa2)
    /* c.nop changes nothing */
    TEST_CASE(42, a4, 5, li a4, 5; c.nop)
    /* HINTs execute as no-ops (ISA manual Vol. I 16.7 table 16.3; arch-test C/clui-01): encoded with
       .2byte because the assembler refuses rd = x0. A trap fails the test (trap_vector, s8 = 0). */
    TEST_CASE(43, a4, 7, li a4, 7; .2byte 0x6005)        /* c.lui x0, 1 */
    TEST_CASE(44, a4, 7, li a4, 7; .2byte 0x707d)        /* c.lui x0, 0xfffff (nzimm = -1) */
    TEST_CASE(45, a4, 7, li a4, 7; .2byte 0x4015)        /* c.li x0, 5 */
    TEST_CASE(46, a4, 7, li a4, 7; .2byte 0x0005)        /* c.addi x0, 1 (c.nop with nzimm) */
    TEST_CASE(47, a4, 7, li a4, 7; .2byte 0x0701)        /* c.addi a4, 0 */
    TEST_CASE(48, a4, 7, li a4, 7; .2byte 0x803a)        /* c.mv x0, a4 */
    TEST_CASE(49, a4, 7, li a4, 7; .2byte 0x903a)        /* c.add x0, a4 */
    TEST_CASE(53, a4, 7, li a4, 7; .2byte 0x0006)        /* c.slli x0, 1 */
    TEST_CASE(54, a4, 7, li a4, 7; .2byte 0x0702)        /* c.slli a4, 0 */
    TEST_CASE(55, a4, 7, li a4, 7; .2byte 0x8381)        /* c.srli a5, 0 (a5 unchanged: a4 checked) */
    /* reserved: c.lui x0, 0 and c.lui a4, 0 stay illegal */
    EXPECT_TRAP(1f); .2byte 0x6001; j fail; 1:
    CHECK_TRAP(56, 2)
    EXPECT_TRAP(1f); .2byte 0x6701; j fail; 1:
    CHECK_TRAP(57, 2)
    /* c.ebreak: breakpoint (cause 3), mepc = its address */
    EXPECT_TRAP(1f); 3: c.ebreak; j fail; 1:
    CHECK_TRAP(50, 3)
    TEST_CASE(51, s9, 0, la t0, 3b; sub s9, s9, t0)
    /* the all-zero halfword is illegal (cause 2) */
    EXPECT_TRAP(1f); .2byte 0; j fail; 1:
    CHECK_TRAP(52, 2)
TEST_END
    .data
    .align 4
cdat: .word 0, 0, 0, 0
    .align 4
cstack: .fill 64, 4, 0
