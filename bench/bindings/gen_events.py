"""Deterministic ~1 KB agent events as NDJSON, for bench/bindings.

The same shapes as bench/append.cpp's SessionGenerator (which is C++ and
cannot be shared with the hosts here): turns of a user prompt, three
assistant tool calls each followed by its tool result, and a closing
answer. Every line is about 1 KB; tool output is log text with quotes,
tabs and some non-ASCII, so the JSON paths do real escaping and UTF-8 work.
Seeded, so every run writes the same bytes.

    /usr/bin/python3 gen_events.py COUNT OUT.ndjson
"""
from __future__ import annotations

import json
import random
import sys
from typing import Any, Dict, List

SEED = 20240601

_FILES = ["engine/log/event_log.cpp", "engine/project/tool_calls.cpp",
          "engine/compile/fit.cpp", "capi/ctxdb.cpp", "src/parser.ts",
          "tests/engine/log/append_test.cpp"]

_SENTENCES = [
    "Please fix the failing test in engine/log and keep the hash chain "
    "verifiable after an import. ",
    "The build on CI fails with a linker error about a missing symbol; find "
    "out why and patch it. ",
    "Do not change the public header, it is part of the ABI and other teams "
    "depend on it. ",
    "I will run the test suite first to see which cases fail before touching "
    "the code. ",
    "The parser rejects lines longer than 64 KiB; that limit comes from an old "
    "buffer size. ",
    "Next, I'll read the projector for tool calls to check how pending calls "
    "are tracked. ",
    "Summary: the fork test failed because the branch leaf was not updated in "
    "the same transaction. ",
    "Could you also add a regression test and explain the change in the commit "
    "message? ",
]

_COMMANDS = ["ctest --test-dir build -R log -j4 --output-on-failure",
             "cmake --build build -j2", 'grep -rn "prev_hash" engine/',
             "git diff --stat HEAD~1"]

_MODEL = "gpt-4o-2024-08-06"


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _json_len(text: str) -> int:
    """Bytes that `text` takes inside a JSON string, quotes excluded."""
    return len(_dumps(text).encode("utf-8")) - 2


class SessionGenerator:
    def __init__(self, seed: int = SEED) -> None:
        self._rng = random.Random(seed)
        self._calls = 0

    def generate(self, count: int) -> List[Dict[str, Any]]:
        events: List[Dict[str, Any]] = []
        while len(events) < count:
            events.append(self._user_prompt())
            for _ in range(3):
                if len(events) >= count:
                    break
                self._calls += 1
                call_id = f"call_{self._calls}"
                events.append(self._tool_call(call_id))
                if len(events) < count:
                    events.append(self._tool_result(call_id))
            if len(events) < count:
                events.append(self._answer())
        return events

    # -- pieces --

    def _n(self, lo: int, hi: int) -> int:
        return self._rng.randint(lo, hi)

    def _target(self) -> int:
        return self._n(880, 1100)

    def _sentence(self) -> str:
        return self._rng.choice(_SENTENCES)

    def _log_line(self) -> str:
        f = self._rng.choice
        k = self._n(0, 5)
        if k == 0:
            return f"[{self._n(0, 100):3d}%] Building CXX object {f(_FILES)}.o\n"
        if k == 1:
            return (f"{f(_FILES)}:{self._n(1, 900)}:{self._n(1, 80)}: warning: "
                    f"unused variable 'tmp{self._n(0, 9)}' [-Wunused-variable]\n")
        if k == 2:
            return (f"2024-06-01T12:{self._n(0, 59):02d}:{self._n(0, 59):02d}."
                    f"{self._n(0, 999):03d}Z INFO\tworker-{self._n(1, 8)}: fetched "
                    f"{self._n(1, 5000)} rows in {self._n(1, 900)} ms\n")
        if k == 3:
            return (f"test_session_tree.py::test_fork_{self._n(1, 300)} PASSED "
                    f"[{self._n(0, 100):3d}%]\n")
        if k == 4:
            return f"  \u2713 append keeps the chain intact ({self._n(1, 40)} ms)\n"
        return (f"error: expected ';' after expression at \"{f(_FILES)}\" "
                f"line {self._n(1, 900)}\n")

    def _event(self, type_: str, actor: str, payload: Dict[str, Any],
               fill_text: Any, log_lines: bool) -> Dict[str, Any]:
        """Builds the event, then grows the string that fill_text(payload, s)
        sets until the event line reaches the drawn target size."""
        target = self._target()
        fill_text(payload, "")
        event = {"type": type_, "actor": actor, "payload": payload}
        size = len(_dumps(event).encode("utf-8"))
        parts: List[str] = []
        while size < target:
            piece = self._log_line() if log_lines else self._sentence()
            parts.append(piece)
            size += _json_len(piece)
        fill_text(payload, "".join(parts))
        return event

    def _user_prompt(self) -> Dict[str, Any]:
        def fill(p: Dict[str, Any], s: str) -> None:
            p["text"] = s
        return self._event("UserPromptSubmitted", "user", {}, fill, False)

    def _tool_call(self, call_id: str) -> Dict[str, Any]:
        payload: Dict[str, Any] = {
            "content": [{"type": "text", "text": ""},
                        {"type": "tool_call", "id": call_id, "name": "bash",
                         "args": {"command": self._rng.choice(_COMMANDS)}}],
            "model": _MODEL,
            "usage": {"input_tokens": self._n(2000, 90000),
                      "output_tokens": self._n(20, 800)},
        }

        def fill(p: Dict[str, Any], s: str) -> None:
            p["content"][0]["text"] = s
        return self._event("AssistantMessageCreated", "assistant", payload,
                           fill, False)

    def _tool_result(self, call_id: str) -> Dict[str, Any]:
        def fill(p: Dict[str, Any], s: str) -> None:
            p["output"] = s
        return self._event("ToolCallFinished", "tool",
                           {"tool_call_id": call_id, "output": ""}, fill, True)

    def _answer(self) -> Dict[str, Any]:
        def fill(p: Dict[str, Any], s: str) -> None:
            p["content"][0]["text"] = s
        return self._event("AssistantMessageCreated", "assistant",
                           {"content": [{"type": "text", "text": ""}],
                            "model": _MODEL}, fill, False)


def write_ndjson(count: int, path: str) -> int:
    """Writes `count` events to `path`; returns the mean line size in bytes."""
    total = 0
    with open(path, "wb") as f:
        for event in SessionGenerator().generate(count):
            line = _dumps(event).encode("utf-8")
            total += len(line)
            f.write(line + b"\n")
    return total // max(count, 1)


if __name__ == "__main__":
    if len(sys.argv) != 3 or not sys.argv[1].isdigit() or int(sys.argv[1]) < 1:
        sys.exit("usage: gen_events.py COUNT OUT.ndjson")
    print(f"mean event {write_ndjson(int(sys.argv[1]), sys.argv[2])} bytes")
