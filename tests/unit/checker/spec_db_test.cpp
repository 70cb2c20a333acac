// SPDX-License-Identifier: MIT
// Spec-DB schema: strict loading (unknown keys and bad values name the file and the JSON path),
// inheritance, and the real DB files: every platform loads and every rule cites a seed.
#include <gtest/gtest.h>

#include "check_test_util.h"

namespace drv::check::testing {
namespace {

std::string minimal(const std::string& extra_op = "", const std::string& extra_top = "") {
    return R"({"schema_version": 1, "platform": "P", "toolchain": "T", "seed": "001_x.txt",)" + extra_top +
           R"( "ops": [{"name": "Add", "heading": "3.2.1 Add", "rules": [{"kind": "rank", "tensor": "in0",
            "ranks": [4], "message": "4-D")" + extra_op + "}]}]}";
}

std::string error_of(const std::string& text) {
    try {
        SpecDb::parse(text, "f.json");
    } catch (const SpecError& e) {
        return e.what();
    }
    return "";
}

TEST(SpecDb, MinimalFileLoads) {
    PlatformSpec p = SpecDb::parse(minimal(), "f.json");
    ASSERT_EQ(p.ops.size(), 1u);
    EXPECT_EQ(p.ops[0].rules[0].source.text(), "RKNN Compiler V2.3.2 operator spec §3.2.1 Add");
}

TEST(SpecDb, UnknownKeyNamesFileAndPath) {
    EXPECT_EQ(error_of(minimal(R"(, "colour": 1)")), "f.json: $.ops[0].rules[0].colour: unknown key");
    EXPECT_EQ(error_of(minimal("", R"( "extra": true,)")), "f.json: $.extra: unknown key");
}

TEST(SpecDb, BadValuesAreErrors) {
    EXPECT_NE(error_of(minimal(R"(, "when": "1 +")")).find("$.ops[0].rules[0].when: expression"), std::string::npos);
    EXPECT_NE(error_of(R"({"schema_version": 2})").find("$.schema_version"), std::string::npos);
    EXPECT_NE(error_of("{not json").find("invalid JSON"), std::string::npos);
    std::string bad_kind = minimal();
    bad_kind.replace(bad_kind.find("\"rank\""), 6, "\"ranky\"");
    EXPECT_NE(error_of(bad_kind).find("unknown rule kind 'ranky'"), std::string::npos);
    std::string bad_inherit = R"({"schema_version": 1, "platform": "P", "toolchain": "T", "seed": "s",
        "ops": [{"name": "A", "heading": "h", "inherits": "Nope"}]})";
    EXPECT_NE(error_of(bad_inherit).find("$.ops[0].inherits: unknown base op 'Nope'"), std::string::npos);
}

TEST(SpecDb, RealDbLoadsAndEveryRuleCitesASeed) {
    const SpecDb& d = db();
    EXPECT_EQ(d.platforms().size(), 10u);
    for (const auto& p : d.platforms()) {
        for (const auto& op : p.ops) {
            for (const auto& r : op.rules) {
                EXPECT_FALSE(r.source.seed.empty()) << p.id << " " << op.name;
                EXPECT_FALSE(r.source.section.empty()) << p.id << " " << op.name;
                EXPECT_FALSE(r.message.empty()) << p.id << " " << op.name;
            }
        }
    }
}

TEST(SpecDb, FusedOpsInheritBaseRules) {
    const PlatformSpec& p = platform("RK3588");
    const OpSpec* fused = p.find_op("ConvolutionRelu");
    ASSERT_NE(fused, nullptr);
    EXPECT_EQ(fused->inherits, "Convolution");
    EXPECT_EQ(p.effective_rules(*fused).size(), p.effective_rules(*p.find_op("Convolution")).size());
}

TEST(SpecDb, PlatformsWithoutTablesSayNotInSeed) {
    for (const char* id : {"RK2118", "RK3576", "RV1126B"}) {
        const PlatformSpec& p = platform(id);
        EXPECT_FALSE(p.tables_in_seed) << id;
        EXPECT_TRUE(p.ops.empty()) << id;
        EXPECT_FALSE(p.uncovered.empty()) << id;
    }
}

TEST(SpecDb, TruncatedRv1106ListsItsMissingHeadings) {
    const PlatformSpec& p = platform("RV1106");
    EXPECT_EQ(p.ops.size(), 32u);  // 3.4.1 Add ... 3.4.32 ConvTranposeMish
    bool div = false;
    for (const auto& u : p.uncovered) div |= u.heading == "3.4.33 Div";
    EXPECT_TRUE(div);
}

}  // namespace
}  // namespace drv::check::testing
