'use strict';
// State and stats.
const test = require('node:test');
const assert = require('node:assert/strict');
const { ctxdb, tmpDb, prompt, throwsCode } = require('./helpers');

// ses_s: a prompt, a plan and a fact, a file written on main; the branch
// "alt" forks at the prompt and sets another task.
function work(t) {
  const { db, file } = tmpDb(t);
  db.createSession({ id: 'ses_s', eventId: 's0', agentId: 'a' });
  db.appendMany('ses_s', [
    prompt('fix it', { id: 's1' }),
    { type: 'StateUpdated', actor: 'agent', id: 's2', payload: { ops: [
      { op: 'set_plan', steps: ['look', 'fix'] },
      { op: 'add_fact', content: 'flaky', confidence: 0.5 }] } },
    { type: 'FileWritten', actor: 'host', id: 's3', payload: { path: 'a.c' } },
  ]);
  db.fork('ses_s', 's1', { name: 'alt', id: 'alt1' });
  db.append('ses_s', { type: 'StateUpdated', actor: 'agent', id: 'a1', branch_id: 'alt',
    payload: { ops: [{ op: 'set_task', text: 'another way' }] } });
  return { db, file, sid: 'ses_s' };
}

test('state of main, of a branch, and after an event', (t) => {
  const { db, sid } = work(t);
  const s = db.state(sid);
  assert.deepEqual([s.session_id, s.branch_id, s.event_id, s.seq], [sid, 's0', 's3', 4]);
  assert.deepEqual(s.state.goal.request, { text: 'fix it', event_id: 's1' });
  assert.deepEqual(s.state.plan.steps.map((x) => x.text), ['look', 'fix']);
  assert.equal(s.state.facts[0].confidence, 0.5);
  assert.deepEqual(s.state.files.modified.map((f) => f.path), ['a.c']);
  assert.deepEqual(db.state(sid, { branch: 'main' }), s);
  assert.deepEqual(db.state(sid, { branch: null, at: null }), s);
  const alt = db.state(sid, { branch: 'alt' });
  assert.deepEqual([alt.branch_id, alt.event_id], ['alt1', 'a1']);
  assert.equal(alt.state.goal.current_task.text, 'another way');
  const then = db.state(sid, { at: 's2' });
  assert.deepEqual([then.branch_id, then.event_id, then.seq], ['s0', 's2', 3]);
  assert.deepEqual(then.state.files.modified, []);
});

test('stats of a session and totals', (t) => {
  const { db, sid } = work(t);
  const one = db.stats(sid);
  assert.equal(one.session_id, sid);
  assert.equal(one.sessions, 1);
  assert.equal(one.events, 6);
  assert.deepEqual(one.messages, { user: 1, assistant: 0 });
  db.createSession({ agentId: 'b' });
  const all = db.stats();
  assert.equal(all.session_id, null);
  assert.equal(all.sessions, 2);
  assert.equal(all.events, 7);
  assert.deepEqual(db.stats(null), all);
});

test('unknown ids and bad arguments', (t) => {
  const { db, sid } = work(t);
  const { NOT_FOUND, INVALID_ARG, INVALID_UTF8 } = ctxdb.codes;
  const before = db.exportNdjson();
  throwsCode(() => db.state('ses_nope'), NOT_FOUND, /ses_nope/);
  throwsCode(() => db.state(sid, { branch: 'nope' }), NOT_FOUND, /nope/);
  throwsCode(() => db.state(sid, { at: 'evt_nope' }), NOT_FOUND, /evt_nope/);
  throwsCode(() => db.stats('ses_nope'), NOT_FOUND, /ses_nope/);
  throwsCode(() => db.state(sid, { branch: 'alt', at: 's1' }), INVALID_ARG);
  throwsCode(() => db.state(sid, { branch: '' }), INVALID_ARG, /branch_id/);
  throwsCode(() => db.stats(''), INVALID_ARG, /session_id/);
  throwsCode(() => db.state(sid, { at: '\ud800' }), INVALID_UTF8);
  assert.throws(() => db.state(sid, 'alt'), TypeError);
  assert.throws(() => db.state(sid, { at: 5 }), TypeError);
  assert.throws(() => db.stats(5), TypeError);
  assert.equal(db.exportNdjson(), before); // nothing was written
  db.fork(sid, 's1', { name: 'dup', id: 'd1' });
  db.fork(sid, 's2', { name: 'dup', id: 'd2' });
  throwsCode(() => db.state(sid, { branch: 'dup' }), INVALID_ARG, /dup/);
});

test('a closed database refuses state and stats', (t) => {
  const { db, sid } = work(t);
  db.close();
  const { MISUSE } = ctxdb.codes;
  throwsCode(() => db.state(sid), MISUSE);
  throwsCode(() => db.stats(sid), MISUSE);
  throwsCode(() => db.stats(), MISUSE);
});
