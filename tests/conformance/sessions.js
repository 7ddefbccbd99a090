'use strict';
// Drives generated sessions through the Node binding and compiles them: the
// shared part of the property test and the SDK type check.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { generate, TOOL_SPECS } = require('./generator');
const { FORMATS } = require('./rules');

const ctxdb = require(path.resolve(__dirname, '..', '..', 'bindings', 'node'));
const { CtxdbError, codes } = ctxdb;

// A database in a fresh temporary directory; close() removes both.
function openDb() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ctxdb-conformance-'));
  const db = ctxdb.open(path.join(dir, 'conformance.ctxdb'));
  return { db, close: () => { db.close(); fs.rmSync(dir, { recursive: true, force: true }); } };
}

// Appends a generated session; returns its info (see generator.js) plus the
// artifact ids its images were stored as.
function load(db, seed) {
  const { steps, info } = generate(seed);
  const sid = `ses_${seed}`;
  db.createSession({ id: sid, agentId: 'conformance' });
  for (const step of steps) {
    if (step.op === 'append') db.appendMany(sid, step.events);
    else if (step.op === 'compact') {
      try {
        info.compaction = db.compact(sid, { policy: { keep_recent_tokens: 200 } }).status;
      } catch (err) {
        if (!(err instanceof CtxdbError)) throw err;
        info.compaction = `failed: ${err.codeName}: ${err.message}`;
      }
    } else if (step.op === 'fork') {
      db.fork(sid, step.at, { name: step.name });
      db.appendMany(sid, step.events);
      info.forkBranch = step.name;
    }
  }
  info.sessionId = sid;
  // The images in append order, each with the artifact it was stored as.
  const artifacts = [];
  for (const ev of db.events(sid)) {
    for (const b of (ev.payload && Array.isArray(ev.payload.content) ? ev.payload.content : [])) {
      if (b.type === 'image') artifacts.push(b.artifact_id || '(inline)');
    }
  }
  info.imageList = info.images.map((data, i) => ({ data, artifact: artifacts[i] || '(not stored)' }));
  return info;
}

function request(info, extra = {}) {
  return {
    session_id: info.sessionId,
    max_tokens: 1000000,
    instructions: [{ kind: 'system', text: 'You are a careful coding agent.' },
      { kind: 'developer', text: 'Answer in short sentences.' }],
    tools: TOOL_SPECS,
    ...extra,
  };
}

// The formats this build converts to: a format it does not know is refused
// as INVALID_ARG naming it.
function availableFormats(db, bundle) {
  const out = [];
  for (const f of FORMATS) {
    try {
      db.bundleConvert(bundle, f);
      out.push(f);
    } catch (err) {
      if (!(err instanceof CtxdbError && err.code === codes.INVALID_ARG && err.message.includes(f))) throw err;
    }
  }
  return out;
}

// The compiles a session is put through: [{label, request, expect}], where
// expect is 'ok' (a bundle to check in every format) or the rule that wants
// the compile refused ({rule, mention}).
function compilesFor(info) {
  const out = [];
  const main = request(info);
  if (info.ending === 'answer') {
    out.push({ label: 'main, no new request', request: main, expect: { rule: 'refuses-finished-answer', mention: [info.lastEvent] } });
    out.push({ label: 'main + request', request: { ...main, request: `request ${info.seed}.next: now run the whole suite again` }, expect: 'ok' });
  } else if (info.ending === 'pending') {
    out.push({ label: 'main, calls pending', request: main, expect: { rule: 'refuses-pending-call', mention: info.pendingCalls } });
    const toolResults = info.pendingCalls.map((id, i) => (i % 2 ? { tool_call_id: id, output: 'host ran it' } : { tool_call_id: id, is_error: true, error: 'host refused' }));
    out.push({ label: 'main + tool_results', request: { ...main, tool_results: toolResults }, expect: 'ok', rule: 'accepts-tool-results' });
  } else {
    out.push({ label: 'main', request: main, expect: 'ok' });
  }
  if (info.forkBranch) out.push({ label: `branch ${info.forkBranch}`, request: { ...main, branch_id: info.forkBranch }, expect: 'ok' });
  return out;
}

module.exports = { ctxdb, CtxdbError, codes, openDb, load, request, availableFormats, compilesFor };
