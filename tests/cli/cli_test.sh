#!/usr/bin/env bash
# End-to-end tests of the `ctxdb` command-line inspector.
# usage: cli_test.sh PATH/TO/ctxdb [PATH/TO/sqlite3]
# Each check prints what it expected and what it got when it fails; the
# first failure stops the script with a non-zero status.
set -euo pipefail

CLI=${1:?usage: cli_test.sh PATH/TO/ctxdb [PATH/TO/sqlite3]}
SQLITE3=${2:-sqlite3}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
unset CTXDB_DB
DB="$WORK/test.ctxdb"
CURRENT=""

# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

ctx() { "$CLI" --db "$DB" "$@"; }

# A small NDJSON batch: a prompt, an assistant tool call and its result.
EVENTS='{"type":"UserPromptSubmitted","actor":"user","payload":{"text":"fix the failing test"}}
{"type":"AssistantMessageCreated","actor":"assistant","payload":{"content":[{"type":"text","text":"Reading the parser."},{"type":"tool_call","id":"call_1","name":"read_file","args":{"path":"src/parser.py"}}],"model":"test-model"}}
{"type":"ToolCallStarted","actor":"tool","payload":{"tool_call_id":"call_1","name":"read_file"}}
{"type":"ToolCallFinished","actor":"tool","payload":{"tool_call_id":"call_1","output":"line one\nline two\nlast line of the file\n"}}
{"type":"FileRead","actor":"host","payload":{"path":"src/parser.py"}}
'

# ---- the checks ---------------------------------------------------------

test_init() {
  run "$CLI" --db "$DB" init
  expect_rc 0
  [ -f "$DB" ] || fail "init did not create $DB"
  expect_eq "init prints the absolute path" "$(realpath "$DB")" "$OUT"
  # A second init opens the same file and changes nothing.
  run "$CLI" init --db "$DB"
  expect_rc 0
  expect_eq "init accepts --db after the command" "$(realpath "$DB")" "$OUT"
  # CTXDB_DB stands in for --db.
  CTXDB_DB="$DB" run "$CLI" init
  expect_rc 0
  expect_eq "init with CTXDB_DB" "$(realpath "$DB")" "$OUT"
}

test_session_new() {
  run ctx session new --id ses_cli_test --agent test-agent --meta '{"model":"m1","cwd":"/tmp/x"}'
  expect_rc 0
  expect_eq "session new --id prints exactly the id" "ses_cli_test" "$OUT"
  run ctx session new
  expect_rc 0
  expect_match "a generated session id" '^ses_[A-Za-z0-9_-]+$' "$OUT"
  GENERATED=$OUT
  [ "$GENERATED" != ses_cli_test ] || fail "generated id equals the given one"
  # The --meta fields and the agent land in the SessionStarted payload.
  run ctx log ses_cli_test --json
  expect_rc 0
  expect_contains "SessionStarted payload has the agent" '"agent_id":"test-agent"' "$OUT"
  expect_contains "SessionStarted payload has --meta fields" '"model":"m1"' "$OUT"
  run ctx log "$GENERATED" --json
  expect_contains "default agent is cli" '"agent_id":"cli"' "$OUT"
  # The same id twice is a conflict.
  run ctx session new --id ses_cli_test
  expect_rc 1
  expect_contains "duplicate session id" "CTXDB_CONFLICT" "$ERR"
  run ctx session new --meta '[1,2]'
  expect_rc 2
  expect_contains "--meta must be an object" "--meta" "$ERR"

  # --ts sets the start time (own file: the checks below count sessions).
  local ts_db="$WORK/ts.ctxdb"
  run "$CLI" --db "$ts_db" session new --id ses_ts --ts 1767225600000
  expect_rc 0
  expect_eq "session new --ts prints the id" "ses_ts" "$OUT"
  run "$CLI" --db "$ts_db" log ses_ts --json
  expect_contains "SessionStarted has the --ts time" '"ts":1767225600000,' "$OUT"
  run "$CLI" --db "$ts_db" sessions
  expect_match "the table shows the --ts time" \
    '(^|'$'\n'')ses_ts +cli +1 +2026-01-01T00:00:00\.000Z +2026-01-01T00:00:00\.000Z$' "$OUT"
  run "$CLI" --db "$ts_db" session new --ts=0
  expect_rc 0
  local ts
  for ts in -5 12x 1.5 "" 99999999999999999999; do
    run "$CLI" --db "$ts_db" session new --ts "$ts"
    expect_rc 2
    expect_contains "--ts '$ts' is refused" "--ts needs milliseconds" "$ERR"
  done
  run "$CLI" --db "$ts_db" sessions
  expect_eq "refused --ts values create no session" 3 "$(wc -l <<<"$OUT")"
}

test_sessions_table() {
  run ctx sessions
  expect_rc 0
  local header row
  header=$(sed -n 1p <<<"$OUT")
  expect_match "sessions header" '^ID +AGENT +EVENTS +FIRST +LAST$' "$header"
  row=$(grep '^ses_cli_test ' <<<"$OUT") || fail "no row for ses_cli_test in <$OUT>"
  expect_match "sessions row" \
    '^ses_cli_test +test-agent +1 +[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z +[0-9]{4}-' "$row"
  expect_eq "one row per session plus the header" 3 "$(wc -l <<<"$OUT")"
  run ctx sessions --json
  expect_rc 0
  expect_eq "sessions --json: the session list" "2 True" \
    "$(python3 -c 'import json,sys; l=json.load(sys.stdin); print(len(l), "ses_cli_test" in [s["id"] for s in l])' <<<"$OUT")"
  run ctx session show ses_cli_test --json
  expect_rc 0
  expect_contains "session show --json" '"id":"ses_cli_test"' "$OUT"
}

test_append() {
  run_in "$EVENTS" ctx append ses_cli_test
  expect_rc 0
  expect_eq "append summary" "appended 5 events; last seq 6" "$OUT"
  run_in '{"type":"Note","actor":"host","payload":{"n":1}}' ctx append ses_cli_test
  expect_rc 0
  expect_eq "a single event without trailing newline" "appended 1 event; last seq 7" "$OUT"
  run ctx sessions
  expect_match "event count in the table" 'ses_cli_test +test-agent +7 ' "$OUT"
}

test_log() {
  run ctx log ses_cli_test
  expect_rc 0
  expect_match "log starts with a date line" '^-- [0-9]{4}-[0-9]{2}-[0-9]{2} \(UTC\)' "$OUT"
  expect_match "log row for the prompt" \
    '(^|'$'\n'')   2  [0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}  UserPromptSubmitted +user +fix the failing test' "$OUT"
  expect_contains "piped: the assistant's tool call whole" \
    'AssistantMessageCreated assistant Reading the parser. -> read_file({"path":"src/parser.py"})' "$OUT"
  expect_contains "tool output summary: last line, line count" "call_1: last line of the file (3 lines)" "$OUT"
  expect_contains "file event summary" "src/parser.py" "$OUT"
  expect_eq "one line per event plus the date line" 8 "$(wc -l <<<"$OUT")"
  # On a terminal, lines are cut to its width; --wide keeps them whole.
  local longest
  run_tty 72 "$CLI" --db "$DB" log ses_cli_test
  expect_rc 0
  longest=$(awk '{ if (length($0) > n) n = length($0) } END { print n }' <<<"$OUT")
  [ "$longest" -le 72 ] || fail "on a 72-column terminal the longest line is $longest"
  expect_match "a cut marked" 'AssistantMessageCreated assistant Reading[^'$'\n'']*\.\.\.' "$OUT"
  run_tty 72 "$CLI" --db "$DB" log ses_cli_test --wide
  expect_contains "--wide: not cut on a terminal" 'read_file({"path":"src/parser.py"})' "$OUT"

  run ctx log ses_cli_test --json
  expect_rc 0
  expect_eq "--json prints one row per event" 7 "$(wc -l <<<"$OUT")"
  expect_match "--json rows are stored events" '^\{.*"seq":1,.*"hash":"' "$(sed -n 1p <<<"$OUT")"
  python3 -c 'import json,sys; [json.loads(l) for l in sys.stdin]' <<<"$OUT" ||
    fail "--json output is not NDJSON: <$OUT>"

  run ctx log ses_cli_test --from 6 --json
  expect_rc 0
  expect_eq "--from 6 gives seq 6 and 7" 2 "$(wc -l <<<"$OUT")"
  expect_contains "--from starts at seq 6" '"seq":6' "$(sed -n 1p <<<"$OUT")"
  run ctx log ses_cli_test --from=7
  expect_rc 0
  expect_contains "--from=7 shows seq 7 only" "   7  " "$OUT"
  expect_eq "--from=7 row count" 2 "$(wc -l <<<"$OUT")"
  # Control characters in payloads must not reach the terminal.
  local esc_db="$WORK/escape.ctxdb"
  "$CLI" --db "$esc_db" session new --id ses_escape >/dev/null
  run_in '{"type":"Note","actor":"tool","payload":{"text":"\u001b[2Jred\u009b1mX\u0007"}}' \
    "$CLI" --db "$esc_db" append ses_escape
  expect_rc 0
  run "$CLI" --db "$esc_db" log ses_escape
  expect_contains "control characters print as ?" "?[2Jred?1mX?" "$OUT"
  if LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' <<<"$OUT"; then fail "log printed a control character"; fi
  if LC_ALL=C grep -q $'\xc2[\x80-\x9f]' <<<"$OUT"; then fail "log printed a C1 control character"; fi

  run ctx log ses_cli_test --from abc
  expect_rc 2
  expect_contains "bad --from" "--from" "$ERR"
}

test_verify_ok() {
  run ctx verify
  expect_rc 0
  expect_eq "verify everything" "ok: 2 sessions, 8 events" "$OUT"
  run ctx verify ses_cli_test
  expect_rc 0
  expect_eq "verify one session" "ok: 1 sessions, 7 events" "$OUT"
}

test_verify_colour() {
  # On a terminal the verdict is in colour; NO_COLOR turns it off; piped
  # output never has it (test_verify_ok compares it as plain text).
  run_tty 80 "$CLI" --db "$DB" verify
  expect_rc 0
  expect_contains "green ok on a terminal" $'\e[32mok\e[0m: 2 sessions' "$OUT"
  run_tty 80 env NO_COLOR=1 "$CLI" --db "$DB" verify
  expect_eq "NO_COLOR: plain" "ok: 2 sessions, 8 events" "$OUT"
}

test_export_import_roundtrip() {
  ctx export >"$WORK/a.ndjson"
  expect_eq "export has every event" 8 "$(wc -l <"$WORK/a.ndjson")"
  run "$CLI" --db "$WORK/copy.ctxdb" import "$WORK/a.ndjson"
  expect_rc 0
  expect_eq "import into an empty file" "imported 8, skipped 0" "$OUT"
  "$CLI" --db "$WORK/copy.ctxdb" export >"$WORK/b.ndjson"
  cmp -s "$WORK/a.ndjson" "$WORK/b.ndjson" ||
    fail "export of the copy differs: $(diff "$WORK/a.ndjson" "$WORK/b.ndjson" | head -5)"
  # Importing again from stdin skips what is already there.
  run "$CLI" --db "$WORK/copy.ctxdb" import - <"$WORK/a.ndjson"
  expect_rc 0
  expect_eq "re-import skips everything" "imported 0, skipped 8" "$OUT"
  run "$CLI" --db "$WORK/copy.ctxdb" verify
  expect_eq "the copy verifies" "ok: 2 sessions, 8 events" "$OUT"
  # Exporting one session gives just its events, in seq order.
  run ctx export ses_cli_test
  expect_eq "export of one session" 7 "$(wc -l <<<"$OUT")"
  expect_eq "same rows as log --json" "$(ctx log ses_cli_test --json)" "$OUT"
}

test_verify_detects_tampering() {
  cp "$DB" "$WORK/tampered.ctxdb"
  local target
  target=$(ctx log ses_cli_test --json | sed -n 2p |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
  "$SQLITE3" "$WORK/tampered.ctxdb" \
    "DROP TRIGGER events_no_update;
     UPDATE events SET payload = '{\"text\":\"something else\"}'
     WHERE session_no = (SELECT session_no FROM chains WHERE session_id = 'ses_cli_test') AND seq = 2;"
  run "$CLI" --db "$WORK/tampered.ctxdb" verify
  expect_rc 1
  expect_contains "verify names the tampered event" "$target" "$OUT"
  expect_contains "verify names the session and seq" "session ses_cli_test seq 2" "$OUT"
  run "$CLI" --db "$WORK/tampered.ctxdb" verify "$GENERATED"
  expect_rc 0
  expect_eq "the untouched session still verifies" "ok: 1 sessions, 1 events" "$OUT"
}

test_anchor_and_artifacts() {
  cp "$DB" "$WORK/anchored.ctxdb"
  local db="$WORK/anchored.ctxdb"
  seq 1 100000 >"$WORK/numbers.txt"
  "$CLI" --db "$db" artifact put "$WORK/numbers.txt" >/dev/null
  run "$CLI" --db "$db" verify
  expect_rc 0
  expect_contains "the artifacts are checked" "artifacts ok (quick): 1 artifacts" "$OUT"
  run "$CLI" --db "$db" verify --artifacts full
  expect_contains "full mode on request" "artifacts ok (full): 1 artifacts" "$OUT"
  run "$CLI" --db "$db" verify --artifacts most
  expect_rc 2
  expect_contains "a bad mode is a usage error" "none, quick or full" "$ERR"
  "$CLI" --db "$db" anchor >"$WORK/anchor.json"
  python3 -c 'import json,sys; a=json.load(open(sys.argv[1])); assert a["format"]=="ctxdb.anchor.v1" and a["sessions"]==2, a' "$WORK/anchor.json" ||
    fail "anchor is not the documented JSON: $(cat "$WORK/anchor.json")"
  echo '{"type":"Note","actor":"a","payload":{}}' | "$CLI" --db "$db" append ses_cli_test >/dev/null
  run "$CLI" --db "$db" verify --anchor "$WORK/anchor.json"
  expect_rc 0
  expect_contains "the file extends its anchor" "anchor ok: the file extends its 8 events" "$OUT"
  # The session's last events cut off and the chain head rewritten: the
  # chain verifies, the anchor does not.
  "$SQLITE3" "$db" \
    "DROP TRIGGER events_no_delete;
     DELETE FROM events WHERE seq >= 7
       AND session_no = (SELECT session_no FROM chains WHERE session_id = 'ses_cli_test');
     UPDATE chains SET last_seq = 6, last_hash = (SELECT hash FROM events e
       WHERE e.session_no = chains.session_no AND e.seq = 6) WHERE session_id = 'ses_cli_test';"
  run "$CLI" --db "$db" verify
  expect_rc 0
  run "$CLI" --db "$db" verify --anchor - <"$WORK/anchor.json"
  expect_rc 1
  expect_contains "the anchor names the cut session" "anchor broken: session 'ses_cli_test'" "$OUT"
  # A zeroed chunk fails verify and rebuild --check.
  "$SQLITE3" "$db" "DROP TRIGGER artifact_chunks_no_update;
     UPDATE artifact_chunks SET data = zeroblob(length(data)) WHERE idx = 0;"
  run "$CLI" --db "$db" verify
  expect_rc 1
  expect_contains "verify names the chunk" "chunk 0 of artifact art_" "$OUT"
  run "$CLI" --db "$db" rebuild --check
  expect_rc 1
  expect_contains "rebuild --check names the chunk" "chunk 0 of artifact art_" "$ERR"
  run "$CLI" --db "$db" verify --json
  python3 -c 'import json,sys; r=json.loads(sys.argv[1]); assert r["ok"] is False and r["artifacts"]["first_broken"]["chunk"]==0, r' "$OUT" ||
    fail "verify --json: $OUT"
}

# A purge record and a NULL payload, as an attacker writes them: the
# update trigger trusts the record, verify must not.
test_verify_detects_forged_purge() {
  cp "$DB" "$WORK/forged-purge.ctxdb"
  local target by
  target=$(ctx log ses_cli_test --json | sed -n 2p |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
  by=$(ctx log ses_cli_test --json | sed -n 3p |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
  "$SQLITE3" "$WORK/forged-purge.ctxdb" \
    "INSERT INTO purges VALUES('$target', '$by');
     UPDATE events SET payload = NULL WHERE id = '$target';"
  run "$CLI" --db "$WORK/forged-purge.ctxdb" verify
  expect_rc 1
  expect_contains "verify names the erased event" "$target" "$OUT"
  expect_contains "verify says why" "payload was removed" "$OUT"
}

# export verifies what it exports first: a broken chain prints nothing.
test_export_refuses_a_broken_chain() {
  local target
  target=$(ctx log ses_cli_test --json | sed -n 2p |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
  for args in "" "ses_cli_test" "--events-only"; do
    # shellcheck disable=SC2086 # the words of $args are the arguments
    run "$CLI" --db "$WORK/tampered.ctxdb" export $args
    expect_rc 1
    expect_eq "nothing exported ($args)" "" "$OUT"
    expect_contains "the broken event is named ($args)" "seq 2 event $target" "$ERR"
    expect_contains "the code ($args)" "CTXDB_CORRUPT" "$ERR"
  done
  run "$CLI" --db "$WORK/tampered.ctxdb" export "$GENERATED"
  expect_rc 0
  expect_eq "a session that verifies exports" 1 "$(wc -l <<<"$OUT")"
  run "$CLI" --db "$WORK/tampered.ctxdb" export --no-verify
  expect_rc 0
  expect_eq "--no-verify exports what is stored" 8 "$(wc -l <<<"$OUT")"
}

# A stored id whose byte was damaged: verify's report and the log are
# still UTF-8 (the byte as U+FFFD).
test_damaged_id_is_reported() {
  cp "$DB" "$WORK/damaged.ctxdb"
  "$SQLITE3" "$WORK/damaged.ctxdb" \
    "DROP TRIGGER events_no_update;
     UPDATE events SET id = CAST(id || X'FF' AS TEXT)
     WHERE session_no = (SELECT session_no FROM chains WHERE session_id = 'ses_cli_test') AND seq = 3;"
  run "$CLI" --db "$WORK/damaged.ctxdb" verify
  expect_rc 1
  expect_contains "verify names the damaged event" $'\xef\xbf\xbd: event was modified' "$OUT"
  python3 -c 'import sys; sys.stdin.buffer.read().decode("utf-8")' <"$WORK/out" ||
    fail "verify's output is not UTF-8"
  run "$CLI" --db "$WORK/damaged.ctxdb" log ses_cli_test --json
  expect_rc 0
  python3 -c 'import json,sys; [json.loads(l) for l in sys.stdin.buffer.read().decode("utf-8").splitlines()]' \
    <"$WORK/out" || fail "log --json is not UTF-8 JSON"
}

test_errors() {
  run "$CLI" sessions
  expect_rc 2
  expect_contains "missing --db" "--db" "$ERR"
  expect_eq "nothing on stdout for an error" "" "$OUT"
  run ctx log ses_nope
  expect_rc 1
  expect_contains "unknown session in log" "CTXDB_NOT_FOUND" "$ERR"
  expect_match "error format" '^ctxdb: .+ \(CTXDB_NOT_FOUND\)$' "$ERR"
  run_in "$EVENTS" ctx append ses_nope
  expect_rc 1
  expect_contains "unknown session in append" "CTXDB_NOT_FOUND" "$ERR"
  run "$CLI" --db "$WORK/missing.ctxdb" sessions
  expect_rc 1
  [ ! -e "$WORK/missing.ctxdb" ] || fail "a read command created $WORK/missing.ctxdb"

  local before
  before=$(ctx export ses_cli_test | wc -l)
  run_in '{"type":"Note","actor":"host","payload":{}}
{"type": "Note", "actor": oops}
' ctx append ses_cli_test
  expect_rc 1
  expect_contains "malformed NDJSON names the line" "line 2" "$ERR"
  expect_contains "malformed NDJSON code" "CTXDB_INVALID_JSON" "$ERR"
  expect_eq "a failed batch appends nothing" "$before" "$(ctx export ses_cli_test | wc -l)"
  run_in '{"type":"UserPromptSubmitted","actor":"user","payload":{}}' ctx append ses_cli_test
  expect_rc 1
  expect_contains "a missing required field is named" "text" "$ERR"

  run ctx frobnicate
  expect_rc 2
  expect_contains "unknown command" "unknown command 'frobnicate'" "$ERR"
  run ctx log ses_cli_test --bogus
  expect_rc 2
  expect_contains "unknown flag" "unknown flag '--bogus'" "$ERR"
  expect_contains "usage line after a usage error" "usage: ctxdb log SESSION" "$ERR"
  run ctx append
  expect_rc 2
  run ctx verify a b
  expect_rc 2
  expect_contains "too many arguments" "unexpected argument 'b'" "$ERR"
  run ctx session
  expect_rc 2
  run "$CLI"
  expect_rc 2
  run ctx import "$WORK/does-not-exist.ndjson"
  expect_rc 1
  expect_contains "unreadable import file" "CTXDB_IO" "$ERR"
}

test_help() {
  run "$CLI" --help
  expect_rc 0
  local cmd
  for cmd in init "session new" "session show" sessions append event log tree fork path children \
    messages tool-calls files state stats verify rebuild export import; do
    expect_contains "ctxdb --help lists $cmd" "  $cmd " "$OUT"
  done
  for cmd in init "session new" "session show" sessions append event log tree fork path \
    children messages tool-calls files state stats verify rebuild export import session; do
    # shellcheck disable=SC2086 # "session new" is two words on purpose
    run "$CLI" $cmd --help
    expect_rc 0
    expect_contains "$cmd --help" "usage: ctxdb $cmd" "$OUT"
  done
  run "$CLI" log --help
  expect_contains "log --help documents --from" "--from SEQ" "$OUT"
  run "$CLI" session new --help
  expect_contains "session new --help documents --ts" "--ts MS" "$OUT"
  run "$CLI" --version
  expect_rc 0
  expect_match "--version" '^ctxdb [0-9]+\.[0-9]+\.[0-9]+ \(library [0-9]+\.[0-9]+\.[0-9]+\)$' "$OUT"
}

test_show_one() {
  run ctx session show ses_cli_test
  expect_rc 0
  expect_match "session show prints the session object" \
    '^\{"id":"ses_cli_test","agent_id":"test-agent",.*"event_count":7,' "$OUT"
  run ctx session show ses_nope
  expect_rc 1
  expect_contains "session show of an unknown id" "CTXDB_NOT_FOUND" "$ERR"
  local id
  id=$(ctx log ses_cli_test --json | sed -n 3p |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
  run ctx event "$id"
  expect_rc 0
  expect_match "event prints the stored event" "^\\{\"id\":\"$id\",\"session_id\":\"ses_cli_test\",\"seq\":3," "$OUT"
  run ctx event evt_nope
  expect_rc 1
  expect_contains "event with an unknown id" "CTXDB_NOT_FOUND" "$ERR"
}

test_rebuild() {
  run ctx rebuild --check
  expect_rc 0
  expect_match "rebuild --check of a sound database" 'sessions +[0-9]+ rows  unchanged' "$OUT"
  cp "$DB" "$WORK/forged.ctxdb"
  "$SQLITE3" "$WORK/forged.ctxdb" "UPDATE sessions SET agent_id = 'forged' WHERE id = 'ses_cli_test';"
  run "$CLI" --db "$WORK/forged.ctxdb" rebuild --check
  expect_rc 1
  expect_contains "rebuild --check names the table" "CTXDB_CHECK_FAILED" "$ERR"
  run "$CLI" --db "$WORK/forged.ctxdb" session show ses_cli_test
  expect_contains "a failed check changes nothing" '"agent_id":"forged"' "$OUT"
  run "$CLI" --db "$WORK/forged.ctxdb" rebuild
  expect_rc 0
  expect_contains "rebuild repairs the table" "rebuilt: differed" "$OUT"
  run "$CLI" --db "$WORK/forged.ctxdb" session show ses_cli_test
  expect_contains "the replayed row" '"agent_id":"test-agent"' "$OUT"
  # The session-search index is kept (caught up) unless --search asks.
  run ctx rebuild
  expect_rc 0
  expect_contains "rebuild keeps the search index" "kept, caught up" "$OUT"
  expect_contains "rebuild names what it kept" "search_words, search_grams, search_mark" "$OUT"
  run ctx rebuild --check --search
  expect_rc 0
  expect_match "rebuild --search re-derives the search index" 'search_words +[0-9]+ rows  unchanged' "$OUT"
  expect_absent "rebuild --search keeps nothing" "kept, caught up" "$OUT"
}

test_append_each() {
  ctx session new --id ses_each >/dev/null
  run_in '{"type":"Note","actor":"a","payload":{}}
{"type":"Note","actor":"a","payload":{}}
{"type":"Note"}
{"type":"Note","actor":"a","payload":{}}' ctx append ses_each --each
  expect_rc 1
  expect_contains "--each names the bad line" "line 3: missing required field 'actor'" "$ERR"
  run ctx session show ses_each
  expect_contains "--each kept the lines before the bad one" '"event_count":3' "$OUT"
  run_in '{"type":"Note","actor":"a","payload":{}}' ctx append ses_each --each
  expect_rc 0
  expect_eq "--each summary" "appended 1 event; last seq 4" "$OUT"
}

test_tree() {
  local T="$WORK/tree.ctxdb"
  tc() { "$CLI" --db "$T" "$@"; }
  tc session new --id ses_tree --event-id t0 >/dev/null
  run_in '{"type":"Note","actor":"a","id":"t1","payload":{}}
{"type":"Note","actor":"a","id":"t2","payload":{}}
{"type":"Note","actor":"a","id":"t3","payload":{}}' tc append ses_tree
  expect_rc 0
  # Before any fork: one branch, and log shows no branch column.
  run tc tree ses_tree
  expect_rc 0
  expect_eq "tree of an unforked session" "t0  main  4 events  leaf t3 (seq 4)" "$OUT"
  run tc log ses_tree
  if [[ "$OUT" == *"[t0]"* ]]; then fail "log of an unforked session names branches: <$OUT>"; fi

  run tc fork ses_tree t1 --kind what_if --name alt --id alt1
  expect_rc 0
  expect_eq "fork prints the branch" \
    '{"id":"alt1","session_id":"ses_tree","kind":"what_if","name":"alt","parent_branch_id":"t0","fork_event_id":"t1","fork_seq":2,"first_seq":5,"leaf_event_id":"alt1","leaf_seq":5,"event_count":1}' \
    "$OUT"
  run_in '{"type":"UserPromptSubmitted","actor":"user","id":"a1","branch_id":"alt","payload":{"text":"on alt"}}' \
    tc append ses_tree
  expect_rc 0
  run tc fork ses_tree alt1 --name=deeper --id d
  expect_rc 0
  run_in '{"type":"Note","actor":"a","id":"f1","parent_id":"t2","payload":{}}' tc append ses_tree
  expect_rc 0
  run tc fork ses_tree t3
  expect_rc 0
  expect_match "fork without flags: kind fork, a generated id" '^\{"id":"[^"]+","session_id":"ses_tree","kind":"fork","parent_branch_id":"t0","fork_event_id":"t3",' "$OUT"
  local gen
  gen=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])' <<<"$OUT")

  run tc tree ses_tree
  expect_rc 0
  expect_eq "the tree, drawn" "t0  main  4 events  leaf t3 (seq 4)
├─ alt1  what_if \"alt\"  from t1 (seq 2)  2 events  leaf a1 (seq 6)
│  └─ d  fork \"deeper\"  from alt1 (seq 5)  1 event  leaf d (seq 7)
├─ f1  fork  from t2 (seq 3)  1 event  leaf f1 (seq 8)
└─ $gen  fork  from t3 (seq 4)  1 event  leaf $gen (seq 9)" "$OUT"
  run tc tree ses_tree --json
  expect_rc 0
  expect_eq "tree --json: every branch" "5 t0" \
    "$(python3 -c 'import json,sys; l=json.load(sys.stdin); print(len(l), l[0]["id"])' <<<"$OUT")"

  run tc path ses_tree --branch alt --json
  expect_rc 0
  expect_eq "path --json: the stored events root to leaf" "t0 t1 alt1 a1" \
    "$(python3 -c 'import json,sys; print(" ".join(json.loads(l)["id"] for l in sys.stdin))' <<<"$OUT")"
  run tc path ses_tree --branch d --json
  expect_eq "path of a fork of a fork" 4 "$(wc -l <<<"$OUT")"
  run tc path ses_tree --json
  expect_eq "path without --branch is main" "$(tc log ses_tree --json | head -4)" "$OUT"
  run tc path ses_tree --branch alt
  expect_rc 0
  expect_match "path prints log lines, with the branch" \
    '(^|'$'\n'')   6  [0-9:.]+  UserPromptSubmitted +user +\[alt1\] on alt' "$OUT"
  expect_eq "path: one line per event plus the date line" 5 "$(wc -l <<<"$OUT")"
  run tc log ses_tree
  expect_match "log names each event's branch once forked" \
    '(^|'$'\n'')   8  [0-9:.]+  Note +a +\[f1\]' "$OUT"
  expect_match "log: main's events too" '(^|'$'\n'')   2  [0-9:.]+  Note +a +\[t0\]' "$OUT"

  run tc children t1
  expect_rc 0
  expect_match "children: the next event, then the fork" \
    '   3  [0-9:.]+  Note .*'$'\n''   5  [0-9:.]+  BranchCreated +host +alt' "$OUT"
  run tc children t1 --json
  expect_match "children --json" '^\{"event_id":"t1","events":\[\{"id":"t2",.*\{"id":"alt1",.*"sessions":\[\]\}$' "$OUT"
  tc session new --id ses_kid --meta '{"parent_session_id":"ses_tree","spawned_by_event_id":"a1"}' >/dev/null
  run tc children a1
  expect_rc 0
  expect_eq "children: a spawned session" "session ses_kid  agent cli" "$OUT"
  run tc children f1
  expect_eq "children of a leaf" "no children" "$OUT"

  # Errors: exit 1 with the library's code; usage errors exit 2.
  local before
  before=$(tc export | wc -l)
  run tc fork ses_tree t1 --kind sideways
  expect_rc 1
  expect_match "a bad kind" "^ctxdb: .*kind.* \(CTXDB_INVALID_ARG\)$" "$ERR"
  run tc fork ses_nope t1
  expect_rc 1
  expect_contains "fork in an unknown session" "CTXDB_NOT_FOUND" "$ERR"
  run tc fork ses_tree evt_nope
  expect_rc 1
  expect_contains "fork at an unknown event" "evt_nope" "$ERR"
  run tc fork ses_tree t1 --id t2
  expect_rc 1
  expect_contains "fork with a taken id" "CTXDB_CONFLICT" "$ERR"
  expect_eq "failed forks write nothing" "$before" "$(tc export | wc -l)"
  run tc fork ses_tree
  expect_rc 2
  expect_contains "fork needs an event" "usage: ctxdb fork SESSION EVENT" "$ERR"
  run tc fork ses_tree t1 --colour red
  expect_rc 2
  run tc tree ses_nope
  expect_rc 1
  expect_match "tree of an unknown session" "^ctxdb: .*ses_nope.* \(CTXDB_NOT_FOUND\)$" "$ERR"
  expect_eq "nothing on stdout for an error" "" "$OUT"
  run tc path ses_nope
  expect_rc 1
  expect_contains "path of an unknown session" "CTXDB_NOT_FOUND" "$ERR"
  run tc path ses_tree --branch nope
  expect_rc 1
  expect_contains "path of an unknown branch" "CTXDB_NOT_FOUND" "$ERR"
  expect_eq "nothing on stdout for an unknown branch" "" "$OUT"
  run tc path ses_tree --branch
  expect_rc 2
  run tc children evt_nope
  expect_rc 1
  expect_contains "children of an unknown event" "CTXDB_NOT_FOUND" "$ERR"
  run tc children
  expect_rc 2
  run "$CLI" --db "$WORK/missing.ctxdb" tree ses_tree
  expect_rc 1
  [ ! -e "$WORK/missing.ctxdb" ] || fail "tree created $WORK/missing.ctxdb"
}

test_views() {
  local V="$WORK/views.ctxdb"
  tv() { "$CLI" --db "$V" "$@"; }
  tv session new --id ses_v --event-id v0 >/dev/null
  run_in "$EVENTS"'{"type":"FileWritten","actor":"host","payload":{"path":"src/parser.py","change_summary":"handle the empty line"}}
{"type":"AssistantMessageCreated","actor":"assistant","id":"v7","payload":{"content":[{"type":"thinking","text":"now run it"},{"type":"tool_call","id":"call_2","name":"bash","args":{"cmd":"pytest"}}]}}' \
    tv append ses_v
  expect_rc 0
  run tv fork ses_v v7 --kind what_if --name alt --id alt1
  expect_rc 0
  run_in '{"type":"ToolCallFailed","actor":"tool","branch_id":"alt","payload":{"tool_call_id":"call_2","error":"exit 1","duration_ms":40}}
{"type":"DiffApplied","actor":"host","branch_id":"alt","payload":{"path":"src/parser.py","diff":"@@"}}' \
    tv append ses_v
  expect_rc 0

  # messages: a header per message, a line per block.
  run tv messages ses_v
  expect_rc 0
  expect_eq "messages: lines" 6 "$(wc -l <<<"$OUT")"
  expect_match "messages: the prompt" '^#2 user \([0-9]+ tok\) text: fix the failing test'$'\n' "$OUT"
  expect_match "messages: the assistant's blocks, one a line" \
    $'\n''#3 assistant \([0-9]+ tok\) text: Reading the parser\.'$'\n'' +tool_call call_1 read_file \{"path":"src/parser.py"\}'$'\n' "$OUT"
  expect_match "messages: the tool result, on one line" \
    $'\n''#5 tool \([0-9]+ tok\) tool_result call_1 success line one line two last line of the file'$'\n' "$OUT"
  expect_match "messages: thinking, then a call" \
    $'\n''#8 assistant \([0-9]+ tok\) thinking: now run it'$'\n'' +tool_call call_2 bash \{"cmd":"pytest"\}$' "$OUT"
  run tv messages ses_v --branch alt
  expect_rc 0
  expect_match "messages of a branch: the failed call's result" \
    $'\n''#10 tool \([0-9]+ tok\) tool_result call_2 error error: exit 1$' "$OUT"
  run tv messages ses_v --json
  expect_rc 0
  expect_eq "messages --json is one JSON array" "user assistant tool assistant" \
    "$(python3 -c 'import json,sys; print(" ".join(m["role"] for m in json.load(sys.stdin)))' <<<"$OUT")"
  # A long text is cut to a terminal's width, and whole when piped.
  run_in '{"type":"UserPromptSubmitted","actor":"user","branch_id":"alt","payload":{"text":"'"$(printf 'word %.0s' {1..60})"'"}}' \
    tv append ses_v
  run tv messages ses_v --branch alt1
  expect_match "messages piped: a long line whole" '#12 user \([0-9]+ tok\) text: (word ){59}word$' "$OUT"
  run_tty 100 "$CLI" --db "$V" messages ses_v --branch alt1
  expect_match "messages: a long line is cut" '#12 user \([0-9]+ tok\) text: word word .*\.\.\.$' "$OUT"
  local longest
  longest=$(awk '{ if (length($0) > n) n = length($0) } END { print n }' <<<"$OUT")
  [ "$longest" -le 100 ] || fail "messages: a line of $longest characters"

  # tool-calls: a table, status as seen from the branch.
  run tv tool-calls ses_v
  expect_rc 0
  expect_eq "tool-calls on main" "SEQ  CALL    NAME       STATUS   DURATION
3    call_1  read_file  success  -
8    call_2  bash       pending  -" "$OUT"
  run tv tool-calls ses_v --branch alt
  expect_rc 0
  expect_match "tool-calls on the branch" $'\n''8 +call_2 +bash +error: exit 1 +40 ms$' "$OUT"
  run tv tool-calls ses_v --branch alt --json
  expect_match "tool-calls --json" '^\[\{"call_id":"call_1",.*"status":"error",.*\]$' "$OUT"

  # files: reads, writes and the last change.
  run tv files ses_v
  expect_rc 0
  expect_eq "files on main" "PATH           READS  WRITES  LAST CHANGE
src/parser.py  1      1       write #7: handle the empty line" "$OUT"
  run tv files ses_v --branch alt
  expect_match "files on the branch: the diff is the last change" \
    $'\n''src/parser.py +1 +2 +diff #11$' "$OUT"
  run tv files ses_v --json
  expect_match "files --json" '^\[\{"path":"src/parser.py",.*"reads":1,"writes":1,' "$OUT"

  # Nothing to show.
  tv session new --id ses_empty >/dev/null
  run tv messages ses_empty
  expect_eq "no messages" "no messages" "$OUT"
  run tv tool-calls ses_empty
  expect_eq "no tool calls" "no tool calls" "$OUT"
  run tv files ses_empty --branch main
  expect_eq "no files" "no files" "$OUT"
  run tv files ses_empty --json
  expect_eq "files --json of nothing" "[]" "$OUT"

  # Errors: exit 1 with the library's code, nothing on stdout; usage: 2.
  local cmd
  for cmd in messages tool-calls files; do
    run tv $cmd ses_nope
    expect_rc 1
    expect_match "$cmd of an unknown session" "^ctxdb: .*ses_nope.* \(CTXDB_NOT_FOUND\)$" "$ERR"
    expect_eq "$cmd: nothing on stdout for an error" "" "$OUT"
    run tv $cmd ses_v --branch nope
    expect_rc 1
    expect_match "$cmd of an unknown branch" "^ctxdb: .*nope.* \(CTXDB_NOT_FOUND\)$" "$ERR"
    run tv $cmd ses_v --branch ''
    expect_rc 1
    expect_contains "$cmd of an empty branch name" "CTXDB_INVALID_ARG" "$ERR"
    run tv $cmd ses_v --branch
    expect_rc 2
    run tv $cmd
    expect_rc 2
    run tv $cmd ses_v extra
    expect_rc 2
    run "$CLI" --db "$WORK/missing.ctxdb" $cmd ses_v
    expect_rc 1
    [ ! -e "$WORK/missing.ctxdb" ] || fail "$cmd created $WORK/missing.ctxdb"
  done
  tv fork ses_v v7 --name dup --id d1 >/dev/null
  tv fork ses_v v7 --name dup --id d2 >/dev/null
  run tv messages ses_v --branch dup
  expect_rc 1
  expect_match "a name two branches share" "^ctxdb: .*dup.* \(CTXDB_INVALID_ARG\)$" "$ERR"
}

test_state() {
  local S="$WORK/state.ctxdb"
  ts() { "$CLI" --db "$S" "$@"; }
  ts session new --id ses_st --event-id st0 >/dev/null
  run_in '{"type":"UserPromptSubmitted","actor":"user","id":"st1","payload":{"text":"fix the parser"}}
{"type":"StateUpdated","actor":"agent","id":"st2","payload":{"ops":[{"op":"set_plan","steps":["look","fix","test"]},{"op":"set_step","step":0,"status":"done"},{"op":"set_step","step":1},{"op":"add_constraint","text":"no new deps"},{"op":"add_constraint","text":"small diff","kind":"soft"},{"op":"add_fact","content":"the parser drops blank lines","confidence":0.8,"source_refs":["art_1"]},{"op":"open_question","id":"q1","text":"python 3.8 too?"}]}}
{"type":"DecisionRecorded","actor":"agent","id":"st3","payload":{"decision":"patch the tokenizer","rationale":"smallest change"}}
{"type":"FileRead","actor":"host","id":"st4","payload":{"path":"src/parser.py"}}
{"type":"FileWritten","actor":"host","id":"st5","payload":{"path":"src/parser.py","change_summary":"skip blank lines"}}
{"type":"AssistantMessageCreated","actor":"assistant","id":"st6","payload":{"content":[{"type":"tool_call","id":"c1","name":"bash","args":{"cmd":"pytest"}}]}}' \
    ts append ses_st
  expect_rc 0

  run ts state ses_st
  expect_rc 0
  expect_eq "state: the first line says where it stands" \
    "state of ses_st on st0 after st6 (seq 7)" "$(head -1 <<<"$OUT")"
  expect_contains "state: Goal" $'Goal\n  goal: fix the parser (st1)\n  request: fix the parser (st1)\n' "$OUT"
  expect_contains "state: Plan with step markers" \
    $'Plan (active)\n  [x] look\n  [>] fix\n  [ ] test\n' "$OUT"
  expect_contains "state: Constraints" \
    $'Constraints\n  hard: no new deps (st2)\n  soft: small diff (st2)\n' "$OUT"
  expect_match "state: Facts with confidence and sources" \
    $'Facts\n  the parser drops blank lines \\(confidence 0\\.8; from [^)]*art_1[^)]*\\)\n' "$OUT"
  expect_contains "state: Decisions" \
    $'Decisions\n  patch the tokenizer: because smallest change (st3)\n' "$OUT"
  expect_contains "state: Open questions" $'Open questions\n  q1: python 3.8 too?\n' "$OUT"
  expect_contains "state: Files read" $'Files read\n  src/parser.py (1 time, last st4)\n' "$OUT"
  expect_contains "state: Files modified" \
    $'Files modified\n  src/parser.py (1 time, last st5): skip blank lines\n' "$OUT"
  expect_contains "state: Tool state" $'Tool state\n  pending: c1 bash (requested)\n' "$OUT"
  expect_eq "state: Last compaction" "Last compaction: none" "$(tail -1 <<<"$OUT")"

  # Time travel, a branch, JSON.
  run ts state ses_st --at st2
  expect_rc 0
  expect_eq "state --at: where it stands" "state of ses_st on st0 after st2 (seq 3)" \
    "$(head -1 <<<"$OUT")"
  expect_contains "state --at: no decision yet" $'Decisions\n  (none)\n' "$OUT"
  ts fork ses_st st1 --name alt --id alt1 >/dev/null
  run ts state ses_st --branch alt
  expect_rc 0
  expect_contains "state of a branch: before the plan" $'Plan (none)\n  (none)\n' "$OUT"
  run ts state ses_st --json
  expect_rc 0
  expect_match "state --json" '^\{"session_id":"ses_st","branch_id":"st0","seq":7,"event_id":"st6","state":\{"goal":' "$OUT"
  run ts state ses_st --branch alt1 --json
  expect_match "state --branch --json" '^\{"session_id":"ses_st","branch_id":"alt1",' "$OUT"

  # stats: one session, all of them, JSON.
  run ts stats ses_st
  expect_rc 0
  expect_eq "stats: the first line" "stats of ses_st" "$(head -1 <<<"$OUT")"
  expect_match "stats: events" $'\n''events +8'$'\n' "$OUT"
  expect_match "stats: messages" $'\n''messages +1 user, 1 assistant'$'\n' "$OUT"
  expect_match "stats: tool calls" $'\n''tool calls +1 calls, 0 results, 0 errors, 0 failures, 0 cancelled'$'\n' "$OUT"
  ts session new --id ses_other >/dev/null
  run ts stats
  expect_rc 0
  expect_eq "stats of all: the first line" "stats of 2 sessions" "$(head -1 <<<"$OUT")"
  expect_match "stats of all: events" $'\n''events +9'$'\n' "$OUT"
  run ts stats --json
  expect_match "stats --json" '^\{"session_id":null,"sessions":2,"events":9,' "$OUT"
  run ts stats ses_st --json
  expect_match "stats SESSION --json" '^\{"session_id":"ses_st","sessions":1,' "$OUT"

  # Errors: exit 1 with the library's code, nothing on stdout; usage: 2.
  run ts state ses_nope
  expect_rc 1
  expect_match "state of an unknown session" "^ctxdb: .*ses_nope.* \(CTXDB_NOT_FOUND\)$" "$ERR"
  expect_eq "state: nothing on stdout for an error" "" "$OUT"
  run ts state ses_st --branch nope
  expect_rc 1
  expect_contains "state of an unknown branch" "CTXDB_NOT_FOUND" "$ERR"
  run ts state ses_st --at evt_nope
  expect_rc 1
  expect_contains "state at an unknown event" "CTXDB_NOT_FOUND" "$ERR"
  run ts state ses_st --branch alt --at st1
  expect_rc 1
  expect_contains "state: --branch and --at together" "CTXDB_INVALID_ARG" "$ERR"
  run ts state ses_st --at
  expect_rc 2
  run ts state
  expect_rc 2
  run ts stats ses_nope
  expect_rc 1
  expect_match "stats of an unknown session" "^ctxdb: .*ses_nope.* \(CTXDB_NOT_FOUND\)$" "$ERR"
  run ts stats ses_st ses_other
  expect_rc 2
  run "$CLI" --db "$WORK/missing.ctxdb" stats
  expect_rc 1
  [ ! -e "$WORK/missing.ctxdb" ] || fail "stats created $WORK/missing.ctxdb"
}

test_artifact() {
  local A="$WORK/art.ctxdb" F="$WORK/build.log" id bin
  ta() { "$CLI" --db "$A" "$@"; }
  printf 'one\ntwo ERROR here\nthree\nfour\n' >"$F"
  run ta artifact ls
  expect_rc 1 # no database yet: inspections never create one
  run ta artifact put "$F" --kind command_log
  expect_rc 0
  expect_match "artifact put prints the id" '^art_[0-9a-f]{64}$' "$OUT"
  id=$OUT
  run ta artifact put "$F"
  expect_eq "artifact put: the same bytes, the same id" "$id" "$OUT"
  run ta artifact ls
  expect_rc 0
  expect_match "artifact ls" "^$id +30 +4 lines +command_log +.*build\.log$" "$OUT"
  run ta artifact ls --json
  expect_match "artifact ls --json" "^\[\{\"id\":\"$id\",\"raw_size\":30," "$OUT"
  run ta artifact cat "$id"
  expect_rc 0
  expect_eq "artifact cat" "$(cat "$F")" "$OUT"
  run ta artifact cat "$id" --offset 4 --length 3
  expect_eq "artifact cat --offset --length" "two" "$OUT"
  run ta artifact cat "$id" --offset 25 --length 100
  expect_eq "artifact cat: a length past the end stops there" "four" "$OUT"
  run ta artifact lines "$id" 2 2
  expect_eq "artifact lines 2 2" $'two ERROR here\nthree' "$OUT"
  run ta artifact lines "$id" 4
  expect_eq "artifact lines 4: to the end" "four" "$OUT"
  run ta artifact show "$id"
  expect_rc 0
  expect_match "artifact show" "^\\{\"id\":\"$id\",\"raw_size\":30," "$OUT"
  run ta artifact head "$id" -n 2
  expect_eq "artifact head -n 2" $'one\ntwo ERROR here' "$OUT"
  run ta artifact tail "$id" -n 1
  expect_eq "artifact tail -n 1" "four" "$OUT"
  run ta artifact head "$id"
  expect_eq "artifact head: 10 lines by default" "$(cat "$F")" "$OUT"
  run ta artifact grep "$id" error -i -C 1
  expect_rc 0
  expect_eq "artifact grep -i -C 1" $'1-one\n2:two ERROR here\n3-three' "$OUT"
  run ta artifact grep "$id" 'o' -m 1
  expect_eq "artifact grep -m 1" "1:one" "$OUT"
  expect_contains "artifact grep -m: says it stopped" "stopped" "$ERR"
  run ta artifact grep "$id" nothing-like-this
  expect_rc 0
  expect_eq "artifact grep without a match" "" "$OUT"
  run ta artifact export "$id" "$WORK/copy.log"
  expect_rc 0
  cmp -s "$F" "$WORK/copy.log" || fail "artifact export: the copy differs"
  printf '\000\377bin' >"$WORK/bin"
  run ta artifact put "$WORK/bin" --kind image --mime image/png --json
  expect_match "artifact put --json" '"kind":"image","mime":"image/png"' "$OUT"
  bin=$(ta artifact put - <"$WORK/bin")
  ta artifact export "$bin" "$WORK/bin.out"
  cmp -s "$WORK/bin" "$WORK/bin.out" || fail "artifact export: binary bytes differ"
  ta artifact cat "$bin" >"$WORK/bin.cat"
  cmp -s "$WORK/bin" "$WORK/bin.cat" || fail "artifact cat: binary bytes differ"

  # errors
  run ta artifact cat "art_$(printf '0%.0s' {1..64})"
  expect_rc 1
  expect_contains "artifact cat of an unknown id" "CTXDB_NOT_FOUND" "$ERR"
  expect_eq "artifact cat: nothing on stdout for an error" "" "$OUT"
  run ta artifact cat art_nope
  expect_rc 1
  expect_contains "artifact cat of a malformed id" "CTXDB_INVALID_ARG" "$ERR"
  run ta artifact lines "$id" 9
  expect_rc 1
  expect_contains "artifact lines past the end" "CTXDB_INVALID_ARG" "$ERR"
  run ta artifact cat "$id" --offset 31
  expect_rc 1
  expect_contains "artifact cat --offset past the end" "CTXDB_INVALID_ARG" "$ERR"
  run ta artifact lines "$id" x
  expect_rc 2
  run ta artifact show art_nope
  expect_rc 1
  expect_contains "artifact show of a malformed id" "CTXDB_INVALID_ARG" "$ERR"
  run ta artifact grep "$id" '(unclosed'
  expect_rc 1
  expect_match "artifact grep: an invalid pattern" "regular expression.*CTXDB_INVALID_ARG" "$ERR"
  run ta artifact put "$F" --kind nope
  expect_rc 1
  expect_contains "artifact put --kind nope" "CTXDB_INVALID_ARG" "$ERR"
  run ta artifact put "$WORK/does-not-exist"
  expect_rc 1
  expect_contains "artifact put of a missing file" "CTXDB_IO" "$ERR"
  run ta artifact ls ses_nope
  expect_rc 1
  expect_contains "artifact ls of an unknown session" "CTXDB_NOT_FOUND" "$ERR"
  run ta artifact head "$id" -n ten
  expect_rc 2
  run ta artifact grep "$id"
  expect_rc 2
  run ta artifact export "$id"
  expect_rc 2
  run ta artifact
  expect_rc 2
  run ta artifact --help
  expect_rc 0
  for cmd in ls cat head tail grep put export; do
    expect_contains "artifact --help lists $cmd" "artifact $cmd" "$OUT"
  done
  run ta artifact grep --help
  expect_contains "artifact grep --help" "usage: ctxdb artifact grep ID PATTERN" "$OUT"
}

# ---- the context compiler ----------------------------------------------

test_context() {
  local C="$WORK/context.ctxdb" before after n
  tc() { "$CLI" --db "$C" "$@"; }
  run tc context ses_c --budget 1000
  expect_rc 1 # no database yet: a compile never creates one
  run tc session new --id ses_c
  expect_rc 0
  run_in "$EVENTS" tc append ses_c
  expect_rc 0
  printf 'Follow the house style.' >"$WORK/style.txt"

  # The readable view: header, a bar per kind, segments, exclusions, redactions.
  run tc context ses_c --budget 4000 --reserve 1000 --system "You are a coding agent." \
    --system-file "$WORK/style.txt"
  expect_rc 0
  expect_match "context header" "^context of ses_c, branch [^ ]+, leaf evt_" "$OUT"
  expect_contains "context counter and budget" \
    "counter approx-v2; budget 3000 of 4000 tokens (1000 reserved for the answer)" "$OUT"
  expect_match "context bar of the instructions" $'\n  instructions +█+░+ +[0-9.]+k? +[0-9.]+%' "$OUT"
  expect_match "context bar of the free space" $'\n  free +█*░* +[0-9.]+k? +[0-9.]+%' "$OUT"
  expect_contains "context segments" "segments (" "$OUT"
  expect_match "context segment line" $'\n  P0  instructions +[0-9]+ tok  instructions:system-0' "$OUT"
  expect_contains "the second instruction, in order" "instructions:system-1" "$OUT"
  expect_contains "context: why and whence" "[request:" "$OUT"
  expect_contains "context: the request segment" "msg:evt_" "$OUT"
  # The goal is the prompt's own words: said once, in the conversation.
  expect_match "context: only the repeated goal excluded" $'excluded \\(1\\):\n  P0 ' "$OUT"
  expect_contains "context: the goal is not repeated" "goal: the user's goal is in the conversation as msg:" "$OUT"
  expect_contains "context: no redactions" $'redactions (0):\n  none' "$OUT"

  # A small budget leaves history out and says why.
  run tc context ses_c --budget 60
  expect_rc 0
  expect_match "context: what was left out" $'excluded \\([1-9][0-9]*\\):\n  P[0-3] ' "$OUT"

  # --json prints the bundle; --format picks the provider's shape.
  run tc context ses_c --budget 4000 --system "be brief" --json
  expect_rc 0
  expect_match "context --json" '^\{"format":"canonical","session_id":"ses_c",' "$OUT"
  expect_contains "context --json instructions" '"id":"instructions:system-0"' "$OUT"
  before=$OUT
  run tc context ses_c --budget 4000 --system "be brief" --json
  expect_eq "context --json is deterministic" "$before" "$OUT"
  run tc context ses_c --max-tokens 4000 --system "be brief" --json
  expect_eq "--max-tokens is --budget" "$before" "$OUT"
  run tc context ses_c --budget 4000 --max-tokens 4000
  expect_rc 2
  expect_contains "not both names" "are the same option" "$ERR"
  run tc context ses_c --budget 4000 --system "be brief" --json --format openai.chat
  expect_rc 0
  expect_match "context --format openai.chat" '^\{"messages":\[\{"role":"system","content":"be brief"\}' "$OUT"
  run tc context ses_c --budget 4000 --json --format anthropic.messages
  expect_rc 0
  expect_match "context --format anthropic.messages" '^\{("system"|"messages")' "$OUT"
  run tc context ses_c --budget 4000 --json --format openai.responses
  expect_match "context --format openai.responses" '^\{"input":\[' "$OUT"
  run tc context ses_c --budget 4000 --system "be brief" --json --format gemini.generate_content
  expect_rc 0
  expect_match "context --format gemini.generate_content" '^\{"systemInstruction":\{"parts":\[\{"text":"be brief"\}' "$OUT"
  run tc context ses_c --budget 4000 --system "be brief" --json --format ai.sdk
  expect_rc 0
  expect_match "context --format ai.sdk" '^\{"messages":\[\{"role":"system","content":"be brief"\}' "$OUT"

  # Redactions are listed by rule and count, never the secret.
  run_in '{"type":"UserPromptSubmitted","actor":"user","payload":{"text":"my key is AKIAIOSFODNN7EXAMPLE"}}' \
    tc append ses_c
  run tc context ses_c --budget 4000
  expect_rc 0
  expect_match "context lists a redaction" $'redactions \\(1\\):\n  [^ ]+ x1 in msg:evt_' "$OUT"
  [[ "$OUT" != *AKIAIOSFODNN7EXAMPLE* ]] || fail "the view shows a redacted secret"

  # A branch, the past; the compile writes nothing unless --record.
  before=$(tc export)
  run tc context ses_c --budget 4000 --branch main
  expect_rc 0
  after=$(tc export)
  expect_eq "context writes nothing" "$before" "$after"
  n=$(printf '%s\n' "$before" | wc -l)
  run tc context ses_c --budget 4000 --record
  expect_rc 0
  after=$(tc export)
  expect_eq "context --record appends one event" "$((n + 1))" "$(printf '%s\n' "$after" | wc -l)"
  expect_contains "context --record appends a ContextBuilt" '"type":"ContextBuilt"' "$(printf '%s\n' "$after" | tail -1)"

  # Errors.
  run tc context ses_c --budget 5 --system "$(printf 'word %.0s' {1..200})"
  expect_rc 1
  expect_contains "context over the budget" "CTXDB_BUDGET" "$ERR"
  expect_contains "context names the sizes" "only 5 are available" "$ERR"
  run tc context ses_nope --budget 100
  expect_rc 1
  expect_contains "context of an unknown session" "CTXDB_NOT_FOUND" "$ERR"
  run tc context ses_c --budget 100 --branch nope
  expect_rc 1
  expect_contains "context of an unknown branch" "CTXDB_NOT_FOUND" "$ERR"
  run tc context ses_c --budget 100 --leaf evt_nope
  expect_rc 1
  expect_contains "context of an unknown leaf" "CTXDB_NOT_FOUND" "$ERR"
  run tc context ses_c --budget 100 --json --format gopher
  expect_rc 1
  expect_contains "context of an unknown format" "CTXDB_INVALID_ARG" "$ERR"
  run tc context ses_c
  expect_rc 2
  expect_contains "context without --budget" "--budget" "$ERR"
  run tc context ses_c --budget many
  expect_rc 2
  run tc context ses_c --budget 100 --branch main --leaf evt_x
  expect_rc 2
  run tc context ses_c --budget 100 --format openai.chat
  expect_rc 2
  run tc context ses_c --budget 100 --system-file "$WORK/missing.txt"
  expect_rc 1
  expect_contains "context --system-file of a missing file" "CTXDB_IO" "$ERR"
  run tc context --help
  expect_rc 0
  expect_contains "context --help" "usage: ctxdb context SESSION --budget N" "$OUT"
  expect_contains "context --help names --continue" "--continue" "$OUT"

  # A branch ending on the assistant's finished answer: a new request, or
  # --continue, or the compile is refused naming the answer.
  run_in '{"type":"AssistantMessageCreated","actor":"assistant","payload":{"content":[{"type":"text","text":"Fixed."}]}}' \
    tc append ses_c
  expect_rc 0
  run tc context ses_c --budget 4000
  expect_rc 1
  expect_contains "context ending on an answer" "CTXDB_CONFLICT" "$ERR"
  expect_contains "context names the way out" "continuation" "$ERR"
  run tc context ses_c --budget 4000 --continue --json
  expect_rc 0
  expect_contains "context --continue" '"Fixed."' "$OUT"
  run tc context ses_c --budget 4000 --request "now the docs" --json
  expect_rc 0
  expect_contains "context --request after an answer" "now the docs" "$OUT"
}

# ---- search (ctxdb_search) ------------------------------------------------

test_search() {
  local S="$WORK/search.ctxdb"
  ts() { "$CLI" --db "$S" "$@"; }
  run ts init
  run ts session new --id s1 --agent a
  run ts session new --id s2 --agent a
  run_in "$EVENTS" ts append s1
  expect_rc 0
  run_in '{"type":"UserPromptSubmitted","actor":"user","payload":{"text":"数据库连接错误 in the parser"}}' ts append s2
  expect_rc 0
  expect_eq "appends leave the search index behind" "0" \
    "$("$SQLITE3" "$S" "SELECT (SELECT pos FROM search_mark) = (SELECT max(pos) FROM events);")"
  run ts search parser
  expect_rc 0
  expect_eq "a search indexes what appends left (for every later search)" "1" \
    "$("$SQLITE3" "$S" "SELECT (SELECT pos FROM search_mark) = (SELECT max(pos) FROM events);")"
  expect_contains "search: a tool call's args" "s1 #3 assistant" "$OUT"
  expect_contains "search: marks the match" "«parser»" "$OUT"
  expect_contains "search: every session" "s2 #2 user" "$OUT"
  run ts search parser --session s2
  expect_eq "search --session" "s2 #2 user  数据库连接错误 in the «parser»" "$OUT"
  run ts search 连接错误
  expect_eq "search: Chinese in a sentence" "s2 #2 user  数据库«连接错误» in the parser" "$OUT"
  run ts search "错误 OR nothing"
  expect_eq "search: a Chinese word in an FTS5 expression" "s2 #2 user  数据库连接«错误» in the parser" "$OUT"
  run ts search "src/pars" --role assistant --limit 1
  expect_contains "search --role --limit: a piece of a path" "s1 #3 assistant" "$OUT"
  run ts search failing --json
  expect_match "search --json" '^\{"query":"failing","syntax":"plain","hits":\[\{"session_id":"s1",' "$OUT"
  run_in '{"type":"UserPromptSubmitted","actor":"user","visibility":"secret","payload":{"text":"the parser key is hunter2"}}' ts append s2
  expect_rc 0
  run ts search hunter2
  expect_eq "search leaves out a secret event" "no hits" "$OUT"
  run ts search hunter2 --sensitive
  expect_eq "search --sensitive finds it" "s2 #3 user  the parser key is «hunter2»" "$OUT"
  run ts search '"unbalanced ('
  expect_rc 0
  expect_eq "search: not FTS5 syntax is plain words" "no hits" "$OUT"
  run ts search parser --session nope
  expect_rc 1
  expect_contains "search of an unknown session" "CTXDB_NOT_FOUND" "$ERR"
  run ts search parser --branch nope --session s1
  expect_rc 1
  expect_contains "search of an unknown branch" "CTXDB_NOT_FOUND" "$ERR"
  run ts search parser --role robot
  expect_rc 1
  expect_contains "search --role robot" "CTXDB_INVALID_ARG" "$ERR"
  run ts search ""
  expect_rc 1
  expect_contains "search of nothing" "CTXDB_INVALID_ARG" "$ERR"
  run ts search parser --limit ten
  expect_rc 2
  run ts search
  expect_rc 2
  run ts search --help
  expect_contains "search --help" "usage: ctxdb search QUERY" "$OUT"
}

# ---- Compaction ----
test_compact() {
  local K="$WORK/compact.ctxdb" events="" i
  tk() { "$CLI" --db "$K" "$@"; }
  run tk session new --id s --agent a
  expect_rc 0
  for i in 0 1 2 3 4 5; do
    events+='{"type":"UserPromptSubmitted","actor":"user","payload":{"text":"turn '$i'"}}'$'\n'
    events+='{"type":"AssistantMessageCreated","actor":"a","payload":{"content":[{"type":"tool_call","id":"c'$i'","name":"bash","args":{}}]}}'$'\n'
    events+='{"type":"ToolCallFinished","actor":"tool","payload":{"tool_call_id":"c'$i'","output":"all tests passed, all tests passed, all tests passed, all tests passed"}}'$'\n'
    events+='{"type":"FileWritten","actor":"tool","payload":{"path":"src/m'$i'.py"}}'$'\n'
  done
  run_in "$events" tk append s
  expect_rc 0
  run tk compactions s
  expect_eq "no compactions yet" "no compactions" "$OUT"
  run tk compact s --keep-recent 60 --dry-run
  expect_rc 0
  expect_contains "dry run: the status" "status:     ready" "$OUT"
  expect_contains "dry run: the cut" "cut:        turn at evt_" "$OUT"
  expect_contains "dry run: an obligation" "src/m0.py" "$OUT"
  expect_match "dry run: the transcript's size" "transcript: [0-9]+ tokens \(budget 109616\)" "$OUT"
  run tk compactions s
  expect_eq "a dry run writes nothing" "no compactions" "$OUT"
  run tk compact s --keep-recent 60 --dry-run --json
  expect_contains "dry run --json: the transcript" '"transcript":' "$OUT"
  run tk compact s --keep-recent 60 --transcript-max 40 --dry-run
  expect_rc 0
  expect_match "--transcript-max leaves out the middle" "transcript: [0-9]+ tokens \(budget 40\); #[0-9]+\.\.#[0-9]+ left out \([0-9]+ entries, about [0-9]+ tokens\)" "$OUT"
  run tk compact s --transcript-max -5 --dry-run
  expect_rc 2
  printf '{"goal":{"current_task":"t"},"next_steps":["n"]}' >"$WORK/summary.json"
  run tk compact s --keep-recent 60 --summary-file "$WORK/summary.json"
  expect_rc 1
  expect_contains "a failing summary names its checks" "files_modified" "$ERR"
  expect_contains "and its code" "CTXDB_CHECK_FAILED" "$ERR"
  run tk log s
  expect_contains "the failure is recorded" "CompactionFailed" "$OUT"
  run tk compact s --keep-recent 60 --builtin
  expect_rc 0
  expect_match "compact prints the compaction" "compacted: +evt_" "$OUT"
  expect_contains "compact prints the checks" "checks:     9 passed" "$OUT"
  run tk compactions s
  expect_rc 0
  expect_match "compactions lists it" "^#[0-9]+ +evt_[0-9A-Z]+ +range #1\.\.#[0-9]+ +tokens [0-9]+ -> [0-9]+ +ratio 0\.[0-9]+ +checks 9/9 +ctxdb\.extractive$" "$OUT"
  run tk compactions s --json
  expect_match "compactions --json" '^\[\{"event_id":"evt_' "$OUT"
  run tk compact s --builtin --summary-file "$WORK/summary.json"
  expect_rc 2
  run tk compact nope
  expect_rc 1
  expect_contains "unknown session" "CTXDB_NOT_FOUND" "$ERR"
  run tk compact s --keep-recent lots
  expect_rc 2
  local first last
  # A stored event's JSON starts with its id.
  first=$(tk export s | sed -n 2p | cut -d'"' -f4)
  last=$(tk export s | tail -1 | cut -d'"' -f4)
  run tk branch-summary s "$last" "$first"
  expect_rc 0
  expect_contains "branch-summary appends" "appended:   evt_" "$OUT"
  expect_contains "branch-summary prints the text" "abandoned" "$OUT"
  run tk branch-summary s "$first" "$last"
  expect_rc 1
  expect_contains "nothing abandoned" "CTXDB_INVALID_ARG" "$ERR"
}

for t in test_init test_session_new test_sessions_table test_append test_log \
  test_verify_ok test_verify_colour test_export_import_roundtrip test_verify_detects_tampering \
  test_export_refuses_a_broken_chain test_damaged_id_is_reported \
  test_anchor_and_artifacts test_verify_detects_forged_purge \
  test_show_one test_append_each test_rebuild test_errors test_tree test_views test_state \
  test_artifact test_context test_compact test_help; do
  CURRENT=$t
  "$t"
  echo "ok - $t"
done
# Search
CURRENT=test_search
test_search
echo "ok - test_search"
echo "all CLI tests passed"
