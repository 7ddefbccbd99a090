#!/usr/bin/env bash
# `pip install bindings/python` in a fresh venv with no package index, then
# an agent loop run from outside the source tree on what it installed: the
# package and the library shipped in its wheel.
# usage: python_venv_test.sh LIBRARY SOURCE_DIR
set -euo pipefail
lib=$1 src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

/usr/bin/python3 -m venv "$work/venv"
# --no-index: any attempt to reach an index fails the install.
CTXDB_LIB_PATH=$lib "$work/venv/bin/pip" install --no-index --no-cache-dir -q "$src/bindings/python" ||
  fail "pip install bindings/python"
site=$("$work/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
platlib=$("$work/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["platlib"])')
[ -f "$platlib/ctxdb/lib/libctxdb.so.1" ] || [ -f "$site/ctxdb/lib/libctxdb.so.1" ] ||
  fail "the installed package has no library"
cp "$src/tests/install/python_agent.py" "$work/"
# From outside the tree, with nothing pointing at the build: the package's own library.
out=$(cd "$work" && env -u CTXDB_LIB_PATH -u PYTHONPATH "$work/venv/bin/python" python_agent.py "$work/a.ctxdb") ||
  fail "the agent loop failed: $out"
case "$out" in
  "ctxdb "*" from $work/venv/"*"/ctxdb/lib/libctxdb.so.1") echo "ok - $out" ;;
  *) fail "the library did not come from the installed package: $out" ;;
esac
