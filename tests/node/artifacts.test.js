'use strict';
// The artifact store.
const test = require('node:test');
const assert = require('node:assert/strict');
const { ctxdb, tmpDb, throwsCode } = require('./helpers');

const { NOT_FOUND, INVALID_ARG, INVALID_UTF8 } = ctxdb.codes;
const LOG = 'one\ntwo ERROR here\nthree\n';
const UNKNOWN = `art_${'0'.repeat(64)}`;

function work(t) {
  const { db } = tmpDb(t);
  db.createSession({ id: 'ses_a', eventId: 'a0', agentId: 'a' });
  db.append('ses_a', { type: 'Note', actor: 'a', id: 'a1', payload: {} });
  const art = db.putArtifact(Buffer.from(LOG),
    { kind: 'command_log', name: 'b.log', mime: 'text/plain', eventId: 'a1' });
  return { db, art };
}

test('put returns the artifact; the same bytes are stored once', (t) => {
  const { db, art } = work(t);
  assert.match(art.id, /^art_[0-9a-f]{64}$/);
  assert.deepEqual([art.raw_size, art.line_count, art.kind, art.name, art.mime],
    [LOG.length, 3, 'command_log', 'b.log', 'text/plain']);
  assert.deepEqual(art.refs, [{ event_id: 'a1', role: 'output', session_id: 'ses_a' }]);
  assert.equal(db.putArtifact(LOG).id, art.id); // a string is stored as UTF-8
  assert.equal(db.putArtifact(new Uint8Array(0)).raw_size, 0);
});

test('read, info, list', (t) => {
  const { db, art } = work(t);
  const all = db.readArtifact(art.id);
  assert.ok(Buffer.isBuffer(all));
  assert.equal(all.toString(), LOG);
  assert.equal(db.readArtifact(art.id, { offset: 4, length: 3 }).toString(), 'two');
  assert.equal(db.readArtifact(art.id, { offset: 4 }).toString(), LOG.slice(4));
  assert.deepEqual(db.artifact(art.id), art);
  const bin = db.putArtifact(Buffer.from([0, 0xff, 1]));
  assert.deepEqual([...db.readArtifact(bin.id)], [0, 0xff, 1]);
  assert.deepEqual(db.artifacts().map((a) => a.id), [art.id, bin.id]);
  assert.deepEqual(db.artifacts('ses_a').map((a) => a.id), [art.id]);
});

test('lines, preview, search', (t) => {
  const { db, art } = work(t);
  assert.equal(db.artifactLines(art.id, { first: 2, count: 1 }), 'two ERROR here\n');
  assert.equal(db.artifactLines(art.id, { first: 2 }), 'two ERROR here\nthree\n');
  const p = db.artifactPreview(art.id, { mode: 'tail', lines: 1 });
  assert.deepEqual([p.text, p.omitted_lines], ['three\n', 2]);
  assert.equal(db.artifactPreview(art.id).text, LOG);
  const r = db.artifactSearch(art.id, 'error', { before: 1, ignoreCase: true });
  assert.equal(r.truncated, false);
  assert.equal(r.matches.length, 1);
  const m = r.matches[0];
  assert.deepEqual([m.line, m.column, m.length, m.text], [2, 4, 5, 'two ERROR here']);
  assert.deepEqual(m.before, [{ line: 1, text: 'one' }]);
  assert.deepEqual(db.artifactSearch(art.id, 'error').matches, []);
  assert.equal(db.artifactSearch(art.id, 'e', { maxMatches: 1 }).truncated, true);
});

test('bad input', (t) => {
  const { db, art } = work(t);
  throwsCode(() => db.artifact(UNKNOWN), NOT_FOUND, new RegExp(UNKNOWN));
  throwsCode(() => db.readArtifact(UNKNOWN), NOT_FOUND);
  throwsCode(() => db.artifacts('ses_nope'), NOT_FOUND, /ses_nope/);
  throwsCode(() => db.artifact('art_nope'), INVALID_ARG, /art_nope/);
  throwsCode(() => db.putArtifact('x', { kind: 'nope' }), INVALID_ARG, /kind/);
  assert.throws(() => db.putArtifact(12), TypeError);
  assert.throws(() => db.putArtifact('x', { kind: 7 }), TypeError);
  assert.throws(() => db.readArtifact(art.id, { offset: 1.5 }), RangeError);
  throwsCode(() => db.readArtifact(art.id, { offset: 1000 }), INVALID_ARG, /range/);
  throwsCode(() => db.readArtifact(art.id, { length: -2 }), INVALID_ARG, /length/);
  throwsCode(() => db.artifactLines(art.id, { first: 0 }), INVALID_ARG, /line range/);
  throwsCode(() => db.artifactPreview(art.id, { mode: 'middle' }), INVALID_ARG, /mode/);
  throwsCode(() => db.artifactSearch(art.id, '(unclosed'), INVALID_ARG, /regular expression/);
  throwsCode(() => db.artifactSearch(art.id, 'a', { before: -1 }), INVALID_ARG, /before/);
  throwsCode(() => db.artifactSearch(art.id, '\ud800'), INVALID_UTF8);
  assert.deepEqual(db.artifacts().map((a) => a.id), [art.id]); // nothing was stored
});
