'use strict';
// Handles and iterators that are never closed are freed by their finalizers,
// in whatever order the garbage collector runs them, without a crash; and a
// dropped handle really closes its file.
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { bindingDir, tmpDir } = require('./helpers');

const script = `
const ctxdb = require(${JSON.stringify(bindingDir)});
const path = require('node:path');
const dir = process.argv[1];
const prompt = (text) => ({ type: 'UserPromptSubmitted', actor: 'user', payload: { text } });
const tick = () => new Promise((r) => setImmediate(r));
(async () => {
  let sid;
  for (let round = 0; round < 20; round++) {
    let db = ctxdb.open(path.join(dir, 'f' + (round % 3) + '.ctxdb'));
    const s = db.createSession({ agentId: 'a' });
    sid = s.id;
    db.appendMany(s.id, Array.from({ length: 300 }, (_, i) => prompt(String(i))));
    // Iterators left open mid-page, open across a page, and never started.
    const a = db.events(s.id); a.next();
    const b = db.export(); for (let i = 0; i < 260; i++) b.next();
    db.events(s.id);
    if (round % 2) db.close(); // sometimes closed with iterators open
    db = null;
    globalThis.gc();
    await tick();
  }
  // Every handle and iterator of the loop is gone: no file descriptor of
  // those databases is left open.
  for (let i = 0; i < 3; i++) { globalThis.gc(); await tick(); }
  const fs = require('node:fs');
  const open = fs.readdirSync('/proc/self/fd').map((fd) => {
    try { return fs.readlinkSync('/proc/self/fd/' + fd); } catch { return ''; }
  }).filter((f) => f.startsWith(dir) && /f[0-9][.]ctxdb/.test(f));
  if (open.length) throw new Error('still open after GC: ' + open.join(', '));
  // An async call whose Database object is dropped at once.
  let db = ctxdb.open(path.join(dir, 'async.ctxdb'));
  const s = db.createSession({ agentId: 'a' });
  const p = db.appendManyAsync(s.id, [prompt('x'), prompt('y')]);
  db = null;
  globalThis.gc();
  const r = await p;
  if (r.count !== 2) throw new Error('async result ' + JSON.stringify(r));
  globalThis.gc();
  await tick();
  globalThis.gc();
  const again = ctxdb.open(path.join(dir, 'async.ctxdb'));
  if (again.session(s.id).event_count !== 3) throw new Error('async append lost');
  // Iterators outliving a dropped Database still stream.
  let keep = ctxdb.open(path.join(dir, 'f0.ctxdb'));
  const first = keep.sessions()[0].id;
  const it = keep.events(first);
  keep = null;
  globalThis.gc();
  await tick();
  globalThis.gc();
  let n = 0;
  for (const e of it) n++;
  if (n !== 301) throw new Error('iterator after GC of its Database: ' + n);
  console.log('finalizers ok');
})().catch((e) => { console.error(e); process.exit(1); });
`;

test('finalizers free unclosed handles and iterators without a crash', (t) => {
  const dir = tmpDir(t);
  const out = execFileSync(process.execPath, ['--expose-gc', '-e', script, dir], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  assert.match(out, /finalizers ok/);
});

test('a process that exits with handles and iterators open exits cleanly', (t) => {
  const dir = tmpDir(t);
  const code = `
    const ctxdb = require(${JSON.stringify(bindingDir)});
    const db = ctxdb.open(${JSON.stringify(path.join(dir, 'exit.ctxdb'))});
    const s = db.createSession({ agentId: 'a' });
    const it = db.events(s.id); it.next();
    db.appendManyAsync(s.id, [{ type: 'UserPromptSubmitted', actor: 'u', payload: { text: 'x' } }])
      .then(() => { console.log('bye'); process.exit(0); });
  `;
  const out = execFileSync(process.execPath, ['-e', code], { encoding: 'utf8' });
  assert.match(out, /bye/);
});
