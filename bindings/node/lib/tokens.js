'use strict';
// Tokenizer: exact token counts (ctxdb_tokens_count / _encode), identical
// to tiktoken's. The options are checked here; the addon only marshals.
const native = require('./native');
const { call } = require('./errors');
const check = require('./check');

const SPECIALS = { disallow: 0, allow: 1, text: 2 };

// [encoding, text, specials] for the addon from (text, options).
function tokenArgs(text, options) {
  const o = check.optObject(options, 'options') || {};
  const encoding = check.optString(o.encoding, 'options.encoding') ?? 'o200k_base';
  const mode = o.specials ?? 'disallow';
  if (!Object.hasOwn(SPECIALS, mode)) {
    throw new TypeError(
      `options.specials must be 'disallow', 'allow' or 'text', got ${check.describe(mode)}`);
  }
  return [encoding, check.textInput(text, 'text'), SPECIALS[mode]];
}

/**
 * The exact number of tokens of `text` (a string, or UTF-8 bytes) without a
 * database: the rank files are read from $CTXDB_TOKENIZER_DATA.
 * options: {encoding?: 'o200k_base' | 'cl100k_base', specials?: 'disallow'
 * (default: a CtxdbError naming them) | 'allow' | 'text'}.
 */
function countTokens(text, options) {
  const args = tokenArgs(text, options);
  return call(() => native.tokensCount(...args));
}

/** The token ids of `text` (a Uint32Array); see countTokens. */
function encodeTokens(text, options) {
  const args = tokenArgs(text, options);
  return call(() => native.tokensEncode(...args));
}

module.exports = { tokenArgs, countTokens, encodeTokens };
