'use strict';
// The streaming artifact put: Database.artifactWriter() -> ArtifactWriter.
const test = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const path = require('node:path');
const { ctxdb, tmpDir, tmpDb, throwsCode } = require('./helpers');

const CHUNK = 256 * 1024;

function content(n) {
  const line = Buffer.from('000000 build step ok, nothing to see here\n');
  return Buffer.alloc(n, line);
}

test('pieces written stream into the artifact a put of the whole gives', (t) => {
  const { db } = tmpDb(t);
  const data = content(3 * CHUNK + 17);
  const w = db.artifactWriter({ kind: 'command_log', name: 'build.log' });
  assert.ok(w instanceof ctxdb.ArtifactWriter);
  for (let at = 0; at < data.length; at += 100000) w.write(data.subarray(at, at + 100000));
  const art = w.commit();
  assert.equal(art.id, 'art_' + crypto.createHash('sha256').update(data).digest('hex'));
  assert.equal(art.raw_size, data.length);
  assert.equal(art.chunk_count, 4);
  assert.equal(art.kind, 'command_log');
  assert.deepEqual(w.artifact, art);
  assert.ok(w.closed);
  assert.ok(db.readArtifact(art.id).equals(data));
  assert.equal(db.putArtifact(data).id, art.id);
  assert.equal(db.artifacts().length, 1);
  const s = db.artifactWriter().write('ünï\n').write(new Uint8Array([0xff])).commit();
  assert.ok(db.readArtifact(s.id).equals(Buffer.concat([Buffer.from('ünï\n'), Buffer.from([0xff])])));
});

test('abort stores nothing; other calls are refused while a writer is open', (t) => {
  const { db } = tmpDb(t);
  const w = db.artifactWriter({ eventId: 'evt_gone' });
  w.write(content(2 * CHUNK));
  throwsCode(() => db.artifacts(), ctxdb.codes.MISUSE);
  throwsCode(() => db.artifactWriter(), ctxdb.codes.MISUSE);
  w.write('more'); // the writer carries on
  w.abort();
  w.abort(); // a no-op once closed
  assert.deepEqual(db.artifacts(), []);
  throwsCode(() => w.write('x'), ctxdb.codes.MISUSE);
  throwsCode(() => w.commit(), ctxdb.codes.MISUSE);
});

test('closing the database rolls an open writer back', (t) => {
  const file = path.join(tmpDir(t), 'c.ctxdb');
  const db = ctxdb.open(file);
  const w = db.artifactWriter();
  w.write(content(2 * CHUNK));
  db.close();
  throwsCode(() => w.write('x'), ctxdb.codes.MISUSE);
  w.abort();
  const again = ctxdb.open(file);
  t.after(() => again.close());
  assert.deepEqual(again.artifacts(), []);
});

test('bad input', (t) => {
  const { db } = tmpDb(t);
  throwsCode(() => db.artifactWriter({ kind: 'movie' }), ctxdb.codes.INVALID_ARG);
  throwsCode(() => db.artifactWriter({ role: '' }), ctxdb.codes.INVALID_ARG);
  assert.throws(() => db.artifactWriter({ kind: 3 }), TypeError);
  assert.throws(() => db.artifactWriter('kind'), TypeError);
  throwsCode(() => db.artifactWriter({ name: 'a\ud800' }), ctxdb.codes.INVALID_UTF8);
  const w = db.artifactWriter();
  assert.throws(() => w.write(42), TypeError);
  assert.throws(() => w.write({}), TypeError);
  throwsCode(() => w.write('a\udc00'), ctxdb.codes.INVALID_UTF8);
  assert.equal(w.commit().raw_size, 0); // the bad writes wrote nothing
  assert.equal(db.artifacts().length, 1);
});

// ---- export / import carry artifacts ----

function spilledSession(db) {
  db.createSession({ id: 's1', agentId: 'a' });
  db.append('s1', { type: 'AssistantMessageCreated', actor: 'assistant',
    payload: { content: [{ type: 'tool_call', id: 'c1', name: 'pytest' }] } });
  let out = '';
  for (let i = 0; i < 40000; i++) out += `test ${String(i).padStart(5, '0')} ... ok\n`;
  db.append('s1', { id: 'e2', type: 'ToolCallFinished', actor: 'tool',
    payload: { tool_call_id: 'c1', output: out } });
  return Buffer.from(out);
}

test('exportNdjson carries the artifacts; importNdjson restores them', (t) => {
  const { db } = tmpDb(t, 'src.ctxdb');
  const out = spilledSession(db);
  const [art] = db.artifacts('s1');
  const text = db.exportNdjson('s1');
  const lines = text.trimEnd().split('\n');
  assert.equal(lines.length, 3 + 1 + art.chunk_count);
  assert.ok(lines[3].startsWith('{"ctxdb_record":"artifact","format":1,'));
  const { db: dst } = tmpDb(t, 'dst.ctxdb');
  assert.deepEqual(dst.importNdjson(text), { imported: 3, skipped: 0 });
  assert.ok(dst.readArtifact(art.id).equals(out));
  assert.equal(dst.verify().ok, true);
  assert.equal(dst.exportNdjson('s1').split('\n').slice(0, 3).join('\n'),
    lines.slice(0, 3).join('\n'));
  throwsCode(() => db.exportNdjson('nope'), ctxdb.codes.NOT_FOUND);
  assert.throws(() => db.exportNdjson(3), TypeError);
});

test('a corrupted chunk imports nothing', (t) => {
  const { db } = tmpDb(t, 'src.ctxdb');
  spilledSession(db);
  const lines = db.exportNdjson().trimEnd().split('\n');
  const rec = JSON.parse(lines[lines.length - 1]);
  const data = Buffer.from(rec.data, 'base64');
  data[5] ^= 0xff;
  rec.data = data.toString('base64');
  lines[lines.length - 1] = JSON.stringify(rec);
  const { db: dst } = tmpDb(t, 'dst.ctxdb');
  throwsCode(() => dst.importNdjson(lines.join('\n')), ctxdb.codes.CORRUPT, /chunk \d+ of artifact art_/);
  assert.deepEqual(dst.artifacts(), []);
  assert.deepEqual(dst.sessions(), []);
});
