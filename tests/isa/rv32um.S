/* SPDX-License-Identifier: MIT */
/* RV32M: products, high halves, division/remainder incl. /0 and overflow (ISA manual table 7.1). */
#include "test_macros.h"
TEST_BEGIN
    TEST_RR(2, mul, 21, 3, 7)
    TEST_RR(3, mul, 0, 0x80000000, 2)
    TEST_RR(4, mul, 1, -1, -1)
    TEST_RR(5, mul, 0x23456780, 0x12345678, 0x10)
    TEST_RR(6, mulh, 0, -1, -1)                     /* (-1)*(-1) = 1: high word 0 */
    TEST_RR(7, mulh, 0x40000000, 0x80000000, 0x80000000) /* 2^62 */
    TEST_RR(8, mulh, 0xffffffff, -2, 3)             /* -6 */
    TEST_RR(9, mulhu, 0xfffffffe, 0xffffffff, 0xffffffff) /* 2^64 - 2^33 + 1 */
    TEST_RR(10, mulhu, 1, 0x80000000, 2)
    TEST_RR(11, mulhsu, 0xffffffff, -1, 0xffffffff)  /* -(2^32-1) = 0xffffffff_00000001 */
    TEST_RR(12, mulhsu, 0x80000000, 0x80000000, 0xffffffff) /* -2^63 + 2^31 */
    TEST_RR(13, mulhsu, 0, 1, 0xffffffff)
    TEST_RR(20, div, 3, 20, 6)
    TEST_RR(21, div, 0xfffffffd, -20, 6)            /* rounds toward zero */
    TEST_RR(22, div, 0xfffffffd, 20, -6)
    TEST_RR(23, div, 0xffffffff, 20, 0)             /* x / 0 = -1 */
    TEST_RR(24, div, 0x80000000, 0x80000000, -1)    /* overflow */
    TEST_RR(25, divu, 3, 20, 6)
    TEST_RR(26, divu, 0x2aaaaaa7, -20, 6)           /* 4294967276 / 6 = 715827879 */
    TEST_RR(27, divu, 0xffffffff, 20, 0)
    TEST_RR(30, rem, 2, 20, 6)
    TEST_RR(31, rem, 0xfffffffe, -20, 6)            /* sign follows the dividend */
    TEST_RR(32, rem, 2, 20, -6)
    TEST_RR(33, rem, 20, 20, 0)                     /* x % 0 = x */
    TEST_RR(34, rem, 0, 0x80000000, -1)
    TEST_RR(35, remu, 2, 20, 6)
    TEST_RR(36, remu, 2, -20, 6)                    /* 4294967276 - 6*715827879 */
    TEST_RR(37, remu, 0xffffffec, -20, 0)
    TEST_RR_SRC1_EQ_DEST(38, mul, 143, 13, 11)
    TEST_RR_ZERO_DEST(39, div, 5, 0)
TEST_END
