#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets (tests/fuzz/corpus/<target>/)
from the test fixtures: transcript lines, provider responses and bundles,
and the events and exports of those transcripts imported into ctxdb.

    CTXDB_LIB_PATH=build PYTHONPATH=bindings/python tests/fuzz/make_corpus.py

Seeds are small (a few KiB) and the output is the same on every run;
files named crash-* (inputs a target once crashed on) are kept. The
fuzz targets' comments say how each splits its input (0xFF bytes separate
the pieces)."""

import hashlib
import json
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

import ctxdb

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
CORPUS = ROOT / "tests" / "fuzz" / "corpus"
SEP = b"\xff"
MAX_SEED = 6000  # bytes: small inputs mutate faster


def write(target, seeds):
    out = CORPUS / target
    out.mkdir(parents=True, exist_ok=True)
    for old in out.iterdir():
        if not old.name.startswith("crash-"):  # inputs that once crashed stay
            old.unlink()
    kept = 0
    for seed in seeds:
        if isinstance(seed, str):
            seed = seed.encode()
        if len(seed) > MAX_SEED:
            continue
        (out / hashlib.sha1(seed).hexdigest()[:16]).write_bytes(seed)
        kept += 1
    print(f"{target}: {kept} seeds")


def dumps(value):
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def line_windows(path, count, width):
    """Up to `count` runs of `width` consecutive lines of a JSONL file."""
    lines = path.read_bytes().splitlines(keepends=True)
    step = max(1, (len(lines) - width) // max(1, count - 1))
    return [b"".join(lines[i:i + width]) for i in range(0, max(1, len(lines) - width + 1), step)][:count]


def transcript_seeds(files, per_file):
    seeds = []
    for f in files:
        for width in (1, 3, 8):
            seeds += line_windows(f, per_file, width)
    return seeds


def imported_db(tmp):
    """A database holding the transcript fixtures, imported."""
    db = ctxdb.open(os.path.join(tmp, "fixtures.ctxdb"))
    for fmt, folder in (("claude-code", "claude-code"), ("codex", "codex"), ("pi", "pi")):
        db.import_transcript(fmt, FIXTURES / "transcripts" / folder)
    return db


def host_event(stored):
    """A stored event as a host appends it: what the engine assigns left out."""
    event = {k: stored[k] for k in ("type", "actor", "payload") if k in stored}
    event["payload"] = {k: v for k, v in event["payload"].items() if k != "provenance"}
    return event


def fixed_time(export):
    """An export with its artifacts' creation time (the clock's) fixed."""
    return re.sub(r'"created_ts":\d+', '"created_ts":1700000000003', export)


def main():
    tmp = tempfile.mkdtemp()
    try:
        db = imported_db(tmp)
        stored = [json.loads(line) for line in db.export(raw=True)]
        by_session = {}
        for e in stored:
            by_session.setdefault(e["session_id"], []).append(e)
        sessions = sorted(by_session.values(), key=len)

        # events: an event | a batch | a new session | an event of it
        events = [host_event(e) for e in stored if e["type"] != "SessionStarted"]
        seen_types, singles = set(), []
        for e in events:
            if e["type"] not in seen_types or len(singles) < 16:
                seen_types.add(e["type"])
                singles.append(dumps(e).encode())
        seeds = singles[:28]
        for i in range(0, min(len(events), 80), 8):
            batch = "\n".join(dumps(e) for e in events[i:i + 3]).encode()
            session = dumps({"id": f"s{i}", "payload": {"agent_id": "codex", "cwd": "/home/dev"}})
            seeds.append(dumps(events[i]).encode() + SEP + batch + SEP + session.encode() + SEP +
                         dumps(events[i + 1]).encode())
        write("events", seeds)

        # import: the export of a session (events, then artifacts)
        seeds = []
        for s in sessions:
            lines = list(db.export_ndjson(s[0]["session_id"]))
            for n in (1, 2, 4, 8, len(lines)):  # the first events of an export import too
                seeds.append(fixed_time("".join(line + "\n" for line in lines[:n])))
        art_db = ctxdb.open(os.path.join(tmp, "artifacts.ctxdb"))
        sid = art_db.create_session({"id": "ses_art", "event_id": "evt_art0", "ts": 1700000000000,
                                     "payload": {"agent_id": "host"}})["id"]
        art = art_db.put_artifact(b"line one\nline two\n" * 20)
        art_db.append(sid, {"type": "AssistantMessageCreated", "actor": "assistant",
                            "id": "evt_art1", "ts": 1700000000001,
                            "payload": {"content": [{"type": "tool_call", "id": "c1",
                                                     "name": "cat", "args": {}}]}})
        art_db.append(sid, {"type": "ToolCallFinished", "actor": "tool",
                            "id": "evt_art2", "ts": 1700000000002,
                            "payload": {"tool_call_id": "c1", "name": "cat", "artifact_id": art["id"]}})
        seeds.append(fixed_time("".join(line + "\n" for line in art_db.export_ndjson())))
        write("import", seeds)

        # compile: a request on the template's session "s", or a bundle
        requests = []
        for fmt in ("canonical", "openai.chat", "openai.responses", "anthropic.messages",
                    "gemini.generate_content", "ai.sdk"):
            requests.append({"session_id": "s", "max_tokens": 4000, "request": "go on",
                             "format": fmt})
        requests += [
            {"session_id": "s", "max_tokens": 200, "request": "summarize",
             "instructions": [{"kind": "system", "text": "Be brief."}]},
            {"session_id": "s", "max_tokens": 8000, "reserved_output_tokens": 1000,
             "tools": [{"name": "ls", "description": "list", "parameters": {"type": "object"}}],
             "request": "list src"},
            {"session_id": "s", "max_tokens": 3000, "request": "call 555-1234",
             "policy": {"redact": [{"name": "num", "pattern": "[0-9]{3}-[0-9]{4}",
                                    "replacement": "[n]"}], "prune": {"keep_recent_turns": 1}}},
            {"session_id": "s", "branch_id": "main", "max_tokens": 3000, "continuation": True},
            {"session_id": "s", "max_tokens": 3000, "request": "again", "record": True},
            {"session_id": "s", "max_tokens": 3000, "request": "x", "token_counter": "approx-v2"},
            {"session_id": "s", "max_tokens": 3000, "request": "x",
             "policy": {"interrupted_calls": "drop", "builtin_redaction": True}},
        ]
        seeds = [dumps(r).encode() for r in requests]
        seeds += [dumps(r).encode() + SEP + dumps(events[i]).encode()
                  for i, r in enumerate(requests[:6])]
        for bundle in sorted((FIXTURES / "providers").glob("*.bundle.json")):
            seeds.append(dumps(json.loads(bundle.read_bytes())).encode())
        write("compile", seeds)
    finally:
        shutil.rmtree(tmp)

    # config: ctxdb_open's config
    configs = [{}, {"durability": "full"}, {"durability": "normal", "checkpoint": "background"},
               {"read_only": True}, {"mmap": False}, {"busy_timeout_ms": 0},
               {"checkpoint": "inline", "search_index_lag": 0}, {"search_index_lag": 1},
               {"token_counter": "approx-v2"}, {"token_counter": "estimate"},
               {"spill": {}}, {"durability": "full", "mmap": False, "busy_timeout_ms": 100},
               {"read_only": False, "checkpoint": "inline"}]
    schema = json.loads((ROOT / "schema" / "json" / "config.schema.json").read_bytes())
    spill = schema["properties"]["spill"].get("properties", {})
    for name, spec in spill.items():
        value = {"integer": 64, "boolean": True, "string": "x"}.get(spec.get("type"), 1)
        configs.append({"spill": {name: value}})
    write("config", [dumps(c) for c in configs])

    # response: options 0xFF a response, and a response alone
    formats = {"openai_chat": "openai.chat", "openai_responses": "openai.responses",
               "anthropic": "anthropic.messages", "gemini": "gemini.generate_content"}
    seeds = []
    for f in sorted((FIXTURES / "responses").glob("*.*")):
        if f.suffix not in (".json", ".sse", ".ndjson"):
            continue
        fmt = next(v for k, v in formats.items() if f.name.startswith(k))
        options = {"format": fmt}
        if f.suffix != ".json":
            options["stream"] = True
        seeds.append(dumps(options).encode() + SEP + f.read_bytes())
        seeds.append(f.read_bytes())
    write("response", seeds)

    # transcripts: runs of a fixture file's lines
    root = FIXTURES / "transcripts"
    write("transcript_claude_code", transcript_seeds(sorted((root / "claude-code").rglob("*.jsonl")), 3))
    write("transcript_codex", transcript_seeds(sorted((root / "codex").rglob("*.jsonl")), 2))
    write("transcript_pi", transcript_seeds(sorted((root / "pi").rglob("*.jsonl")), 2))

    # capi: an event id or branch | artifact bytes | a compaction policy |
    # a summary | rebuild options
    seeds = [b"main", b"s", b"evt_x" + SEP + b"hello\nworld\n",
             b'{"event_id":"s-start","name":"b1"}' + SEP + b"0123456789" * 40 + SEP +
             b'{"keep_recent_turns":1}',
             b"main" + SEP + b"x" + SEP + b'{"trigger_tokens":1,"keep_recent_tokens":0}' + SEP +
             b'{"summary":"done","goal":"fix the test"}',
             b"" + SEP + b"" + SEP + b"" + SEP + b"" + SEP + b'{"check":false}',
             b"main" + SEP + b"a,b,c\n1,2,3\n" + SEP + b'{"keep_recent_tokens":10}' + SEP +
             b'{"summary":"the tree was listed"}' + SEP + b'{"check":true}',
             b'{"event_id":"x","kind":"what_if","name":"alt"}' + SEP + b"\x00\x01binary" + SEP +
             b'{"max_tokens":100}' + SEP + b"{}" + SEP + b"{}"]
    write("capi", seeds)


if __name__ == "__main__":
    sys.exit(main())
