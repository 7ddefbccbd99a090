#!/usr/bin/env bash
# End-to-end tests of `ctxdb record`: a provider's response or stream from
# stdin recorded as one AssistantMessageCreated, a retry, and the errors
# (a missing flag, a missing field, a cut stream), after which nothing is
# stored.
# usage: record_test.sh PATH/TO/ctxdb FIXTURE_DIR
set -euo pipefail

CLI=${1:?usage: record_test.sh PATH/TO/ctxdb FIXTURE_DIR}
FIX=${2:?usage: record_test.sh PATH/TO/ctxdb FIXTURE_DIR}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
unset CTXDB_DB
export CTXDB_DB=$WORK/r.ctxdb
CURRENT=""

# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

CURRENT="setup"
run "$CLI" session new --id s
expect_rc 0

CURRENT="record a complete response"
run_in "$(cat "$FIX/anthropic_thinking_tools.json")" "$CLI" record s --format anthropic.messages
expect_rc 0
expect_match "stdout" '^recorded rsp_[0-9a-f]{40} at seq 2$' "$OUT"
first=$OUT

CURRENT="a retry records nothing new"
run_in "$(cat "$FIX/anthropic_thinking_tools.json")" "$CLI" record s --format anthropic.messages
expect_rc 0
expect_eq "stdout" "$first" "$OUT"

CURRENT="record a stream, printed as JSON"
run_in "$(cat "$FIX/openai_chat_stream_tools.ndjson")" "$CLI" record s --format openai.chat \
  --stream --actor gpt --latency-ms 250 --json
expect_rc 0
expect_contains "event" '"actor":"gpt"' "$OUT"
expect_contains "event" '"id":"call_Fo4C9SPLXrcPLUSbzLeCQXcU","name":"get_weather","args":{"location":"Bogotá"}' "$OUT"
expect_contains "event" '"latency_ms":250' "$OUT"

CURRENT="stats sum the usage with one meaning"
run "$CLI" stats s
expect_rc 0
# Anthropic 21 uncached + OpenAI 1280 - 1024 cached.
expect_contains "stats" "277 in, 434 out, 3072 cache read, 188086 cache write" "$OUT"

CURRENT="a price table gives a cost"
run "$CLI" session new --id p --meta '{"pricing":{"*":{"input":3,"output":15}}}'
expect_rc 0
run_in "$(cat "$FIX/openai_chat_parallel_tools.json")" "$CLI" record p --format openai.chat
expect_rc 0
run "$CLI" stats p
# 162 uncached x $3 + 317 out x $15, per million tokens.
expect_contains "usage" "162 in, 317 out, 1920 cache read, 0 cache write, 256 reasoning" "$OUT"
expect_contains "cost" 'cost         $0.005241 over 1 priced messages' "$OUT"
run "$CLI" stats s
expect_contains "no prices" "cost         none" "$OUT"

CURRENT="a response after a recorded compile calibrates its model"
run_in '{"type":"ContextBuilt","actor":"ctxdb","payload":{"bundle_hash":"h","used_tokens":2000}}' \
  "$CLI" append s
expect_rc 0
run_in "$(cat "$FIX/openai_chat_parallel_tools.json")" "$CLI" record s --format openai.chat
expect_rc 0
run "$CLI" stats
expect_contains "calibration" \
  "calibration  o4-mini-2025-04-16: x1.041 (2082 reported / 2000 counted, 1 samples)" "$OUT"

CURRENT="errors store nothing"
run "$CLI" session show s
before=$OUT
run_in "" "$CLI" record s
expect_rc 2
expect_contains "stderr" "--format" "$ERR"
run_in '{"id":"x","choices":[{"index":0}]}' "$CLI" record s --format openai.chat
expect_rc 1
expect_contains "stderr" "choices[0].message is missing" "$ERR"
run_in "$(cat "$FIX/anthropic_stream_cut.sse")" "$CLI" record s --format anthropic.messages --stream
expect_rc 1
expect_contains "stderr" "message_stop" "$ERR"
run_in "{" "$CLI" record s --format openai.chat
expect_rc 1
expect_contains "stderr" "CTXDB_INVALID_JSON" "$ERR"
run_in "$(cat "$FIX/openai_chat_text.json")" "$CLI" record nope --format openai.chat
expect_rc 1
expect_contains "stderr" "CTXDB_NOT_FOUND" "$ERR"
run_in "$(cat "$FIX/openai_chat_text.json")" "$CLI" record s --format cohere.chat
expect_rc 1
expect_contains "stderr" "format" "$ERR"
run "$CLI" session show s
expect_eq "session after the errors" "$before" "$OUT"

echo "record_test: ok"
