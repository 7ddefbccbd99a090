'use strict';
// rebuild / rebuildAsync: replaying the log into the derived tables, and
// the check that refuses a difference.
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { ctxdb, tmpDir, tmpDb, prompt, fileRead, NO_ARTIFACTS } = require('./helpers');

const { CtxdbError, codes } = ctxdb;
const SQLITE3 = process.env.CTXDB_SQLITE3 || 'sqlite3';

function populate(db) {
  const a = db.createSession({ id: 'ses_a', agentId: 'agent-a', meta: { model: 'm-1' } });
  const b = db.createSession({ id: 'ses_b', agentId: 'agent-b' });
  const c = db.createSession({ id: 'ses_c', agentId: 'agent-c' });
  db.append(a.id, prompt('first'));
  db.appendMany(b.id, [prompt('b1'), fileRead('/b/2')]);
  db.append(c.id, prompt('ünïcødé 😀'));
  db.append(a.id, prompt('second'));
  return [a.id, b.id, c.id];
}

function sessionsEntry(report) {
  const entries = report.tables.filter((t) => t.table === 'sessions');
  assert.equal(entries.length, 1, JSON.stringify(report));
  return entries[0];
}

const checkFailed = (err) =>
  err instanceof CtxdbError && err.code === codes.CHECK_FAILED && err.codeName === 'CTXDB_CHECK_FAILED';

test('rebuild of an untouched database is identical', async (t) => {
  const { db } = tmpDb(t);
  populate(db);
  const stored = [...db.export()].length;
  assert.equal(stored, 8);
  const before = db.sessions();
  const r = db.rebuild();
  assert.equal(r.identical, true);
  assert.equal(r.events, stored);
  const s = sessionsEntry(r);
  assert.equal(s.rows, 3);
  assert.equal(s.before, s.after);
  assert.match(s.before, /^[0-9a-f]{64}$/);
  assert.deepEqual(db.sessions(), before);
  // The check passes on identical tables; the async variant reports the same.
  assert.deepEqual(db.rebuild({ check: true }), { ...r, artifacts: NO_ARTIFACTS });
  assert.deepEqual(db.rebuild({ check: false }), r);
  assert.deepEqual(db.rebuild(null), r);
  const p = db.rebuildAsync({ check: true });
  assert.ok(p instanceof Promise);
  assert.deepEqual(await p, { ...r, artifacts: NO_ARTIFACTS });
  assert.deepEqual(await db.rebuildAsync(), r);
});

test('rebuild keeps the search index unless asked to re-derive it', async (t) => {
  const { db } = tmpDb(t);
  populate(db);
  assert.equal(db.search('second').hits.length, 1);
  const r = db.rebuild({ check: true });
  assert.deepEqual(r.kept, ['search_words', 'search_grams', 'search_mark']);
  assert.equal(r.tables.filter((x) => x.table.startsWith('search_')).length, 0);
  assert.equal(db.search('second').hits.length, 1);
  const full = await db.rebuildAsync({ check: true, search: true });
  assert.deepEqual(full.kept, []);
  const words = full.tables.filter((x) => x.table === 'search_words');
  assert.equal(words.length, 1);
  assert.equal(words[0].before, words[0].after);
  assert.equal(db.search('second').hits.length, 1);
  assert.throws(() => db.rebuild({ search: 1 }), TypeError);
});

test('rebuild of an empty database', async (t) => {
  const { db } = tmpDb(t);
  const r = db.rebuild({ check: true });
  assert.equal(r.events, 0);
  assert.equal(r.identical, true);
  assert.equal(sessionsEntry(r).rows, 0);
});

test('a tampered sessions table: check fails and changes nothing; rebuild restores it', async (t) => {
  const file = path.join(tmpDir(t), 'tamper.ctxdb');
  const db = ctxdb.open(file);
  const [a, b] = populate(db);
  const events = [...db.export()].length;
  db.close();

  // The sessions table has no triggers.
  execFileSync(SQLITE3, [file, `UPDATE sessions SET agent_id='forged' WHERE id='${b}';`]);

  const again = ctxdb.open(file);
  t.after(() => again.close());
  assert.equal(again.session(b).agent_id, 'forged');
  assert.throws(() => again.rebuild({ check: true }), checkFailed);
  assert.equal(again.session(b).agent_id, 'forged');
  await assert.rejects(again.rebuildAsync({ check: true }), checkFailed);
  assert.equal(again.session(b).agent_id, 'forged');

  const r = again.rebuild(); // without the check: the log wins
  assert.equal(r.identical, false);
  assert.equal(r.events, events);
  const s = sessionsEntry(r);
  assert.equal(s.rows, 3);
  assert.notEqual(s.before, s.after);
  assert.equal(again.session(b).agent_id, 'agent-b');
  assert.equal(again.session(a).agent_id, 'agent-a');
  assert.equal(again.session(a).meta.model, 'm-1');

  // The rebuilt tables match the log now.
  const ok = again.rebuild({ check: true });
  assert.equal(ok.identical, true);
  assert.equal(sessionsEntry(ok).before, s.after);
  assert.equal(again.verify().ok, true);
});

test('rebuildAsync restores a tampered table off the main thread', async (t) => {
  const file = path.join(tmpDir(t), 'tamper-async.ctxdb');
  const db = ctxdb.open(file);
  const [, b] = populate(db);
  db.close();
  execFileSync(SQLITE3, [file, `UPDATE sessions SET agent_id='forged' WHERE id='${b}';`]);
  const again = ctxdb.open(file);
  t.after(() => again.close());
  const r = await again.rebuildAsync();
  assert.equal(r.identical, false);
  assert.equal(again.session(b).agent_id, 'agent-b');
});

test('rebuild: wrong argument types are TypeError (rejections for rebuildAsync)', async (t) => {
  const { db } = tmpDb(t);
  const s = db.createSession({ agentId: 'a' });
  for (const bad of [true, 1, 'check', [], Buffer.from('{}')]) {
    assert.throws(() => db.rebuild(bad), TypeError);
    await assert.rejects(db.rebuildAsync(bad), TypeError);
  }
  for (const bad of [1, 'true', null, {}]) {
    assert.throws(() => db.rebuild({ check: bad }), TypeError);
    await assert.rejects(db.rebuildAsync({ check: bad }), TypeError);
  }
  // The native layer itself refuses a non-string.
  const native = require('../../bindings/node/lib/native');
  const raw = new native.Database(path.join(tmpDir(t), 'n.ctxdb'));
  assert.throws(() => raw.rebuild(42), TypeError);
  assert.throws(() => raw.rebuildAsync({}), TypeError);
  raw.close();
  assert.equal(db.session(s.id).event_count, 1);
});

test('rebuild on a closed database is MISUSE', async (t) => {
  const { db } = tmpDb(t);
  db.createSession({ agentId: 'a' });
  db.close();
  const misuse = (err) => err instanceof CtxdbError && err.code === codes.MISUSE;
  assert.throws(() => db.rebuild(), misuse);
  assert.throws(() => db.rebuild({ check: true }), misuse);
  await assert.rejects(db.rebuildAsync(), misuse);
});

test('close() while rebuildAsync runs: it finishes, then the handle closes', async (t) => {
  const { db } = tmpDb(t);
  const s = db.createSession({ agentId: 'a' });
  db.appendMany(s.id, Array.from({ length: 500 }, (_, i) => prompt(`${i}`)));
  const p = db.rebuildAsync({ check: true });
  db.close();
  const r = await p;
  assert.equal(r.events, 501);
  assert.equal(r.identical, true);
});
