# kreg_add_plugin(<name> SOURCES <files...> [LIBRARIES <targets...>] [OUTPUT_DIRECTORY <dir>])
#
# Builds a kreg plugin: a MODULE library named <name>.so linked against kreg::sdk, with hidden
# visibility so that only the entry point is exported. Sources ending in .cu are compiled by nvcc and
# linked against the shared CUDA runtime. Used by the in-tree plugins and, through the installed
# package (find_package(kreg CONFIG)), by out-of-tree ones such as plugins/template.
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
    find_package(CUDAToolkit REQUIRED)
    target_link_libraries(${name} PRIVATE CUDA::cudart)
    set_target_properties(${name} PROPERTIES CUDA_RUNTIME_LIBRARY Shared)
    target_compile_options(${name} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr -lineinfo>)
  endif()
  if(ARG_OUTPUT_DIRECTORY)
    set_target_properties(${name} PROPERTIES LIBRARY_OUTPUT_DIRECTORY "${ARG_OUTPUT_DIRECTORY}")
  elseif(DEFINED KREG_PLUGIN_OUTPUT_DIRECTORY)
    set_target_properties(${name} PROPERTIES LIBRARY_OUTPUT_DIRECTORY "${KREG_PLUGIN_OUTPUT_DIRECTORY}")
  endif()
endfunction()
