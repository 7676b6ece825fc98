# cmake -DSOURCE_DIR=<plugin project> -DBINARY_DIR=<its build folder> -DPREFIX_PATH=<kreg prefix or build>
#       -DEXPECTED_KREG_DIR=<where kregConfig.cmake must be found> [-DGENERATOR= -DMAKE_PROGRAM= -DCXX_COMPILER=]
#       [-DCUDA_COMPILER=<nvcc> -DCUDA_ARCHITECTURES=<a,b,...>] [-DEXPECTED_PLUGIN=my_transpose.so]
#       [-DTOOLCHAIN_FILE=<a cross toolchain: the Windows .dll, windows_cross.cmake>] -P build_template.cmake
# What a student does: configure the copied template against one kreg, build it, get my_gemm.so (or
# EXPECTED_PLUGIN, for the transpose templates) in the build folder. The runner's own dependencies are switched off, so a package that asked for them fails.
# The compilers are the kreg build's, so a CUDA template is built by the nvcc that kreg found even
# where it is not on PATH; CUDA_ARCHITECTURES is comma-separated because a ';' would split the argument.
cmake_minimum_required(VERSION 3.25)
foreach(var SOURCE_DIR BINARY_DIR PREFIX_PATH EXPECTED_KREG_DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "${var} is required")
  endif()
endforeach()

if(NOT DEFINED EXPECTED_PLUGIN)
  set(EXPECTED_PLUGIN my_gemm.so)
endif()

file(REMOVE_RECURSE "${BINARY_DIR}")
set(configure "${CMAKE_COMMAND}" -S "${SOURCE_DIR}" -B "${BINARY_DIR}" "-DCMAKE_PREFIX_PATH=${PREFIX_PATH}"
    -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
    -DCMAKE_DISABLE_FIND_PACKAGE_Boost=ON -DCMAKE_DISABLE_FIND_PACKAGE_nlohmann_json=ON
    -DCMAKE_DISABLE_FIND_PACKAGE_cxxopts=ON -DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON)
if(GENERATOR)
  list(APPEND configure -G "${GENERATOR}")
endif()
if(MAKE_PROGRAM)
  list(APPEND configure "-DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}")
endif()
if(CXX_COMPILER)
  list(APPEND configure "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}")
endif()
if(TOOLCHAIN_FILE)
  list(APPEND configure --toolchain "${TOOLCHAIN_FILE}")
endif()
if(CUDA_COMPILER)
  list(APPEND configure "-DCMAKE_CUDA_COMPILER=${CUDA_COMPILER}")
endif()
if(CUDA_ARCHITECTURES)
  string(REPLACE "," "\\;" cuda_architectures "${CUDA_ARCHITECTURES}")
  list(APPEND configure "-DCMAKE_CUDA_ARCHITECTURES=${cuda_architectures}")
endif()

execute_process(COMMAND ${configure} RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "configuring ${SOURCE_DIR} against ${PREFIX_PATH} failed (${result}):\n${out}\n${err}")
endif()

# The package must come from the kreg we meant, not from some other prefix on this machine.
file(STRINGS "${BINARY_DIR}/CMakeCache.txt" kreg_dir_line REGEX "^kreg_DIR:")
string(REGEX REPLACE "^kreg_DIR:[A-Z]+=" "" kreg_dir "${kreg_dir_line}")
file(REAL_PATH "${kreg_dir}" kreg_dir)
file(REAL_PATH "${EXPECTED_KREG_DIR}" expected_dir)
if(NOT kreg_dir STREQUAL expected_dir)
  message(FATAL_ERROR "kreg was found in '${kreg_dir}', expected '${expected_dir}'")
endif()

execute_process(COMMAND "${CMAKE_COMMAND}" --build "${BINARY_DIR}" RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "building ${SOURCE_DIR} failed (${result}):\n${out}\n${err}")
endif()
if(NOT EXISTS "${BINARY_DIR}/${EXPECTED_PLUGIN}")
  file(GLOB_RECURSE built RELATIVE "${BINARY_DIR}" "${BINARY_DIR}/*.so" "${BINARY_DIR}/*.dll")
  message(FATAL_ERROR "${EXPECTED_PLUGIN} is not in the build folder ${BINARY_DIR} (found: ${built})")
endif()
message(STATUS "built ${BINARY_DIR}/${EXPECTED_PLUGIN} against ${kreg_dir}")
