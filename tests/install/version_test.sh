#!/usr/bin/env bash
# One version: the project's (CMakeLists.txt) is the header's macros, the
# Python package's and the Node package's. Fails naming the file that differs.
# usage: version_test.sh PROJECT_VERSION SOURCE_DIR
set -euo pipefail
want=$1 src=$2
IFS=. read -r major minor patch <<<"$want"
status=0
check() { # WHAT FOUND
  if [ "$2" = "$want" ]; then echo "ok - $1: $2"; else echo "FAIL: $1 says '$2', the project $want"; status=1; fi
}
h=$src/include/ctxdb/ctxdb.h
macro() { awk -v m="$1" '$1 == "#define" && $2 == m { print $3 }' "$h" | tr -d '"'; }
check "ctxdb.h CTXDB_VERSION_STRING" "$(macro CTXDB_VERSION_STRING)"
check "ctxdb.h CTXDB_VERSION_MAJOR.MINOR.PATCH" \
  "$(macro CTXDB_VERSION_MAJOR).$(macro CTXDB_VERSION_MINOR).$(macro CTXDB_VERSION_PATCH)"
number=$((major * 1000000 + minor * 1000 + patch))
[ "$(macro CTXDB_VERSION_NUMBER)" = "$number" ] && echo "ok - CTXDB_VERSION_NUMBER: $number" ||
  { echo "FAIL: CTXDB_VERSION_NUMBER is $(macro CTXDB_VERSION_NUMBER), not $number"; status=1; }
check "bindings/python/pyproject.toml" \
  "$(sed -n 's/^version = "\(.*\)"$/\1/p' "$src/bindings/python/pyproject.toml")"
check "bindings/python/ctxdb/__init__.py" \
  "$(sed -n 's/^__version__ = "\(.*\)"$/\1/p' "$src/bindings/python/ctxdb/__init__.py")"
node_version() { node -p "require(process.argv[1]).version" "$1"; }
check "bindings/node/package.json" "$(node_version "$src/bindings/node/package.json")"
check "bindings/node/package-lock.json" "$(node_version "$src/bindings/node/package-lock.json")"
exit $status
