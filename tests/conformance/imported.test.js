'use strict';
// Other agents' sessions, imported: every fixture folder of
// tests/fixtures/transcripts/ is imported through the Node binding, and
// every session it gives is verified, rebuilt, compiled into every format
// and run through the rule checker, then compacted and compiled again.
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { check } = require('./rules');
const { CtxdbError, codes, openDb, availableFormats } = require('./sessions');

const FIXTURES = path.resolve(__dirname, '..', 'fixtures', 'transcripts');
const INSTRUCTIONS = [{ kind: 'system', text: 'You are a careful coding agent.' }];

// The compile request that makes the model's next call for a session as it
// ends: as it is, or with the host's results for calls still pending in its
// last turn, or with a new request after a finished answer. Anything but
// CONFLICT (what those two answer) fails the test.
function requestFor(db, sessionId) {
  const base = { session_id: sessionId, max_tokens: 1000000, instructions: INSTRUCTIONS };
  const pending = db.toolCalls(sessionId).filter((c) => c.status === 'pending');
  const tries = [base, { ...base, request: 'Go on.' }];
  if (pending.length) tries.splice(1, 0, { ...base, tool_results: pending.map((c) => ({ tool_call_id: c.call_id, output: 'done' })) });
  let last;
  for (const request of tries) {
    try {
      db.compile(request);
      return request;
    } catch (err) {
      if (!(err instanceof CtxdbError && err.code === codes.CONFLICT)) throw err;
      last = err;
    }
  }
  throw last;
}

// The broken rules of one compile, in every format, as "format/rule: where: message".
function brokenRules(db, request) {
  const bundle = db.compile(request);
  const found = [];
  for (const format of availableFormats(db, bundle)) {
    for (const v of check(format, db.bundleConvert(bundle, format))) {
      found.push(`${format}/${v.rule}: ${v.where}: ${v.message}`);
    }
  }
  return { bundle, found };
}

for (const format of ['claude-code', 'codex', 'pi']) {
  test(`${format} fixtures import, verify, rebuild and compile to requests every provider accepts`, () => {
    const { db, close } = openDb();
    try {
      const report = db.importTranscript(format, path.join(FIXTURES, format));
      assert.ok(report.imported > 0, `no ${format} session imported: ${JSON.stringify(report)}`);
      for (const s of report.sessions) {
        if (s.status === 'failed') assert.match(s.error, /:\d+: /, `a failure names its line: ${s.error}`);
        else assert.equal(s.status, 'imported', `${s.file}: ${s.status} ${s.error || ''}`);
      }
      const again = db.importTranscript(format, path.join(FIXTURES, format));
      assert.equal(again.imported, 0, 'a second import changes nothing');

      assert.equal(db.verify().ok, true, 'verify passes');
      assert.equal(db.rebuild({ check: true }).identical, true, 'rebuild --check passes');

      const failures = [];
      let compiled = 0;
      const compacted = [];
      for (const { id } of db.sessions()) {
        const request = requestFor(db, id);
        const { bundle, found } = brokenRules(db, request);
        compiled += 1;
        failures.push(...found.map((f) => `${id}: ${f}`));

        // Compacted, a session of some length still compiles to requests the
        // providers accept, and to a smaller bundle. (The long generated
        // sessions of each reader's engine tests compact below a budget.)
        const used = bundle.budget.used;
        if (used < 1000) continue;
        try {
          db.compact(id, { policy: { keep_recent_tokens: Math.floor(used / 8) } });
        } catch (err) {
          if (!(err instanceof CtxdbError)) throw err;
          failures.push(`${id}: compact: ${err.codeName}: ${err.message}`);
          continue;
        }
        const after = brokenRules(db, requestFor(db, id));
        failures.push(...after.found.map((f) => `${id} compacted: ${f}`));
        compacted.push(`${used}->${after.bundle.budget.used}`);
        if (after.bundle.budget.used >= used) failures.push(`${id}: compaction did not shrink the bundle (${used} -> ${after.bundle.budget.used})`);
      }
      console.log(`${format}: ${compiled} sessions compiled; compacted (tokens before->after): ${compacted.join(', ') || 'none'}`);
      assert.ok(compiled > 0);
      assert.deepEqual(failures, []);
    } finally {
      close();
    }
  });
}
