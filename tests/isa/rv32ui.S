/* SPDX-License-Identifier: MIT */
/* RV32I: every base instruction, with sign/overflow/x0 edge cases. Expected values computed by hand. */
#include "test_macros.h"
TEST_BEGIN
    /* add/sub: wrap-around at 2^32 */
    TEST_RR(2, add, 0x00000003, 1, 2)
    TEST_RR(3, add, 0x80000000, 0x7fffffff, 1)
    TEST_RR(4, add, 0x00000000, 0xffffffff, 1)
    TEST_RR(5, sub, 0xffffffff, 0, 1)
    TEST_RR(6, sub, 0x7fffffff, 0x80000000, 1)
    TEST_RR_SRC1_EQ_DEST(7, add, 24, 13, 11)
    TEST_RR_ZERO_DEST(8, add, 5, 6)
    /* logic */
    TEST_RR(10, and, 0x0f000f00, 0xff00ff00, 0x0f0f0f0f)
    TEST_RR(11, or,  0xff0fff0f, 0xff00ff00, 0x0f0f0f0f)
    TEST_RR(12, xor, 0xf00ff00f, 0xff00ff00, 0x0f0f0f0f)
    TEST_IMM(13, andi, 0x00000700, 0xff00ff00, 0x70f)
    TEST_IMM(17, andi, 0xff00ff00, 0xff00ff0f, -16)  /* -16 sign-extends to 0xfffffff0 */
    TEST_IMM(14, ori,  0xffffff0f, 0x00ff0000, -241)     /* -241 = 0xffffff0f -> 0xffffff0f|0x00ff0000 */
    TEST_IMM(15, xori, 0x00ff08ff, 0x00ff0ff0, 0x70f)
    TEST_IMM(16, xori, 0xff00f00f, 0x00ff0ff0, -1)  /* xori -1 = not */
    /* shifts: only the low 5 bits of rs2 count */
    TEST_RR(20, sll, 0x80000000, 1, 31)
    TEST_RR(21, sll, 0x00000002, 1, 33)
    TEST_RR(22, srl, 0x00000001, 0x80000000, 31)
    TEST_RR(23, sra, 0xffffffff, 0x80000000, 31)
    TEST_RR(24, sra, 0xc0000000, 0x80000000, 1)
    TEST_RR(25, srl, 0x40000000, 0x80000000, 0xffffffe1) /* 0x...e1 & 31 = 1 */
    TEST_IMM(26, slli, 0x00000100, 1, 8)
    TEST_IMM(27, srli, 0x00ffffff, 0xffffffff, 8)
    TEST_IMM(28, srai, 0xffffffff, 0xffffff00, 8)
    TEST_IMM(29, srai, 0x007fffff, 0x7fffffff, 8)
    /* compares */
    TEST_RR(30, slt, 1, 0xffffffff, 0)
    TEST_RR(31, sltu, 0, 0xffffffff, 0)
    TEST_RR(32, slt, 0, 0x7fffffff, 0x80000000)
    TEST_RR(33, sltu, 1, 0x7fffffff, 0x80000000)
    TEST_IMM(34, slti, 1, 0x80000000, 0)
    TEST_IMM(35, sltiu, 1, 5, -1)          /* -1 sign-extends to 0xffffffff: unsigned compare */
    TEST_IMM(36, sltiu, 0, 0xffffffff, -1)
    TEST_IMM(37, slti, 0, 0, -2048)
    /* lui/auipc */
    TEST_CASE(40, a4, 0xfffff000, lui a4, 0xfffff)
    TEST_CASE(41, a4, 0x00001000, la a3, 1f; 1: auipc a4, 1; sub a4, a4, a3)
    /* addi boundaries */
    TEST_IMM(42, addi, 0x000007fe, -1, 2047)
    TEST_IMM(43, addi, 0xfffff7ff, -1, -2048)
    /* jal/jalr: link value and target */
    TEST_CASE(50, a4, 1, li a4, 0; jal ra, 1f; 3: li a4, 99; 1: la t0, 3b; bne ra, t0, 2f; li a4, 1; 2: nop)
    TEST_CASE(51, a4, 7, la t0, 3f; li a4, 0; jalr t1, 1(t0); li a4, 99; 3: li a4, 7)  /* bit 0 of target cleared */
    TEST_CASE(52, a4, 5, la t0, 4f; li a4, 5; jalr t0, 0(t0); li a4, 99; 4: nop)  /* rd == rs1 */
    /* branches: taken and not taken, signed vs unsigned */
    TEST_CASE(60, a4, 1, li a4, 0; li a1, -1; li a2, 1; blt a1, a2, 1f; j 2f; 1: li a4, 1; 2: nop)
    TEST_CASE(61, a4, 1, li a4, 0; li a1, -1; li a2, 1; bltu a2, a1, 1f; j 2f; 1: li a4, 1; 2: nop)
    TEST_CASE(62, a4, 1, li a4, 0; li a1, 5; li a2, 5; bge a1, a2, 1f; j 2f; 1: li a4, 1; 2: nop)
    TEST_CASE(63, a4, 1, li a4, 0; li a1, 1; li a2, -1; bgeu a2, a1, 1f; j 2f; 1: li a4, 1; 2: nop)
    TEST_CASE(64, a4, 1, li a4, 0; li a1, 3; li a2, 3; beq a1, a2, 1f; j 2f; 1: li a4, 1; 2: nop)
    TEST_CASE(65, a4, 1, li a4, 0; li a1, 3; li a2, 4; bne a1, a2, 1f; j 2f; 1: li a4, 1; 2: nop)
    TEST_CASE(66, a4, 0, li a4, 0; li a1, 3; li a2, 4; beq a1, a2, 1f; j 2f; 1: li a4, 1; 2: nop)
    TEST_CASE(67, a4, 0, li a4, 0; li a1, 1; li a2, -1; blt a1, a2, 1f; j 2f; 1: li a4, 1; 2: nop)
    TEST_CASE(68, a4, 0, li a4, 0; li a1, -1; li a2, 1; bge a1, a2, 1f; j 2f; 1: li a4, 1; 2: nop)
    TEST_CASE(69, a4, 0, li a4, 0; li a1, 1; li a2, -1; bgeu a1, a2, 1f; j 2f; 1: li a4, 1; 2: nop)
    /* loads: sign and zero extension; data below is little-endian */
    TEST_CASE(70, a4, 0xffffff80, la a1, tdat; lb a4, 0(a1))
    TEST_CASE(71, a4, 0x00000080, la a1, tdat; lbu a4, 0(a1))
    TEST_CASE(72, a4, 0xffff8180, la a1, tdat; lh a4, 0(a1))
    TEST_CASE(73, a4, 0x00008180, la a1, tdat; lhu a4, 0(a1))
    TEST_CASE(74, a4, 0x7f828180, la a1, tdat; lw a4, 0(a1))
    TEST_CASE(75, a4, 0x0000007f, la a1, tdat; lb a4, 3(a1))
    TEST_CASE(76, a4, 0x7f82, la a1, tdat + 4; lh a4, -2(a1))
    /* stores: byte lanes */
    TEST_CASE(80, a4, 0x7f8281aa, la a1, tdat; li a2, 0x123456aa; sb a2, 0(a1); lw a4, 0(a1))
    TEST_CASE(81, a4, 0xbeef81aa, la a1, tdat; li a2, 0xbeef; sh a2, 2(a1); lw a4, 0(a1))
    TEST_CASE(82, a4, 0xdeadbeef, la a1, tdat; li a2, 0xdeadbeef; sw a2, 4(a1); lw a4, 4(a1))
    TEST_CASE(83, a4, 0xbeef81aa, la a1, tdat + 8; li a2, 0x01020304; sw a2, -4(a1); lw a4, -8(a1))
    /* fence is a no-op for a single hart; x0 stays zero under every writer */
    TEST_CASE(90, x0, 0, fence; fence rw, rw; lui x0, 1; addi x0, x0, 5; la a1, tdat; lw x0, 0(a1))
TEST_END

    .data
    .align 4
tdat:
    .word 0x7f828180
    .word 0
    .word 0
