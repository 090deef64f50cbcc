# Helpers that give every halfway target the same flags.

# Flags shared by every target we compile ourselves. -ffp-contract=off is not optional: the
# interpreter and everything that computes reference values must round each operation on its own,
# and g++ in GNU mode with -march=native would otherwise contract a*b+c into an FMA.
function(halfway_flags target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Werror -Wno-psabi -Wno-missing-field-initializers -ffp-contract=off)
  if(HALFWAY_NATIVE)
    target_compile_options(${target} PRIVATE -march=native)
  endif()
  if(HALFWAY_SANITIZE)
    # GCC 12 -Warray-bounds and -Wmaybe-uninitialized misfire on sanitizer-instrumented code.
    target_compile_options(${target} PRIVATE -fsanitize=${HALFWAY_SANITIZE} -fno-omit-frame-pointer
                                             -fno-sanitize-recover=all -Wno-error=array-bounds
                                             -Wno-error=maybe-uninitialized)
    target_link_options(${target} PRIVATE -fsanitize=${HALFWAY_SANITIZE})
  endif()
endfunction()

# halfway_library(<area> SOURCES ... [DEPS ...] [PRIVATE_DEPS ...])
# Creates halfway_<area> (alias halfway::<area>) with public headers in <area>/include.
# Every halfway:: dependency must already be defined: areas are added in dependency order (the
# root CMakeLists.txt), so a lower area linking a higher one, or a cycle, stops the configure step.
# The library joins HALFWAY_LIBRARIES, which the `layers` test reads (halfway_write_layers).
function(halfway_library area)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;PRIVATE_DEPS" ${ARGN})
  foreach(dep IN LISTS ARG_DEPS ARG_PRIVATE_DEPS)
    if(dep MATCHES "^halfway::" AND NOT TARGET ${dep})
      message(FATAL_ERROR "halfway::${area} (${CMAKE_CURRENT_SOURCE_DIR}) links ${dep}, which is "
                          "not defined yet: an area may link only the areas the root "
                          "CMakeLists.txt lists before it")
    endif()
  endforeach()
  set_property(GLOBAL APPEND PROPERTY HALFWAY_LIBRARIES halfway_${area})
  add_library(halfway_${area} ${ARG_SOURCES})
  add_library(halfway::${area} ALIAS halfway_${area})
  target_include_directories(halfway_${area} PUBLIC
    $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include> $<INSTALL_INTERFACE:include>)
  target_link_libraries(halfway_${area} PUBLIC ${ARG_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
  # PUBLIC on purpose: the headers are C++20, so whoever includes them compiles as C++20 or later.
  target_compile_features(halfway_${area} PUBLIC cxx_std_20)
  set_target_properties(halfway_${area} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  halfway_flags(halfway_${area})
  halfway_install_library(halfway_${area} ${area} ${CMAKE_CURRENT_SOURCE_DIR}/include)
endfunction()

# halfway_install_library(<target> <export name> <include dir>)
# Installs a library and its public headers, and adds it to the export set halfwayTargets, where
# it is halfway::<export name> (the same name as the alias in the build tree). The list of
# installed libraries, in the order they were declared, feeds the pkg-config file.
function(halfway_install_library target export_name include_dir)
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${export_name})
  if(NOT HALFWAY_INSTALL)
    return()
  endif()
  install(TARGETS ${target} EXPORT halfwayTargets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  if(include_dir)
    install(DIRECTORY ${include_dir}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  endif()
  set_property(GLOBAL APPEND PROPERTY HALFWAY_INSTALLED_LIBRARIES ${target})
endfunction()

# halfway_test(<name> LABEL <area> SOURCES ... DEPS ...)
# One GoogleTest executable per module, registered with ctest under its area label.
function(halfway_test name)
  cmake_parse_arguments(ARG "" "LABEL;TIMEOUT" "SOURCES;DEPS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gtest_main)
  target_compile_definitions(${name} PRIVATE
    HALFWAY_SOURCE_DIR="${PROJECT_SOURCE_DIR}" HALFWAY_BINARY_DIR="${PROJECT_BINARY_DIR}")
  halfway_flags(${name})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 600)
  endif()
  # Vulkan tests run with the validation layer and fail on any message. Under AddressSanitizer,
  # whatever runs lavapipe (the vulkan tests, the op table on every device, the kernel campaign,
  # the workloads) leaves the driver's allocations behind in a library unloaded before the leak
  # report: asan_no_leaks.cpp says so.
  if(HALFWAY_SANITIZE AND ARG_LABEL MATCHES "^(vulkan|ops|kernelgen|examples|fusion)$")
    target_sources(${name} PRIVATE ${PROJECT_SOURCE_DIR}/cmake/asan_no_leaks.cpp)
  endif()
  gtest_discover_tests(${name} DISCOVERY_MODE PRE_TEST
    PROPERTIES LABELS "${ARG_LABEL}" TIMEOUT ${ARG_TIMEOUT} ENVIRONMENT HALFWAY_VK_VALIDATION=1)
endfunction()

# halfway_fuzz_test(<test name> <fuzz target> <label>)
# Runs a libFuzzer target of fuzz/ briefly (15 s) through fuzz/run-fuzzer.sh, which builds it with
# clang++-14 on first use. Skipped without clang++-14 and libFuzzer (libclang-rt-14-dev). Every
# target shares one work folder, so they never build at the same time. Long campaigns: scripts/fuzz.
# Not registered in a sanitizer build: the fuzz targets carry their own ASan and UBSan, so running
# them again from build-asan would only build them a second time (minutes of CI for nothing new).
function(halfway_fuzz_test name target label)
  if(HALFWAY_SANITIZE)
    return()
  endif()
  find_program(HALFWAY_CLANGXX14 clang++-14)
  file(GLOB libfuzzer /usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a)
  if(HALFWAY_CLANGXX14 AND libfuzzer)
    add_test(NAME ${name}
      COMMAND ${PROJECT_SOURCE_DIR}/fuzz/run-fuzzer.sh 15 ${PROJECT_BINARY_DIR}/fuzz ${target})
    set_tests_properties(${name} PROPERTIES LABELS ${label} TIMEOUT 1200 RESOURCE_LOCK halfway_fuzz)
  endif()
endfunction()

# halfway_write_layers(<file>)
# Writes, at generate time, one line per library of HALFWAY_LIBRARIES for the `layers` test
# (tests/layers/check_layers.py): target, source folder, sources and link libraries, separated by
# tabs (lists by ;).
function(halfway_write_layers file)
  get_property(libraries GLOBAL PROPERTY HALFWAY_LIBRARIES)
  set(content "")
  foreach(t IN LISTS libraries)
    string(APPEND content "${t}\t$<TARGET_PROPERTY:${t},SOURCE_DIR>\t"
           "$<TARGET_PROPERTY:${t},SOURCES>\t$<TARGET_PROPERTY:${t},LINK_LIBRARIES>\n")
  endforeach()
  file(GENERATE OUTPUT ${file} CONTENT "${content}")
endfunction()
