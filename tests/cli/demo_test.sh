#!/usr/bin/env bash
# Runs scripts/demo.sh against the built CLI and checks that it recorded and
# showed the whole session.
# usage: demo_test.sh PATH/TO/demo.sh PATH/TO/ctxdb
set -euo pipefail

DEMO=${1:?usage: demo_test.sh PATH/TO/demo.sh PATH/TO/ctxdb}
CLI=${2:?usage: demo_test.sh PATH/TO/demo.sh PATH/TO/ctxdb}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
DB="$WORK/demo.ctxdb"

CURRENT="demo"
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

# The database is replaced, not appended to: run twice, expect one session.
CTXDB_CLI="$CLI" bash "$DEMO" "$DB" >/dev/null
OUT=$(CTXDB_CLI="$CLI" bash "$DEMO" "$DB") || fail "demo.sh failed: $OUT"

expect_contains "per-turn appends" "turn-6: appended 1 event; last seq 18" "$OUT"
expect_contains "the chain verifies" "ok: 1 sessions, 21 events" "$OUT"
expect_contains "the log shows the failing run" "1 failed, 215 passed" "$OUT"
expect_contains "the log shows the edit" "FileWritten" "$OUT"
expect_contains "the log shows the passing rerun" "216 passed" "$OUT"
expect_contains "the state names the modified file" "src/parser.py (2 times" "$OUT"
expect_contains "tool calls are paired" "call_4  run_command  success" "$OUT"
expect_contains "stats count the calls" "4 calls, 4 results, 0 errors" "$OUT"
expect_contains "the tree shows the what-if" 'what_if "ask-first"' "$OUT"
expect_contains "the pytest logs were spilled" "262 lines  command_log  run_command" "$OUT"
expect_contains "the context view shows the budget" "budget 2500 of 3000 tokens" "$OUT"
expect_contains "the context view explains the request" "the current request, given with the compile" "$OUT"
expect_contains "grep finds the error inside the spilled log" "256:>       raise ParseError" "$OUT"
expect_match "search marks the match" "#2 user .*test_«trailing»_«comma» fails" "$OUT"
expect_match "memory search retrieves the lesson" "mem_[0-9A-Z]+ +[0-9.]+ +[0-9]+ tok +fact +tinyparse: run the tests" "$OUT"
expect_contains "rebuild reproduces the projections" "state                   2 rows  unchanged" "$OUT"
# 21 events, then the two spilled pytest logs: an artifact line and one
# chunk line each.
expect_eq "export line count is the last line" 25 "$(tail -n 1 <<<"$OUT" | tr -d ' ')"

# Every event the demo wrote is in the file with its payload intact.
EXPORT=$("$CLI" --db "$DB" export)
expect_eq "one session in the file" 2 "$("$CLI" --db "$DB" sessions | wc -l)"
types=$(python3 -c '
import json, sys
rows = [json.loads(line) for line in sys.stdin]
events = [r for r in rows if "ctxdb_record" not in r]
assert [r["ctxdb_record"] for r in rows[len(events):]] == ["artifact", "artifact_chunk"] * 2
print(" ".join(sorted({e["type"] for e in events})))
# The pytest logs were spilled: the event keeps a preview, the line count
# and the artifact that holds the whole.
big = max(e["payload"].get("output_lines", 0) for e in events)
assert big >= 200, f"longest tool output has only {big} lines"
assert all(e["payload"].get("artifact_id", "").startswith("art_")
           for e in events if e["payload"].get("output_lines")), "a spilled output has no artifact"
' <<<"$EXPORT") || fail "export check failed"
expect_eq "event types" "AssistantMessageCreated BranchCreated DiffApplied FileRead FileWritten MemoryWritten SessionStarted ToolCallFinished ToolCallStarted UserPromptSubmitted" "$types"
echo "demo test passed"
