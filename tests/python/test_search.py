"""Session search (ctxdb_search) through the Pythonic layer."""
import pytest

import ctxdb
import ctxdb._capi
from conftest import prompt


@pytest.fixture
def sessions(db):
    db.create_session({"id": "s", "payload": {"agent_id": "a"}})
    db.create_session({"id": "t", "payload": {"agent_id": "a"}})
    first = db.append("s", prompt("fix the reconnect in src/net/socket.ts"))
    db.append("s", prompt("数据库连接错误，请检查配置"))
    db.append("t", prompt("reconnect later", ts=5000))
    return first


def test_words_substrings_and_cjk(db, sessions):
    r = db.search("reconnect")
    assert r["syntax"] == "plain"
    assert {h["session_id"] for h in r["hits"]} == {"s", "t"}
    assert all("«reconnect»" in h["snippet"] for h in r["hits"])
    assert all(h["match"] == "words" and h["role"] == "user" for h in r["hits"])
    hit = db.search("net/sock")["hits"][0]
    assert (hit["event_id"], hit["match"]) == (sessions["id"], "substring")
    assert db.search("连接错误")["hits"][0]["snippet"] == "数据库«连接错误»，请检查配置"
    assert db.search("错误")["hits"][0]["match"] == "words"  # each CJK character is a word
    assert db.search("错误 OR nothing")["hits"][0]["snippet"] == "数据库连接«错误»，请检查配置"
    assert db.search(b"reconnect")["hits"]  # bytes are UTF-8


def test_filters(db, sessions):
    assert [h["session_id"] for h in db.search("reconnect", session_id="t")["hits"]] == ["t"]
    assert db.search("reconnect", role="tool")["hits"] == []
    assert len(db.search("reconnect", type="UserPromptSubmitted")["hits"]) == 2
    assert [h["ts"] for h in db.search("reconnect", since=4000, until=6000)["hits"]] == [5000]
    assert len(db.search("reconnect", limit=1)["hits"]) == 1
    assert db.search("reconnect", session_id="s", branch_id="main")["hits"][0]["event_id"] == \
        sessions["id"]


def test_sensitive_events_only_when_allowed(db, sessions):
    hidden = db.append("t", prompt("reconnect with the vault token",
                                   visibility={"level": "secret"}))
    shown = {h["event_id"] for h in db.search("reconnect")["hits"]}
    assert hidden["id"] not in shown and len(shown) == 2
    allowed = db.search("reconnect", allow_sensitive=True)["hits"]
    assert {h["event_id"] for h in allowed} == shown | {hidden["id"]}
    assert db.search("vault")["hits"] == []
    with pytest.raises(TypeError):
        db.search("x", allow_sensitive=1)


def test_plain_words_when_not_fts_syntax(db, sessions):
    assert db.search('"unbalanced (')["syntax"] == "plain"
    assert db.search("reconnect OR nothing")["syntax"] == "fts"


def test_errors(db, sessions):
    with pytest.raises(ctxdb.InvalidInput) as e:
        db.search("")
    assert e.value.code == ctxdb._capi.INVALID_ARG
    with pytest.raises(ctxdb.InvalidInput):
        db.search("x", limit=0)
    with pytest.raises(ctxdb.InvalidInput):
        db.search("x", role="robot")
    with pytest.raises(ctxdb.NotFound):
        db.search("x", session_id="nope")
    with pytest.raises(ctxdb.NotFound):
        db.search("x", session_id="s", branch_id="nope")
    with pytest.raises(ctxdb.InvalidInput) as e:
        db.search(b"\xff\xfe")
    assert e.value.code == ctxdb._capi.INVALID_UTF8
    with pytest.raises(TypeError):
        db.search(42)
    with pytest.raises(TypeError):
        db.search("x", role=1)


def test_rebuild_check_keeps_search(db, sessions):
    before = db.search("reconnect")
    assert db.rebuild(check=True)["identical"]
    assert db.search("reconnect") == before


def test_snippets_are_redacted(db, sid):
    """A secret the compiler redacts shows in no snippet, only its marker."""
    key = "sk-ant-api03-GA3cCcYseu52C5CdYP2hMqBgNjjNMu1GqbeB6veWzSmA3y-nXL-cPZKcuz"
    db.append(sid, prompt(f"deploy with {key} today"))
    snippet = db.search("deploy")["hits"][0]["snippet"]
    assert "[REDACTED:anthropic_api_key]" in snippet
    assert "GA3cCc" not in snippet and "cPZKcuz" not in snippet
    assert "«deploy»" in snippet
