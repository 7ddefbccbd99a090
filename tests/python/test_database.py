"""Opening, sessions, appends and reads through the Pythonic layer."""
import gc
import json
import os
import threading

import pytest

import ctxdb
from ctxdb import _capi
from conftest import prompt


def test_version_matches_library(lib_path):
    assert ctxdb.version() == _capi.ctxdb_version().decode()
    assert ctxdb.version().count(".") == 2
    assert ctxdb.version_number() == _capi.ctxdb_version_number()
    assert ctxdb.abi_version() == ctxdb.ABI_VERSION == 1


def test_open_creates_file_and_close_is_idempotent(db_path):
    assert not db_path.exists()
    db = ctxdb.open(db_path)
    assert db_path.exists()
    assert not db.closed
    assert repr(db).endswith("open>")
    db.close()
    assert db.closed
    assert repr(db).endswith("closed>")
    db.close()  # a second close is a no-op
    assert db.closed


def test_open_accepts_str_bytes_and_pathlike(tmp_path):
    for p in (str(tmp_path / "a.ctxdb"), os.fsencode(tmp_path / "b.ctxdb"),
              tmp_path / "c.ctxdb"):
        with ctxdb.open(p) as db:
            assert db.path == os.fsdecode(p)
            db.create_session(agent_id="a")
    assert sorted(f.name for f in tmp_path.glob("*.ctxdb")) == ["a.ctxdb", "b.ctxdb", "c.ctxdb"]


def test_context_manager_closes_also_on_exception(db_path):
    with pytest.raises(RuntimeError):
        with ctxdb.open(db_path) as db:
            assert not db.closed
            raise RuntimeError("boom")
    assert db.closed


def test_config_is_passed_to_the_engine(db_path):
    with ctxdb.open(db_path, durability="full", busy_timeout_ms=100) as db:
        db.create_session(agent_id="a")
    # The engine validates the config: a bad value is its InvalidInput.
    with pytest.raises(ctxdb.InvalidInput) as e:
        ctxdb.open(db_path, durability="sometimes")
    assert e.value.code == _capi.INVALID_ARG
    with pytest.raises(ctxdb.InvalidInput):
        ctxdb.open(db_path, no_such_option=True)
    with pytest.raises(ctxdb.InvalidInput, match="mmap"):
        ctxdb.open(db_path, mmap="no")
    # Without the memory map, the file reads the same.
    with ctxdb.open(db_path, mmap=False) as db:
        assert len(db.sessions()) == 1
    with pytest.raises(ctxdb.InvalidInput, match="checkpoint"):
        ctxdb.open(db_path, checkpoint="later")
    # Either way of checkpointing keeps every event of a WAL-filling batch.
    for mode in ("inline", "background"):
        with ctxdb.open(db_path, checkpoint=mode) as db:
            sid = db.create_session(agent_id=mode)["id"]
            db.append_many(sid, [{"type": "Note", "actor": "host",
                                    "payload": {"text": "x" * 4000}}] * 1500)
        with ctxdb.open(db_path, read_only=True) as db:
            assert db.session(sid)["event_count"] == 1501
    # A VFS by name: SQLite's "unix" reads the same file; an unknown name is named.
    with pytest.raises(ctxdb.InvalidInput, match="no-such-vfs"):
        ctxdb.open(db_path, vfs="no-such-vfs")
    with ctxdb.open(db_path, vfs="unix") as db:
        assert db.session(sid)["event_count"] == 1501


def test_garbage_collected_database_is_closed(db_path, monkeypatch):
    closed = []
    real = _capi.ctxdb_close
    monkeypatch.setattr(_capi, "ctxdb_close", lambda p: closed.append(p) or real(p))
    db = ctxdb.open(db_path)
    del db
    gc.collect()
    assert len(closed) == 1


def test_create_session_keyword_form(db):
    s = db.create_session(id="ses_kw", agent_id="coder", actor="cli",
                          title="Fix the bug", repo="ctxdb")
    assert s["id"] == "ses_kw"
    assert s["agent_id"] == "coder"
    assert s["meta"] == {"agent_id": "coder", "title": "Fix the bug", "repo": "ctxdb"}
    assert s["event_count"] == 1 and s["last_seq"] == 1
    started = db.event(s["started_event_id"])
    assert started["type"] == "SessionStarted"
    assert started["actor"] == "cli"
    assert started["seq"] == 1
    # id generated when absent
    s2 = db.create_session(agent_id="coder")
    assert s2["id"].startswith("ses_") and s2["id"] != "ses_kw"


def test_create_session_dict_form(db):
    s = db.create_session({"id": "ses_dict", "actor": "host", "ts": 1234,
                           "payload": {"agent_id": "planner", "k": [1, 2]}})
    assert s["id"] == "ses_dict"
    assert s["agent_id"] == "planner"
    assert s["created_ts"] == 1234
    assert s["meta"] == {"agent_id": "planner", "k": [1, 2]}


def test_session_lookup_and_list(db):
    a = db.create_session(id="ses_a", agent_id="x")
    b = db.create_session(id="ses_b", agent_id="y")
    assert db.session("ses_a") == a
    assert db.session(b"ses_b") == b  # bytes ids pass through
    assert [s["id"] for s in db.sessions()] == ["ses_a", "ses_b"]
    db.append("ses_a", prompt())
    assert db.session("ses_a")["event_count"] == 2


def test_sessions_empty(db):
    assert db.sessions() == []


def test_append_dict(db, sid):
    e = db.append(sid, prompt("from a dict"))
    assert e["session_id"] == sid
    assert e["seq"] == 2
    assert e["type"] == "UserPromptSubmitted"
    assert e["payload"] == {"text": "from a dict"}
    for k in ("id", "ts", "payload_hash", "prev_hash", "hash"):
        assert k in e
    assert len(e["hash"]) == 64
    assert db.event(e["id"]) == e


def test_append_kwargs(db, sid):
    e = db.append(sid, type="FileRead", actor="agent", payload={"path": "a.py"},
                  run_id="run_1")
    assert e["type"] == "FileRead" and e["run_id"] == "run_1"
    assert e["payload"] == {"path": "a.py"}


def test_append_dict_plus_kwargs_override(db, sid):
    e = db.append(sid, prompt("base"), actor="robot", id="evt_override")
    assert e["actor"] == "robot" and e["id"] == "evt_override"


def test_append_json_text_and_bytes(db, sid):
    e1 = db.append(sid, json.dumps(prompt("as str")))
    e2 = db.append(sid, json.dumps(prompt("as bytes")).encode())
    assert e1["payload"]["text"] == "as str"
    assert e2["payload"]["text"] == "as bytes"
    assert e2["prev_hash"] == e1["hash"]


def test_append_unicode_roundtrip(db, sid):
    text = "héllo — 世界 🚀 \u2028 \"quoted\" \\ \n newline"
    e = db.append(sid, prompt(text))
    assert e["payload"]["text"] == text
    assert db.event(e["id"])["payload"]["text"] == text


def test_append_optional_fields_come_back(db, sid):
    first = db.append(sid, prompt("parent"))
    e = db.append(sid, prompt("child", parent_id=first["id"], run_id="r1",
                              causality={"because": first["id"]},
                              visibility="private", ts=42))
    assert e["parent_id"] == first["id"]
    assert e["causality"] == {"because": first["id"]}
    assert e["visibility"] == "private"
    assert e["ts"] == 42


def test_append_same_id_same_content_is_a_safe_retry(db, sid):
    a = db.append(sid, prompt("once", id="evt_retry"))
    b = db.append(sid, prompt("once", id="evt_retry"))
    assert a == b
    assert db.session(sid)["event_count"] == 2


def test_database_shared_between_threads(db, sid):
    errors = []

    def work(n):
        try:
            for i in range(50):
                db.append(sid, prompt(f"t{n}-{i}"))
                db.session(sid)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert db.session(sid)["event_count"] == 1 + 4 * 50
    assert db.verify()["ok"] is True


def test_two_handles_on_one_file(db_path):
    with ctxdb.open(db_path) as a, ctxdb.open(db_path) as b:
        s = a.create_session(agent_id="x")
        b.append(s["id"], prompt("from b"))
        assert a.session(s["id"])["event_count"] == 2
