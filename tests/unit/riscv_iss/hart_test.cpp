// SPDX-License-Identifier: MIT
// Hart behaviour the ISA suite cannot see or QEMU models differently: configurable misaligned access,
// WARL CSRs, the cycle model, WFI fast-forward, interrupt priority, debugger breakpoints/watchpoints.
#include <gtest/gtest.h>

#include "test_platform.h"

namespace iss {
namespace {
using test::kRamBase;
using test::Platform;

constexpr uint32_t kLuiX1Ram = 0x800000b7;      // lui x1, 0x80000
constexpr uint32_t kAddiX1X1_256 = 0x10008093;  // addi x1, x1, 0x100
constexpr uint32_t kNop = 0x00000013;           // addi x0, x0, 0
constexpr uint32_t kJSelf = 0x0000006f;         // jal x0, 0

TEST(Hart, MisalignedLoadTrapsWithCauseAndTval) {
    Platform p;
    // lui x1, 0x80000; lw x2, 1(x1) = 0x0010a103 (imm 1, rs1 x1, funct3 2, rd x2)
    p.load({kLuiX1Ram, 0x0010a103, kJSelf});
    p.hart.mtvec_ = kRamBase + 8;  // the jal-self: a valid handler address
    p.hart.run(2);
    EXPECT_EQ(p.hart.mcause_, cause::kLoadMisaligned);
    EXPECT_EQ(p.hart.mtval_, kRamBase + 1);
    EXPECT_EQ(p.hart.mepc_, kRamBase + 4);
    EXPECT_EQ(p.hart.pc_, kRamBase + 8);
    EXPECT_EQ(p.hart.instret_, 1u);  // the faulting load does not retire
}

TEST(Hart, MisalignedLoadIsEmulatedWhenConfigured) {
    Platform p(test::test_preset(/*misaligned_trap=*/false));
    p.load({kLuiX1Ram, 0x0010a103, kJSelf});
    // Bytes at 0x80000001..4 are the upper three bytes of the lui word (b7 00 00 80 -> 00 00 80) and the
    // first byte of the lw word (03): little-endian 0x03800000.
    p.hart.run(2);
    EXPECT_EQ(p.hart.x_[2], 0x03800000u);
    EXPECT_EQ(p.hart.pc_, kRamBase + 8);
}

TEST(Hart, WarlCsrs) {
    Platform p;
    uint32_t v = 0;
    ASSERT_TRUE(p.hart.csr_read(csr::kMisa, v));
    EXPECT_EQ(v, 0x40101125u);  // MXL=1 | U(20) | M(12) | I(8) | F(5) | C(2) | A(0)
    ASSERT_TRUE(p.hart.csr_write(csr::kMepc, 3));
    ASSERT_TRUE(p.hart.csr_read(csr::kMepc, v));
    EXPECT_EQ(v, 2u);                                        // bit 0 of mepc is always zero
    ASSERT_TRUE(p.hart.csr_write(csr::kMstatus, 1u << 11));  // MPP = S (not implemented)
    ASSERT_TRUE(p.hart.csr_read(csr::kMstatus, v));
    EXPECT_EQ(v & csr::kMstatusMpp, 0u);               // reads back as U
    EXPECT_FALSE(p.hart.csr_read(0x7c0, v));           // unimplemented custom CSR
    EXPECT_FALSE(p.hart.csr_write(csr::kMhartid, 1));  // read-only
    ASSERT_TRUE(p.hart.csr_write(csr::kMtvec, 0x80000003u));
    ASSERT_TRUE(p.hart.csr_read(csr::kMtvec, v));
    EXPECT_EQ(v, 0x80000001u);  // reserved mode 3 is not kept
}

TEST(Hart, CycleModelLoadUseAndBranches) {
    // lui x1; addi x1,x1,0x100; lw x2,0(x1) (0x0000a103); add x3,x2,x2 (0x002101b3) -> load-use +1
    Platform dep;
    dep.load({kLuiX1Ram, kAddiX1X1_256, 0x0000a103, 0x002101b3, kJSelf});
    dep.hart.run(4);
    EXPECT_EQ(dep.hart.cycles_, 1u + 1u + 1u + (1u + 1u));  // alu, alu, load, alu + load-use stall
    // Same, but add x3,x1,x1 (0x001081b3) does not read the loaded register: no stall
    Platform indep;
    indep.load({kLuiX1Ram, kAddiX1X1_256, 0x0000a103, 0x001081b3, kJSelf});
    indep.hart.run(4);
    EXPECT_EQ(indep.hart.cycles_, 4u);
    // beq x0,x0,+8 (0x00000463) is taken: 3 cycles; bne x0,x0,+8 (0x00001463) falls through: 1 cycle
    Platform br;
    br.load({0x00000463, kNop, 0x00001463, kJSelf});
    br.hart.run(2);
    EXPECT_EQ(br.hart.cycles_, 3u + 1u);
    EXPECT_EQ(br.hart.pc_, kRamBase + 12);
    // div x3,x1,x0 (0x0200c1b3): division by zero costs div_by_zero (35)
    Platform dv;
    dv.load({0x0200c1b3, kJSelf});
    dv.hart.run(1);
    EXPECT_EQ(dv.hart.cycles_, 35u);
    EXPECT_EQ(dv.hart.x_[3], 0xffffffffu);
}

TEST(Hart, WfiFastForwardsToTheTimerEvent) {
    Platform p;
    // lui x1,0x2004 (0x020040b7); addi x2,x0,100 (0x06400113); sw x2,0(x1) (0x0020a023);
    // sw x0,4(x1) (0x0000a223): mtimecmp = 100 ticks.
    // addi x3,x0,0x80 (0x08000193); csrw mie,x3 (0x30419073); wfi (0x10500073); j .
    p.load({0x020040b7, 0x06400113, 0x0020a023, 0x0000a223, 0x08000193, 0x30419073, 0x10500073, kJSelf});
    p.hart.run(7);
    // mtime = cycles / mtime_divider (100): the timer fires at cycle 100 * 100 = 10000, and WFI jumps there.
    EXPECT_GE(p.hart.cycles_, 10000u);
    EXPECT_LT(p.hart.cycles_, 10000u + 10u);
    EXPECT_EQ(p.hart.pc_, kRamBase + 28);
    uint32_t mip = 0;
    ASSERT_TRUE(p.hart.csr_read(csr::kMip, mip));
    EXPECT_EQ(mip & csr::kMtip, csr::kMtip);
}

TEST(Hart, WfiWithNothingToWaitForStops) {
    Platform p;
    p.load({0x10500073, kJSelf});
    EXPECT_EQ(p.hart.run(10), StopReason::kWfi);
}

TEST(Hart, LocalInterruptLinesBeatStandardOnes) {
    Platform p;
    p.load({kNop, kNop, kJSelf});
    p.hart.mtvec_ = kRamBase + 8;
    p.hart.mie_ = csr::kMeip | (1u << 17);
    p.hart.mstatus_ |= csr::kMstatusMie;
    p.hart.set_irq_line(cause::kMachineExtIrq, true);
    p.hart.set_irq_line(17, true);
    p.hart.run(1);
    EXPECT_EQ(p.hart.mcause_, cause::kInterrupt | 17u);
    EXPECT_EQ(p.hart.mepc_, kRamBase);
    EXPECT_EQ(p.hart.mstatus_ & csr::kMstatusMie, 0u);
    EXPECT_EQ(p.hart.mstatus_ & csr::kMstatusMpie, csr::kMstatusMpie);
}

TEST(Hart, BreakpointStopsBeforeTheInstructionAndResumes) {
    Platform p;
    // addi x5,x5,1 (0x00128293) three times
    p.load({0x00128293, 0x00128293, 0x00128293, kJSelf});
    p.hart.add_breakpoint(kRamBase + 4);
    EXPECT_EQ(p.hart.run(100), StopReason::kBreakpoint);
    EXPECT_EQ(p.hart.pc_, kRamBase + 4);
    EXPECT_EQ(p.hart.x_[5], 1u);
    EXPECT_EQ(p.hart.instret_, 1u);
    EXPECT_EQ(p.hart.run(2), StopReason::kInsnLimit);  // steps over the breakpoint
    EXPECT_EQ(p.hart.x_[5], 3u);
}

TEST(Hart, WriteWatchpointReportsTheAddress) {
    Platform p;
    // lui x1; addi x1,x1,0x100; sw x1,8(x1) (0x0010a423); j .
    p.load({kLuiX1Ram, kAddiX1X1_256, 0x0010a423, kJSelf});
    p.hart.add_watchpoint(kRamBase + 0x108, 4, Hart::WatchKind::kWrite);
    EXPECT_EQ(p.hart.run(100), StopReason::kWatchpoint);
    EXPECT_EQ(p.hart.watch_hit_addr(), kRamBase + 0x108);
    EXPECT_EQ(p.hart.pc_, kRamBase + 8);  // stopped before the store (GDB steps over it itself)
    EXPECT_EQ(p.word(kRamBase + 0x108), 0u);
    p.hart.remove_watchpoint(kRamBase + 0x108, 4, Hart::WatchKind::kWrite);
    p.hart.run(1);
    EXPECT_EQ(p.word(kRamBase + 0x108), kRamBase + 0x100);
}

TEST(Hart, UnhandledIllegalInstructionIsFatalWithContext) {
    Platform p;
    p.load({kNop, 0xfe000033});  // funct7 0x7f on OP: no such instruction
    EXPECT_EQ(p.hart.run(10), StopReason::kFatal);
    EXPECT_EQ(p.hart.fatal_kind(), FatalKind::kIllegalInsn);
    EXPECT_NE(p.hart.stop_message().find("0xfe000033"), std::string::npos);
    EXPECT_NE(p.hart.stop_message().find("0x80000004"), std::string::npos);
}

TEST(Hart, WildJumpIsFatalAndNamesTheSource) {
    Platform p;
    // lui x1, 0x10 (0x000100b7); jalr x0, 0(x1) (0x00008067): jump to 0x10000, unmapped
    p.load({0x000100b7, 0x00008067});
    EXPECT_EQ(p.hart.run(10), StopReason::kFatal);
    EXPECT_EQ(p.hart.fatal_kind(), FatalKind::kWildJump);
    EXPECT_NE(p.hart.stop_message().find("0x00010000"), std::string::npos);
    EXPECT_NE(p.hart.stop_message().find("0x80000004"), std::string::npos);
}

TEST(Hart, FenceIMakesStoredCodeVisible) {
    Platform p;
    // lui x1; li x2, 0x00500293 (addi x5,x0,5) via lui x2,0x500 (0x00500137) + addi x2,x2,0x293 (0x29310113);
    // sw x2, 20(x1) (0x0020aa23); fence.i (0x0000100f); [20:] addi x5,x0,1 (0x00100293) -> patched to 5
    p.load({kLuiX1Ram, 0x00500137, 0x29310113, 0x0020aa23, 0x0000100f, 0x00100293, kJSelf});
    p.hart.run(6);
    EXPECT_EQ(p.hart.x_[5], 5u);
}

}  // namespace
}  // namespace iss
