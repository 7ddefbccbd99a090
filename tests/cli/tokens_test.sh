#!/usr/bin/env bash
# End-to-end tests of `ctxdb tokens` (the Tokenizer): counts and ids of a
# file and of stdin without a database, with no configuration (the ranks
# the library carries), the database's tokenizer_data_dir,
# the modes for special tokens, and the errors.
# usage: tokens_test.sh PATH/TO/ctxdb RANK_FILE_DIR
set -euo pipefail

CLI=${1:?usage: tokens_test.sh PATH/TO/ctxdb RANK_FILE_DIR}
DATA=${2:?usage: tokens_test.sh PATH/TO/ctxdb RANK_FILE_DIR}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
unset CTXDB_DB
export CTXDB_TOKENIZER_DATA=$DATA
CURRENT=""

# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
expect() { # RC STDOUT
  [ "$RC" -eq "$1" ] || fail "expected exit status $1, got $RC; stdout <$OUT> stderr <$ERR>"
  [ "$#" -lt 2 ] || [ "$OUT" == "$2" ] || fail "expected stdout <$2>, got <$OUT>"
}
expect_err() { [[ "$ERR" == *"$1"* ]] || fail "expected stderr to contain <$1>, got <$ERR>"; }

CURRENT="count a file"
printf 'hello world' >"$WORK/a.txt"
run "$CLI" tokens "$WORK/a.txt"
expect 0 2
run "$CLI" tokens "$WORK/a.txt" --ids
expect 0 "[24912,2375]"
run "$CLI" tokens --encoding cl100k_base --ids "$WORK/a.txt"
expect 0 "[15339,1917]"

CURRENT="count stdin"
run bash -c "printf '上下文数据库' | '$CLI' tokens -"
expect 0
[ "$OUT" -gt 1 ] || fail "expected more than one token, got $OUT"
run bash -c "printf '' | '$CLI' tokens"
expect 0 0

CURRENT="special tokens"
printf 'a<|endoftext|>b' >"$WORK/s.txt"
run "$CLI" tokens "$WORK/s.txt"
expect 1
expect_err "<|endoftext|>"
expect_err "CTXDB_INVALID_ARG"
run "$CLI" tokens --specials allow --ids "$WORK/s.txt"
expect 0 "[64,199999,65]"
run "$CLI" tokens --specials text "$WORK/s.txt"
expect 0
[ "$OUT" -gt 3 ] || fail "expected the special's spelling as text, got $OUT tokens"
run "$CLI" tokens --specials some "$WORK/s.txt"
expect 2

CURRENT="errors"
printf 'ab\xff' >"$WORK/bad.txt"
run "$CLI" tokens "$WORK/bad.txt"
expect 1
expect_err "CTXDB_INVALID_UTF8"
run "$CLI" tokens --encoding p50k_base "$WORK/a.txt"
expect 1
expect_err "unknown encoding"
run "$CLI" tokens "$WORK/none.txt"
expect 1
CTXDB_TOKENIZER_DATA=$WORK run "$CLI" tokens "$WORK/a.txt"
expect 1
expect_err "missing"
expect_err "CTXDB_NOT_FOUND"

CURRENT="no configuration: the ranks the library carries"
run env -u CTXDB_TOKENIZER_DATA "$CLI" tokens "$WORK/a.txt"
expect 0 2
run env -u CTXDB_TOKENIZER_DATA "$CLI" tokens --encoding cl100k_base --ids "$WORK/a.txt"
expect 0 "[15339,1917]"
echo "tokens: ok"
