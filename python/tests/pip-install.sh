#!/usr/bin/env bash
# ctest python_pip_install: `pip install .` of the source tree into a fresh target folder with the
# tests' virtual environment (scikit-build-core from it, no build isolation, so no network), then
# a kernel run through the installed module, which must be the one imported.
#   pip-install.sh PYTHON SOURCE_DIR BUILD_DIR TARGET_DIR CXX CC [LAUNCHER]
# BUILD_DIR is kept between runs (an unchanged tree rebuilds nothing). A fresh one is compiled
# through LAUNCHER (the main build's, ccache) with the main build's compilers: ccache hashes the
# compiler's name, and scikit-build-core would otherwise pick g++ where CMake picked c++. The
# build folder is a sibling of the main one, so that with CCACHE_BASEDIR every relative path is
# the same and the cache serves every object the main build compiled.
set -euo pipefail
python=$1 source=$2 build=$3 target=$4 cxx=$5 cc=$6 launcher=${7:-}
rm -rf "$target"
export CMAKE_ARGS="${CMAKE_ARGS:-} -DCMAKE_CXX_COMPILER=$cxx -DCMAKE_C_COMPILER=$cc"
if [ -n "$launcher" ]; then
  export CCACHE_BASEDIR=$source CCACHE_NOHASHDIR=1
  CMAKE_ARGS+=" -DCMAKE_CXX_COMPILER_LAUNCHER=$launcher -DCMAKE_C_COMPILER_LAUNCHER=$launcher"
fi
start=$(date +%s)
"$python" -m pip install --no-build-isolation --no-deps --disable-pip-version-check --quiet \
  --target "$target" --config-settings=build-dir="$build" "$source"
echo "pip install: $(($(date +%s) - start)) s"
cd "$target"
PYTHONPATH=$target "$python" - "$source" "$target" <<'PY'
import os, sys
import numpy as np
import halfway
source, target = sys.argv[1:]
assert os.path.dirname(halfway.__file__) == target, halfway.__file__
k = halfway.load(os.path.join(source, "examples/kernels/narrow_f16.hk"))["narrow_f16"]
a = np.arange(100, dtype=np.float32) / 8
out = k.run("cpu", grid=100, a=a, b=a, c=a)["out16"]
assert out.dtype == np.float16 and np.array_equal(out, (a * a + a).astype(np.float16))
assert halfway.diff(k, "cpu", grid=256)["ok"]
print("installed module", halfway.__version__, "runs")
PY
