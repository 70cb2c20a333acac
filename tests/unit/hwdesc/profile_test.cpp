// SPDX-License-Identifier: MIT
// SoC profile loading: the bundled RK3588 figures and strict error reporting on malformed files.
#include <cmath>
#include <unistd.h>
#include <cstdio>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "hw/profile.h"

namespace {

std::string profile_path(const std::string& name) {
    return std::string(NPUSIM_TEST_SOURCE_DIR) + "/hwdesc/profiles/" + name + ".json";
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
    const std::string path = ::testing::TempDir() + "/profile_variant." + std::to_string(::getpid()) + ".json";
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
    // Calibrated (tools/calibrate/fit_soc.py): a fitted figure is inferred, never known.
    EXPECT_EQ(p.npu.task_overhead_cycles.grade, hw::Grade::Inferred);
    EXPECT_NE(p.npu.task_overhead_cycles.source.find("fit_soc.py"), std::string::npos);
    EXPECT_EQ(p.npu.pc_cycles_per_regcmd.grade, hw::Grade::Unknown);
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

TEST(Profile, EveryProfileHasTimingAndHostParams) {
    for (const auto& n : hw::list_profiles()) {
        const hw::SocProfile p = hw::load_named_profile(n);
        // The padded-MAC rules and block rates are explicit, graded figures in every profile.
        EXPECT_GE(p.npu.cout_align_int8.value, p.npu.c2_int8.value) << n;
        EXPECT_GE(p.npu.depthwise_cout_align.value, p.npu.cout_align_int8.value) << n;
        EXPECT_GT(p.npu.depthwise_mac_efficiency.value, 0.0) << n;
        EXPECT_LE(p.npu.int16_macs_per_cycle.value, p.npu.int8_macs_per_cycle.value) << n;
        EXPECT_NE(p.npu.dpu_atoms_per_cycle.grade, hw::Grade::Known) << n;  // not public: never "known"
        EXPECT_FALSE(p.host.cpu.value.empty()) << n;
        EXPECT_FALSE(p.host.int8_macs_per_s.source.empty()) << n;
        EXPECT_EQ(p.host.op_overhead_ns.path, "host.op_overhead_ns");
    }
    // params() lists every figure once, host section included.
    const auto views = hw::load_named_profile("rk3588").params();
    size_t host = 0;
    for (const auto& v : views) host += v.path.rfind("host.", 0) == 0;
    EXPECT_EQ(host, 6u);
}

TEST(Profile, Rk3588PaddingRulesFromHardwareFacts) {
    const hw::SocProfile p = hw::load_named_profile("rk3588");
    EXPECT_EQ(p.npu.cout_align_int8.value, 32);       // Mesa pads Cout to 32
    EXPECT_EQ(p.npu.depthwise_cout_align.value, 64);  // depthwise: x2 if <= 32, then to 64
    EXPECT_EQ(p.npu.int16_macs_per_cycle.value, p.npu.fp16_macs_per_cycle.value);
    const hw::SocProfile q = hw::load_named_profile("rk3566");
    EXPECT_EQ(q.npu.cout_align_int8.value, 16);  // RK356x matmul B tile N2 = 16
}

TEST(Profile, HostOpSecondsAddsItsTerms) {
    hw::HostParams h;
    h.op_overhead_ns.value = 1000;
    h.int8_macs_per_s.value = 1e9;
    h.float_flops_per_s.value = 2e9;
    h.bytes_per_s.value = 4e9;
    EXPECT_DOUBLE_EQ(hw::host_op_seconds(h, 0, 0, 0), 1e-6);
    // 1e6 MACs = 1 ms, 2e6 flops = 1 ms, 4e6 bytes = 1 ms: 3 ms + 1 us.
    EXPECT_NEAR(hw::host_op_seconds(h, 1000000, 2000000, 4000000), 3.001e-3, 1e-12);
    // The bundled RK3588 host: a 1 GMAC int8 node takes longer than the overhead alone and below 1 s.
    const hw::SocProfile p = hw::load_named_profile("rk3588");
    const double t = hw::host_op_seconds(p.host, 1000000000, 0, 0);
    EXPECT_GT(t, 1e9 / 76.8e9);  // slower than one A76's SDOT peak (2.4 GHz x 32)
    EXPECT_LT(t, 1.0);
}

TEST(Profile, OverrideSetsValueAndRecordsIt) {
    hw::SocProfile p = hw::load_named_profile("rk3588");
    hw::apply_param_override(p, "npu.task_overhead_cycles=1200");
    EXPECT_EQ(p.npu.task_overhead_cycles.value, 1200);
    EXPECT_NE(p.npu.task_overhead_cycles.source.find("override 1200 (was "), std::string::npos);
    hw::apply_param_override(p, "memory.ddr_efficiency=0.65");
    EXPECT_DOUBLE_EQ(p.mem.ddr_efficiency.value, 0.65);
    // The PC's task-number width and status offset belong to the register-map generation: they
    // move together, and one of them alone is refused.
    EXPECT_THROW(hw::apply_param_override(p, "npu.pc_task_status_offset=0x48"), hw::ProfileError);
    hw::apply_param_overrides(
        p, {"npu.regdb_generation=rk3562", "npu.pc_task_number_bits=16", "npu.pc_task_status_offset=0x48"});
    EXPECT_EQ(p.npu.pc_task_status_offset.value, 0x48u);
    hw::apply_param_override(p, "host.cpu=Cortex-X");
    EXPECT_EQ(p.host.cpu.value, "Cortex-X");
    hw::apply_param_override(p, "npu.depthwise_mac_efficiency=0.125");
    EXPECT_DOUBLE_EQ(p.npu.depthwise_mac_efficiency.value, 0.125);
    // A list, then a count that agrees with it (the cross-check runs after every override).
    hw::apply_param_overrides(p, {"npu.core_mmio_bases=0xfdab0000,0xfdac0000", "npu.core_count=2"});
    EXPECT_EQ(p.npu.core_count.value, 2);
    EXPECT_EQ(p.npu.core_mmio_bases.value.at(1), 0xfdac0000u);
    // The overridden value shows in params().
    bool seen = false;
    for (const auto& v : p.params()) seen |= v.path == "npu.task_overhead_cycles" && v.value == "1200";
    EXPECT_TRUE(seen);
}

TEST(Profile, OverrideErrorsNameThePathAndLeaveTheProfile) {
    hw::SocProfile p = hw::load_named_profile("rk3588");
    auto err = [&](const std::string& a) -> std::string {
        try {
            hw::apply_param_override(p, a);
        } catch (const hw::ProfileError& e) {
            return e.what();
        }
        return "";
    };
    EXPECT_NE(err("npu.no_such=1").find("npu.no_such: unknown parameter (known here: npu.core_count"),
              std::string::npos);
    EXPECT_NE(err("gpu.x=1").find("gpu.x: unknown parameter"), std::string::npos);
    EXPECT_NE(err("npu.task_overhead_cycles=abc").find("npu.task_overhead_cycles: 'abc' is not an integer"),
              std::string::npos);
    EXPECT_NE(err("npu.task_overhead_cycles=-5").find("must not be negative"), std::string::npos);
    EXPECT_NE(err("memory.ddr_efficiency=1.5").find("memory.ddr_efficiency: 1.5 outside [0.05, 1]"), std::string::npos);
    EXPECT_NE(err("memory.ddr_efficiency=0.5x").find("'0.5x' is not a number"), std::string::npos);
    EXPECT_NE(err("npu.core_count=2").find("npu.core_mmio_bases: has 3 entries but npu.core_count is 2"),
              std::string::npos);
    EXPECT_NE(err("task_overhead_cycles").find("expected section.key=value"), std::string::npos);
    EXPECT_NE(err("host.cpu=").find("host.cpu: must not be empty"), std::string::npos);
    EXPECT_THROW(hw::apply_param_overrides(p, {"npu.task_overhead_cycles=5", "npu.nosuch=1"}), hw::ProfileError);
    // Nothing of the failed overrides stuck.
    EXPECT_EQ(p.npu.core_count.value, 3);
    const hw::SocProfile fresh = hw::load_named_profile("rk3588");
    EXPECT_EQ(p.npu.task_overhead_cycles.value, fresh.npu.task_overhead_cycles.value);
    EXPECT_DOUBLE_EQ(p.mem.ddr_efficiency.value, fresh.mem.ddr_efficiency.value);
}

TEST(Profile, LoadProfileArgTakesNameOrFile) {
    EXPECT_EQ(hw::load_profile_arg("rk3566").name, "rk3566");
    EXPECT_EQ(hw::load_profile_arg(profile_path("rk3562")).name, "rk3562");
    const std::string custom = variant("\"name\": \"rk3588\"", "\"name\": \"my3588\"");
    EXPECT_EQ(hw::load_profile_arg(custom).name, "my3588");
    EXPECT_THROW(hw::load_profile_arg("/nonexistent/p.json"), hw::ProfileError);
    EXPECT_THROW(hw::load_profile_arg("nosuch"), hw::ProfileError);
}

// Calibration blocks (tools/calibrate/fit_soc.py --write-profile): each calibrated profile fits at
// most two parameters on its own rows and its row errors agree with its estimates; each profile
// without figures names a calibrated SoC and carries exactly that SoC's fitted values.
TEST(Profile, CalibrationBlocksFollowTheFitRules) {
    int calibrated = 0;
    for (const std::string& n : hw::list_profiles()) {
        const hw::SocProfile p = hw::load_named_profile(n);
        const hw::Calibration& c = p.calibration;
        ASSERT_NE(c.status, "none") << n << ": every bundled profile says how its timing was calibrated";
        EXPECT_FALSE(c.summary.empty()) << n;
        if (c.status == "calibrated") {
            ++calibrated;
            EXPECT_LE(c.fitted.size(), 2u) << n << ": at most two parameters fitted per SoC";
            EXPECT_EQ(c.rows.size(), 3u) << n;
            double mae = 0, loo = 0;
            for (const hw::CalibrationRow& r : c.rows) {
                EXPECT_NEAR(r.error_pct, 100.0 * (r.estimate_ms / r.published_ms - 1.0), 0.05) << n << " " << r.model;
                mae += std::abs(r.error_pct) / 3;
                loo += std::abs(r.loo_error_pct) / 3;
            }
            EXPECT_NEAR(c.fit_mae_pct, mae, 0.05) << n;
            EXPECT_NEAR(c.loo_mae_pct, loo, 0.05) << n;
            for (const std::string& f : c.fitted) {
                bool graded = false;
                for (const auto& v : p.params())
                    if (v.path == f) graded = v.grade == hw::Grade::Inferred;
                EXPECT_TRUE(graded) << n << ": fitted " << f << " is graded inferred";
            }
        } else {
            ASSERT_EQ(c.status, "inherited") << n;
            const hw::SocProfile src = hw::load_named_profile(c.inherits_from);
            EXPECT_EQ(src.calibration.status, "calibrated") << n << " inherits from " << c.inherits_from;
            EXPECT_EQ(p.npu.task_overhead_cycles.value, src.npu.task_overhead_cycles.value) << n;
            EXPECT_EQ(p.npu.conv_mac_efficiency.value, src.npu.conv_mac_efficiency.value) << n;
            EXPECT_EQ(p.npu.task_overhead_cycles.grade, hw::Grade::Unknown) << n << ": not calibrated here";
            EXPECT_TRUE(c.rows.empty()) << n;
        }
    }
    EXPECT_EQ(calibrated, 4) << "rk3588, rk3566, rk3568, rk3576 have published figures";
}

TEST(Profile, CalibrationBlockIsChecked) {
    EXPECT_NE(load_error(variant("\"status\": \"calibrated\"", "\"status\": \"trusted\"")).find("calibration.status"),
              std::string::npos);
    EXPECT_NE(load_error(variant("\"fitted\": [", "\"fitted\": [\"npu.no_such\", ")).find("'npu.no_such' is not a parameter"),
              std::string::npos);
    EXPECT_NE(load_error(variant("\"status\": \"calibrated\"", "\"status\": \"calibrated\", \"grade\": 1"))
                  .find("calibration.grade: unknown key"),
              std::string::npos);
    EXPECT_NE(load_error(variant("\"status\": \"calibrated\"", "\"status\": \"inherited\"")).find("inherits_from"),
              std::string::npos);
    EXPECT_NE(load_error(variant("\"loo_mae_pct\": ", "\"loo_mae_pct\": \"x\", \"fit_max_pct\": ")).find("must be a number"),
              std::string::npos);
}
