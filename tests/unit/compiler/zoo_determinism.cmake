# SPDX-License-Identifier: MIT
# ctest -P script: regenerates the zoo models into a fresh folder and requires the same bytes as
# the build-time generation in REF (issue 3 acceptance: "same bytes twice"). Inputs: PY, ZOO,
# OUT, MODELS, REF.
file(REMOVE_RECURSE ${OUT})
execute_process(COMMAND ${PY} ${ZOO} ${OUT} --models ${MODELS} RESULT_VARIABLE rc OUTPUT_VARIABLE log)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "zoo generator failed (${rc}): ${log}")
endif()
message(STATUS "${log}")
file(GLOB models RELATIVE ${OUT} ${OUT}/*.onnx)
list(LENGTH models n)
if(n EQUAL 0)
  message(FATAL_ERROR "no models generated")
endif()
foreach(m IN LISTS models)
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${OUT}/${m} ${REF}/${m} RESULT_VARIABLE same)
  if(NOT same EQUAL 0)
    message(FATAL_ERROR "${m} differs between two generator runs")
  endif()
endforeach()
message(STATUS "${n} models byte-identical across two runs")
