'use strict';
// The views of a branch: messages, toolCalls, files.
const test = require('node:test');
const assert = require('node:assert/strict');
const { ctxdb, tmpDb, prompt, throwsCode } = require('./helpers');

// ses_w: a prompt, an assistant message making two tool calls, c1's result,
// a read and a write of a.py on main; the what-if "alt" forks at c1's
// result, where c2 fails and b.py is read.
function work(t) {
  const { db, file } = tmpDb(t);
  db.createSession({ id: 'ses_w', eventId: 'w0', agentId: 'a' });
  db.appendMany('ses_w', [
    prompt('fix it', { id: 'w1' }),
    { type: 'AssistantMessageCreated', actor: 'assistant', id: 'w2', payload: { content: [
      { type: 'text', text: 'Reading.' },
      { type: 'tool_call', id: 'c1', name: 'read', args: { path: 'a.py' } },
      { type: 'tool_call', id: 'c2', name: 'bash', args: { cmd: 'ls' } }] } },
    { type: 'ToolCallFinished', actor: 'tool', id: 'w3',
      payload: { tool_call_id: 'c1', output: 'x = 1', duration_ms: 7, exit_code: 0 } },
    { type: 'FileRead', actor: 'host', id: 'w4', payload: { path: 'a.py' } },
    { type: 'FileWritten', actor: 'host', id: 'w5',
      payload: { path: 'a.py', change_summary: 'fix x', artifact_id: 'art_1' } },
  ]);
  db.fork('ses_w', 'w3', { kind: 'what_if', name: 'alt', id: 'alt1' });
  db.appendMany('ses_w', [
    { type: 'ToolCallFailed', actor: 'tool', id: 'a1', branch_id: 'alt',
      payload: { tool_call_id: 'c2', error: 'boom' } },
    { type: 'FileRead', actor: 'host', id: 'a2', branch_id: 'alt', payload: { path: 'b.py' } },
  ]);
  return { db, file, sid: 'ses_w' };
}

test('messages: roles, blocks and tokens, per branch', (t) => {
  const { db, sid } = work(t);
  const m = db.messages(sid);
  assert.deepEqual(m.map((x) => x.role), ['user', 'assistant', 'tool']);
  assert.deepEqual(m.map((x) => x.event_id), ['w1', 'w2', 'w3']);
  assert.deepEqual(m[0].blocks, [{ type: 'text', text: 'fix it' }]);
  assert.equal(m[0].branch_id, 'w0');
  assert.ok(m[0].tokens > 0 && m[0].token_counter.length > 0);
  assert.deepEqual(m[1].blocks[2], { type: 'tool_call', id: 'c2', name: 'bash', args: { cmd: 'ls' } });
  assert.equal(m[2].blocks[0].tool_call_id, 'c1');
  const alt = db.messages(sid, { branch: 'alt' });
  assert.deepEqual(alt.map((x) => x.event_id), ['w1', 'w2', 'w3', 'a1']);
  assert.equal(alt[3].blocks[0].status, 'error');
  assert.deepEqual(db.messages(sid, { branch: 'alt1' }), alt);
  assert.deepEqual(db.messages(sid, { branch: null }), m);
  assert.deepEqual(db.messages(sid, { branch: 'main' }), m);
});

test('toolCalls: status and result as seen from the branch', (t) => {
  const { db, sid } = work(t);
  const [c1, c2] = db.toolCalls(sid);
  assert.equal(c1.call_id, 'c1');
  assert.equal(c1.name, 'read');
  assert.deepEqual(c1.args, { path: 'a.py' });
  assert.equal(c1.status, 'success');
  assert.deepEqual(c1.result, {
    event_id: 'w3', seq: 4, branch_id: 'w0', artifact_id: null, error: null, duration_ms: 7,
    exit_code: 0,
  });
  assert.equal(c2.status, 'pending');
  assert.equal(c2.result, null);
  const alt = db.toolCalls(sid, { branch: 'alt' });
  assert.deepEqual(alt.map((c) => c.status), ['success', 'error']);
  assert.equal(alt[1].result.error, 'boom');
});

test('files: reads, writes and changes, per branch', (t) => {
  const { db, sid } = work(t);
  const [a, ...rest] = db.files(sid);
  assert.equal(rest.length, 0);
  assert.equal(a.path, 'a.py');
  assert.equal(a.reads, 1);
  assert.equal(a.writes, 1);
  assert.equal(a.last_read.event_id, 'w4');
  assert.deepEqual(a.last_write, { event_id: 'w5', seq: 6, branch_id: 'w0', op: 'write' });
  assert.deepEqual(a.changes, [{
    event_id: 'w5', seq: 6, op: 'write', change_summary: 'fix x', artifact_id: 'art_1',
  }]);
  assert.deepEqual(db.files(sid, { branch: 'alt' }).map((f) => f.path), ['b.py']);
  const s = db.createSession({ agentId: 'a' }).id;
  assert.deepEqual([db.messages(s), db.toolCalls(s), db.files(s)], [[], [], []]);
});

test('unknown ids and bad arguments', (t) => {
  const { db, sid } = work(t);
  const { NOT_FOUND, INVALID_ARG, INVALID_UTF8 } = ctxdb.codes;
  const before = db.exportNdjson();
  for (const view of ['messages', 'toolCalls', 'files']) {
    const call = (...args) => db[view](...args);
    throwsCode(() => call('ses_nope'), NOT_FOUND, /ses_nope/);
    throwsCode(() => call('ses_nope', { branch: 'alt' }), NOT_FOUND, /ses_nope/);
    throwsCode(() => call(sid, { branch: 'nope' }), NOT_FOUND, /nope/);
    throwsCode(() => call(sid, { branch: 'w1' }), NOT_FOUND, /w1/);
    throwsCode(() => call(sid, { branch: '' }), INVALID_ARG, /branch/);
    throwsCode(() => call(''), INVALID_ARG, /session_id/);
    throwsCode(() => call(sid, { branch: '\ud800' }), INVALID_UTF8);
    throwsCode(() => call('ses_\udc00'), INVALID_UTF8);
    assert.throws(() => call(sid, 'alt'), TypeError);
    assert.throws(() => call(sid, { branch: 5 }), TypeError);
    assert.throws(() => call(null), TypeError);
  }
  assert.equal(db.exportNdjson(), before); // nothing was written
  // A name two branches share no longer picks one; their ids still do.
  db.fork(sid, 'w1', { name: 'dup', id: 'd1' });
  db.fork(sid, 'w2', { name: 'dup', id: 'd2' });
  for (const view of ['messages', 'toolCalls', 'files']) {
    throwsCode(() => db[view](sid, { branch: 'dup' }), INVALID_ARG, /dup/);
  }
  assert.deepEqual(db.messages(sid, { branch: 'd2' }).map((x) => x.event_id), ['w1', 'w2']);
});

test('a closed database refuses the views', (t) => {
  const { db, sid } = work(t);
  db.close();
  const { MISUSE } = ctxdb.codes;
  throwsCode(() => db.messages(sid), MISUSE);
  throwsCode(() => db.toolCalls(sid, { branch: 'alt' }), MISUSE);
  throwsCode(() => db.files(sid), MISUSE);
});
