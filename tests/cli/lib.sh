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

# run_tty COLS CMD...: like run, with stdout (and stderr) a terminal COLS
# columns wide, as a person at a terminal sees it; RC is its exit status.
run_tty() {
  set +e
  OUT=$(python3 - "$@" <<'PY'
import fcntl, os, pty, struct, sys, termios
pid, fd = pty.fork()
if pid == 0:  # the child: the size set before the command starts
    fcntl.ioctl(1, termios.TIOCSWINSZ, struct.pack("HHHH", 24, int(sys.argv[1]), 0, 0))
    os.execvp(sys.argv[2], sys.argv[2:])
out = b""
while True:
    try:
        chunk = os.read(fd, 65536)
    except OSError:  # EIO: the child closed the terminal
        break
    if not chunk:
        break
    out += chunk
_, status = os.waitpid(pid, 0)
sys.stdout.write(out.decode().replace("\r\n", "\n"))
sys.exit(os.waitstatus_to_exitcode(status))
PY
  )
  RC=$?
  set -e
  ERR=""
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
