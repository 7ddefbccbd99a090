"""rebuild: replaying the log into the derived tables, and its check."""
import sqlite3

import pytest

import ctxdb
from ctxdb import _capi
from conftest import prompt


def populate(db):
    """Three sessions with a few events; returns their ids."""
    a = db.create_session(id="ses_a", agent_id="agent-a", model="m-1")["id"]
    b = db.create_session(id="ses_b", agent_id="agent-b")["id"]
    c = db.create_session(id="ses_c", agent_id="agent-c")["id"]
    db.append(a, prompt("first"))
    db.append_many(b, [prompt("b1"), prompt("b2")])
    db.append(c, prompt("ünïcødé 😀"))
    db.append(a, prompt("second"))
    return a, b, c


def sessions_entry(report):
    entries = [t for t in report["tables"] if t["table"] == "sessions"]
    assert len(entries) == 1, report
    return entries[0]


def test_rebuild_of_an_untouched_database_is_identical(db):
    populate(db)
    stored = len(list(db.export()))
    assert stored == 8
    before = db.sessions()
    r = db.rebuild()
    assert r["identical"] is True
    assert r["events"] == stored
    t = sessions_entry(r)
    assert t["rows"] == 3
    assert t["before"] == t["after"]
    assert len(t["before"]) == 64
    assert db.sessions() == before
    # check=True on identical tables succeeds and reports the same.
    checked = db.rebuild(check=True)
    assert checked.pop("artifacts") == {"ok": True, "mode": "quick", "artifacts": 0,
                                        "chunks": 0, "bytes": 0}
    assert checked == r
    assert db.rebuild(False) == r


def test_rebuild_of_an_empty_database(db):
    r = db.rebuild(check=True)
    assert r["events"] == 0
    assert r["identical"] is True
    assert sessions_entry(r)["rows"] == 0


def test_rebuild_check_fails_on_a_tampered_table_and_changes_nothing(db_path):
    with ctxdb.open(db_path) as db:
        a, b, c = populate(db)
        events = len(list(db.export()))
    con = sqlite3.connect(db_path)
    with con:  # the sessions table has no triggers
        con.execute("UPDATE sessions SET agent_id='forged' WHERE id=?", (b,))
    con.close()

    with ctxdb.open(db_path) as db:
        assert db.session(b)["agent_id"] == "forged"
        with pytest.raises(ctxdb.CheckFailed) as e:
            db.rebuild(check=True)
        assert e.value.code == _capi.CHECK_FAILED
        assert e.value.code_name == "CTXDB_CHECK_FAILED"
        assert db.session(b)["agent_id"] == "forged"  # nothing changed

        r = db.rebuild()  # without the check: the log wins
        assert r["identical"] is False
        assert r["events"] == events
        t = sessions_entry(r)
        assert t["rows"] == 3
        assert t["before"] != t["after"]
        assert db.session(b)["agent_id"] == "agent-b"
        assert db.session(a)["agent_id"] == "agent-a"
        assert db.session(a)["meta"]["model"] == "m-1"

        # Rebuilt tables now match the log.
        again = db.rebuild(check=True)
        assert again["identical"] is True
        assert sessions_entry(again)["before"] == t["after"]
        assert db.verify()["ok"] is True


def test_rebuild_keeps_the_search_index_unless_asked(db):
    populate(db)
    assert db.search("second")["hits"]
    r = db.rebuild(check=True)
    assert r["kept"] == ["search_words", "search_grams", "search_mark"]
    assert not [t for t in r["tables"] if t["table"].startswith("search_")]
    assert len(db.search("second")["hits"]) == 1
    full = db.rebuild(check=True, search=True)
    assert full["kept"] == []
    words = [t for t in full["tables"] if t["table"] == "search_words"]
    assert len(words) == 1 and words[0]["before"] == words[0]["after"]
    assert len(db.search("second")["hits"]) == 1


def test_rebuild_is_one_call_with_the_check_option(db, sid, monkeypatch):
    calls = []
    real = _capi.ctxdb_rebuild

    def wrapper(ptr, options, n, out, out_len):
        calls.append(None if options is None else options[:n])
        return real(ptr, options, n, out, out_len)

    monkeypatch.setattr(_capi, "ctxdb_rebuild", wrapper)
    db.rebuild()
    db.rebuild(check=True)
    db.rebuild(search=True)
    db.rebuild(check=True, search=True)
    assert calls == [None, b'{"check":true}', b'{"search":true}',
                     b'{"check":true,"search":true}']


@pytest.mark.parametrize("value", [None, 1, 0, "true", b"", {"check": True}])
def test_rebuild_wrong_types_raise_type_error(db, sid, value):
    with pytest.raises(TypeError):
        db.rebuild(value)
    with pytest.raises(TypeError):
        db.rebuild(check=value)
    with pytest.raises(TypeError):
        db.rebuild(search=value)


def test_rebuild_on_a_closed_database_is_misuse(db):
    db.close()
    for call in (db.rebuild, lambda: db.rebuild(check=True)):
        with pytest.raises(ctxdb.Misuse) as e:
            call()
        assert e.value.code == _capi.MISUSE
