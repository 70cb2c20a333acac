// SPDX-License-Identifier: MIT
// GoogleTest main for SystemC tests: an elaborated SystemC kernel cannot be reset, so refuse to run more
// than one test per process (ctest runs each discovered test separately with --gtest_filter).
#include <gtest/gtest.h>

#include <systemc>

int sc_main(int argc, char** argv) {
    ::testing::InitGoogleTest(&argc, argv);
    const bool listing = ::testing::GTEST_FLAG(list_tests);
    if (!listing && ::testing::UnitTest::GetInstance()->test_to_run_count() > 1) {
        std::fprintf(stderr, "SystemC tests must run one per process: use --gtest_filter=Suite.Name\n");
        return 2;
    }
    return RUN_ALL_TESTS();
}
