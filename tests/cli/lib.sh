# lib.sh — what the CLI test scripts share: running a command with its
# output captured, and checks that say what they expected and what they got.
# A script sources it after setting WORK (a scratch folder) and CURRENT
# (the name of the check under way, shown by fail).

fail() {
  echo "FAIL [$CURRENT]: $*" >&2
  exit 1
}

# run CMD...: runs it, keeping stdout in $OUT, stderr in $ERR and the exit
# status in $RC, without letting set -e stop the script.
run() {
  set +e
  "$@" >"$WORK/out" 2>"$WORK/err"
  RC=$?
  set -e
  OUT=$(cat "$WORK/out")
  ERR=$(cat "$WORK/err")
}

# run_in INPUT CMD...: like run, with INPUT on stdin.
run_in() {
  local input=$1
  shift
  set +e
  printf '%s' "$input" | "$@" >"$WORK/out" 2>"$WORK/err"
  RC=$?
  set -e
  OUT=$(cat "$WORK/out")
  ERR=$(cat "$WORK/err")
}

expect_rc() {
  [ "$RC" -eq "$1" ] ||
    fail "expected exit status $1, got $RC; stdout: <$OUT> stderr: <$ERR>"
}

expect_eq() { # WHAT EXPECTED ACTUAL
  [ "$2" == "$3" ] || fail "$1: expected <$2>, got <$3>"
}

expect_contains() { # WHAT NEEDLE HAYSTACK
  [[ "$3" == *"$2"* ]] || fail "$1: expected it to contain <$2>, got <$3>"
}

expect_match() { # WHAT REGEX TEXT
  [[ "$3" =~ $2 ]] || fail "$1: expected it to match /$2/, got <$3>"
}

expect_absent() { # WHAT NEEDLE HAYSTACK
  [[ "$3" != *"$2"* ]] || fail "$1: did not expect <$2> in <$3>"
}
