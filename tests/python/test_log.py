"""append_many, streaming iterators, export/import and verify."""
import gc
import json
import sqlite3

import pytest

import ctxdb
from ctxdb import _capi
from conftest import prompt


def count_calls(monkeypatch, name):
    """Wraps _capi.<name>; returns the list of calls' first arguments."""
    calls = []
    real = getattr(_capi, name)

    def wrapper(*args):
        calls.append(args[0])
        return real(*args)

    monkeypatch.setattr(_capi, name, wrapper)
    return calls


# ---- append_many --------------------------------------------------------------

def test_append_many_is_one_batch_call(db, sid, monkeypatch):
    calls = count_calls(monkeypatch, "ctxdb_append_batch")
    appends = count_calls(monkeypatch, "ctxdb_append")
    events = [prompt(f"p{i}") for i in range(10)]
    r = db.append_many(sid, events)
    assert r["count"] == 10 and r["first_seq"] == 2 and r["last_seq"] == 11
    assert r["last_id"] == list(db.events(sid, 11))[0]["id"]
    assert len(calls) == 1 and appends == []


def test_append_many_accepts_mixed_items_and_generators(db, sid):
    items = (x for x in [prompt("dict"), json.dumps(prompt("str")),
                         json.dumps(prompt("bytes")).encode(),
                         json.dumps(prompt("line with newline")) + "\n"])
    r = db.append_many(sid, items)
    assert r["count"] == 4
    texts = [e["payload"]["text"] for e in db.events(sid, 2)]
    assert texts == ["dict", "str", "bytes", "line with newline"]


def test_append_many_accepts_ndjson_text(db, sid):
    text = "\n".join(json.dumps(prompt(f"n{i}")) for i in range(3))
    assert db.append_many(sid, text)["count"] == 3
    assert db.append_many(sid, text.encode())["count"] == 3
    assert db.session(sid)["event_count"] == 7


def test_append_many_bad_line_writes_nothing_and_names_the_line(db, sid):
    before = db.session(sid)
    events = [prompt("ok 1"), prompt("ok 2"),
              {"type": "UserPromptSubmitted", "actor": "user", "payload": {}},  # no text
              prompt("ok 4")]
    with pytest.raises(ctxdb.InvalidInput) as e:
        db.append_many(sid, events)
    assert "line 3" in e.value.message
    assert db.session(sid) == before
    assert [x["seq"] for x in db.events(sid)] == [1]


def test_append_many_unknown_session(db):
    with pytest.raises(ctxdb.NotFound):
        db.append_many("ses_nope", [prompt()])


# ---- streaming iterators -----------------------------------------------------------

N = 700  # several engine pages (256 rows each)


@pytest.fixture
def big(db, sid):
    db.append_many(sid, (prompt(f"#{i}") for i in range(N)))
    return sid


def test_events_streams_over_several_pages(db, big, monkeypatch):
    nexts = count_calls(monkeypatch, "ctxdb_iter_next")
    frees = count_calls(monkeypatch, "ctxdb_iter_free")
    it = db.events(big)
    first = next(it)
    assert first["seq"] == 1 and first["type"] == "SessionStarted"
    assert len(nexts) == 1  # one row per call: nothing read ahead in Python
    seqs = [1] + [e["seq"] for e in it]
    assert seqs == list(range(1, N + 2))
    assert len(nexts) == N + 2  # N+1 rows, then DONE
    assert len(frees) == 1 and it.closed  # freed once exhausted
    assert list(it) == []  # stays exhausted
    assert len(frees) == 1


def test_events_window(db, big):
    assert [e["seq"] for e in db.events(big, 300, 305)] == list(range(300, 306))
    assert [e["seq"] for e in db.events(big, from_seq=N)] == [N, N + 1]
    assert list(db.events(big, 5, 4)) == []
    assert [e["seq"] for e in db.events(big, to_seq=3)] == [1, 2, 3]


def test_events_raw_rows_are_the_stored_json(db, sid):
    e = db.append(sid, prompt("raw"))
    rows = list(db.events(sid, raw=True))
    assert isinstance(rows[1], str)
    assert json.loads(rows[1]) == e
    assert "\n" not in rows[1] and ": " not in rows[1]  # compact


def test_events_unknown_session_fails_at_call(db):
    with pytest.raises(ctxdb.NotFound):
        db.events("ses_missing")


def test_iterator_close_and_with_free_once(db, big, monkeypatch):
    frees = count_calls(monkeypatch, "ctxdb_iter_free")
    it = db.events(big)
    next(it)
    it.close()
    it.close()
    assert len(frees) == 1
    with pytest.raises(StopIteration):
        next(it)
    with db.events(big) as it2:
        next(it2)
    assert len(frees) == 2 and it2.closed


def test_iterator_freed_when_garbage_collected(db, big, monkeypatch):
    frees = count_calls(monkeypatch, "ctxdb_iter_free")
    for e in db.events(big):
        if e["seq"] == 10:
            break
    gc.collect()
    assert len(frees) == 1


def test_closing_database_frees_its_iterators(db, big, monkeypatch):
    frees = count_calls(monkeypatch, "ctxdb_iter_free")
    it = db.events(big)
    next(it)
    db.close()
    assert len(frees) == 1 and it.closed
    with pytest.raises(ctxdb.Misuse):
        next(it)
    del it
    gc.collect()
    assert len(frees) == 1  # not freed twice


def test_iterator_keeps_its_database_open(db_path):
    with ctxdb.open(db_path) as db:
        s = db.create_session(agent_id="x")["id"]
        db.append_many(s, [prompt()] * 3)
    it = ctxdb.open(db_path).events(s)  # the Database is referenced only by it
    gc.collect()
    assert len(list(it)) == 4


# ---- export / import ----------------------------------------------------------------

def fill(db):
    a = db.create_session(id="ses_a", agent_id="x")["id"]
    b = db.create_session(id="ses_b", agent_id="y")["id"]
    for i in range(30):
        db.append(a if i % 3 else b, prompt(f"e{i}"))
    db.append_many(b, [prompt(f"b{i}") for i in range(300)])


def test_export_import_roundtrip_is_identical(db, tmp_path):
    fill(db)
    lines = list(db.export(raw=True))
    assert len(lines) == 2 + 30 + 300
    with ctxdb.open(tmp_path / "copy.ctxdb") as copy:
        r = copy.import_ndjson("\n".join(lines))
        assert r == {"imported": len(lines), "skipped": 0}
        assert list(copy.export(raw=True)) == lines
        assert list(copy.export()) == list(db.export())
        assert copy.verify()["ok"] is True
        assert copy.sessions() == db.sessions()
        # importing again skips everything; dicts from export() work too
        assert copy.import_ndjson(db.export()) == {"imported": 0, "skipped": len(lines)}


def test_import_from_a_file_of_lines(db, tmp_path):
    fill(db)
    path = tmp_path / "export.ndjson"
    with open(path, "w", encoding="utf-8") as f:
        for line in db.export(raw=True):
            f.write(line + "\n")
    with ctxdb.open(tmp_path / "copy.ctxdb") as copy, open(path, encoding="utf-8") as f:
        assert copy.import_ndjson(f)["imported"] == 332
        assert list(copy.export(raw=True)) == list(db.export(raw=True))


def test_import_tampered_line_is_corrupt_and_imports_nothing(db, tmp_path):
    fill(db)
    rows = list(db.export())
    rows[5]["payload"]["text"] = "tampered"  # payload no longer matches its hash
    with ctxdb.open(tmp_path / "copy.ctxdb") as copy:
        with pytest.raises(ctxdb.Corrupt) as e:
            copy.import_ndjson(rows)
        assert e.value.code == _capi.CORRUPT
        assert "line 6" in e.value.message
        assert list(copy.export()) == []


# ---- verify ------------------------------------------------------------------------------

def test_verify_ok(db, sid):
    db.append_many(sid, [prompt(f"{i}") for i in range(5)])
    r = db.verify()
    assert r == {"ok": True, "sessions": 1, "events": 6,
                 "artifacts": {"ok": True, "mode": "quick", "artifacts": 0, "chunks": 0,
                               "bytes": 0}}
    assert db.verify(sid) == {"ok": True, "sessions": 1, "events": 6}
    with pytest.raises(ctxdb.NotFound):
        db.verify("ses_missing")


def test_verify_detects_tampering(db_path):
    with ctxdb.open(db_path) as db:
        sid = db.create_session(agent_id="x")["id"]
        db.append_many(sid, [prompt(f"{i}") for i in range(4)])
        assert db.verify()["ok"] is True
    con = sqlite3.connect(db_path)
    con.executescript("""
        DROP TRIGGER events_no_update;
        UPDATE events SET payload='{"text":"rewritten history"}' WHERE seq=2;
    """)
    con.close()
    with ctxdb.open(db_path) as db:
        r = db.verify()
        assert r["ok"] is False
        broken = r["first_broken"]
        assert broken["seq"] == 2
        assert broken["session_id"] == sid
        assert broken["event_id"] == list(db.events(sid, 2, 2))[0]["id"]
        assert "payload" in broken["problem"]
        assert db.verify(sid)["ok"] is False


def test_verify_reports_an_id_that_is_not_utf8(db_path):
    """A damaged byte in a stored id: verify() and events() still return
    (the engine writes it as U+FFFD, as Python's own decoder would)."""
    with ctxdb.open(db_path) as db:
        sid = db.create_session(agent_id="x")["id"]
        eid = db.append(sid, prompt("one"))["id"]
    con = sqlite3.connect(db_path)
    con.executescript(f"""
        DROP TRIGGER events_no_update;
        UPDATE events SET id = CAST(id || X'FF' AS TEXT) WHERE id = '{eid}';
    """)
    con.close()
    damaged = (eid.encode() + b"\xff").decode("utf-8", "replace")
    with ctxdb.open(db_path) as db:
        r = db.verify()
        assert r["ok"] is False
        assert r["first_broken"]["event_id"] == damaged
        assert [e["id"] for e in db.events(sid)][1] == damaged


def test_empty_batch(db, sid):
    assert db.append_many(sid, [])["count"] == 0
    with pytest.raises(ctxdb.NotFound) as e:
        db.append_many("ses_nope", [])
    assert e.value.code == _capi.NOT_FOUND and "ses_nope" in str(e.value)
    with pytest.raises(ctxdb.NotFound):
        db.append_many("ses_nope", "\n\n")


def nested(levels):
    """A value nested `levels` deep in arrays."""
    v = []
    for _ in range(levels - 1):
        v = [v]
    return v


def test_nesting_limit(db, sid):
    """The deepest event the engine takes (256 levels: the envelope, the
    payload object, 254 arrays) reads back; one level more is refused and
    nothing is written, so events() keeps working."""
    deepest = {"type": "Note", "actor": "a", "payload": {"a": nested(254)}}
    stored = db.append(sid, deepest)
    assert db.event(stored["id"])["payload"] == deepest["payload"]
    assert [e["payload"] for e in db.events(sid)][-1] == deepest["payload"]
    before = [e["id"] for e in db.events(sid)]
    with pytest.raises(ctxdb.InvalidInput) as e:
        db.append(sid, {"type": "Note", "actor": "a", "payload": {"a": nested(255)}})
    assert e.value.code == _capi.INVALID_ARG and "256" in str(e.value)
    assert [e["id"] for e in db.events(sid)] == before
