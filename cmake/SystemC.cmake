# SPDX-License-Identifier: MIT
# Debian's SystemC 2.3.4 ships no CMake package, only pkg-config: wrap it in an imported target.
find_package(PkgConfig REQUIRED)
pkg_check_modules(SYSTEMC REQUIRED IMPORTED_TARGET systemc)
if(NOT TARGET SystemC::systemc)
  add_library(SystemC::systemc INTERFACE IMPORTED GLOBAL)
  target_link_libraries(SystemC::systemc INTERFACE PkgConfig::SYSTEMC)
  # Debian's library is built for C++17; pin the ABI check macro so a different -std cannot drift.
  target_compile_definitions(SystemC::systemc INTERFACE SC_CPLUSPLUS=201703L)
endif()
