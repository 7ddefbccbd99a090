"""Tamper evidence beyond the chain: verify's artifact check and anchors
(ctxdb_verify_with, ctxdb_anchor)."""
import shutil
import sqlite3

import pytest

import ctxdb


def note(text):
    return {"type": "Note", "actor": "agent", "payload": {"text": text}}


def test_verify_checks_artifacts_quick_and_full(db):
    art = db.put_artifact(b"line\n" * 200000)["id"]
    quick = db.verify()
    assert quick["ok"] is True
    assert quick["artifacts"]["mode"] == "quick"
    assert quick["artifacts"]["artifacts"] == 1
    assert quick["artifacts"]["chunks"] >= 4
    full = db.verify(artifacts="full")
    assert full["artifacts"]["mode"] == "full"
    assert full["artifacts"]["chunks"] == quick["artifacts"]["chunks"]
    assert "artifacts" not in db.verify(artifacts="none")
    with pytest.raises(ctxdb.InvalidInput, match="artifacts"):
        db.verify(artifacts="everything")
    assert art.startswith("art_")


def test_a_zeroed_chunk_fails_verify_and_rebuild_check(db_path):
    with ctxdb.open(db_path) as db:
        art = db.put_artifact(b"line\n" * 200000)["id"]
    con = sqlite3.connect(db_path)
    con.executescript("""
        DROP TRIGGER artifact_chunks_no_update;
        UPDATE artifact_chunks SET data=zeroblob(length(data)) WHERE idx=1;
    """)
    con.close()
    with ctxdb.open(db_path) as db:
        r = db.verify()
        assert r["ok"] is False
        assert r["artifacts"]["first_broken"] == {
            "artifact_id": art, "chunk": 1,
            "problem": f"chunk 1 of artifact {art} does not match its SHA-256"}
        with pytest.raises(ctxdb.CheckFailed, match="chunk 1 of artifact"):
            db.rebuild(check=True)


def test_an_anchor_is_extended_by_appends_and_broken_by_a_cut_tail(db_path, tmp_path):
    with ctxdb.open(db_path) as db:
        sid = db.create_session(agent_id="a")["id"]
        db.append_many(sid, [note(str(i)) for i in range(3)])
        anchor = db.anchor()
        assert anchor["format"] == "ctxdb.anchor.v1"
        assert anchor["events"] == 4
        assert anchor["sessions"] == 1
        assert anchor["heads"][0]["session_id"] == sid
        assert anchor["heads"][0]["seq"] == 4
        assert len(anchor["root"]) == 64
        assert db.anchor() == anchor  # stable
        db.append(sid, note("later"))
        r = db.verify(anchor=anchor)
        assert r["ok"] is True
        assert r["anchor"] == {"ok": True, "events": 4}
        assert db.verify(sid, anchor=anchor)["anchor"]["ok"] is True
    cut = tmp_path / "cut.ctxdb"
    shutil.copy(db_path, cut)
    con = sqlite3.connect(cut)
    con.executescript("""
        DROP TRIGGER events_no_delete;
        DELETE FROM events WHERE seq >= 4;
        UPDATE chains SET last_seq=3,
            last_hash=(SELECT hash FROM events e WHERE e.session_no=chains.session_no AND e.seq=3);
    """)
    con.close()
    with ctxdb.open(cut) as db:
        assert db.verify()["ok"] is True  # the chain alone is fooled
        r = db.verify(anchor=anchor)
        assert r["ok"] is False
        assert r["anchor"]["ok"] is False
        assert "seq 4, is missing" in r["anchor"]["problem"]


def test_a_malformed_anchor_is_invalid_input(db):
    db.create_session(agent_id="a")
    anchor = db.anchor()
    with pytest.raises(ctxdb.InvalidInput, match="anchor"):
        db.verify(anchor={"format": "ctxdb.anchor.v1"})
    with pytest.raises(ctxdb.InvalidInput, match="root"):
        db.verify(anchor=dict(anchor, root="xyz"))
    with pytest.raises(TypeError):
        db.verify(anchor=object())
