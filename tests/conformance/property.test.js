'use strict';
// The property test: seeded random sessions appended through the Node
// binding, compiled at several budgets into every format, every output run
// through the rule checker. CONFORMANCE_SEEDS=17 (or 1-50) reruns seeds; a
// failure prints the seed, the compile, the format and the broken rule.
const test = require('node:test');
const assert = require('node:assert/strict');
const { check } = require('./rules');
const { violation } = require('./rules/util');
const { imagesDelivered, thinkingFamily, thinkingReplayed, contextMarked, instructionsKept } = require('./session_rules');
const { CtxdbError, codes, openDb, load, availableFormats, compilesFor } = require('./sessions');

function seeds() {
  const spec = process.env.CONFORMANCE_SEEDS || '1-300';
  const [lo, hi] = spec.split('-').map(Number);
  return Array.from({ length: (hi || lo) - lo + 1 }, (_, i) => lo + i);
}

// Broken rules by "format/rule": {count, seeds: Set, example}; where: the
// seed and the compile ("seed 7 main budget full").
const found = new Map();
function note(format, v, seed, where) {
  const key = `${format}/${v.rule}`;
  if (!found.has(key)) found.set(key, { count: 0, seeds: new Set(), example: `seed ${seed} ${where}: ${v.where}: ${v.message}` });
  const f = found.get(key);
  f.count += 1;
  f.seeds.add(seed);
}

// A compile that must be refused with CONFLICT naming what is wrong.
function expectRefusal(db, info, c) {
  try {
    db.compile(c.request);
  } catch (err) {
    if (!(err instanceof CtxdbError)) throw err;
    const named = c.expect.mention.some((id) => err.message.includes(id));
    if (err.code === codes.CONFLICT && named) return null;
    return violation(c.expect.rule, c.label, `refused as ${err.codeName}, not CONFLICT naming ${c.expect.mention.join(' or ')}: ${err.message}`);
  }
  return violation(c.expect.rule, c.label, 'compiled; it must be refused with CONFLICT');
}

// The bundles of one compile at a full budget and two tighter ones; a
// budget too small for what is always kept is refused as BUDGET.
function bundles(db, c) {
  const full = db.compile(c.request);
  const out = [{ budget: 'full', bundle: full }];
  for (const share of [0.5, 0.25]) {
    const max = Math.max(300, Math.floor(full.budget.used * share));
    try {
      out.push({ budget: max, bundle: db.compile({ ...c.request, max_tokens: max }) });
    } catch (err) {
      if (!(err instanceof CtxdbError && err.code === codes.BUDGET)) throw err;
    }
  }
  return out;
}

function checkOutputs(db, info, c, stats) {
  let list;
  try {
    list = bundles(db, c);
  } catch (err) {
    // compiles: a session that must compile does (reported with the rest,
    // so one refusal does not hide the other findings).
    if (err instanceof CtxdbError) {
      note('compile', violation(c.rule || 'compiles', c.label, `${err.codeName}: ${err.message}`), info.seed, c.label);
      return;
    }
    err.message = `seed ${info.seed} ${c.label}: ${err.message}`;
    throw err;
  }
  if (!stats.formats) stats.formats = availableFormats(db, list[0].bundle);
  const formats = stats.formats;
  for (const { budget, bundle } of list) {
    stats.bundles[budget === 'full' ? 'full' : 'tighter'] += 1;
    for (const format of formats) {
      const body = db.bundleConvert(bundle, format);
      stats.outputs += 1;
      const vs = [...check(format, body), ...contextMarked(format, body, info)];
      // A fork's path holds only the instructions given before its fork point.
      if (c.label.startsWith('main')) vs.push(...instructionsKept(format, body, info));
      if (budget === 'full') {
        // Compiling straight into the format gives what converting the
        // bundle gives (both read the images from the same artifacts).
        if (JSON.stringify(db.compile({ ...c.request, format })) !== JSON.stringify(body)) {
          vs.push(violation('same-through-compile', '$', `compile with format ${format} differs from bundleConvert of the bundle`));
        }
        vs.push(...thinkingFamily(format, body, info));
        if (!info.compacted && c.label.startsWith('main')) vs.push(...imagesDelivered(format, body, info), ...thinkingReplayed(format, body, info));
      }
      for (const v of vs) note(format, v, info.seed, `${c.label} budget ${budget}`);
    }
  }
}

test('random sessions compile to requests every provider accepts', () => {
  const { db, close } = openDb();
  const stats = { sessions: 0, outputs: 0, formats: null, bundles: { full: 0, tighter: 0 }, compactions: {} };
  const started = Date.now();
  try {
    for (const seed of seeds()) {
      const info = load(db, seed);
      stats.sessions += 1;
      if (info.compaction) {
        const status = info.compaction.split(':').slice(0, 2).join(':');
        stats.compactions[status] = (stats.compactions[status] || 0) + 1;
      }
      for (const c of compilesFor(info)) {
        if (c.expect !== 'ok') {
          const v = expectRefusal(db, info, c);
          if (v) note('compile', v, seed, c.label);
          continue;
        }
        checkOutputs(db, info, c, stats);
      }
    }
  } finally {
    close();
  }
  stats.formats = stats.formats || [];

  const lines = [`${stats.sessions} sessions, ${stats.bundles.full} bundles at the full budget and ${stats.bundles.tighter} tighter, ${stats.outputs} outputs in ${stats.formats.join(', ')}, ${Date.now() - started} ms; compactions: ${JSON.stringify(stats.compactions)}`];
  // CONFORMANCE_ALL_SEEDS=1 lists every seed of a broken rule.
  const shown = process.env.CONFORMANCE_ALL_SEEDS ? Infinity : 12;
  const failures = [];
  for (const [key, f] of [...found].sort()) {
    const seedList = [...f.seeds].sort((a, b) => a - b);
    const line = `BROKEN ${key}: ${f.count}x in ${seedList.length} seeds (${seedList.slice(0, shown).join(' ')}${seedList.length > shown ? ' ...' : ''}); e.g. ${f.example}`;
    lines.push(line);
    failures.push(line);
  }
  const missing = ['openai.chat', 'openai.responses', 'anthropic.messages', 'gemini.generate_content', 'ai.sdk'].filter((f) => !stats.formats.includes(f));
  if (stats.formats.length === 0) failures.push('no compile of these seeds succeeded: no output was checked');
  for (const f of stats.formats.length ? missing : []) failures.push(`format ${f} is not compiled to`);
  console.log(lines.join('\n'));
  assert.deepEqual(failures, []);
});
