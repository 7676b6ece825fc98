# Prints why tests were skipped, after a ctest run (run as CTEST_CUSTOM_POST_TEST, see tests/CMakeLists.txt).
#
# ctest shows a skipped test only as "(Skipped)" and prints its output only with -V, so without this a
# GPU test on a machine without a GPU says nothing of why. The reasons are in ctest's own log of the run
# in progress (Testing/Temporary/LastTest.log.tmp, renamed to LastTest.log once ctest is done): a
# GoogleTest skip ("file:line: Skipped", its message, "[  SKIPPED ] Name") or a script's "SKIP: reason" /
# "SKIPPED: reason" line. Identical reasons are grouped. Always exits 0: a failure here would fail ctest.
#
#   cmake -DBUILD_DIR=<build tree> -P print_skip_reasons.cmake
set(log "${BUILD_DIR}/Testing/Temporary/LastTest.log.tmp")
if(NOT EXISTS "${log}")
  return()
endif()
file(STRINGS "${log}" lines)

set(test "")
set(in_message OFF)
set(message "")
set(reasons "")  # distinct reasons, in order of first appearance; tests of reason i in tests_<i>
function(add_skip test reason)
  string(STRIP "${reason}" reason)
  if(reason STREQUAL "")
    set(reason "(the test gave no reason)")
  endif()
  list(FIND reasons "${reason}" i)
  if(i EQUAL -1)
    list(LENGTH reasons i)
    list(APPEND reasons "${reason}")
    set(reasons "${reasons}" PARENT_SCOPE)
  endif()
  list(APPEND tests_${i} "${test}")
  set(tests_${i} "${tests_${i}}" PARENT_SCOPE)
endfunction()

foreach(line IN LISTS lines)
  if(line MATCHES "^[0-9]+/[0-9]+ Test: (.*)$")
    set(test "${CMAKE_MATCH_1}")
    set(in_message OFF)
  elseif(line MATCHES ": Skipped$")
    set(in_message ON)
    set(message "")
  elseif(in_message AND line MATCHES "^\\[  SKIPPED \\]")
    add_skip("${test}" "${message}")
    set(in_message OFF)
  elseif(in_message)
    string(APPEND message " ${line}")
  elseif(line MATCHES "^(-- )?SKIP(PED)?: (.*)$")
    add_skip("${test}" "${CMAKE_MATCH_3}")
  endif()
endforeach()

list(LENGTH reasons count)
if(count EQUAL 0)
  return()
endif()
set(out "\nWhy tests were skipped (their output is in ${BUILD_DIR}/Testing/Temporary/LastTest.log):\n")
math(EXPR last "${count} - 1")
foreach(i RANGE ${last})
  list(GET reasons ${i} reason)
  list(LENGTH tests_${i} n)
  if(n GREATER 3)
    list(SUBLIST tests_${i} 0 3 shown)
    math(EXPR more "${n} - 3")
    list(JOIN shown ", " names)
    string(APPEND names " and ${more} more")
  else()
    list(JOIN tests_${i} ", " names)
  endif()
  string(APPEND out "  ${names}: ${reason}\n")
endforeach()
# message(NOTICE) goes to stderr; ctest shows the post-test command's output either way.
execute_process(COMMAND "${CMAKE_COMMAND}" -E echo "${out}")
