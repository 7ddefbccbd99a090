'use strict';
// Error codes of failed calls, and bad input from the host: always the
// binding's own clear error, never a crash.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { ctxdb, tmpDir, tmpDb, prompt } = require('./helpers');
const { checkAbi, candidates } = require('../../bindings/node/lib/loader');

const { CtxdbError, codes, statuses } = ctxdb;

function isCode(code) {
  return (err) => {
    assert.ok(err instanceof CtxdbError, `expected a CtxdbError, got ${err && err.stack}`);
    assert.ok(err instanceof Error);
    assert.equal(err.name, 'CtxdbError');
    assert.equal(err.code, code);
    assert.equal(typeof err.code, 'string');
    assert.equal(err.codeName, code);
    assert.equal(err.errno, statuses[code.slice('CTXDB_'.length)]);
    assert.ok(err.message.length > 0);
    return true;
  };
}

test('statuses mirror ctxdb.h; codes are their names, as err.code carries them', () => {
  assert.equal(statuses.OK, 0);
  assert.equal(statuses.MISUSE, 1);
  assert.equal(statuses.INVALID_ARG, 2);
  assert.equal(statuses.INVALID_UTF8, 3);
  assert.equal(statuses.INVALID_JSON, 4);
  assert.equal(statuses.NOT_FOUND, 5);
  assert.equal(statuses.CONFLICT, 6);
  assert.equal(statuses.READONLY, 14);
  assert.equal(statuses.NOTADB, 16);
  assert.ok(Object.isFrozen(statuses));
  assert.ok(Object.isFrozen(codes));
  assert.deepEqual(Object.keys(codes), Object.keys(statuses));
  for (const [name, value] of Object.entries(codes)) assert.equal(value, `CTXDB_${name}`);
  assert.equal(ctxdb.codeName(statuses.NOT_FOUND), 'CTXDB_NOT_FOUND');
  assert.equal(ctxdb.codeName(codes.NOT_FOUND), 'CTXDB_NOT_FOUND');
  assert.equal(ctxdb.codeName(99), 'CTXDB_UNKNOWN_99');
  const byNumber = new CtxdbError('m', statuses.BUSY);
  const byName = new CtxdbError('m', codes.BUSY);
  for (const e of [byNumber, byName]) {
    assert.equal(e.code, 'CTXDB_BUSY');
    assert.equal(e.errno, 7);
    assert.equal(e.codeName, 'CTXDB_BUSY');
    assert.match(String(e), /^CtxdbError: m/);
  }
});

test('err.code is what the C ABI says: the name of ctxdb_errstr, the number of the status', (t) => {
  const { db } = tmpDb(t);
  let caught;
  try { db.event('evt_nope'); } catch (e) { caught = e; }
  assert.ok(caught instanceof CtxdbError);
  assert.equal(caught.code, 'CTXDB_NOT_FOUND');
  assert.equal(caught.errno, 5);
});

test('NOT_FOUND: unknown session and event', (t) => {
  const { db } = tmpDb(t);
  assert.throws(() => db.session('ses_nope'), isCode(codes.NOT_FOUND));
  assert.throws(() => db.event('evt_nope'), isCode(codes.NOT_FOUND));
  assert.throws(() => db.append('ses_nope', prompt('x')), isCode(codes.NOT_FOUND));
  assert.throws(() => db.events('ses_nope'), isCode(codes.NOT_FOUND));
});

test('CONFLICT: same id, different content', (t) => {
  const { db } = tmpDb(t);
  const s = db.createSession({ id: 'ses_c', agentId: 'a' });
  assert.throws(() => db.createSession({ id: 'ses_c', agentId: 'a' }), isCode(codes.CONFLICT));
  db.append(s.id, prompt('one', { id: 'evt_same' }));
  assert.throws(() => db.append(s.id, prompt('two', { id: 'evt_same' })), isCode(codes.CONFLICT));
  assert.equal(db.event('evt_same').payload.text, 'one');
});

test('INVALID_ARG and INVALID_JSON from the engine', (t) => {
  const { db } = tmpDb(t);
  const s = db.createSession({ agentId: 'a' });
  // UserPromptSubmitted needs payload.text.
  assert.throws(() => db.append(s.id, { type: 'UserPromptSubmitted', actor: 'user', payload: {} }),
    isCode(codes.INVALID_ARG));
  assert.throws(() => db.append(s.id, '{"type": "UserPromptSubmitted",'), isCode(codes.INVALID_JSON));
  assert.throws(() => ctxdb.open(path.join(tmpDir(t), 'x.ctxdb'), { durability: 'sometimes' }),
    isCode(codes.INVALID_ARG));
  assert.throws(() => ctxdb.open(path.join(tmpDir(t), 'y.ctxdb'), { no_such_option: 1 }),
    isCode(codes.INVALID_ARG));
  assert.throws(() => ctxdb.open(path.join(tmpDir(t), 'z.ctxdb'), { mmap: 'no' }),
    isCode(codes.INVALID_ARG));
  assert.throws(() => ctxdb.open(path.join(tmpDir(t), 'c.ctxdb'), { checkpoint: 'later' }),
    (e) => e.code === codes.INVALID_ARG && /checkpoint/.test(e.message));
  assert.throws(() => ctxdb.open(path.join(tmpDir(t), 'c.ctxdb'), { vfs: 'no-such-vfs' }),
    (e) => e.code === codes.INVALID_ARG && /no-such-vfs/.test(e.message));
});

test('checkpoint: inline or background keeps every event of a WAL-filling batch', (t) => {
  const file = path.join(tmpDir(t), 'c.ctxdb');
  for (const mode of ['inline', 'background']) {
    const db = ctxdb.open(file, { checkpoint: mode });
    const s = db.createSession({ agentId: mode });
    const note = { type: 'Note', actor: 'host', payload: { text: 'x'.repeat(4000) } };
    db.appendMany(s.id, Array(1500).fill(note));
    db.close();
    const ro = ctxdb.open(file, { readOnly: true });
    assert.equal(ro.session(s.id).event_count, 1501);
    ro.close();
  }
});

test('mmap: false reads the same file without a memory map', (t) => {
  const file = path.join(tmpDir(t), 'm.ctxdb');
  const db = ctxdb.open(file);
  db.createSession({ agentId: 'a' });
  db.close();
  const unmapped = ctxdb.open(file, { mmap: false });
  assert.equal(unmapped.sessions().length, 1);
  unmapped.close();
});

test('READONLY: a write on a read_only handle', (t) => {
  const dir = tmpDir(t);
  const file = path.join(dir, 'ro.ctxdb');
  const rw = ctxdb.open(file);
  const s = rw.createSession({ agentId: 'a' });
  rw.close();
  const ro = ctxdb.open(file, { read_only: true });
  t.after(() => ro.close());
  assert.equal(ro.session(s.id).id, s.id); // reads work
  assert.throws(() => ro.append(s.id, prompt('x')), isCode(codes.READONLY));
  assert.throws(() => ro.createSession({ agentId: 'b' }), isCode(codes.READONLY));
  const ro2 = ctxdb.open(file, { readOnly: true });
  assert.throws(() => ro2.appendMany(s.id, [prompt('x')]), isCode(codes.READONLY));
  ro2.close();
});

test('NOTADB: a text file is not a database, and is left untouched', (t) => {
  const file = path.join(tmpDir(t), 'notes.txt');
  const text = 'these are notes, not a database\n'.repeat(100);
  fs.writeFileSync(file, text);
  assert.throws(() => ctxdb.open(file), isCode(codes.NOTADB));
  assert.equal(fs.readFileSync(file, 'utf8'), text);
});

test('MISUSE: every call after close()', (t) => {
  const { db } = tmpDb(t);
  const s = db.createSession({ agentId: 'a' });
  db.close();
  const calls = [
    () => db.sessions(),
    () => db.session(s.id),
    () => db.createSession({ agentId: 'a' }),
    () => db.append(s.id, prompt('x')),
    () => db.appendMany(s.id, [prompt('x')]),
    () => db.event(s.started_event_id),
    () => db.events(s.id),
    () => db.export(),
    () => db.exportNdjson(),
    () => db.verify(),
    () => db.rebuild(),
    () => db.importNdjson(''),
  ];
  for (const c of calls) assert.throws(c, isCode(codes.MISUSE));
});

test('wrong types are TypeError, bad values RangeError', (t) => {
  const { db } = tmpDb(t);
  const s = db.createSession({ agentId: 'a' });
  const type = (fn) => assert.throws(fn, TypeError);
  const range = (fn) => assert.throws(fn, RangeError);

  type(() => ctxdb.open());
  type(() => ctxdb.open(42));
  type(() => ctxdb.open(null));
  type(() => ctxdb.open('a\0b.ctxdb'));
  type(() => ctxdb.open(path.join(tmpDir(t), 'c.ctxdb'), 'read_only'));
  type(() => ctxdb.open(path.join(tmpDir(t), 'c.ctxdb'), { readOnly: 'yes' }));
  type(() => ctxdb.open(path.join(tmpDir(t), 'c.ctxdb'), { busyTimeoutMs: '5' }));
  range(() => ctxdb.open(path.join(tmpDir(t), 'c.ctxdb'), { busyTimeoutMs: -1 }));
  range(() => ctxdb.open(path.join(tmpDir(t), 'c.ctxdb'), { busyTimeoutMs: 1.5 }));

  type(() => db.createSession());
  type(() => db.createSession(null));
  type(() => db.createSession({}));
  type(() => db.createSession({ agentId: 7 }));
  type(() => db.createSession({ agentId: 'a', id: 7 }));
  type(() => db.createSession({ agentId: 'a', meta: 'm' }));
  range(() => db.createSession({ agentId: 'a', meta: { agent_id: 'b' } }));
  range(() => db.createSession({ agentId: 'a', agent_id: 'b' }));

  type(() => db.session());
  type(() => db.session(undefined));
  type(() => db.session(null));
  type(() => db.session({}));
  type(() => db.event(1));
  type(() => db.append(undefined, prompt('x')));
  type(() => db.append(s.id));
  type(() => db.append(s.id, null));
  type(() => db.append(s.id, 42));
  type(() => db.append(s.id, [prompt('x')]));
  type(() => db.append(s.id, { type: 'X', actor: 'a', payload: { n: 10n } })); // BigInt
  const circular = prompt('x');
  circular.payload.self = circular;
  type(() => db.append(s.id, circular));
  type(() => db.appendMany(s.id));
  type(() => db.appendMany(s.id, null));
  type(() => db.events());
  type(() => db.events(s.id, 'all'));
  type(() => db.events(s.id, { fromSeq: '1' }));
  range(() => db.events(s.id, { fromSeq: -1 }));
  range(() => db.events(s.id, { toSeq: 2.5 }));
  range(() => db.events(s.id, { fromSeq: Infinity }));
  type(() => db.events(s.id, { raw: 1 }));
  type(() => db.export('raw'));
  type(() => db.verify(5));
  type(() => db.rebuild(true));
  type(() => db.rebuild({ check: 1 }));
  type(() => db.importNdjson());
  type(() => db.importNdjson({}));
  type(() => db.importNdjson(12));

  // Nothing was written by any of these.
  assert.equal(db.session(s.id).event_count, 1);
});

test('lone surrogates in strings: INVALID_UTF8 before anything is sent', (t) => {
  const { db } = tmpDb(t);
  const s = db.createSession({ agentId: 'a' });
  const utf8 = isCode(codes.INVALID_UTF8);
  assert.throws(() => db.session('ses_\uD800'), utf8);
  assert.throws(() => db.append(s.id, prompt('bad \uDC00 text')), utf8);
  assert.throws(() => db.append(s.id, JSON.stringify(prompt('ok')).replace('ok', '\uD83D')), utf8);
  assert.throws(() => db.appendMany(s.id, [prompt('ok'), prompt('\uDFFF')]), utf8);
  assert.throws(() => db.createSession({ agentId: 'a\uD800' }), utf8);
  assert.throws(() => db.createSession({ agentId: 'a', meta: { k: 'v\uDBFF' } }), utf8);
  assert.throws(() => db.importNdjson('\uD800'), utf8);
  assert.throws(() => ctxdb.open(path.join(tmpDir(t), '\uD800.ctxdb')), utf8);
  // Surrogate pairs and escaped text that merely looks like one are fine.
  assert.equal(db.append(s.id, prompt('pair 😀')).payload.text, 'pair 😀');
  assert.equal(db.append(s.id, prompt('\\ud800')).payload.text, '\\ud800');
  assert.equal(db.session(s.id).event_count, 3);
});

test('the lone-surrogate scan (used where isWellFormed is missing) is exact', () => {
  const { loneSurrogateIndex } = require('../../bindings/node/lib/check');
  const cases = [
    ['', -1], ['plain', -1], ['😀', -1], ['a😀b😀', -1], ['\uD800', 0], ['\uDC00', 0],
    ['ab\uD83D', 2], ['\uDE00x', 0], ['😀\uDE00', 2], ['\uD83D\uD83D\uDE00', 0],
    ['x\uDBFF\uDFFF\uDFFF', 3],
  ];
  for (const [s, i] of cases) {
    assert.equal(loneSurrogateIndex(s), i, JSON.stringify(s));
    if (typeof s.isWellFormed === 'function') assert.equal(s.isWellFormed(), i === -1);
  }
});

test('Buffers with invalid UTF-8 pass through: the engine says INVALID_UTF8', (t) => {
  const { db } = tmpDb(t);
  const s = db.createSession({ agentId: 'a' });
  const json = Buffer.from(JSON.stringify(prompt('AB')));
  const i = json.indexOf('AB');
  json[i] = 0xff; // never valid in UTF-8
  json[i + 1] = 0xc3; // truncated sequence
  const utf8 = isCode(codes.INVALID_UTF8);
  assert.throws(() => db.append(s.id, json), utf8);
  assert.throws(() => db.appendMany(s.id, [prompt('ok'), json]), utf8);
  assert.throws(() => db.importNdjson(Buffer.from([0x7b, 0xff, 0x7d])), utf8);
  assert.equal(db.session(s.id).event_count, 1);
});

test('the loader refuses a library with another ABI', () => {
  assert.throws(() => checkAbi({ abiVersion: () => 2 }, '/x/ctxdb.node'),
    /ABI version 2.*needs ABI version 1/);
  assert.throws(() => checkAbi({}, '/x/ctxdb.node'), /ABI version undefined/);
  const ok = { abiVersion: () => 1 };
  assert.equal(checkAbi(ok, '/x/ctxdb.node'), ok);
  // CTXDB_NODE_ADDON comes first and alone.
  assert.deepEqual(candidates({ CTXDB_NODE_ADDON: '/some/ctxdb.node' }), ['/some/ctxdb.node']);
  assert.match(candidates({})[0], /bindings[\\/]node[\\/]build[\\/]ctxdb\.node$/);
});

test('the native layer itself throws, never crashes, on bad input', () => {
  const native = require('../../bindings/node/lib/native');
  assert.throws(() => new native.Database(), TypeError);
  assert.throws(() => new native.Database(1), TypeError);
  assert.throws(() => native.errstr('x'), TypeError);
  assert.equal(native.errstr(5), 'CTXDB_NOT_FOUND');
  assert.equal(native.headerAbiVersion, native.abiVersion());
  // A method called on a foreign object.
  assert.throws(() => native.Database.prototype.sessionList.call({}), TypeError);
  assert.throws(() => native.Database.prototype.close.call(null), TypeError);
});
