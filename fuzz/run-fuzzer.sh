#!/usr/bin/env bash
# Builds the kernel-text fuzzer with clang++-14 and runs it for SECONDS on a corpus seeded with
# examples/kernels/*.hk and tests/text/data/*.hk. Exits non-zero when the fuzzer finds a crash,
# a hang (an input over 10 s), a leak or an out-of-memory; the reproducer is left in WORK.
#   fuzz/run-fuzzer.sh [SECONDS=60] [WORK=build-fuzz]
# Needs clang-14 and libclang-rt-14-dev (scripts/install-deps installs them).
set -euo pipefail
seconds=${1:-60}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mkdir -p "${2:-$root/build-fuzz}" && cd "${2:-$root/build-fuzz}" && pwd)

if ! command -v clang++-14 >/dev/null; then
  echo "run-fuzzer: clang++-14 not found; install clang-14 and libclang-rt-14-dev" >&2
  exit 2
fi

generator=()
if command -v ninja >/dev/null; then generator=(-G Ninja); fi
cmake -S "$root/fuzz" -B "$work/build" "${generator[@]}" -DCMAKE_CXX_COMPILER=clang++-14 \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$work/build" -j "${JOBS:-2}"

mkdir -p "$work/corpus" "$work/artifacts"
cp "$root"/examples/kernels/*.hk "$root"/tests/text/data/*.hk "$work/corpus/"

cd "$work"
ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
UBSAN_OPTIONS=print_stacktrace=1 \
  "$work/build/text_fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
  -max_len=4096 -dict="$root/fuzz/hk.dict" -artifact_prefix="$work/artifacts/" \
  -print_final_stats=1 "$work/corpus"
