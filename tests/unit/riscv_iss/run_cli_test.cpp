// SPDX-License-Identifier: MIT
// run_cli end to end on hand-built ELF files: exit codes for guest exit, bad ELF, illegal instruction,
// wild jump and runaway loops (issue 7 acceptance 5), and the MMIO console.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

#include "riscv_iss/run.h"

namespace iss {
namespace {

/// Minimal ELF32 RISC-V executable: ELF header (52 bytes), one PT_LOAD program header (32 bytes), code.
std::string make_elf(const std::vector<uint32_t>& code, const std::string& name, uint16_t machine = 243) {
    std::vector<uint8_t> f(84 + code.size() * 4, 0);
    auto put16 = [&](std::size_t off, uint16_t v) { std::memcpy(&f[off], &v, 2); };
    auto put32 = [&](std::size_t off, uint32_t v) { std::memcpy(&f[off], &v, 4); };
    const uint8_t ident[] = {0x7f, 'E', 'L', 'F', 1 /*32-bit*/, 1 /*LE*/, 1 /*version*/};
    std::memcpy(f.data(), ident, sizeof ident);
    put16(16, 2);                                       // ET_EXEC
    put16(18, machine);                                 // EM_RISCV = 243
    put32(20, 1);                                       // EV_CURRENT
    put32(24, 0x80000000u);                             // e_entry
    put32(28, 52);                                      // e_phoff
    put16(40, 52);                                      // e_ehsize
    put16(42, 32);                                      // e_phentsize
    put16(44, 1);                                       // e_phnum
    put32(52, 1);                                       // PT_LOAD
    put32(56, 84);                                      // p_offset
    put32(60, 0x80000000u);                             // p_vaddr
    put32(64, 0x80000000u);                             // p_paddr
    put32(68, static_cast<uint32_t>(code.size() * 4));  // p_filesz
    put32(72, static_cast<uint32_t>(code.size() * 4));  // p_memsz
    put32(76, 5);                                       // R+X
    put32(80, 4);                                       // p_align
    std::memcpy(&f[84], code.data(), code.size() * 4);
    const std::string path = ::testing::TempDir() + "/" + name + "." + std::to_string(::getpid()) + ".elf";
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(f.data()), static_cast<std::streamsize>(f.size()));
    return path;
}

int run(const std::string& elf, uint64_t max_insns = 0) {
    RunOptions o;
    o.elf = elf;
    o.max_insns = max_insns;
    return run_cli(o);
}

TEST(RunCli, GuestExitCodeThroughTestFinisher) {
    // lui x1, 0x100 (0x001000b7) = test finisher at 0x100000; lui x2, 0x73 (0x00073137);
    // addi x2, x2, 0x333 (0x33310113): x2 = 0x73333 = (7 << 16) | 0x3333 (fail code 7); sw x2, 0(x1) (0x0020a023)
    const std::string elf = make_elf({0x001000b7, 0x00073137, 0x33310113, 0x0020a023, 0x0000006f}, "exit7");
    EXPECT_EQ(run(elf), 7);
}

TEST(RunCli, ConsoleOutputAndPass) {
    // lui x1, 0x10000 (0x100000b7) = UART; addi x2,x0,'A' (0x04100113); sb x2,0(x1) (0x00208023);
    // lui x3, 0x100 (0x001001b7); lui x4, 0x5 (0x00005237); addi x4,x4,0x555 (0x55520213); sw x4,0(x3) (0x0041a023)
    const std::string elf = make_elf(
        {0x100000b7, 0x04100113, 0x00208023, 0x001001b7, 0x00005237, 0x55520213, 0x0041a023, 0x0000006f}, "console");
    ::testing::internal::CaptureStdout();
    const int rc = run(elf);
    EXPECT_EQ(::testing::internal::GetCapturedStdout(), "A");
    EXPECT_EQ(rc, 0);
}

TEST(RunCli, BadElfFiles) {
    // A missing program is bad input (cli.md: 2, missing or unreadable file); 120 is for a file
    // that is there but is not a loadable ELF.
    EXPECT_EQ(run(::testing::TempDir() + "/does_not_exist." + std::to_string(::getpid()) + ".elf"), kExitUsage);
    const std::string junk = ::testing::TempDir() + "/junk." + std::to_string(::getpid()) + ".elf";
    std::ofstream(junk) << "this is not an ELF file";
    EXPECT_EQ(run(junk), kExitLoadError);
    EXPECT_EQ(run(make_elf({0x0000006f}, "x86", 62 /*EM_X86_64*/)), kExitLoadError);
    RunOptions o;
    o.elf = make_elf({0x0000006f}, "loop");
    o.core = "no_such_core";
    EXPECT_EQ(run_cli(o), kExitLoadError);
}

TEST(RunCli, IllegalInstruction) {
    ::testing::internal::CaptureStderr();
    EXPECT_EQ(run(make_elf({0x00000013, 0xfe000033}, "illegal")), kExitIllegalInsn);
    const std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find("illegal instruction 0xfe000033 at pc 0x80000004"), std::string::npos) << err;
}

TEST(RunCli, WildJump) {
    // lui x1, 0x10 (0x000100b7); jalr x0, 0(x1) (0x00008067)
    EXPECT_EQ(run(make_elf({0x000100b7, 0x00008067}, "wild")), kExitWildJump);
}

TEST(RunCli, RunawayLoopHitsInstructionLimit) {
    ::testing::internal::CaptureStderr();
    EXPECT_EQ(run(make_elf({0x0000006f}, "spin"), 1000), kExitInsnLimit);
    EXPECT_NE(::testing::internal::GetCapturedStderr().find("instruction limit of 1000"), std::string::npos);
}

TEST(RunCli, DumpWritesGuestMemoryAfterTheRun) {
    // lui x1,0x80000 (0x800000b7); lui x2,0x12345 (0x12345137); addi x2,x2,0x678 (0x67810113);
    // sw x2,0x100(x1) (0x1020a023); then the test finisher pass sequence of ConsoleOutputAndPass.
    const std::string elf = make_elf(
        {0x800000b7, 0x12345137, 0x67810113, 0x1020a023, 0x001001b7, 0x00005237, 0x55520213, 0x0041a023, 0x0000006f},
        "dump");
    RunOptions o;
    o.elf = elf;
    const std::string out = ::testing::TempDir() + "/dump." + std::to_string(::getpid()) + ".bin";
    o.dumps = {"0x80000100:6=" + out};
    ASSERT_EQ(run_cli(o), 0);
    std::ifstream in(out, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(bytes, std::string("\x78\x56\x34\x12\x00\x00", 6));
}

TEST(RunCli, OptionsAreCheckedBeforeAnythingRuns) {
    RunOptions o;
    o.elf = make_elf({0x0000006f}, "opts");
    o.max_insns_text = "-1";
    EXPECT_EQ(run_cli(o), kExitUsage);
    o.max_insns_text = "12x";
    EXPECT_EQ(run_cli(o), kExitUsage);
    o.max_insns_text = "";
    o.engine = "turbo";
    EXPECT_EQ(run_cli(o), kExitUsage);
    o.engine = "";
    o.dumps = {"0x80000000:4=" + o.elf};  // would overwrite the program
    EXPECT_EQ(run_cli(o), kExitUsage);
    o.dumps = {"0x80000000:0=x.bin"};
    EXPECT_EQ(run_cli(o), kExitUsage);
    o.dumps.clear();
    o.platform = "rk3588";
    EXPECT_EQ(run_cli(o), kExitUsage);
}

}  // namespace
}  // namespace iss
