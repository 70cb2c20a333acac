# SPDX-License-Identifier: MIT
# Runs one ISA test ELF on qemu-system-riscv32 -M spike. A suite listed in qemu_deviations.txt
# (known QEMU 7.2 deviations from the spec) must fail with the listed exit code; if it passes, the
# entry is stale and this test fails (Mesa-style expectations, SG-8.10).
execute_process(COMMAND ${QEMU} -M spike -bios none -nographic -monitor none -serial none -icount shift=0 -kernel ${ELF}
                RESULT_VARIABLE rc TIMEOUT 20)
file(STRINGS ${EXPECT_FILE} lines REGEX "^${SUITE} ")
if(lines)
  string(REGEX REPLACE "^${SUITE} +([0-9]+).*" "\\1" expected "${lines}")
  if(NOT rc EQUAL expected)
    message(FATAL_ERROR "${SUITE}: QEMU exit ${rc}, deviation list expects ${expected} (stale entry?)")
  endif()
elseif(NOT rc EQUAL 0)
  message(FATAL_ERROR "${SUITE}: QEMU exit code ${rc} (test number ${rc})")
endif()
