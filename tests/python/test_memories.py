"""Memories through the Pythonic layer: write, update (as-of history),
retrieval (scopes, CJK, FTS syntax never an error), forget and purge
(verify stays green), promote, and bad input naming the field."""
import pytest

import ctxdb

T0 = 1_700_000_000_000
DAY = 86_400_000
P1 = [("project", "p1")]


@pytest.fixture
def mdb(db):
    db.create_session({"id": "s", "payload": {"agent_id": "a"}})
    db.append("s", type="UserPromptSubmitted", actor="user", id="e1", ts=T0,
              payload={"text": "remember"})
    return db


def put(db, mid, content, **more):
    fields = dict(memory_id=mid, scope="project", scope_id="p1", content=content,
                  source_refs=["e1"], update_policy="manual", ts=T0)
    fields.update(more)
    return db.write_memory("s", **fields)


def ids(result):
    return [m["memory_id"] for m in result["memories"]]


def test_write_get_list(mdb):
    m = put(mdb, "m1", "use pnpm for installs", kind="preference", keywords=["node"])
    assert (m["memory_id"], m["version"], m["kind"], m["status"]) == ("m1", 1, "preference",
                                                                       "current")
    assert m["source_refs"] == ["e1"] and m["keywords"] == ["node"]
    assert mdb.memory("m1") == m
    assert [x["memory_id"] for x in mdb.memories()] == ["m1"]
    assert mdb.memories(scope="user") == []


def test_update_keeps_history_as_of(mdb):
    put(mdb, "m1", "API v1")
    v2 = mdb.update_memory("m1", content="API v2", source_refs=["e1"], ts=T0 + 1000)
    assert v2["version"] == 2
    assert [m["content"] for m in mdb.memories(as_of=T0 + 500)] == ["API v1"]
    assert [m["content"] for m in mdb.memories(as_of=T0 + 1500)] == ["API v2"]
    assert [m["status"] for m in mdb.memories(all_versions=True)] == ["superseded", "current"]


def test_retrieve_scopes_cjk_and_fts(mdb):
    put(mdb, "m1", "deploy with the blue pipeline")
    put(mdb, "m2", "数据库迁移必须先备份")
    mdb.write_memory("s", memory_id="o1", scope="project", scope_id="p2",
                     content="deploy with the green pipeline", source_refs=["e1"],
                     ttl_ms=DAY, ts=T0)
    now = T0 + 1000
    assert ids(mdb.retrieve_memories("deploy pipeline", P1, now=now)) == ["m1"]
    assert ids(mdb.retrieve_memories("deploy", [("project", "p2")], now=now)) == ["o1"]
    assert ids(mdb.retrieve_memories("备份", P1, now=now)) == ["m2"]
    r = mdb.retrieve_memories("deploy AND (", P1, now=now, match="fts")
    assert r["fell_back"] is True and ids(r) == ["m1"]
    assert ids(mdb.retrieve_memories("deploy", [("project", "p2")], now=T0 + 2 * DAY)) == []
    top = mdb.retrieve_memories({"query": "deploy", "scopes": [{"scope": "project", "id": "p1"}],
                                 "now": now})["memories"][0]
    assert top["source_refs"] == ["e1"] and top["tokens"] > 0 and 0 <= top["score"] <= 1
    assert mdb.memory("m1")["use_count"] == 3


def test_forget_and_purge(mdb):
    put(mdb, "m1", "my pin is 1234")
    put(mdb, "m2", "keep me")
    assert mdb.forget_memory("m2", reason="done")["mode"] == "tombstone"
    assert mdb.memory("m2")["content"] is None
    r = mdb.forget_memory("m1", purge=True)
    assert r["mode"] == "purge" and len(r["purged_event_ids"]) == 1
    assert all("1234" not in str(e["payload"]) for e in mdb.export())
    report = mdb.verify()
    assert report["ok"] and report["purged"][0]["purged_by"] == r["event_id"]
    with pytest.raises(ctxdb.NotFound):
        mdb.memory("m1")
    with pytest.raises(ctxdb.Conflict):
        mdb.forget_memory("m2")
    assert mdb.rebuild(check=True)["identical"]


def test_promote_all_or_nothing(mdb):
    with pytest.raises(ctxdb.InvalidInput, match="invariant 11"):
        mdb.promote_memories("s", [
            {"scope": "session", "content": "a", "source_refs": ["e1"]},
            {"scope": "project", "scope_id": "p", "content": "b", "source_refs": ["e1"]}])
    assert mdb.memories() == []
    written = mdb.promote_memories("s", [{"scope": "session", "content": "a",
                                          "source_refs": ["e1"]}])
    assert written[0]["scope_id"] == "s"


@pytest.mark.parametrize("fields, field", [
    (dict(scope="session", content="x"), "source_refs"),
    (dict(scope="session", content="x", source_refs=[]), "source_refs"),
    (dict(content="x", source_refs=["e1"]), "scope"),
    (dict(scope="team", scope_id="t", content="x", source_refs=["e1"]), "scope"),
    (dict(scope="session", content="x", source_refs=["e1"], confidence=1.5), "confidence"),
    (dict(scope="project", scope_id="p", content="x", source_refs=["e1"]), "update_policy"),
    (dict(scope="project", scope_id="p", content="x", source_refs=["e1"], expires_at=1, ts=5),
     "expires_at"),
])
def test_bad_writes_name_the_field(mdb, fields, field):
    before = list(mdb.export())
    with pytest.raises(ctxdb.InvalidInput, match=field):
        mdb.write_memory("s", **fields)
    assert list(mdb.export()) == before


def test_bad_arguments(mdb):
    with pytest.raises(ctxdb.NotFound):
        mdb.write_memory("s", scope="session", content="x", source_refs=["nope"])
    with pytest.raises(ctxdb.NotFound):
        mdb.memory("nope")
    with pytest.raises(ctxdb.NotFound):
        mdb.write_memory("nope", scope="session", content="x", source_refs=["e1"])
    with pytest.raises(TypeError):
        mdb.memory(7)
    with pytest.raises(TypeError):
        mdb.forget_memory("m1", purge="yes")
    with pytest.raises(ctxdb.InvalidInput):
        mdb.retrieve_memories("x", [("project", None)])


def test_optimize_merges_the_indexes_and_changes_no_answer(mdb, db_path):
    for i in range(10):  # a transaction each: a segment each
        put(mdb, f"o{i}", f"the ledger audit runs on night {i}", priority=9 * i)
    query = dict(scopes=P1, now=T0 + DAY, limit=20, record_usage=False)
    before = mdb.retrieve_memories("ledger audit", **query)
    report = mdb.optimize()
    assert [x["index"] for x in report["indexes"]] == ["memory_fts", "search_words",
                                                       "search_grams"]
    memory_fts = report["indexes"][0]
    assert memory_fts["segments_before"] > 1
    assert memory_fts["segments_after"] == 1 and memory_fts["pages"] >= 1
    assert mdb.retrieve_memories("ledger audit", **query) == before
    assert mdb.optimize()["indexes"][0]["segments_before"] == 1
    with ctxdb.open(db_path, read_only=True) as ro:
        with pytest.raises(ctxdb.ReadOnly, match="read-only"):
            ro.optimize()
    mdb.close()
    with pytest.raises(ctxdb.Misuse):
        mdb.optimize()


def test_retrieved_content_is_redacted(mdb):
    """Retrieval returns content as a compiled bundle holds it; get() as stored."""
    key = "sk-ant-api03-GA3cCcYseu52C5CdYP2hMqBgNjjNMu1GqbeB6veWzSmA3y-nXL-cPZKcuz"
    put(mdb, "k1", f"the deploy token is {key}")
    [m] = mdb.retrieve_memories("deploy token", P1, now=T0 + DAY)["memories"]
    assert m["content"] == "the deploy token is [REDACTED:anthropic_api_key]"
    assert key in mdb.memory("k1")["content"]
