#!/usr/bin/env bash
# Builds a fuzz target with clang++-14 and runs it for SECONDS on a corpus seeded with
# examples/kernels/*.hk, tests/text/data/*.hk and fuzz/corpus/*.hk, with the dictionary
# fuzz/hk.dict. Exits non-zero when the fuzzer finds a crash, a hang (an input over 10 s, 30 s for
# cpu_fuzzer), a leak or an out-of-memory; the reproducer is left in WORK/artifacts.
#   fuzz/run-fuzzer.sh [SECONDS=60] [WORK=build-fuzz] [TARGET=text_fuzzer] [libFuzzer flags...]
# TARGET: text_fuzzer (the parser), interp_fuzzer (parse, verify, run on the interpreter) or
# cpu_fuzzer (the same, then the CPU device on the same inputs, compared with the interpreter).
# One process: the corpus is WORK/corpus-TARGET and grows across runs.
# Needs clang-14 and libclang-rt-14-dev (scripts/install-deps installs them).
set -euo pipefail
seconds=${1:-60}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mkdir -p "${2:-$root/build-fuzz}" && cd "${2:-$root/build-fuzz}" && pwd)
target=${3:-text_fuzzer}
shift $(($# < 3 ? $# : 3))

if ! command -v clang++-14 >/dev/null; then
  echo "run-fuzzer: clang++-14 not found; install clang-14 and libclang-rt-14-dev" >&2
  exit 2
fi

generator=()
if command -v ninja >/dev/null; then generator=(-G Ninja); fi
# ccache, when installed, keeps a rebuild in a fresh work folder (a new build tree, CI) short.
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
cmake -S "$root/fuzz" -B "$work/build" "${generator[@]}" "${launcher[@]}" \
  -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$work/build" -j "${JOBS:-2}" --target "$target"

corpus="$work/corpus-$target"
mkdir -p "$corpus" "$work/artifacts"
cp "$root"/examples/kernels/*.hk "$root"/tests/text/data/*.hk "$root"/fuzz/corpus/*.hk "$corpus/"

# An input running longer than this is a hang. cpu_fuzzer runs the interpreter, a JIT compile and
# the CPU device for each kernel (under ASan, often at nice 19 on a loaded machine): it gets more.
unit_timeout=10
if [ "$target" = cpu_fuzzer ]; then unit_timeout=30; fi

cd "$work"
# allow_user_segv_handler: the CPU device's SIGSEGV handler turns faults in its buffers' guard
# pages into failed launches and passes every other fault on to ASan's handler.
ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1:allow_user_segv_handler=1 \
UBSAN_OPTIONS=print_stacktrace=1 \
  "$work/build/$target" -max_total_time="$seconds" -timeout="$unit_timeout" -rss_limit_mb=2048 \
  -max_len=4096 -dict="$root/fuzz/hk.dict" -artifact_prefix="$work/artifacts/$target-" \
  -print_final_stats=1 "$@" "$corpus"
