'use strict';
// Argument checks of the JS layer: wrong types are TypeError, values out of
// range RangeError, strings that cannot be UTF-8 (lone surrogates) a
// CtxdbError with code INVALID_UTF8 -- before anything reaches the addon.
const { CtxdbError, codes } = require('./errors');

const hasIsWellFormed = typeof String.prototype.isWellFormed === 'function';
const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function describe(v) {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (Buffer.isBuffer(v)) return 'a Buffer';
  return typeof v === 'object' ? 'an object' : `${typeof v}`;
}

// The index of the first lone UTF-16 surrogate in s, or -1.
function loneSurrogateIndex(s) {
  return s.search(loneSurrogate);
}

// A JS string can hold a lone UTF-16 surrogate, which has no UTF-8 form;
// converting it would silently turn it into U+FFFD. Refuse it instead.
// (String.prototype.isWellFormed is Node >= 20; the regex serves Node 18.)
function wellFormed(s, what) {
  const bad = hasIsWellFormed ? !s.isWellFormed() : loneSurrogateIndex(s) !== -1;
  if (bad) {
    const i = loneSurrogateIndex(s);
    throw new CtxdbError(
      `${what} contains a lone UTF-16 surrogate at index ${i}, which is not valid UTF-8`,
      codes.INVALID_UTF8);
  }
  return s;
}

function string(v, what) {
  if (typeof v !== 'string') throw new TypeError(`${what} must be a string, got ${describe(v)}`);
  return wellFormed(v, what);
}

function optString(v, what) {
  return v === undefined || v === null ? undefined : string(v, what);
}

function isBytes(v) {
  return v instanceof Uint8Array; // Buffer too
}

function isPlainObject(v) {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !isBytes(v);
}

function object(v, what) {
  if (!isPlainObject(v)) throw new TypeError(`${what} must be an object, got ${describe(v)}`);
  return v;
}

function optObject(v, what) {
  return v === undefined || v === null ? {} : object(v, what);
}

function boolean(v, what) {
  if (typeof v !== 'boolean') throw new TypeError(`${what} must be a boolean, got ${describe(v)}`);
  return v;
}

function integer(v, what, min) {
  if (typeof v !== 'number') throw new TypeError(`${what} must be a number, got ${describe(v)}`);
  if (!Number.isSafeInteger(v)) throw new RangeError(`${what} must be an integer, got ${v}`);
  if (min !== undefined && v < min) throw new RangeError(`${what} must be >= ${min}, got ${v}`);
  return v;
}

// JSON.stringify writes a lone surrogate as an escape (\ud800), and only
// a lone one (a pair is written as the character): an escape preceded by an
// even number of backslashes is one.
const escapedSurrogate = /(?<!\\)(?:\\\\)*\\u(d[89a-f][0-9a-f]{2})/;

function stringify(v, what) {
  let json;
  try {
    json = JSON.stringify(v);
  } catch (err) {
    throw new TypeError(`${what} cannot be serialized to JSON: ${err.message}`);
  }
  if (json.includes('\\ud')) {
    const m = escapedSurrogate.exec(json);
    if (m) {
      throw new CtxdbError(
        `${what} contains a lone UTF-16 surrogate (\\u${m[1]}), which is not valid UTF-8`,
        codes.INVALID_UTF8);
    }
  }
  return json;
}

// JSON text for the engine: an object is serialized; a string (checked for
// lone surrogates) or a Buffer/Uint8Array is passed through unchanged, so
// the engine judges its bytes (invalid UTF-8 -> INVALID_UTF8).
function jsonInput(v, what) {
  if (typeof v === 'string') return wellFormed(v, what);
  if (isBytes(v)) return v;
  if (isPlainObject(v)) return stringify(v, what);
  throw new TypeError(
    `${what} must be an object, a JSON string or a Buffer, got ${describe(v)}`);
}

// NDJSON text: a string or bytes, passed through unchanged.
function textInput(v, what) {
  if (typeof v === 'string') return wellFormed(v, what);
  if (isBytes(v)) return v;
  throw new TypeError(`${what} must be a string, a Buffer or a Uint8Array, got ${describe(v)}`);
}

module.exports = {
  describe, loneSurrogateIndex, wellFormed, string, optString, isBytes, isPlainObject,
  object, optObject, boolean, integer, stringify, jsonInput, textInput,
};
