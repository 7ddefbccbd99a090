'use strict';
// Shared helpers of the Node binding's tests (not a test file itself).
// The binding is loaded from the source tree; the addon from
// $CTXDB_NODE_ADDON (CTest sets it) or the loader's default places.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const assert = require('node:assert/strict');

const bindingDir = path.resolve(__dirname, '..', '..', 'bindings', 'node');
const ctxdb = require(bindingDir);

// A fresh temporary directory, removed when the test ends.
function tmpDir(t) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ctxdb-node-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

// A database in a fresh temporary directory, closed when the test ends.
function tmpDb(t, name = 'test.ctxdb', config) {
  const file = path.join(tmpDir(t), name);
  const db = ctxdb.open(file, config);
  t.after(() => db.close());
  return { db, file };
}

function prompt(text, extra = {}) {
  return { type: 'UserPromptSubmitted', actor: 'user', payload: { text }, ...extra };
}

function fileRead(p) {
  return { type: 'FileRead', actor: 'agent', payload: { path: p } };
}

// Asserts that fn throws a CtxdbError with this code (and a message
// matching pattern, when given).
function throwsCode(fn, code, pattern) {
  assert.throws(fn, (err) => {
    assert.ok(err instanceof ctxdb.CtxdbError, `not a CtxdbError: ${err}`);
    assert.equal(err.code, code);
    if (pattern) assert.match(err.message, pattern);
    return true;
  });
}

// What verify of every session (and rebuild --check) says of a file
// without artifacts.
const NO_ARTIFACTS = { ok: true, mode: 'quick', artifacts: 0, chunks: 0, bytes: 0 };

module.exports = { ctxdb, bindingDir, tmpDir, tmpDb, prompt, fileRead, throwsCode, NO_ARTIFACTS };
