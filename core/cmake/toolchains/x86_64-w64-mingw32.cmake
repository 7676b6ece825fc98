# Cross-building kreg's Windows part on Debian: the mingw-w64 toolchain (x86_64, POSIX threads, so that
# std::thread and std::mutex work) and the header-only dependencies from Debian's own packages.
#   apt-get install mingw-w64 libboost-dev nlohmann-json3-dev libcxxopts-dev   (and wine64 to run it)
#   cmake -S . -B build-windows -G Ninja --toolchain core/cmake/toolchains/x86_64-w64-mingw32.cmake
# Nothing is downloaded. Boost, nlohmann/json and cxxopts are header-only here, so the Linux packages'
# headers serve the cross build; they are reached through a folder of links in the build tree, never
# through /usr/include itself (which would put glibc's headers in front of mingw's).
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)
set(kreg_mingw x86_64-w64-mingw32)

find_program(CMAKE_C_COMPILER NAMES ${kreg_mingw}-gcc-posix ${kreg_mingw}-gcc)
find_program(CMAKE_CXX_COMPILER NAMES ${kreg_mingw}-g++-posix ${kreg_mingw}-g++)
find_program(CMAKE_RC_COMPILER NAMES ${kreg_mingw}-windres)
if(NOT CMAKE_CXX_COMPILER)
  message(FATAL_ERROR "the Windows cross build needs ${kreg_mingw}-g++: apt-get install mingw-w64")
endif()

# <build>/debian-headers: include/{boost,nlohmann,cxxopts.hpp} and the packages' CMake configs, as links.
set(kreg_debian_headers "${CMAKE_BINARY_DIR}/debian-headers")
foreach(link include/boost:/usr/include/boost include/nlohmann:/usr/include/nlohmann
             include/cxxopts.hpp:/usr/include/cxxopts.hpp share/cmake/nlohmann_json:/usr/share/cmake/nlohmann_json)
  string(REPLACE ":" ";" link "${link}")
  list(GET link 0 name)
  list(GET link 1 target)
  if(EXISTS "${target}" AND NOT EXISTS "${kreg_debian_headers}/${name}")
    get_filename_component(parent "${kreg_debian_headers}/${name}" DIRECTORY)
    file(MAKE_DIRECTORY "${parent}")
    file(CREATE_LINK "${target}" "${kreg_debian_headers}/${name}" SYMBOLIC)
  endif()
endforeach()

# cxxopts: Debian's config finds its header through the real path of its own folder, /usr/include, whose glibc
# headers would come before mingw's; a config of the build's own gives cxxopts::cxxopts the linked header instead
# (a link to Debian's config folder, left by an older build tree, is replaced, never written through).
set(kreg_cxxopts_config "${kreg_debian_headers}/lib/cmake/cxxopts")
if(IS_SYMLINK "${kreg_cxxopts_config}")
  file(REMOVE "${kreg_cxxopts_config}")
endif()
if(EXISTS /usr/include/cxxopts.hpp AND NOT EXISTS "${kreg_cxxopts_config}/cxxopts-config.cmake")
  file(WRITE "${kreg_cxxopts_config}/cxxopts-config.cmake"
       "if(NOT TARGET cxxopts::cxxopts)\n  add_library(cxxopts::cxxopts INTERFACE IMPORTED)\n"
       "  set_target_properties(cxxopts::cxxopts PROPERTIES INTERFACE_INCLUDE_DIRECTORIES \"${kreg_debian_headers}/include\")\n"
       "endif()\nset(cxxopts_FOUND TRUE)\n")
endif()

set(CMAKE_FIND_ROOT_PATH /usr/${kreg_mingw} "${kreg_debian_headers}")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
# Packages: the roots first (nlohmann_json and cxxopts from the links above), then CMAKE_PREFIX_PATH as given,
# so that a plugin project finds the kreg it was pointed at (-DCMAKE_PREFIX_PATH=<cross-built kreg prefix>).
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
# Boost through FindBoost's header search (Debian's BoostConfig describes the Linux libraries).
set(Boost_NO_BOOST_CMAKE ON)
set(BOOST_ROOT "${kreg_debian_headers}")
set(Boost_NO_SYSTEM_PATHS ON)

# Programs built here run under wine64 (ctest, try_run).
find_program(KREG_WINE NAMES wine64 wine PATHS /usr/lib/wine NO_CMAKE_FIND_ROOT_PATH)
if(KREG_WINE)
  set(CMAKE_CROSSCOMPILING_EMULATOR "${KREG_WINE}")
endif()
# A plugin or program must not need mingw's runtime DLLs next to it under Windows.
set(CMAKE_EXE_LINKER_FLAGS_INIT "-static -static-libgcc -static-libstdc++")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "-static -static-libgcc -static-libstdc++")
set(CMAKE_MODULE_LINKER_FLAGS_INIT "-static -static-libgcc -static-libstdc++")
# No CUDA in the cross build: nvcc targets Linux here.
set(KREG_WITH_CUDA OFF CACHE BOOL "Build the CUDA plugins (not in the Windows cross build)" FORCE)
