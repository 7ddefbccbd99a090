'use strict';
// openai.chat: the body of a Chat Completions request ({messages, tools?}).
// Reference: https://platform.openai.com/docs/api-reference/chat/create
const { violation, isBlank, parseDataUrl, checkRequestOnce } = require('./util');

const ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool']);
// Content part types per role (the messages parameter's documented unions).
const PARTS = {
  system: new Set(['text']),
  developer: new Set(['text']),
  user: new Set(['text', 'image_url', 'input_audio', 'file']),
  assistant: new Set(['text', 'refusal']),
  tool: new Set(['text']),
};
// Fields a documented assistant message has; anything else (reasoning,
// reasoning_content, thinking) is not part of the Chat Completions input.
const ASSISTANT_FIELDS = new Set(['role', 'content', 'tool_calls', 'name', 'refusal', 'audio',
  'function_call']);

// https://platform.openai.com/docs/guides/images-vision#image-input-requirements:
// PNG, JPEG, WEBP, non-animated GIF; up to 500 images and 50 MB of image
// bytes per request; up to 20 MB per image.
const IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/webp', 'image/gif']);
const MAX_IMAGES = 500;
const MAX_IMAGE_BYTES = 20 * 1024 * 1024;
const MAX_REQUEST_IMAGE_BYTES = 50 * 1024 * 1024;

function parts(message) {
  return Array.isArray(message.content) ? message.content : [];
}

// roles: https://platform.openai.com/docs/api-reference/chat/create#chat-create-messages
// (developer, system, user, assistant, tool; function is deprecated).
function checkRoles(messages, out) {
  messages.forEach((m, i) => {
    if (!ROLES.has(m.role)) {
      out.push(violation('roles', `messages[${i}].role`, `role ${JSON.stringify(m.role)} is not one of ${[...ROLES]}`));
      return;
    }
    parts(m).forEach((p, j) => {
      if (!PARTS[m.role].has(p.type)) {
        out.push(violation('content-parts', `messages[${i}].content[${j}]`, `a ${m.role} message cannot hold a ${JSON.stringify(p.type)} part`));
      }
    });
  });
}

// no-blank-text (see util.isBlank): a message's text must say something.
// A whitespace-only content is no message, and an assistant message needs
// content or tool_calls (https://platform.openai.com/docs/api-reference/chat/create#chat-create-messages
// "content: required unless tool_calls or function_call is specified").
function checkBlank(messages, out) {
  messages.forEach((m, i) => {
    const hasCalls = Array.isArray(m.tool_calls) && m.tool_calls.length > 0;
    if (typeof m.content === 'string') {
      if (isBlank(m.content)) out.push(violation('no-blank-text', `messages[${i}].content`, `the ${m.role} message's content is blank: ${JSON.stringify(m.content)}`));
    } else if (Array.isArray(m.content)) {
      if (m.content.length === 0) out.push(violation('no-blank-text', `messages[${i}].content`, 'empty content array'));
      m.content.forEach((p, j) => {
        if (p.type === 'text' && isBlank(p.text)) out.push(violation('no-blank-text', `messages[${i}].content[${j}]`, `blank text part ${JSON.stringify(p.text)}`));
      });
    } else if (!(m.role === 'assistant' && hasCalls && m.content == null)) {
      out.push(violation('no-blank-text', `messages[${i}].content`, `a ${m.role} message has no content`));
    }
  });
}

// tool-call-answered / tool-result-has-call / tool-result-once:
// https://platform.openai.com/docs/guides/function-calling (the results go
// in tool messages, each with the tool_call_id of its call, after the
// assistant message that made the calls). The API refuses "An assistant
// message with 'tool_calls' must be followed by tool messages responding
// to each 'tool_call_id'" and "messages with role 'tool' must be a
// response to a preceding message with 'tool_calls'".
function checkToolPairs(messages, out) {
  for (let i = 0; i < messages.length; ++i) {
    const m = messages[i];
    if (m.role === 'tool') {
      out.push(violation('tool-result-has-call', `messages[${i}]`, `tool message for ${JSON.stringify(m.tool_call_id)} does not follow an assistant message with tool_calls`));
      continue;
    }
    if (m.role !== 'assistant' || !Array.isArray(m.tool_calls) || m.tool_calls.length === 0) continue;
    const open = new Map(m.tool_calls.map((c) => [c.id, c]));
    const seen = new Set();
    let j = i + 1;
    for (; j < messages.length && messages[j].role === 'tool'; ++j) {
      const id = messages[j].tool_call_id;
      if (seen.has(id)) out.push(violation('tool-result-once', `messages[${j}]`, `a second tool message for ${id}`));
      else if (!open.has(id)) out.push(violation('tool-result-has-call', `messages[${j}]`, `tool message for ${JSON.stringify(id)}, which messages[${i}] did not call`));
      seen.add(id);
    }
    for (const id of open.keys()) {
      if (!seen.has(id)) out.push(violation('tool-call-answered', `messages[${i}].tool_calls`, `call ${id} (${open.get(id).function && open.get(id).function.name}) has no tool message right after it`));
    }
    i = j - 1;
  }
}

// thinking-placement: Chat Completions takes no reasoning input: thinking
// is never sent to it (https://platform.openai.com/docs/guides/reasoning:
// reasoning items are passed back through the Responses API).
function checkThinking(messages, out) {
  messages.forEach((m, i) => {
    if (m.role === 'assistant') {
      for (const k of Object.keys(m)) {
        if (!ASSISTANT_FIELDS.has(k)) out.push(violation('thinking-placement', `messages[${i}].${k}`, `assistant field ${k} is not Chat Completions input`));
      }
    }
    parts(m).forEach((p, j) => {
      if (p.type === 'thinking' || p.type === 'reasoning' || p.type === 'redacted_thinking') {
        out.push(violation('thinking-placement', `messages[${i}].content[${j}]`, `${p.type} part in a chat request`));
      }
    });
  });
}

function checkImages(messages, out) {
  let count = 0;
  let total = 0;
  messages.forEach((m, i) => parts(m).forEach((p, j) => {
    if (p.type !== 'image_url') return;
    count += 1;
    const where = `messages[${i}].content[${j}]`;
    const url = p.image_url && p.image_url.url;
    const data = parseDataUrl(url);
    if (!data) {
      if (typeof url !== 'string' || !/^https?:\/\//.test(url)) out.push(violation('image-media-type', where, 'image_url.url is neither a data URL nor an http(s) URL'));
      return;
    }
    if (!IMAGE_TYPES.has(data.mime)) out.push(violation('image-media-type', where, `image type ${data.mime} is not one of ${[...IMAGE_TYPES]}`));
    if (!data.valid) out.push(violation('image-media-type', where, 'the data URL is not base64'));
    if (data.bytes > MAX_IMAGE_BYTES) out.push(violation('image-bytes', where, `image of ${data.bytes} bytes is over ${MAX_IMAGE_BYTES}`));
    total += data.bytes;
  }));
  if (count > MAX_IMAGES) out.push(violation('image-count', 'messages', `${count} images, over ${MAX_IMAGES}`));
  if (total > MAX_REQUEST_IMAGE_BYTES) out.push(violation('image-bytes', 'messages', `${total} image bytes in the request, over ${MAX_REQUEST_IMAGE_BYTES}`));
}

// ends-on-user-side: the model answers the last message; ending on the
// assistant's finished answer asks it to answer itself. The request ends
// on the user's request or the tool results
// (https://platform.openai.com/docs/guides/function-calling: results are
// sent back and the model answers them).
function checkEnd(messages, out) {
  const last = messages[messages.length - 1];
  if (!last) out.push(violation('ends-on-user-side', 'messages', 'no messages'));
  else if (last.role !== 'user' && last.role !== 'tool') {
    out.push(violation('ends-on-user-side', `messages[${messages.length - 1}]`, `the request ends on a ${last.role} message`));
  }
}

function texts(messages) {
  const out = [];
  for (const m of messages) {
    const side = m.role === 'developer' ? 'system' : m.role;
    if (typeof m.content === 'string') out.push({ side, text: m.content });
    for (const p of parts(m)) if (p.type === 'text') out.push({ side, text: p.text });
  }
  return out;
}

function check(body) {
  const out = [];
  const messages = body && Array.isArray(body.messages) ? body.messages : null;
  if (!messages) return [violation('shape', 'messages', 'the body has no messages array')];
  checkRoles(messages, out);
  checkBlank(messages, out);
  checkToolPairs(messages, out);
  checkThinking(messages, out);
  checkImages(messages, out);
  checkEnd(messages, out);
  out.push(...checkRequestOnce(texts(messages)));
  return out;
}

module.exports = { check, IMAGE_TYPES };
