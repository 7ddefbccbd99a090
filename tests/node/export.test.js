'use strict';
// export -> importNdjson round trip, verify, and tamper detection.
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { ctxdb, tmpDir, prompt, fileRead, NO_ARTIFACTS } = require('./helpers');

const SQLITE3 = process.env.CTXDB_SQLITE3 || 'sqlite3';

function populate(db) {
  const a = db.createSession({ id: 'ses_a', agentId: 'agent-a', meta: { model: 'x' } });
  const b = db.createSession({ id: 'ses_b', agentId: 'agent-b' });
  db.append(a.id, prompt('first'));
  db.appendMany(b.id, [prompt('b1'), fileRead('/b/2')]);
  db.append(a.id, { type: 'ToolCallStarted', actor: 'tool', payload: { tool_call_id: 'tc1', ok: true } });
  db.append(b.id, prompt('ünïcødé 😀'));
}

test('export -> importNdjson into a fresh file gives an identical export', (t) => {
  const dir = tmpDir(t);
  const src = ctxdb.open(path.join(dir, 'src.ctxdb'));
  t.after(() => src.close());
  populate(src);
  const ndjson = src.exportNdjson();
  const lines = ndjson.trimEnd().split('\n');
  assert.equal(lines.length, 7);
  assert.deepEqual(lines, [...src.export({ raw: true })]);
  // Append order across sessions.
  assert.deepEqual([...src.export()].map((e) => `${e.session_id}:${e.seq}`),
    ['ses_a:1', 'ses_b:1', 'ses_a:2', 'ses_b:2', 'ses_b:3', 'ses_a:3', 'ses_b:4']);

  const dst = ctxdb.open(path.join(dir, 'dst.ctxdb'));
  t.after(() => dst.close());
  assert.deepEqual(dst.importNdjson(ndjson), { imported: 7, skipped: 0 });
  assert.equal(dst.exportNdjson(), ndjson);
  assert.deepEqual(dst.sessions(), src.sessions());
  // Importing again skips what is there; a Buffer works too.
  assert.deepEqual(dst.importNdjson(Buffer.from(ndjson)), { imported: 0, skipped: 7 });
  assert.deepEqual(dst.verify(), { ok: true, sessions: 2, events: 7, artifacts: NO_ARTIFACTS });
});

test('verify reports ok for all sessions and for one', (t) => {
  const db = ctxdb.open(path.join(tmpDir(t), 'v.ctxdb'));
  t.after(() => db.close());
  populate(db);
  const all = db.verify();
  assert.equal(all.ok, true);
  assert.equal(all.sessions, 2);
  assert.equal(all.events, 7);
  const one = db.verify('ses_b');
  assert.equal(one.ok, true);
  assert.equal(one.events, 4);
  assert.deepEqual(db.verify(null), all);
});

test('verify after tampering with the file: ok false naming seq 2', (t) => {
  const file = path.join(tmpDir(t), 'tamper.ctxdb');
  const db = ctxdb.open(file);
  const s = db.createSession({ id: 'ses_t', agentId: 'a' });
  db.append(s.id, prompt('original'));
  db.append(s.id, prompt('after'));
  assert.equal(db.verify().ok, true);
  db.close();

  execFileSync(SQLITE3, [file,
    'DROP TRIGGER events_no_update; UPDATE events SET payload=\'{"text":"x"}\' WHERE seq=2;']);

  const again = ctxdb.open(file);
  t.after(() => again.close());
  const r = again.verify();
  assert.equal(r.ok, false);
  assert.equal(r.first_broken.session_id, 'ses_t');
  assert.equal(r.first_broken.seq, 2);
  assert.equal(typeof r.first_broken.problem, 'string');
  assert.equal(again.verify('ses_t').ok, false);
});

test('importNdjson rejects a forged hash naming the line', (t) => {
  const dir = tmpDir(t);
  const src = ctxdb.open(path.join(dir, 's.ctxdb'));
  t.after(() => src.close());
  populate(src);
  const rows = [...src.export()];
  rows[1].hash = '0'.repeat(64);
  const forged = rows.map((r) => JSON.stringify(r)).join('\n');
  const dst = ctxdb.open(path.join(dir, 'd.ctxdb'));
  t.after(() => dst.close());
  assert.throws(() => dst.importNdjson(forged), (err) =>
    err instanceof ctxdb.CtxdbError && err.code === ctxdb.codes.CORRUPT && /line 2\b/.test(err.message));
  assert.deepEqual(dst.sessions(), []); // one transaction: nothing imported
});
