"""The awaitable variants: the same results as the calls they are named
after, run in a thread while the event loop keeps turning."""
import asyncio
import pytest

import ctxdb


def prompt(text):
    return {"type": "UserPromptSubmitted", "actor": "user", "payload": {"text": text}}


def test_async_variants_give_the_same_results(db):
    sid = db.create_session(agent_id="a")["id"]
    db.append_many(sid, [prompt(f"step {i} of the refactor") for i in range(50)])

    async def main():
        compiled = await db.compile_async(session_id=sid, max_tokens=4000)
        verified, found = await asyncio.gather(db.verify_async(), db.search_async("refactor"))
        return compiled, verified, found

    compiled, verified, found = asyncio.run(main())
    assert compiled == db.compile(session_id=sid, max_tokens=4000)
    assert verified == db.verify()
    assert found == db.search("refactor")
    assert db.rebuild_async.__name__ == "rebuild_async"


def test_the_loop_turns_while_a_call_runs(db):
    sid = db.create_session(agent_id="a")["id"]
    db.append_many(sid, [prompt(f"event {i} " + "x" * 200) for i in range(3000)])
    ticks = []

    async def ticker(done):
        while not done.is_set():
            ticks.append(1)
            await asyncio.sleep(0)

    async def main():
        done = asyncio.Event()
        t = asyncio.create_task(ticker(done))
        await asyncio.sleep(0)
        before = len(ticks)
        r = await db.rebuild_async(check=True)
        during = len(ticks) - before
        done.set()
        await t
        return r, during

    r, during = asyncio.run(main())
    assert r["identical"] is True and r["events"] == 3001
    # A call run on the loop itself would let the ticker run not once.
    assert during > 1


def test_async_errors_are_the_same_exceptions(db):
    async def main():
        with pytest.raises(ctxdb.NotFound):
            await db.verify_async("ses_missing")
        with pytest.raises(ctxdb.InvalidInput):
            await db.compile_async({"max_tokens": 10})
    asyncio.run(main())
