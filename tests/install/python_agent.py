"""An agent loop on an installed ctxdb package, run from outside the source
tree: the user's prompt, a compiled request, the provider's answer with a
tool call recorded, the tool's result, the next request, then the checks.
Prints where the library came from. usage: python_agent.py DB_PATH"""
import sys

import ctxdb
from ctxdb import _capi

path = sys.argv[1]
with ctxdb.open(path) as db:
    sid = db.create_session(agent_id="outside")["id"]
    db.append(sid, type="UserPromptSubmitted", actor="user",
              payload={"text": "what is in README.md?"})
    first = db.compile(session_id=sid, max_tokens=8000, format="openai.chat")
    last = first["messages"][-1]
    assert last["role"] == "user" and "README.md" in str(last["content"]), first
    completion = {
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1700000000,
        "model": "gpt-4o",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": None,
            "tool_calls": [{"id": "call_1", "type": "function", "function": {
                "name": "read_file", "arguments": "{\"path\": \"README.md\"}"}}]}}],
        "usage": {"prompt_tokens": 20, "completion_tokens": 9, "total_tokens": 29},
    }
    db.record_response(sid, completion, "openai.chat")
    db.append(sid, type="ToolCallFinished", actor="tool",
              payload={"tool_call_id": "call_1", "output": "# ctxdb"})
    second = db.compile(session_id=sid, max_tokens=8000, format="openai.chat")
    roles = [m["role"] for m in second["messages"]]
    assert roles[-2:] == ["assistant", "tool"], roles
    assert db.verify()["ok"] is True
    assert db.verify(anchor=db.anchor())["anchor"]["ok"] is True
_capi.load()
print(f"ctxdb {ctxdb.version()} from {_capi.loaded_path()}")
