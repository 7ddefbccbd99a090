#!/usr/bin/env bash
# The parity scenario (tests/parity/scenario/) run through the `ctxdb` CLI.
# usage: parity_cli.sh PATH/TO/ctxdb DB_PATH [SCENARIO_DIR]
#
# `session new` with the --id, --event-id, --ts and --meta (the payload) of
# session.json,
# `append` once per line of single.ndjson and once with all of batch.ndjson,
# `log --json` to read the session back, `verify`, then `export` to stdout.
# session.json is taken apart with $PYTHON (default python3): the shell has
# no JSON parser, and the CLI takes the session as flags. A failed command
# stops it; a failed check (event count, verify) is reported on stderr and
# the export still written, so the driver can show its bytes; exit status 1.
set -euo pipefail

CLI=${1:?usage: parity_cli.sh PATH/TO/ctxdb DB_PATH [SCENARIO_DIR]}
DB=${2:?usage: parity_cli.sh PATH/TO/ctxdb DB_PATH [SCENARIO_DIR]}
SCENARIO=${3:-$(cd "$(dirname "$0")" && pwd)/scenario}
PYTHON=${PYTHON:-python3}
unset CTXDB_DB

fail() {
  echo "parity_cli.sh: $*" >&2
  exit 1
}

problems=0
problem() {
  echo "parity_cli.sh: $*" >&2
  problems=$((problems + 1))
}

ctx() { "$CLI" --db "$DB" "$@"; }

# id, ts and payload of session.json, NUL-separated; anything else in it
# has no `session new` flag, which is an error rather than something to drop.
{
  IFS= read -r -d '' id
  IFS= read -r -d '' event_id
  IFS= read -r -d '' ts
  IFS= read -r -d '' payload
} < <("$PYTHON" - "$SCENARIO/session.json" <<'EOF'
import json, sys
with open(sys.argv[1], encoding="utf-8") as f:
    s = json.load(f)
extra = sorted(set(s) - {"id", "event_id", "ts", "payload"})
if extra:
    sys.exit(f"session.json: `ctxdb session new` has no flag for {extra}")
sys.stdout.write("\0".join([s.get("id", ""), s.get("event_id", ""), str(s.get("ts", "")),
                            json.dumps(s["payload"], ensure_ascii=False)]) + "\0")
EOF
) || fail "cannot read $SCENARIO/session.json"
[ -n "${payload:-}" ] || fail "cannot read $SCENARIO/session.json"

args=(--meta "$payload")
[ -z "$id" ] || args+=(--id "$id")
[ -z "$event_id" ] || args+=(--event-id "$event_id")
[ -z "$ts" ] || args+=(--ts "$ts")
sid=$(ctx session new "${args[@]}")

# single.ndjson: one `ctxdb append` per line.
singles=0
while IFS= read -r line || [ -n "$line" ]; do
  [ -n "${line//[[:space:]]/}" ] || continue
  printf '%s\n' "$line" | ctx append "$sid" >/dev/null
  singles=$((singles + 1))
done <"$SCENARIO/single.ndjson"

# batch.ndjson: one `ctxdb append` with every line.
batch=$(grep -c '[^[:space:]]' "$SCENARIO/batch.ndjson" || true)
ctx append "$sid" <"$SCENARIO/batch.ndjson" >/dev/null

expected=$((1 + singles + batch))
seen=$(ctx log "$sid" --json | wc -l)
[ "$seen" -eq "$expected" ] || problem "the session has $seen events, expected $expected"

report=$(ctx verify) || true
[ "$report" == "ok: 1 sessions, $expected events" ] || problem "verify: $report"

# The context compiler: compile.json as `ctxdb context` flags; the bundle
# goes next to the DB.
ctx_args=()
while IFS= read -r -d '' arg; do ctx_args+=("$arg"); done < <("$PYTHON" - "$SCENARIO/compile.json" <<'EOF'
import json, sys
with open(sys.argv[1], encoding="utf-8") as f:
    r = json.load(f)
extra = sorted(set(r) - {"session_id", "max_tokens", "reserved_output_tokens", "instructions",
                         "request", "continuation"})
if extra or any(i.get("kind") != "system" or set(i) != {"kind", "text"} for i in r.get("instructions", [])):
    sys.exit(f"compile.json: `ctxdb context` has no flag for {extra or 'these instructions'}")
args = [r["session_id"], "--budget", str(r["max_tokens"])]
if "reserved_output_tokens" in r:
    args += ["--reserve", str(r["reserved_output_tokens"])]
for i in r.get("instructions", []):
    args += ["--system", i["text"]]
if r.get("request") is not None:
    args += ["--request", r["request"]]
if r.get("continuation"):
    args += ["--continue"]
sys.stdout.write("\0".join(args) + "\0")
EOF
)
[ "${#ctx_args[@]}" -gt 0 ] || fail "cannot read $SCENARIO/compile.json"
ctx context "${ctx_args[@]}" --json >"$DB.bundle.json"

ctx export
[ "$problems" -eq 0 ]
