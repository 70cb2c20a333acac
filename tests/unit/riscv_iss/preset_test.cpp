// SPDX-License-Identifier: MIT
// Core presets: the shipped JSON files load, and errors name the JSON path (SG-8.3.4).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "riscv_iss/core_preset.h"

namespace iss {
namespace {

TEST(Preset, ShippedPresetsLoad) {
    const CorePreset cv = load_preset("cv32e40p", default_preset_dir());
    EXPECT_TRUE(cv.isa.a);
    EXPECT_EQ(cv.cycles.mulh, 5u);  // CV32E40P pipeline.rst: mulh 5 cycles
    EXPECT_EQ(cv.cycles.branch_taken, 3u);
    const CorePreset ws = load_preset("ws63", default_preset_dir());
    EXPECT_FALSE(ws.isa.a);  // WS63 is RV32IMFC: no A
    EXPECT_EQ(ws.cycles.clock_hz, 240000000u);
    EXPECT_EQ(ws.memory.size(), 6u);
    const CorePreset hs = load_preset("3066h", default_preset_dir());
    EXPECT_EQ(hs.cycles.clock_hz, 200000000u);
    EXPECT_EQ(hs.memory[0].base, 0x02000000u);  // 64 KiB SRAM at 0x2000000 (open_mcu baseaddr.h)
}

std::string write_tmp(const std::string& text) {
    const std::string path = ::testing::TempDir() + "/preset_test." + std::to_string(::getpid()) + ".json";
    std::ofstream(path) << text;
    return path;
}

std::string error_of(const std::string& json) {
    try {
        load_preset(write_tmp(json), ".");
    } catch (const std::exception& e) {
        return e.what();
    }
    return "";
}

TEST(Preset, ErrorsNameTheJsonPath) {
    EXPECT_NE(error_of(R"({"cycles": {"alu": 1, "bogus": 2}})").find("cycles.bogus: unknown key"), std::string::npos);
    EXPECT_NE(error_of(R"({"isa": {"extensions": "imafdc"}})").find("unsupported extension 'd'"), std::string::npos);
    EXPECT_NE(
        error_of(R"({"memory": [{"name": "a", "base": "0x1000", "size_bytes": "0x10"}]})").find("multiple of 4096"),
        std::string::npos);
    EXPECT_NE(error_of(R"({"memory": [{"name": "a", "base": "0x1000", "size_bytes": "0x2000"},
                                      {"name": "b", "base": "0x2000", "size_bytes": "0x1000"}]})")
                  .find("overlaps region a"),
              std::string::npos);
    EXPECT_NE(error_of("{").find("preset_test."), std::string::npos);
    EXPECT_NE(error_of(R"({"memory": []})").find("at least one region"), std::string::npos);
}

TEST(Preset, NonsenseValuesAreRefusedBeforeUse) {
    const std::string mem = R"("memory": [{"name": "ram", "base": "0x80000000", "size_bytes": "0x10000"}])";
    auto err = [&](const std::string& body) { return error_of("{" + body + ", " + mem + "}"); };
    // clock_hz 0 divided the semihosting clock and the SystemC period by zero (issue 23).
    EXPECT_NE(err(R"("cycles": {"clock_hz": 0})").find("cycles.clock_hz: clock_hz 0 is outside 1000 .."),
              std::string::npos);
    EXPECT_NE(err(R"("cycles": {"clock_hz": "20000000000"})").find("cycles.clock_hz"), std::string::npos);
    EXPECT_NE(err(R"("cycles": {"mtime_divider": 0})").find("cycles.mtime_divider"), std::string::npos);
    EXPECT_NE(err(R"("cycles": {"alu": 256})").find("exceeds 255"), std::string::npos);
    EXPECT_NE(err(R"("cycles": {"alu": -1})").find("unsigned number"), std::string::npos);
    EXPECT_NE(err(R"("name": 7)").find("$.name: expected a string"), std::string::npos);
    EXPECT_NE(err(R"("unverified": [1])").find("$.unverified"), std::string::npos);
    EXPECT_NE(err(R"("isa": {"reset_pc": "0x80000001"})").find("isa.reset_pc: must be 2-byte aligned"),
              std::string::npos);
    EXPECT_NE(err(R"("isa": {"triggers": {"count": 9}})").find("isa.triggers.count"), std::string::npos);
    EXPECT_NE(err(R"("isa": {"triggers": {"match": ["fetch"]}})").find("unknown access kind"), std::string::npos);
    EXPECT_NE(err(R"("devices": {"console_base": "0x80000100"})").find("overlaps memory region ram"),
              std::string::npos);
    EXPECT_NE(err(R"("devices": {"clint_base": "0x10000000"})").find("overlaps devices.console_base"),
              std::string::npos);
    EXPECT_NE(error_of(R"({"memory": [{"name": "big", "base": "0x40000000", "size_bytes": "0x40000000"}]})")
                  .find("at most 512 MiB"),
              std::string::npos);
    EXPECT_EQ(err(R"("cycles": {"clock_hz": 1000})"), "");  // the bounds themselves are fine
}

TEST(Preset, UnknownNameIsAnError) {
    EXPECT_THROW(load_preset("no_such_core", default_preset_dir()), std::runtime_error);
}

}  // namespace
}  // namespace iss
