#!/usr/bin/env bash
# End-to-end tests of `ctxdb import --from`: another agent's session folder
# imported, again (nothing changes), grown, followed while it is written,
# and the errors: a malformed line (that file fails, the others import, exit
# status 1), an unknown format, a missing path, flags out of place.
# usage: transcript_import_test.sh PATH/TO/ctxdb
set -euo pipefail

CLI=${1:?usage: transcript_import_test.sh PATH/TO/ctxdb}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
unset CTXDB_DB
export CTXDB_DB=$WORK/t.ctxdb
CURRENT=""

# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

# A Claude Code turn: the user's prompt (uuid uN) and the answer (aN).
turn() {
  local n=$1 parent=null
  [ "$n" -gt 1 ] && parent="\"a$((n - 1))\""
  printf '{"type":"user","uuid":"u%s","parentUuid":%s,"sessionId":"S","cwd":"/w","timestamp":"2025-06-01T10:00:00.000Z","message":{"role":"user","content":"question %s"}}\n' "$n" "$parent" "$n"
  printf '{"type":"assistant","uuid":"a%s","parentUuid":"u%s","sessionId":"S","cwd":"/w","timestamp":"2025-06-01T10:00:01.000Z","message":{"id":"msg_%s","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"answer %s"}],"stop_reason":"end_turn","usage":{"input_tokens":10,"output_tokens":2}}}\n' "$n" "$n" "$n" "$n"
}

HOME_DIR=$WORK/.claude
mkdir -p "$HOME_DIR/projects/-w"
turn 1 >"$HOME_DIR/projects/-w/A.jsonl"
{ turn 1; turn 2; } >"$HOME_DIR/projects/-w/B.jsonl"
printf '{}\n' >"$HOME_DIR/history.jsonl" # prompts, not a session

CURRENT="a folder imported"
run "$CLI" import --from claude-code "$HOME_DIR"
expect_rc 0
expect_contains "stdout" "imported  cc-A" "$OUT"
expect_contains "stdout" "(5 events, 4 lines)" "$OUT"
expect_contains "stdout" "imported 2, unchanged 0, changed 0, failed 0" "$OUT"
run "$CLI" verify
expect_rc 0
run "$CLI" rebuild --check
expect_rc 0

CURRENT="imported again: nothing changes"
events=$("$CLI" export --events-only | wc -l)
run "$CLI" import --from claude-code "$HOME_DIR"
expect_rc 0
expect_eq "stdout" "imported 0, unchanged 2, changed 0, failed 0" "$OUT"
expect_eq "events" "$events" "$("$CLI" export --events-only | wc -l)"

CURRENT="a grown file adds its new records; --json"
turn 2 >>"$HOME_DIR/projects/-w/A.jsonl"
run "$CLI" import --from claude-code "$HOME_DIR" --json
expect_rc 0
expect_contains "report" '"session_id":"cc-A","status":"imported","events":2,"lines":2' "$OUT"
expect_contains "report" '"imported":1,"unchanged":1,"changed":0,"failed":0' "$OUT"

CURRENT="a malformed line fails its file, named with the line; the others import"
{ turn 1; printf '{"type":"user",\n'; } >"$HOME_DIR/projects/-w/C.jsonl"
turn 1 >"$HOME_DIR/projects/-w/D.jsonl"
run "$CLI" import --from claude-code "$HOME_DIR"
expect_rc 1
expect_contains "stdout" "C.jsonl:3" "$OUT"
expect_contains "stdout" "imported  cc-D" "$OUT"
expect_contains "stdout" "imported 1, unchanged 2, changed 0, failed 1" "$OUT"
run "$CLI" session ls
expect_absent "sessions" "cc-C" "$OUT"
rm "$HOME_DIR/projects/-w/C.jsonl"

CURRENT="--follow imports what is appended, until SIGINT, then a final pass"
LIVE=$WORK/live/projects/-w
mkdir -p "$LIVE"
turn 1 >"$LIVE/L.jsonl"
"$CLI" import --from claude-code "$WORK/live" --follow --interval 0.1 >"$WORK/follow.out" 2>&1 &
follower=$!
for _ in $(seq 100); do grep -q "imported  cc-L" "$WORK/follow.out" && break; sleep 0.05; done
turn 2 >>"$LIVE/L.jsonl"
for _ in $(seq 100); do [ "$(grep -c "imported  cc-L" "$WORK/follow.out")" -ge 2 ] && break; sleep 0.05; done
kill -INT "$follower"
set +e
wait "$follower"
RC=$?
set -e
OUT=$(cat "$WORK/follow.out")
expect_rc 0
expect_contains "passes" "(2 events, 2 lines)" "$OUT"
expect_eq "final pass" "imported 0, unchanged 1, changed 0, failed 0" "$(tail -n 1 "$WORK/follow.out")"
run "$CLI" log cc-L
expect_contains "log" "answer 2" "$OUT"

CURRENT="errors"
run "$CLI" import --from aider "$HOME_DIR"
expect_rc 1
expect_contains "stderr" "unknown format 'aider'" "$ERR"
run "$CLI" import --from pi "$WORK/nowhere"
expect_rc 1
expect_contains "stderr" "nowhere" "$ERR"
expect_contains "stderr" "does not exist" "$ERR"
run "$CLI" import --from pi "$HOME_DIR" --interval 1
expect_rc 2
expect_contains "stderr" "--interval needs --follow" "$ERR"
run "$CLI" import "$WORK/x.ndjson" --follow
expect_rc 2
expect_contains "stderr" "go with --from" "$ERR"

echo "transcript import CLI tests passed"
