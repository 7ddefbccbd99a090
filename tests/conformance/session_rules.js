'use strict';
// Rules that need to know the session a request was compiled from, not only
// the request: what the log held (images, thinking and who produced it) must
// reach the provider the way it requires.
const { violation } = require('./rules/util');
const { field } = require('./rules/gemini_generate_content');

// images-delivered: every image of the compiled branch reaches the request,
// in the provider's native shape or, when it did not fit, as a placeholder
// naming its artifact (issue rule: images are never silently dropped). The
// native shapes: https://docs.anthropic.com/en/docs/build-with-claude/vision
// (base64 source), https://platform.openai.com/docs/guides/images-vision
// (data URLs), https://ai.google.dev/gemini-api/docs/image-understanding
// (inline_data), https://ai-sdk.dev/docs/foundations/prompts#image-parts.
function imagesDelivered(format, body, info) {
  const text = JSON.stringify(body);
  const out = [];
  info.imageList.forEach(({ artifact, data }) => {
    if (!text.includes(data) && !text.includes(artifact)) {
      out.push(violation('images-delivered', '$', `image artifact ${artifact} is neither in the request nor named by a placeholder`));
    }
  });
  return out;
}

// Opaque reasoning state in the request with the family it belongs to.
function opaqueTokens(format, body) {
  const out = [];
  if (format === 'anthropic.messages') {
    for (const m of body.messages || []) {
      for (const b of Array.isArray(m.content) ? m.content : []) {
        if (b.type === 'thinking') out.push(b.signature);
        if (b.type === 'redacted_thinking') out.push(b.data);
      }
    }
  } else if (format === 'openai.responses') {
    for (const item of body.input || []) if (item.type === 'reasoning') out.push(item.id);
  } else if (format === 'gemini.generate_content') {
    for (const c of body.contents || []) {
      for (const p of Array.isArray(c.parts) ? c.parts : []) {
        const sig = field(p, 'thoughtSignature');
        if (sig !== undefined) out.push(sig);
      }
    }
  }
  return out;
}

const FAMILY = { 'anthropic.messages': 'anthropic', 'openai.responses': 'openai', 'gemini.generate_content': 'gemini' };

// thinking-family: opaque thinking state goes back only to the model family
// that produced it; another family cannot verify it and refuses or
// misreads it (https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking#preserving-thinking-blocks,
// https://platform.openai.com/docs/guides/reasoning#keeping-reasoning-items-in-context,
// https://ai.google.dev/gemini-api/docs/thinking#signatures).
// Google documents one value that is no model's state: a function call no
// Gemini model made (history from another model, or written by the host)
// carries "skip_thought_signature_validator"
// (https://ai.google.dev/gemini-api/docs/thought-signatures).
const GEMINI_NO_SIGNATURE = 'skip_thought_signature_validator';
function thinkingFamily(format, body, info) {
  const out = [];
  for (const token of opaqueTokens(format, body)) {
    if (format === 'gemini.generate_content' && token === GEMINI_NO_SIGNATURE) continue;
    const from = info.signatures[token];
    if (from !== FAMILY[format]) out.push(violation('thinking-family', '$', `opaque thinking ${token} of ${from || 'no known family'} sent to ${format}`));
  }
  return out;
}

// thinking-replayed: in a tool loop, the assistant turn whose calls the
// request answers goes back with its thinking. Anthropic: "you must pass
// thinking blocks back to the API for the last assistant message"
// (https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking#preserving-thinking-blocks);
// Responses: the reasoning items of the current turn's function calls
// (https://platform.openai.com/docs/guides/reasoning#keeping-reasoning-items-in-context);
// Gemini: a functionCall part keeps its thought signature
// (https://ai.google.dev/gemini-api/docs/thinking#signatures).
function thinkingReplayed(format, body, info) {
  const out = [];
  const wanted = (id, family) => {
    const t = info.thinkingByCall[id];
    return t ? t.thought.filter((b) => b.provider === family) : [];
  };
  if (format === 'anthropic.messages') {
    const msgs = body.messages || [];
    const last = msgs[msgs.length - 1];
    const prev = msgs[msgs.length - 2];
    if (!last || !prev || prev.role !== 'assistant' || !Array.isArray(prev.content)) return out;
    if (!Array.isArray(last.content) || !last.content.some((b) => b.type === 'tool_result')) return out;
    const have = new Set(prev.content.filter((b) => b.type === 'thinking' || b.type === 'redacted_thinking').map((b) => b.signature || b.data));
    for (const b of prev.content) {
      if (b.type !== 'tool_use') continue;
      for (const th of wanted(b.id, 'anthropic')) {
        const token = th.signature || th.data;
        if (!have.has(token)) out.push(violation('thinking-replayed', `messages[${msgs.length - 2}]`, `the thinking (${token}) of call ${b.id} is not sent back with it`));
      }
    }
  } else if (format === 'openai.responses') {
    const input = body.input || [];
    let start = 0;
    input.forEach((item, i) => { if ((item.type === 'message' || item.type === undefined) && item.role === 'user') start = i + 1; });
    const before = new Set();
    for (let i = start; i < input.length; ++i) {
      const item = input[i];
      if (item.type === 'reasoning') before.add(item.id);
      if (item.type !== 'function_call') continue;
      for (const th of wanted(item.call_id, 'openai')) {
        if (!before.has(th.id)) out.push(violation('thinking-replayed', `input[${i}]`, `reasoning item ${th.id} of call ${item.call_id} is not sent back before it`));
      }
    }
  } else if (format === 'gemini.generate_content') {
    (body.contents || []).forEach((c, i) => (Array.isArray(c.parts) ? c.parts : []).forEach((p, j) => {
      const fc = field(p, 'functionCall');
      const t = fc && info.thinkingByCall[fc.id];
      if (t && t.signature && field(p, 'thoughtSignature') !== t.signature) {
        out.push(violation('thinking-replayed', `contents[${i}].parts[${j}]`, `functionCall ${fc.id} lost its thought signature`));
      }
    }));
  }
  return out;
}

// Every place a text sits in the request: JSON-escaped, as the body holds it.
function places(body, text) {
  const json = JSON.stringify(body);
  const needle = JSON.stringify(text).slice(1, -1);
  const out = [];
  for (let at = json.indexOf(needle); at !== -1; at = json.indexOf(needle, at + needle.length)) out.push({ json, at });
  return out;
}

// context-marked: context that is not the user speaking (a ContextAdded of
// kind context) reaches the model only inside its marked block
// <context source="…">, never as the user's own words (a user message is what
// the user said: https://platform.openai.com/docs/guides/text#message-roles-and-instruction-following,
// https://docs.anthropic.com/en/api/messages, https://ai.google.dev/api/caching#Content).
function contextMarked(format, body, info) {
  const out = [];
  for (const { text, source } of info.contexts) {
    const marker = JSON.stringify(`<context source="${source}">\n`).slice(1, -1);
    for (const { json, at } of places(body, text)) {
      if (json.slice(at - marker.length, at) !== marker) out.push(violation('context-marked', '$', `context ${JSON.stringify(text)} is in the request without its <context source="${source}"> mark`));
    }
  }
  return out;
}

// instructions-kept: standing instructions (a ContextAdded of kind
// instructions) are never dropped, and each distinct text is sent once.
function instructionsKept(format, body, info) {
  const out = [];
  for (const text of info.instructions) {
    const n = places(body, text).length;
    if (n !== 1) out.push(violation('instructions-kept', '$', `the instructions ${JSON.stringify(text.slice(0, 60))} appear ${n} times in the request, not once`));
  }
  return out;
}

module.exports = { imagesDelivered, thinkingFamily, thinkingReplayed, contextMarked, instructionsKept };
