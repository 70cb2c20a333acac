// SPDX-License-Identifier: MIT
// Issue 22 behaviour on both engines (step and block): misaligned accesses as CV32E40P performs them
// (openhwgroup/cv32e40p load_store_unit.rst: one bus transaction inside a word, two when crossing, pipeline.rst:
// one extra cycle), Sdtrig hardware breakpoints for the debugger, the attempted-instruction budget that
// bounds trap storms. Each expectation is hand-derived from those documents and the cycle table.
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

class EngineTest : public ::testing::TestWithParam<Engine> {};

CorePreset preset_with(bool misaligned_trap, uint32_t triggers = 0, bool debugger_only = false) {
    CorePreset p = test::test_preset(misaligned_trap);
    p.isa.triggers.count = triggers;
    p.isa.triggers.execute = p.isa.triggers.load = p.isa.triggers.store = true;
    p.isa.triggers.debugger_only = debugger_only;
    return p;
}

TEST_P(EngineTest, MisalignedAccessCostsOneCycleMoreOnlyWhenItCrossesAWord) {
    // lui x1; addi x1,x1,0x100 (x1 = 0x80000100, 1 + 1 cycles), one access (1 cycle) + the penalty (1)
    // when it needs a second bus transaction, then j . (2 cycles).
    struct Case {
        uint32_t insn;
        uint64_t cycles;
    } cases[] = {
        {0x0010a103, 6},  // lw x2, 1(x1): bytes 1..4 cross into the next word
        {0x00109103, 5},  // lh x2, 1(x1): bytes 1..2 stay in the word
        {0x00309103, 6},  // lh x2, 3(x1): bytes 3..4 cross
        {0x0020a123, 6},  // sw x2, 2(x1): crosses
        {0x00109123, 5},  // sh x1, 2(x1): bytes 2..3 stay in the word
    };
    for (const Case& c : cases) {
        Platform p(preset_with(/*misaligned_trap=*/false));
        p.hart.set_engine(GetParam());
        p.load({kLuiX1Ram, kAddiX1X1_256, c.insn, kJSelf, kJSelf});
        EXPECT_EQ(p.hart.run(4), StopReason::kInsnLimit);
        EXPECT_EQ(p.hart.cycles_, c.cycles) << std::hex << c.insn;
        EXPECT_EQ(p.hart.instret_, 4u);
    }
}

TEST_P(EngineTest, MisalignedLoadAssemblesBothTransactions) {
    Platform p(preset_with(false));
    p.hart.set_engine(GetParam());
    // lui x1; addi x1,x1,0x100; lw x2, 3(x1) (0x0030a103); j .   data at 0x80000100: 00 11 22 33 44 55 ..
    p.load({kLuiX1Ram, kAddiX1X1_256, 0x0030a103, kJSelf});
    p.load({0x33221100, 0x77665544}, kRamBase + 0x100);
    p.hart.run(3);
    EXPECT_EQ(p.hart.x_[2], 0x66554433u);
}

TEST_P(EngineTest, HardwareBreakpointUsesTheTriggerAndStopsBeforeTheInstruction) {
    Platform p(preset_with(true, /*triggers=*/1, /*debugger_only=*/true));
    p.hart.set_engine(GetParam());
    p.load({0x00128293, 0x00128293, 0x00128293, kJSelf});  // addi x5, x5, 1 three times
    ASSERT_TRUE(p.hart.add_hw_breakpoint(kRamBase + 8));
    EXPECT_FALSE(p.hart.add_hw_breakpoint(kRamBase + 4));  // the core has one trigger
    uint32_t tdata1 = 0;
    ASSERT_TRUE(p.hart.csr_read(csr::kTdata1, tdata1));
    EXPECT_EQ(tdata1, 0x2800104cu);  // type 2, dmode, action 1, m, u, execute
    // M-mode cannot take the debugger's trigger (dmode = 1): the write is ignored.
    ASSERT_TRUE(p.hart.csr_write(csr::kTdata1, 0x20000044u));
    ASSERT_TRUE(p.hart.csr_read(csr::kTdata1, tdata1));
    EXPECT_EQ(tdata1, 0x2800104cu);
    EXPECT_EQ(p.hart.run(100), StopReason::kBreakpoint);
    EXPECT_EQ(p.hart.pc_, kRamBase + 8);
    EXPECT_EQ(p.hart.x_[5], 2u);
    EXPECT_EQ(p.hart.instret_, 2u);
    EXPECT_EQ(p.hart.run(1), StopReason::kInsnLimit);  // resumes over it
    EXPECT_EQ(p.hart.x_[5], 3u);
    ASSERT_TRUE(p.hart.remove_hw_breakpoint(kRamBase + 8));
    ASSERT_TRUE(p.hart.add_hw_breakpoint(kRamBase + 4));  // free again
}

TEST_P(EngineTest, TrapStormUsesTheBudget) {
    Platform p;
    p.hart.set_engine(GetParam());
    // mtvec points at an illegal instruction: every attempt traps back to it, nothing retires.
    p.load({0x00000000, kJSelf});
    p.hart.mtvec_ = kRamBase;
    EXPECT_EQ(p.hart.run(1000), StopReason::kInsnLimit);
    EXPECT_EQ(p.hart.instret_, 0u);
    EXPECT_EQ(p.hart.executed_, 1000u);
    EXPECT_EQ(p.hart.mcause_, cause::kIllegalInsn);
}

TEST_P(EngineTest, CodeWrittenByTheDebuggerIsRetranslated) {
    Platform p;
    p.hart.set_engine(GetParam());
    p.load({0x00128293, 0x00128293, 0x0000006f});  // addi x5,x5,1 twice; j .
    p.hart.run(10);
    EXPECT_EQ(p.hart.x_[5], 2u);
    const uint32_t add2 = 0x00228293;  // addi x5, x5, 2
    ASSERT_TRUE(p.hart.debug_write(kRamBase + 4, 4, reinterpret_cast<const uint8_t*>(&add2)));
    p.hart.x_[5] = 0;
    p.hart.pc_ = kRamBase;
    p.hart.run(2);
    EXPECT_EQ(p.hart.x_[5], 3u);
}

INSTANTIATE_TEST_SUITE_P(Engines, EngineTest, ::testing::Values(Engine::kStep, Engine::kBlocks),
                         [](const ::testing::TestParamInfo<Engine>& i) {
                             return i.param == Engine::kStep ? std::string("Step") : std::string("Blocks");
                         });

}  // namespace
}  // namespace iss
