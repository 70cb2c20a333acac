// SPDX-License-Identifier: MIT
// The kernel self-test (firmware/selftest) on the host: every case runs, stays inside its pool, and
// its hash list is deterministic. tests/mcu compares this list with the firmware's on the ISS.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "mk_selftest.h"

namespace {

std::string run_selftest() {
    std::vector<uint8_t> pool(MK_SELFTEST_POOL_BYTES);
    std::string out;
    const int n = mk_selftest_run(pool.data(), [](void* ctx, const char* name, uint32_t hash, uint32_t bytes) {
        char line[96];
        std::snprintf(line, sizeof line, "K %s %08x %u\n", name, hash, bytes);
        *static_cast<std::string*>(ctx) += line;
    }, &out);
    out += "N " + std::to_string(n) + "\n";
    return out;
}

TEST(KernelSelftest, RunsEveryCaseInsideItsPool) {
    const std::string a = run_selftest();
    EXPECT_EQ(a.find("POOL_OVERFLOW"), std::string::npos) << a;
    EXPECT_NE(a.find("K conv_s8_3x3 "), std::string::npos);
    EXPECT_NE(a.find("K gru_f32 "), std::string::npos);
    EXPECT_EQ(a, run_selftest());  // deterministic
}

}  // namespace
