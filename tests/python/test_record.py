"""record_response: a provider's response recorded as an AssistantMessageCreated."""
import json
from pathlib import Path

import pytest

import ctxdb
from ctxdb import _capi

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "responses"


def fixture(name):
    return (FIXTURES / name).read_text(encoding="utf-8")


def test_records_a_chat_completion_dict(db, sid):
    resp = json.loads(fixture("openai_chat_parallel_tools.json"))
    e = db.record_response(sid, resp, "openai.chat")
    assert e["type"] == "AssistantMessageCreated" and e["actor"] == "assistant"
    p = e["payload"]
    assert [b["id"] for b in p["content"]] == ["call_abc123", "call_def456"]
    assert p["content"][0]["args"] == {"location": "Boston, MA"}
    assert p["usage"]["input_tokens"] == 2082 - 1920
    assert p["usage"]["provider_usage"] == resp["usage"]
    assert p["response_id"] == "chatcmpl-abc123" and p["provider"] == "openai"


def test_a_retry_returns_the_stored_event_in_one_call(db, sid, monkeypatch):
    calls = []
    real = _capi.ctxdb_response_record
    monkeypatch.setattr(_capi, "ctxdb_response_record",
                        lambda *a: calls.append(a) or real(*a))
    text = fixture("anthropic_thinking_tools.json")
    first = db.record_response(sid, text, "anthropic.messages")
    again = db.record_response(sid, text.encode(), "anthropic.messages")
    assert first == again and len(calls) == 2
    assert db.session(sid)["event_count"] == 2
    thinking = first["payload"]["content"][0]
    assert thinking["type"] == "thinking" and thinking["provider"] == "anthropic"
    assert thinking["signature"].startswith("EqQB")


def test_records_a_stream_from_lines_or_an_iterable(db, sid):
    lines = fixture("openai_chat_stream_tools.ndjson").splitlines()
    e = db.record_response(sid, (json.loads(l) for l in lines), "openai.chat",
                           stream=True, actor="gpt", latency_ms=12)
    assert e["actor"] == "gpt" and e["payload"]["latency_ms"] == 12
    assert [b["name"] for b in e["payload"]["content"]] == ["get_weather"] * 2
    sse = fixture("anthropic_stream_tool_use_response.sse")
    e2 = db.record_response(sid, sse, "anthropic.messages", stream=True)
    assert e2["payload"]["content"][1]["args"] == {"location": "Paris"}


def test_errors_name_the_field_and_store_nothing(db, sid):
    before = db.session(sid)
    with pytest.raises(ctxdb.InvalidInput, match=r"choices\[0\]\.message"):
        db.record_response(sid, {"id": "x", "choices": [{}]}, "openai.chat")
    with pytest.raises(ctxdb.InvalidInput, match="message_stop"):
        db.record_response(sid, fixture("anthropic_stream_cut.sse"),
                           "anthropic.messages", stream=True)
    with pytest.raises(ctxdb.InvalidInput, match="format"):
        db.record_response(sid, {}, "mistral.chat")
    with pytest.raises(ctxdb.InvalidInput, match="colour"):
        db.record_response(sid, {}, "openai.chat", colour=1)
    with pytest.raises(ctxdb.NotFound):
        db.record_response("nope", fixture("openai_chat_text.json"), "openai.chat")
    with pytest.raises(TypeError):
        db.record_response(sid, 42, "openai.chat")
    assert db.session(sid) == before


def test_other_content_under_the_same_response_id_is_a_conflict(db, sid):
    resp = json.loads(fixture("openai_chat_text.json"))
    db.record_response(sid, resp, "openai.chat")
    resp["choices"][0]["message"]["content"] = "Something else."
    with pytest.raises(ctxdb.Conflict):
        db.record_response(sid, resp, "openai.chat")
