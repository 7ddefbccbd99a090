#!/usr/bin/env python3
"""make_session.py — a synthetic coding-agent session of N events in a ctxdb
file, exported as NDJSON, for trying pi_context.mjs by hand.

The mix: a user prompt; an assistant message (sometimes with thinking) making
1-3 tool calls; for each call ToolCallStarted then ToolCallFinished (now and
then ToolCallFailed) with outputs from a few hundred bytes to tens of KB;
now and then a FileRead/FileWritten/StateUpdated; a closing assistant text.
Every ~2k events a CompactionCompleted whose first_kept_event_id is the user
prompt ~200 events back (a turn boundary, so no tool result is orphaned).
Deterministic for a given --seed.

    PYTHONPATH=bindings/python CTXDB_LIB_PATH=build-h/libctxdb.so \\
      python3 bench/peers/make_session.py --events 10000 --db /tmp/s10k.ctxdb \\
      --export /tmp/s10k.ndjson
"""
import argparse
import os
import random

import ctxdb

TOOLS = ["bash", "read", "edit", "grep", "write"]
LINE = "tests/test_mod.py::test_case_{n} PASSED [ {p:2d}%]\n"


def output(rng, n):
    # Sizes skewed small, with a long tail: 200 B .. 40 KB.
    size = int(min(40_000, 200 * (1 / max(rng.random(), 0.005)) ** 0.9))
    s, k = [], 0
    total = 0
    while total < size:
        line = LINE.format(n=n * 100 + k, p=k % 100)
        s.append(line)
        total += len(line)
        k += 1
    return "".join(s)[:size]


def turn(rng, t):
    """The events of turn t, each as a dict (no ids: the engine gives them)."""
    ev = [{"type": "UserPromptSubmitted", "actor": "user",
           "payload": {"text": f"Turn {t}: make the failing test in tests/test_mod_{t % 40}.py "
                               "pass without breaking the others."}}]
    ncalls = rng.choice([1, 1, 2, 3])
    calls = [(f"call_{t}_{i}", rng.choice(TOOLS)) for i in range(ncalls)]
    content = []
    if rng.random() < 0.3:
        content.append({"type": "thinking", "text": "The failure is in the email lookup; "
                        "check how module_%d normalises it." % (t % 40)})
    content.append({"type": "text", "text": "Let me look at the code and run the tests."})
    for cid, name in calls:
        args = {"cmd": f"pytest -q tests/test_mod_{t % 40}.py"} if name == "bash" else \
               {"path": f"src/module_{t % 40}.py"}
        content.append({"type": "tool_call", "id": cid, "name": name, "args": args})
    ev.append({"type": "AssistantMessageCreated", "actor": "assistant",
               "payload": {"content": content, "model": "m",
                           "usage": {"input_tokens": 1000 + 37 * (t % 100),
                                     "output_tokens": 40 + t % 60},
                           "stop_reason": "tool_use"}})
    for cid, name in calls:
        ev.append({"type": "ToolCallStarted", "actor": "tool", "payload": {"tool_call_id": cid}})
        if rng.random() < 0.08:
            ev.append({"type": "ToolCallFailed", "actor": "tool",
                       "payload": {"tool_call_id": cid, "name": name,
                                   "error": "command exited with status 1",
                                   "output": output(rng, t)[:2000], "exit_code": 1}})
        else:
            ev.append({"type": "ToolCallFinished", "actor": "tool",
                       "payload": {"tool_call_id": cid, "name": name, "output": output(rng, t),
                                   "duration_ms": rng.randint(5, 3000)}})
    path = f"src/module_{t % 40}.py"
    if rng.random() < 0.5:
        ev.append({"type": "FileRead", "actor": "tool", "payload": {"path": path}})
    if rng.random() < 0.3:
        ev.append({"type": "FileWritten", "actor": "tool",
                   "payload": {"path": path, "change_summary": "casefold the email before lookup"}})
    if rng.random() < 0.2:
        ev.append({"type": "StateUpdated", "actor": "assistant",
                   "payload": {"ops": [{"op": "set_task", "text": f"fix turn {t}"}]}})
    ev.append({"type": "AssistantMessageCreated", "actor": "assistant",
               "payload": {"content": [{"type": "text", "text": "The test passes now; moving on."}],
                           "model": "m", "usage": {"input_tokens": 1500, "output_tokens": 12},
                           "stop_reason": "end_turn"}})
    return ev


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, required=True, help="events after SessionStarted")
    ap.add_argument("--db", required=True)
    ap.add_argument("--export", required=True, help="NDJSON file to write")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--compact-every", type=int, default=2000)
    ap.add_argument("--keep-back", type=int, default=200)
    a = ap.parse_args()

    rng = random.Random(a.seed)
    if os.path.exists(a.db):
        raise SystemExit(f"{a.db} exists")
    with ctxdb.open(a.db) as db:
        sid = db.create_session(agent_id="coder", cwd="/repo", title="synthetic")["id"]
        prompt_seqs = []  # seqs of user prompts: the compaction's cut points
        seq = 1  # SessionStarted
        batch, t, next_compaction = [], 0, a.compact_every
        n = 0
        while n < a.events:
            for e in turn(rng, t):
                if n == a.events:
                    break
                batch.append(e)
                n += 1
                seq += 1
                if e["type"] == "UserPromptSubmitted":
                    prompt_seqs.append(seq)
            t += 1
            if n >= next_compaction and n < a.events:
                db.append_many(sid, batch)
                batch = []
                cut = max([s for s in prompt_seqs if s <= seq - a.keep_back] or [prompt_seqs[0]])
                first_kept = next(iter(db.events(sid, cut, cut)))
                db.append(sid, {"type": "CompactionCompleted", "actor": "compactor",
                                "payload": {"summary": f"Turns 0..{t - 1}: fixed the email lookup in "
                                            "modules 0..39; tests pass; next: the remaining turns.",
                                            "first_kept_event_id": first_kept["id"],
                                            "tokens_before": 150 * seq, "tokens_after": 4000}})
                n += 1
                seq += 1
                next_compaction += a.compact_every
        if batch:
            db.append_many(sid, batch)
        with open(a.export, "w") as f:
            for line in db.export(raw=True):
                f.write(line if isinstance(line, str) else line.decode())
                f.write("\n")
    print(f"{a.db}: session {sid}, {seq} events; exported to {a.export}")


if __name__ == "__main__":
    main()
