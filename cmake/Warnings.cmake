# SPDX-License-Identifier: MIT
# One interface target carries the project's warning set; every first-party target links it PRIVATE.
add_library(npusim_warnings INTERFACE)
target_compile_options(npusim_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wcast-align -Wunused -Woverloaded-virtual
  -Wformat=2 -Wimplicit-fallthrough)
if(NPUSIM_WERROR)
  target_compile_options(npusim_warnings INTERFACE -Werror)
endif()
add_library(npusim::warnings ALIAS npusim_warnings)
