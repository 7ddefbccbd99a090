'use strict';
// importTranscript / importTranscriptAsync: another agent's session folder
// imported through the engine's readers (tests/fixtures/transcripts), again
// (nothing changes), and the errors.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { ctxdb, tmpDir, tmpDb, throwsCode } = require('./helpers');

const { codes } = ctxdb;
const FIXTURES = path.join(__dirname, '..', 'fixtures', 'transcripts');

function codexHome(t) {
  const home = path.join(tmpDir(t), '.codex');
  fs.cpSync(path.join(FIXTURES, 'codex'), home, { recursive: true });
  return home;
}

test('a folder imports each file; a malformed one fails alone, naming its line', (t) => {
  const { db } = tmpDb(t);
  const home = codexHome(t);
  const r = db.importTranscript('codex', home);
  assert.equal(r.format, 'codex');
  const files = r.sessions.map((f) => f.file);
  assert.deepEqual(files, [...files].sort());
  const failed = r.sessions.filter((f) => f.status === 'failed');
  assert.equal(failed.length, 1);
  assert.equal(r.failed, 1);
  assert.ok(failed[0].error.includes(`${failed[0].file}:`), failed[0].error);
  const imported = r.sessions.filter((f) => f.status === 'imported');
  assert.equal(r.imported, imported.length);
  assert.equal(imported.length, files.length - 1);
  for (const f of imported) assert.equal(db.session(f.session_id).id, f.session_id);
  assert.equal(imported.reduce((n, f) => n + f.events, 0), db.verify().events);
  assert.equal(db.rebuild({ check: true }).identical, true);
});

test('importTranscriptAsync again changes nothing', async (t) => {
  const { db } = tmpDb(t);
  const home = codexHome(t);
  await db.importTranscriptAsync('codex', home);
  const before = [...db.export({ raw: true })];
  const again = await db.importTranscriptAsync('codex', home, { final: true });
  assert.equal(again.imported, 0);
  assert.equal(again.unchanged, again.sessions.length - 1);
  assert.deepEqual([...db.export({ raw: true })], before);
});

test('errors name what was wrong and change nothing', async (t) => {
  const { db, file } = tmpDb(t);
  const home = codexHome(t);
  db.createSession({ id: 's', agentId: 'a' });
  const before = [...db.export({ raw: true })];
  throwsCode(() => db.importTranscript('aider', home), codes.INVALID_ARG, /unknown format 'aider'/);
  throwsCode(() => db.importTranscript('codex', path.join(home, 'nowhere')), codes.NOT_FOUND,
    /does not exist/);
  await assert.rejects(db.importTranscriptAsync('aider', home),
    (err) => err.code === codes.INVALID_ARG);
  assert.throws(() => db.importTranscript(3, home), TypeError);
  assert.throws(() => db.importTranscript('codex', home, { final: 'yes' }), /options.final/);
  assert.deepEqual([...db.export({ raw: true })], before);
  const ro = ctxdb.open(file, { readOnly: true });
  t.after(() => ro.close());
  throwsCode(() => ro.importTranscript('codex', home), codes.READONLY);
});
