'use strict';
// The Promise variants, which run on the libuv thread pool.
const test = require('node:test');
const assert = require('node:assert/strict');
const { ctxdb, tmpDb, prompt, fileRead, NO_ARTIFACTS } = require('./helpers');

const { CtxdbError, codes } = ctxdb;

test('appendManyAsync resolves with the batch result', async (t) => {
  const { db } = tmpDb(t);
  const s = db.createSession({ agentId: 'a' });
  const p = db.appendManyAsync(s.id, [prompt('1'), fileRead('/f'), Buffer.from(JSON.stringify(prompt('3')))]);
  assert.ok(p instanceof Promise);
  const r = await p;
  assert.deepEqual({ count: r.count, first_seq: r.first_seq, last_seq: r.last_seq }, { count: 3, first_seq: 2, last_seq: 4 });
  assert.equal(db.event(r.last_id).payload.text, '3');
});

test('appendManyAsync rejects with a CtxdbError; nothing written', async (t) => {
  const { db } = tmpDb(t);
  const s = db.createSession({ agentId: 'a' });
  const bad = { type: 'ToolCallFinished', actor: 'tool', payload: {} }; // no tool_call_id
  await assert.rejects(db.appendManyAsync(s.id, [prompt('1'), prompt('2'), bad]), (err) => {
    assert.ok(err instanceof CtxdbError);
    assert.equal(err.code, codes.INVALID_ARG);
    assert.equal(err.codeName, 'CTXDB_INVALID_ARG');
    assert.match(err.message, /line 3\b/);
    return true;
  });
  await assert.rejects(db.appendManyAsync('ses_nope', [prompt('1')]),
    (err) => err instanceof CtxdbError && err.code === codes.NOT_FOUND);
  assert.equal(db.session(s.id).event_count, 1);
});

test('argument errors of async variants are rejections, not throws', async (t) => {
  const { db } = tmpDb(t);
  await assert.rejects(db.appendManyAsync(undefined, []), TypeError);
  await assert.rejects(db.appendManyAsync('ses_x', 'nope'), TypeError);
  await assert.rejects(db.importNdjsonAsync(null), TypeError);
  await assert.rejects(db.verifyAsync(42), TypeError);
  await assert.rejects(db.rebuildAsync({ check: 'yes' }), TypeError);
  await assert.rejects(db.importNdjsonAsync('\uD800'),
    (err) => err instanceof CtxdbError && err.code === codes.INVALID_UTF8);
});

test('importNdjsonAsync and verifyAsync', async (t) => {
  const { db: src } = tmpDb(t, 'src.ctxdb');
  const s = src.createSession({ id: 'ses_1', agentId: 'a' });
  src.appendMany(s.id, Array.from({ length: 300 }, (_, i) => prompt(`p${i}`)));
  const ndjson = src.exportNdjson();

  const { db: dst } = tmpDb(t, 'dst.ctxdb');
  assert.deepEqual(await dst.importNdjsonAsync(Buffer.from(ndjson)), { imported: 301, skipped: 0 });
  assert.equal(dst.exportNdjson(), ndjson);
  assert.deepEqual(await dst.verifyAsync(), { ok: true, sessions: 1, events: 301, artifacts: NO_ARTIFACTS });
  assert.equal((await dst.verifyAsync('ses_1')).ok, true);
  await assert.rejects(dst.verifyAsync('ses_nope'),
    (err) => err instanceof CtxdbError && err.code === codes.NOT_FOUND);
  await assert.rejects(dst.importNdjsonAsync('{"not": "an event"}'),
    (err) => err instanceof CtxdbError && err.code !== codes.OK);
});

test('async work runs off the main thread: the event loop keeps turning', async (t) => {
  const { db: src } = tmpDb(t, 'src.ctxdb');
  const s = src.createSession({ agentId: 'a' });
  src.appendMany(s.id, Array.from({ length: 5000 }, (_, i) => prompt(`event ${i}`)));
  const ndjson = src.exportNdjson();
  const { db: dst } = tmpDb(t, 'dst.ctxdb');
  // A synchronous call would settle the promise before any setImmediate ran.
  let ticks = 0;
  let running = true;
  const spin = () => { ticks++; if (running) setImmediate(spin); };
  setImmediate(spin);
  const r = await dst.importNdjsonAsync(ndjson);
  running = false;
  assert.equal(r.imported, 5001);
  assert.ok(ticks > 0, 'the main thread was blocked during importNdjsonAsync');
});

test('many async calls in flight on one handle', async (t) => {
  const { db } = tmpDb(t);
  const sessions = Array.from({ length: 4 }, (_, i) => db.createSession({ agentId: `a${i}` }));
  const results = await Promise.all(sessions.flatMap((s) => [
    db.appendManyAsync(s.id, Array.from({ length: 50 }, (_, i) => prompt(`${s.id} ${i}`))),
    db.verifyAsync(s.id),
  ]));
  assert.equal(results.length, 8);
  for (const s of sessions) assert.equal(db.session(s.id).event_count, 51);
  assert.deepEqual(await db.verifyAsync(), { ok: true, sessions: 4, events: 204, artifacts: NO_ARTIFACTS });
});

test('close() while async calls run: they finish, then the handle closes', async (t) => {
  const { db } = tmpDb(t);
  const s = db.createSession({ agentId: 'a' });
  const p1 = db.appendManyAsync(s.id, Array.from({ length: 200 }, (_, i) => prompt(`${i}`)));
  const p2 = db.verifyAsync();
  db.close();
  assert.equal(db.closed, true);
  assert.throws(() => db.sessions(), (err) => err.code === codes.MISUSE);
  await assert.rejects(db.verifyAsync(), (err) => err instanceof CtxdbError && err.code === codes.MISUSE);
  const [r1, r2] = await Promise.all([p1, p2]);
  assert.equal(r1.count, 200);
  assert.equal(r2.ok, true);
  // The file holds what the async append wrote.
  const again = ctxdb.open(db.path);
  assert.equal(again.session(s.id).event_count, 201);
  again.close();
});
