# The module's pytest suite (label python), run by the interpreter of the virtual environment
# scripts/python-env makes (NumPy, ml_dtypes, pytest, scikit-build-core from PyPI). Registered
# only when that environment exists and its interpreter has the ABI the module was built for (the
# module itself is not built in sanitizer builds: python/CMakeLists.txt).
if(NOT TARGET halfway)
  return()
endif()
set(HALFWAY_PYTHON_VENV ${PROJECT_BINARY_DIR}/venv CACHE PATH
    "Virtual environment of the Python tests (made by scripts/python-env)")
set(_python ${HALFWAY_PYTHON_VENV}/bin/python)
set(_soabi "")
if(EXISTS ${_python})
  execute_process(
    COMMAND ${_python} -c "import sysconfig, numpy, ml_dtypes, pytest; print(sysconfig.get_config_var('SOABI'))"
    OUTPUT_VARIABLE _soabi OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
endif()
if(NOT _soabi)
  message(STATUS "halfway: Python tests skipped: no virtual environment with numpy, ml_dtypes and "
                 "pytest at ${HALFWAY_PYTHON_VENV} (scripts/python-env makes it)")
  return()
endif()
if(NOT _soabi STREQUAL Python3_SOABI)
  message(STATUS "halfway: Python tests skipped: ${_python} is ${_soabi}, the module is built for "
                 "${Python3_SOABI} (${Python3_EXECUTABLE})")
  return()
endif()

add_test(NAME python_module
  COMMAND ${_python} -m pytest -q -p no:cacheprovider ${CMAKE_CURRENT_SOURCE_DIR}/tests)
set_tests_properties(python_module PROPERTIES LABELS python TIMEOUT 300
  ENVIRONMENT "PYTHONPATH=${CMAKE_CURRENT_BINARY_DIR};HALFWAY_VK_VALIDATION=1;XDG_RUNTIME_DIR=/tmp;HALFWAY_SOURCE_DIR=${PROJECT_SOURCE_DIR};HALFWAY_CLI=$<TARGET_FILE:halfway>")

# `pip install .` (pyproject.toml) into a fresh folder, and a launch through the installed module.
# Its build folder is kept next to this build's; a fresh one compiles the module's libraries again,
# served by ccache when this build uses it (pip-install.sh).
add_test(NAME python_pip_install
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/tests/pip-install.sh ${_python} ${PROJECT_SOURCE_DIR}
          ${PROJECT_BINARY_DIR}-python-pip ${CMAKE_CURRENT_BINARY_DIR}/pip-target
          ${CMAKE_CXX_COMPILER} ${CMAKE_C_COMPILER} "${CMAKE_CXX_COMPILER_LAUNCHER}")
set_tests_properties(python_pip_install PROPERTIES LABELS python TIMEOUT 1800
  ENVIRONMENT "XDG_RUNTIME_DIR=/tmp")
