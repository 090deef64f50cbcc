# halfway_shaderc: an INTERFACE target that links shaderc, for the hand-written GLSL baselines in
# tests and benchmarks. Never link it into a halfway library.
#
# Why this is not a plain target_link_libraries(shaderc): neither Debian's libshaderc.so nor
# libshaderc_combined.a is self-contained, and shaderc.pc leaves out what they need. What links is
# the combined archive plus glslang's and SPIRV-Tools' static libraries, all in one RESCAN link
# group (their references run in both directions), plus Threads. See docs/measured.md.
#
# The archives are found by name rather than through find_package(glslang): Debian 12's
# glslang-config.cmake refuses to load unless /usr/bin/glslangValidator (package glslang-tools)
# is installed, which nothing else here needs.
#
# Usage: include(HalfwayShaderc) in any directory, then link halfway_shaderc. The imported targets
# are GLOBAL so that tests/ and bench/ share the one definition.

if(TARGET halfway_shaderc)
  return()
endif()

find_path(HALFWAY_SHADERC_INCLUDE_DIR shaderc/shaderc.hpp)
halfway_require(HALFWAY_SHADERC_INCLUDE_DIR "shaderc" "libshaderc-dev")

set(_halfway_shaderc_group "")
foreach(_lib shaderc_combined glslang SPIRV MachineIndependent GenericCodeGen OSDependent
             OGLCompiler HLSL SPIRV-Tools-opt SPIRV-Tools)
  string(MAKE_C_IDENTIFIER "HALFWAY_LIB_${_lib}" _var)
  find_library(${_var} NAMES lib${_lib}.a)
  if(_lib STREQUAL "shaderc_combined")
    set(_package libshaderc-dev)
  elseif(_lib MATCHES "^SPIRV-Tools")
    set(_package spirv-tools)
  else()
    set(_package glslang-dev)
  endif()
  halfway_require(${_var} "lib${_lib}.a (for shaderc)" ${_package})
  add_library(halfway_shaderc_${_lib} STATIC IMPORTED GLOBAL)
  set_target_properties(halfway_shaderc_${_lib} PROPERTIES IMPORTED_LOCATION ${${_var}})
  list(APPEND _halfway_shaderc_group halfway_shaderc_${_lib})
endforeach()
list(JOIN _halfway_shaderc_group "," _halfway_shaderc_group)

add_library(halfway_shaderc INTERFACE)
target_include_directories(halfway_shaderc INTERFACE ${HALFWAY_SHADERC_INCLUDE_DIR})
target_link_libraries(halfway_shaderc INTERFACE
  "$<LINK_GROUP:RESCAN,${_halfway_shaderc_group}>" Threads::Threads)
