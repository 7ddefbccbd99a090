#!/usr/bin/env bash
# `ctxdb memory ...` given bad or extreme input: the flags' values are
# checked before anything is written. Each check was a defect a review
# found (session 26).
# usage: memory_input_test.sh PATH/TO/ctxdb [CHECK]
#   CHECK: the name of one check function; without it, every check runs
#   (each in its own subshell, so one failure does not hide the others).
set -euo pipefail

CLI=${1:?usage: review_memory_test.sh PATH/TO/ctxdb [CHECK]}
ONLY=${2:-}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export CTXDB_DB="$WORK/m.ctxdb"
CURRENT=""

# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

setup() {
  rm -f "$CTXDB_DB"*
  run "$CLI" init && expect_rc 0
  run "$CLI" session new --id s1 --agent a && expect_rc 0
  echo '{"id":"e1","type":"UserPromptSubmitted","actor":"user","payload":{"text":"x"}}' |
    "$CLI" append s1 >/dev/null
}

# A field of the JSON object in $OUT (an integer or a number).
field() {
  local v
  v=$(printf '%s' "$OUT" | grep -o "\"$1\":[-0-9.e]*" | head -1)
  printf '%s' "${v#*:}"
}

# A --ttl past int64 milliseconds is a usage error naming --ttl (it wrapped:
# 213503982335d was stored as about 9.5 hours).
check_ttl_overflow() {
  CURRENT="ttl overflow"
  setup
  run "$CLI" memory put --scope project --scope-id p1 --source e1 --ttl 213503982335d --json "wrapped"
  if [ "$RC" -eq 0 ]; then
    fail "accepted; stored expires_at - valid_from = $(( $(field expires_at) - $(field valid_from) )) ms"
  fi
  expect_rc 2 && expect_contains "stderr" "--ttl" "$ERR"
  # The largest 12-digit day count overflows to a negative number, which the
  # engine then reports as "field 'ttl_ms' must be >= 1": also --ttl's job.
  run "$CLI" memory put --scope project --scope-id p1 --source e1 --ttl 999999999999d "neg"
  expect_rc 2 && expect_contains "stderr" "--ttl" "$ERR"
}

# --expires, --as-of and --now take exactly ms or YYYY-MM-DD[THH:MM[:SS]][Z]
# naming a time that exists; trailing junk, a space for T, an offset and
# Feb 30 were accepted (the time dropped, the offset ignored, Mar 2).
check_expires_junk() {
  CURRENT="expires junk"
  setup
  local t bad=""
  for t in "2099-01-01junk" "2099-01-01 12:00" "2099-01-01T12:00+05:00" "2099-02-30" \
           "2099-13-01" "2099-01-01T25:00"; do
    run "$CLI" memory put --scope project --scope-id p1 --source e1 --expires "$t" --json "x"
    [ "$RC" -eq 2 ] || bad+=" ['$t': exit $RC, expires_at $(field expires_at)]"
  done
  run "$CLI" memory ls --as-of "2099-01-01junk"
  [ "$RC" -eq 2 ] || bad+=" [--as-of '2099-01-01junk': exit $RC]"
  [ -z "$bad" ] || fail "accepted:$bad"
  # Every form it takes, to the millisecond (4102444800000 is 2100-01-01).
  local want
  for t in "2100-01-01:4102444800000" "2100-01-01Z:4102444800000" \
           "2100-01-01T12:30:4102489800000" "2100-01-01T12:30:15Z:4102489815000" \
           "4102444800123:4102444800123"; do
    want=${t##*:}
    run "$CLI" memory put --scope session --source e1 --expires "${t%:*}" --json "ok"
    expect_rc 0
    [ "$(field expires_at)" == "$want" ] || bad+=" ['${t%:*}': $(field expires_at), not $want]"
  done
  [ -z "$bad" ] || fail "misread:$bad"
}

# --confidence reaches the engine as given: 1.0000001 is out of range and
# 1e-7 is not 0 (six decimals made them 1 and 0); nan and inf are usage
# errors (they made invalid JSON).
check_confidence() {
  CURRENT="confidence"
  setup
  run "$CLI" memory put --scope session --source e1 --confidence 1.0000001 "too sure"
  [ "$RC" -ne 0 ] || fail "--confidence 1.0000001 (> 1) was accepted: <$OUT>"
  expect_contains "stderr" "confidence" "$ERR"
  run "$CLI" memory put --scope session --source e1 --confidence 1e-7 --json "tiny"
  expect_rc 0
  [ "$(field confidence)" != "0" ] || fail "--confidence 1e-7 was stored as 0: <$OUT>"
  run "$CLI" memory put --scope session --source e1 --confidence nan "nan"
  expect_rc 2 && expect_contains "stderr" "--confidence" "$ERR"
}

# `memory update` without --source is a usage error, as `memory put` is
# (it sent "{,"content":...}").
check_update_without_source() {
  CURRENT="update without --source"
  setup
  run "$CLI" memory put --scope session --source e1 --id m1 "v1" && expect_rc 0
  run "$CLI" memory update m1 "v2"
  expect_rc 2 && expect_contains "stderr" "--source" "$ERR"
  run "$CLI" memory update m1 --session s1
  expect_rc 2 && expect_contains "stderr" "--source" "$ERR"
}

# `memory ls` lists every memory unless --limit says otherwise (the
# library's default of 1000 cut it silently).
check_ls_lists_everything() {
  CURRENT="ls past 1000"
  setup
  local i sep="" json="["
  for i in $(seq 1 1001); do
    json+="$sep{\"scope\":\"session\",\"content\":\"c$i\",\"source_refs\":[\"e1\"]}"
    sep=","
  done
  printf '%s]' "$json" >"$WORK/c.json"
  run "$CLI" memory promote s1 "$WORK/c.json" && expect_rc 0
  run "$CLI" memory ls --json && expect_rc 0
  local n
  n=$(printf '%s' "$OUT" | grep -o '"memory_id"' | wc -l)
  [ "$n" -eq 1001 ] || fail "memory ls listed $n of 1001 memories"
}

CHECKS=(check_ttl_overflow check_expires_junk check_confidence check_update_without_source
        check_ls_lists_everything)
failed=0
for c in "${CHECKS[@]}"; do
  [ -z "$ONLY" ] || [ "$ONLY" == "$c" ] || continue
  if ("$c"); then echo "ok: $c"; else echo "FAILED: $c" >&2; failed=1; fi
done
[ "$failed" -eq 0 ] && echo "memory input: all checks passed"
exit "$failed"
