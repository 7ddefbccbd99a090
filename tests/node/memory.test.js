'use strict';
// Memories: write, update with history, retrieval (scopes, CJK, FTS syntax
// never an error), forget and purge (verify stays green), promote, and bad
// input naming the field.
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { ctxdb, tmpDb, tmpDir, throwsCode } = require('./helpers');

const { NOT_FOUND, INVALID_ARG, INVALID_UTF8, CONFLICT } = ctxdb.codes;
const T0 = 1700000000000;
const P1 = [{ scope: 'project', id: 'p1' }];

function work(t) {
  const { db } = tmpDb(t);
  db.createSession({ id: 's', agentId: 'a' });
  db.append('s', { type: 'UserPromptSubmitted', actor: 'user', id: 'e1', ts: T0,
    payload: { text: 'x' } });
  const put = (id, content, more = {}) => db.writeMemory('s', {
    memory_id: id, scope: 'project', scope_id: 'p1', content, source_refs: ['e1'],
    update_policy: 'manual', ts: T0, ...more });
  return { db, put };
}

const ids = (r) => r.memories.map((m) => m.memory_id);

test('write, update, history as of a time', (t) => {
  const { db, put } = work(t);
  const m = put('m1', 'API v1', { kind: 'decision' });
  assert.deepEqual([m.version, m.kind, m.status, m.source_refs], [1, 'decision', 'current', ['e1']]);
  const v2 = db.updateMemory('m1', { content: 'API v2', source_refs: ['e1'], ts: T0 + 1000 });
  assert.equal(v2.version, 2);
  assert.deepEqual(db.memories({ as_of: T0 + 500 }).map((x) => x.content), ['API v1']);
  assert.deepEqual(db.memories().map((x) => x.content), ['API v2']);
  assert.equal(db.memories({ all_versions: true }).length, 2);
  assert.deepEqual(db.memory('m1'), { ...v2 });
});

test('retrieval: scopes, CJK, FTS syntax, budget', (t) => {
  const { db, put } = work(t);
  put('m1', 'deploy with the blue pipeline');
  put('m2', '数据库迁移必须先备份');
  db.writeMemory('s', { memory_id: 'o1', scope: 'project', scope_id: 'p2',
    content: 'deploy with the green pipeline', source_refs: ['e1'], ttl_ms: 1000, ts: T0 });
  const now = T0 + 10;
  assert.deepEqual(ids(db.retrieveMemories({ query: 'deploy', scopes: P1, now })), ['m1']);
  assert.deepEqual(ids(db.retrieveMemories({ query: '备份', scopes: P1, now })), ['m2']);
  const r = db.retrieveMemories({ query: 'deploy AND (', scopes: P1, now, match: 'fts' });
  assert.equal(r.fell_back, true);
  assert.deepEqual(ids(r), ['m1']);
  const p2 = [{ scope: 'project', id: 'p2' }];
  assert.deepEqual(ids(db.retrieveMemories({ query: 'deploy', scopes: p2, now })), ['o1']);
  assert.deepEqual(ids(db.retrieveMemories({ query: 'deploy', scopes: p2, now: T0 + 1000 })), []);
  const none = db.retrieveMemories({ query: 'deploy', scopes: P1, now, budget: 0 });
  assert.deepEqual([ids(none), none.excluded[0].reason], [[], 'budget']);
});

test('forget and purge; verify stays green', (t) => {
  const { db, put } = work(t);
  put('m1', 'my pin is 1234');
  put('m2', 'keep');
  assert.equal(db.forgetMemory('m2').mode, 'tombstone');
  assert.equal(db.memory('m2').content, null);
  const r = db.forgetMemory('m1', { purge: true, reason: 'asked' });
  assert.equal(r.purged_event_ids.length, 1);
  // 'pin is 1234', not '1234': an id or a hash may hold those digits.
  assert.ok(![...db.export()].some((e) => JSON.stringify(e).includes('pin is 1234')));
  const v = db.verify();
  assert.equal(v.ok, true);
  assert.equal(v.purged[0].purged_by, r.event_id);
  throwsCode(() => db.memory('m1'), NOT_FOUND);
  throwsCode(() => db.forgetMemory('m2'), CONFLICT);
});

test('promote: all or nothing', (t) => {
  const { db } = work(t);
  throwsCode(() => db.promoteMemories('s', [
    { scope: 'session', content: 'a', source_refs: ['e1'] },
    { scope: 'project', scope_id: 'p', content: 'b', source_refs: ['e1'] }]), INVALID_ARG);
  assert.deepEqual(db.memories(), []);
  const w = db.promoteMemories('s', [{ scope: 'session', content: 'a', source_refs: ['e1'] }]);
  assert.equal(w[0].scope_id, 's');
});

test('bad input names the field and changes nothing', (t) => {
  const { db } = work(t);
  const before = JSON.stringify([...db.export()]);
  const cases = [
    [{ scope: 'session', content: 'x' }, 'source_refs'],
    [{ scope: 'session', content: 'x', source_refs: [] }, 'source_refs'],
    [{ content: 'x', source_refs: ['e1'] }, 'scope'],
    [{ scope: 'team', scope_id: 't', content: 'x', source_refs: ['e1'] }, 'scope'],
    [{ scope: 'session', content: 'x', source_refs: ['e1'], confidence: 2 }, 'confidence'],
    [{ scope: 'project', scope_id: 'p', content: 'x', source_refs: ['e1'] }, 'update_policy'],
  ];
  for (const [memory, field] of cases) {
    throwsCode(() => db.writeMemory('s', memory), INVALID_ARG, new RegExp(field));
  }
  throwsCode(() => db.writeMemory('s', { scope: 'session', content: 'x', source_refs: ['no'] }),
    NOT_FOUND);
  throwsCode(() => db.writeMemory('s', { scope: 'session', content: '\ud800', source_refs: ['e1'] }),
    INVALID_UTF8);
  throwsCode(() => db.memory('nope'), NOT_FOUND);
  assert.throws(() => db.writeMemory('s', 'text'), TypeError);
  assert.throws(() => db.memory(7), TypeError);
  assert.throws(() => db.promoteMemories('s', {}), TypeError);
  assert.equal(JSON.stringify([...db.export()]), before);
});

test('optimize merges the full-text indexes and changes no answer', async (t) => {
  const { db, put } = work(t);
  for (let i = 0; i < 10; i++) put(`o${i}`, `the ledger audit runs on night ${i}`, { priority: 9 * i });
  const query = { query: 'ledger audit', scopes: P1, now: T0 + 1000, limit: 20, record_usage: false };
  const before = db.retrieveMemories(query);
  const report = db.optimize();
  assert.deepEqual(report.indexes.map((x) => x.index), ['memory_fts', 'search_words', 'search_grams']);
  const [memoryFts] = report.indexes;
  assert.ok(memoryFts.segments_before > 1, JSON.stringify(memoryFts));
  assert.equal(memoryFts.segments_after, 1);
  assert.deepEqual(db.retrieveMemories(query), before);
  const again = await db.optimizeAsync();
  assert.equal(again.indexes[0].segments_before, 1);
});

test('optimize on a read-only or closed handle', (t) => {
  const file = path.join(tmpDir(t), 'o.ctxdb');
  const db = ctxdb.open(file);
  db.createSession({ id: 's', agentId: 'a' });
  const ro = ctxdb.open(file, { read_only: true });
  throwsCode(() => ro.optimize(), ctxdb.codes.READONLY, /read-only/);
  ro.close();
  db.close();
  throwsCode(() => db.optimize(), ctxdb.codes.MISUSE);
});
