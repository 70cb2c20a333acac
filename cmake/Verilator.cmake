# SPDX-License-Identifier: MIT
# Verilator for the RTL co-simulation (rtl/): NPUSIM_RTL defaults to ON when Debian's verilator
# package (5.x, its CMake package in /usr/share/verilator) is installed. The verilated C++ is
# generated at build time from rtl/**/*.sv and compiled through ccache like the rest, so it is
# regenerated and rebuilt only when an RTL source changes.
find_package(verilator 5.0 QUIET HINTS $ENV{VERILATOR_ROOT} /usr/share/verilator)
option(NPUSIM_RTL "Build the Verilator RTL co-simulation (npusim run --rtl ...)" ${verilator_FOUND})
if(NPUSIM_RTL AND NOT verilator_FOUND)
  message(FATAL_ERROR "NPUSIM_RTL=ON needs Verilator 5 (Debian package verilator; scripts/deps.sh installs it)")
endif()
if(NPUSIM_RTL)
  message(STATUS "RTL co-simulation: Verilator ${verilator_VERSION} (${VERILATOR_BIN})")
  # Verilator's verilate() looks for this target; point it at Debian's SystemC (pkg-config).
  if(NOT TARGET Verilator::systemc)
    add_library(Verilator::systemc INTERFACE IMPORTED GLOBAL)
    target_link_libraries(Verilator::systemc INTERFACE SystemC::systemc)
  endif()
elseif(verilator_FOUND)
  message(STATUS "RTL co-simulation: off (NPUSIM_RTL=OFF)")
else()
  message(STATUS "RTL co-simulation: off (no Verilator 5 found)")
endif()
