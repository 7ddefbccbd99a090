'use strict';
// The session tree: fork, branches, branchPath, children.
const test = require('node:test');
const assert = require('node:assert/strict');
const { ctxdb, tmpDb, prompt, throwsCode } = require('./helpers');

// ses_t: t0 (SessionStarted), t1, t2, t3 on main.
function tree(t) {
  const { db, file } = tmpDb(t);
  db.createSession({ id: 'ses_t', eventId: 't0', agentId: 'a' });
  for (const i of [1, 2, 3]) db.append('ses_t', prompt(`p${i}`, { id: `t${i}` }));
  return { db, file, sid: 'ses_t' };
}

const ids = (events) => [...events].map((e) => e.id);

test('a new session has only main', (t) => {
  const { db, sid } = tree(t);
  const [main, ...rest] = db.branches(sid);
  assert.equal(rest.length, 0);
  assert.equal(main.id, 't0');
  assert.equal(main.kind, 'main');
  assert.equal(main.leaf_event_id, 't3');
  assert.deepEqual(ids(db.branchPath(sid)), ['t0', 't1', 't2', 't3']);
  assert.deepEqual(ids(db.branchPath(sid, { branch: 'main' })), ['t0', 't1', 't2', 't3']);
  assert.deepEqual(ids(db.branchPath(sid, { branch: null })), ['t0', 't1', 't2', 't3']);
});

test('fork, continue by name, read the path', (t) => {
  const { db, sid } = tree(t);
  const b = db.fork(sid, 't1', { kind: 'what_if', name: 'alt', id: 'alt1' });
  assert.deepEqual(b, {
    id: 'alt1', session_id: sid, kind: 'what_if', name: 'alt', parent_branch_id: 't0',
    fork_event_id: 't1', fork_seq: 2, first_seq: 5, leaf_event_id: 'alt1', leaf_seq: 5,
    event_count: 1,
  });
  const e = db.append(sid, prompt('on alt', { id: 'a1', branch_id: 'alt' }));
  assert.equal(e.branch_id, 'alt1');
  assert.deepEqual(ids(db.branchPath(sid, { branch: 'alt' })), ['t0', 't1', 'alt1', 'a1']);
  assert.deepEqual(db.branches(sid).map((x) => x.id), ['t0', 'alt1']);
  const raw = [...db.branchPath(sid, { branch: 'alt1', raw: true })];
  assert.equal(typeof raw[0], 'string');
  assert.equal(JSON.parse(raw[3]).id, 'a1');
  // Defaults: kind fork, a generated id, actor and ts as given.
  const d = db.fork(sid, 't3', { actor: 'planner', ts: 1234 });
  assert.equal(d.kind, 'fork');
  assert.equal(d.name, undefined);
  assert.equal(db.event(d.id).actor, 'planner');
  assert.equal(db.event(d.id).ts, 1234);
});

test('branchPath streams over several engine pages', (t) => {
  const { db, sid } = tree(t);
  db.fork(sid, 't2', { id: 'w' });
  const events = [];
  for (let i = 0; i < 300; i++) events.push(prompt(`w${i}`, { branch_id: 'w' }));
  db.appendMany(sid, events);
  const seqs = [...db.branchPath(sid, { branch: 'w' })].map((e) => e.seq);
  assert.equal(seqs.length, 3 + 1 + 300);
  assert.deepEqual(seqs.slice(0, 3), [1, 2, 3]);
  for (let i = 1; i < seqs.length; i++) assert.ok(seqs[i] > seqs[i - 1]);
});

test('children: the next event, forks, spawned sessions', (t) => {
  const { db, sid } = tree(t);
  db.append(sid, prompt('fork', { id: 'f1', parent_id: 't1' }));
  db.createSession({ id: 'ses_kid', agentId: 'sub',
    meta: { parent_session_id: sid, spawned_by_event_id: 't1' } });
  const c = db.children('t1');
  assert.equal(c.event_id, 't1');
  assert.deepEqual(ids(c.events), ['t2', 'f1']);
  assert.deepEqual(c.sessions.map((s) => s.id), ['ses_kid']);
  assert.equal(c.sessions[0].parent_session_id, sid);
  assert.deepEqual(db.children('t3'), { event_id: 't3', events: [], sessions: [] });
});

test('unknown ids, bad kinds and bad arguments', (t) => {
  const { db, sid } = tree(t);
  const { NOT_FOUND, INVALID_ARG, INVALID_UTF8 } = ctxdb.codes;
  throwsCode(() => db.branches('ses_nope'), NOT_FOUND, /ses_nope/);
  throwsCode(() => db.branchPath('ses_nope'), NOT_FOUND, /ses_nope/);
  throwsCode(() => db.branchPath(sid, { branch: 'nope' }), NOT_FOUND, /nope/);
  throwsCode(() => db.children('evt_nope'), NOT_FOUND, /evt_nope/);
  throwsCode(() => db.fork('ses_nope', 't1'), NOT_FOUND, /ses_nope/);
  throwsCode(() => db.fork(sid, 'evt_nope'), NOT_FOUND, /evt_nope/);
  throwsCode(() => db.fork(sid, 't1', { kind: 'sideways' }), INVALID_ARG, /kind/);
  throwsCode(() => db.fork(sid, 't1', { name: '' }), INVALID_ARG, /name/);
  throwsCode(() => db.branchPath(sid, { branch: '' }), INVALID_ARG, /branch/);
  throwsCode(() => db.branchPath(sid, { branch: '\ud800' }), INVALID_UTF8);
  assert.throws(() => db.fork(sid, 7), TypeError);
  assert.throws(() => db.fork(sid, 't1', { kind: 3 }), TypeError);
  assert.throws(() => db.fork(sid, 't1', { ts: -1 }), RangeError);
  assert.throws(() => db.branchPath(sid, 'main'), TypeError);
  assert.throws(() => db.branchPath(sid, { branch: 5 }), TypeError);
  assert.throws(() => db.children(null), TypeError);
  assert.equal(db.branches(sid).length, 1); // nothing was written
  // A name two branches share no longer picks one.
  db.fork(sid, 't1', { name: 'dup', id: 'd1' });
  db.fork(sid, 't2', { name: 'dup', id: 'd2' });
  throwsCode(() => db.branchPath(sid, { branch: 'dup' }), INVALID_ARG, /dup/);
  assert.deepEqual(ids(db.branchPath(sid, { branch: 'd2' })), ['t0', 't1', 't2', 'd2']);
});

test('a closed database refuses the tree calls', (t) => {
  const { db, sid } = tree(t);
  const it = db.branchPath(sid);
  db.close();
  const { MISUSE } = ctxdb.codes;
  throwsCode(() => db.branches(sid), MISUSE);
  throwsCode(() => db.branchPath(sid), MISUSE);
  throwsCode(() => db.children('t1'), MISUSE);
  throwsCode(() => db.fork(sid, 't1'), MISUSE);
  throwsCode(() => it.next(), MISUSE);
});
