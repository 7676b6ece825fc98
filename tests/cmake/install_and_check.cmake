# cmake -DSOURCE_DIR=<kreg checkout> -DBUILD_DIR=<kreg build> -DPREFIX=<scratch prefix> -DEXPECTED_PLUGINS=<a.so,b.so,...> -P install_and_check.cmake
# Installs the build into an emptied prefix and checks the layout a student and the runner rely on.
cmake_minimum_required(VERSION 3.25)
foreach(var SOURCE_DIR BUILD_DIR PREFIX EXPECTED_PLUGINS)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "${var} is required")
  endif()
endforeach()

file(REMOVE_RECURSE "${PREFIX}")
execute_process(COMMAND "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${PREFIX}"
  RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "cmake --install failed (${result}):\n${out}\n${err}")
endif()

set(problems "")
foreach(file IN ITEMS bin/runner include/kreg/abi.h include/kreg/kernel.hpp include/kreg/cuda_check.hpp
                      lib/cmake/kreg/kregConfig.cmake lib/cmake/kreg/kregConfigVersion.cmake
                      lib/cmake/kreg/kregTargets.cmake lib/cmake/kreg/KregPlugin.cmake
                      share/kreg/configs/sweeps/smoke.json share/kreg/configs/schema/sweep.schema.json
                      share/kreg/template/CMakeLists.txt share/kreg/template/my_gemm.cpp share/kreg/template/README.md
                      share/kreg/template_cuda/CMakeLists.txt share/kreg/template_cuda/my_gemm.cu
                      share/kreg/template_cuda/README.md)
  if(NOT EXISTS "${PREFIX}/${file}")
    string(APPEND problems "  missing ${file}\n")
  endif()
endforeach()

# Exactly the in-tree plugins, every one of them (CUDA ones included where they were built); never the
# deliberately broken test fixtures.
string(REPLACE "," ";" expected "${EXPECTED_PLUGINS}")
foreach(required IN ITEMS cpu_naive.so cpu_blocked.so)
  if(NOT required IN_LIST expected)
    string(APPEND problems "  ${required} is not among the plugins the build installs (${EXPECTED_PLUGINS})\n")
  endif()
endforeach()
file(GLOB installed RELATIVE "${PREFIX}/lib/kreg/plugins" "${PREFIX}/lib/kreg/plugins/*")
list(SORT installed)
list(SORT expected)
if(NOT installed STREQUAL expected)
  string(APPEND problems "  lib/kreg/plugins holds [${installed}], expected [${expected}]\n")
endif()

# A plugin author needs only the SDK headers: the package must not ask for the runner's dependencies.
file(GLOB package_files "${PREFIX}/lib/cmake/kreg/*.cmake")
foreach(f IN LISTS package_files)
  file(READ "${f}" text)
  if(text MATCHES "(find_dependency|find_package)\\([ \t\n]*(Boost|nlohmann_json|cxxopts|GTest)")
    string(APPEND problems "  ${f} asks for ${CMAKE_MATCH_2}\n")
  endif()
  if(text MATCHES "(Boost|nlohmann_json|cxxopts|GTest)::")
    string(APPEND problems "  ${f} names a ${CMAKE_MATCH_1} target\n")
  endif()
  foreach(tree IN ITEMS "${BUILD_DIR}" "${SOURCE_DIR}")
    string(FIND "${text}" "${tree}" at)
    if(NOT at EQUAL -1)
      string(APPEND problems "  ${f} refers to ${tree}; an installed package must be relocatable\n")
    endif()
  endforeach()
endforeach()

if(problems)
  message(FATAL_ERROR "install into ${PREFIX} is not as expected:\n${problems}")
endif()
message(STATUS "installed into ${PREFIX}: ${installed}")
