#!/usr/bin/env bash
# `npm pack` of the Node binding, installed into a fresh project with
# `npm install <tarball> --offline` (nothing may be downloaded), and a
# TypeScript agent loop type-checked with tsc --noEmit against the
# package's typings, then run on what was installed.
# usage: node_pack_test.sh SOURCE_DIR TSC
set -euo pipefail
src=$1 tsc=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
export npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false

tarball=$(cd "$src/bindings/node" && npm pack --silent --pack-destination "$work")
tar -tzf "$work/$tarball" >"$work/contents"
grep -qx 'package/build/ctxdb.node' "$work/contents" || fail "the tarball has no addon"
grep -qx 'package/build/libctxdb.so.1' "$work/contents" || fail "the tarball has no library"

mkdir "$work/app"
cd "$work/app"
echo '{"name":"app","version":"1.0.0","private":true}' >package.json
npm install --offline --silent "$work/$tarball" || fail "npm install --offline of $tarball"
[ ! -d node_modules/node-addon-api ] || fail "installing fetched node-addon-api (a build-time need)"

cp "$src/tests/install/node_agent.ts" agent.ts
# @types/node for process, console and require: the conformance suite's.
types=$(cd "$(dirname "$tsc")/../@types" && pwd)
"$tsc" --noEmit --strict --module nodenext --moduleResolution nodenext --target es2022 \
  --typeRoots "$types" --types node agent.ts || fail "agent.ts does not type-check"
"$tsc" --strict --module nodenext --moduleResolution nodenext --target es2022 \
  --typeRoots "$types" --types node --outDir out agent.ts
out=$(env -u CTXDB_NODE_ADDON node out/agent.js "$work/a.ctxdb") || fail "the agent loop failed: $out"
case "$out" in
  "ctxdb "*" from $work/app/node_modules/ctxdb/"*) echo "ok - $out" ;;
  *) fail "ctxdb did not come from the installed package: $out" ;;
esac
# The addon loads the library shipped beside it, not the build tree's.
ldd node_modules/ctxdb/build/ctxdb.node >"$work/ldd"
grep -q "node_modules/ctxdb/build/libctxdb.so.1" "$work/ldd" ||
  fail "the addon does not load the shipped library: $(grep ctxdb "$work/ldd")"
echo "ok - the installed addon loads the library shipped beside it"
