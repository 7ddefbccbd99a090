"""The views of a branch through the Pythonic layer: messages, tool_calls,
files."""
import pytest

import ctxdb
from ctxdb import _capi
from conftest import prompt


@pytest.fixture
def work(db):
    """ses_w: a prompt, an assistant message making two tool calls, c1's
    result, a read and a write of a.py on main; the what-if "alt" forks at
    c1's result, where c2 fails and b.py is read."""
    db.create_session({"id": "ses_w", "event_id": "w0", "payload": {"agent_id": "a"}})
    db.append_many("ses_w", [
        prompt("fix it", id="w1"),
        {"type": "AssistantMessageCreated", "actor": "assistant", "id": "w2",
         "payload": {"content": [
             {"type": "text", "text": "Reading."},
             {"type": "tool_call", "id": "c1", "name": "read", "args": {"path": "a.py"}},
             {"type": "tool_call", "id": "c2", "name": "bash", "args": {"cmd": "ls"}}]}},
        {"type": "ToolCallFinished", "actor": "tool", "id": "w3",
         "payload": {"tool_call_id": "c1", "output": "x = 1", "duration_ms": 7,
                     "exit_code": 0}},
        {"type": "FileRead", "actor": "host", "id": "w4", "payload": {"path": "a.py"}},
        {"type": "FileWritten", "actor": "host", "id": "w5",
         "payload": {"path": "a.py", "change_summary": "fix x", "artifact_id": "art_1"}},
    ])
    db.fork("ses_w", "w3", kind="what_if", name="alt", id="alt1")
    db.append_many("ses_w", [
        {"type": "ToolCallFailed", "actor": "tool", "id": "a1", "branch_id": "alt",
         "payload": {"tool_call_id": "c2", "error": "boom"}},
        {"type": "FileRead", "actor": "host", "id": "a2", "branch_id": "alt",
         "payload": {"path": "b.py"}},
    ])
    return "ses_w"


def test_messages(db, work):
    m = db.messages(work)
    assert [x["role"] for x in m] == ["user", "assistant", "tool"]
    assert [x["event_id"] for x in m] == ["w1", "w2", "w3"]
    assert m[0]["blocks"] == [{"type": "text", "text": "fix it"}]
    assert m[0]["branch_id"] == "w0" and m[0]["seq"] == 2
    assert m[0]["tokens"] > 0 and m[0]["token_counter"]
    assert m[1]["blocks"][1] == {"type": "tool_call", "id": "c1", "name": "read",
                                 "args": {"path": "a.py"}}
    assert m[2]["blocks"][0]["type"] == "tool_result"
    assert m[2]["blocks"][0]["tool_call_id"] == "c1"
    alt = db.messages(work, "alt")
    assert [x["event_id"] for x in alt] == ["w1", "w2", "w3", "a1"]
    assert alt[3]["blocks"][0]["status"] == "error"
    assert db.messages(work, b"alt1") == alt
    assert db.messages(work, "main") == m


def test_tool_calls(db, work):
    c1, c2 = db.tool_calls(work)
    assert c1["call_id"] == "c1" and c1["name"] == "read" and c1["args"] == {"path": "a.py"}
    assert c1["event_id"] == "w2" and c1["status"] == "success"
    assert c1["result"] == {"event_id": "w3", "seq": 4, "branch_id": "w0",
                            "artifact_id": None, "error": None, "duration_ms": 7,
                            "exit_code": 0}
    assert c2["status"] == "pending" and c2["result"] is None
    assert [c["status"] for c in db.tool_calls(work, "alt")] == ["success", "error"]
    assert db.tool_calls(work, "alt")[1]["result"]["error"] == "boom"


def test_files(db, work):
    [a] = db.files(work)
    assert a["path"] == "a.py" and a["reads"] == 1 and a["writes"] == 1
    assert a["last_read"]["event_id"] == "w4"
    assert a["last_write"] == {"event_id": "w5", "seq": 6, "branch_id": "w0", "op": "write"}
    assert a["changes"] == [{"event_id": "w5", "seq": 6, "op": "write",
                             "change_summary": "fix x", "artifact_id": "art_1"}]
    [b] = db.files(work, "alt")
    assert b["path"] == "b.py" and b["last_write"] is None and b["changes"] == []


def test_an_empty_session(db):
    s = db.create_session(agent_id="a")["id"]
    assert db.messages(s) == [] and db.tool_calls(s) == [] and db.files(s) == []


VIEWS = ["messages", "tool_calls", "files"]


@pytest.mark.parametrize("view", VIEWS)
def test_bad_input(db, work, view):
    call = getattr(db, view)
    before = list(db.export(raw=True))
    for args in (("ses_nope",), (work, "nope"), (work, "w1")):
        with pytest.raises(ctxdb.NotFound) as e:
            call(*args)
        assert e.value.code == _capi.NOT_FOUND
    with pytest.raises(ctxdb.NotFound, match="ses_nope"):
        call("ses_nope", "alt")
    with pytest.raises(ctxdb.InvalidInput, match="branch") as e:
        call(work, "")
    assert e.value.code == _capi.INVALID_ARG
    with pytest.raises(ctxdb.InvalidInput, match="session_id"):
        call("")
    with pytest.raises(ctxdb.InvalidInput) as e:
        call(work, b"\xff")
    assert e.value.code == _capi.INVALID_UTF8
    with pytest.raises(ctxdb.InvalidInput) as e:
        call(b"ses_\xff")
    assert e.value.code == _capi.INVALID_UTF8
    with pytest.raises(ValueError):
        call(work, "\ud800")
    with pytest.raises(TypeError):
        call(work, 7)
    with pytest.raises(TypeError):
        call(None)
    # A name two branches share no longer picks one; their ids still do.
    db.fork(work, "w1", name="dup", id="d1")
    db.fork(work, "w2", name="dup", id="d2")
    with pytest.raises(ctxdb.InvalidInput, match="dup") as e:
        call(work, "dup")
    assert e.value.code == _capi.INVALID_ARG
    call(work, "d2")
    assert list(db.export(raw=True))[:len(before)] == before


def test_closed_database(db_path):
    db = ctxdb.open(db_path)
    db.create_session({"id": "s", "event_id": "e0", "payload": {"agent_id": "a"}})
    db.close()
    for view in VIEWS:
        with pytest.raises(ctxdb.Misuse):
            getattr(db, view)("s")
        with pytest.raises(ctxdb.Misuse):
            getattr(db, view)("s", "main")
