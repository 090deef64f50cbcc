# Install rules: the static libraries and their headers (added by halfway_install_library), the
# generated version header, the halfway CLI, the specs and the legal and user documents; the CMake
# package (halfwayConfig.cmake, halfwayConfigVersion.cmake, the exported halfway:: targets), a
# pkg-config file, and CPack's Debian package of all of it.
include(CMakePackageConfigHelpers)

install(FILES ${HALFWAY_GENERATED_INCLUDE_DIR}/halfway/version.hpp
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/halfway)
if(TARGET halfway)
  install(TARGETS halfway RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  install(FILES ${PROJECT_BINARY_DIR}/halfway.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
endif()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/specs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/specs)
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE ${PROJECT_SOURCE_DIR}/README.md
              ${PROJECT_SOURCE_DIR}/CHANGELOG.md ${PROJECT_SOURCE_DIR}/docs/environment.md
        DESTINATION ${CMAKE_INSTALL_DOCDIR})

# Dependencies whose targets exist only when their areas are built (HALFWAY_SKIP_AREAS).
set(HALFWAY_CONFIG_DEPENDENCIES "")
set(HALFWAY_PC_REQUIRES "mpfr spdlog")
set(HALFWAY_PC_REQUIRES_PRIVATE "")
set(HALFWAY_PC_EXTRA_LIBS "")
if(TARGET halfway_codegen_llvm)
  # The build's own LLVM 19, as HalfwayDeps found it; the CPU device links it privately.
  string(APPEND HALFWAY_CONFIG_DEPENDENCIES
    "find_dependency(LLVM CONFIG PATHS \"${LLVM_DIR}\" NO_DEFAULT_PATH)\n"
    "if(NOT TARGET halfway::codegen_llvm_private)\n"
    "  add_library(halfway::codegen_llvm_private INTERFACE IMPORTED)\n"
    "  set_target_properties(halfway::codegen_llvm_private PROPERTIES INTERFACE_LINK_LIBRARIES LLVM)\n"
    "endif()\n")
  string(APPEND HALFWAY_PC_EXTRA_LIBS " -L${LLVM_LIBRARY_DIR} -lLLVM-${LLVM_VERSION_MAJOR}")
endif()
if(TARGET halfway_codegen_spirv)
  string(APPEND HALFWAY_CONFIG_DEPENDENCIES "find_dependency(SPIRV-Tools CONFIG)\n")
  string(APPEND HALFWAY_PC_REQUIRES " SPIRV-Tools")
endif()
if(TARGET halfway_vulkan_api)
  # Vulkan's headers only: the loader is opened at run time, never linked.
  string(APPEND HALFWAY_CONFIG_DEPENDENCIES "find_dependency(Vulkan)\n")
  set(HALFWAY_PC_REQUIRES_PRIVATE "vulkan")
  if(CMAKE_DL_LIBS)
    string(APPEND HALFWAY_PC_EXTRA_LIBS " -l${CMAKE_DL_LIBS}") # volk opens the loader
  endif()
endif()

# Link order for pkg-config: every library before the ones it uses.
set(HALFWAY_PC_LIBS "")
foreach(lib diff devices io text dsl vulkan cpu codegen_spirv codegen_llvm vulkan_api interp buffers
            policy ir numerics support)
  if(TARGET halfway_${lib})
    string(APPEND HALFWAY_PC_LIBS " -lhalfway_${lib}")
  endif()
endforeach()
string(STRIP "${HALFWAY_PC_LIBS}${HALFWAY_PC_EXTRA_LIBS} -pthread" HALFWAY_PC_LIBS)

set(HALFWAY_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/halfway)
install(EXPORT halfwayTargets NAMESPACE halfway:: DESTINATION ${HALFWAY_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/halfwayConfig.cmake.in
  ${PROJECT_BINARY_DIR}/generated/halfwayConfig.cmake INSTALL_DESTINATION ${HALFWAY_CMAKE_DIR})
# Before 1.0 a minor version may break the API, so only the same major.minor is compatible.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/generated/halfwayConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/generated/halfwayConfig.cmake
              ${PROJECT_BINARY_DIR}/generated/halfwayConfigVersion.cmake
        DESTINATION ${HALFWAY_CMAKE_DIR})
configure_file(${PROJECT_SOURCE_DIR}/cmake/halfway.pc.in ${PROJECT_BINARY_DIR}/generated/halfway.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/generated/halfway.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# cpack -G DEB (in the build folder): one package with everything above, depending on the Debian packages the
# libraries' users need to compile and link against them.
set(CPACK_PACKAGE_NAME halfway)
set(CPACK_PACKAGE_VENDOR "The halfway authors")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_GENERATOR DEB)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "The halfway authors")
set(CPACK_DEBIAN_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_PACKAGE_DEPENDS
    "libmpfr-dev, libspdlog-dev, libboost-dev, llvm-19-dev, libvulkan-dev, spirv-tools, spirv-headers, pkg-config")
# The -dev packages above bring the shared libraries the halfway CLI runs with as well.
# CPack writes its configuration into the top build folder: never take a parent's over.
if(PROJECT_IS_TOP_LEVEL)
  include(CPack)
endif()
