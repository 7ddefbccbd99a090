"""Every buffer from the library is freed exactly once (also on errors),
and many calls do not grow the process."""
import resource

import pytest

import ctxdb
from ctxdb import _capi
from conftest import prompt

OUT_FUNCTIONS = ["ctxdb_session_create", "ctxdb_session_get", "ctxdb_session_list",
                 "ctxdb_append", "ctxdb_append_batch", "ctxdb_event_get",
                 "ctxdb_verify", "ctxdb_rebuild", "ctxdb_import",
                 "ctxdb_messages_list", "ctxdb_tool_calls_list", "ctxdb_files_list",
                 "ctxdb_state_get", "ctxdb_stats_get"]


@pytest.fixture
def ledger(db, monkeypatch):
    """Records every buffer a ctxdb call hands out and every ctxdb_free."""
    log = []
    real_free = _capi.ctxdb_free

    def free(p):
        log.append(("free", p))
        real_free(p)

    monkeypatch.setattr(_capi, "ctxdb_free", free)
    for name in OUT_FUNCTIONS:
        real = getattr(_capi, name)

        def wrapper(*args, _real=real, _name=name):
            rc = _real(*args)
            out = args[-2]._obj.value  # the char** out-parameter (byref)
            if out:
                log.append(("out", out))
            return rc

        monkeypatch.setattr(_capi, name, wrapper)
    return log


def assert_balanced(log):
    """Each buffer handed out is freed exactly once, before the next call."""
    pending = None
    for kind, p in log:
        if kind == "out":
            assert pending is None, "a buffer was not freed before the next call"
            pending = p
        else:
            assert p == pending, "freed something that was not handed out (or twice)"
            pending = None
    assert pending is None, "the last buffer was not freed"


def test_every_buffer_freed_exactly_once(db, ledger):
    s = db.create_session(agent_id="x")["id"]
    e = db.append(s, prompt())
    db.append_many(s, [prompt()] * 3)
    db.session(s)
    db.sessions()
    db.event(e["id"])
    db.verify()
    db.rebuild(check=True)
    db.import_ndjson(db.export(raw=True))
    db.messages(s)
    db.tool_calls(s, "main")
    db.files(s)
    db.state(s)
    db.stats()
    failures = [lambda: db.state(s, at="evt_nope"), lambda: db.stats("ses_nope"),
                lambda: db.messages("ses_nope"), lambda: db.tool_calls(s, "nope"),
                lambda: db.files(s, ""),
                lambda: db.session("ses_nope"), lambda: db.event("evt_nope"),
                lambda: db.append(s, "{bad"), lambda: db.append_many(s, ["{", "}"]),
                lambda: db.create_session(agent_id=1), lambda: db.verify("ses_nope"),
                lambda: db.import_ndjson("{}")]
    for f in failures:
        with pytest.raises(ctxdb.Error):
            f()
    outs = sum(1 for k, _ in ledger if k == "out")
    assert outs == 14  # one buffer per successful call, none from failures
    assert_balanced(ledger)


def test_buffer_freed_when_the_call_reports_an_error(db, monkeypatch):
    """Defensive: an error code with a non-NULL *out still frees it once."""
    sid = db.create_session(agent_id="x")["id"]
    freed = []
    handed = []
    real_get, real_free = _capi.ctxdb_session_get, _capi.ctxdb_free

    def failing_get(*args):
        real_get(*args)
        handed.append(args[-2]._obj.value)
        return _capi.INTERNAL

    monkeypatch.setattr(_capi, "ctxdb_session_get", failing_get)
    monkeypatch.setattr(_capi, "ctxdb_free", lambda p: freed.append(p) or real_free(p))
    with pytest.raises(ctxdb.InternalError):
        db.session(sid)
    assert handed[0] and freed == handed


def maxrss_kib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux


def test_many_calls_do_not_leak(db):
    sid = db.create_session(agent_id="x")["id"]
    big = db.append(sid, prompt("x" * 16384))  # a 16 KiB payload
    eid = big["id"]

    def round_of_calls(n):
        for i in range(n):
            assert len(db.event(eid)["payload"]["text"]) == 16384  # succeeds
            try:
                db.event("evt_missing")                             # fails
            except ctxdb.NotFound:
                pass
            try:
                db.append(sid, b'{"type":"X","actor":"a","payload":{"t":"\xff"}}')
            except ctxdb.InvalidInput:
                pass
            if i % 100 == 0:
                list(db.events(sid))                                # iterator

    round_of_calls(1000)  # warm up allocator and caches
    before = maxrss_kib()
    round_of_calls(7000)  # 21000 calls; a leaked buffer each would be > 110 MiB
    growth = maxrss_kib() - before
    assert growth < 16 * 1024, f"maxrss grew by {growth} KiB"
