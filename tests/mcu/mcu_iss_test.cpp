// SPDX-License-Identifier: MIT
// ISS-side MCU tests (issue 8): the kernel self-test firmware on the ws63 and 3066H ISS presets prints
// exactly the hashes the host build of the same cases computes (host == ISS for every kernel); the
// benchmark firmware reports cycles per MAC; the firmware footprint matches the board linker scripts.
#include <gtest/gtest.h>

#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "mcu/firmware_runner.h"
#include "mcu/mcu_run.h"
#include "mcu/mcu_target.h"
#include "mk_selftest.h"

namespace {

std::string host_selftest() {
    std::vector<uint8_t> pool(MK_SELFTEST_POOL_BYTES);
    std::string out;
    const int n = mk_selftest_run(pool.data(), [](void* ctx, const char* name, uint32_t hash, uint32_t bytes) {
        char line[96];
        std::snprintf(line, sizeof line, "K %s %08x %u\n", name, hash, bytes);
        *static_cast<std::string*>(ctx) += line;
    }, &out);
    return out + "N " + std::to_string(n) + "\n";
}

class McuIss : public ::testing::TestWithParam<std::string> {};

TEST_P(McuIss, KernelSelftestIdenticalToHost) {
    const mcu::McuTarget* t = mcu::find_target(GetParam());
    ASSERT_NE(t, nullptr);
    const mcu::FirmwareRun r = mcu::run_firmware(*t, mcu::firmware_elf(*t, "selftest"), {});
    ASSERT_EQ(r.error, "") << r.console;
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_EQ(r.console, host_selftest());
}

TEST_P(McuIss, BenchmarkReportsCyclesPerMac) {
    const mcu::McuTarget* t = mcu::find_target(GetParam());
    std::ostringstream out, err;
    ASSERT_EQ(mcu::bench_cli(t->name, out, err), 0) << err.str();
    const std::string s = out.str();
    std::printf("%s", s.c_str());
    EXPECT_NE(s.find("conv2d_s8"), std::string::npos);
    EXPECT_NE(s.find("dwconv_s8"), std::string::npos);
    EXPECT_NE(s.find("cycles/MAC"), std::string::npos);
    EXPECT_NE(s.find("M instructions/s"), std::string::npos);
}

TEST_P(McuIss, FirmwareFitsItsBoardRegions) {
    const mcu::McuTarget* t = mcu::find_target(GetParam());
    for (const char* prog : {"runtime", "selftest", "bench"}) {
        const mcu::ElfFootprint f = mcu::elf_footprint(mcu::firmware_elf(*t, prog), *t);
        ASSERT_TRUE(f.ok) << f.error;
        EXPECT_GT(f.flash_bytes, 0u);
        EXPECT_LE(f.flash_bytes, t->fw_flash_bytes) << prog;
        EXPECT_LE(f.sram_bytes, t->sram_bytes) << prog;
    }
}

INSTANTIATE_TEST_SUITE_P(Targets, McuIss, ::testing::Values("ws63", "3066h"));

TEST(McuBlob, CorruptBlobIsRejectedByTheFirmware) {
    const mcu::McuTarget* t = mcu::find_target("ws63");
    std::vector<uint8_t> junk(256, 0xA5);
    const mcu::FirmwareRun r = mcu::run_firmware(*t, mcu::firmware_elf(*t, "runtime"), junk);
    EXPECT_NE(r.exit_code, 0);
    EXPECT_NE(r.error.find("invalid blob"), std::string::npos) << r.error << r.console;
}

}  // namespace
