'use strict';
// A seeded generator of agent sessions: multi-turn, parallel tool calls,
// error results, interrupted turns (calls left without a result, then a new
// prompt), images in prompts and tool results (small real PNGs), thinking
// with signatures in the stored shapes of every model family, outputs large
// enough to spill, a compaction and a fork, and context that is not the user
// speaking (ContextAdded: standing instructions, some restated, and context
// before the first prompt, after a prompt, between a call and its results and
// at the very end). The same seed gives the same session.
const zlib = require('node:zlib');

// mulberry32: a small, fast PRNG with a 32-bit state.
function rng(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    chance: (p) => next() < p,
    int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)),
    pick: (items) => items[Math.floor(next() * items.length)],
  };
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; ++k) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(buf) {
  let c = 0xffffffff;
  for (const b of buf) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type, data) {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([len, body, crc]);
}

// A real PNG (8-bit RGB, one filter byte per row) of w x h pixels in one
// colour with a diagonal, so different seeds give different bytes.
function png(w, h, [r, g, b]) {
  const rows = [];
  for (let y = 0; y < h; ++y) {
    const row = Buffer.alloc(1 + 3 * w);
    for (let x = 0; x < w; ++x) {
      const on = x === y % w;
      row[1 + 3 * x] = on ? 255 - r : r;
      row[2 + 3 * x] = on ? 255 - g : g;
      row[3 + 3 * x] = on ? 255 - b : b;
    }
    rows.push(row);
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0);
  ihdr.writeUInt32BE(h, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // colour type RGB
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', zlib.deflateSync(Buffer.concat(rows))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

const WORDS = ['parser', 'cache', 'index', 'retry', 'socket', 'schema', 'buffer', 'token', 'queue',
  'branch', 'render', 'config', 'worker', 'header', 'stream', 'plugin', 'module', 'vector'];
const TOOLS = ['bash', 'read_file', 'grep', 'edit', 'screenshot'];

// The tools a compile request declares (every tool the sessions call).
const TOOL_SPECS = TOOLS.map((name) => ({
  name, description: `the ${name} tool`,
  parameters: { type: 'object', properties: { arg: { type: 'string' } } },
}));

// Generates one session. Returns {steps, info}: steps are
// {op: 'append', events} | {op: 'compact'} | {op: 'fork', at, name, events};
// info says what a checker needs to know of the session (its ending, the
// images on the main branch, thinking by call id, pending calls).
function generate(seed) {
  const r = rng(seed);
  const FAMILIES = ['anthropic', 'openai', 'gemini', 'none'];
  let family = r.pick(FAMILIES);
  const info = {
    seed, families: [family], ending: null, images: [], thinkingByCall: {}, pendingCalls: [], compacted: false,
    forked: false, signatures: {}, instructions: [], contexts: [],
  };
  const steps = [];
  let pending = [];
  let n = 0;
  const id = () => `e${seed}_${++n}`;
  const words = (k) => Array.from({ length: k }, () => r.pick(WORDS)).join(' ');
  const flush = () => {
    if (pending.length) steps.push({ op: 'append', events: pending });
    pending = [];
  };
  const image = () => {
    const data = png(r.int(2, 12), r.int(2, 12), [r.int(0, 255), r.int(0, 255), r.int(0, 255)]).toString('base64');
    return { type: 'image', data, mime_type: 'image/png' };
  };
  const prompt = (turn, withImage) => {
    const payload = { text: `request ${seed}.${turn}: look at the ${words(3)} and fix it` };
    if (withImage) {
      const img = image();
      payload.content = [img];
      info.images.push(img.data);
    }
    return { type: 'UserPromptSubmitted', actor: 'user', id: id(), payload };
  };
  const thinking = () => {
    const sig = `sig_${seed}_${n}_${r.int(0, 1e6)}`;
    if (family === 'anthropic') {
      info.signatures[sig] = 'anthropic';
      if (r.chance(0.2)) return { type: 'thinking', redacted: true, data: sig, provider: 'anthropic' };
      return { type: 'thinking', text: `thinking about the ${words(2)}`, signature: sig, provider: 'anthropic' };
    }
    if (family === 'openai') {
      const rid = `rs_${sig}`;
      info.signatures[rid] = 'openai';
      const summary = [`checked the ${words(2)}`];
      return { type: 'thinking', provider: 'openai', id: rid, summary, encrypted_content: `enc_${sig}`, text: summary.join('\n\n') };
    }
    info.signatures[sig] = 'gemini';
    return { type: 'thinking', provider: 'gemini', text: `thought on the ${words(2)}`, signature: sig };
  };
  const result = (call) => {
    const base = { tool_call_id: call.id, name: call.name };
    const kind = r.next();
    if (kind < 0.1) return { type: 'ToolCallFailed', actor: 'tool', id: id(), payload: { ...base, error: `${call.name}: permission denied`, is_error: true } };
    if (kind < 0.2) return { type: 'ToolCallFinished', actor: 'tool', id: id(), payload: { ...base, output: 'exit status 2', is_error: true, exit_code: 2 } };
    if (kind < 0.3) {
      // Above the spill threshold (16 KiB): stored as a preview and an artifact.
      const lines = Array.from({ length: 900 }, (_, i) => `${i}: ${words(3)}`).join('\n');
      return { type: 'ToolCallFinished', actor: 'tool', id: id(), payload: { ...base, output: lines } };
    }
    if (kind < 0.4) {
      const img = image();
      info.images.push(img.data);
      return { type: 'ToolCallFinished', actor: 'tool', id: id(), payload: { ...base, output: 'screenshot taken', content: [img] } };
    }
    return { type: 'ToolCallFinished', actor: 'tool', id: id(), payload: { ...base, output: `${call.name} done: ${words(4)}` } };
  };
  // ContextAdded, as other agents' transcripts hold it.
  const BASE = `You are agent ${seed}. Keep the ${words(2)} tidy.`;
  const instructions = (text, source) => {
    if (!info.instructions.includes(text)) info.instructions.push(text);
    return { type: 'ContextAdded', actor: 'system', id: id(), payload: { kind: 'instructions', text, source } };
  };
  const context = (source) => {
    const text = `<${source}>the ${words(3)} (${n})</${source}>`;
    info.contexts.push({ text, source });
    return { type: 'ContextAdded', actor: 'system', id: id(), payload: { kind: 'context', text, source } };
  };
  const SOURCES = ['meta', 'command', 'command_output', 'system_reminder', 'task_notification'];
  if (r.chance(0.4)) pending.push(instructions(BASE, 'base_instructions'));
  if (r.chance(0.3)) pending.push(context('environment_context'));
  const assistant = (blocks) => ({
    type: 'AssistantMessageCreated', actor: 'assistant', id: id(),
    payload: { content: blocks, model: `${family}-model`, ...(family !== 'none' ? { provider: family } : {}) },
  });

  const turns = r.int(1, 6);
  const ending = r.pick(['prompt', 'prompt', 'tool_results', 'answer', 'pending']);
  info.ending = ending;
  const compactAt = r.chance(0.3) ? r.int(1, Math.max(1, turns - 1)) : -1;
  const forkAt = r.chance(0.3) ? r.int(0, turns - 1) : -1;
  let forkEvent = null;
  for (let t = 0; t < turns; ++t) {
    const last = t === turns - 1;
    // The host switches models now and then: thinking of several families
    // in one session, each to go back only to its own.
    if (t > 0 && r.chance(0.15)) {
      family = r.pick(FAMILIES);
      info.families.push(family);
    }
    pending.push(prompt(t, r.chance(0.2)));
    // The fork starts after the turn's prompt, or after its first result
    // (then a parallel call's other results stay on main).
    if (t === forkAt && r.chance(0.5)) forkEvent = pending[pending.length - 1].id;
    if (r.chance(0.25)) pending.push(context(r.pick(SOURCES)));
    if (last && ending === 'prompt') break;
    const rounds = r.int(last && ending !== 'answer' ? 1 : 0, 3);
    let interrupted = false;
    for (let k = 0; k < rounds && !interrupted; ++k) {
      const blocks = [];
      if (family !== 'none' && r.chance(0.6)) blocks.push(thinking());
      if (r.chance(0.25)) blocks.push({ type: 'text', text: '\n\n' });
      if (r.chance(0.5)) blocks.push({ type: 'text', text: `I will check the ${words(2)}.` });
      const calls = Array.from({ length: r.int(1, 3) }, () => {
        const call = { type: 'tool_call', id: `call_${seed}_${n}_${r.int(0, 1e6)}`, name: r.pick(TOOLS), args: { arg: words(1) } };
        if (family === 'gemini' && r.chance(0.7)) {
          call.provider = 'gemini';
          call.signature = `sig_${call.id}`;
          info.signatures[call.signature] = 'gemini';
        }
        return call;
      });
      blocks.push(...calls);
      const thought = blocks.filter((b) => b.type === 'thinking');
      for (const c of calls) info.thinkingByCall[c.id] = { thought, signature: c.signature };
      pending.push(assistant(blocks));
      const lastRound = last && k === rounds - 1;
      if (lastRound && ending === 'pending') {
        info.pendingCalls = calls.map((c) => c.id);
        break;
      }
      if (r.chance(0.15)) pending.push(context('system_reminder'));
      // An interrupted turn: some calls never get a result, a new prompt follows.
      interrupted = !last && r.chance(0.15);
      const answered = interrupted ? calls.slice(0, r.int(0, calls.length - 1)) : calls;
      const order = [...answered].sort(() => r.next() - 0.5);
      for (const c of order) pending.push(result(c));
      if (k === 0 && t === forkAt && !forkEvent) forkEvent = pending[pending.length - 1].id;
    }
    if (ending === 'pending' && last) break;
    if (last && ending === 'tool_results') break;
    if (!interrupted && (r.chance(0.8) || (last && ending === 'answer'))) {
      const blocks = [];
      if (family !== 'none' && r.chance(0.3)) blocks.push(thinking());
      blocks.push({ type: 'text', text: `The ${words(2)} is fixed.` });
      pending.push(assistant(blocks));
    }
    if (t === forkAt && !forkEvent) forkEvent = pending[pending.length - 1].id;
    // Instructions restated (deduplicated by the compile) or new.
    if (!last && r.chance(0.15)) pending.push(instructions(r.chance(0.5) ? BASE : `Also mind the ${words(2)}.`, 'developer'));
    if (t === compactAt) {
      flush();
      steps.push({ op: 'compact' });
      info.compacted = true;
    }
  }
  if (r.chance(0.3)) pending.push(context(r.pick(SOURCES)));
  flush();
  const mainEvents = steps.filter((st) => st.op === 'append').flatMap((st) => st.events);
  // The last event that is not context: what a refusal names.
  info.lastEvent = mainEvents.filter((e) => e.type !== 'ContextAdded').pop().id;
  if (forkEvent) {
    info.forked = true;
    steps.push({ op: 'fork', at: forkEvent, name: `alt${seed}`, events: [
      { type: 'UserPromptSubmitted', actor: 'user', id: id(), branch_id: `alt${seed}`, payload: { text: `request ${seed}.fork: try the ${words(3)} instead` } },
    ] });
  }
  return { steps, info };
}

module.exports = { generate, png, rng, TOOL_SPECS };
