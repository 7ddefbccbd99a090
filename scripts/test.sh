#!/usr/bin/env bash
# Builds ctxdb and runs every test suite: first a normal build (engine,
# C ABI, CLI, bindings), then the native suites again under AddressSanitizer
# and UndefinedBehaviorSanitizer. Exits non-zero when anything fails.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

BUILD_DIR=$root/build "$root/scripts/build.sh"
ctest --test-dir "$root/build" --output-on-failure -j2

# The sanitizer build skips the benchmarks and the bindings: Python and Node
# would need the sanitizer runtime preloaded into the interpreter.
BUILD_DIR=$root/build-asan "$root/scripts/build.sh" -DCTXDB_SANITIZE=ON \
  -DCTXDB_BUILD_BENCH=OFF -DCTXDB_BUILD_NODE=OFF -DCTXDB_BUILD_PYTHON_TESTS=OFF
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir "$root/build-asan" --output-on-failure -j2

echo "all test suites passed"
