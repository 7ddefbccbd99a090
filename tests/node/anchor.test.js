'use strict';
// Tamper evidence beyond the chain: verify's artifact check and anchors.
const test = require('node:test');
const assert = require('node:assert/strict');
const { execFileSync } = require('node:child_process');
const { ctxdb, tmpDb, throwsCode } = require('./helpers');

const note = (text) => ({ type: 'Note', actor: 'agent', payload: { text } });

test('verify checks the artifacts, quick by default and full when asked', (t) => {
  const { db } = tmpDb(t);
  db.putArtifact(Buffer.from('line\n'.repeat(200000)));
  const quick = db.verify();
  assert.equal(quick.ok, true);
  assert.equal(quick.artifacts.mode, 'quick');
  assert.equal(quick.artifacts.artifacts, 1);
  assert.ok(quick.artifacts.chunks >= 4);
  const full = db.verify(null, { artifacts: 'full' });
  assert.equal(full.artifacts.mode, 'full');
  assert.equal(full.artifacts.chunks, quick.artifacts.chunks);
  assert.equal(db.verify(null, { artifacts: 'none' }).artifacts, undefined);
  throwsCode(() => db.verify(null, { artifacts: 'all' }), ctxdb.codes.INVALID_ARG, /artifacts/);
  assert.throws(() => db.verify(null, { artifacts: 3 }), TypeError);
});

test('an anchor is extended by appends and broken by a rewritten file', async (t) => {
  const { db, file } = tmpDb(t);
  const s = db.createSession({ agent_id: 'a' });
  db.appendMany(s.id, [note('a'), note('b')]);
  const anchor = db.anchor();
  assert.equal(anchor.format, 'ctxdb.anchor.v1');
  assert.equal(anchor.events, 3);
  assert.deepEqual(anchor.heads.map((h) => [h.session_id, h.seq]), [[s.id, 3]]);
  assert.match(anchor.root, /^[0-9a-f]{64}$/);
  assert.deepEqual(db.anchor(), anchor);
  db.append(s.id, note('c'));
  assert.deepEqual(db.verify(null, { anchor }).anchor, { ok: true, events: 3 });
  assert.deepEqual((await db.verifyAsync(null, { anchor })).anchor, { ok: true, events: 3 });
  db.close();
  // Someone with the file removes the last two events and rewrites the
  // chain head to match: the chain alone is fooled, the anchor is not.
  const sql =
    'DROP TRIGGER events_no_delete; DELETE FROM events WHERE seq >= 3;' +
    'UPDATE chains SET last_seq=2, last_hash=(SELECT hash FROM events e ' +
    'WHERE e.session_no=chains.session_no AND e.seq=2);';
  execFileSync('sqlite3', [file, sql]);
  const again = ctxdb.open(file);
  t.after(() => again.close());
  assert.equal(again.verify().ok, true);
  const r = again.verify(null, { anchor });
  assert.equal(r.ok, false);
  assert.equal(r.anchor.ok, false);
  assert.match(r.anchor.problem, /seq 3, is missing/);
});

test('a malformed anchor is INVALID_ARG naming it', (t) => {
  const { db } = tmpDb(t);
  db.createSession({ agent_id: 'a' });
  const anchor = db.anchor();
  throwsCode(() => db.verify(null, { anchor: { ...anchor, root: 'x' } }), ctxdb.codes.INVALID_ARG, /root/);
  throwsCode(() => db.verify(null, { anchor: {} }), ctxdb.codes.INVALID_ARG, /anchor/);
  assert.throws(() => db.verify(null, { anchor: 'text' }), TypeError);
});
