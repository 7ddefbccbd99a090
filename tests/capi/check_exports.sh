#!/usr/bin/env bash
# The shared library exports exactly the functions ctxdb.h declares: every
# declared function is there, and nothing else (no C++ engine or SQLiteCpp
# symbols) leaks out. usage: check_exports.sh LIBCTXDB.so CTXDB_H
set -euo pipefail
lib=$1 header=$2
exported=$(nm -D --defined-only "$lib" | awk '{print $3}' | sort -u)
declared=$(grep -oE 'CTXDB_API[^(]*\bctxdb_[a-z0-9_]+\s*\(' "$header" |
  grep -oE 'ctxdb_[a-z0-9_]+' | sort -u)
status=0
extra=$(comm -23 <(echo "$exported") <(echo "$declared"))
missing=$(comm -13 <(echo "$exported") <(echo "$declared"))
if [ -n "$extra" ]; then
  echo "exported but not declared in ctxdb.h:"; echo "$extra" | head -20; status=1
fi
if [ -n "$missing" ]; then
  echo "declared in ctxdb.h but not exported:"; echo "$missing"; status=1
fi
[ $status -eq 0 ] && echo "exports: $(echo "$declared" | wc -l) functions, nothing else"
exit $status
