// SPDX-License-Identifier: MIT
// npusim lint: each check fires on a stream built to break exactly that rule, and a stream the
// driver emits is clean.
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "app/lint.h"
#include "drv/regcmd/builder.h"
#include "hw/regcmd.h"
#include "hw/regdb.h"
#include "stream_fixture.h"

namespace {

using namespace hw::rknpu;

const hw::SocProfile& soc() {
    static const hw::SocProfile p = hw::load_named_profile("rk3588");
    return p;
}

std::vector<sim::LintFinding> lint(const std::vector<uint64_t>& w, std::optional<uint64_t> base = {}) {
    return sim::lint_regcmd(w, soc(), sim::LintOptions{base});
}

/// The finding with `code`, or nullptr.
const sim::LintFinding* find(const std::vector<sim::LintFinding>& f, const std::string& code) {
    for (const auto& x : f)
        if (x.code == code) return &x;
    return nullptr;
}

std::string all(const std::vector<sim::LintFinding>& f) {
    std::string s;
    for (const auto& x : f) s += x.text() + "\n";
    return s;
}

TEST(Lint, DriverStreamsAreClean) {
    const auto one = testfix::make_valid_conv(soc());
    EXPECT_TRUE(lint(one.job.words).empty()) << all(lint(one.job.words));
    const auto three = testfix::make_valid_conv(soc(), 3);
    EXPECT_TRUE(lint(three.job.words, testfix::kRegcmd).empty()) << all(lint(three.job.words, testfix::kRegcmd));
    EXPECT_TRUE(lint(three.job.words).empty()) << "base inferred from the chain";
}

TEST(Lint, UnknownRegisterTargetAndWriteFlag) {
    auto v = testfix::make_valid_conv(soc());
    v.job.words.insert(v.job.words.begin(), reg_write(target::CNA, 0x1018, 1).encode());
    v.job.words.insert(v.job.words.begin(), reg_write(target::DPU, CNA_CONV_CON3::kOffset, 9).encode());
    v.job.words.insert(v.job.words.begin(), RegCmd{target::CNA, 0, CNA_CONV_CON1::kOffset}.encode());
    const auto f = lint(v.job.words);
    ASSERT_TRUE(find(f, "E-noreg")) << all(f);
    EXPECT_NE(find(f, "E-noreg")->message.find("0x1018"), std::string::npos);
    ASSERT_TRUE(find(f, "E-target"));
    EXPECT_EQ(find(f, "E-target")->hint, "use target 0x0201");
    EXPECT_EQ(find(f, "E-target")->entry, 1);
    ASSERT_TRUE(find(f, "E-op"));
}

TEST(Lint, ReservedBitsAndRewrites) {
    auto v = testfix::make_valid_conv(soc());
    // CONV_CON3 bits 6..7 are reserved (between CONV_Y_STRIDE and DECONV_X_STRIDE).
    v.job.words.insert(v.job.words.begin(), reg_write(target::CNA, CNA_CONV_CON3::kOffset, 0xc9).encode());
    const auto f = lint(v.job.words);
    ASSERT_TRUE(find(f, "W-reserved")) << all(f);
    EXPECT_NE(find(f, "W-reserved")->message.find("0xc0"), std::string::npos);
    EXPECT_TRUE(find(f, "W-rewrite"));
}

TEST(Lint, TaskEndSequence) {
    auto v = testfix::make_valid_conv(soc());
    auto w = v.job.words;
    for (size_t i = 0; i < w.size(); ++i)
        if (w[i] == 0x0041000000000000ull) w.erase(w.begin() + static_cast<long>(i));
    EXPECT_TRUE(find(lint(w), "E-sync"));
    w.resize(10);
    const auto f = lint(w);
    ASSERT_TRUE(find(f, "E-noopen")) << all(f);
}

TEST(Lint, EnabledVersusProgrammedBlocks) {
    auto v = testfix::make_valid_conv(soc());
    for (auto& word : v.job.words) {
        RegCmd c = RegCmd::decode(word);
        if (c.target() == 0 && c.is_op_enable()) c.value = 0x05;  // CNA|CORE, DPU left out
        word = c.encode();
    }
    const auto f = lint(v.job.words);
    ASSERT_TRUE(find(f, "W-notenabled")) << all(f);
    EXPECT_NE(find(f, "W-notenabled")->message.find("DPU registers are programmed but DPU is not enabled"),
              std::string::npos);
    EXPECT_TRUE(find(f, "E-conv")) << "the conv check still names the missing enable";
}

TEST(Lint, CbufBanksAndDataEntries) {
    auto v = testfix::make_valid_conv(soc());
    testfix::set_value(v.job.words, v.index_of("CNA_CBUF_CON0"),
                       CNA_CBUF_CON0::DATA_BANK.put(9) | CNA_CBUF_CON0::WEIGHT_BANK.put(5));
    auto f = lint(v.job.words);
    ASSERT_TRUE(find(f, "E-conv")) << all(f);
    EXPECT_EQ(find(f, "E-conv")->reg, "CNA.CBUF_CON0");
    // 8 rows x 300 entries > 1 data bank of 256 entries: the RKNN "DatainEntries overflow".
    auto v2 = testfix::make_valid_conv(soc());
    testfix::set_value(v2.job.words, v2.index_of("CNA_CBUF_CON1"), 300);
    f = lint(v2.job.words);
    ASSERT_TRUE(find(f, "E-entries")) << all(f);
    EXPECT_NE(find(f, "E-entries")->message.find("DatainEntries overflow"), std::string::npos);
}

TEST(Lint, ChainingAddressAndAmount) {
    auto v = testfix::make_valid_conv(soc(), 2);
    // Task 0's PC_BASE_ADDRESS is the first PC_BASE_ADDRESS write in the buffer.
    const int i = v.index_of("PC_BASE_ADDRESS");
    const uint32_t good = RegCmd::decode(v.job.words[size_t(i)]).value;
    testfix::set_value(v.job.words, i, good + 0x40);
    auto f = lint(v.job.words, testfix::kRegcmd);
    ASSERT_TRUE(find(f, "E-chain")) << all(f);
    EXPECT_EQ(find(f, "E-chain")->hint, fmt::format("set 0x{:x}", good));
    testfix::set_value(v.job.words, i, good);
    testfix::set_value(v.job.words, v.index_of("PC_REGISTER_AMOUNTS"), 3);
    f = lint(v.job.words, testfix::kRegcmd);
    ASSERT_TRUE(find(f, "E-amount")) << all(f);
    EXPECT_NE(find(f, "E-amount")->message.find("fetches 8 entries"), std::string::npos);
}

TEST(Lint, FindingTextNamesTaskEntryRegisterAndHint) {
    sim::LintFinding x{sim::LintFinding::Severity::Error, "E-target", 2, 17, "CNA.CONV_CON3", "", 0x1001, "bad", "fix", ""};
    EXPECT_EQ(x.text(), "error: E-target task 2 [entry 17]: CNA.CONV_CON3 = 0x1001: bad (hint: fix)");
    x.severity = sim::LintFinding::Severity::Warning;
    x.source = "Mesa";
    EXPECT_EQ(x.text(), "warning: E-target task 2 [entry 17]: CNA.CONV_CON3 = 0x1001: bad (hint: fix) [rule: Mesa]");
}

// docs/rknpu-register-semantics.md §2: a buffer may hold several independent chains (one per
// core or per kick); a chain ends at a zero word or PC_BASE_ADDRESS = 0 and the next task starts
// another. Here: task 0 -> task 1 (end), task 2 alone, as the vendor's 3-core buffers lay them out.
TEST(Lint, SeveralChainsInOneBufferAreNotBroken) {
    auto two = testfix::make_valid_conv(soc(), 2);
    const auto one = testfix::make_valid_conv(soc(), 1);
    std::vector<uint64_t> w = two.job.words;
    w.insert(w.end(), one.job.words.begin(), one.job.words.end());
    const auto f = lint(w, testfix::kRegcmd);
    EXPECT_EQ(find(f, "E-chain"), nullptr) << all(f);
    EXPECT_TRUE(f.empty()) << all(f);
}

// Mesa (single-task ops), mtx512 and the vendor's last task of a chain put a zero word in the
// PC_BASE_ADDRESS slot of the task end (docs §2): not a malformed tail.
TEST(Lint, ZeroWordInTheChainSlotIsATaskEnd) {
    auto v = testfix::make_valid_conv(soc());
    const int i = v.index_of("PC_BASE_ADDRESS");
    ASSERT_GE(i, 0);
    v.job.words[size_t(i)] = 0;
    const auto f = lint(v.job.words);
    EXPECT_EQ(find(f, "W-tail"), nullptr) << all(f);
    v.job.words.erase(v.job.words.begin() + i);  // no slot at all: warned, with the rule's source
    const auto g = lint(v.job.words);
    ASSERT_TRUE(find(g, "W-tail")) << all(g);
    EXPECT_NE(find(g, "W-tail")->source.find("RKNPU_PC_DATA_EXTRA_AMOUNT"), std::string::npos);
}

// Every warning carries the source of its rule.
TEST(Lint, WarningsNameTheirRuleSource) {
    auto v = testfix::make_valid_conv(soc());
    v.job.words.insert(v.job.words.begin(), reg_write(target::CNA, CNA_CONV_CON3::kOffset, 0xc9).encode());
    v.job.words.insert(v.job.words.begin(), reg_write(target::CORE, 0x3030, 7).encode());
    for (const auto& x : lint(v.job.words))
        if (x.severity == sim::LintFinding::Severity::Warning) {
            EXPECT_FALSE(x.source.empty()) << x.text();
        }
    EXPECT_TRUE(find(lint(v.job.words), "W-notpublic"));
}

// A buffer of many bad tasks keeps a bounded number of findings per rule plus a count line.
TEST(Lint, FindingsPerRuleAreBounded) {
    const auto one = testfix::make_valid_conv(soc());
    std::vector<uint64_t> w;
    for (int t = 0; t < 400; ++t) {
        w.push_back(reg_write(target::CNA, CNA_CONV_CON3::kOffset, 0xc9).encode());
        w.insert(w.end(), one.job.words.begin(), one.job.words.end());
    }
    const auto f = lint(w);
    size_t reserved = 0;
    for (const auto& x : f) reserved += x.code == "W-reserved";
    EXPECT_LE(reserved, 51u);
    bool counted = false;
    for (const auto& x : f) counted |= x.code == "W-reserved" && x.message.find("more finding(s)") != std::string::npos;
    EXPECT_TRUE(counted);
}

}  // namespace
