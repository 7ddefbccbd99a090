'use strict';
// The status codes of include/ctxdb/ctxdb.h and the one error class the
// binding throws for a failed ctxdb call. As in better-sqlite3 and Node's
// own system errors, `err.code` is the status's name, a string
// ("CTXDB_NOT_FOUND", compare with `codes.NOT_FOUND`), and `err.errno` its
// number in ctxdb.h (`statuses.NOT_FOUND`); never test the message. Bad
// arguments are TypeError / RangeError instead.

/** The numbered, append-only status codes of the C ABI. */
const statuses = Object.freeze({
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

/** The names of the statuses, as `err.code` carries them: "CTXDB_NOT_FOUND". */
const codes = Object.freeze(
  Object.fromEntries(Object.keys(statuses).map((k) => [k, `CTXDB_${k}`])));

const namesByNumber = new Map(Object.entries(statuses).map(([k, v]) => [v, `CTXDB_${k}`]));
const numbersByName = new Map(Object.entries(statuses).map(([k, v]) => [`CTXDB_${k}`, v]));

/** The static name of a status (a number, or a name given back), as ctxdb_errstr. */
function codeName(status) {
  if (typeof status === 'string' && numbersByName.has(status)) return status;
  return namesByNumber.get(status) || `CTXDB_UNKNOWN_${status}`;
}

/**
 * A failed ctxdb call. `code` is the status's name ("CTXDB_NOT_FOUND", one
 * of `codes`), `errno` its number (one of `statuses`); `codeName` is the
 * same as `code`. The message is the engine's. `status` may be given as
 * either the number or the name.
 */
class CtxdbError extends Error {
  constructor(message, status, name) {
    super(message);
    this.code = name || codeName(status);
    this.errno = typeof status === 'number' ? status : numbersByName.get(this.code);
    this.codeName = this.code;
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

module.exports = { codes, statuses, codeName, CtxdbError, convert, call };
