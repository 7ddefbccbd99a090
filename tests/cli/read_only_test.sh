#!/usr/bin/env bash
# ctxdb on storage it cannot write: every read works (events, verify,
# compile, search, memories, artifacts, export), a write fails saying why,
# and nothing is created beside the file. Two kinds of storage:
#   - a 0444 file in a 0555 folder, read by an unprivileged user (root
#     ignores file modes, so as root the commands run through setpriv as
#     uid 65534; skipped with a message when that user cannot run the CLI);
#   - a read-only mount (mount -o bind,ro), when running as root where
#     mounting is permitted; skipped with a message otherwise.
# Also a WAL holding commits beside such a file: read through its -shm
# index when that exists, refused with the reason when it does not; and a
# -shm index left without a WAL, which does not keep the file from opening.
# usage: read_only_test.sh PATH/TO/ctxdb PATH/TO/sqlite3
set -euo pipefail

CLI=${1:?usage: read_only_test.sh PATH/TO/ctxdb PATH/TO/sqlite3}
SQLITE=${2:?usage: read_only_test.sh PATH/TO/ctxdb PATH/TO/sqlite3}
WORK=$(mktemp -d)
MOUNTED=""
cleanup() {
  [ -z "$MOUNTED" ] || umount "$MOUNTED"
  chmod -R u+w "$WORK" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
chmod 755 "$WORK" # the unprivileged user must reach what is inside
CURRENT=""

# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

# as_reader CMD...: runs CMD as a user without write access to the sealed
# folders (this one, unless it is root).
as_reader() {
  if [ "$(id -u)" -eq 0 ]; then
    setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
  else
    "$@"
  fi
}

CURRENT="setup"
DB="$WORK/src/r.ctxdb"
mkdir "$WORK/src"
run "$CLI" --db "$DB" session new --id s1 --agent a && expect_rc 0
printf '%s\n' \
  '{"id":"e1","type":"UserPromptSubmitted","actor":"user","payload":{"text":"where is the walrus"}}' \
  '{"id":"e2","type":"AssistantMessageCreated","actor":"assistant","payload":{"content":[{"type":"text","text":"on the ice floe"}]}}' |
  "$CLI" --db "$DB" append s1 >/dev/null
run "$CLI" --db "$DB" memory put --scope project --scope-id p1 --source e1 \
  --update-policy manual --id m1 "walruses like ice"
expect_rc 0
printf 'first line\nsecond line\n' >"$WORK/notes.txt"
run "$CLI" --db "$DB" artifact put "$WORK/notes.txt" && expect_rc 0
ARTIFACT=$OUT
[ ! -e "$DB-wal" ] || fail "the last close should have emptied and removed the WAL"

# check_reads WHERE RUNNER...: every read on WHERE/r.ctxdb through RUNNER.
check_reads() {
  local dir=$1 db="$1/r.ctxdb"
  shift
  run "$@" "$CLI" --db "$db" sessions
  expect_rc 0 && expect_contains "sessions" "s1" "$OUT"
  run "$@" "$CLI" --db "$db" log s1
  expect_rc 0 && expect_contains "log" "where is the walrus" "$OUT"
  run "$@" "$CLI" --db "$db" verify
  expect_rc 0 && expect_contains "verify" "ok:" "$OUT"
  run "$@" "$CLI" --db "$db" context s1 --budget 8000 --request "and the seal?"
  expect_rc 0 && expect_contains "context" "msg:e2" "$OUT"
  run "$@" "$CLI" --db "$db" search walrus
  expect_rc 0 && expect_contains "search" "walrus" "$OUT"
  run "$@" "$CLI" --db "$db" memory search walruses --scope project:p1
  expect_rc 0 && expect_contains "memory search" "m1" "$OUT"
  run "$@" "$CLI" --db "$db" artifact cat "$ARTIFACT"
  expect_rc 0 && expect_eq "artifact cat" "$(printf 'first line\nsecond line')" "$OUT"
  run "$@" "$CLI" --db "$db" export
  expect_rc 0 && expect_contains "export" '"id":"e2"' "$OUT"
  # Neither a write nor a read left a file beside it.
  expect_eq "files beside the database" "r.ctxdb" "$(ls "$dir")"
}

# The sealed folders, read by a user who cannot write them.
test_unprivileged() {
  CURRENT="a 0444 file in a 0555 folder"
  mkdir "$WORK/sealed"
  cp "$DB" "$WORK/sealed/"
  chmod 444 "$WORK/sealed/r.ctxdb"
  chmod 555 "$WORK/sealed"
  check_reads "$WORK/sealed" as_reader
  run_in '{"type":"UserPromptSubmitted","actor":"user","payload":{"text":"x"}}' \
    as_reader "$CLI" --db "$WORK/sealed/r.ctxdb" append s1
  expect_rc 1 && expect_contains "append" "was opened read-only: the file is not writable" "$ERR"
  expect_contains "append: the code" "CTXDB_READONLY" "$ERR"

  CURRENT="a WAL holding commits, with its -shm index"
  # A copy of the three files as a writer leaves them while it is open: the
  # WAL holds a commit the database file does not.
  mkdir "$WORK/live" "$WORK/with-shm" "$WORK/no-shm"
  cp "$DB" "$WORK/live/"
  "$SQLITE" "$WORK/live/r.ctxdb" "PRAGMA wal_autocheckpoint=0;" \
    "UPDATE sessions SET agent_id='in-the-wal';" \
    ".shell cp $WORK/live/r.ctxdb $WORK/live/r.ctxdb-wal $WORK/live/r.ctxdb-shm $WORK/with-shm/" \
    ".shell cp $WORK/live/r.ctxdb $WORK/live/r.ctxdb-wal $WORK/no-shm/" >/dev/null
  [ -s "$WORK/no-shm/r.ctxdb-wal" ] || fail "the WAL copy holds no commit"
  chmod 444 "$WORK"/with-shm/* "$WORK"/no-shm/*
  chmod 555 "$WORK/with-shm" "$WORK/no-shm"
  run as_reader "$CLI" --db "$WORK/with-shm/r.ctxdb" sessions
  expect_rc 0 && expect_contains "sessions read through the WAL" "in-the-wal" "$OUT"

  CURRENT="a -shm index left without a WAL"
  mkdir "$WORK/stale-shm"
  cp "$DB" "$WORK/with-shm/r.ctxdb-shm" "$WORK/stale-shm/"
  chmod 444 "$WORK"/stale-shm/*
  chmod 555 "$WORK/stale-shm"
  run as_reader "$CLI" --db "$WORK/stale-shm/r.ctxdb" verify
  expect_rc 0 && expect_contains "verify" "ok:" "$OUT"

  CURRENT="a WAL holding commits, without its -shm index"
  run as_reader "$CLI" --db "$WORK/no-shm/r.ctxdb" sessions
  expect_rc 1
  expect_contains "the reason" "its WAL ('$WORK/no-shm/r.ctxdb-wal') holds commits not yet copied" "$ERR"
  expect_contains "the remedy" "open it once where its directory is writable" "$ERR"
}

# A read-only mount, which binds root too.
test_mount() {
  CURRENT="a read-only mount"
  if [ "$(id -u)" -ne 0 ]; then
    echo "read_only_test: skipping the read-only mount: mounting needs root"
  else
    mkdir "$WORK/mnt" "$WORK/plain"
    cp "$DB" "$WORK/plain/"
    chmod 644 "$WORK/plain/r.ctxdb" # writable by its mode: only the mount forbids it
    if mount -o bind,ro "$WORK/plain" "$WORK/mnt" 2>"$WORK/mount-err"; then
      MOUNTED="$WORK/mnt"
      check_reads "$WORK/mnt" env
      run_in '{"type":"UserPromptSubmitted","actor":"user","payload":{"text":"x"}}' \
        "$CLI" --db "$WORK/mnt/r.ctxdb" append s1
      expect_rc 1 && expect_contains "append" "the file is on a read-only file system" "$ERR"
    else
      echo "read_only_test: skipping the read-only mount: $(cat "$WORK/mount-err")"
    fi
  fi
}

# setpriv runs the CLI as uid 65534, which must be able to reach it; the
# engine suite checks the same handles in a forked child either way.
if as_reader "$CLI" --version >/dev/null 2>&1; then
  test_unprivileged
else
  echo "read_only_test: skipping the unprivileged reader: uid 65534 cannot run $CLI"
fi
test_mount

echo "read_only_test: all checks passed"
