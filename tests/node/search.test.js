'use strict';
// Session search (ctxdb_search).
const test = require('node:test');
const assert = require('node:assert/strict');
const { ctxdb, tmpDb, throwsCode } = require('./helpers');

const { NOT_FOUND, INVALID_ARG } = ctxdb.codes;

function work(t) {
  const { db } = tmpDb(t);
  db.createSession({ id: 's', agentId: 'a' });
  db.createSession({ id: 't', agentId: 'a' });
  const prompt = (text, extra = {}) =>
    ({ type: 'UserPromptSubmitted', actor: 'user', payload: { text }, ...extra });
  const first = db.append('s', prompt('fix the reconnect in src/net/socket.ts'));
  db.append('s', prompt('設定ファイルを読み込みます'));
  db.append('t', prompt('reconnect later', { ts: 5000 }));
  return { db, first };
}

test('words, substrings and Japanese, the match marked', (t) => {
  const { db, first } = work(t);
  const r = db.search('reconnect');
  assert.equal(r.syntax, 'plain');
  assert.deepEqual(r.hits.map((h) => h.session_id).sort(), ['s', 't']);
  assert.ok(r.hits.every((h) => h.snippet.includes('«reconnect»') && h.match === 'words'));
  const path = db.search('net/sock').hits;
  assert.deepEqual(path.map((h) => [h.event_id, h.match]), [[first.id, 'substring']]);
  assert.equal(db.search('読み込み').hits[0].snippet, '設定ファイルを«読み込み»ます');
  // Each CJK character is a word: found from the index, in FTS5 expressions too.
  const kana = db.search('読み OR nothing').hits;
  assert.deepEqual(kana.map((h) => [h.match, h.snippet]), [['words', '設定ファイルを«読み»込みます']]);
});

test('filters', (t) => {
  const { db } = work(t);
  assert.deepEqual(db.search('reconnect', { sessionId: 't' }).hits.map((h) => h.session_id),
    ['t']);
  assert.deepEqual(db.search('reconnect', { role: 'tool' }).hits, []);
  assert.deepEqual(db.search('reconnect', { since: 4000, until: 6000 }).hits.map((h) => h.ts),
    [5000]);
  assert.equal(db.search('reconnect', { limit: 1 }).hits.length, 1);
  assert.equal(db.search('reconnect', { sessionId: 's', branchId: 'main' }).hits.length, 1);
  assert.equal(db.search('reconnect', { type: 'UserPromptSubmitted' }).hits.length, 2);
});

test('a sensitive event is a hit only with allowSensitive', (t) => {
  const { db } = work(t);
  const hidden = db.append('t', { type: 'UserPromptSubmitted', actor: 'user',
    payload: { text: 'reconnect with the vault token' }, visibility: 'private' });
  const shown = db.search('reconnect').hits.map((h) => h.event_id);
  assert.equal(shown.length, 2);
  assert.ok(!shown.includes(hidden.id));
  const allowed = db.search('reconnect', { allowSensitive: true }).hits.map((h) => h.event_id);
  assert.deepEqual(allowed.sort(), [...shown, hidden.id].sort());
  assert.deepEqual(db.search('vault').hits, []);
  assert.throws(() => db.search('x', { allowSensitive: 'yes' }), TypeError);
});

test('not FTS5 syntax is plain words; errors carry codes', (t) => {
  const { db } = work(t);
  assert.equal(db.search('"unbalanced (').syntax, 'plain');
  assert.equal(db.search('reconnect OR zebra').syntax, 'fts');
  throwsCode(() => db.search(''), INVALID_ARG);
  throwsCode(() => db.search('x', { limit: 0 }), INVALID_ARG);
  throwsCode(() => db.search('x', { role: 'robot' }), INVALID_ARG);
  throwsCode(() => db.search('x', { sessionId: 'nope' }), NOT_FOUND);
  throwsCode(() => db.search('x', { sessionId: 's', branchId: 'nope' }), NOT_FOUND);
  assert.throws(() => db.search(42), TypeError);
  assert.throws(() => db.search('x', { limit: 'ten' }), TypeError);
});
