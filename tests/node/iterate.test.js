'use strict';
// appendMany as one transaction, and the streaming events iterator.
const test = require('node:test');
const assert = require('node:assert/strict');
const { ctxdb, tmpDb, prompt, fileRead } = require('./helpers');

test('appendMany appends in one call and reports the range', (t) => {
  const { db } = tmpDb(t);
  const s = db.createSession({ agentId: 'a' });
  const r = db.appendMany(s.id, [prompt('a'), JSON.stringify(fileRead('/x')), Buffer.from(JSON.stringify(prompt('c')))]);
  assert.equal(r.count, 3);
  assert.equal(r.first_seq, 2);
  assert.equal(r.last_seq, 4);
  assert.equal(db.event(r.last_id).payload.text, 'c');
  assert.deepEqual([...db.events(s.id)].map((e) => e.type),
    ['SessionStarted', 'UserPromptSubmitted', 'FileRead', 'UserPromptSubmitted']);
});

test('appendMany is all or nothing; the error names line 3', (t) => {
  const { db } = tmpDb(t);
  const s = db.createSession({ agentId: 'a' });
  const bad = { type: 'FileRead', actor: 'agent', payload: {} }; // no path
  assert.throws(() => db.appendMany(s.id, [prompt('1'), prompt('2'), bad, prompt('4')]), (err) => {
    assert.ok(err instanceof ctxdb.CtxdbError);
    assert.equal(err.code, ctxdb.codes.INVALID_ARG);
    assert.match(err.message, /line 3\b/);
    return true;
  });
  assert.equal(db.session(s.id).event_count, 1);
  assert.deepEqual([...db.events(s.id)].map((e) => e.seq), [1]);

  // Invalid JSON as the 3rd element: the same.
  assert.throws(() => db.appendMany(s.id, [prompt('1'), prompt('2'), '{"type":']),
    (err) => err.code === ctxdb.codes.INVALID_JSON && /line 3\b/.test(err.message));
  assert.equal(db.session(s.id).event_count, 1);
});

test('appendMany refuses a string element with a newline', (t) => {
  const { db } = tmpDb(t);
  const s = db.createSession({ agentId: 'a' });
  assert.throws(() => db.appendMany(s.id, [prompt('1'), JSON.stringify(prompt('2'), null, 2)]),
    (err) => err instanceof RangeError && /events\[1\]/.test(err.message));
  assert.throws(() => db.appendMany(s.id, [Buffer.from('{\n}')]), RangeError);
  assert.throws(() => db.appendMany(s.id, prompt('x')), TypeError);
  assert.throws(() => db.appendMany(s.id, [prompt('1'), 42]),
    (err) => err instanceof TypeError && /events\[1\]/.test(err.message));
  assert.equal(db.session(s.id).event_count, 1);
});

test('events() streams over more than 600 events (several engine pages)', (t) => {
  const { db } = tmpDb(t);
  const s = db.createSession({ agentId: 'a' });
  const n = 700;
  const events = [];
  for (let i = 0; i < n; i++) events.push(prompt(`prompt ${i}`));
  assert.equal(db.appendMany(s.id, events).count, n);

  const it = db.events(s.id);
  assert.equal(it[Symbol.iterator](), it);
  const first = it.next();
  assert.equal(first.done, false);
  assert.equal(first.value.seq, 1);
  // Rows come page by page as the iteration goes, not as a snapshot taken
  // up front: events appended now, behind the first page, still show up.
  db.append(s.id, prompt('late 1'));
  db.append(s.id, prompt('late 2'));
  const seqs = [first.value.seq];
  for (let r = it.next(); !r.done; r = it.next()) seqs.push(r.value.seq);
  assert.equal(seqs.length, n + 3);
  seqs.forEach((seq, i) => assert.equal(seq, i + 1));
  assert.deepEqual(it.next(), { done: true, value: undefined }); // stays done

  // A range crossing page boundaries.
  const mid = [...db.events(s.id, { fromSeq: 250, toSeq: 520 })];
  assert.equal(mid.length, 271);
  assert.equal(mid[0].seq, 250);
  assert.equal(mid[270].seq, 520);
  assert.equal(mid[10].payload.text, 'prompt 258');

  // export() streams every event in append order.
  let count = 0;
  for (const e of db.export()) {
    count++;
    assert.equal(e.seq, count);
  }
  assert.equal(count, n + 3);
});

test('breaking out of a loop frees the iterator; close() ends it', (t) => {
  const { db } = tmpDb(t);
  const s = db.createSession({ agentId: 'a' });
  db.appendMany(s.id, Array.from({ length: 10 }, (_, i) => prompt(`${i}`)));
  const it = db.events(s.id);
  for (const e of it) {
    if (e.seq === 3) break;
  }
  assert.deepEqual(it.next(), { done: true, value: undefined });
  const it2 = db.events(s.id);
  it2.next();
  it2.close();
  assert.equal(it2.next().done, true);
});

test('events() is also an async iterable; breaking out of for await frees it', async (t) => {
  const { db } = tmpDb(t);
  const s = db.createSession({ agentId: 'a' });
  db.appendMany(s.id, Array.from({ length: 700 }, (_, i) => prompt(`p${i}`)));
  const seqs = [];
  for await (const e of db.events(s.id)) seqs.push(e.seq);
  assert.deepEqual(seqs, Array.from({ length: 701 }, (_, i) => i + 1));
  const it = db.events(s.id);
  for await (const e of it) {
    if (e.seq === 3) break;
  }
  assert.deepEqual(it.next(), { done: true, value: undefined }); // freed by the break
});

test('an iterator of a closed database throws MISUSE', (t) => {
  const { db } = tmpDb(t);
  const s = db.createSession({ agentId: 'a' });
  const it = db.events(s.id);
  assert.equal(it.next().value.seq, 1);
  db.close();
  assert.throws(() => it.next(), (err) => err instanceof ctxdb.CtxdbError &&
    err.code === ctxdb.codes.MISUSE && err.codeName === 'CTXDB_MISUSE');
  it.close(); // fine after the database is gone
});
