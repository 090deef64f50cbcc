# Finds every dependency; a missing one stops configuration with the Debian package to install.

macro(halfway_require found what package)
  if(NOT ${found})
    message(FATAL_ERROR "halfway needs ${what}: install the Debian package '${package}' "
                        "(scripts/install-deps installs everything)")
  endif()
endmacro()

find_package(Threads REQUIRED)
find_package(PkgConfig)
halfway_require(PkgConfig_FOUND "pkg-config" "pkg-config")

pkg_check_modules(MPFR IMPORTED_TARGET mpfr)
halfway_require(MPFR_FOUND "MPFR" "libmpfr-dev")

find_package(spdlog CONFIG QUIET)
halfway_require(spdlog_FOUND "spdlog" "libspdlog-dev")

find_package(Boost 1.74 QUIET)
halfway_require(Boost_FOUND "Boost (Spirit X3)" "libboost-dev")

# LLVM's version file wants "19.1", so ask without a version and check the major number.
find_package(LLVM CONFIG QUIET PATHS /usr/lib/llvm-19/lib/cmake/llvm NO_DEFAULT_PATH)
if(NOT LLVM_FOUND OR NOT LLVM_VERSION_MAJOR EQUAL 19)
  message(FATAL_ERROR "halfway needs LLVM 19: install the Debian package 'llvm-19-dev'")
endif()

find_package(Vulkan QUIET)
halfway_require(Vulkan_FOUND "the Vulkan loader and headers" "libvulkan-dev")
find_path(VOLK_SOURCE_DIR volk.c PATHS /usr/src/volk /usr/share/volk /usr/include NO_DEFAULT_PATH)
find_path(VOLK_INCLUDE_DIR volk.h)
if(NOT VOLK_SOURCE_DIR OR NOT VOLK_INCLUDE_DIR)
  message(FATAL_ERROR "halfway needs volk: install the Debian package 'libvulkan-volk-dev'")
endif()

find_path(SPIRV_HEADERS_DIR spirv/unified1/spirv.hpp11)
halfway_require(SPIRV_HEADERS_DIR "SPIRV-Headers" "spirv-headers")
find_package(SPIRV-Tools CONFIG QUIET)
halfway_require(SPIRV-Tools_FOUND "SPIRV-Tools" "spirv-tools")

find_path(CLI11_INCLUDE_DIR CLI/CLI.hpp)
halfway_require(CLI11_INCLUDE_DIR "CLI11" "libcli11-dev")

# GoogleTest only for our own tests: a project that uses halfway as a subproject does not need it.
if(HALFWAY_BUILD_TESTS)
  find_package(GTest QUIET)
  halfway_require(GTest_FOUND "GoogleTest" "libgtest-dev")
  include(GoogleTest)
endif()

if(HALFWAY_BUILD_BENCH)
  find_package(benchmark QUIET)
  halfway_require(benchmark_FOUND "Google Benchmark" "libbenchmark-dev")
endif()
