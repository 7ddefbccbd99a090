#!/usr/bin/env bash
# demo.sh — records a realistic coding-agent session into a ctxdb file with
# the `ctxdb` CLI alone, then shows it back: sessions, the log, the state,
# tool calls and stats, the spilled test logs and a grep inside one, the
# context bundle, search, a project memory, a what-if branch in the session
# tree, the verified hash chain and the export.
#
# The story: a user asks the agent to fix a failing test. The agent reads
# src/parser.py, runs the tests (one fails; the log is a few hundred lines),
# patches the parser, reruns the tests (all pass) and reports back.
#
# usage: scripts/demo.sh [DB]          (default DB: ./demo.ctxdb, replaced)
#   CTXDB_CLI  the ctxdb binary; when unset, scripts/build.sh first installs
#              what is missing and builds build/bindings/cli/ctxdb
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [ -z "${CTXDB_CLI:-}" ]; then
  # The README's first command: install what is missing and build, then run.
  BUILD_DIR=$root/build "$root/scripts/build.sh"
fi
CLI=${CTXDB_CLI:-$root/build/bindings/cli/ctxdb}
DB=${1:-demo.ctxdb}

if [ ! -x "$CLI" ]; then
  echo "demo: no ctxdb binary at $CLI (build it, or set CTXDB_CLI)" >&2
  exit 1
fi
rm -f "$DB" "$DB-wal" "$DB-shm"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

ctxdb() { "$CLI" --db "$DB" "$@"; }
# Headings are bold on a terminal and plain in a log file.
if [ -t 1 ]; then bold=$'\033[1m' plain=$'\033[0m'; else bold='' plain=''; fi
heading() { printf '\n%s$ ctxdb %s%s\n' "$bold" "$*" "$plain"; }

# ---- record ---------------------------------------------------------------

ctxdb init >/dev/null
session=$(ctxdb session new --agent demo-coder --meta '{
  "model": "gpt-4.1",
  "cwd": "/home/dev/tinyparse",
  "repo": "https://github.com/example/tinyparse",
  "title": "Fix the failing parser test",
  "owner_ids": {"user_id": "u_42", "org_id": "o_7"},
  "permissions": {"write": ["src/", "tests/"], "shell": ["python -m pytest"]}
}')
echo "recording session $session into $DB"

# The host writes one NDJSON batch per turn, as a live harness would after
# each model call or tool run. python3 builds the JSON (escaping a few
# hundred lines of pytest output by hand would be error-prone).
python3 - "$work" <<'PYTHON'
import json, sys, time

out_dir = sys.argv[1]
MODEL = "gpt-4.1"
clock = int(time.time() * 1000)  # events get realistic spacing from now on


def event(type_, actor, payload, after_ms):
    global clock
    clock += after_ms
    return {"type": type_, "actor": actor, "ts": clock, "payload": payload}


def assistant(blocks, input_tokens, output_tokens, cached, after_ms):
    return event("AssistantMessageCreated", "assistant", {
        "content": blocks,
        "model": MODEL,
        "stop_reason": "tool_use" if any(b["type"] == "tool_call" for b in blocks) else "end_turn",
        "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens,
                  "cache_read_tokens": cached},
    }, after_ms)


def text(t):
    return {"type": "text", "text": t}


def tool_call(call_id, name, args):
    return {"type": "tool_call", "id": call_id, "name": name, "args": args}


def tool_run(call_id, name, output, after_ms, **extra):
    return [
        event("ToolCallStarted", "tool", {"tool_call_id": call_id, "name": name}, 40),
        event("ToolCallFinished", "tool",
              dict({"tool_call_id": call_id, "output": output, "is_error": False,
                    "duration_ms": after_ms}, **extra), after_ms),
    ]


PARSER_PY = '''"""Parses tinyparse's list syntax: [1, [2, "three"], 4]."""
from src.lexer import tokenize


class ParseError(Exception):
    pass


def parse(text):
    tokens = tokenize(text)
    value, pos = _parse_value(tokens, 0)
    if tokens[pos].kind != "EOF":
        raise ParseError(f"unexpected {tokens[pos].kind} at offset {tokens[pos].offset}")
    return value


def _parse_value(tokens, pos):
    tok = tokens[pos]
    if tok.kind == "NUMBER":
        return int(tok.text), pos + 1
    if tok.kind == "STRING":
        return tok.text[1:-1], pos + 1
    if tok.kind == "LBRACKET":
        return _parse_list(tokens, pos + 1)
    raise ParseError(f"unexpected {tok.kind} at offset {tok.offset}")


def _parse_list(tokens, pos):
    items = []
    if tokens[pos].kind == "RBRACKET":
        return items, pos + 1
    while True:
        item, pos = _parse_value(tokens, pos)
        items.append(item)
        tok = tokens[pos]
        if tok.kind == "COMMA":
            pos += 1
            continue
        if tok.kind == "RBRACKET":
            return items, pos + 1
        raise ParseError(f"expected , or ] at offset {tok.offset}")
'''

DIFF = '''--- a/src/parser.py
+++ b/src/parser.py
@@ -35,6 +35,8 @@ def _parse_list(tokens, pos):
         tok = tokens[pos]
         if tok.kind == "COMMA":
             pos += 1
+            if tokens[pos].kind == "RBRACKET":  # a trailing comma: [1, 2,]
+                return items, pos + 1
             continue
         if tok.kind == "RBRACKET":
             return items, pos + 1
'''

# The file after the patch: the two added lines of DIFF in place.
PATCHED_PY = PARSER_PY.replace(
    "            pos += 1\n            continue\n",
    "            pos += 1\n" + "".join(
        line[1:] + "\n" for line in DIFF.splitlines() if line.startswith("+ ")) +
    "            continue\n")
assert PATCHED_PY != PARSER_PY

FAILING = "tests/test_parser.py::test_trailing_comma"


def test_ids():
    """The suite's node ids, parametrized the way real suites are."""
    ids = []
    for n in ["0", "7", "42", "-1", "-300", "1000000", "007", "2147483648"]:
        ids.append(f"tests/test_lexer.py::test_number_token[{n}]")
    for s in ["empty", "ascii", "spaces", "escaped_quote", "unicode", "emoji", "tab", "newline"]:
        ids.append(f"tests/test_lexer.py::test_string_token[{s}]")
    for p in ["comma", "lbracket", "rbracket", "whitespace", "eof", "offsets"]:
        ids.append(f"tests/test_lexer.py::test_punctuation[{p}]")
    for bad in ["at_sign", "unterminated_string", "bare_word", "hash", "backslash"]:
        ids.append(f"tests/test_lexer.py::test_rejects[{bad}]")
    for case in range(40):
        ids.append(f"tests/test_parser.py::test_flat_list[case{case:02d}]")
    for depth in range(1, 31):
        ids.append(f"tests/test_parser.py::test_nested_depth[{depth}]")
    for name in ["test_empty_list", "test_single_number", "test_single_string",
                 "test_whitespace_everywhere", "test_mixed_types", "test_trailing_comma",
                 "test_deeply_nested_empty", "test_error_offsets", "test_missing_close",
                 "test_extra_close", "test_double_comma", "test_leading_comma"]:
        ids.append(f"tests/test_parser.py::{name}")
    for case in range(60):
        ids.append(f"tests/test_roundtrip.py::test_print_then_parse[seed{case:03d}]")
    for width in [0, 1, 10, 40, 80, 120]:
        for indent in [0, 2, 4]:
            ids.append(f"tests/test_printer.py::test_pretty[width={width}-indent={indent}]")
    for name in ["test_compact", "test_unicode_escapes", "test_big_numbers",
                 "test_nested_strings", "test_stable_output"]:
        ids.append(f"tests/test_printer.py::{name}")
    for i in range(24):
        ids.append(f"tests/test_cli.py::test_cli_file_input[fixture_{i:02d}.tp]")
    return ids


def pytest_log(failing):
    ids = test_ids()
    lines = [
        " test session starts ".center(80, "="),
        "platform linux -- Python 3.11.2, pytest-7.2.1, pluggy-1.0.0 -- /home/dev/tinyparse/.venv/bin/python",
        "cachedir: .pytest_cache",
        "rootdir: /home/dev/tinyparse, configfile: pyproject.toml, testpaths: tests",
        "plugins: cov-4.0.0, xdist-3.1.0",
        f"collecting ... collected {len(ids)} items",
        "",
    ]
    for i, node in enumerate(ids):
        status = "FAILED" if failing and node == FAILING else "PASSED"
        left, pct = f"{node} {status}", f"[{100 * (i + 1) // len(ids):3d}%]"
        lines.append(left + " " * max(1, 80 - len(left) - len(pct)) + pct)
    if failing:
        lines += [
            "",
            " FAILURES ".center(80, "="),
            " test_trailing_comma ".center(80, "_"),
            "",
            "    def test_trailing_comma():",
            '>       assert parse("[1, [2, 3,], 4]") == [1, [2, 3], 4]',
            "",
            "tests/test_parser.py:88: ",
            "_ " * 39 + "_",
            "src/parser.py:11: in parse",
            "    value, pos = _parse_value(tokens, 0)",
            "src/parser.py:24: in _parse_value",
            "    return _parse_list(tokens, pos + 1)",
            "src/parser.py:33: in _parse_list",
            "    item, pos = _parse_value(tokens, pos)",
            "src/parser.py:24: in _parse_value",
            "    return _parse_list(tokens, pos + 1)",
            "src/parser.py:33: in _parse_list",
            "    item, pos = _parse_value(tokens, pos)",
            "_ " * 39 + "_",
            "",
            "tokens = [Token(kind='LBRACKET', text='[', offset=0), Token(kind='NUMBER', text='1', offset=1), "
            "Token(kind='COMMA', text=',', offset=2), Token(kind='LBRACKET', text='[', offset=4), ...]",
            "pos = 8",
            "",
            "    def _parse_value(tokens, pos):",
            "        tok = tokens[pos]",
            '        if tok.kind == "NUMBER":',
            "            return int(tok.text), pos + 1",
            '        if tok.kind == "STRING":',
            "            return tok.text[1:-1], pos + 1",
            '        if tok.kind == "LBRACKET":',
            "            return _parse_list(tokens, pos + 1)",
            '>       raise ParseError(f"unexpected {tok.kind} at offset {tok.offset}")',
            "E       src.parser.ParseError: unexpected RBRACKET at offset 10",
            "",
            "src/parser.py:25: ParseError",
            " short test summary info ".center(80, "="),
            f"FAILED {FAILING} - src.parser.ParseError: unexpected RBRACKET at offset 10",
            f" 1 failed, {len(ids) - 1} passed in 2.14s ".center(80, "="),
        ]
    else:
        lines += ["", f" {len(ids)} passed in 2.09s ".center(80, "=")]
    return "\n".join(lines) + "\n"


PROMPT = ("CI is red on main: tests/test_parser.py::test_trailing_comma fails. "
          "Please find out why and fix it. Don't change the tests, and keep the "
          "parser's error messages as they are.")

turns = [
    [event("UserPromptSubmitted", "user", {
        "text": PROMPT,
        "acceptance_criteria": ["python -m pytest passes", "tests/ unchanged"],
    }, 1200)],

    [assistant([text("Let me look at the parser first."),
                tool_call("call_1", "read_file", {"path": "src/parser.py"})],
               2210, 48, 0, 2300),
     *tool_run("call_1", "read_file", PARSER_PY, 15),
     event("FileRead", "host", {"path": "src/parser.py", "tool_call_id": "call_1",
                                "bytes": len(PARSER_PY.encode())}, 2)],

    [assistant([text("The list parser looks fine for plain lists. I'll run the test "
                     "suite to see the exact failure."),
                tool_call("call_2", "run_command", {"command": "python -m pytest -v",
                                                    "cwd": "/home/dev/tinyparse"})],
               2890, 61, 2048, 1900),
     *tool_run("call_2", "run_command", pytest_log(failing=True), 2140, exit_code=1)],

    [assistant([{"type": "thinking",
                 "text": "ParseError at offset 10 is the ] after '3,'. After a COMMA the loop "
                         "goes straight back to _parse_value, which has no case for RBRACKET."},
                text("Found it: after a comma, _parse_list always parses another value, "
                     "so `[2, 3,]` reaches `]` in _parse_value and raises. I'll accept a "
                     "`]` right after a comma as the end of the list."),
                tool_call("call_3", "apply_patch", {"path": "src/parser.py", "patch": DIFF})],
               7420, 212, 2816, 5200),
     *tool_run("call_3", "apply_patch", "Applied 1 hunk to src/parser.py (+2 -0)", 30),
     event("FileWritten", "host", {
         "path": "src/parser.py", "tool_call_id": "call_3",
         "change_summary": "_parse_list accepts a trailing comma before ] (e.g. [2, 3,])",
         "bytes": len(PATCHED_PY.encode())}, 3),
     event("DiffApplied", "host", {"path": "src/parser.py", "tool_call_id": "call_3",
                                   "diff": DIFF, "change_summary": "1 hunk, +2 -0"}, 1)],

    [assistant([text("Rerunning the whole suite."),
                tool_call("call_4", "run_command", {"command": "python -m pytest -v",
                                                    "cwd": "/home/dev/tinyparse"})],
               7790, 44, 7168, 1400),
     *tool_run("call_4", "run_command", pytest_log(failing=False), 2090, exit_code=0)],

    [assistant([text("Fixed. test_trailing_comma failed because `_parse_list` treated every "
                     "comma as the start of another element, so `[2, 3,]` hit `]` where a "
                     "value was expected. It now ends the list when `]` follows a comma "
                     "(src/parser.py, +2 lines). The full suite passes; tests and error "
                     "messages are unchanged.")],
               10230, 118, 7680, 3100)],
]

for n, turn in enumerate(turns, 1):
    with open(f"{out_dir}/turn-{n}.ndjson", "w", encoding="utf-8") as f:
        for e in turn:
            f.write(json.dumps(e, ensure_ascii=False, separators=(",", ":")) + "\n")
PYTHON

for turn in "$work"/turn-*.ndjson; do
  printf '  %s: ' "$(basename "$turn" .ndjson)"
  ctxdb append "$session" <"$turn"
done

# ---- show -----------------------------------------------------------------

heading sessions
ctxdb sessions
heading log "$session"
ctxdb log "$session"
heading state "$session"
ctxdb state "$session"
heading tool-calls "$session"
ctxdb tool-calls "$session"
heading stats "$session"
ctxdb stats "$session"

# The 262-line pytest logs were spilled at append: each message keeps the
# tail (where pytest puts its verdict) and the whole log is an artifact.
heading artifact ls "$session"
ctxdb artifact ls "$session"
# What the model would see for the user's next request, within a 3000-token
# window: the instructions, the conversation oldest first (the recent turns
# whole, older tool output pruned) ending on the request, then the plan and
# files as the latest turn's context. (The session ends on the agent's
# report: without a new request, or --continue, there is nothing to answer.)
next_request="Also cover a trailing comma inside a nested list."
heading context "$session" --budget 3000 --reserve 500 --request "\"$next_request\""
ctxdb context "$session" --budget 3000 --reserve 500 --request "$next_request" \
  --system "You are a careful coding agent. Keep changes small."

# The error is not in the failing run's tail: grep finds it in the whole
# log, with line numbers, without loading it into the context.
failing_log=$(ctxdb artifact ls "$session" --json | python3 -c '
import json, sys
print(max(json.load(sys.stdin), key=lambda a: a["line_count"])["id"])')
heading artifact grep "${failing_log:0:16}…" ParseError -C 1 -m 2
ctxdb artifact grep "$failing_log" ParseError -C 1 -m 2 2>/dev/null
# Full-text search over every message and tool output of every session.
heading search '"trailing comma"' --limit 3
ctxdb search "trailing comma" --limit 3
# What this session taught, kept for the next one in the same project: a
# governed memory with its source, found by retrieval, not by replay.
prompt_id=$(ctxdb log "$session" --json |
  python3 -c 'import json, sys; print([json.loads(l)["id"] for l in sys.stdin][1])')
lesson="tinyparse: run the tests with python -m pytest -v from the repo root"
heading memory put --scope project --scope-id tinyparse --kind fact --source "$prompt_id" \
  --update-policy manual "\"$lesson\""
ctxdb memory put --scope project --scope-id tinyparse --kind fact --source "$prompt_id" \
  --update-policy manual "$lesson"
heading memory search pytest --scope project:tinyparse
ctxdb memory search pytest --scope project:tinyparse

# A what-if: fork the session right after the user's prompt. Nothing is
# copied; the new branch shares the prompt with main.
heading fork "$session" "$prompt_id" --kind what_if --name ask-first
ctxdb fork "$session" "$prompt_id" --kind what_if --name ask-first >/dev/null
ctxdb append "$session" <<'EVENT'
{"type":"AssistantMessageCreated","actor":"assistant","branch_id":"ask-first","payload":{"content":[{"type":"text","text":"Before touching the parser: is a trailing comma meant to be valid input?"}]}}
EVENT
heading tree "$session"
ctxdb tree "$session"
heading verify
ctxdb verify
heading "rebuild --check"
ctxdb rebuild --check
heading "export | wc -l"
ctxdb export | wc -l
