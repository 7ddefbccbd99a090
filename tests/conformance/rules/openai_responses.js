'use strict';
// openai.responses: the body of a Responses request ({input, tools?}).
// Reference: https://platform.openai.com/docs/api-reference/responses/create
const { violation, isBlank, parseDataUrl, checkRequestOnce } = require('./util');
const { IMAGE_TYPES } = require('./openai_chat');

// Input items ctxdb may emit, and the content part types of a message item
// by role (the input parameter's documented unions).
const ITEMS = new Set(['message', 'function_call', 'function_call_output', 'reasoning']);
const ROLES = new Set(['user', 'system', 'developer', 'assistant']);
const INPUT_PARTS = new Set(['input_text', 'input_image', 'input_file']);
const OUTPUT_PARTS = new Set(['output_text', 'refusal']);
// https://platform.openai.com/docs/guides/images-vision#image-input-requirements
const MAX_IMAGES = 500;
const MAX_IMAGE_BYTES = 20 * 1024 * 1024;
const MAX_REQUEST_IMAGE_BYTES = 50 * 1024 * 1024;

function itemType(item) {
  return item.type === undefined && item.role !== undefined ? 'message' : item.type;
}

function contentParts(item) {
  if (itemType(item) === 'message') return Array.isArray(item.content) ? item.content : [];
  if (itemType(item) === 'function_call_output' && Array.isArray(item.output)) return item.output;
  return [];
}

// roles: https://platform.openai.com/docs/api-reference/responses/create#responses-create-input
function checkItems(input, out) {
  input.forEach((item, i) => {
    const type = itemType(item);
    if (!ITEMS.has(type)) {
      out.push(violation('roles', `input[${i}].type`, `input item type ${JSON.stringify(type)} is not one ctxdb may send`));
      return;
    }
    if (type !== 'message') return;
    if (!ROLES.has(item.role)) out.push(violation('roles', `input[${i}].role`, `role ${JSON.stringify(item.role)}`));
    const allowed = item.role === 'assistant' ? OUTPUT_PARTS : INPUT_PARTS;
    contentParts(item).forEach((p, j) => {
      if (!allowed.has(p.type)) out.push(violation('content-parts', `input[${i}].content[${j}]`, `a ${item.role} message cannot hold a ${JSON.stringify(p.type)} part`));
    });
  });
}

// no-blank-text (see util.isBlank): no empty or whitespace-only text parts,
// no message item without content
// (https://platform.openai.com/docs/api-reference/responses/create#responses-create-input).
function checkBlank(input, out) {
  input.forEach((item, i) => {
    if (itemType(item) !== 'message') return;
    if (typeof item.content === 'string') {
      if (isBlank(item.content)) out.push(violation('no-blank-text', `input[${i}].content`, 'blank content'));
      return;
    }
    if (!Array.isArray(item.content) || item.content.length === 0) {
      out.push(violation('no-blank-text', `input[${i}].content`, 'a message item without content'));
      return;
    }
    item.content.forEach((p, j) => {
      if ((p.type === 'input_text' || p.type === 'output_text') && isBlank(p.text)) {
        out.push(violation('no-blank-text', `input[${i}].content[${j}]`, `blank ${p.type} ${JSON.stringify(p.text)}`));
      }
    });
  });
}

// tool-call-answered / tool-result-has-call / tool-result-once: "for each
// function_call, append a function_call_output item with the same call_id"
// (https://platform.openai.com/docs/guides/function-calling); the API
// refuses "No tool output found for function call <id>" and an output whose
// call is not in the input.
function checkToolPairs(input, out) {
  const calls = new Map();
  const answered = new Set();
  input.forEach((item, i) => {
    const type = itemType(item);
    if (type === 'function_call') {
      if (calls.has(item.call_id)) out.push(violation('tool-call-unique', `input[${i}]`, `call_id ${item.call_id} used twice`));
      calls.set(item.call_id, { at: i, name: item.name });
    } else if (type === 'function_call_output') {
      if (!calls.has(item.call_id)) out.push(violation('tool-result-has-call', `input[${i}]`, `function_call_output for ${JSON.stringify(item.call_id)} without an earlier function_call`));
      else if (answered.has(item.call_id)) out.push(violation('tool-result-once', `input[${i}]`, `a second output for ${item.call_id}`));
      answered.add(item.call_id);
    }
  });
  for (const [id, c] of calls) {
    if (!answered.has(id)) out.push(violation('tool-call-answered', `input[${c.at}]`, `function_call ${id} (${c.name}) has no function_call_output`));
  }
}

// thinking-placement: reasoning is an input item of its own, {type:
// "reasoning", id, summary: [...], encrypted_content?}, passed back before
// the output item it produced
// (https://platform.openai.com/docs/guides/reasoning#keeping-reasoning-items-in-context);
// the API refuses a reasoning item "provided without its required
// following item". Never a content part of a message.
function checkReasoning(input, out) {
  input.forEach((item, i) => {
    contentParts(item).forEach((p, j) => {
      if (p.type === 'thinking' || p.type === 'reasoning' || p.type === 'reasoning_text') {
        out.push(violation('thinking-placement', `input[${i}].content[${j}]`, `${p.type} as a content part`));
      }
    });
    if (itemType(item) !== 'reasoning') return;
    // The item goes back by its id, or with store: false by its
    // encrypted_content alone: Codex CLI, OpenAI's own agent, keeps no
    // reasoning id (openai/codex codex-rs/protocol/src/models.rs,
    // ResponseItem::Reasoning's id is skip_serializing) and sends its
    // reasoning so (https://platform.openai.com/docs/guides/reasoning#encrypted-reasoning-items).
    const byContent = item.id === undefined && typeof item.encrypted_content === 'string';
    if ((typeof item.id !== 'string' && !byContent) || !Array.isArray(item.summary)) {
      out.push(violation('thinking-placement', `input[${i}]`, 'a reasoning item needs summary, and id or encrypted_content'));
    }
    const next = input[i + 1];
    const nextType = next && itemType(next);
    if (!next || !(nextType === 'function_call' || (nextType === 'message' && next.role === 'assistant'))) {
      out.push(violation('thinking-placement', `input[${i}]`, `reasoning item ${item.id} is not followed by the output item it produced`));
    }
  });
}

function checkImages(input, out) {
  let count = 0;
  let total = 0;
  input.forEach((item, i) => contentParts(item).forEach((p, j) => {
    if (p.type !== 'input_image') return;
    count += 1;
    const where = `input[${i}].content[${j}]`;
    const data = parseDataUrl(p.image_url);
    if (!data) {
      if (!p.file_id && !(typeof p.image_url === 'string' && /^https?:\/\//.test(p.image_url))) out.push(violation('image-media-type', where, 'input_image without a data URL, http(s) URL or file_id'));
      return;
    }
    if (!IMAGE_TYPES.has(data.mime)) out.push(violation('image-media-type', where, `image type ${data.mime}`));
    if (!data.valid) out.push(violation('image-media-type', where, 'the data URL is not base64'));
    if (data.bytes > MAX_IMAGE_BYTES) out.push(violation('image-bytes', where, `image of ${data.bytes} bytes`));
    total += data.bytes;
  }));
  if (count > MAX_IMAGES) out.push(violation('image-count', 'input', `${count} images, over ${MAX_IMAGES}`));
  if (total > MAX_REQUEST_IMAGE_BYTES) out.push(violation('image-bytes', 'input', `${total} image bytes in the request`));
}

// ends-on-user-side: the input ends on the user's request or on the
// function_call_output items the model answers next
// (https://platform.openai.com/docs/guides/function-calling: the outputs
// are sent back and the model answers them); a final assistant item asks
// the model to answer itself.
function checkEnd(input, out) {
  const last = input[input.length - 1];
  const type = last && itemType(last);
  if (!last) out.push(violation('ends-on-user-side', 'input', 'no input items'));
  else if (!(type === 'function_call_output' || (type === 'message' && last.role === 'user'))) {
    out.push(violation('ends-on-user-side', `input[${input.length - 1}]`, `the input ends on a ${type}${last.role ? ` (${last.role})` : ''} item`));
  }
}

function texts(input) {
  const out = [];
  for (const item of input) {
    const type = itemType(item);
    if (type === 'message') {
      const side = item.role === 'developer' ? 'system' : item.role;
      if (typeof item.content === 'string') out.push({ side, text: item.content });
      for (const p of contentParts(item)) if (typeof p.text === 'string') out.push({ side, text: p.text });
    } else if (type === 'function_call_output') {
      if (typeof item.output === 'string') out.push({ side: 'tool', text: item.output });
    }
  }
  return out;
}

function check(body) {
  const out = [];
  const input = body && Array.isArray(body.input) ? body.input : null;
  if (!input) return [violation('shape', 'input', 'the body has no input array')];
  checkItems(input, out);
  checkBlank(input, out);
  checkToolPairs(input, out);
  checkReasoning(input, out);
  checkImages(input, out);
  checkEnd(input, out);
  out.push(...checkRequestOnce(texts(input)));
  return out;
}

module.exports = { check };
