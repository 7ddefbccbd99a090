'use strict';
// recordResponse: a provider's response recorded as an AssistantMessageCreated.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { ctxdb, tmpDb, throwsCode } = require('./helpers');

const FIXTURES = path.join(__dirname, '..', 'fixtures', 'responses');
const fixture = (name) => fs.readFileSync(path.join(FIXTURES, name), 'utf8');

function session(t) {
  const { db } = tmpDb(t);
  db.createSession({ id: 's', agentId: 'a' });
  return db;
}

test('recordResponse: a Responses object with reasoning and parallel calls', (t) => {
  const db = session(t);
  const resp = JSON.parse(fixture('openai_responses_reasoning_tools.json'));
  const e = db.recordResponse('s', resp, { format: 'openai.responses' });
  assert.equal(e.type, 'AssistantMessageCreated');
  const [reasoning, a, b] = e.payload.content;
  assert.equal(reasoning.id, 'rs_6820f383d7c08191846711c5df8233bc0ac5ba57aafcbac7');
  assert.equal(reasoning.encrypted_content, resp.output[0].encrypted_content);
  assert.deepEqual([a.id, b.id], ['call_12345xyz', 'call_67890abc']);
  assert.equal(e.payload.usage.input_tokens, 1536 - 1280);
  assert.equal(e.payload.usage.reasoning_tokens, 512);
  // A retry (here as text) returns the stored event.
  assert.deepEqual(db.recordResponse('s', JSON.stringify(resp), { format: 'openai.responses' }), e);
  assert.equal(db.session('s').event_count, 2);
});

test('recordResponse: a stream as an array of events or as NDJSON text', (t) => {
  const db = session(t);
  const lines = fixture('openai_responses_stream.ndjson').trim().split('\n');
  const e = db.recordResponse('s', lines.map((l) => JSON.parse(l)), {
    format: 'openai.responses', stream: true, actor: 'gpt',
  });
  assert.equal(e.actor, 'gpt');
  assert.deepEqual(e.payload.content.map((b) => b.type), ['text', 'refusal']);
  const sse = fixture('anthropic_stream_refusal.sse');
  const c = db.recordResponse('s', sse, { format: 'anthropic.messages', stream: true });
  assert.equal(c.payload.stop_reason, 'refusal');
  assert.equal(c.payload.content[0].signature.length > 0, true);
});

test('recordResponse: errors name what is wrong and store nothing', (t) => {
  const db = session(t);
  const before = db.session('s');
  throwsCode(() => db.recordResponse('s', { id: 'm', content: [{ type: 'tool_use', id: 't' }] },
    { format: 'anthropic.messages' }), ctxdb.codes.INVALID_ARG, /content\[0\]\.name/);
  throwsCode(() => db.recordResponse('s', fixture('openai_responses_stream_cut.ndjson'),
    { format: 'openai.responses', stream: true }), ctxdb.codes.INVALID_ARG, /response\.completed/);
  throwsCode(() => db.recordResponse('s', '{', { format: 'openai.chat' }), ctxdb.codes.INVALID_JSON);
  throwsCode(() => db.recordResponse('nope', fixture('openai_chat_text.json'),
    { format: 'openai.chat' }), ctxdb.codes.NOT_FOUND);
  assert.throws(() => db.recordResponse('s', {}, undefined), TypeError);
  const resp = JSON.parse(fixture('openai_chat_text.json'));
  db.recordResponse('s', resp, { format: 'openai.chat' });
  resp.choices[0].message.content = 'Other.';
  throwsCode(() => db.recordResponse('s', resp, { format: 'openai.chat' }), ctxdb.codes.CONFLICT);
  assert.equal(db.session('s').event_count, before.event_count + 1);
});

test('recordResponseAsync: off the main thread, the same event', async (t) => {
  const db = session(t);
  const resp = fixture('gemini_thought_calls.json');
  const e = await db.recordResponseAsync('s', resp, { format: 'gemini.generate_content' });
  assert.deepEqual(e.payload.content.map((b) => b.type), ['thinking', 'tool_call', 'tool_call']);
  assert.equal(e.payload.content[1].id, 'gemini_call_OrfMaNqVD5mLqtsPqvfWiAg_0');
  assert.deepEqual(db.recordResponse('s', resp, { format: 'gemini.generate_content' }), e);
  await assert.rejects(
    db.recordResponseAsync('s', '{"candidates":[]}', { format: 'gemini.generate_content' }),
    (err) => err instanceof ctxdb.CtxdbError && err.code === ctxdb.codes.INVALID_ARG &&
      /candidates\[0\]/.test(err.message));
});
