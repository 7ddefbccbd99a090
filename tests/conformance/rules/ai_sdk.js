'use strict';
// ai.sdk: the Vercel AI SDK's ModelMessage[] ({messages, tools?}, or the
// array itself). Reference: https://ai-sdk.dev/docs/reference/ai-sdk-core/model-message
const { violation, isBlank, isBase64, parseDataUrl, checkRequestOnce } = require('./util');

const PARTS = {
  system: new Set(),
  user: new Set(['text', 'image', 'file']),
  assistant: new Set(['text', 'file', 'reasoning', 'reasoning-file', 'custom', 'tool-call', 'tool-result',
    'tool-approval-request']),
  tool: new Set(['tool-result', 'tool-approval-response']),
};

function parts(m) {
  return Array.isArray(m.content) ? m.content : [];
}

// roles / content-parts: SystemModelMessage (content a string),
// UserModelMessage (text, image, file parts), AssistantModelMessage (text,
// file, reasoning, tool-call parts, and the SDK's own custom, reasoning-file
// and approval parts), ToolModelMessage (tool-result parts)
// (https://ai-sdk.dev/docs/reference/ai-sdk-core/model-message).
function checkRoles(messages, out) {
  messages.forEach((m, i) => {
    if (!PARTS[m.role]) {
      out.push(violation('roles', `messages[${i}].role`, `role ${JSON.stringify(m.role)}`));
      return;
    }
    if (m.role === 'system' && typeof m.content !== 'string') out.push(violation('content-parts', `messages[${i}].content`, 'a system message holds a string'));
    if (m.role === 'tool' && !Array.isArray(m.content)) out.push(violation('content-parts', `messages[${i}].content`, 'a tool message holds tool-result parts'));
    parts(m).forEach((p, j) => {
      if (!PARTS[m.role].has(p.type)) out.push(violation(p.type === 'reasoning' ? 'thinking-placement' : 'content-parts', `messages[${i}].content[${j}]`, `a ${m.role} message cannot hold a ${JSON.stringify(p.type)} part`));
    });
  });
}

// no-blank-text (see util.isBlank): no blank text parts or contents; a
// provider behind the SDK may refuse them (Anthropic does).
function checkBlank(messages, out) {
  messages.forEach((m, i) => {
    if (typeof m.content === 'string') {
      if (isBlank(m.content)) out.push(violation('no-blank-text', `messages[${i}].content`, 'blank content'));
    } else if (Array.isArray(m.content)) {
      if (m.content.length === 0) out.push(violation('no-blank-text', `messages[${i}].content`, 'empty content'));
      m.content.forEach((p, j) => {
        if (p.type === 'text' && isBlank(p.text)) out.push(violation('no-blank-text', `messages[${i}].content[${j}]`, `blank text part ${JSON.stringify(p.text)}`));
      });
    } else {
      out.push(violation('no-blank-text', `messages[${i}].content`, 'no content'));
    }
  });
}

// tool-call-answered / tool-result-has-call / tool-result-once: "all
// tool-call parts in the conversation history are resolved": a tool-result
// in a tool message after the call, before the conversation moves on
// (https://ai-sdk.dev/docs/troubleshooting/missing-tool-results-error).
function checkToolPairs(messages, out) {
  let open = new Map();
  const known = new Set();
  const answered = new Set();
  const closeOpen = () => {
    for (const [id, c] of open) out.push(violation('tool-call-answered', c.where, `tool-call ${id} (${c.name}) has no tool-result before the conversation moves on`));
    open = new Map();
  };
  messages.forEach((m, i) => {
    if (m.role === 'user' || m.role === 'assistant') closeOpen();
    parts(m).forEach((p, j) => {
      const where = `messages[${i}].content[${j}]`;
      if (p.type === 'tool-call' && m.role === 'assistant') {
        open.set(p.toolCallId, { where, name: p.toolName });
        known.add(p.toolCallId);
      } else if (p.type === 'tool-result' && m.role === 'tool') {
        if (answered.has(p.toolCallId)) out.push(violation('tool-result-once', where, `a second tool-result for ${p.toolCallId}`));
        else if (!known.has(p.toolCallId)) out.push(violation('tool-result-has-call', where, `tool-result for ${JSON.stringify(p.toolCallId)} without an earlier tool-call`));
        answered.add(p.toolCallId);
        open.delete(p.toolCallId);
      }
    });
  });
  closeOpen();
}

// Image parts: {type: 'image', image: base64 | data URL | URL, mediaType?}
// and image files {type: 'file', data, mediaType: 'image/…'}
// (https://ai-sdk.dev/docs/foundations/prompts#image-parts).
function checkImages(messages, out) {
  messages.forEach((m, i) => parts(m).forEach((p, j) => {
    const where = `messages[${i}].content[${j}]`;
    const data = p.type === 'image' ? p.image : p.type === 'file' ? p.data : undefined;
    if (data === undefined) return;
    if (p.type === 'file' && !(typeof p.mediaType === 'string' && p.mediaType.length > 0)) out.push(violation('image-media-type', where, 'a file part needs its mediaType'));
    if (p.mediaType !== undefined && p.type === 'image' && !/^image\//.test(p.mediaType)) out.push(violation('image-media-type', where, `image mediaType ${p.mediaType}`));
    const url = parseDataUrl(data);
    const ok = typeof data === 'string' && (isBase64(data) || (url && url.valid) || /^https?:\/\//.test(data));
    if (!ok) out.push(violation('image-media-type', where, 'image data is neither base64, a data URL nor a URL'));
  }));
}

// ends-on-user-side: the last message is the user's request or the tool
// results the model answers next (https://ai-sdk.dev/docs/foundations/prompts#tool-messages);
// a final assistant message would be a prefill.
function checkEnd(messages, out) {
  const last = messages[messages.length - 1];
  if (!last) out.push(violation('ends-on-user-side', 'messages', 'no messages'));
  else if (last.role !== 'user' && last.role !== 'tool') out.push(violation('ends-on-user-side', `messages[${messages.length - 1}]`, `the request ends on a ${last.role} message`));
}

function texts(messages) {
  const out = [];
  for (const m of messages) {
    if (typeof m.content === 'string') out.push({ side: m.role, text: m.content });
    for (const p of parts(m)) {
      if (p.type === 'text') out.push({ side: m.role, text: p.text });
      if (p.type === 'tool-result' && p.output && typeof p.output.value === 'string') out.push({ side: 'tool', text: p.output.value });
    }
  }
  return out;
}

function check(body) {
  const messages = Array.isArray(body) ? body : body && Array.isArray(body.messages) ? body.messages : null;
  if (!messages) return [violation('shape', 'messages', 'the body is neither a ModelMessage[] nor {messages}')];
  const out = [];
  checkRoles(messages, out);
  checkBlank(messages, out);
  checkToolPairs(messages, out);
  checkImages(messages, out);
  checkEnd(messages, out);
  out.push(...checkRequestOnce(texts(messages)));
  return out;
}

module.exports = { check };
