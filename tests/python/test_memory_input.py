"""The memory methods given arguments of the wrong type or range: each is
refused by the binding, naming it, before anything reaches the engine.
Each case was a defect a review found (session 26)."""
import pytest

import ctxdb
import ctxdb._capi

T0 = 1_700_000_000_000


@pytest.fixture
def mdb(db):
    db.create_session({"id": "s", "payload": {"agent_id": "a"}})
    db.append("s", type="UserPromptSubmitted", actor="user", id="e1", ts=T0,
              payload={"text": "remember"})
    db.write_memory("s", memory_id="m1", scope="session", content="v1",
                    source_refs=["e1"], ts=T0)
    db.update_memory("m1", content="v2", source_refs=["e1"], ts=T0 + 1)
    return db


def test_memories_all_versions_must_be_a_bool(mdb):
    # As forget_memory(purge=...) does (any truthy value listed every version).
    with pytest.raises(TypeError):
        mdb.memories(all_versions="false")
    with pytest.raises(TypeError):
        mdb.memories(all_versions=1)
    assert sorted(m["version"] for m in mdb.memories(all_versions=True)) == [1, 2]
    assert [m["version"] for m in mdb.memories()] == [2]


@pytest.mark.parametrize("key", ["limit", "as_of"])
def test_memories_ints_are_checked_like_search(mdb, key):
    # As search(limit=...) does (it came back as INVALID_JSON naming nothing).
    with pytest.raises(ValueError, match=key):
        mdb.memories(**{key: 2 ** 70})


def test_memory_id_with_a_nul_byte_is_named_in_the_error(mdb):
    # An id with a NUL byte is refused, naming it: the message used to be
    # cut at the NUL, naming an existing memory ("memory 'm1").
    with pytest.raises(ctxdb.InvalidInput, match="NUL") as info:
        mdb.memory(b"m1\0junk")
    assert info.value.code == ctxdb._capi.INVALID_ARG
    with pytest.raises(ctxdb.InvalidInput, match="NUL"):
        mdb.forget_memory("m1\0junk")
    assert mdb.memory("m1")["status"] == "current"


@pytest.mark.parametrize("scopes", ["session", {"scope": "session", "id": "s"}])
def test_retrieve_memories_scopes_not_a_list_is_a_type_error(mdb, scopes):
    # A str or a dict was iterated a character or a key at a time.
    with pytest.raises(TypeError):
        mdb.retrieve_memories("v2", scopes)


def test_retrieve_memories_scope_forms(mdb):
    # ("global",) is the global scope (it raised IndexError); a pair, a dict
    # and a (scope, None) pair read as memory_query.schema.json has them.
    assert mdb.retrieve_memories("v2", [("global",)])["memories"] == []
    for scopes in ([("session", "s")], [["session", "s"]], [{"scope": "session", "id": "s"}]):
        hits = mdb.retrieve_memories("v2", scopes, record_usage=False)["memories"]
        assert [m["memory_id"] for m in hits] == ["m1"]
    with pytest.raises(TypeError):
        mdb.retrieve_memories("v2", [("session", "s", "x")])
    with pytest.raises(TypeError):
        mdb.retrieve_memories("v2", [42])


def test_forget_memory_takes_purge_not_mode(mdb):
    # mode= in the options overrode purge= without a word.
    with pytest.raises(TypeError, match="purge"):
        mdb.forget_memory("m1", purge=True, mode="tombstone")
    assert mdb.memory("m1")["status"] == "current"
