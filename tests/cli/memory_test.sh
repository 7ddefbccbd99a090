#!/usr/bin/env bash
# End-to-end tests of `ctxdb memory ...`: put, update, ls (with --as-of and
# --all-versions), show, search (scopes, CJK, FTS syntax), forget and purge
# (verify stays green), promote, and bad input naming the field.
# usage: memory_test.sh PATH/TO/ctxdb
set -euo pipefail

CLI=${1:?usage: memory_test.sh PATH/TO/ctxdb}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export CTXDB_DB="$WORK/m.ctxdb"
CURRENT=""

# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

CURRENT="setup"
run "$CLI" init && expect_rc 0
run "$CLI" session new --id s1 --agent a && expect_rc 0
echo '{"id":"e1","type":"UserPromptSubmitted","actor":"user","ts":1700000000000,"payload":{"text":"x"}}' |
  "$CLI" append s1 >/dev/null

CURRENT="put"
run "$CLI" memory put --scope project --scope-id p1 --kind preference --source e1 \
  --update-policy manual --id m1 "use pnpm, not npm, for installs"
expect_rc 0 && expect_contains "id" "m1" "$OUT"
run "$CLI" memory put --scope project --scope-id p2 --source e1 --ttl 7d --id m2 "use npm ci for installs"
expect_rc 0
run "$CLI" memory put --scope project --scope-id p1 --source e1 --ttl 7d --id m3 "数据库迁移必须先备份"
expect_rc 0

CURRENT="put: bad input names the field"
run "$CLI" memory put --scope project --scope-id p1 --source e1 "no expiry"
expect_rc 1 && expect_contains "stderr" "update_policy" "$ERR"
run "$CLI" memory put --scope project --scope-id p1 --ttl 7d "no source"
expect_rc 2 && expect_contains "stderr" "--source" "$ERR"
run "$CLI" memory put --scope nebula --scope-id x --source e1 --ttl 7d "bad scope"
expect_rc 1 && expect_contains "stderr" "scope" "$ERR"
run "$CLI" memory put --scope session --source e1 --confidence 2 "too sure"
expect_rc 1 && expect_contains "stderr" "confidence" "$ERR"
run "$CLI" memory put --scope project --scope-id p1 --source e1 --expires 2001-01-01 "past"
expect_rc 1 && expect_contains "stderr" "expires_at" "$ERR"
run "$CLI" memory put --scope session --source evt_nope "unknown source"
expect_rc 2 && expect_contains "stderr" "--session" "$ERR"
run "$CLI" memory put --scope session --source evt_nope --session s1 "unknown source"
expect_rc 1 && expect_contains "stderr" "evt_nope" "$ERR"

CURRENT="search: scopes, CJK, FTS syntax"
run "$CLI" memory search installs --scope project:p1
expect_rc 0 && expect_contains "p1" "m1" "$OUT" && expect_absent "p1" "m2" "$OUT"
run "$CLI" memory search installs
expect_rc 0 && expect_contains "all scopes" "m2" "$OUT"
run "$CLI" memory search 备份 --scope project:p1
expect_rc 0 && expect_contains "CJK" "m3" "$OUT"
run "$CLI" memory search 'pnpm AND (' --fts --json --scope project:p1
expect_rc 0 && expect_contains "fell back" '"fell_back":true' "$OUT" && expect_contains "found" '"m1"' "$OUT"
run "$CLI" memory search "installs zebra" --scope project:p1
expect_rc 0 && expect_contains "any word" "m1" "$OUT"
run "$CLI" memory search "installs zebra" --scope project:p1 --all
expect_rc 0 && expect_contains "--all: every word" "no memories found" "$OUT"
run "$CLI" memory search "installs" --scope project:p1 --all --fts
expect_rc 2
run "$CLI" memory search installs --scope project:p1 --now 1600000000000
expect_rc 0 && expect_contains "not valid yet" "no memories found" "$OUT"

CURRENT="update, ls --all-versions and --as-of"
BEFORE_UPDATE=$(date +%s%3N)
sleep 0.01
run "$CLI" memory update m1 --source e1 "use pnpm 9 for installs"
expect_rc 0
run "$CLI" memory ls --all-versions
expect_contains "old version" "superseded" "$OUT" && expect_contains "new version" "pnpm 9" "$OUT"
run "$CLI" memory ls --as-of "$BEFORE_UPDATE"
expect_contains "as of" "not npm" "$OUT" && expect_absent "as of" "pnpm 9" "$OUT"
run "$CLI" memory show m1
expect_rc 0 && expect_contains "show" '"version":2' "$OUT"

CURRENT="forget and purge"
run "$CLI" memory forget m2
expect_rc 0 && expect_contains "forget" "forgotten by" "$OUT"
run "$CLI" memory search installs
expect_absent "tombstoned" "m2" "$OUT"
run "$CLI" memory forget m1 --purge --reason "asked to"
expect_rc 0 && expect_contains "purge" "purged by" "$OUT"
run "$CLI" export
expect_absent "purged content" "pnpm" "$OUT" && expect_contains "tombstone keeps the log" "npm ci" "$OUT"
run "$CLI" verify
expect_rc 0 && expect_contains "verify" "ok:" "$OUT" && expect_contains "verify" "purged:" "$OUT"
run "$CLI" rebuild --check
expect_rc 0
run "$CLI" memory show m1
expect_rc 1 && expect_contains "show purged" "purged" "$ERR"

CURRENT="promote"
echo '[{"scope":"session","content":"a","source_refs":["e1"]},{"scope":"user","scope_id":"u","content":"b","source_refs":["e1"],"ttl_ms":1000}]' >"$WORK/c.json"
run "$CLI" memory promote s1 "$WORK/c.json"
expect_rc 0 && [ "$(echo "$OUT" | wc -l)" -eq 2 ] || fail "two ids: <$OUT>"
echo '[{"scope":"session","content":"a","source_refs":["e1"]},{"scope":"user","content":"b","source_refs":["e1"]}]' >"$WORK/bad.json"
run "$CLI" memory promote s1 "$WORK/bad.json"
expect_rc 1 && expect_contains "names the candidate" "line 2" "$ERR"

CURRENT="optimize"
for i in 1 2 3 4 5 6; do
  "$CLI" memory put --scope project --scope-id p9 --source e1 --update-policy manual \
    --id "o$i" "the ledger audit runs on night $i" >/dev/null
done
run "$CLI" memory search "ledger audit" --scope project:p9 --now 4102444800000 --json
expect_rc 0
BEFORE=$OUT
run "$CLI" optimize
expect_rc 0 && expect_match "memory_fts merged" "memory_fts +segments [2-9][0-9]* -> 1," "$OUT"
expect_contains "session search" "search_words" "$OUT"
run "$CLI" optimize --json
expect_rc 0 && expect_contains "json" '"index":"memory_fts","segments_before":1,"segments_after":1' "$OUT"
run "$CLI" memory search "ledger audit" --scope project:p9 --now 4102444800000 --json
expect_rc 0
expect_contains "found" '"memory_id":"o6"' "$OUT" && expect_eq "the same answer" "$BEFORE" "$OUT"
run "$CLI" optimize extra
expect_rc 2
run "$CLI" --db "$WORK/none.ctxdb" optimize
expect_rc 1

echo "memory CLI: all checks passed"
