// SPDX-License-Identifier: MIT
// SoC profile loading: the bundled RK3588 figures and strict error reporting on malformed files.
#include <cstdio>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "hw/profile.h"

namespace {

std::string profile_path(const std::string& name) {
    return std::string(NPUSIM_TEST_SOURCE_DIR) + "/npu_models/hwdesc/profiles/" + name + ".json";
}

std::string slurp(const std::string& path) {
    std::ifstream f(path);
    return std::string(std::istreambuf_iterator<char>(f), {});
}

/// Write a variant of rk3588.json with `from` replaced by `to`; return its path.
std::string variant(const std::string& from, const std::string& to) {
    std::string text = slurp(profile_path("rk3588"));
    const size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
    const std::string path = ::testing::TempDir() + "/profile_variant.json";
    std::ofstream(path) << text;
    return path;
}

std::string load_error(const std::string& path) {
    try {
        hw::load_profile(path);
    } catch (const hw::ProfileError& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST(Profile, Rk3588FiguresFromHardwareFacts) {
    const hw::SocProfile p = hw::load_profile(profile_path("rk3588"));
    EXPECT_EQ(p.name, "rk3588");
    EXPECT_EQ(p.npu.core_count.value, 3);
    EXPECT_EQ(p.npu.int8_macs_per_cycle.value, 1024);
    EXPECT_EQ(p.npu.core_clock_hz.value, 1000000000u);
    EXPECT_EQ(p.npu.cbuf_banks.value * p.npu.cbuf_bank_bytes.value, 384u * 1024u);
    EXPECT_EQ(p.npu.core_mmio_bases.value.at(1), 0xfdac0000u);
    EXPECT_EQ(p.npu.task_overhead_cycles.grade, hw::Grade::Unknown);
    EXPECT_EQ(p.npu.int8_macs_per_cycle.grade, hw::Grade::Known);
    EXPECT_NEAR(p.mem.ddr_peak_bytes_per_s.value, 8.0 * 4224e6, 1e6);  // 64-bit LPDDR4x-4224
}

TEST(Profile, EveryBundledProfileLoads) {
    const auto names = hw::list_profiles();
    ASSERT_FALSE(names.empty());
    for (const auto& n : names) EXPECT_NO_THROW(hw::load_named_profile(n)) << n;
}

TEST(Profile, UnknownPlatformListsKnownOnes) {
    try {
        hw::load_named_profile("nosuch");
        FAIL();
    } catch (const hw::ProfileError& e) {
        EXPECT_NE(std::string(e.what()).find("unknown platform 'nosuch'"), std::string::npos);
        EXPECT_NE(std::string(e.what()).find("rk3588"), std::string::npos);
    }
}

TEST(Profile, ErrorsNameTheJsonPath) {
    EXPECT_NE(load_error(variant("\"cbuf_banks\"", "\"cbuf_bankz\"")).find("npu.cbuf_banks: missing parameter"),
              std::string::npos);
    EXPECT_NE(load_error(variant("\"value\": 12,", "\"value\": 99,")).find("npu.cbuf_banks: 99 outside [1, 16]"), std::string::npos);
    EXPECT_NE(load_error(variant("\"grade\": \"known\"", "\"grade\": \"sure\"")).find("not one of known"),
              std::string::npos);
    EXPECT_NE(load_error(variant("\"memory\": {", "\"extra\": 1, \"memory\": {")).find("extra: unknown key"),
              std::string::npos);
    EXPECT_NE(load_error(variant("\"value\": 3,", "\"value\": 2,")).find("core_mmio_bases"), std::string::npos);
    EXPECT_NE(load_error(variant("{", "[")).find("not valid JSON"), std::string::npos);
    EXPECT_NE(load_error("/nonexistent/x.json").find("cannot open"), std::string::npos);
}
