"""The context compiler through the Pythonic layer: compile, bundle_convert
and a host token counter."""
import json
import threading

import pytest

import ctxdb
from ctxdb import _capi
from conftest import prompt


@pytest.fixture
def work(db):
    """ses_c: a prompt, a tool call and its result on main."""
    db.create_session({"id": "ses_c", "event_id": "c0", "payload": {"agent_id": "a"}})
    db.append_many("ses_c", [
        prompt("fix the failing test", id="c1"),
        {"type": "AssistantMessageCreated", "actor": "assistant", "id": "c2", "payload": {
            "content": [{"type": "text", "text": "running it"},
                        {"type": "tool_call", "id": "k1", "name": "bash",
                         "args": {"cmd": "make"}}]}},
        {"type": "ToolCallFinished", "actor": "tool", "id": "c3",
         "payload": {"tool_call_id": "k1", "output": "1 failed"}},
    ])
    return "ses_c"


def request(**extra):
    r = {"session_id": "ses_c", "max_tokens": 4000,
         "instructions": [{"kind": "system", "text": "be brief"}]}
    r.update(extra)
    return r


def test_compile_returns_the_bundle(db, work):
    before = list(db.export(raw=True))
    b = db.compile(request())
    assert b["format"] == "canonical" and b["session_id"] == work
    assert (b["branch_id"], b["leaf_event_id"]) == ("c0", "c3")
    assert b["token_counter"] == "approx-v2"
    ids = [s["id"] for s in b["segments"]]
    assert ids[0] == "instructions:system-0"
    assert {"msg:c1", "msg:c2", "msg:c3"} <= set(ids)
    assert b["budget"]["used"] == sum(s["tokens"] for s in b["segments"])
    assert b["budget"]["used"] + b["budget"]["free"] == 4000
    assert all(s["reason"] and s["sources"] for s in b["segments"])
    assert list(db.export(raw=True)) == before  # a compile writes nothing


def test_request_forms_give_the_same_bytes(db, work):
    text = db.compile(request(), raw=True)
    assert isinstance(text, str)
    assert db.compile(json.dumps(request()), raw=True) == text
    assert db.compile(json.dumps(request()).encode(), raw=True) == text
    assert db.compile(request(max_tokens=1), max_tokens=4000, raw=True) == text
    assert db.compile(raw=True, **request()) == text
    assert json.loads(text) == db.compile(request())


def test_formats_and_conversion(db, work):
    b = db.compile(request())
    chat = db.compile(request(format="openai.chat"))
    assert chat == db.bundle_convert(b, "openai.chat")
    assert chat["messages"][0] == {"role": "system", "content": "be brief"}
    assert any(m.get("tool_call_id") == "k1" for m in chat["messages"])
    anthropic = db.bundle_convert(b, "anthropic.messages")
    assert anthropic["system"][0]["text"] == "be brief"
    responses = db.bundle_convert(json.dumps(b), "openai.responses")
    assert any(i["type"] == "function_call_output" for i in responses["input"])
    gemini = db.compile(request(format="gemini.generate_content"))
    assert gemini == db.bundle_convert(b, "gemini.generate_content")
    assert gemini["systemInstruction"] == {"parts": [{"text": "be brief"}]}
    assert any(p.get("functionResponse", {}).get("id") == "k1"
               for c in gemini["contents"] for p in c["parts"])
    ai = db.bundle_convert(b, "ai.sdk")
    assert ai["messages"][0] == {"role": "system", "content": "be brief"}
    assert any(m["role"] == "tool" and m["content"][0]["toolCallId"] == "k1"
               for m in ai["messages"])
    text = db.compile(request(), raw=True)
    assert db.bundle_convert(text, "canonical", raw=True) == text


def test_branches_leaf_and_record(db, work):
    db.fork(work, "c1", name="alt", id="calt")
    alt = db.compile(request(branch_id="alt"))
    assert alt["branch_id"] == "calt"
    assert "msg:c3" not in [s["id"] for s in alt["segments"]]
    # As of c2 its call k1 is still running: refused unless its result is given.
    with pytest.raises(ctxdb.Conflict, match="'k1'"):
        db.compile(request(leaf_event_id="c2"))
    past = db.compile(request(leaf_event_id="c2",
                              tool_results=[{"tool_call_id": "k1", "output": "ok"}]))
    assert past["leaf_event_id"] == "c2"
    assert past["segments"][-1]["id"] == "result:k1"  # it ends on what the model answers
    n = db.session(work)["event_count"]
    recorded = db.compile(request(record=True))
    assert db.session(work)["event_count"] == n + 1
    built = list(db.events(work))[-1]
    assert built["type"] == "ContextBuilt"
    assert built["payload"]["bundle_hash"] == recorded["hash"]


def test_errors(db, work):
    before = list(db.export(raw=True))
    with pytest.raises(ctxdb.InvalidInput) as e:
        db.compile("{")
    assert e.value.code == _capi.INVALID_JSON
    with pytest.raises(ctxdb.InvalidInput) as e:
        db.compile(b'{"session_id":"ses_\xff","max_tokens":10}')
    assert e.value.code == _capi.INVALID_UTF8
    with pytest.raises(ctxdb.InvalidInput) as e:
        db.compile({"session_id": work})
    assert e.value.code == _capi.INVALID_ARG and "max_tokens" in e.value.message
    with pytest.raises(ctxdb.InvalidInput):
        db.compile(request(branch_id="main", leaf_event_id="c1"))
    with pytest.raises(ctxdb.InvalidInput):
        db.compile(request(policy={"redact": [{"name": "x", "pattern": "("}]}))
    with pytest.raises(ctxdb.NotFound):
        db.compile(request(session_id="ses_nope"))
    with pytest.raises(ctxdb.NotFound):
        db.compile(request(branch_id="nope"))
    with pytest.raises(ctxdb.NotFound):
        db.compile(request(leaf_event_id="evt_nope"))
    with pytest.raises(ctxdb.BudgetExceeded) as e:
        db.compile(request(max_tokens=20, record=True,
                           instructions=[{"kind": "system", "text": "word " * 500}]))
    assert e.value.code == _capi.BUDGET and "only 20 are available" in e.value.message
    with pytest.raises(TypeError):
        db.compile(42)
    with pytest.raises(TypeError):
        db.compile("{}", max_tokens=1)
    with pytest.raises(ctxdb.InvalidInput) as e:
        db.bundle_convert(db.compile(request()), "gopher")
    assert "gopher" in e.value.message
    with pytest.raises(ctxdb.InvalidInput):
        db.bundle_convert({}, "openai.chat")
    with pytest.raises(ctxdb.InvalidInput) as e:
        db.bundle_convert("nope", "openai.chat")
    assert e.value.code == _capi.INVALID_JSON
    assert list(db.export(raw=True)) == before


def test_read_only_handle_compiles_but_does_not_record(db_path, db, work):
    with ctxdb.open(db_path, read_only=True) as ro:
        assert ro.compile(request()) == db.compile(request())
        with pytest.raises(ctxdb.ReadOnly):
            ro.compile(request(record=True))


def test_token_counter(db, work):
    calls = []

    def count_bytes(text):
        calls.append(text)
        return len(text.encode())

    db.set_token_counter("bytes-v1", count_bytes)
    db.append(work, prompt("hello world"))
    last = db.messages(work)[-1]
    assert (last["tokens"], last["token_counter"]) == (11, "bytes-v1")
    assert "hello world" in calls
    b = db.compile(request())
    assert b["token_counter"] == "bytes-v1"
    # Rows counted by approx-v2 were recounted with the host's counter.
    seg = next(s for s in b["segments"] if s["id"] == "msg:c1")
    assert seg["tokens"] >= len("fix the failing test")

    db.set_token_counter(None, None)
    calls.clear()
    db.append(work, prompt("again"))
    assert calls == [] and db.messages(work)[-1]["token_counter"] == "approx-v2"
    assert db.compile(request())["token_counter"] == "approx-v2"


@pytest.mark.parametrize("bad, cls, words", [
    (lambda text: 1 // 0, ZeroDivisionError, "ZeroDivisionError"),
    (lambda text: -1, ValueError, "returned -1"),
    (lambda text: "3", TypeError, "must return an int"),
    (lambda text: True, TypeError, "must return an int"),
])
def test_a_failing_counter_fails_the_call_and_writes_nothing(db, work, bad, cls, words):
    before = list(db.export(raw=True))
    db.set_token_counter("broken", bad)
    with pytest.raises(ctxdb.InternalError) as e:
        db.append(work, prompt("hello"))
    assert e.value.code == _capi.INTERNAL
    assert "broken" in e.value.message and words in e.value.message
    assert isinstance(e.value.__cause__, cls)
    with pytest.raises(ctxdb.InternalError):
        db.append_many(work, [prompt("a"), prompt("b")])
    with pytest.raises(ctxdb.InternalError):
        db.compile(request())
    assert list(db.export(raw=True)) == before
    db.set_token_counter("broken", None)
    db.append(work, prompt("works again"))


def test_a_counter_must_not_use_its_database(db, work):
    def reenter(text):
        db.stats()  # Misuse: the handle is busy with the call that counts
        return 1

    db.set_token_counter("reentrant", reenter)
    with pytest.raises(ctxdb.InternalError) as e:
        db.append(work, prompt("hi"))
    assert isinstance(e.value.__cause__, ctxdb.Misuse)


def test_set_token_counter_arguments(db, work):
    with pytest.raises(TypeError):
        db.set_token_counter("x", 42)
    with pytest.raises(TypeError):
        db.set_token_counter(None, len)
    with pytest.raises(ctxdb.InvalidInput):
        db.set_token_counter("", len)
    with pytest.raises(ctxdb.InvalidInput):
        db.set_token_counter("n" * 101, len)
    db.set_token_counter("n" * 100, len)
    db.close()
    with pytest.raises(ctxdb.Misuse):
        db.set_token_counter("x", len)
    with pytest.raises(ctxdb.Misuse):
        db.compile(request())


def test_counter_with_threads(db, work):
    db.set_token_counter("chars", len)
    errors = []

    def worker(k):
        try:
            for i in range(5):
                db.append(work, prompt(f"thread {k} message {i}"))
                db.compile(request())
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert all(m["token_counter"] == "chars" for m in db.messages(work)[3:])
