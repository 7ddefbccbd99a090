'use strict';
// Opening and closing, sessions, appending and reading events.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { ctxdb, tmpDir, tmpDb, prompt, fileRead, throwsCode } = require('./helpers');

test('version and ABI', () => {
  assert.equal(ctxdb.abiVersion(), 1);
  assert.equal(ctxdb.ABI_VERSION, 1);
  assert.match(ctxdb.version(), /^\d+\.\d+\.\d+/);
  const [major, minor, patch] = ctxdb.version().split('.').map(Number);
  assert.equal(ctxdb.versionNumber(), major * 1000000 + minor * 1000 + patch);
});

test('open creates the file; close is idempotent and closes', (t) => {
  const file = path.join(tmpDir(t), 'a.ctxdb');
  const db = ctxdb.open(file);
  assert.ok(db instanceof ctxdb.Database);
  assert.equal(db.path, file);
  assert.equal(db.closed, false);
  assert.ok(fs.existsSync(file));
  assert.deepEqual(db.sessions(), []);
  assert.equal(db.version(), ctxdb.version());
  assert.equal(db.abiVersion(), 1);
  db.close();
  assert.equal(db.closed, true);
  db.close(); // a no-op, not an error
  // The data survives a reopen, with `new Database` and config.
  const again = new ctxdb.Database(file, { durability: 'full', busyTimeoutMs: 100 });
  assert.deepEqual(again.sessions(), []);
  again.close();
});

test('createSession with agentId, id, actor and meta', (t) => {
  const { db } = tmpDb(t);
  const s = db.createSession({ agentId: 'agent-1', meta: { model: 'm', n: 2 } });
  assert.match(s.id, /^ses_/);
  assert.equal(s.agent_id, 'agent-1');
  assert.equal(s.event_count, 1);
  assert.equal(s.last_seq, 1);
  assert.equal(s.meta.model, 'm');
  assert.equal(s.meta.n, 2);

  const s2 = db.createSession({ id: 'ses_fixed', agent_id: 'agent-2', actor: 'host' });
  assert.equal(s2.id, 'ses_fixed');
  assert.equal(s2.agent_id, 'agent-2');
  assert.deepEqual(db.session('ses_fixed'), s2);

  const list = db.sessions();
  assert.deepEqual(list.map((x) => x.id), [s.id, 'ses_fixed']);

  const started = db.event(s.started_event_id);
  assert.equal(started.type, 'SessionStarted');
  assert.equal(started.payload.agent_id, 'agent-1');
});

test('append objects, strings and Buffers; read them back', (t) => {
  const { db } = tmpDb(t);
  const s = db.createSession({ agentId: 'a' });
  const e1 = db.append(s.id, prompt('hello', { run_id: 'run-1' }));
  assert.equal(e1.seq, 2);
  assert.equal(e1.session_id, s.id);
  assert.equal(e1.type, 'UserPromptSubmitted');
  assert.equal(e1.actor, 'user');
  assert.deepEqual(e1.payload, { text: 'hello' });
  assert.equal(e1.run_id, 'run-1');
  assert.match(e1.hash, /^[0-9a-f]{64}$/);
  assert.equal(e1.prev_hash, db.event(s.started_event_id).hash);

  const e2 = db.append(s.id, JSON.stringify(fileRead('/etc/hosts')));
  assert.equal(e2.seq, 3);
  assert.deepEqual(e2.payload, { path: '/etc/hosts' });
  const e3 = db.append(s.id, Buffer.from(JSON.stringify(prompt('héllo 😀'))));
  assert.equal(e3.seq, 4);
  assert.equal(e3.payload.text, 'héllo 😀');
  const e4 = db.append(s.id, new TextEncoder().encode(JSON.stringify(prompt('u8'))));
  assert.equal(e4.payload.text, 'u8');

  assert.deepEqual(db.event(e1.id), e1);
  assert.equal(db.session(s.id).event_count, 5);

  // A host-given id: a retry with identical content returns the stored event.
  const withId = prompt('once', { id: 'evt_host_1', ts: 1700000000000 });
  const first = db.append(s.id, withId);
  assert.equal(first.id, 'evt_host_1');
  assert.equal(first.ts, 1700000000000);
  assert.deepEqual(db.append(s.id, withId), first);
  assert.equal(db.session(s.id).event_count, 6);
});

test('events() with ranges and raw rows', (t) => {
  const { db } = tmpDb(t);
  const s = db.createSession({ agentId: 'a' });
  for (let i = 0; i < 5; i++) db.append(s.id, prompt(`p${i}`));
  assert.deepEqual([...db.events(s.id)].map((e) => e.seq), [1, 2, 3, 4, 5, 6]);
  assert.deepEqual([...db.events(s.id, { fromSeq: 3 })].map((e) => e.seq), [3, 4, 5, 6]);
  assert.deepEqual([...db.events(s.id, { fromSeq: 2, toSeq: 4 })].map((e) => e.seq), [2, 3, 4]);
  assert.deepEqual([...db.events(s.id, { toSeq: 0 })], []);
  const raw = [...db.events(s.id, { raw: true })];
  assert.equal(typeof raw[0], 'string');
  assert.deepEqual(JSON.parse(raw[1]), db.event(JSON.parse(raw[1]).id));
});

test('the deepest event the engine takes reads back; one level more is refused', (t) => {
  const { db } = tmpDb(t);
  const s = db.createSession({ agentId: 'a' });
  // 256 levels in all: the envelope, the payload object, 254 arrays.
  const nested = (levels) => {
    let v = [];
    for (let i = 1; i < levels; i++) v = [v];
    return v;
  };
  const deepest = { type: 'Note', actor: 'a', payload: { a: nested(254) } };
  const stored = db.append(s.id, deepest);
  assert.deepEqual(db.event(stored.id).payload, deepest.payload);
  throwsCode(() => db.append(s.id, { type: 'Note', actor: 'a', payload: { a: nested(255) } }),
    ctxdb.codes.INVALID_ARG, /256/);
  assert.deepEqual([...db.events(s.id)].map((e) => e.id).at(-1), stored.id);
});
