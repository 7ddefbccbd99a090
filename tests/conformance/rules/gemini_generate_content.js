'use strict';
// gemini.generate_content: the body of a generateContent request
// ({contents, system_instruction?, tools?}). Reference:
// https://ai.google.dev/api/generate-content#request-body. The REST API is
// protobuf JSON, which takes a field by its proto name or its lowerCamelCase
// name (https://protobuf.dev/programming-guides/json/): both spellings are
// read here (inline_data / inlineData, ...).
const { violation, isBlank, base64Bytes, isBase64, checkRequestOnce } = require('./util');

// https://ai.google.dev/gemini-api/docs/image-understanding: PNG, JPEG,
// WEBP, HEIC, HEIF; up to 3,600 images per request; inline data only while
// the whole request stays under 20 MB.
const IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/webp', 'image/heic', 'image/heif']);
const MAX_IMAGES = 3600;
const MAX_INLINE_BYTES = 20 * 1024 * 1024;

function field(obj, camel) {
  if (!obj || typeof obj !== 'object') return undefined;
  if (obj[camel] !== undefined) return obj[camel];
  return obj[camel.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)];
}

function partsOf(content) {
  const parts = field(content, 'parts');
  return Array.isArray(parts) ? parts : [];
}

// Every inline image with its path, those inside functionResponse parts too.
function inlineImages(body, contents) {
  const out = [];
  contents.forEach((c, i) => partsOf(c).forEach((p, j) => {
    const d = field(p, 'inlineData');
    if (d) out.push({ d, where: `contents[${i}].parts[${j}]` });
    const r = field(p, 'functionResponse');
    (r && Array.isArray(r.parts) ? r.parts : []).forEach((q, k) => {
      const e = field(q, 'inlineData');
      if (e) out.push({ d: e, where: `contents[${i}].parts[${j}].functionResponse.parts[${k}]` });
    });
  }));
  return out;
}

// roles: "Must be either 'user' or 'model'" (https://ai.google.dev/api/caching#Content).
// first-message / alternation: a conversation starts on the user and takes
// turns; a functionCall turn must come "immediately after a user turn or
// after a function response turn"
// (https://ai.google.dev/gemini-api/docs/function-calling).
function checkTurns(contents, out) {
  contents.forEach((c, i) => {
    if (c.role !== 'user' && c.role !== 'model') out.push(violation('roles', `contents[${i}].role`, `role ${JSON.stringify(c.role)} is not user or model`));
    if (i > 0 && c.role === contents[i - 1].role) out.push(violation('alternation', `contents[${i}]`, `two ${c.role} contents in a row`));
  });
  if (contents.length > 0 && contents[0].role !== 'user') out.push(violation('first-message', 'contents[0]', `the first content is ${contents[0].role}`));
}

// no-blank-text: a Content is its ordered parts
// (https://ai.google.dev/api/caching#Content); no content without parts and
// no blank text part.
function checkBlank(body, contents, out) {
  const sys = field(body, 'systemInstruction');
  const all = sys ? [['system_instruction', sys], ...contents.map((c, i) => [`contents[${i}]`, c])] : contents.map((c, i) => [`contents[${i}]`, c]);
  for (const [where, c] of all) {
    const parts = partsOf(c);
    if (parts.length === 0) out.push(violation('no-blank-text', where, 'a content without parts'));
    parts.forEach((p, j) => {
      if (p.text !== undefined && isBlank(p.text) && !field(p, 'thoughtSignature')) out.push(violation('no-blank-text', `${where}.parts[${j}]`, `blank text part ${JSON.stringify(p.text)}`));
    });
  }
}

// tool-call-answered / tool-result-has-call / tool-result-once: "the
// function response ... in the next turn, with role user", one
// functionResponse per functionCall, matched by id when the call has one
// (else by name) (https://ai.google.dev/gemini-api/docs/function-calling).
function checkToolPairs(contents, out) {
  contents.forEach((c, i) => {
    const prev = contents[i - 1];
    const calls = prev && prev.role === 'model' ? partsOf(prev).map((p) => field(p, 'functionCall')).filter(Boolean) : [];
    const open = calls.map((fc) => ({ key: fc.id || fc.name, fc, used: false }));
    partsOf(c).forEach((p, j) => {
      const r = field(p, 'functionResponse');
      if (!r) return;
      const where = `contents[${i}].parts[${j}]`;
      if (c.role !== 'user') out.push(violation('tool-result-has-call', where, 'a functionResponse outside a user content'));
      const key = r.id || r.name;
      const match = open.find((o) => o.key === key && !o.used);
      if (match) match.used = true;
      else if (open.some((o) => o.key === key)) out.push(violation('tool-result-once', where, `a second functionResponse for ${key}`));
      else out.push(violation('tool-result-has-call', where, `functionResponse for ${key}, which the previous model content did not call`));
    });
    if (c.role !== 'model') return;
    const next = contents[i + 1];
    const answered = [];
    if (next && next.role === 'user') for (const p of partsOf(next)) { const r = field(p, 'functionResponse'); if (r) answered.push(r.id || r.name); }
    partsOf(c).forEach((p, j) => {
      const fc = field(p, 'functionCall');
      if (!fc) return;
      const at = answered.indexOf(fc.id || fc.name);
      if (at === -1) out.push(violation('tool-call-answered', `contents[${i}].parts[${j}]`, `functionCall ${fc.id || ''} (${fc.name}) has no functionResponse in the next user content`));
      else answered.splice(at, 1);
    });
  });
}

// thinking-placement: thought parts and thought signatures are the model's
// own, returned in its content as they came
// (https://ai.google.dev/gemini-api/docs/thinking#signatures).
function checkThinking(body, contents, out) {
  contents.forEach((c, i) => partsOf(c).forEach((p, j) => {
    if ((p.thought === true || field(p, 'thoughtSignature') !== undefined) && c.role !== 'model') {
      out.push(violation('thinking-placement', `contents[${i}].parts[${j}]`, `a thought part in a ${c.role} content`));
    }
  }));
  partsOf(field(body, 'systemInstruction')).forEach((p, j) => {
    if (p.thought === true || field(p, 'thoughtSignature') !== undefined) out.push(violation('thinking-placement', `system_instruction.parts[${j}]`, 'a thought part in the system instruction'));
  });
}

function checkImages(body, contents, out) {
  const images = inlineImages(body, contents);
  let total = 0;
  for (const { d, where } of images) {
    const mime = field(d, 'mimeType');
    if (!IMAGE_TYPES.has(mime)) out.push(violation('image-media-type', where, `mime type ${mime} is not one of ${[...IMAGE_TYPES]}`));
    if (!isBase64(d.data)) out.push(violation('image-media-type', where, 'inline data is not base64'));
    total += base64Bytes(d.data);
  }
  if (images.length > MAX_IMAGES) out.push(violation('image-count', 'contents', `${images.length} images, over ${MAX_IMAGES}`));
  if (total > MAX_INLINE_BYTES) out.push(violation('image-bytes', 'contents', `${total} inline image bytes, over ${MAX_INLINE_BYTES}`));
}

// ends-on-user-side: the last content is the user's (the request, or the
// function responses the model answers next,
// https://ai.google.dev/gemini-api/docs/function-calling); a final model
// content asks the model to continue its own answer.
function checkEnd(contents, out) {
  const last = contents[contents.length - 1];
  if (!last) out.push(violation('ends-on-user-side', 'contents', 'no contents'));
  else if (last.role !== 'user') out.push(violation('ends-on-user-side', `contents[${contents.length - 1}]`, `the request ends on a ${last.role} content`));
}

function texts(body, contents) {
  const out = [];
  for (const p of partsOf(field(body, 'systemInstruction'))) if (typeof p.text === 'string') out.push({ side: 'system', text: p.text });
  for (const c of contents) {
    for (const p of partsOf(c)) {
      if (typeof p.text === 'string' && p.thought !== true) out.push({ side: c.role === 'model' ? 'assistant' : 'user', text: p.text });
      const r = field(p, 'functionResponse');
      if (r && r.response) out.push({ side: 'tool', text: JSON.stringify(r.response) });
    }
  }
  return out;
}

function check(body) {
  const out = [];
  const contents = body && Array.isArray(body.contents) ? body.contents : null;
  if (!contents) return [violation('shape', 'contents', 'the body has no contents array')];
  checkTurns(contents, out);
  checkBlank(body, contents, out);
  checkToolPairs(contents, out);
  checkThinking(body, contents, out);
  checkImages(body, contents, out);
  checkEnd(contents, out);
  out.push(...checkRequestOnce(texts(body, contents)));
  return out;
}

module.exports = { check, field };
