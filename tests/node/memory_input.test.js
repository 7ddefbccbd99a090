'use strict';
// The memory methods given options they must pass on or refuse, and ids
// that cannot be: each case was a defect a review found (session 26).
const test = require('node:test');
const assert = require('node:assert/strict');
const { ctxdb, tmpDb, throwsCode } = require('./helpers');

const T0 = 1700000000000;

function work(t) {
  const { db } = tmpDb(t);
  db.createSession({ id: 's', agentId: 'a' });
  db.append('s', { type: 'UserPromptSubmitted', actor: 'user', id: 'e1', ts: T0,
    payload: { text: 'x' } });
  db.writeMemory('s', { memory_id: 'm1', scope: 'session', content: 'alpha', source_refs: ['e1'],
    ts: T0 });
  return db;
}

test('forgetMemory passes actor and ts on (they were dropped)', (t) => {
  const db = work(t);
  const r = db.forgetMemory('m1', { actor: 'bob', ts: T0 + 5, reason: 'stale' });
  const e = db.event(r.event_id);
  assert.equal(e.actor, 'bob');
  assert.equal(e.ts, T0 + 5);
  assert.equal(e.payload.reason, 'stale');
  assert.throws(() => db.forgetMemory('m1', { ts: 'soon' }), TypeError);
  assert.throws(() => db.forgetMemory('m1', { actor: 7 }), TypeError);
});

test('forgetMemory refuses mode: a purge asked that way was a tombstone', (t) => {
  const db = work(t);
  assert.throws(() => db.forgetMemory('m1', { mode: 'purge' }), /purge: true/);
  assert.equal(db.memory('m1').status, 'current');
  assert.equal(db.forgetMemory('m1', { purge: true }).mode, 'purge');
});

test('an id with a NUL byte is refused, naming it (the message was cut at the NUL)', (t) => {
  const db = work(t);
  throwsCode(() => db.memory('m1\0junk'), ctxdb.codes.INVALID_ARG);
  assert.throws(() => db.memory('m1\0junk'), /NUL byte/);
  throwsCode(() => db.forgetMemory('m1\0junk'), ctxdb.codes.INVALID_ARG);
  assert.equal(db.memory('m1').status, 'current');
});
