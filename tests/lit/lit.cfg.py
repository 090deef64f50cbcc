# lit configuration of halfway's textual tests: .hk kernels whose `// RUN:` lines run the built
# `halfway` and check its output with FileCheck (LLVM 19). ctest passes the paths as parameters
# (tests/lit/CMakeLists.txt); by hand:
#   python3 /usr/lib/llvm-19/build/utils/lit/lit.py -sv tests/lit \
#     --param halfway=build/tools/halfway/halfway --param exec_root=build/tests/lit
import os

import lit.formats

config.name = "halfway"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".hk"]
config.test_source_root = os.path.dirname(os.path.abspath(__file__))
# Scratch files (%t) go to the build tree, never next to the sources.
config.test_exec_root = os.path.abspath(lit_config.params.get("exec_root", "lit-output"))

halfway = lit_config.params.get("halfway")
if not halfway or not os.access(halfway, os.X_OK):
    lit_config.fatal("pass --param halfway=PATH to the built halfway binary (got %r)" % halfway)
llvm_bin = lit_config.params.get("llvm_bin", "/usr/lib/llvm-19/bin")
for tool in ("FileCheck", "not"):
    if not os.access(os.path.join(llvm_bin, tool), os.X_OK):
        lit_config.fatal("%s not found in %s (Debian package llvm-19-tools)" % (tool, llvm_bin))

# FileCheck and `not` come from LLVM 19; the SPIRV-Tools programs (spirv-as, spirv-val) from PATH.
config.environment["PATH"] = os.pathsep.join([llvm_bin, os.environ.get("PATH", "")])
# No colours, no locale surprises, the same output on every machine.
config.environment["NO_COLOR"] = "1"
config.environment["LC_ALL"] = "C"
# Under AddressSanitizer (scripts/test --sanitize) a halfway process that ran lavapipe exits with
# the driver's allocations in a library already unloaded, which LeakSanitizer reports and cannot
# suppress by name (cmake/asan_no_leaks.cpp): leak reports are off for the commands the textual
# tests run. halfway's own leaks are the unit tests' and the catalogue's to find.
config.environment["ASAN_OPTIONS"] = ":".join(
    filter(None, [os.environ.get("ASAN_OPTIONS", ""), "detect_leaks=0"]))
for var in ("HOME", "XDG_RUNTIME_DIR", "MESA_SHADER_CACHE_DIR", "TMPDIR"):
    if var in os.environ:
        config.environment[var] = os.environ[var]

repo = os.path.dirname(os.path.dirname(config.test_source_root))
config.substitutions.append(("%halfway", halfway))
config.substitutions.append(("%examples", os.path.join(repo, "examples", "kernels")))
# `%status 2 CMD...` succeeds only when CMD exits with exactly that status (`not` accepts any
# failure, and an error must be status 2, not a crash).
config.substitutions.append(
    ("%status", "%s %s" % (lit_config.params.get("python", "python3"),
                           os.path.join(config.test_source_root, "status.py"))))

# `%python`: the Python that runs lit, for small checks of dumped files.
config.substitutions.append(("%python", lit_config.params.get("python", "python3")))

# `numpy-ml-dtypes`: that Python can import NumPy and ml_dtypes, for the tests that read halfway's
# .npy files back the way a NumPy user would (tests/lit/npy).
import subprocess

try:
    if subprocess.run([lit_config.params.get("python", "python3"), "-c", "import numpy, ml_dtypes"],
                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60).returncode == 0:
        config.available_features.add("numpy-ml-dtypes")
except (OSError, subprocess.TimeoutExpired):
    pass

# The parts of halfway this build has (tests/lit/CMakeLists.txt); by hand, assume all of them.
features = lit_config.params.get("features", "llvm-codegen,spirv-codegen,cpu-device")
for feature in features.split(","):
    if feature:
        config.available_features.add(feature)

# The CPU device vectorises narrowings 16 wide on hosts with AVX-512 (codegen/llvm/src/host.cpp
# asks LLVM for the host's features; the kernel reads the same CPUID bit).
# Without AVX-512 but with F16C, code that rounds to f16 gets 8.
try:
    with open("/proc/cpuinfo") as cpuinfo:
        flags = next((line for line in cpuinfo if line.startswith("flags")), "") + " "
        if " avx512f " in flags:
            config.available_features.add("avx512")
        if " f16c " in flags:
            config.available_features.add("f16c")
except OSError:
    pass
