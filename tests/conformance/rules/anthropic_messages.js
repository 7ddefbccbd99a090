'use strict';
// anthropic.messages: the body of a Messages request ({system?, messages,
// tools?}). Reference: https://docs.anthropic.com/en/api/messages
const { violation, isBlank, base64Bytes, isBase64, checkRequestOnce } = require('./util');

const BLOCKS = {
  user: new Set(['text', 'image', 'document', 'tool_result', 'search_result']),
  assistant: new Set(['text', 'tool_use', 'thinking', 'redacted_thinking']),
};
// https://docs.anthropic.com/en/docs/build-with-claude/vision: JPEG, PNG,
// GIF, WebP; at most 100 images per API request (the limit for models with
// a 200k-token window; other models take 600); 5 MB per image on the API.
const IMAGE_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);
const MAX_IMAGES = 100;
const MAX_IMAGE_BYTES = 5 * 1024 * 1024;
// https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching:
// "You can define up to 4 cache breakpoints".
const MAX_BREAKPOINTS = 4;

function blocks(message) {
  return Array.isArray(message.content) ? message.content : [];
}

// Every block of the request with its path, nested tool_result content
// included.
function allBlocks(body) {
  const out = [];
  (Array.isArray(body.system) ? body.system : []).forEach((b, i) => out.push({ b, where: `system[${i}]`, role: 'system' }));
  body.messages.forEach((m, i) => blocks(m).forEach((b, j) => {
    out.push({ b, where: `messages[${i}].content[${j}]`, role: m.role });
    if (b.type === 'tool_result' && Array.isArray(b.content)) {
      b.content.forEach((c, k) => out.push({ b: c, where: `messages[${i}].content[${j}].content[${k}]`, role: 'tool' }));
    }
  }));
  return out;
}

// roles, content-parts: messages are user or assistant; the system prompt
// is the top-level system field, never a message
// (https://docs.anthropic.com/en/api/messages#body-messages).
function checkRoles(messages, out) {
  messages.forEach((m, i) => {
    if (!BLOCKS[m.role]) {
      out.push(violation('roles', `messages[${i}].role`, `role ${JSON.stringify(m.role)} is not user or assistant`));
      return;
    }
    blocks(m).forEach((b, j) => {
      if (!BLOCKS[m.role].has(b.type)) out.push(violation(b.type === 'thinking' || b.type === 'redacted_thinking' ? 'thinking-placement' : 'content-parts', `messages[${i}].content[${j}]`, `a ${m.role} message cannot hold a ${JSON.stringify(b.type)} block`));
    });
  });
}

// first-message: the conversation opens with a user turn; the system
// prompt is not a turn (https://docs.anthropic.com/en/api/messages#body-messages,
// https://docs.anthropic.com/en/docs/build-with-claude/working-with-messages).
// alternation: the API is built on alternating user and assistant turns and
// combines consecutive same-role turns into one
// (https://docs.anthropic.com/en/api/messages#body-messages); combined, a
// user turn's tool_result blocks would no longer come first, so ctxdb
// sends strictly alternating turns.
function checkTurns(messages, out) {
  if (messages.length > 0 && messages[0].role !== 'user') {
    out.push(violation('first-message', 'messages[0]', `the first message is ${messages[0].role}`));
  }
  for (let i = 1; i < messages.length; ++i) {
    if (messages[i].role === messages[i - 1].role) out.push(violation('alternation', `messages[${i}]`, `two ${messages[i].role} messages in a row`));
  }
}

// no-blank-text: the API refuses "text content blocks must contain
// non-whitespace text" and empty content
// (https://docs.anthropic.com/en/api/messages#body-messages-content).
function checkBlank(body, out) {
  body.messages.forEach((m, i) => {
    if (typeof m.content === 'string') {
      if (isBlank(m.content)) out.push(violation('no-blank-text', `messages[${i}].content`, 'blank string content'));
    } else if (!Array.isArray(m.content) || m.content.length === 0) {
      out.push(violation('no-blank-text', `messages[${i}].content`, 'a message without content'));
    }
  });
  if (typeof body.system === 'string' && isBlank(body.system)) out.push(violation('no-blank-text', 'system', 'blank system prompt'));
  for (const { b, where } of allBlocks(body)) {
    if (b.type === 'text' && isBlank(b.text)) out.push(violation('no-blank-text', where, `blank text block ${JSON.stringify(b.text)}`));
  }
}

// tool-call-answered / tool-results-first / tool-result-has-call /
// tool-result-once: "tool result blocks must immediately follow their
// corresponding tool use blocks"; "in the user message containing tool
// results, the tool_result blocks must come FIRST in the content array"
// (https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use#handling-results-from-client-tools);
// the API refuses "tool_use ids were found without tool_result blocks
// immediately after" and "unexpected tool_use_id found in tool_result blocks".
function checkToolPairs(messages, out) {
  messages.forEach((m, i) => {
    const prev = messages[i - 1];
    const called = new Map();
    if (prev && prev.role === 'assistant') for (const b of blocks(prev)) if (b.type === 'tool_use') called.set(b.id, b.name);
    if (m.role === 'user') {
      const seen = new Set();
      let pastResults = false;
      blocks(m).forEach((b, j) => {
        if (b.type !== 'tool_result') {
          pastResults = true;
          return;
        }
        const where = `messages[${i}].content[${j}]`;
        if (pastResults) out.push(violation('tool-results-first', where, `tool_result ${b.tool_use_id} comes after another block`));
        if (!called.has(b.tool_use_id)) out.push(violation('tool-result-has-call', where, `tool_result for ${JSON.stringify(b.tool_use_id)}, which the previous assistant message did not call`));
        else if (seen.has(b.tool_use_id)) out.push(violation('tool-result-once', where, `a second tool_result for ${b.tool_use_id}`));
        seen.add(b.tool_use_id);
      });
    }
    if (m.role !== 'assistant') return;
    const next = messages[i + 1];
    const answered = new Set();
    if (next && next.role === 'user') for (const b of blocks(next)) if (b.type === 'tool_result') answered.add(b.tool_use_id);
    blocks(m).forEach((b, j) => {
      if (b.type === 'tool_use' && !answered.has(b.id)) {
        out.push(violation('tool-call-answered', `messages[${i}].content[${j}]`, `tool_use ${b.id} (${b.name}) has no tool_result in the next message`));
      }
    });
  });
}

// thinking-placement / thinking-signature: thinking and redacted_thinking
// blocks are the assistant's, returned as they came: thinking with its
// signature, redacted_thinking with its data
// (https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking#preserving-thinking-blocks).
function checkThinking(body, out) {
  for (const { b, where, role } of allBlocks(body)) {
    if (b.type !== 'thinking' && b.type !== 'redacted_thinking') continue;
    if (role !== 'assistant' && role !== 'user') out.push(violation('thinking-placement', where, `${b.type} block in ${role} content`));
    if (b.type === 'thinking' && (typeof b.thinking !== 'string' || typeof b.signature !== 'string' || b.signature.length === 0)) {
      out.push(violation('thinking-signature', where, 'a thinking block needs its thinking text and signature'));
    }
    if (b.type === 'redacted_thinking' && (typeof b.data !== 'string' || b.data.length === 0)) {
      out.push(violation('thinking-signature', where, 'a redacted_thinking block needs its data'));
    }
  }
}

// thinking-first: with thinking on, the latest assistant turn starts with
// its thinking ("a final assistant message must start with a thinking
// block", https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking#extended-thinking-with-tool-use);
// a turn that holds thinking blocks after other blocks cannot be that turn.
function checkThinkingFirst(messages, out) {
  let at = -1;
  messages.forEach((m, i) => { if (m.role === 'assistant') at = i; });
  if (at === -1) return;
  const list = blocks(messages[at]);
  const thinking = (b) => b.type === 'thinking' || b.type === 'redacted_thinking';
  if (list.some(thinking) && !thinking(list[0])) {
    out.push(violation('thinking-first', `messages[${at}].content[0]`, `the latest assistant turn holds thinking but starts with a ${list[0].type} block`));
  }
}

function checkImages(body, out) {
  let count = 0;
  for (const { b, where } of allBlocks(body)) {
    if (b.type !== 'image') continue;
    count += 1;
    const s = b.source || {};
    if (s.type === 'url' || s.type === 'file') continue;
    if (s.type !== 'base64' || !isBase64(s.data)) {
      out.push(violation('image-media-type', where, 'an image source must be base64 data (or a url/file)'));
      continue;
    }
    if (!IMAGE_TYPES.has(s.media_type)) out.push(violation('image-media-type', where, `media_type ${s.media_type} is not one of ${[...IMAGE_TYPES]}`));
    if (base64Bytes(s.data) > MAX_IMAGE_BYTES) out.push(violation('image-bytes', where, `image of ${base64Bytes(s.data)} bytes, over ${MAX_IMAGE_BYTES}`));
  }
  if (count > MAX_IMAGES) out.push(violation('image-count', 'messages', `${count} images, over ${MAX_IMAGES}`));
}

function checkCache(body, out) {
  const marked = [];
  (Array.isArray(body.tools) ? body.tools : []).forEach((t, i) => { if (t.cache_control) marked.push(`tools[${i}]`); });
  for (const { b, where } of allBlocks(body)) if (b.cache_control) marked.push(where);
  if (marked.length > MAX_BREAKPOINTS) out.push(violation('cache-breakpoints', marked.join(' '), `${marked.length} cache_control breakpoints, over ${MAX_BREAKPOINTS}`));
}

// ends-on-user-side: a final assistant message is a prefill the model
// continues (https://docs.anthropic.com/en/api/messages#body-messages);
// nobody asked for one: the request ends on the user's turn.
function checkEnd(messages, out) {
  const last = messages[messages.length - 1];
  if (!last) out.push(violation('ends-on-user-side', 'messages', 'no messages'));
  else if (last.role !== 'user') out.push(violation('ends-on-user-side', `messages[${messages.length - 1}]`, `the request ends on an ${last.role} message (a prefill)`));
}

function texts(body) {
  const out = [];
  if (typeof body.system === 'string') out.push({ side: 'system', text: body.system });
  for (const { b, role } of allBlocks(body)) if (b.type === 'text') out.push({ side: role, text: b.text });
  for (const m of body.messages) if (typeof m.content === 'string') out.push({ side: m.role, text: m.content });
  for (const m of body.messages) {
    for (const b of blocks(m)) if (b.type === 'tool_result' && typeof b.content === 'string') out.push({ side: 'tool', text: b.content });
  }
  return out;
}

function check(body) {
  const out = [];
  if (!body || !Array.isArray(body.messages)) return [violation('shape', 'messages', 'the body has no messages array')];
  checkRoles(body.messages, out);
  checkTurns(body.messages, out);
  checkBlank(body, out);
  checkToolPairs(body.messages, out);
  checkThinking(body, out);
  checkThinkingFirst(body.messages, out);
  checkImages(body, out);
  checkCache(body, out);
  checkEnd(body.messages, out);
  out.push(...checkRequestOnce(texts(body)));
  return out;
}

module.exports = { check };
