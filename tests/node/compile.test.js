'use strict';
// The context compiler through the Node binding: compile, compileAsync,
// bundleConvert and a JS token counter.
const test = require('node:test');
const assert = require('node:assert/strict');
const { ctxdb, tmpDb, prompt, throwsCode } = require('./helpers');

const { CtxdbError, codes } = ctxdb;

// ses_c: a prompt, a tool call and its result on main.
function work(t) {
  const { db, file } = tmpDb(t);
  db.createSession({ id: 'ses_c', eventId: 'c0', agentId: 'a' });
  db.appendMany('ses_c', [
    prompt('fix the failing test', { id: 'c1' }),
    {
      type: 'AssistantMessageCreated', actor: 'assistant', id: 'c2',
      payload: {
        content: [{ type: 'text', text: 'running it' },
          { type: 'tool_call', id: 'k1', name: 'bash', args: { cmd: 'make' } }],
      },
    },
    { type: 'ToolCallFinished', actor: 'tool', id: 'c3', payload: { tool_call_id: 'k1', output: '1 failed' } },
  ]);
  return { db, file };
}

function request(extra = {}) {
  return {
    session_id: 'ses_c', max_tokens: 4000,
    instructions: [{ kind: 'system', text: 'be brief' }], ...extra,
  };
}

test('compile returns the bundle and writes nothing', (t) => {
  const { db } = work(t);
  const before = db.exportNdjson();
  const b = db.compile(request());
  assert.equal(b.format, 'canonical');
  assert.equal(b.session_id, 'ses_c');
  assert.equal(b.branch_id, 'c0');
  assert.equal(b.leaf_event_id, 'c3');
  assert.equal(b.token_counter, 'approx-v2');
  const ids = b.segments.map((s) => s.id);
  assert.equal(ids[0], 'instructions:system-0');
  for (const id of ['msg:c1', 'msg:c2', 'msg:c3']) assert.ok(ids.includes(id), id);
  assert.equal(b.budget.used, b.segments.reduce((n, s) => n + s.tokens, 0));
  assert.equal(b.budget.used + b.budget.free, 4000);
  assert.equal(db.exportNdjson(), before);
});

test('every form of the request gives the same bytes', (t) => {
  const { db } = work(t);
  const text = db.compile(request(), { raw: true });
  assert.equal(typeof text, 'string');
  assert.equal(db.compile(JSON.stringify(request()), { raw: true }), text);
  assert.equal(db.compile(Buffer.from(JSON.stringify(request())), { raw: true }), text);
  assert.deepEqual(db.compile(request()), JSON.parse(text));
});

test('formats and conversions', (t) => {
  const { db } = work(t);
  const b = db.compile(request());
  const chat = db.compile(request({ format: 'openai.chat' }));
  assert.deepEqual(db.bundleConvert(b, 'openai.chat'), chat);
  assert.deepEqual(chat.messages[0], { role: 'system', content: 'be brief' });
  assert.ok(chat.messages.some((m) => m.tool_call_id === 'k1'));
  assert.equal(db.bundleConvert(b, 'anthropic.messages').system[0].text, 'be brief');
  const responses = db.bundleConvert(JSON.stringify(b), 'openai.responses');
  assert.ok(responses.input.some((i) => i.type === 'function_call_output'));
  const gemini = db.compile(request({ format: 'gemini.generate_content' }));
  assert.deepEqual(db.bundleConvert(b, 'gemini.generate_content'), gemini);
  assert.deepEqual(gemini.systemInstruction, { parts: [{ text: 'be brief' }] });
  assert.ok(gemini.contents.some((c) => c.parts.some((p) => p.functionResponse?.id === 'k1')));
  const ai = db.bundleConvert(b, 'ai.sdk');
  assert.deepEqual(ai.messages[0], { role: 'system', content: 'be brief' });
  assert.ok(ai.messages.some((m) => m.role === 'tool' && m.content[0].toolCallId === 'k1'));
  const text = db.compile(request(), { raw: true });
  assert.equal(db.bundleConvert(text, 'canonical', { raw: true }), text);
});

test('compileAsync resolves the same bundle; errors reject as CtxdbError', async (t) => {
  const { db } = work(t);
  const p = db.compileAsync(request());
  assert.ok(p instanceof Promise);
  assert.deepEqual(await p, db.compile(request()));
  assert.equal(await db.compileAsync(request(), { raw: true }), db.compile(request(), { raw: true }));
  await assert.rejects(db.compileAsync(request({ session_id: 'ses_nope' })),
    (err) => err instanceof CtxdbError && err.code === codes.NOT_FOUND);
  await assert.rejects(db.compileAsync(42), TypeError);
});

test('record, branches and the past', (t) => {
  const { db } = work(t);
  db.fork('ses_c', 'c1', { name: 'alt', id: 'calt' });
  const alt = db.compile(request({ branch_id: 'alt' }));
  assert.equal(alt.branch_id, 'calt');
  assert.ok(!alt.segments.some((s) => s.id === 'msg:c3'));
  // As of c2 its call k1 is still running: refused unless its result is given.
  throwsCode(() => db.compile(request({ leaf_event_id: 'c2' })), codes.CONFLICT, /'k1'/);
  const past = db.compile(request({ leaf_event_id: 'c2', tool_results: [{ tool_call_id: 'k1', output: 'ok' }] }));
  assert.equal(past.leaf_event_id, 'c2');
  assert.ok(past.segments.some((s) => s.id === 'result:k1'));
  const n = db.session('ses_c').event_count;
  const recorded = db.compile(request({ record: true }));
  assert.equal(db.session('ses_c').event_count, n + 1);
  const events = [...db.events('ses_c')];
  const built = events[events.length - 1];
  assert.equal(built.type, 'ContextBuilt');
  assert.equal(built.payload.bundle_hash, recorded.hash);
});

test('bad requests are CtxdbErrors and write nothing', (t) => {
  const { db, file } = work(t);
  const before = db.exportNdjson();
  throwsCode(() => db.compile('{'), codes.INVALID_JSON);
  throwsCode(() => db.compile(Buffer.from('{"session_id":"ses_\xff","max_tokens":1}', 'latin1')),
    codes.INVALID_UTF8);
  throwsCode(() => db.compile({ session_id: 'ses_c' }), codes.INVALID_ARG, /max_tokens/);
  throwsCode(() => db.compile(request({ branch_id: 'main', leaf_event_id: 'c1' })), codes.INVALID_ARG);
  throwsCode(() => db.compile(request({ policy: { redact: [{ name: 'x', pattern: '(' }] } })),
    codes.INVALID_ARG);
  throwsCode(() => db.compile(request({ session_id: 'ses_nope' })), codes.NOT_FOUND);
  throwsCode(() => db.compile(request({ branch_id: 'nope' })), codes.NOT_FOUND);
  throwsCode(() => db.compile(request({ leaf_event_id: 'evt_nope' })), codes.NOT_FOUND);
  throwsCode(() => db.compile(request({
    max_tokens: 20, record: true, instructions: [{ kind: 'system', text: 'word '.repeat(500) }],
  })), codes.BUDGET, /only 20 are available/);
  throwsCode(() => db.bundleConvert(db.compile(request()), 'gopher'), codes.INVALID_ARG, /gopher/);
  throwsCode(() => db.bundleConvert({}, 'openai.chat'), codes.INVALID_ARG);
  throwsCode(() => db.bundleConvert('nope', 'openai.chat'), codes.INVALID_JSON);
  assert.throws(() => db.compile(42), TypeError);
  assert.throws(() => db.bundleConvert({}, 42), TypeError);
  assert.equal(db.exportNdjson(), before);
  const ro = ctxdb.open(file, { readOnly: true });
  t.after(() => ro.close());
  assert.deepEqual(ro.compile(request()), db.compile(request()));
  throwsCode(() => ro.compile(request({ record: true })), codes.READONLY);
});

test('a JS token counter counts at append and at compile; null restores', (t) => {
  const { db } = work(t);
  const seen = [];
  db.setTokenCounter('bytes-v1', (text) => {
    seen.push(text);
    return Buffer.byteLength(text);
  });
  db.append('ses_c', prompt('hello world'));
  const msgs = db.messages('ses_c');
  const last = msgs[msgs.length - 1];
  assert.equal(last.tokens, 11);
  assert.equal(last.token_counter, 'bytes-v1');
  assert.ok(seen.includes('hello world'));
  assert.equal(db.compile(request()).token_counter, 'bytes-v1');

  db.setTokenCounter(null, null);
  seen.length = 0;
  db.append('ses_c', prompt('again'));
  assert.equal(seen.length, 0);
  assert.equal(db.compile(request()).token_counter, 'approx-v2');
});

test('a failing JS counter fails the call with a CtxdbError; nothing written', (t) => {
  const { db } = work(t);
  const before = db.exportNdjson();
  const boom = new Error('boom');
  db.setTokenCounter('broken', () => { throw boom; });
  assert.throws(() => db.append('ses_c', prompt('hi')), (err) => {
    assert.ok(err instanceof CtxdbError);
    assert.equal(err.code, codes.INTERNAL);
    assert.match(err.message, /broken/);
    assert.match(err.message, /boom/);
    assert.equal(err.cause, boom);
    return true;
  });
  throwsCode(() => db.appendMany('ses_c', [prompt('a'), prompt('b')]), codes.INTERNAL, /boom/);
  throwsCode(() => db.compile(request()), codes.INTERNAL, /broken/);
  for (const bad of [-1, 1.5, NaN, '3', undefined, null]) {
    db.setTokenCounter('bad', () => bad);
    throwsCode(() => db.append('ses_c', prompt('hi')), codes.INTERNAL, /non-negative integer/);
  }
  db.setTokenCounter('primitive', () => { throw 42; }); // eslint-disable-line no-throw-literal
  throwsCode(() => db.append('ses_c', prompt('hi')), codes.INTERNAL, /primitive/);
  assert.equal(db.exportNdjson(), before);
  // A counter that uses its own database fails the call, cleanly.
  db.setTokenCounter('reentrant', () => db.stats().events);
  throwsCode(() => db.append('ses_c', prompt('hi')), codes.INTERNAL, /must not use/);
  db.setTokenCounter('closer', () => { db.close(); return 1; });
  throwsCode(() => db.append('ses_c', prompt('hi')), codes.INTERNAL, /close\(\)/);
  assert.equal(db.closed, false);
  db.setTokenCounter(null, null);
  db.append('ses_c', prompt('works again'));
});

test('async calls that may count are refused while a JS counter is set', async (t) => {
  const { db } = work(t);
  db.setTokenCounter('chars', (text) => text.length);
  for (const p of [
    db.compileAsync(request()),
    db.appendManyAsync('ses_c', [prompt('x')]),
    db.importNdjsonAsync(''),
    db.rebuildAsync(),
  ]) {
    await assert.rejects(p, (err) => err instanceof CtxdbError && err.code === codes.MISUSE &&
      /token counter/.test(err.message));
  }
  assert.equal((await db.verifyAsync()).ok, true); // verify counts nothing
  assert.equal(db.compile(request()).token_counter, 'chars'); // the sync call works
  db.setTokenCounter(null, null);
  assert.equal((await db.compileAsync(request())).token_counter, 'approx-v2');
  // Setting a counter while an async call runs is refused too.
  const p = db.compileAsync(request());
  throwsCode(() => db.setTokenCounter('chars', (text) => text.length), codes.MISUSE, /async/);
  await p;
  db.setTokenCounter('chars', (text) => text.length);
});

test('setTokenCounter checks its arguments', (t) => {
  const { db } = work(t);
  assert.throws(() => db.setTokenCounter('x', 42), TypeError);
  assert.throws(() => db.setTokenCounter(undefined, () => 1), TypeError);
  throwsCode(() => db.setTokenCounter('', () => 1), codes.INVALID_ARG);
  throwsCode(() => db.setTokenCounter('n'.repeat(101), () => 1), codes.INVALID_ARG);
  db.setTokenCounter('n'.repeat(100), () => 1);
  db.close();
  throwsCode(() => db.setTokenCounter('x', () => 1), codes.MISUSE);
  throwsCode(() => db.compile(request()), codes.MISUSE);
});
