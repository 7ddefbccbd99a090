'use strict';
// The rule checker itself: a request each provider accepts passes, and each
// rule fires on a request that breaks it (so no rule is one that cannot fail).
const test = require('node:test');
const assert = require('node:assert/strict');
const { check } = require('./rules');

const { PNG, good } = require('./examples');
const clone = (v) => JSON.parse(JSON.stringify(v));

for (const [format, body] of Object.entries(good)) {
  test(`${format}: a request the provider accepts passes`, () => {
    assert.deepEqual(check(format, body), []);
  });
}

// [format, rule, how to break the good request]
const broken = [
  ['openai.chat', 'roles', (b) => { b.messages[0].role = 'function'; }],
  ['openai.chat', 'content-parts', (b) => { b.messages[0].content = [{ type: 'image_url', image_url: { url: 'https://x/y.png' } }]; }],
  ['openai.chat', 'no-blank-text', (b) => { b.messages[2].content = '\n\n'; }],
  ['openai.chat', 'tool-call-answered', (b) => { b.messages.splice(3, 1); }],
  ['openai.chat', 'tool-call-answered', (b) => { b.messages.splice(3, 0, { role: 'user', content: 'go on please' }); }],
  ['openai.chat', 'tool-result-has-call', (b) => { b.messages[4].tool_call_id = 'k9'; }],
  ['openai.chat', 'tool-result-once', (b) => { b.messages.push(clone(b.messages[4])); }],
  ['openai.chat', 'thinking-placement', (b) => { b.messages[2].reasoning_content = 'hmm'; }],
  ['openai.chat', 'image-media-type', (b) => { b.messages[1].content[1].image_url.url = `data:image/bmp;base64,${PNG}`; }],
  ['openai.chat', 'image-bytes', (b) => { b.messages[1].content[1].image_url.url = `data:image/png;base64,${'A'.repeat(28 * 1024 * 1024)}`; }],
  ['openai.chat', 'image-count', (b) => { for (let i = 0; i < 500; ++i) b.messages[1].content.push(clone(b.messages[1].content[1])); }],
  ['openai.chat', 'ends-on-user-side', (b) => { b.messages.push({ role: 'assistant', content: 'done here' }); }],
  ['openai.chat', 'request-once', (b) => { b.messages.splice(1, 0, { role: 'user', content: 'Goal: list the files please' }); }],
  ['openai.chat', 'user-words-once', (b) => { b.messages.splice(1, 0, { role: 'user', content: 'Goal: list the files please' }); b.messages.push({ role: 'user', content: 'now the tests' }, { role: 'user', content: 'and the docs too' }); }],

  ['openai.responses', 'roles', (b) => { b.input[0].role = 'tool'; }],
  ['openai.responses', 'content-parts', (b) => { b.input[1].content[0].type = 'output_text'; }],
  ['openai.responses', 'no-blank-text', (b) => { b.input[1].content[0].text = ' \n'; }],
  ['openai.responses', 'tool-call-answered', (b) => { b.input.pop(); b.input.push({ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'next one' }] }); }],
  ['openai.responses', 'tool-result-has-call', (b) => { b.input[4].call_id = 'k9'; b.input.push({ type: 'function_call_output', call_id: 'k1', output: 'x' }); }],
  ['openai.responses', 'tool-result-once', (b) => { b.input.push(clone(b.input[4])); }],
  ['openai.responses', 'thinking-placement', (b) => { b.input.splice(3, 1); b.input.push({ type: 'reasoning', id: 'rs_2', summary: [] }); }],
  ['openai.responses', 'thinking-placement', (b) => { b.input[1].content.push({ type: 'reasoning', text: 'x' }); }],
  ['openai.responses', 'image-media-type', (b) => { b.input[1].content[1].image_url = `data:image/tiff;base64,${PNG}`; }],
  ['openai.responses', 'ends-on-user-side', (b) => { b.input.push({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'done', annotations: [] }] }); }],
  ['openai.responses', 'request-once', (b) => { b.input.splice(1, 0, { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Goal: list the files please' }] }); }],

  ['anthropic.messages', 'roles', (b) => { b.messages[0].role = 'system'; }],
  ['anthropic.messages', 'first-message', (b) => { b.messages.unshift({ role: 'assistant', content: 'hello there' }); }],
  ['anthropic.messages', 'alternation', (b) => { b.messages.splice(1, 0, { role: 'user', content: 'and quickly' }); }],
  ['anthropic.messages', 'no-blank-text', (b) => { b.messages[1].content.splice(1, 0, { type: 'text', text: '\n\n' }); }],
  ['anthropic.messages', 'tool-call-answered', (b) => { b.messages[2].content.shift(); }],
  ['anthropic.messages', 'tool-results-first', (b) => { b.messages[2].content.reverse(); }],
  ['anthropic.messages', 'tool-result-has-call', (b) => { b.messages[2].content.push({ type: 'tool_result', tool_use_id: 'k9', content: 'x' }); }],
  ['anthropic.messages', 'tool-result-once', (b) => { b.messages[2].content.unshift(clone(b.messages[2].content[0])); }],
  ['anthropic.messages', 'thinking-placement', (b) => { b.messages[0].content.push({ type: 'thinking', thinking: 'x', signature: 's' }); }],
  ['anthropic.messages', 'thinking-signature', (b) => { delete b.messages[1].content[0].signature; }],
  ['anthropic.messages', 'thinking-signature', (b) => { b.messages[1].content[0] = { type: 'redacted_thinking', data: '' }; }],
  ['anthropic.messages', 'thinking-first', (b) => { b.messages[1].content.reverse(); }],
  ['anthropic.messages', 'image-media-type', (b) => { b.messages[0].content[0].source.media_type = 'image/heic'; }],
  ['anthropic.messages', 'image-bytes', (b) => { b.messages[0].content[0].source.data = 'A'.repeat(7 * 1024 * 1024); }],
  ['anthropic.messages', 'image-count', (b) => { for (let i = 0; i < 100; ++i) b.messages[0].content.push(clone(b.messages[0].content[0])); }],
  ['anthropic.messages', 'cache-breakpoints', (b) => { for (const m of b.messages) for (const x of m.content) x.cache_control = { type: 'ephemeral' }; }],
  ['anthropic.messages', 'ends-on-user-side', (b) => { b.messages.push({ role: 'assistant', content: [{ type: 'text', text: 'done' }] }); }],
  ['anthropic.messages', 'request-once', (b) => { b.messages[0].content.unshift({ type: 'text', text: 'Goal: list the files please' }); }],
  ['anthropic.messages', 'user-words-once', (b) => { b.messages[0].content.unshift({ type: 'text', text: 'Goal: list the files please' }); b.messages[2].content.push({ type: 'text', text: 'then run the tests' }); }],

  ['gemini.generate_content', 'roles', (b) => { b.contents[1].role = 'assistant'; }],
  ['gemini.generate_content', 'first-message', (b) => { b.contents.unshift({ role: 'model', parts: [{ text: 'hello there' }] }, { role: 'user', parts: [{ text: 'hi' }] }); }],
  ['gemini.generate_content', 'alternation', (b) => { b.contents.splice(1, 0, { role: 'user', parts: [{ text: 'and quickly' }] }); }],
  ['gemini.generate_content', 'no-blank-text', (b) => { b.contents[0].parts.push({ text: '  ' }); }],
  ['gemini.generate_content', 'tool-call-answered', (b) => { b.contents[2].parts = [{ text: 'what did it say' }]; }],
  ['gemini.generate_content', 'tool-result-has-call', (b) => { b.contents[2].parts.push({ functionResponse: { id: 'k9', name: 'ls', response: {} } }); }],
  ['gemini.generate_content', 'tool-result-once', (b) => { b.contents[2].parts.push(clone(b.contents[2].parts[0])); }],
  ['gemini.generate_content', 'thinking-placement', (b) => { b.contents[0].parts.push({ text: 'x', thought: true }); }],
  ['gemini.generate_content', 'image-media-type', (b) => { b.contents[0].parts[1].inline_data.mime_type = 'image/gif'; }],
  ['gemini.generate_content', 'image-bytes', (b) => { b.contents[0].parts[1].inline_data.data = 'A'.repeat(28 * 1024 * 1024); }],
  ['gemini.generate_content', 'ends-on-user-side', (b) => { b.contents.push({ role: 'model', parts: [{ text: 'done' }] }); }],
  ['gemini.generate_content', 'request-once', (b) => { b.contents[0].parts.unshift({ text: 'Goal: list the files please' }); }],

  ['ai.sdk', 'roles', (b) => { b.messages[0].role = 'developer'; }],
  ['ai.sdk', 'content-parts', (b) => { b.messages[3].content.push({ type: 'text', text: 'x' }); }],
  ['ai.sdk', 'no-blank-text', (b) => { b.messages[1].content[0].text = ''; }],
  ['ai.sdk', 'tool-call-answered', (b) => { b.messages.splice(3, 0, { role: 'user', content: 'go on please' }); }],
  ['ai.sdk', 'tool-result-has-call', (b) => { b.messages[3].content[0].toolCallId = 'k9'; }],
  ['ai.sdk', 'tool-result-once', (b) => { b.messages.push(clone(b.messages[3])); }],
  ['ai.sdk', 'thinking-placement', (b) => { b.messages[1].content.push({ type: 'reasoning', text: 'x' }); }],
  ['ai.sdk', 'image-media-type', (b) => { b.messages[1].content[1].mediaType = 'text/plain'; }],
  ['ai.sdk', 'ends-on-user-side', (b) => { b.messages.push({ role: 'assistant', content: 'done' }); }],
  ['ai.sdk', 'request-once', (b) => { b.messages.splice(1, 0, { role: 'user', content: 'Goal: list the files please' }); }],
];

for (const [format, rule, breakIt] of broken) {
  test(`${format}: ${rule} fires on a request that breaks it`, () => {
    const body = clone(good[format]);
    breakIt(body);
    const rules = check(format, body).map((v) => v.rule);
    assert.ok(rules.includes(rule), `expected ${rule}, got ${JSON.stringify(rules)}`);
  });
}

// The rules that need the session: each passes the request that honours it
// and fires on one that does not.
const { imagesDelivered, thinkingFamily, thinkingReplayed, contextMarked, instructionsKept } = require('./session_rules');

const session = {
  imageList: [{ data: 'iVBORw0KGgoAAAANSUhEUg', artifact: 'art_1' }],
  signatures: { sig_a: 'anthropic', rs_o: 'openai', sig_g: 'gemini' },
  thinkingByCall: {
    k1: { thought: [{ type: 'thinking', provider: 'anthropic', signature: 'sig_a' }] },
    k2: { thought: [{ type: 'thinking', provider: 'openai', id: 'rs_o' }] },
    k3: { thought: [], signature: 'sig_g' },
  },
};

test('images-delivered: native image or placeholder naming the artifact, never nothing', () => {
  const rules = (body) => imagesDelivered('openai.chat', body, session).map((v) => v.rule);
  assert.deepEqual(rules({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUg' } }] }] }), []);
  assert.deepEqual(rules({ messages: [{ role: 'user', content: '[image omitted: artifact art_1]' }] }), []);
  assert.deepEqual(rules({ messages: [{ role: 'user', content: 'look' }] }), ['images-delivered']);
});

test('thinking-family: opaque thinking only to the family that produced it', () => {
  const anthropic = (sig) => ({ messages: [{ role: 'assistant', content: [{ type: 'thinking', thinking: 't', signature: sig }] }] });
  assert.deepEqual(thinkingFamily('anthropic.messages', anthropic('sig_a'), session), []);
  assert.deepEqual(thinkingFamily('anthropic.messages', anthropic('sig_g'), session).map((v) => v.rule), ['thinking-family']);
  assert.deepEqual(thinkingFamily('openai.responses', { input: [{ type: 'reasoning', id: 'sig_a', summary: [] }] }, session).map((v) => v.rule), ['thinking-family']);
  assert.deepEqual(thinkingFamily('gemini.generate_content', { contents: [{ role: 'model', parts: [{ text: 'x', thoughtSignature: 'rs_o' }] }] }, session).map((v) => v.rule), ['thinking-family']);
});

test('thinking-replayed: the answered turn goes back with its thinking', () => {
  const anthropic = (blocks) => ({ messages: [
    { role: 'user', content: 'go on now' },
    { role: 'assistant', content: [...blocks, { type: 'tool_use', id: 'k1', name: 'ls', input: {} }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'k1', content: 'ok' }] },
  ] });
  assert.deepEqual(thinkingReplayed('anthropic.messages', anthropic([{ type: 'thinking', thinking: 't', signature: 'sig_a' }]), session), []);
  assert.deepEqual(thinkingReplayed('anthropic.messages', anthropic([]), session).map((v) => v.rule), ['thinking-replayed']);
  const responses = (items) => ({ input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'go' }] }, ...items,
    { type: 'function_call', call_id: 'k2', name: 'ls', arguments: '{}' }, { type: 'function_call_output', call_id: 'k2', output: 'ok' }] });
  assert.deepEqual(thinkingReplayed('openai.responses', responses([{ type: 'reasoning', id: 'rs_o', summary: [] }]), session), []);
  assert.deepEqual(thinkingReplayed('openai.responses', responses([]), session).map((v) => v.rule), ['thinking-replayed']);
  const gemini = (part) => ({ contents: [{ role: 'user', parts: [{ text: 'go' }] }, { role: 'model', parts: [part] }] });
  assert.deepEqual(thinkingReplayed('gemini.generate_content', gemini({ functionCall: { id: 'k3', name: 'ls', args: {} }, thoughtSignature: 'sig_g' }), session), []);
  assert.deepEqual(thinkingReplayed('gemini.generate_content', gemini({ functionCall: { id: 'k3', name: 'ls', args: {} } }), session).map((v) => v.rule), ['thinking-replayed']);
});

test('context-marked: context only inside its marked block', () => {
  const info = { contexts: [{ text: '<meta>caveat</meta>', source: 'meta' }] };
  const body = (text) => ({ messages: [{ role: 'user', content: [{ type: 'text', text }] }] });
  assert.deepEqual(contextMarked('openai.chat', body('<context source="meta">\n<meta>caveat</meta>\n</context>'), info), []);
  assert.deepEqual(contextMarked('openai.chat', body('<meta>caveat</meta>'), info).map((v) => v.rule), ['context-marked']);
});

test('instructions-kept: every instruction once', () => {
  const info = { instructions: ['Use pnpm always.'] };
  const body = (...texts) => ({ messages: texts.map((content) => ({ role: 'developer', content })) });
  assert.deepEqual(instructionsKept('openai.chat', body('Use pnpm always.'), info), []);
  assert.deepEqual(instructionsKept('openai.chat', body(), info).map((v) => v.rule), ['instructions-kept']);
  assert.deepEqual(instructionsKept('openai.chat', body('Use pnpm always.', 'Use pnpm always.'), info).map((v) => v.rule), ['instructions-kept']);
});
