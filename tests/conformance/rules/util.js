'use strict';
// What every format's checker shares: the violation record, blank-text and
// base64 tests, and the cross-format rule on the user's own words.

// One broken rule: its id (stable, printed with each failure), where in the
// request body (a JSON path) and what is wrong.
function violation(rule, where, message) {
  return { rule, where, message };
}

// no-blank-text, in every format: Anthropic refuses empty and
// whitespace-only text blocks outright ("text content blocks must contain
// non-whitespace text", https://docs.anthropic.com/en/api/messages); the
// other providers take them, but a blank block says nothing and costs
// tokens, so no format gets one.
function isBlank(text) {
  return typeof text !== 'string' || text.trim().length === 0;
}

// Decoded size of a base64 string (without decoding it).
function base64Bytes(data) {
  if (typeof data !== 'string') return 0;
  const clean = data.replace(/\s+/g, '');
  const pad = clean.endsWith('==') ? 2 : clean.endsWith('=') ? 1 : 0;
  return Math.floor((clean.length * 3) / 4) - pad;
}

function isBase64(data) {
  return typeof data === 'string' && data.length > 0 && /^[A-Za-z0-9+/]+={0,2}$/.test(data);
}

// A data: URL as OpenAI takes images inline: {mime, bytes} or null.
function parseDataUrl(url) {
  const m = typeof url === 'string' && /^data:([^;,]+);base64,(.*)$/s.exec(url);
  if (!m) return null;
  return { mime: m[1], data: m[2], bytes: base64Bytes(m[2]), valid: isBase64(m[2]) };
}

// The latest-turn context block the adapters append (DESIGN §5), or a
// ContextAdded at its place (<context source="…">): context, not the user
// speaking.
function isContextBlock(text) {
  return typeof text === 'string' && /^<context( source="[^"]*")?>\n[\s\S]*\n<\/context>$/.test(text);
}

function occurrences(texts, needle) {
  let count = 0;
  for (const t of texts) {
    if (typeof t.text !== 'string') continue;
    for (let at = t.text.indexOf(needle); at !== -1; at = t.text.indexOf(needle, at + needle.length)) count += 1;
  }
  return count;
}

// Checks shared by every format on the texts a request holds, given as
// [{side: 'user'|'assistant'|'system'|'tool', text}] in request order.
//
// request-once: the user's latest words appear once; user-words-once: so
// do the words of every earlier user message. A compiled state injected as
// a fabricated user turn ("Goal: <the prompt>") in front of the real
// prompt makes the model read the request twice, and as if the user had
// said it. Every provider's role model says a user message is what the
// user said: https://platform.openai.com/docs/guides/text#message-roles-and-instruction-following,
// https://docs.anthropic.com/en/api/messages (messages: "user" turns are
// the user's input), https://ai.google.dev/api/caching#Content (role "user").
// Repeats are counted in user turns only: a compaction summary in the
// standing context (system, developer) restates the current task because
// it must cover it, and that is not the user speaking. Texts under 8
// characters are too short to tell a quote from a repeat.
function checkRequestOnce(texts) {
  const out = [];
  const said = texts.filter((t) => t.side === 'user' && !isContextBlock(t.text) && !isBlank(t.text)).map((t) => t.text.trim());
  const last = said[said.length - 1];
  const seen = new Set();
  for (const words of said) {
    if (words.length < 8 || seen.has(words)) continue;
    seen.add(words);
    const count = occurrences(texts.filter((t) => t.side === 'user'), words);
    if (count > 1) {
      const rule = words === last ? 'request-once' : 'user-words-once';
      out.push(violation(rule, '$', `the user text ${JSON.stringify(words.slice(0, 60))} appears ${count} times in the request`));
    }
  }
  return out;
}

module.exports = {
  violation, isBlank, base64Bytes, isBase64, parseDataUrl, isContextBlock, checkRequestOnce,
};
