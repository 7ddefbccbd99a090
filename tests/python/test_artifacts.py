"""The artifact store through the Pythonic layer."""
import pytest

import ctxdb

LOG = b"one\ntwo ERROR here\nthree\n"
UNKNOWN = "art_" + "0" * 64


@pytest.fixture
def art(db):
    db.create_session({"id": "ses_a", "event_id": "a0", "payload": {"agent_id": "a"}})
    db.append("ses_a", type="Note", actor="a", id="a1", payload={})
    return db.put_artifact(LOG, kind="command_log", name="b.log", mime="text/plain",
                           event_id="a1")


def test_put_returns_the_artifact(db, art):
    assert art["id"].startswith("art_") and len(art["id"]) == 68
    assert (art["raw_size"], art["line_count"], art["kind"]) == (len(LOG), 3, "command_log")
    assert (art["name"], art["mime"]) == ("b.log", "text/plain")
    assert art["refs"] == [{"event_id": "a1", "role": "output", "session_id": "ses_a"}]
    again = db.put_artifact(LOG)  # the same bytes: the same artifact
    assert again["id"] == art["id"] and again["kind"] == "command_log"
    assert db.put_artifact("one\ntwo ERROR here\nthree\n")["id"] == art["id"]  # str as UTF-8
    assert db.put_artifact(b"")["raw_size"] == 0


def test_read_info_list(db, art):
    aid = art["id"]
    assert db.read_artifact(aid) == LOG
    assert db.read_artifact(aid, 4, 3) == b"two"
    assert db.read_artifact(aid, offset=4) == LOG[4:]
    assert db.read_artifact(aid, 4, 10**6) == LOG[4:]
    assert db.artifact(aid) == art
    assert [a["id"] for a in db.artifacts()] == [aid]
    assert [a["id"] for a in db.artifacts("ses_a")] == [aid]
    other = db.put_artifact(b"\x00\xffbinary")
    assert db.read_artifact(other["id"]) == b"\x00\xffbinary"
    assert [a["id"] for a in db.artifacts()] == [aid, other["id"]]
    assert [a["id"] for a in db.artifacts("ses_a")] == [aid]


def test_lines_preview_search(db, art):
    aid = art["id"]
    assert db.artifact_lines(aid, 2, 1) == "two ERROR here\n"
    assert db.artifact_lines(aid, 2) == "two ERROR here\nthree\n"
    p = db.artifact_preview(aid, "tail", lines=1)
    assert (p["text"], p["omitted_lines"]) == ("three\n", 2)
    assert db.artifact_preview(aid, "head", lines=1)["text"] == "one\n"
    assert db.artifact_preview(aid)["text"] == LOG.decode()
    r = db.artifact_search(aid, "error", before=1, ignore_case=True)
    assert not r["truncated"]
    [m] = r["matches"]
    assert (m["line"], m["column"], m["length"], m["text"]) == (2, 4, 5, "two ERROR here")
    assert m["before"] == [{"line": 1, "text": "one"}]
    assert db.artifact_search(aid, "error")["matches"] == []
    assert db.artifact_search(aid, "e", max_matches=1)["truncated"]


def test_bad_input(db, art):
    aid = art["id"]
    with pytest.raises(ctxdb.NotFound, match=UNKNOWN):
        db.artifact(UNKNOWN)
    with pytest.raises(ctxdb.NotFound):
        db.read_artifact(UNKNOWN)
    with pytest.raises(ctxdb.NotFound, match="ses_nope"):
        db.artifacts("ses_nope")
    with pytest.raises(ctxdb.InvalidInput, match="art_nope"):
        db.artifact("art_nope")
    with pytest.raises(ctxdb.InvalidInput, match="kind"):
        db.put_artifact(b"x", kind="nope")
    with pytest.raises(TypeError):
        db.put_artifact(b"x", kind=7)
    with pytest.raises(TypeError):
        db.put_artifact(12)
    with pytest.raises(ctxdb.InvalidInput, match="range"):
        db.read_artifact(aid, 1000)
    with pytest.raises(ctxdb.InvalidInput, match="length"):
        db.read_artifact(aid, 0, -2)
    with pytest.raises(ctxdb.InvalidInput, match="line range"):
        db.artifact_lines(aid, 0)
    with pytest.raises(ctxdb.InvalidInput, match="mode"):
        db.artifact_preview(aid, "middle")
    with pytest.raises(ctxdb.InvalidInput, match="regular expression"):
        db.artifact_search(aid, "(unclosed")
    with pytest.raises(ctxdb.InvalidInput, match="before"):
        db.artifact_search(aid, "a", before=-1)
    with pytest.raises(ctxdb.InvalidInput):
        db.artifact_search(aid, b"\xff")
    assert [a["id"] for a in db.artifacts()] == [aid]  # nothing was stored
