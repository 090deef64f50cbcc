"""Shared fixtures of the Python module's tests (run by ctest as python_module, label python).

ctest sets PYTHONPATH to the build's python/ folder, HALFWAY_SOURCE_DIR to the source tree and
HALFWAY_CLI to the halfway command line tool, whose JSON the module's reports must equal.
"""

import os
import pathlib

import pytest

import halfway

SOURCE_DIR = pathlib.Path(os.environ.get("HALFWAY_SOURCE_DIR", pathlib.Path(__file__).parents[2]))
EXAMPLES = SOURCE_DIR / "examples" / "kernels"


@pytest.fixture(scope="session")
def examples():
    return EXAMPLES


@pytest.fixture(scope="session")
def source_dir():
    return SOURCE_DIR


# Every device this build can make: the interpreter, the CPU JIT and Vulkan (lavapipe in CI).
DEVICES = halfway.devices()
