// SPDX-License-Identifier: MIT
// main() for GoogleTest binaries that use SystemC: libsystemc wants an sc_main symbol, and the
// kernel must get its 1 ps resolution before any sc_time exists. Each binary elaborates at most
// one platform (its tests share that simulation's results).
#include <gtest/gtest.h>
#include <systemc>

int sc_main(int, char*[]) { return 0; }

int main(int argc, char** argv) {
    setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 1);
    sc_core::sc_set_time_resolution(1, sc_core::SC_PS);
    ::testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}
