// The ES module entry: default and named imports, here by path and, in a
// child process, by package name through package.json "exports" (require
// too), as a host that installed the package would write them.
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

import ctxdb, { open, CtxdbError, codes, Database, version, abiVersion } from '../../bindings/node/index.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const bindingDir = path.resolve(here, '..', '..', 'bindings', 'node');

function tmpDir(t) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ctxdb-esm-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

test('default and named imports are the CommonJS exports', () => {
  const cjs = createRequire(import.meta.url)('../../bindings/node/index.js');
  assert.equal(ctxdb, cjs);
  assert.equal(open, cjs.open);
  assert.equal(CtxdbError, cjs.CtxdbError);
  assert.equal(Database, cjs.Database);
  assert.equal(codes.NOT_FOUND, 'CTXDB_NOT_FOUND');
  assert.equal(abiVersion(), 1);
  assert.equal(version(), cjs.version());
});

test('a database through the ESM entry', (t) => {
  const db = open(path.join(tmpDir(t), 'esm.ctxdb'));
  t.after(() => db.close());
  const s = db.createSession({ agentId: 'esm' });
  db.append(s.id, { type: 'UserPromptSubmitted', actor: 'user', payload: { text: 'from esm' } });
  assert.deepEqual([...db.events(s.id)].map((e) => e.seq), [1, 2]);
  assert.deepEqual(db.branches(s.id).map((b) => b.kind), ['main']);
  assert.deepEqual([...db.branchPath(s.id)].map((e) => e.seq), [1, 2]);
  assert.throws(() => db.session('ses_none'), (e) => e instanceof CtxdbError && e.code === codes.NOT_FOUND);
});

test("import ctxdb from 'ctxdb' and require('ctxdb') by package name", (t) => {
  const dir = tmpDir(t);
  fs.mkdirSync(path.join(dir, 'node_modules'));
  fs.symlinkSync(bindingDir, path.join(dir, 'node_modules', 'ctxdb'), 'dir');
  const file = path.join(dir, 'x.ctxdb');
  fs.writeFileSync(path.join(dir, 'host.mjs'), `
    import ctxdb from 'ctxdb';
    import { open, codes, CtxdbError } from 'ctxdb';
    const db = open(${JSON.stringify(file)});
    const s = db.createSession({ agentId: 'host' });
    let code;
    try { db.event('evt_none'); } catch (e) { code = e instanceof CtxdbError ? e.code : -1; }
    db.close();
    console.log(JSON.stringify({ same: ctxdb.open === open, agent: s.agent_id, code, nf: codes.NOT_FOUND }));
  `);
  fs.writeFileSync(path.join(dir, 'host.cjs'), `
    const ctxdb = require('ctxdb');
    const db = ctxdb.open(${JSON.stringify(file)});
    console.log(JSON.stringify({ sessions: db.sessions().length, abi: ctxdb.abiVersion() }));
    db.close();
    let blocked = false;
    try { require('ctxdb/lib/native'); } catch (e) { blocked = e.code === 'ERR_PACKAGE_PATH_NOT_EXPORTED'; }
    console.log(JSON.stringify({ blocked }));
  `);
  // The children run elsewhere: hand them the addon as an absolute path.
  const env = { ...process.env };
  if (env.CTXDB_NODE_ADDON) env.CTXDB_NODE_ADDON = path.resolve(env.CTXDB_NODE_ADDON);
  const run = (script) => execFileSync(process.execPath, [script], { cwd: dir, env, encoding: 'utf8' });
  const esm = JSON.parse(run('host.mjs'));
  assert.deepEqual(esm, { same: true, agent: 'host', code: 'CTXDB_NOT_FOUND', nf: 'CTXDB_NOT_FOUND' });
  const [cjsLine, blockedLine] = run('host.cjs').trim().split('\n');
  assert.deepEqual(JSON.parse(cjsLine), { sessions: 1, abi: 1 });
  assert.deepEqual(JSON.parse(blockedLine), { blocked: true });
});
