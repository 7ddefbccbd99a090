"""Compaction through the Python binding: the built-in summarizer, a
Python summarizer, and failures that leave the file as before plus one
CompactionFailed event."""
import json

import pytest

import ctxdb


def _session(db, turns=6):
    db.create_session("s", agent_id="a")
    for i in range(turns):
        db.append("s", {"type": "UserPromptSubmitted", "actor": "user",
                        "payload": {"text": f"turn {i}: fix module {i}"}})
        db.append("s", {"type": "AssistantMessageCreated", "actor": "assistant",
                        "payload": {"content": [{"type": "tool_call", "id": f"c{i}",
                                                 "name": "bash", "args": {"cmd": "pytest"}}]}})
        db.append("s", {"type": "ToolCallFinished", "actor": "tool",
                        "payload": {"tool_call_id": f"c{i}", "output": "ok\n" * 50}})
        db.append("s", {"type": "FileWritten", "actor": "tool",
                        "payload": {"path": f"src/m{i}.py", "change_summary": "edited"}})


def _events(db):
    return [e["type"] for e in db.export()]


POLICY = {"keep_recent_tokens": 200}


def test_builtin_compaction_and_list(tmp_path):
    with ctxdb.open(tmp_path / "c.ctxdb") as db:
        _session(db)
        advice = db.should_compact("s")
        assert advice["level"] == "ok" and advice["should_compact"] is False
        plan = db.plan_compaction("s", POLICY)
        assert plan["status"] == "ready"
        assert any(f["path"] == "src/m0.py" for f in plan["obligations"]["files_modified"])
        assert plan["transcript_info"]["omitted"] is None
        capped = db.plan_compaction("s", dict(POLICY, transcript_max_tokens=30))
        info = capped["transcript_info"]
        assert info["budget"] == 30 and info["omitted"]["entries"] > 0
        assert len(capped["transcript"]) < len(plan["transcript"])
        assert capped["cut"] == plan["cut"]
        result = db.compact("s", POLICY)
        assert result["status"] == "compacted"
        assert result["tokens_after"] < result["tokens_before"]
        assert result["summary"]["provenance"]["summarizer"]["name"] == "ctxdb.extractive"
        listed = db.compactions("s")
        assert [c["event_id"] for c in listed] == [result["event_id"]]
        assert all(c["ok"] for c in listed[0]["checks"])


def _summary_for(plan):
    ob = plan["obligations"]
    return {
        "goal": {"current_task": "finish the modules"},
        "next_steps": ["run the suite"],
        "files": {"modified": [{"path": f["path"]} for f in ob["files_modified"]]},
        "errors": [{"tool_call_id": e["tool_call_id"], "error": e["error"]}
                   for e in ob["tool_errors"]],
        "provenance": {"source_event_ids": [plan["range"]["to_event_id"]],
                       "summarizer": {"name": "py-test", "version": "1"}},
    }


def test_python_summarizer_gets_the_plan(tmp_path):
    with ctxdb.open(tmp_path / "c.ctxdb") as db:
        _session(db)
        seen = []

        def summarize(plan):
            seen.append(plan)
            return _summary_for(plan)

        result = db.compact("s", POLICY, summarizer=summarize)
        assert result["status"] == "compacted"
        assert result["summarizer"]["name"] == "py-test"
        assert "transcript" in seen[0]
        # A summary as JSON text works too, through plan + commit.
        for i in range(6, 10):
            db.append("s", {"type": "UserPromptSubmitted", "actor": "user",
                            "payload": {"text": f"more {i}"}})
        plan = db.plan_compaction("s", {"keep_recent_tokens": 5})
        done = db.commit_compaction("s", plan, json.dumps(_summary_for(plan)))
        assert done["status"] == "compacted"
        assert len(db.compactions("s")) == 2


@pytest.mark.parametrize("summarizer,why", [
    (lambda plan: 1 / 0, "ZeroDivisionError"),
    (lambda plan: "not json", "summary_json"),
    (lambda plan: {}, "current_task"),
    (lambda plan: "", "empty summary"),
])
def test_failed_summarizer_leaves_one_compaction_failed(tmp_path, summarizer, why):
    with ctxdb.open(tmp_path / "c.ctxdb") as db:
        _session(db)
        before = list(db.export(raw=True))
        with pytest.raises(ctxdb.CheckFailed) as info:
            db.compact("s", POLICY, summarizer=summarizer)
        assert info.value.code == 9  # CTXDB_CHECK_FAILED
        assert why in str(info.value)
        after = list(db.export(raw=True))
        assert after[:len(before)] == before
        assert len(after) == len(before) + 1
        assert json.loads(after[-1])["type"] == "CompactionFailed"
        if why == "ZeroDivisionError":
            assert isinstance(info.value.__cause__, ZeroDivisionError)


def test_summarizer_must_not_reenter_the_database(tmp_path):
    with ctxdb.open(tmp_path / "c.ctxdb") as db:
        _session(db)

        def reenter(plan):
            db.state("s")  # the handle is busy with this very call
            return _summary_for(plan)

        with pytest.raises(ctxdb.CheckFailed) as info:
            db.compact("s", POLICY, summarizer=reenter)
        assert isinstance(info.value.__cause__, ctxdb.Misuse)


def test_bad_compaction_input(tmp_path):
    with ctxdb.open(tmp_path / "c.ctxdb") as db:
        _session(db, 2)
        with pytest.raises(ctxdb.InvalidInput):
            db.plan_compaction("s", {"keep": 1})
        with pytest.raises(ctxdb.NotFound):
            db.compact("nope")
        with pytest.raises(TypeError):
            db.compact("s", summarizer=42)
        with pytest.raises(ctxdb.InvalidInput):
            db.commit_compaction("s", "{", {})


def test_summarize_branch(tmp_path):
    with ctxdb.open(tmp_path / "c.ctxdb") as db:
        db.create_session("s", agent_id="a")
        ask = db.append("s", {"type": "UserPromptSubmitted", "actor": "user",
                              "payload": {"text": "make it pass"}})["id"]
        db.append("s", {"type": "FileWritten", "actor": "tool", "payload": {"path": "hack.py"}})
        leaf = db.append("s", {"type": "DecisionRecorded", "actor": "agent",
                               "payload": {"decision": "patch the clock"}})["id"]
        r = db.summarize_branch("s", leaf, ask)
        assert r["common_ancestor_event_id"] == ask
        assert r["branch_id"] != "main"
        assert "patch the clock" in r["text"]
        with pytest.raises(ctxdb.InvalidInput):
            db.summarize_branch("s", ask, leaf)


def test_keyboard_interrupt_in_the_summarizer_propagates(tmp_path):
    with ctxdb.open(tmp_path / "c.ctxdb") as db:
        _session(db)

        def interrupted(plan):
            raise KeyboardInterrupt

        with pytest.raises(KeyboardInterrupt):
            db.compact("s", POLICY, summarizer=interrupted)
        # The attempt is still recorded, and nothing was committed.
        assert _events(db)[-1] == "CompactionFailed"
        assert db.compactions("s") == []
