#!/usr/bin/env bash
# Installs what is missing, then configures and builds ctxdb into a build
# directory (default: build/). Extra arguments go to CMake's configure step.
#   scripts/build.sh                         # build/, RelWithDebInfo
#   BUILD_DIR=build-asan scripts/build.sh -DCTXDB_SANITIZE=ON
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build_dir=${BUILD_DIR:-$root/build}

"$root/scripts/setup.sh"
cmake -S "$root" -B "$build_dir" "$@" >/dev/null
cmake --build "$build_dir" -j"$(nproc)"
