/* SPDX-License-Identifier: MIT */
/* RV32F bit-exactness: rounding modes (incl. RMM ties), fflags (NX=1 UF=2 OF=4 DZ=8 NV=16), canonical
   NaN 0x7fc00000, single rounding of fused multiply-add, -0/+0 rules, conversions at the range limits.
   Bit patterns: 1.0=3f800000 1.5=3fc00000 2.0=40000000 2.5=40200000 0.5=3f000000 2^-24=33800000. */
#include "test_macros.h"
TEST_BEGIN
    FP_SETUP
    /* add/sub/mul/div/sqrt */
    TEST_FP_OP2(2, fadd.s, 0, 0x40800000, 0x3fc00000, 0x40200000)          /* 1.5+2.5=4 */
    /* 1 + 2^-24 is a tie between 1.0 and 1+2^-23 */
    TEST_FP_OP2_RM(3, fadd.s, rne, 1, 0x3f800000, 0x3f800000, 0x33800000)  /* to even */
    TEST_FP_OP2_RM(4, fadd.s, rmm, 1, 0x3f800001, 0x3f800000, 0x33800000)  /* away from zero */
    TEST_FP_OP2_RM(5, fadd.s, rup, 1, 0x3f800001, 0x3f800000, 0x33800000)
    TEST_FP_OP2_RM(6, fadd.s, rtz, 1, 0x3f800000, 0x3f800000, 0x33800000)
    TEST_FP_OP2_RM(7, fadd.s, rdn, 1, 0xbf800001, 0xbf800000, 0xb3800000)
    TEST_FP_OP2_RM(8, fadd.s, rmm, 1, 0xbf800001, 0xbf800000, 0xb3800000)
    TEST_FP_OP2_RM(9, fadd.s, rup, 1, 0xbf800000, 0xbf800000, 0xb3800000)
    TEST_FP_OP2_RM(10, fsub.s, rne, 0, 0x00000000, 0x3f800000, 0x3f800000) /* x-x = +0 ... */
    TEST_FP_OP2_RM(11, fsub.s, rdn, 0, 0x80000000, 0x3f800000, 0x3f800000) /* ... but -0 rounding down */
    TEST_FP_OP2(12, fmul.s, 0, 0x3fc00000, 0x40400000, 0x3f000000)         /* 3*0.5 */
    TEST_FP_OP2(13, fmul.s, 5, 0x7f800000, 0x7f7fffff, 0x40000000)         /* overflow: OF|NX, inf */
    TEST_FP_OP2_RM(14, fmul.s, rtz, 5, 0x7f7fffff, 0x7f7fffff, 0x40000000) /* RTZ overflow -> max */
    TEST_FP_OP2(15, fmul.s, 0, 0x00400000, 0x00800000, 0x3f000000)         /* exact subnormal: no UF */
    TEST_FP_OP2(16, fmul.s, 3, 0x00000000, 0x00000001, 0x3f000000)         /* 2^-150 -> 0: UF|NX */
    TEST_FP_OP2_RM(17, fmul.s, rmm, 3, 0x00000001, 0x00000001, 0x3f000000) /* tie away -> 2^-149 */
    TEST_FP_OP2(18, fdiv.s, 1, 0x3eaaaaab, 0x3f800000, 0x40400000)         /* 1/3 */
    TEST_FP_OP2_RM(19, fdiv.s, rtz, 1, 0x3eaaaaaa, 0x3f800000, 0x40400000)
    /* 5*2^-149 / 2 = 2.5*2^-149: a tie at subnormal precision (UF|NX) */
    TEST_FP_OP2_RM(26, fdiv.s, rne, 3, 0x00000002, 0x00000005, 0x40000000)
    TEST_FP_OP2_RM(27, fdiv.s, rmm, 3, 0x00000003, 0x00000005, 0x40000000)
    TEST_FP_OP2(20, fdiv.s, 8, 0x7f800000, 0x3f800000, 0x00000000)         /* 1/0: DZ */
    TEST_FP_OP2(21, fdiv.s, 16, 0x7fc00000, 0x00000000, 0x00000000)        /* 0/0: NV, canonical NaN */
    TEST_FP_OP1(22, fsqrt.s, 0, 0x40000000, 0x40800000)                    /* sqrt 4 */
    TEST_FP_OP1(23, fsqrt.s, 1, 0x3fb504f3, 0x40000000)                    /* sqrt 2 */
    TEST_FP_OP1(24, fsqrt.s, 16, 0x7fc00000, 0xbf800000)                   /* sqrt -1 */
    TEST_FP_OP1(25, fsqrt.s, 0, 0x80000000, 0x80000000)                    /* sqrt -0 = -0 */
    /* NaN propagation: any NaN result is the canonical NaN; sNaN operands raise NV */
    TEST_FP_OP2(30, fadd.s, 0, 0x7fc00000, 0x7fc12345, 0x3f800000)
    TEST_FP_OP2(31, fadd.s, 16, 0x7fc00000, 0x7f800001, 0x3f800000)
    TEST_FP_OP2(32, fsub.s, 16, 0x7fc00000, 0x7f800000, 0x7f800000)        /* inf - inf */
    TEST_FP_OP2(33, fmul.s, 16, 0x7fc00000, 0x7f800000, 0x00000000)        /* inf * 0 */
    /* fused multiply-add: one rounding. (1+2^-12)^2 - 1 = 2^-11 + 2^-24 exactly */
    TEST_FP_OP3(40, fmadd.s, 0, 0x3a000400, 0x3f800800, 0x3f800800, 0xbf800000)
    TEST_FP_OP3(41, fmadd.s, 0, 0x40200000, 0x3f800000, 0x40000000, 0x3f000000)   /* 1*2+0.5 */
    TEST_FP_OP3(42, fmsub.s, 0, 0x3fc00000, 0x3f800000, 0x40000000, 0x3f000000)   /* 1*2-0.5 */
    TEST_FP_OP3(43, fnmsub.s, 0, 0xbfc00000, 0x3f800000, 0x40000000, 0x3f000000)  /* -(1*2)+0.5 */
    TEST_FP_OP3(44, fnmadd.s, 0, 0xc0200000, 0x3f800000, 0x40000000, 0x3f000000)  /* -(1*2)-0.5 */
    TEST_FP_OP3(45, fmadd.s, 16, 0x7fc00000, 0x7f800000, 0x00000000, 0x7fc00000)  /* inf*0+qNaN: NV */
    TEST_FP_OP3(46, fmadd.s, 0, 0x7fc00000, 0x3f800000, 0x3f800000, 0x7fc00000)   /* qNaN addend: quiet */
    /* sign injection works on raw bits (NaN payloads kept) */
    TEST_FP_OP2(50, fsgnj.s, 0, 0xbf800000, 0x3f800000, 0xc0000000)
    TEST_FP_OP2(51, fsgnjn.s, 0, 0x3f800000, 0x3f800000, 0xc0000000)
    TEST_FP_OP2(52, fsgnjx.s, 0, 0x3f800000, 0xbf800000, 0xc0000000)
    TEST_FP_OP2(53, fsgnj.s, 0, 0xffc12345, 0x7fc12345, 0xbf800000)
    /* min/max: -0 < +0, a single NaN operand is ignored, sNaN raises NV */
    TEST_FP_OP2(60, fmin.s, 0, 0x80000000, 0x00000000, 0x80000000)
    TEST_FP_OP2(61, fmax.s, 0, 0x00000000, 0x80000000, 0x00000000)
    TEST_FP_OP2(62, fmin.s, 0, 0x3f800000, 0x7fc00000, 0x3f800000)
    TEST_FP_OP2(63, fmin.s, 16, 0x3f800000, 0x7f800001, 0x3f800000)
    TEST_FP_OP2(64, fmax.s, 0, 0x7fc00000, 0x7fc00000, 0x7fc12345)
    TEST_FP_OP2(65, fmax.s, 0, 0x40000000, 0x3f800000, 0x40000000)
    TEST_FP_OP2(66, fmin.s, 0, 0xbf800000, 0x3f800000, 0xbf800000)
    /* compares: feq is quiet (NV only for sNaN), flt/fle signal on any NaN */
    TEST_FP_INT_OP2(70, feq.s, 0, 1, 0x3f800000, 0x3f800000)
    TEST_FP_INT_OP2(71, feq.s, 0, 0, 0x7fc00000, 0x3f800000)
    TEST_FP_INT_OP2(72, feq.s, 16, 0, 0x7f800001, 0x3f800000)
    TEST_FP_INT_OP2(73, flt.s, 16, 0, 0x7fc00000, 0x3f800000)
    TEST_FP_INT_OP2(74, fle.s, 16, 0, 0x3f800000, 0x7fc00000)
    TEST_FP_INT_OP2(75, flt.s, 0, 0, 0x80000000, 0x00000000)               /* -0 < +0 is false */
    TEST_FP_INT_OP2(76, fle.s, 0, 1, 0x80000000, 0x00000000)
    TEST_FP_INT_OP2(77, flt.s, 0, 1, 0xbf800000, 0x3f800000)
    TEST_FP_INT_OP2(78, feq.s, 0, 1, 0x80000000, 0x00000000)               /* -0 == +0 */
    /* classify: one bit per class */
    TEST_FP_INT_OP1(80, fclass.s, 0, 0x001, 0xff800000)
    TEST_FP_INT_OP1(81, fclass.s, 0, 0x002, 0xbf800000)
    TEST_FP_INT_OP1(82, fclass.s, 0, 0x004, 0x80000001)
    TEST_FP_INT_OP1(83, fclass.s, 0, 0x008, 0x80000000)
    TEST_FP_INT_OP1(84, fclass.s, 0, 0x010, 0x00000000)
    TEST_FP_INT_OP1(85, fclass.s, 0, 0x020, 0x00000001)
    TEST_FP_INT_OP1(86, fclass.s, 0, 0x040, 0x3f800000)
    TEST_FP_INT_OP1(87, fclass.s, 0, 0x080, 0x7f800000)
    TEST_FP_INT_OP1(88, fclass.s, 0, 0x100, 0x7f800001)
    TEST_FP_INT_OP1(89, fclass.s, 0, 0x200, 0x7fc00000)
    /* float -> int: rounding, clamping with NV, NaN */
    TEST_FP_INT_OP1_RM(90, fcvt.w.s, rne, 1, 2, 0x3fc00000)                /* 1.5 -> 2 */
    TEST_FP_INT_OP1_RM(91, fcvt.w.s, rne, 1, 2, 0x40200000)                /* 2.5 -> 2 (even) */
    TEST_FP_INT_OP1_RM(92, fcvt.w.s, rmm, 1, 3, 0x40200000)                /* 2.5 -> 3 */
    TEST_FP_INT_OP1_RM(93, fcvt.w.s, rtz, 1, -1, 0xbfc00000)               /* -1.5 -> -1 */
    TEST_FP_INT_OP1_RM(94, fcvt.w.s, rdn, 1, -2, 0xbfc00000)
    TEST_FP_INT_OP1_RM(95, fcvt.w.s, rup, 1, 2, 0x3f8ccccd)                /* 1.1 -> 2 */
    TEST_FP_INT_OP1_RM(96, fcvt.w.s, rtz, 16, 0x7fffffff, 0x4f32d05e)      /* 3e9: NV, clamp */
    TEST_FP_INT_OP1_RM(97, fcvt.w.s, rtz, 16, 0x80000000, 0xff800000)      /* -inf */
    TEST_FP_INT_OP1_RM(98, fcvt.w.s, rtz, 16, 0x7fffffff, 0x7fc00000)      /* NaN -> max */
    TEST_FP_INT_OP1_RM(99, fcvt.w.s, rtz, 0, 0x80000000, 0xcf000000)       /* -2^31 exact */
    TEST_FP_INT_OP1_RM(100, fcvt.wu.s, rtz, 16, 0, 0xbf800000)             /* -1 -> 0, NV */
    TEST_FP_INT_OP1_RM(101, fcvt.wu.s, rtz, 1, 0, 0xbf000000)              /* -0.5 -> -0 -> 0, NX only */
    TEST_FP_INT_OP1_RM(102, fcvt.wu.s, rtz, 0, 0xb2d05e00, 0x4f32d05e)     /* 3e9 exact */
    TEST_FP_INT_OP1_RM(103, fcvt.wu.s, rtz, 16, 0xffffffff, 0x7f800000)
    TEST_FP_INT_OP1_RM(104, fcvt.wu.s, rtz, 16, 0xffffffff, 0x7fc00000)
    /* int -> float: 2^24+1 is a tie between 2^24 and 2^24+2 */
    TEST_INT_FP_OP1_RM(110, fcvt.s.w, rne, 1, 0x4b800000, 16777217)
    TEST_INT_FP_OP1_RM(111, fcvt.s.w, rmm, 1, 0x4b800001, 16777217)
    TEST_INT_FP_OP1_RM(112, fcvt.s.w, rup, 1, 0x4b800001, 16777217)
    TEST_INT_FP_OP1_RM(113, fcvt.s.w, rmm, 1, 0xcb800001, -16777217)
    TEST_INT_FP_OP1_RM(114, fcvt.s.w, rne, 0, 0xcf000000, 0x80000000)
    TEST_INT_FP_OP1_RM(115, fcvt.s.wu, rne, 1, 0x4f800000, 0xffffffff)
    TEST_INT_FP_OP1_RM(116, fcvt.s.wu, rtz, 1, 0x4f7fffff, 0xffffffff)
    /* moves keep NaN payloads; loads/stores move raw bits */
    TEST_CASE(120, a4, 0x7f800001, li t0, 0x7f800001; fmv.w.x fa0, t0; fmv.x.w a4, fa0)
    TEST_CASE(121, a4, 0x7f800001, la a0, fdat; fsw fa0, 0(a0); lw a4, 0(a0))
    TEST_CASE(122, a4, 0x12345678, la a0, fdat; li t0, 0x12345678; sw t0, 4(a0); flw fa1, 4(a0); fmv.x.w a4, fa1)
    /* fcsr: frm drives the dynamic rounding mode; fcsr = frm << 5 | fflags */
    TEST_CASE(130, a4, 0x3eaaaaaa, li t0, 0x3f800000; fmv.w.x fa1, t0; li t0, 0x40400000; fmv.w.x fa2, t0; \
              fsrmi 1; fdiv.s fa0, fa1, fa2, dyn; fmv.x.w a4, fa0)
    TEST_CASE(131, a4, 0x21, csrr a4, fcsr)                                /* frm=1, NX */
    TEST_CASE(132, a4, 0x1f, li t0, 0xff; csrw fcsr, t0; csrr a4, fflags; fsrmi 0)  /* fflags is 5 bits */
    /* reserved rounding modes trap: frm=5 with dyn, and static rm=5 */
    TEST_CASE(133, a4, 5, fsrmi 5; frrm a4)
    EXPECT_TRAP(1f); fadd.s fa0, fa1, fa2, dyn; j fail; 1:
    CHECK_TRAP(134, 2)
    fsrmi 0
    EXPECT_TRAP(1f); .insn r 0x53, 5, 0, fa0, fa1, fa2; j fail; 1:          /* fadd.s with rm=5 */
    CHECK_TRAP(135, 2)
    /* mstatus.FS = Off makes every F instruction (and fcsr) illegal */
    li t0, 0x6000; csrc mstatus, t0
    EXPECT_TRAP(1f); fadd.s fa0, fa1, fa2; j fail; 1:
    CHECK_TRAP(140, 2)
    EXPECT_TRAP(1f); csrr a4, fcsr; j fail; 1:
    CHECK_TRAP(141, 2)
    FP_SETUP
    /* any FP write marks FS dirty (3) and sets SD */
    TEST_CASE(142, a4, 0x80006000, fmv.w.x fa0, x0; csrr a4, mstatus; li t0, 0x80006000; and a4, a4, t0)
TEST_END
    .data
    .align 4
fdat: .word 0, 0
