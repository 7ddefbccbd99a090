#!/usr/bin/env bash
# End-to-end tests of the streaming artifact put (`ctxdb artifact put FILE`
# and `put -`): a large file goes in a block at a time (the process stays
# far smaller than the file), stdin and a file give the same id, cat and
# export stream it back byte for byte, and a put that fails or is killed
# half way stores nothing; export and import carry artifacts, checked by
# hash.
# usage: artifact_stream_test.sh PATH/TO/ctxdb [SQLITE3]
set -euo pipefail

CLI=${1:?usage: artifact_stream_test.sh PATH/TO/ctxdb [SQLITE3]}
SQLITE3=${2:-sqlite3}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export CTXDB_DB="$WORK/a.ctxdb"
CURRENT=""

# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

count() { "$SQLITE3" "$CTXDB_DB" "SELECT count(*) FROM $1"; }

CURRENT="put a large file"
# 96 MiB: 64 MiB of text (compressible), 32 MiB of random bytes (stored raw).
python3 - "$WORK/big" <<'PY'
import os, sys
with open(sys.argv[1], "wb") as f:
    line = b"".join(b"%08d step ok: build/test line with some text\n" % i for i in range(4096))
    for _ in range(64 << 20 // len(line) + 1):
        f.write(line)
    f.truncate(64 << 20)
    f.seek(0, 2)
    f.write(os.urandom(32 << 20))
PY
want="art_$(sha256sum "$WORK/big" | cut -c1-64)"
/usr/bin/time -f '%M' -o "$WORK/rss" "$CLI" artifact put "$WORK/big" --kind command_log >"$WORK/id"
expect_eq "artifact put FILE: the id is the SHA-256 of the file" "$want" "$(cat "$WORK/id")"
rss_kb=$(tail -1 "$WORK/rss")
if [ -z "${CTXDB_SANITIZED:-}" ]; then # see CMakeLists.txt
  [ "$rss_kb" -lt 65536 ] || fail "artifact put of a 96 MiB file peaked at ${rss_kb} KiB (want < 64 MiB)"
fi
run "$CLI" artifact show "$want"
expect_rc 0
expect_match "the artifact's size" '"raw_size":100663296' "$OUT"

CURRENT="cat and export stream it back"
"$CLI" artifact cat "$want" >"$WORK/big.cat"
cmp -s "$WORK/big" "$WORK/big.cat" || fail "artifact cat gives other bytes"
"$CLI" artifact export "$want" "$WORK/big.out"
cmp -s "$WORK/big" "$WORK/big.out" || fail "artifact export gives other bytes"
"$CLI" artifact cat "$want" --offset 67108860 --length 20000000 >"$WORK/range"
tail -c +67108861 "$WORK/big" | head -c 20000000 >"$WORK/range.want" || true # tail: SIGPIPE
cmp -s "$WORK/range" "$WORK/range.want" || fail "artifact cat of a range across blocks"

CURRENT="put - (stdin)"
run "$CLI" artifact put - <"$WORK/big"
expect_rc 0
expect_eq "artifact put -: the same id as the file" "$want" "$OUT"
expect_eq "stored once" "1" "$(count artifacts)"
printf 'small\n' | "$CLI" artifact put - >"$WORK/small"
expect_eq "put - of a pipe" "art_$(printf 'small\n' | sha256sum | cut -c1-64)" "$(cat "$WORK/small")"
: | "$CLI" artifact put - >"$WORK/empty"
expect_eq "put - of nothing: the empty artifact" \
  "art_e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" "$(cat "$WORK/empty")"

CURRENT="bad input stores nothing"
chunks=$(count artifact_chunks)
arts=$(count artifacts)
run "$CLI" artifact put "$WORK/missing"
expect_rc 1
expect_contains "a missing file" "cannot open '$WORK/missing'" "$ERR"
run "$CLI" --db "$WORK/none.ctxdb" artifact put "$WORK/missing"
expect_rc 1
[ ! -e "$WORK/none.ctxdb" ] || fail "a put of a missing file created the database"
run "$CLI" artifact put "$WORK/big" --kind movie
expect_rc 1
expect_contains "a bad kind" "movie" "$ERR"
run "$CLI" artifact put "$WORK"
expect_rc 1
expect_contains "a directory" "CTXDB_IO" "$ERR"
expect_eq "no chunk left behind" "$chunks" "$(count artifact_chunks)"
expect_eq "no artifact left behind" "$arts" "$(count artifacts)"

CURRENT="a put killed half way stores nothing"
mkfifo "$WORK/fifo"
"$CLI" artifact put "$WORK/fifo" >/dev/null 2>&1 &
pid=$!
exec 3>"$WORK/fifo"
head -c $((8 << 20)) "$WORK/big" >&3 # 32 chunks written, not committed
sleep 0.5
kill -9 "$pid"
wait "$pid" 2>/dev/null || true
exec 3>&-
expect_eq "no chunk left behind" "$chunks" "$(count artifact_chunks)"
expect_eq "no artifact left behind" "$arts" "$(count artifacts)"
run "$CLI" artifact put - <"$WORK/small"
expect_rc 0 # the lock went with the process

CURRENT="export and import carry artifacts"
export CTXDB_DB="$WORK/src.ctxdb"
"$CLI" session new --id s1 --agent a >/dev/null
python3 - "$WORK/out.txt" "$WORK/events.ndjson" <<'PY'
import json, sys
out = "".join("test %05d ... ok (%d ms)\n" % (i, i % 97) for i in range(30000))
open(sys.argv[1], "w").write(out)
with open(sys.argv[2], "w") as f:
    f.write(json.dumps({"type": "AssistantMessageCreated", "actor": "assistant", "payload":
                        {"content": [{"type": "tool_call", "id": "c1", "name": "pytest"}]}}) + "\n")
    f.write(json.dumps({"id": "e_out", "type": "ToolCallFinished", "actor": "tool",
                        "payload": {"tool_call_id": "c1", "output": out}}) + "\n")
PY
"$CLI" append s1 <"$WORK/events.ndjson" >/dev/null
id=$("$CLI" artifact ls s1 --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["id"])')
expect_eq "the output was spilled" "art_$(sha256sum "$WORK/out.txt" | cut -c1-64)" "$id"
"$CLI" export s1 >"$WORK/s1.ndjson"
expect_eq "3 events, the artifact and its 3 chunks (~750 KB)" "7" "$(wc -l <"$WORK/s1.ndjson" | tr -d ' ')"
run "$CLI" export s1 --events-only
expect_eq "--events-only" "3" "$(printf '%s\n' "$OUT" | wc -l | tr -d ' ')"
export CTXDB_DB="$WORK/dst.ctxdb"
run "$CLI" import "$WORK/s1.ndjson"
expect_rc 0
expect_eq "import" "imported 3, skipped 0" "$OUT"
"$CLI" artifact cat "$id" >"$WORK/out.back"
cmp -s "$WORK/out.txt" "$WORK/out.back" || fail "artifact cat after the import gives other bytes"
run "$CLI" verify
expect_rc 0
run "$CLI" artifact show "$id"
expect_contains "the reference came along" '"event_id":"e_out","role":"output","session_id":"s1"' "$OUT"

CURRENT="a corrupted chunk imports nothing"
export CTXDB_DB="$WORK/bad.ctxdb"
python3 - "$WORK/s1.ndjson" "$WORK/bad.ndjson" <<'PY'
import base64, json, sys
lines = open(sys.argv[1]).read().splitlines()
for i, line in enumerate(lines):
    rec = json.loads(line)
    if rec.get("ctxdb_record") == "artifact_chunk" and rec["idx"] == 2:
        data = bytearray(base64.b64decode(rec["data"]))
        data[len(data) // 2] ^= 0x01
        rec["data"] = base64.b64encode(bytes(data)).decode()
        lines[i] = json.dumps(rec, separators=(",", ":"))
open(sys.argv[2], "w").write("\n".join(lines) + "\n")
PY
run "$CLI" import "$WORK/bad.ndjson"
expect_rc 1
expect_contains "the corrupted chunk is named" "CTXDB_CORRUPT" "$ERR"
expect_contains "the corrupted chunk is named" "chunk 2 of artifact $id" "$ERR"
run "$CLI" export
expect_eq "nothing was imported" "" "$OUT"

echo "artifact_stream_test: ok"
