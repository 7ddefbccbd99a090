"""Every error class for its code, and bad input from the host."""
import random
import sqlite3

import pytest

import ctxdb
from ctxdb import _capi, errors
from conftest import prompt

CLASSES = {
    _capi.MISUSE: ctxdb.Misuse,
    _capi.INVALID_ARG: ctxdb.InvalidInput,
    _capi.INVALID_UTF8: ctxdb.InvalidInput,
    _capi.INVALID_JSON: ctxdb.InvalidInput,
    _capi.NOT_FOUND: ctxdb.NotFound,
    _capi.CONFLICT: ctxdb.Conflict,
    _capi.BUSY: ctxdb.Busy,
    _capi.BUDGET: ctxdb.BudgetExceeded,
    _capi.CHECK_FAILED: ctxdb.CheckFailed,
    _capi.CORRUPT: ctxdb.Corrupt,
    _capi.IO: ctxdb.IOFailure,
    _capi.NOMEM: ctxdb.OutOfMemory,
    _capi.SCHEMA: ctxdb.SchemaError,
    _capi.READONLY: ctxdb.ReadOnly,
    _capi.INTERNAL: ctxdb.InternalError,
    _capi.NOTADB: ctxdb.NotADatabase,
}


@pytest.mark.parametrize("code", sorted(CLASSES))
def test_class_per_code(code, lib_path):
    e = errors.error_for(code, "msg")
    assert type(e) is CLASSES[code]
    assert isinstance(e, ctxdb.Error)
    assert e.code == code
    assert e.code_name == _capi.ctxdb_errstr(code).decode()
    assert e.message == "msg"
    assert str(e) == f"{e.code_name}: msg"


def test_classes_are_distinct():
    assert len(set(CLASSES.values())) == len(CLASSES) - 2  # three codes share InvalidInput


def test_unknown_code_is_plain_error(lib_path):
    e = errors.error_for(999, "future")
    assert type(e) is ctxdb.Error and e.code == 999
    assert e.code_name == _capi.ctxdb_errstr(999).decode() == "CTXDB_UNKNOWN"


def assert_error(excinfo, cls, code):
    assert type(excinfo.value) is cls
    assert excinfo.value.code == code
    assert excinfo.value.code_name == _capi.ctxdb_errstr(code).decode()
    assert excinfo.value.message  # the engine said something


# ---- each code from a real failure ---------------------------------------------

def test_not_found(db, sid):
    with pytest.raises(ctxdb.NotFound) as e:
        db.session("ses_missing")
    assert_error(e, ctxdb.NotFound, _capi.NOT_FOUND)
    with pytest.raises(ctxdb.NotFound):
        db.event("evt_missing")
    with pytest.raises(ctxdb.NotFound):
        db.append("ses_missing", prompt())


def test_conflict_same_id_different_content(db, sid):
    db.append(sid, prompt("first", id="evt_1"))
    with pytest.raises(ctxdb.Conflict) as e:
        db.append(sid, prompt("second", id="evt_1"))
    assert_error(e, ctxdb.Conflict, _capi.CONFLICT)
    with pytest.raises(ctxdb.Conflict):
        db.create_session(id=sid, agent_id="again")


def test_invalid_input_codes(db, sid):
    with pytest.raises(ctxdb.InvalidInput) as e:
        db.append(sid, "{not json")
    assert_error(e, ctxdb.InvalidInput, _capi.INVALID_JSON)
    with pytest.raises(ctxdb.InvalidInput) as e:
        db.append(sid, type="UserPromptSubmitted", actor="user", payload={})
    assert_error(e, ctxdb.InvalidInput, _capi.INVALID_ARG)
    with pytest.raises(ctxdb.InvalidInput) as e:
        db.append(sid, b'{"type":"X","actor":"a","payload":{"t":"\xff"}}')
    assert_error(e, ctxdb.InvalidInput, _capi.INVALID_UTF8)
    with pytest.raises(ctxdb.InvalidInput) as e:
        db.create_session(actor="x")  # no agent_id
    assert e.value.code == _capi.INVALID_ARG


def test_read_only(db_path):
    with ctxdb.open(db_path) as db:
        sid = db.create_session(agent_id="x")["id"]
    with ctxdb.open(db_path, read_only=True) as ro:
        assert ro.session(sid)["id"] == sid  # reads work
        with pytest.raises(ctxdb.ReadOnly) as e:
            ro.append(sid, prompt())
        assert_error(e, ctxdb.ReadOnly, _capi.READONLY)
        with pytest.raises(ctxdb.ReadOnly):
            ro.create_session(agent_id="y")


def test_not_a_database(tmp_path):
    p = tmp_path / "notes.txt"
    text = "these are my notes, not a database\n" * 200
    p.write_text(text)
    with pytest.raises(ctxdb.NotADatabase) as e:
        ctxdb.open(p)
    assert_error(e, ctxdb.NotADatabase, _capi.NOTADB)
    assert p.read_text() == text  # untouched


def test_schema_newer_than_library(db_path):
    ctxdb.open(db_path).close()
    con = sqlite3.connect(db_path)
    version = con.execute("PRAGMA user_version").fetchone()[0]
    con.execute(f"PRAGMA user_version = {version + 1}")
    con.commit()
    con.close()
    with pytest.raises(ctxdb.SchemaError) as e:
        ctxdb.open(db_path)
    assert_error(e, ctxdb.SchemaError, _capi.SCHEMA)


def test_busy(db_path):
    with ctxdb.open(db_path) as db:
        sid = db.create_session(agent_id="x")["id"]
    lock = sqlite3.connect(db_path, isolation_level=None)
    lock.execute("BEGIN IMMEDIATE")  # holds the write lock
    try:
        with ctxdb.open(db_path, busy_timeout_ms=0) as db:
            with pytest.raises(ctxdb.Busy) as e:
                db.append(sid, prompt())
            assert_error(e, ctxdb.Busy, _capi.BUSY)
    finally:
        lock.execute("ROLLBACK")
        lock.close()


def test_io_failure(tmp_path):
    with pytest.raises(ctxdb.IOFailure) as e:
        ctxdb.open(tmp_path / "no" / "such" / "dir" / "x.ctxdb")
    assert_error(e, ctxdb.IOFailure, _capi.IO)


def test_misuse_on_closed_database(db, sid):
    db.close()
    calls = [
        lambda: db.create_session(agent_id="x"),
        lambda: db.session(sid),
        lambda: db.sessions(),
        lambda: db.append(sid, prompt()),
        lambda: db.append_many(sid, [prompt()]),
        lambda: db.event("evt_x"),
        lambda: db.events(sid),
        lambda: db.export(),
        lambda: db.verify(),
        lambda: db.rebuild(),
        lambda: db.import_ndjson(""),
    ]
    for call in calls:
        with pytest.raises(ctxdb.Misuse) as e:
            call()
        assert e.value.code == _capi.MISUSE
    with pytest.raises(ctxdb.Misuse):
        with db:
            pass


# ---- bad input from the host: the binding's own errors ---------------------------

WRONG_TYPES = [
    ("open None", lambda db, sid: ctxdb.open(None)),
    ("open int", lambda db, sid: ctxdb.open(123)),
    ("config not JSON", lambda db, sid: ctxdb.open("/nonexistent-dir/x.ctxdb", busy_timeout_ms={1})),
    ("session None", lambda db, sid: db.session(None)),
    ("session int", lambda db, sid: db.session(42)),
    ("event list", lambda db, sid: db.event(["evt"])),
    ("append sid None", lambda db, sid: db.append(None, prompt())),
    ("append sid int", lambda db, sid: db.append(7, prompt())),
    ("append event int", lambda db, sid: db.append(sid, 5)),
    ("append event list", lambda db, sid: db.append(sid, [prompt()])),
    ("append nothing", lambda db, sid: db.append(sid)),
    ("append text+kwargs", lambda db, sid: db.append(sid, "{}", type="X")),
    ("payload object", lambda db, sid: db.append(sid, prompt(object()))),
    ("payload bytes", lambda db, sid: db.append(sid, prompt(b"bytes"))),
    ("create id int", lambda db, sid: db.create_session(id=5, agent_id="x")),
    ("create dict+kwargs", lambda db, sid: db.create_session({"payload": {}}, agent_id="x")),
    ("append_many int", lambda db, sid: db.append_many(sid, 5)),
    ("append_many None", lambda db, sid: db.append_many(sid, None)),
    ("append_many dict", lambda db, sid: db.append_many(sid, prompt())),
    ("append_many item", lambda db, sid: db.append_many(sid, [prompt(), 3])),
    ("events from str", lambda db, sid: db.events(sid, "1")),
    ("events from float", lambda db, sid: db.events(sid, 1.0)),
    ("events from bool", lambda db, sid: db.events(sid, True)),
    ("events to str", lambda db, sid: db.events(sid, 1, "9")),
    ("verify int", lambda db, sid: db.verify(1)),
    ("rebuild check None", lambda db, sid: db.rebuild(None)),
    ("rebuild check int", lambda db, sid: db.rebuild(check=1)),
    ("import None", lambda db, sid: db.import_ndjson(None)),
    ("import int", lambda db, sid: db.import_ndjson(12)),
]


@pytest.mark.parametrize("name,call", WRONG_TYPES, ids=[n for n, _ in WRONG_TYPES])
def test_wrong_types_raise_type_error(db, sid, name, call):
    with pytest.raises(TypeError):
        call(db, sid)
    assert db.session(sid)["event_count"] == 1  # nothing written


BAD_VALUES = [
    ("path NUL", lambda db, sid: ctxdb.open("a\0b.ctxdb")),
    ("sid surrogate", lambda db, sid: db.append("ses_\udc80", prompt())),
    ("payload surrogate", lambda db, sid: db.append(sid, prompt("lone \ud800 surrogate"))),
    ("json text surrogate", lambda db, sid: db.append(sid, '{"type":"\udfff"}')),
    ("session surrogate", lambda db, sid: db.session("\ud83d")),
    ("create surrogate", lambda db, sid: db.create_session(agent_id="\udc00")),
    ("payload NaN", lambda db, sid: db.append(sid, prompt(float("nan")))),
    ("payload inf", lambda db, sid: db.append(sid, prompt(float("inf")))),
    ("item with newline", lambda db, sid: db.append_many(sid, ['{"a":1}\n{"b":2}'])),
    ("item surrogate", lambda db, sid: db.append_many(sid, [prompt(), prompt("\udc80")])),
    ("import surrogate", lambda db, sid: db.import_ndjson("\udc80")),
    ("to_seq overflow", lambda db, sid: db.events(sid, 1, 2 ** 63)),
    ("from_seq overflow", lambda db, sid: db.events(sid, -(2 ** 64))),
]


@pytest.mark.parametrize("name,call", BAD_VALUES, ids=[n for n, _ in BAD_VALUES])
def test_bad_values_raise_value_error(db, sid, name, call):
    with pytest.raises(ValueError) as e:
        call(db, sid)
    assert not isinstance(e.value, ctxdb.Error)
    assert db.session(sid)["event_count"] == 1


def test_surrogate_error_message_is_clear(db, sid):
    with pytest.raises(ValueError, match="lone surrogate"):
        db.append(sid, prompt("x\ud800"))


NON_UTF8 = [
    ("session id", lambda db, sid: db.session(b"ses_\xff")),
    ("append sid", lambda db, sid: db.append(b"\xc3\x28", prompt())),
    ("event id", lambda db, sid: db.event(b"evt_\xfe")),
    ("event text", lambda db, sid: db.append(sid, b'{"type":"X","actor":"\xe2\x82","payload":{}}')),
    ("batch", lambda db, sid: db.append_many(sid, [prompt(), b'{"type":"X","actor":"a","payload":{"x":"\xff"}}'])),
    ("import", lambda db, sid: db.import_ndjson(b"\xff\xfe\n")),
    ("verify", lambda db, sid: db.verify(b"\x80")),
    ("events", lambda db, sid: db.events(b"\x80")),
    ("path", lambda db, sid: ctxdb.open(b"/tmp/\xff\xfe.ctxdb")),
]


@pytest.mark.parametrize("name,call", NON_UTF8, ids=[n for n, _ in NON_UTF8])
def test_non_utf8_bytes_reach_the_engine(db, sid, name, call):
    with pytest.raises(ctxdb.InvalidInput) as e:
        call(db, sid)
    assert e.value.code == _capi.INVALID_UTF8
    assert db.session(sid)["event_count"] == 1


def test_empty_ids_are_the_engines_invalid_arg(db, sid):
    for call in (lambda: db.session(""), lambda: db.append("", prompt()),
                 lambda: db.event(b""), lambda: db.verify("")):
        with pytest.raises(ctxdb.InvalidInput) as e:
            call()
        assert e.value.code == _capi.INVALID_ARG


def test_garbage_never_crashes(db, sid):
    """Random bytes and values into every entry point: errors, never a crash."""
    rng = random.Random(1234)
    values = [None, 0, -1, 2 ** 70, 1.5, "", "x", "\udc80", b"", b"\x00",
              b"\xff" * 3, [], {}, {"type": 1}, [1, 2], object(), "{", "[]",
              '{"type":"X","actor":"a","payload":{}}']

    def pick():
        if rng.random() < 0.5:
            return rng.choice(values)
        return bytes(rng.randrange(256) for _ in range(rng.randrange(40)))

    ops = [lambda a, b: db.session(a), lambda a, b: db.event(a),
           lambda a, b: db.append(a, b), lambda a, b: db.append(sid, b),
           lambda a, b: db.append_many(a, b), lambda a, b: db.append_many(sid, [b]),
           lambda a, b: db.import_ndjson(b), lambda a, b: db.verify(a),
           lambda a, b: list(db.events(a, b)), lambda a, b: db.create_session(a)]
    for _ in range(3000):
        try:
            rng.choice(ops)(pick(), pick())
        except (ctxdb.Error, TypeError, ValueError):
            pass
    assert db.verify()["ok"] is True
