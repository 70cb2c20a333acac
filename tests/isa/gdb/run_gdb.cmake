# SPDX-License-Identifier: MIT
# Runs a gdb-multiarch batch session and checks what GDB printed (issue 7 acceptance 4; issue 22/23).
# Default expectations (gdb_batch.gdb): the breakpoint in square() is hit for x = 0 and x = 1; finish
# returns 1 (1*1); the watchpoint on `counter` sees 0 -> 1 and 1 -> 5 (running sums of squares 0, 1, 4);
# monitor commands answer; the program exits with 0 (sum of squares 0..4 = 30). EXPECT overrides them.
execute_process(COMMAND ${GDB} -nx -batch -x ${SCRIPT} OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60
                RESULT_VARIABLE rc)
set(all "${out}${err}")
if(NOT EXPECT)
  set(EXPECT "Breakpoint 1, square \\(x=x@entry=0\\)" "\\$1 = 0" "\\$2 = 1" "Value returned is \\$3 = 1"
             "\\$5 = 0x[0-9a-f]*6000" "Old value = 0\nNew value = 1" "Old value = 1\nNew value = 5"
             "cycles: [0-9]+" "instret: [0-9]+" "exited normally")
endif()
foreach(expect IN LISTS EXPECT)
  if(NOT all MATCHES "${expect}")
    message(FATAL_ERROR "gdb output lacks '${expect}':\n${all}")
  endif()
endforeach()
