# The layering check (core/cmake/check_layering.cmake) on small trees made here: a clean one passes, and
# each way to break the layering — an undeclared cross-folder include, a "../" include, a cycle among
# the declared links, a folder without a library — fails, naming the file or the folders.
# cmake -DCHECKER=<check_layering.cmake> -DWORK_DIR=<scratch> -P check_layering_test.cmake
cmake_minimum_required(VERSION 3.25)
file(REMOVE_RECURSE "${WORK_DIR}")

# make_tree(<name> <deps file text>... SPECS <folder>:<file>:<include>...): a core/src-like tree and its
# DEPS_FILE (the text's pieces are joined, so the lists in it survive being arguments).
function(make_tree name)
  set(root "${WORK_DIR}/${name}")
  list(FIND ARGN SPECS at)
  list(SUBLIST ARGN 0 ${at} deps)
  math(EXPR at "${at} + 1")
  list(SUBLIST ARGN ${at} -1 specs)
  string(JOIN ";" deps ${deps})
  file(WRITE "${root}/deps.cmake" "${deps}")
  foreach(spec IN LISTS specs)
    string(REPLACE ":" ";" parts "${spec}")
    list(GET parts 0 folder)
    list(GET parts 1 file)
    list(GET parts 2 include)
    file(APPEND "${root}/src/${folder}/${file}" "#include \"${include}\"\n")
  endforeach()
endfunction()

# expect(<name> <pass|fail> [<text the failure must contain>])
set(failures "")
function(expect name outcome)
  execute_process(COMMAND "${CMAKE_COMMAND}" "-DSOURCE_DIR=${WORK_DIR}/${name}/src" "-DDEPS_FILE=${WORK_DIR}/${name}/deps.cmake"
                          -P "${CHECKER}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(said "${out}${err}")
  if(outcome STREQUAL "pass" AND NOT rc EQUAL 0)
    string(APPEND failures "\n${name}: expected to pass, failed:\n${said}")
  elseif(outcome STREQUAL "fail")
    if(rc EQUAL 0)
      string(APPEND failures "\n${name}: expected to fail, passed:\n${said}")
    endif()
    foreach(text IN LISTS ARGN)
      string(FIND "${said}" "${text}" at)
      if(at EQUAL -1)
        string(APPEND failures "\n${name}: the failure does not say '${text}':\n${said}")
      endif()
    endforeach()
  endif()
  set(failures "${failures}" PARENT_SCOPE)
endfunction()

set(two_modules "set(kreg_layering_modules \"low;high\")\nset(kreg_layering_deps_low \"\")\n")

make_tree(clean "${two_modules}set(kreg_layering_deps_high \"low\")\n"
  SPECS "low:a.hpp:low/b.hpp" "low:b.hpp:kreg/abi.h" "high:c.cpp:low/a.hpp" "high:c.cpp:high/c.hpp" "high:c.hpp:vector")
expect(clean pass)

make_tree(undeclared "${two_modules}set(kreg_layering_deps_high \"\")\n" SPECS "high:c.cpp:low/a.hpp" "low:a.hpp:cstddef")
expect(undeclared fail "high/c.cpp: #include \"low/a.hpp\"" "kreg_high does not link kreg_low")

make_tree(upward "${two_modules}set(kreg_layering_deps_high \"low\")\n" SPECS "low:a.cpp:high/c.hpp" "high:c.hpp:cstddef")
expect(upward fail "low/a.cpp" "kreg_low does not link kreg_high")

make_tree(relative "${two_modules}set(kreg_layering_deps_high \"low\")\n" SPECS "high:c.cpp:../low/a.hpp" "low:a.hpp:cstddef")
expect(relative fail "high/c.cpp" "relative path")

set(cycle_deps "set(kreg_layering_modules \"a;b;c;d\")\nset(kreg_layering_deps_a \"b\")\nset(kreg_layering_deps_b \"c\")\n")
string(APPEND cycle_deps "set(kreg_layering_deps_c \"a\")\nset(kreg_layering_deps_d \"a\")\n")
make_tree(cycle "${cycle_deps}" SPECS "a:x.cpp:b/y.hpp" "b:y.hpp:c/z.hpp" "c:z.hpp:a/x.hpp" "d:w.cpp:a/x.hpp")
expect(cycle fail "a cycle" "a->b" "b->c" "c->a")
# d depends on the cycle but is not on it: the message names only a, b and c.
expect(cycle fail "the folders on it: a;b;c;")

make_tree(orphan "${two_modules}set(kreg_layering_deps_high \"low\")\n" SPECS "high:c.cpp:low/a.hpp" "low:a.hpp:cstddef" "extra:e.cpp:low/a.hpp")
expect(orphan fail "extra: a folder without its library kreg_extra")

if(failures)
  message(FATAL_ERROR "check_layering.cmake misjudged a tree:${failures}")
endif()
message(STATUS "check_layering.cmake: passes the clean tree, refuses each broken one")
