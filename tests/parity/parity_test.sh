#!/usr/bin/env bash
# The parity test: the scenario of scenario/ run through C, Python, Node and
# the CLI must give byte-identical exports, and they must equal
# expected_export.ndjson, so that a change of the canonical form or of the
# hashing shows up as a diff.
#
# usage: parity_test.sh PARITY_C CTXDB_CLI PYTHON NODE
#   environment: CTXDB_LIB_PATH (the library, for Python), PYTHONPATH
#   (bindings/python), CTXDB_NODE_ADDON (ctxdb.node). CTest passes all of
#   them (tests/parity/CMakeLists.txt). All four hosts are required: an
#   empty NODE or CTXDB_NODE_ADDON fails the test.
#
# The scenario is data: session.json is the ctxdb_session_create input;
# single.ndjson is appended one event per call, batch.ndjson in one batch
# call. Every event has its own "id" and "ts", so the export is determined
# by the input. Keep "agent_id" the first key of the session payload: the
# CLI and the Node binding build it as {agent_id, ...the rest}.
#
# When the export changes on purpose (a new canonical form, a new event in
# the scenario), regenerate the expected file from the C runner and review
# the diff:
#   d=$(mktemp -d); build/tests/parity/parity_c "$d/db" tests/parity/scenario \
#     > tests/parity/expected_export.ndjson; cp "$d/db.bundle.json" \
#     tests/parity/expected_bundle.json; rm -rf "$d"
# compile.json is a compile request over the session (only what `ctxdb
# context` has flags for); each runner writes its bundle to DB_PATH.bundle.json,
# which must equal expected_bundle.json.
set -uo pipefail

usage="usage: parity_test.sh PARITY_C CTXDB_CLI PYTHON NODE"
PARITY_C=${1:?$usage}
CLI=${2:?$usage}
PYTHON=${3:?$usage}
NODE=${4-}
HERE=$(cd "$(dirname "$0")" && pwd)
SCENARIO=$HERE/scenario
EXPECTED=$HERE/expected_export.ndjson
EXPECTED_BUNDLE=$HERE/expected_bundle.json
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
unset CTXDB_DB

status=0
problem() {
  echo "FAIL: $*" >&2
  status=1
}

if [ -z "$NODE" ]; then
  echo "FAIL: no node executable: the parity test runs on all four hosts" \
    "(install Node with scripts/setup.sh)" >&2
  exit 1
fi
if [ -z "${CTXDB_NODE_ADDON:-}" ] || [ ! -f "${CTXDB_NODE_ADDON}" ]; then
  echo "FAIL: the Node binding is not built (CTXDB_NODE_ADDON='${CTXDB_NODE_ADDON:-}'):" \
    "the parity test runs on all four hosts; install Node's headers" \
    "(scripts/setup.sh) and reconfigure, or leave the test out (ctest -E parity)" >&2
  exit 1
fi

# run NAME CMD...: runs one host; its export goes to $WORK/NAME.ndjson.
# A runner that fails a check still writes its export, which is then
# compared too: the bytes show what went wrong.
run() {
  local name=$1
  shift
  if ! "$@" >"$WORK/$name.ndjson" 2>"$WORK/$name.err"; then
    problem "the $name runner failed:"
    sed 's/^/  /' "$WORK/$name.err" >&2
  elif [ -s "$WORK/$name.err" ]; then
    sed "s/^/  $name: /" "$WORK/$name.err" >&2
  fi
  if [ ! -s "$WORK/$name.ndjson" ]; then
    problem "the $name runner wrote no export"
    return 1
  fi
  echo "$name: $(wc -l <"$WORK/$name.ndjson") events exported"
}

# show_difference A B: where two exports first differ, and the bytes there.
show_difference() {
  local a=$1 b=$2 where byte
  where=$(cmp "$a" "$b" 2>&1 | head -n 1)
  echo "  $where" >&2
  byte=$(sed -n 's/.* byte \([0-9]*\), line.*/\1/p' <<<"$where")
  [ -n "$byte" ] || return 0
  local from=$((byte > 60 ? byte - 60 : 1)) f
  echo "  from byte $from ('|' is a newline):" >&2
  for f in "$a" "$b"; do
    printf '    %-24s %s\n' "$(basename "$f"):" \
      "$(tail -c +"$from" "$f" | head -c 160 | tr '\n' '|')" >&2
  done
}

hosts=()
run c "$PARITY_C" "$WORK/c.ctxdb" "$SCENARIO" && hosts+=(c)
run python "$PYTHON" "$HERE/parity.py" "$WORK/python.ctxdb" "$SCENARIO" && hosts+=(python)
run node "$NODE" "$HERE/parity.js" "$WORK/node.ctxdb" "$SCENARIO" && hosts+=(node)
run cli env PYTHON="$PYTHON" bash "$HERE/parity_cli.sh" "$CLI" "$WORK/cli.ctxdb" "$SCENARIO" &&
  hosts+=(cli)

# Every host against the expected export (so also against each other).
for h in "${hosts[@]}"; do
  if cmp -s "$EXPECTED" "$WORK/$h.ndjson"; then
    echo "ok - $h: export identical to expected_export.ndjson"
  else
    problem "the $h export differs from expected_export.ndjson"
    show_difference "$EXPECTED" "$WORK/$h.ndjson"
  fi
done
# Hosts against each other: says whether a difference is one host's or all.
for h in "${hosts[@]}"; do
  [ "$h" != "${hosts[0]}" ] || continue
  if ! cmp -s "$WORK/${hosts[0]}.ndjson" "$WORK/$h.ndjson"; then
    problem "the $h export differs from the ${hosts[0]} export"
    show_difference "$WORK/${hosts[0]}.ndjson" "$WORK/$h.ndjson"
  fi
done

# The context compiler: the bundle of scenario/compile.json, which every
# runner writes next to its database, byte for byte the same everywhere.
for h in "${hosts[@]}"; do
  if [ ! -s "$WORK/$h.ctxdb.bundle.json" ]; then
    problem "the $h runner wrote no bundle"
  elif cmp -s "$EXPECTED_BUNDLE" "$WORK/$h.ctxdb.bundle.json"; then
    echo "ok - $h: bundle identical to expected_bundle.json"
  else
    problem "the $h bundle differs from expected_bundle.json"
    show_difference "$EXPECTED_BUNDLE" "$WORK/$h.ctxdb.bundle.json"
  fi
done

if [ "${#hosts[@]}" -ne 4 ]; then
  problem "only ${#hosts[@]} of 4 hosts exported: ${hosts[*]:-none}"
fi
if [ "$status" -eq 0 ]; then
  echo "parity: C, Python, Node and the CLI exported identical bytes and bundles"
fi
exit "$status"
