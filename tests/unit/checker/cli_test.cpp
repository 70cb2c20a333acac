// SPDX-License-Identifier: MIT
// run_check_cli / run_specs_cli: exit codes and the clear errors of acceptance item 5 (unknown
// platform, malformed model), coverage listing.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "checker/cli.h"

namespace drv::check {
namespace {

TEST(Cli, UnknownPlatformListsKnownOnes) {
    CheckCliOptions o;
    o.models = {"whatever.onnx"};
    o.platform = "RK9999";
    o.specs_dir = CHECKER_SPECS_DIR;
    std::ostringstream out, err;
    EXPECT_EQ(run_check_cli(o, out, err), kExitUsage);
    EXPECT_NE(err.str().find("npusim: error: unknown platform 'RK9999', npusim check --platform (known platforms: "), std::string::npos) << err.str();
    EXPECT_NE(err.str().find("RK3588"), std::string::npos);
}

TEST(Cli, MalformedModelIsAClearError) {
    std::string path = std::string(CHECKER_TEST_TMP) + "/garbage.onnx";
    std::ofstream(path) << "this is not a protobuf";
    CheckCliOptions o;
    o.models = {path};
    o.platform = "RK3588";
    o.specs_dir = CHECKER_SPECS_DIR;
    std::ostringstream out, err;
    EXPECT_EQ(run_check_cli(o, out, err), kExitModelError);
    EXPECT_NE(err.str().find("cannot load model"), std::string::npos) << err.str();
    EXPECT_NE(err.str().find("garbage.onnx"), std::string::npos) << err.str();
}

TEST(Cli, MissingModelFile) {
    CheckCliOptions o;
    o.models = {"/nonexistent/model.onnx"};
    o.all_platforms = true;
    o.specs_dir = CHECKER_SPECS_DIR;
    std::ostringstream out, err;
    // cli.md: a missing or unreadable file is bad input (2), the same code as `npusim run` gives.
    EXPECT_EQ(run_check_cli(o, out, err), kExitUsage);
    EXPECT_NE(err.str().find("npusim: error: model file '/nonexistent/model.onnx' not found"), std::string::npos);
}

TEST(Cli, BadSpecDirIsSpecError) {
    SpecsCliOptions o;
    o.specs_dir = "/nonexistent/specs";
    std::ostringstream out, err;
    EXPECT_EQ(run_specs_cli(o, out, err), kExitSpecError);
}

TEST(Cli, SpecsCoverageListsTruncatedHeading) {
    SpecsCliOptions o;
    o.coverage = true;
    o.specs_dir = CHECKER_SPECS_DIR;
    std::ostringstream out, err;
    EXPECT_EQ(run_specs_cli(o, out, err), kExitOk);
    EXPECT_NE(out.str().find("3.4.33 Div"), std::string::npos);
    EXPECT_NE(out.str().find("RK2118 operator tables: not in the seed"), std::string::npos) << out.str();
}

}  // namespace
}  // namespace drv::check
