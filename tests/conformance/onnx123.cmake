# ONNX 1.23's node tests (1,884): generated at configure time from the onnx wheel's case
# generators into ${ONNX123_DATA}, each one a ctest case onnx123/<test> through
# conformance_runner. Included from tests/CMakeLists.txt (needs SYSTEM_PYTHON, TEST_ENV,
# RESULTS and the conformance_results fixture).
#
# - onnx 1.23.2 comes from the package registry into a virtual environment in the build
#   folder (${CMAKE_BINARY_DIR}/onnx123-venv), made only when missing; -DONNX123_PYTHON=...
#   uses an interpreter that already has onnx 1.23.2 instead. numpy and ml_dtypes, which
#   compute the expected outputs, are pinned too: ml_dtypes 0.7.0 (2026-12) turned a float
#   cast out of int4/int2 range from wrapping (what 0.5.4 does, and vkinfer) into 0, which
#   changed 24 tests' expected data overnight.
# - The tree (~56 MB) is regenerated when missing or when the generator script changed.
# - tests/conformance/onnx123_passing.txt: tests that must pass (the list only grows).
#   tests/conformance/onnx123_failing.txt: every other test, with a one-line reason; such a
#   test may fail (ctest shows it skipped). A test on neither list must pass.
# Without the registry (pip fails) the suite is left out with a message.
set(ONNX123_VERSION 1.23.2)
set(ONNX123_PINS onnx==${ONNX123_VERSION} numpy==2.4.6 ml_dtypes==0.5.4)
string(SHA1 ONNX123_PINS_ID "${ONNX123_PINS}")
set(ONNX123_PYTHON "" CACHE FILEPATH "a Python with onnx ${ONNX123_VERSION} (empty: a venv in the build folder)")
set(ONNX123_DATA ${CMAKE_BINARY_DIR}/onnx123-node)
set(ONNX123_SCRIPT ${CMAKE_CURRENT_SOURCE_DIR}/conformance/onnx_node_tests.py)
set(ONNX123_OK ON)
# editing a list or the generator reconfigures
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${ONNX123_SCRIPT}
             ${CMAKE_CURRENT_SOURCE_DIR}/conformance/onnx123_passing.txt ${CMAKE_CURRENT_SOURCE_DIR}/conformance/onnx123_failing.txt)

if(ONNX123_PYTHON)
  set(onnx123_python ${ONNX123_PYTHON})
else()
  set(venv ${CMAKE_BINARY_DIR}/onnx123-venv)
  set(onnx123_python ${venv}/bin/python)
  if(NOT EXISTS ${venv}/.pins-${ONNX123_PINS_ID})
    message(STATUS "ONNX 1.23 node tests: installing onnx ${ONNX123_VERSION} into ${venv}")
    file(REMOVE_RECURSE ${venv})
    execute_process(COMMAND ${SYSTEM_PYTHON} -m venv ${venv} RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
    if(rc EQUAL 0)
      execute_process(COMMAND ${venv}/bin/pip install --quiet --disable-pip-version-check --retries 1 --timeout 30
                              ${ONNX123_PINS}
                      RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err TIMEOUT 900)
    endif()
    if(rc EQUAL 0)
      file(TOUCH ${venv}/.pins-${ONNX123_PINS_ID})
    else()
      file(REMOVE_RECURSE ${venv})
      string(STRIP "${err}" err)
      string(REGEX REPLACE ".*\n" "" err "${err}") # pip's last line says why
      message(WARNING "ONNX 1.23 node tests skipped: could not install ${ONNX123_PINS} into a venv "
                      "(needs python3-venv and the package registry; or pass -DONNX123_PYTHON=): ${err}")
      set(ONNX123_OK OFF)
    endif()
  endif()
endif()

if(ONNX123_OK)
  file(SHA1 ${ONNX123_SCRIPT} script_sha1)
  set(stamp ${ONNX123_DATA}/.generated-by)
  set(want "${onnx123_python} ${script_sha1} ${ONNX123_PINS}")
  set(have "")
  if(EXISTS ${stamp})
    file(READ ${stamp} have)
  endif()
  if(NOT EXISTS ${ONNX123_DATA}/.complete OR NOT have STREQUAL want)
    message(STATUS "ONNX 1.23 node tests: generating ${ONNX123_DATA}")
    execute_process(COMMAND ${onnx123_python} -W ignore ${ONNX123_SCRIPT} ${ONNX123_DATA}
                    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(rc EQUAL 0)
      file(WRITE ${stamp} "${want}")
      string(STRIP "${out}" out)
      message(STATUS "${out}")
    else()
      message(WARNING "ONNX 1.23 node tests skipped: generating them with ${onnx123_python} failed: ${err}")
      set(ONNX123_OK OFF)
    endif()
  endif()
endif()

if(ONNX123_OK)
  file(STRINGS ${CMAKE_CURRENT_SOURCE_DIR}/conformance/onnx123_passing.txt O123_PASSING REGEX "^test_")
  file(STRINGS ${CMAKE_CURRENT_SOURCE_DIR}/conformance/onnx123_failing.txt O123_FAILING_LINES REGEX "^test_")
  set(O123_FAILING "")
  foreach(line ${O123_FAILING_LINES})
    if(NOT line MATCHES "^(test_[^ ]+) +[^ ]")
      message(FATAL_ERROR "tests/conformance/onnx123_failing.txt: '${line}' lacks a reason (a line is: test reason)")
    endif()
    list(APPEND O123_FAILING ${CMAKE_MATCH_1})
  endforeach()
  file(GLOB dirs LIST_DIRECTORIES true ${ONNX123_DATA}/test_*)
  set(O123_ALL "")
  foreach(dir ${dirs})
    get_filename_component(test ${dir} NAME)
    list(APPEND O123_ALL ${test})
    set(name onnx123/${test})
    # on the failing list: may fail (exit 77, shown as skipped); anything else must pass
    # (--listed 2: on no list, which the summary reports)
    list(FIND O123_FAILING ${test} found)
    list(FIND O123_PASSING ${test} found_passing)
    if(found GREATER -1)
      set(listed 0)
    elseif(found_passing GREATER -1)
      set(listed 1)
    else()
      set(listed 2)
    endif()
    add_test(NAME ${name} COMMAND conformance_runner ${dir} --name ${name} --listed ${listed} --results ${RESULTS}
             --list tests/conformance/onnx123_passing.txt)
    set_tests_properties(${name} PROPERTIES ENVIRONMENT "${TEST_ENV}" SKIP_RETURN_CODE 77
                         FIXTURES_REQUIRED conformance_results LABELS "conformance;onnx123" TIMEOUT 120)
  endforeach()
  foreach(test ${O123_PASSING} ${O123_FAILING})
    list(FIND O123_ALL ${test} found)
    if(found EQUAL -1)
      message(FATAL_ERROR "tests/conformance/onnx123_*.txt list ${test}, which onnx ${ONNX123_VERSION} does not generate")
    endif()
  endforeach()
  foreach(test ${O123_PASSING})
    list(FIND O123_FAILING ${test} found)
    if(found GREATER -1)
      message(FATAL_ERROR "${test} is on both onnx123_passing.txt and onnx123_failing.txt")
    endif()
  endforeach()
endif()
