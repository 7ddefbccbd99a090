#!/usr/bin/env bash
# Builds ctxdb and runs every test suite: first a normal build (engine,
# C ABI, CLI, bindings), then the native suites again under AddressSanitizer
# and UndefinedBehaviorSanitizer. Exits non-zero when anything fails.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

BUILD_DIR=$root/build "$root/scripts/build.sh"
ctest --test-dir "$root/build" --output-on-failure -j2

# The sanitizer build runs the native suites (engine, C ABI, CLI); the
# bindings' suites would need the sanitizer runtime preloaded into Python
# and Node, so tests/CMakeLists.txt leaves them out of it.
BUILD_DIR=$root/build-asan "$root/scripts/build.sh" -DCTXDB_SANITIZE=ON \
  -DCTXDB_BUILD_BENCH=OFF -DCTXDB_BUILD_NODE=OFF
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir "$root/build-asan" --output-on-failure -j2

echo "all test suites passed"
