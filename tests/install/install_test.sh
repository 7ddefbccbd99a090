#!/usr/bin/env bash
# Installs the build under a fresh prefix and builds programs outside the
# tree against it, as a user of the installed library would: a C program
# with pkg-config, and a C, a C++ and a static C program with
# find_package(ctxdb). Each records a session and verifies it; the
# installed CLI reads what they wrote.
# usage: install_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix

fail() { echo "FAIL: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$prefix" >/dev/null
libdir=$(dirname "$(find "$prefix" -name 'libctxdb.so' | head -1)")
[ -f "$libdir/libctxdb.a" ] || fail "no static library in $libdir"
[ -f "$prefix/include/ctxdb/ctxdb.h" ] || fail "no header"
[ -x "$prefix/bin/ctxdb" ] || fail "no CLI"

# The installed program's output: the verify report of its session.
expect_agent() { # NAME DB OUTPUT
  case "$3" in
    "ctxdb "*': {"ok":true,"sessions":1,"events":2'*) echo "ok - $1" ;;
    *) fail "$1 printed: $3" ;;
  esac
}

# pkg-config, from wherever the prefix went (the .pc file is relocatable).
export PKG_CONFIG_PATH=$libdir/pkgconfig
[ "$(pkg-config --modversion ctxdb)" = "$("$prefix/bin/ctxdb" --version | awk '{print $2}')" ] ||
  fail "pkg-config's version is not the CLI's"
# shellcheck disable=SC2046
cc -std=c99 -Wall -Werror -o "$work/agent_pc" "$src/tests/install/consumer/agent.c" \
  $(pkg-config --cflags --libs ctxdb) -Wl,-rpath,"$libdir"
expect_agent "pkg-config: a C program" pc "$("$work/agent_pc" "$work/pc.ctxdb")"

# find_package(ctxdb): the shared library from C and C++, the archive.
cmake -S "$src/tests/install/consumer" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_BUILD_RPATH="$libdir" >/dev/null
cmake --build "$work/consumer" -j2 >/dev/null
expect_agent "find_package: a C program" c "$("$work/consumer/agent_c" "$work/c.ctxdb")"
expect_agent "find_package: a C++ program" cpp "$("$work/consumer/agent_cpp" "$work/cpp.ctxdb")"
expect_agent "find_package: a static C program" static \
  "$("$work/consumer/agent_static" "$work/static.ctxdb")"
case "$(readelf -d "$work/consumer/agent_static")" in
  *libctxdb*) fail "the static program needs libctxdb.so" ;;
esac
case "$(readelf -d "$work/consumer/agent_c")" in
  *libctxdb.so.1*) ;;
  *) fail "agent_c does not need libctxdb.so.1" ;;
esac

# The installed CLI runs on the installed library (its RUNPATH is relative).
loaded=$(ldd "$prefix/bin/ctxdb" | awk '/libctxdb/ { print $3 }')
[ "$(realpath "$loaded")" = "$(realpath "$libdir/libctxdb.so.1")" ] ||
  fail "the CLI loads $loaded, not the installed $libdir/libctxdb.so.1"
out=$("$prefix/bin/ctxdb" --db "$work/c.ctxdb" verify)
[ "$out" = "ok: 1 sessions, 2 events" ] || fail "installed CLI: $out"
echo "ok - the installed CLI reads what they wrote"
# Exact counts with no configuration: the installed library carries the ranks.
n=$(printf 'hello world' | env -u CTXDB_TOKENIZER_DATA "$prefix/bin/ctxdb" tokens)
[ "$n" = 2 ] || fail "installed ctxdb tokens: $n"
echo "ok - the installed CLI counts tokens exactly with no configuration"
