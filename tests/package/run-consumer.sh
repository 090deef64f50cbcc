#!/bin/bash
# run-consumer.sh install|deb|subdirectory SOURCE_DIR BUILD_DIR WORK_DIR
# Builds and runs tests/package/consumer against halfway as a user gets it (see CMakeLists.txt
# here). The tool paths, version and flags come from the environment ctest sets (HALFWAY_PKG_*).
set -euo pipefail
mode=$1 src=$2 build=$3 work=$4
consumer=$src/tests/package/consumer

fail() {
  echo "run-consumer.sh ($mode): $*" >&2
  exit 1
}

# configure_and_run BUILD_FOLDER CMAKE_ARGS...: configures, builds and runs the consumer, and checks
# what it printed and how its own file was compiled.
configure_and_run() {
  local dir=$1
  shift
  "$HALFWAY_PKG_CMAKE" -S "$consumer" -B "$dir" -G "$HALFWAY_PKG_GENERATOR" \
    -DCMAKE_CXX_COMPILER_LAUNCHER="$HALFWAY_PKG_CXX_LAUNCHER" \
    -DCMAKE_C_COMPILER_LAUNCHER="$HALFWAY_PKG_C_LAUNCHER" \
    -DCMAKE_EXPORT_COMPILE_COMMANDS=ON "$@"
  local start=$SECONDS
  "$HALFWAY_PKG_CMAKE" --build "$dir" --target consumer
  echo "run-consumer.sh ($mode): consumer built in $((SECONDS - start)) s" >&2
  check_flags "$dir/compile_commands.json"
  check_output "$dir/consumer"
}

# What halfway compiles its own files with must not reach the consumer's file.
check_flags() {
  local line
  line=$(grep '"command".*consumer\.cpp' "$1") || fail "no compile command for consumer.cpp in $1"
  for flag in -Werror -march=native VK_NO_PROTOTYPES -ffp-contract=off; do
    [[ $line != *"$flag"* ]] || fail "consumer.cpp compiled with halfway's private $flag: $line"
  done
}

check_output() {
  local out
  out=$("$1") || fail "$1 exited with status $?"
  echo "$out"
  grep -qx "halfway $HALFWAY_PKG_VERSION" <<<"$out" || fail "$1 did not print 'halfway $HALFWAY_PKG_VERSION'"
  [[ $(grep -c '^result: OK$' <<<"$out") == 2 ]] || fail "$1: expected two 'result: OK' reports"
  grep -q '^kernel consumer_fma_f16: interp (two-step) against cpu$' <<<"$out" ||
    fail "$1: no report of the cpu device"
  grep -q '^kernel consumer_fma_f16: interp (two-step) against vulkan' <<<"$out" ||
    fail "$1: no report of the vulkan device"
}

rm -rf "$work"
mkdir -p "$work"
case $mode in
install)
  prefix=$work/prefix
  "$HALFWAY_PKG_CMAKE" --install "$build" --prefix "$prefix" >/dev/null
  for f in bin/halfway include/halfway/version.hpp include/halfway/dsl.hpp lib/libhalfway_ir.a \
    lib/cmake/halfway/halfwayConfig.cmake lib/cmake/halfway/halfwayConfigVersion.cmake \
    lib/pkgconfig/halfway.pc share/man/man1/halfway.1 share/doc/halfway/LICENSE share/doc/halfway/CHANGELOG.md \
    share/doc/halfway/specs/errors.md; do
    [[ -f $prefix/$f ]] || fail "not installed: $f"
  done
  version=$("$prefix/bin/halfway" --version)
  [[ $version == "halfway $HALFWAY_PKG_VERSION" ]] || fail "halfway --version printed '$version'"
  configure_and_run "$work/cmake" -DCMAKE_PREFIX_PATH="$prefix" -DHALFWAY_EXPECTED_PREFIX="$prefix" \
    -DHALFWAY_EXPECTED_VERSION="$HALFWAY_PKG_VERSION" -DCMAKE_BUILD_TYPE=Release
  # The pkg-config route: one g++ command line from halfway.pc (and vulkan.pc for the consumer's
  # own calls into the loader).
  export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
  [[ $(pkg-config --modversion halfway) == "$HALFWAY_PKG_VERSION" ]] || fail "pkg-config --modversion"
  # shellcheck disable=SC2046 # the flags are words
  g++ -O1 "$consumer/consumer.cpp" -o "$work/consumer-pkg-config" \
    $(pkg-config --cflags --libs halfway vulkan)
  check_output "$work/consumer-pkg-config"
  ;;
deb)
  (cd "$work" && "$HALFWAY_PKG_CPACK" -G DEB --config "$build/CPackConfig.cmake" -B "$work/out" >/dev/null)
  deb=$(ls "$work"/out/halfway_*.deb) || fail "cpack made no .deb"
  dpkg-deb -f "$deb" Package Version Depends
  [[ $(dpkg-deb -f "$deb" Version) == "$HALFWAY_PKG_VERSION" ]] || fail "the .deb's version"
  dpkg-deb -x "$deb" "$work/root"
  [[ -f $work/root/usr/lib/cmake/halfway/halfwayConfig.cmake ]] || fail "no halfwayConfig.cmake under /usr/lib/cmake"
  [[ -x $work/root/usr/bin/halfway ]] || fail "no /usr/bin/halfway"
  configure_and_run "$work/cmake" -DCMAKE_PREFIX_PATH="$work/root/usr" \
    -DHALFWAY_EXPECTED_PREFIX="$work/root/usr" \
    -DHALFWAY_EXPECTED_VERSION="$HALFWAY_PKG_VERSION" -DCMAKE_BUILD_TYPE=Release
  ;;
subdirectory)
  # No build type (halfway must not force one); the flags of this build's configuration given
  # directly, so that the objects are the ones ccache already holds.
  configure_and_run "$work" -DHALFWAY_CONSUMER_MODE=subdirectory -DHALFWAY_SOURCE_DIR="$src" \
    -DCMAKE_CXX_FLAGS="$HALFWAY_PKG_CXX_FLAGS" -DCMAKE_C_FLAGS="$HALFWAY_PKG_C_FLAGS" \
    -DHALFWAY_NATIVE="$HALFWAY_PKG_NATIVE"
  ;;
*)
  fail "unknown mode"
  ;;
esac
echo "run-consumer.sh ($mode): OK"
