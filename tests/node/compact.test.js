'use strict';
// Compaction through the Node binding: the built-in summarizer, a JS
// summarizer (synchronous), and failures that leave the log as before plus
// one CompactionFailed event.
const test = require('node:test');
const assert = require('node:assert/strict');
const { ctxdb, tmpDb, throwsCode } = require('./helpers');

const { CHECK_FAILED, INVALID_ARG, NOT_FOUND } = ctxdb.codes;

function session(db, turns = 6) {
  db.createSession({ id: 's', agentId: 'a' });
  for (let i = 0; i < turns; ++i) {
    db.append('s', { type: 'UserPromptSubmitted', actor: 'user', payload: { text: `turn ${i}` } });
    db.append('s', {
      type: 'AssistantMessageCreated',
      actor: 'assistant',
      payload: { content: [{ type: 'tool_call', id: `c${i}`, name: 'bash', args: {} }] },
    });
    db.append('s', {
      type: 'ToolCallFinished',
      actor: 'tool',
      payload: { tool_call_id: `c${i}`, output: 'ok\n'.repeat(40) },
    });
    db.append('s', { type: 'FileWritten', actor: 'tool', payload: { path: `src/m${i}.py` } });
  }
}

const policy = { keep_recent_tokens: 100 };

function summaryFor(plan) {
  return {
    goal: { current_task: 'finish' },
    next_steps: ['test'],
    files: { modified: plan.obligations.files_modified.map((f) => ({ path: f.path })) },
    provenance: { source_event_ids: [plan.range.to_event_id], summarizer: { name: 'js', version: '1' } },
  };
}

test('built-in compaction, advice and list', (t) => {
  const { db } = tmpDb(t);
  session(db);
  assert.equal(db.shouldCompact('s').level, 'ok');
  const plan = db.planCompaction('s', policy);
  assert.equal(plan.status, 'ready');
  assert.equal(plan.transcript_info.omitted, null);
  const capped = db.planCompaction('s', { ...policy, transcript_max_tokens: 30 });
  assert.equal(capped.transcript_info.budget, 30);
  assert.ok(capped.transcript_info.omitted.entries > 0);
  assert.ok(capped.transcript.length < plan.transcript.length);
  assert.deepEqual(capped.cut, plan.cut);
  const r = db.compact('s', { policy });
  assert.equal(r.status, 'compacted');
  assert.ok(r.tokens_after < r.tokens_before);
  assert.equal(db.compactions('s').length, 1);
});

test('compactAsync compacts off the main thread as compact does', async (t) => {
  const { db: a } = tmpDb(t);
  const { db: b } = tmpDb(t);
  session(a);
  session(b);
  const sync = a.compact('s', { policy });
  const pending = b.compactAsync('s', { policy });
  assert.ok(pending instanceof Promise);
  const async_ = await pending;
  assert.equal(async_.status, 'compacted');
  assert.equal(async_.tokens_before, sync.tokens_before);
  assert.equal(async_.tokens_after, sync.tokens_after);
  assert.equal(b.compactions('s').length, 1);
  // Bad input rejects; nothing is written.
  await assert.rejects(b.compactAsync(42), TypeError);
  await assert.rejects(b.compactAsync('s', { summarizer: () => ({}) }), TypeError);
  await assert.rejects(b.compactAsync('no_such_session', { policy }), (err) => err.code === NOT_FOUND);
  await assert.rejects(b.compactAsync('s', { policy: { keep_recent_tokens: -1 } }),
    (err) => err.code === INVALID_ARG);
  assert.equal(b.compactions('s').length, 1);
  // A JS token counter could only be called from the main thread.
  b.setTokenCounter('js', (text) => text.length);
  await assert.rejects(b.compactAsync('s', { policy }), (err) => err.code === ctxdb.codes.MISUSE);
  b.setTokenCounter(null, null);
});

test('a JS summarizer gets the plan; plan + commit works too', (t) => {
  const { db } = tmpDb(t);
  session(db);
  let seen;
  const r = db.compact('s', { policy, summarizer: (plan) => ((seen = plan), summaryFor(plan)) });
  assert.equal(r.status, 'compacted');
  assert.equal(r.summarizer.name, 'js');
  assert.equal(typeof seen.transcript, 'string');
  db.append('s', { type: 'UserPromptSubmitted', actor: 'user', payload: { text: 'more' } });
  db.append('s', { type: 'UserPromptSubmitted', actor: 'user', payload: { text: 'again' } });
  const plan = db.planCompaction('s', { keep_recent_tokens: 5 });
  assert.equal(db.commitCompaction('s', plan, JSON.stringify(summaryFor(plan))).status, 'compacted');
});

test('a failing summarizer leaves the log as before plus one CompactionFailed', (t) => {
  const { db } = tmpDb(t);
  session(db);
  const boom = new Error('model unavailable');
  for (const [summarizer, pattern] of [
    [() => { throw boom; }, /model unavailable/],
    [() => 'not json', /summary_json/],
    [() => ({}), /current_task/],
    [() => 42, /no string|summary_json/],
  ]) {
    const before = db.exportNdjson();
    let caught;
    throwsCode(() => {
      try {
        db.compact('s', { policy, summarizer });
      } catch (err) {
        caught = err;
        throw err;
      }
    }, CHECK_FAILED, pattern);
    if (summarizer.toString().includes('throw')) assert.equal(caught.cause, boom);
    const after = db.exportNdjson();
    assert.ok(after.startsWith(before));
    const added = after.slice(before.length).trim().split('\n');
    assert.equal(added.length, 1);
    assert.equal(JSON.parse(added[0]).type, 'CompactionFailed');
  }
  assert.throws(() => db.compact('s', { summarizer: 42 }), TypeError);
  throwsCode(() => db.planCompaction('s', { keep: 1 }), INVALID_ARG);
  throwsCode(() => db.compact('nope'), NOT_FOUND);
});

test('summarizeBranch appends what an abandoned branch tried', (t) => {
  const { db } = tmpDb(t);
  db.createSession({ id: 's', agentId: 'a' });
  const ask = db.append('s', { type: 'UserPromptSubmitted', actor: 'user', payload: { text: 'go' } });
  db.append('s', { type: 'FileWritten', actor: 'tool', payload: { path: 'hack.py' } });
  const leaf = db.append('s', {
    type: 'DecisionRecorded',
    actor: 'agent',
    payload: { decision: 'patch the clock' },
  });
  const r = db.summarizeBranch('s', leaf.id, ask.id);
  assert.equal(r.common_ancestor_event_id, ask.id);
  assert.notEqual(r.branch_id, 'main');
  assert.match(r.text, /patch the clock/);
  throwsCode(() => db.summarizeBranch('s', ask.id, leaf.id), INVALID_ARG);
});
