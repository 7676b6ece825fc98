# Every dependency comes from the distribution. A missing one stops configure and names the package.
function(kreg_require package debian_package)
  find_package(${package} ${ARGN} QUIET)
  if(NOT ${package}_FOUND)
    message(FATAL_ERROR "kreg needs ${package}: install it with `apt-get install ${debian_package}` "
                        "(Debian 12 / Ubuntu 24.04), or run the README's set-up command.")
  endif()
endfunction()

kreg_require(Boost libboost-dev 1.74)  # header-only use: Boost.DLL
kreg_require(nlohmann_json nlohmann-json3-dev 3.10)
kreg_require(cxxopts libcxxopts-dev)
find_package(Threads REQUIRED)

set(KREG_HAVE_CUDA OFF)
if(KREG_WITH_CUDA)
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      # Hopper first (the project's target), Ampere for the A100 configs. Override on the command line.
      set(CMAKE_CUDA_ARCHITECTURES 80 90 CACHE STRING "CUDA architectures to build for")
    endif()
    enable_language(CUDA)
    find_package(CUDAToolkit QUIET)
    if(CUDAToolkit_FOUND AND TARGET CUDA::cublas)
      set(KREG_HAVE_CUDA ON)
      # Plugins and the runner must share one CUDA runtime (function pointers, streams, errors).
      set(CMAKE_CUDA_RUNTIME_LIBRARY Shared)
      message(STATUS "kreg: CUDA ${CUDAToolkit_VERSION} found; CUDA plugins will be built for ${CMAKE_CUDA_ARCHITECTURES}")
    else()
      message(STATUS "kreg: nvcc found but not cuBLAS/cudart; no CUDA plugins will be built")
    endif()
  else()
    message(STATUS "kreg: no CUDA toolkit found; only the CPU parts are built and no CUDA plugins will be built")
  endif()
else()
  message(STATUS "kreg: KREG_WITH_CUDA=OFF; no CUDA plugins will be built")
endif()
