"""The session tree through the Pythonic layer: fork, branches, path,
children."""
import pytest

import ctxdb
from ctxdb import _capi
from conftest import prompt


@pytest.fixture
def tree(db):
    """ses_t: t0 (SessionStarted), t1, t2, t3 on main."""
    db.create_session({"id": "ses_t", "event_id": "t0", "payload": {"agent_id": "a"}})
    for i in (1, 2, 3):
        db.append("ses_t", prompt(f"p{i}", id=f"t{i}"))
    return "ses_t"


def ids(events):
    return [e["id"] for e in events]


def test_a_new_session_has_only_main(db, tree):
    [main] = db.branches(tree)
    assert main["id"] == "t0" and main["kind"] == "main" and main["name"] == "main"
    assert main["event_count"] == 4 and main["leaf_event_id"] == "t3"
    assert "parent_branch_id" not in main
    assert ids(db.branch_path(tree)) == ["t0", "t1", "t2", "t3"]
    assert ids(db.branch_path(tree, "main")) == ids(db.branch_path(tree, "t0"))


def test_fork_and_continue_by_name(db, tree):
    b = db.fork(tree, "t1", kind="what_if", name="alt", id="alt1")
    assert b == {"id": "alt1", "session_id": tree, "kind": "what_if", "name": "alt",
                 "parent_branch_id": "t0", "fork_event_id": "t1", "fork_seq": 2,
                 "first_seq": 5, "leaf_event_id": "alt1", "leaf_seq": 5, "event_count": 1}
    assert db.event("alt1")["type"] == "BranchCreated"
    e = db.append(tree, prompt("on alt", id="a1", branch_id="alt"))
    assert e["branch_id"] == "alt1" and e["parent_id"] == "alt1"
    assert ids(db.branch_path(tree, "alt")) == ["t0", "t1", "alt1", "a1"]
    assert ids(db.branch_path(tree, b"alt1")) == ["t0", "t1", "alt1", "a1"]
    assert ids(db.branch_path(tree)) == ["t0", "t1", "t2", "t3"]  # main untouched
    assert [x["id"] for x in db.branches(tree)] == ["t0", "alt1"]
    assert db.branches(tree)[1]["leaf_event_id"] == "a1"


def test_fork_defaults(db, tree):
    b = db.fork(tree, "t3", actor="planner", ts=1234)
    assert b["kind"] == "fork" and "name" not in b
    started = db.event(b["id"])
    assert started["actor"] == "planner" and started["ts"] == 1234


def test_path_raw_and_over_several_pages(db, tree):
    db.fork(tree, "t2", id="w")
    db.append_many(tree, [prompt(f"w{i}", branch_id="w") for i in range(300)])
    rows = list(db.branch_path(tree, "w", raw=True))
    assert len(rows) == 3 + 1 + 300
    assert all(isinstance(r, str) for r in rows)
    seqs = [e["seq"] for e in db.branch_path(tree, "w")]
    assert seqs == sorted(seqs) and seqs[:3] == [1, 2, 3]


def test_children(db, tree):
    db.append(tree, prompt("forks at t1", id="f1", parent_id="t1"))
    db.create_session({"id": "ses_kid", "payload": {
        "agent_id": "sub", "parent_session_id": tree, "spawned_by_event_id": "t1"}})
    c = db.children("t1")
    assert c["event_id"] == "t1"
    assert ids(c["events"]) == ["t2", "f1"]
    assert [s["id"] for s in c["sessions"]] == ["ses_kid"]
    assert c["sessions"][0]["parent_session_id"] == tree
    assert db.children("t3") == {"event_id": "t3", "events": [], "sessions": []}


def test_unknown_ids_are_not_found(db, tree):
    for call in (lambda: db.branches("ses_nope"), lambda: db.branch_path("ses_nope"),
                 lambda: db.branch_path(tree, "nope"), lambda: db.children("evt_nope"),
                 lambda: db.fork("ses_nope", "t1"), lambda: db.fork(tree, "evt_nope")):
        with pytest.raises(ctxdb.NotFound) as e:
            call()
        assert e.value.code == _capi.NOT_FOUND
    with pytest.raises(ctxdb.NotFound, match="nope"):
        db.branch_path(tree, "nope")  # at the call, not while iterating


def test_bad_input(db, tree):
    before = db.branches(tree)
    with pytest.raises(ctxdb.InvalidInput, match="kind") as e:
        db.fork(tree, "t1", kind="sideways")
    assert e.value.code == _capi.INVALID_ARG
    with pytest.raises(ctxdb.InvalidInput, match="name"):
        db.fork(tree, "t1", name="")
    with pytest.raises(TypeError):
        db.fork(tree, 7)
    with pytest.raises(TypeError):
        db.branch_path(tree, 7)
    with pytest.raises(ctxdb.InvalidInput, match="branch"):
        db.branch_path(tree, "")
    with pytest.raises(ctxdb.InvalidInput) as e:
        db.branch_path(tree, b"\xff")
    assert e.value.code == _capi.INVALID_UTF8
    with pytest.raises(ValueError):
        db.branch_path(tree, "\ud800")
    assert db.branches(tree) == before
    # A name two branches share no longer picks one.
    db.fork(tree, "t1", name="dup", id="d1")
    db.fork(tree, "t2", name="dup", id="d2")
    with pytest.raises(ctxdb.InvalidInput, match="dup"):
        db.branch_path(tree, "dup")
    assert ids(db.branch_path(tree, "d2")) == ["t0", "t1", "t2", "d2"]


def test_closed_database(db_path):
    db = ctxdb.open(db_path)
    db.create_session({"id": "s", "event_id": "e0", "payload": {"agent_id": "a"}})
    it = db.branch_path("s")
    db.close()
    for call in (lambda: db.branches("s"), lambda: db.branch_path("s"),
                 lambda: db.children("e0"), lambda: db.fork("s", "e0")):
        with pytest.raises(ctxdb.Misuse):
            call()
    with pytest.raises(ctxdb.Misuse):
        next(it)
