'use strict';
// ctxdb for Node: `const ctxdb = require('ctxdb')`. See index.d.ts for the
// API and README.md for usage.
const native = require('./lib/native');
const { Database, EventIterator, open } = require('./lib/database');
const { CtxdbError, codes, statuses, codeName } = require('./lib/errors');
const { NEEDED_ABI } = require('./lib/loader');
const { countTokens, encodeTokens } = require('./lib/tokens');
const { ArtifactWriter } = require('./lib/artifact_writer');

module.exports = {
  open,
  Database,
  EventIterator,
  ArtifactWriter,
  CtxdbError,
  codes,
  statuses,
  codeName,
  /** The ABI version this binding needs (ctxdb_abi_version()). */
  ABI_VERSION: NEEDED_ABI,
  /** The library's version string, e.g. "0.1.0". */
  version: () => native.version(),
  /** The library's version number (MAJOR * 1000000 + MINOR * 1000 + PATCH). */
  versionNumber: () => native.versionNumber(),
  /** The library's ABI version. */
  abiVersion: () => native.abiVersion(),
  // Tokenizer
  countTokens,
  encodeTokens,
};
