# kreg_add_plugin(<name> SOURCES <files...> [LIBRARIES <targets...>] [OUTPUT_DIRECTORY <dir>])
#
# Builds a kreg plugin: a MODULE library named <name>.so (<name>.dll on Windows) linked against kreg::sdk, with hidden
# visibility so that only the entry point is exported. Sources ending in .cu are compiled by nvcc and
# linked against the shared CUDA runtime. Used by the in-tree plugins and, through the installed
# package (find_package(kreg CONFIG)), by out-of-tree ones such as plugins/template.
#
# Where the .so goes: OUTPUT_DIRECTORY if given; else KREG_PLUGIN_OUTPUT_DIRECTORY (set by the kreg
# project: the runner's plugin folder in the build tree); else the caller's current binary dir (an
# out-of-tree project). With KREG_INSTALL_PLUGINS ON (only the kreg project turns it on), a plugin
# without its own OUTPUT_DIRECTORY is also installed into <prefix>/${KREG_PLUGIN_INSTALL_DIR}; one with
# its own folder (the test fixtures) stays out of the runner's plugin folder at install time too.
set(KREG_PLUGIN_INSTALL_DIR "lib/kreg/plugins" CACHE STRING "Where plugins go, relative to the prefix")

function(kreg_add_plugin name)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "" "OUTPUT_DIRECTORY" "SOURCES;LIBRARIES")
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "kreg_add_plugin(${name}): SOURCES is required")
  endif()
  add_library(${name} MODULE ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE kreg::sdk ${ARG_LIBRARIES})
  set_target_properties(${name} PROPERTIES
    PREFIX ""
    CXX_VISIBILITY_PRESET hidden
    CUDA_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  set(uses_cuda OFF)
  foreach(src IN LISTS ARG_SOURCES)
    if(src MATCHES "\\.cu$")
      set(uses_cuda ON)
    endif()
  endforeach()
  if(uses_cuda)
    get_property(enabled_languages GLOBAL PROPERTY ENABLED_LANGUAGES)
    if(NOT "CUDA" IN_LIST enabled_languages)
      message(FATAL_ERROR "kreg_add_plugin(${name}): it has .cu sources but CUDA is not enabled; "
                          "use project(<name> LANGUAGES CXX CUDA) or enable_language(CUDA) first")
    endif()
    find_package(CUDAToolkit REQUIRED)
    target_link_libraries(${name} PRIVATE CUDA::cudart)
    set_target_properties(${name} PROPERTIES CUDA_RUNTIME_LIBRARY Shared)
    target_compile_options(${name} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr -lineinfo>)
  endif()
  if(ARG_OUTPUT_DIRECTORY)
    set_target_properties(${name} PROPERTIES LIBRARY_OUTPUT_DIRECTORY "${ARG_OUTPUT_DIRECTORY}")
  elseif(DEFINED KREG_PLUGIN_OUTPUT_DIRECTORY)
    set_target_properties(${name} PROPERTIES LIBRARY_OUTPUT_DIRECTORY "${KREG_PLUGIN_OUTPUT_DIRECTORY}")
  else()
    set_target_properties(${name} PROPERTIES LIBRARY_OUTPUT_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}")
  endif()
  if(KREG_INSTALL_PLUGINS AND NOT ARG_OUTPUT_DIRECTORY)
    # The CUDA runtime and cuBLAS may live outside the loader's default path (/usr/local/cuda).
    set_target_properties(${name} PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
    install(TARGETS ${name} LIBRARY DESTINATION "${KREG_PLUGIN_INSTALL_DIR}")
    set_property(GLOBAL APPEND PROPERTY KREG_INSTALLED_PLUGIN_TARGETS ${name})
  endif()
endfunction()
