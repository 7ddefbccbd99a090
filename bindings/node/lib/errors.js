'use strict';
// The status codes of include/ctxdb/ctxdb.h and the one error class the
// binding throws for a failed ctxdb call. Callers test `err.code` (a number,
// compare with `codes.NOT_FOUND` ...) or `err.codeName` ("CTXDB_NOT_FOUND"),
// never the message. Bad arguments are TypeError / RangeError instead.

/** The numbered, append-only status codes of the C ABI. */
const codes = Object.freeze({
  OK: 0,
  MISUSE: 1, // closed database, API misuse
  INVALID_ARG: 2, // a value is missing, of the wrong type or out of range
  INVALID_UTF8: 3, // a string is not valid UTF-8
  INVALID_JSON: 4, // a JSON input does not parse
  NOT_FOUND: 5, // an id names nothing
  CONFLICT: 6, // the id exists with different content, or a rule forbids it
  BUSY: 7, // the database stayed locked past busy_timeout_ms
  BUDGET: 8, // a token budget cannot be met
  CHECK_FAILED: 9, // a structured result failed its checks
  CORRUPT: 10, // stored data fails its hash or is malformed
  IO: 11, // the file cannot be read or written
  NOMEM: 12, // out of memory
  SCHEMA: 13, // the file's schema is newer than this library
  READONLY: 14, // a write on a read-only handle
  INTERNAL: 15, // a bug in ctxdb; the message says where
  NOTADB: 16, // the file is not a ctxdb database
});

const namesByCode = new Map(Object.entries(codes).map(([k, v]) => [v, `CTXDB_${k}`]));

/** The static name of a status code ("CTXDB_NOT_FOUND"), as ctxdb_errstr. */
function codeName(code) {
  return namesByCode.get(code) || `CTXDB_UNKNOWN_${code}`;
}

/**
 * A failed ctxdb call. `code` is the numeric status (see `codes`),
 * `codeName` its name ("CTXDB_NOT_FOUND"); the message is the engine's.
 */
class CtxdbError extends Error {
  constructor(message, code, name) {
    super(message);
    this.code = code;
    this.codeName = name || codeName(code);
  }
}
CtxdbError.prototype.name = 'CtxdbError';

// The addon throws a plain Error with a numeric `code` and a `codeName`;
// this turns it into a CtxdbError (anything else passes unchanged).
function convert(err) {
  if (err instanceof Error && !(err instanceof CtxdbError) &&
      typeof err.code === 'number' && typeof err.codeName === 'string') {
    const converted = new CtxdbError(err.message, err.code, err.codeName);
    // What a JS token counter threw, when that is why the call failed.
    if (err.cause !== undefined) converted.cause = err.cause;
    return converted;
  }
  return err;
}

// Runs fn(), rethrowing a status error of the addon as a CtxdbError.
function call(fn) {
  try {
    return fn();
  } catch (err) {
    throw convert(err);
  }
}

module.exports = { codes, codeName, CtxdbError, convert, call };
