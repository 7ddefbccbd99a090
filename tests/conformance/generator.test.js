'use strict';
// The session generator: deterministic by seed, real PNGs, and sessions
// that hold what the property test claims to cover once appended.
const test = require('node:test');
const assert = require('node:assert/strict');
const zlib = require('node:zlib');
const { generate, png } = require('./generator');
const { openDb, load } = require('./sessions');

test('the same seed gives the same session; another seed another', () => {
  assert.deepEqual(generate(42), generate(42));
  assert.notDeepEqual(generate(42).steps, generate(43).steps);
});

test('png() writes a PNG a decoder reads back', () => {
  const buf = png(3, 2, [10, 20, 30]);
  assert.deepEqual([...buf.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  assert.equal(buf.subarray(12, 16).toString('latin1'), 'IHDR');
  assert.equal(buf.readUInt32BE(16), 3);
  assert.equal(buf.readUInt32BE(20), 2);
  // IDAT: the rows, each a filter byte and 3 bytes a pixel.
  const idatLen = buf.readUInt32BE(33);
  assert.equal(buf.subarray(37, 41).toString('latin1'), 'IDAT');
  const rows = zlib.inflateSync(buf.subarray(41, 41 + idatLen));
  assert.equal(rows.length, 2 * (1 + 3 * 3));
  assert.deepEqual([...rows.subarray(4, 7)], [10, 20, 30]); // pixel (1, 0): the fill colour
  assert.equal(buf.subarray(buf.length - 8, buf.length - 4).toString('latin1'), 'IEND');
});

test('appended sessions hold spills, stored images, thinking, interrupted calls, context, compactions and forks', () => {
  const { db, close } = openDb();
  const seen = { spilled: 0, images: 0, thinking: 0, interrupted: 0, compacted: 0, forks: 0, pending: 0, parallel: 0, errors: 0, instructions: 0, context: 0 };
  try {
    for (let seed = 1; seed <= 60; ++seed) {
      const info = load(db, seed);
      seen.images += info.imageList.filter((i) => i.artifact.startsWith('art_')).length;
      if (info.compaction === 'compacted') seen.compacted += 1;
      if (info.forkBranch) seen.forks += 1;
      if (info.pendingCalls.length) seen.pending += 1;
      const answered = new Set();
      const calls = [];
      for (const ev of db.events(info.sessionId)) {
        const p = ev.payload || {};
        if (p.spill) seen.spilled += 1;
        if (ev.type === 'ToolCallFailed' || p.is_error) seen.errors += 1;
        if (p.tool_call_id) answered.add(p.tool_call_id);
        if (ev.type === 'ContextAdded') seen[p.kind] += 1;
        if (ev.type !== 'AssistantMessageCreated') continue;
        const blocks = p.content || [];
        seen.thinking += blocks.filter((b) => b.type === 'thinking' && (b.signature || b.data || b.encrypted_content)).length;
        const mine = blocks.filter((b) => b.type === 'tool_call');
        if (mine.length > 1) seen.parallel += 1;
        calls.push(...mine.map((b) => b.id));
      }
      if (calls.some((id) => !answered.has(id) && !info.pendingCalls.includes(id))) seen.interrupted += 1;
    }
  } finally {
    close();
  }
  for (const [what, n] of Object.entries(seen)) assert.ok(n > 0, `no session with ${what}: ${JSON.stringify(seen)}`);
});
