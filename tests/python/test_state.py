"""State and stats through the Pythonic layer."""
import pytest

import ctxdb
from ctxdb import _capi
from conftest import prompt


@pytest.fixture
def work(db):
    """ses_s: a prompt, a plan and a fact, a file written on main; the
    branch "alt" forks at the prompt and sets another task."""
    db.create_session({"id": "ses_s", "event_id": "s0", "payload": {"agent_id": "a"}})
    db.append_many("ses_s", [
        prompt("fix it", id="s1"),
        {"type": "StateUpdated", "actor": "agent", "id": "s2", "payload": {"ops": [
            {"op": "set_plan", "steps": ["look", "fix"]},
            {"op": "add_fact", "content": "flaky", "confidence": 0.5}]}},
        {"type": "FileWritten", "actor": "host", "id": "s3", "payload": {"path": "a.c"}},
    ])
    db.fork("ses_s", "s1", name="alt", id="alt1")
    db.append("ses_s", type="StateUpdated", actor="agent", id="a1", branch_id="alt",
              payload={"ops": [{"op": "set_task", "text": "another way"}]})
    return "ses_s"


def test_state_of_main(db, work):
    s = db.state(work)
    assert (s["session_id"], s["branch_id"], s["event_id"], s["seq"]) == (work, "s0", "s3", 4)
    st = s["state"]
    assert st["goal"]["request"] == {"text": "fix it", "event_id": "s1"}
    assert [x["text"] for x in st["plan"]["steps"]] == ["look", "fix"]
    assert st["facts"][0]["content"] == "flaky" and st["facts"][0]["confidence"] == 0.5
    assert [f["path"] for f in st["files"]["modified"]] == ["a.c"]
    assert db.state(work, "main") == s == db.state(work, branch="s0")


def test_state_of_a_branch_and_time_travel(db, work):
    alt = db.state(work, "alt")
    assert (alt["branch_id"], alt["event_id"]) == ("alt1", "a1")
    assert alt["state"]["goal"]["current_task"]["text"] == "another way"
    assert alt["state"]["plan"]["steps"] == []
    then = db.state(work, at="s2")
    assert (then["branch_id"], then["event_id"], then["seq"]) == ("s0", "s2", 3)
    assert then["state"]["files"]["modified"] == []
    assert db.state(work, at="s3") == db.state(work)


def test_stats(db, work):
    one = db.stats(work)
    assert one["session_id"] == work and one["sessions"] == 1 and one["events"] == 6
    assert one["messages"] == {"user": 1, "assistant": 0}
    db.create_session(agent_id="b")
    total = db.stats()
    assert total["session_id"] is None and total["sessions"] == 2 and total["events"] == 7
    assert db.stats(b"ses_s") == one


def test_bad_input(db, work):
    before = list(db.export(raw=True))
    for call in (lambda: db.state("ses_nope"), lambda: db.state(work, "nope"),
                 lambda: db.state(work, at="evt_nope"), lambda: db.stats("ses_nope")):
        with pytest.raises(ctxdb.NotFound) as e:
            call()
        assert e.value.code == _capi.NOT_FOUND
    with pytest.raises(ctxdb.InvalidInput) as e:
        db.state(work, "alt", at="s1")  # not both
    assert e.value.code == _capi.INVALID_ARG
    db.create_session({"id": "ses_o", "event_id": "o0", "payload": {"agent_id": "a"}})
    with pytest.raises(ctxdb.InvalidInput, match="o0"):
        db.state(work, at="o0")  # another session's event
    with pytest.raises(ctxdb.InvalidInput, match="branch_id"):
        db.state(work, "")
    with pytest.raises(ctxdb.InvalidInput, match="session_id"):
        db.stats("")
    with pytest.raises(ctxdb.InvalidInput) as e:
        db.stats(b"\xff")
    assert e.value.code == _capi.INVALID_UTF8
    with pytest.raises(TypeError):
        db.state(work, 7)
    with pytest.raises(TypeError):
        db.state(work, at=b"s1")
    with pytest.raises(TypeError):
        db.stats(7)
    with pytest.raises(ValueError):
        db.state(work, "\ud800")
    db.fork(work, "s1", name="dup", id="d1")
    db.fork(work, "s2", name="dup", id="d2")
    with pytest.raises(ctxdb.InvalidInput, match="dup"):
        db.state(work, "dup")
    assert list(db.export(raw=True))[:len(before)] == before


def test_closed_database(db_path):
    db = ctxdb.open(db_path)
    db.create_session({"id": "s", "event_id": "e0", "payload": {"agent_id": "a"}})
    db.close()
    for call in (lambda: db.state("s"), lambda: db.state("s", at="e0"),
                 lambda: db.stats("s"), lambda: db.stats()):
        with pytest.raises(ctxdb.Misuse):
            call()
