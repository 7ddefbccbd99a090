#!/usr/bin/env bash
# Fails when a C or C++ file in the tree differs from what clang-format
# (with the root .clang-format) would write. `scripts/check-format.sh --fix`
# rewrites the files instead.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
mapfile -t files < <(git ls-files --cached --others --exclude-standard \
  'engine/*.cpp' 'engine/*.hpp' 'capi/*.cpp' 'include/*.h' 'include/*.hpp' \
  'bindings/cli/*.cpp' 'bindings/cli/*.hpp' 'bindings/node/src/*.cc' \
  'tests/*.c' 'tests/*.h' 'tests/*.cpp' 'tests/*.hpp' 'bench/*.c' 'bench/*.cpp')
if [ "${1:-}" = "--fix" ]; then
  clang-format -i "${files[@]}"
  exit 0
fi
clang-format --dry-run --Werror "${files[@]}"
echo "format: ${#files[@]} files formatted"
