'use strict';
// The Database and EventIterator classes: argument checks and defaults, then
// one call of the native wrapper (which only marshals), then JSON.parse of
// the engine's answer. No logic of the engine lives here.
const native = require('./native');
const { call, convert } = require('./errors');
const check = require('./check');
const tokens = require('./tokens');
const { ArtifactWriter } = require('./artifact_writer');

const NEWLINE = 0x0a;

function parse(text) {
  return JSON.parse(text);
}

function rejectAsCtxdbError(err) {
  throw convert(err);
}

// open() config: camelCase or the engine's snake_case keys; unknown keys
// pass through for the engine to judge.
function configJson(config) {
  if (config === undefined || config === null) return undefined;
  check.object(config, 'config');
  const out = {};
  for (const [key, value] of Object.entries(config)) {
    if (value === undefined) continue;
    switch (key) {
      case 'durability':
        out.durability = check.string(value, 'config.durability');
        break;
      case 'readOnly':
      case 'read_only':
        out.read_only = check.boolean(value, `config.${key}`);
        break;
      case 'busyTimeoutMs':
      case 'busy_timeout_ms':
        out.busy_timeout_ms = check.integer(value, `config.${key}`, 0);
        break;
      default:
        out[key] = value;
    }
  }
  return check.stringify(out, 'config');
}

// The lines of the NDJSON for ctxdb_append_batch, one event each, so that the engine's
// "line N" is events[N-1]. Strings and bytes pass unchanged (a newline in
// one would shift the line numbers: refused).
function eventsNdjson(events) {
  if (!Array.isArray(events)) {
    throw new TypeError(`events must be an array, got ${check.describe(events)}`);
  }
  // The lines go to the addon as an array, which writes them into one
  // UTF-8 buffer: no join of the whole batch in JS.
  const lines = new Array(events.length);
  for (let i = 0; i < events.length; ++i) {
    const ev = events[i];
    if (check.isPlainObject(ev)) {
      lines[i] = check.stringify(ev, `events[${i}]`); // never holds a raw newline
      continue;
    }
    const v = check.jsonInput(ev, `events[${i}]`);
    if (typeof v === 'string' ? v.includes('\n') : v.includes(NEWLINE)) {
      throw new RangeError(`events[${i}] contains a newline; appendMany sends one event per line`);
    }
    lines[i] = v;
  }
  return lines;
}

// recordResponse's options JSON and response text (or lines, for a stream
// given as an array of events).
function recordArgs(sessionId, response, options) {
  check.string(sessionId, 'sessionId');
  check.object(options, 'options');
  const opts = check.stringify(options, 'options');
  const body =
    options.stream && Array.isArray(response)
      ? eventsNdjson(response)
      : check.jsonInput(response, 'response');
  return [opts, body];
}

// ctxdb_verify_with options from verify(sessionId, {artifacts?, anchor?});
// undefined when there are none (ctxdb_verify).
function verifyOptions(sessionId, options) {
  const sid = check.optString(sessionId, 'sessionId');
  const opts = check.optObject(options, 'options');
  const doc = {};
  if (opts.artifacts !== undefined) doc.artifacts = check.string(opts.artifacts, 'options.artifacts');
  if (opts.anchor !== undefined) doc.anchor = check.object(opts.anchor, 'options.anchor');
  if (Object.keys(doc).length === 0) return undefined;
  if (sid !== undefined && sid !== null) doc.session_id = sid;
  return check.stringify(doc, 'options');
}

// ctxdb_rebuild options: {check?: boolean, search?: boolean}; undefined
// (NULL/0) when there is nothing to ask for.
function rebuildOptions(options) {
  const opts = check.optObject(options, 'options');
  const asked = {};
  for (const name of ['check', 'search']) {
    if (opts[name] !== undefined && check.boolean(opts[name], `options.${name}`)) asked[name] = true;
  }
  return Object.keys(asked).length ? check.stringify(asked, 'options') : undefined;
}

// ctxdb_transcript_import options: {format, path, final?} from
// importTranscript(format, path, {final?}).
function transcriptOptions(format, path, options) {
  check.string(format, 'format');
  check.string(path, 'path');
  const opts = check.optObject(options, 'options');
  const json = { format, path };
  if (opts.final !== undefined) json.final = check.boolean(opts.final, 'options.final');
  return check.stringify(json, 'options');
}

// options {raw?: boolean}: the engine's JSON text instead of the parsed value.
function rawOption(options) {
  const opts = check.optObject(options, 'options');
  return opts.raw === undefined ? false : check.boolean(opts.raw, 'options.raw');
}

function seqRange(options) {
  const opts = check.optObject(options, 'options');
  const from = opts.fromSeq ?? opts.from_seq;
  const to = opts.toSeq ?? opts.to_seq;
  return {
    fromSeq: from === undefined || from === null ? 1 : check.integer(from, 'options.fromSeq', 0),
    // -1: no upper bound (the C ABI's to_seq < 0)
    toSeq: to === undefined || to === null ? -1 : check.integer(to, 'options.toSeq', 0),
    raw: opts.raw === undefined ? false : check.boolean(opts.raw, 'options.raw'),
  };
}

/**
 * A streaming iterator over stored events (each an object, or the engine's
 * JSON text with {raw: true}). Rows are fetched from the engine page by
 * page as you iterate; the cursor is freed at the end, on break/return(),
 * on close(), or when it is garbage-collected.
 */
class EventIterator {
  #it;
  #raw;
  #db; // keeps the Database reachable while the iterator is

  constructor(db, it, raw) {
    this.#db = db;
    this.#it = it;
    this.#raw = raw;
  }

  next() {
    const row = call(() => this.#it.next());
    if (row === undefined) {
      this.#db = null;
      return { done: true, value: undefined };
    }
    return { done: false, value: this.#raw ? row : parse(row) };
  }

  return(value) {
    this.close();
    return { done: true, value };
  }

  /** Frees the cursor now; next() then reports the end. */
  close() {
    this.#it.close();
    this.#db = null;
  }

  [Symbol.iterator]() {
    return this;
  }

  /**
   * The same rows for `for await`: each step is the synchronous one (a
   * row is in memory, or one engine page away), and breaking out frees
   * the cursor as a plain loop does.
   */
  [Symbol.asyncIterator]() {
    return {
      next: async () => this.next(),
      return: async (value) => this.return(value),
      [Symbol.asyncIterator]() {
        return this;
      },
    };
  }
}
if (typeof Symbol.dispose === 'symbol') {
  EventIterator.prototype[Symbol.dispose] = function dispose() { this.close(); };
}
// Node >= 22: the iterator helpers (map, filter, take, toArray ...).
if (typeof globalThis.Iterator === 'function' && globalThis.Iterator.prototype) {
  Object.setPrototypeOf(EventIterator.prototype, globalThis.Iterator.prototype);
}

/** A connection to one ctxdb database file. */
// The meta JSON of putArtifact and artifactWriter, from their options
// (kind, mime, name, eventId, role; each a string when given).
function artifactMeta(options) {
  const opts = check.optObject(options, 'options');
  const meta = {};
  for (const [key, name] of [['kind', 'kind'], ['mime', 'mime'], ['name', 'name'],
    ['eventId', 'event_id'], ['role', 'role']]) {
    const v = check.optString(opts[key], `options.${key}`);
    if (v !== undefined) meta[name] = v;
  }
  return check.stringify(meta, 'options');
}

class Database {
  #db;
  #path;

  /**
   * Opens (creating if needed) the database at `path`.
   * config: {durability?: "normal"|"full", busyTimeoutMs?, readOnly?}
   * (the snake_case keys busy_timeout_ms / read_only work too).
   */
  constructor(path, config) {
    check.string(path, 'path');
    if (path.includes('\0')) throw new TypeError('path must not contain a NUL character');
    const json = configJson(config);
    this.#path = path;
    this.#db = call(() => new native.Database(path, json));
  }

  /** The path the database was opened with. */
  get path() {
    return this.#path;
  }

  /** True once close() was called. */
  get closed() {
    return this.#db.isClosed();
  }

  /**
   * Closes the handle and frees its open iterators. Idempotent. Async calls
   * still running finish first; the handle closes when the last one does.
   */
  close() {
    this.#db.close();
  }

  /**
   * Creates a session (its SessionStarted event) and returns the session:
   * {id, agent_id, started_event_id, created_ts, last_ts, event_count,
   * last_seq, meta}. An existing id is a CtxdbError CONFLICT.
   */
  createSession(options) {
    const opts = check.object(options, 'options');
    const agentId = opts.agentId ?? opts.agent_id;
    check.string(agentId, 'options.agentId');
    if (opts.agentId != null && opts.agent_id != null && opts.agentId !== opts.agent_id) {
      throw new RangeError('options.agentId and options.agent_id differ');
    }
    const id = check.optString(opts.id, 'options.id');
    const actor = check.optString(opts.actor, 'options.actor');
    const meta = check.optObject(opts.meta, 'options.meta');
    if (Object.prototype.hasOwnProperty.call(meta, 'agent_id')) {
      throw new RangeError('options.meta must not contain agent_id (use options.agentId)');
    }
    const input = {};
    if (id !== undefined) input.id = id;
    if (actor !== undefined) input.actor = actor;
    const eventId = check.optString(opts.eventId ?? opts.event_id, 'options.eventId');
    if (eventId !== undefined) input.event_id = eventId;
    if (opts.ts !== undefined && opts.ts !== null) input.ts = check.integer(opts.ts, 'options.ts', 0);
    input.payload = { agent_id: agentId, ...meta };
    const json = check.stringify(input, 'options');
    return parse(call(() => this.#db.sessionCreate(json)));
  }

  /** The session object; an unknown id is a CtxdbError NOT_FOUND. */
  session(sessionId) {
    check.string(sessionId, 'sessionId');
    return parse(call(() => this.#db.sessionGet(sessionId)));
  }

  /** Every session object, oldest first. */
  sessions() {
    return parse(call(() => this.#db.sessionList()));
  }

  /**
   * Appends one event ({type, actor, payload, id?, parent_id?, run_id?, ts?,
   * causality?, visibility?}; or its JSON text as a string or Buffer) and
   * returns the stored event.
   */
  append(sessionId, event) {
    check.string(sessionId, 'sessionId');
    const json = check.jsonInput(event, 'event');
    return parse(call(() => this.#db.append(sessionId, json)));
  }

  /**
   * Appends events in one transaction (one ctxdb_append_batch call): all or
   * nothing; an error names the line (line N is events[N-1]).
   * Returns {count, first_seq, last_seq, last_id}.
   */
  appendMany(sessionId, events) {
    check.string(sessionId, 'sessionId');
    const ndjson = eventsNdjson(events);
    return parse(call(() => this.#db.appendBatch(sessionId, ndjson)));
  }

  /**
   * Records a provider's answer as the AssistantMessageCreated it means (one
   * ctxdb_response_record call) and returns the stored event. response: the
   * complete response object (a ChatCompletion, a Responses response, an
   * Anthropic Message, a GenerateContentResponse) or its JSON text; with
   * options.stream, the stream's events as an array (objects or JSON lines)
   * or NDJSON text. options: {format, stream?, branch_id?, parent_id?,
   * actor?, run_id?, ts?, latency_ms?} (response_record_options.schema.json).
   * Recording the same response again returns the stored event.
   */
  recordResponse(sessionId, response, options) {
    const [opts, body] = recordArgs(sessionId, response, options);
    return parse(call(() => this.#db.recordResponse(sessionId, opts, body)));
  }

  /** recordResponse, run off the main thread (a long stream is read there). */
  async recordResponseAsync(sessionId, response, options) {
    const [opts, body] = recordArgs(sessionId, response, options);
    const text = await call(() => this.#db.recordResponseAsync(sessionId, opts, body))
      .catch(rejectAsCtxdbError);
    return parse(text);
  }

  /** appendMany, run off the main thread. */
  async appendManyAsync(sessionId, events) {
    check.string(sessionId, 'sessionId');
    const ndjson = eventsNdjson(events);
    const text = await call(() => this.#db.appendBatchAsync(sessionId, ndjson))
      .catch(rejectAsCtxdbError);
    return parse(text);
  }

  /** A stored event by id; an unknown id is a CtxdbError NOT_FOUND. */
  event(eventId) {
    check.string(eventId, 'eventId');
    return parse(call(() => this.#db.eventGet(eventId)));
  }

  /**
   * A streaming iterator over one session's events with
   * fromSeq <= seq <= toSeq (defaults: all), in seq order.
   * options: {fromSeq?, toSeq?, raw?: true for the engine's JSON text}.
   */
  events(sessionId, options) {
    check.string(sessionId, 'sessionId');
    const { fromSeq, toSeq, raw } = seqRange(options);
    const it = call(() => this.#db.eventsIter(sessionId, fromSeq, toSeq));
    return new EventIterator(this, it, raw);
  }

  /**
   * Every event of every session in append order (the export stream that
   * importNdjson takes), as a streaming iterator. options: {raw?}.
   */
  export(options) {
    const opts = check.optObject(options, 'options');
    const raw = opts.raw === undefined ? false : check.boolean(opts.raw, 'options.raw');
    const it = call(() => this.#db.eventsIter(null, 0, -1));
    return new EventIterator(this, it, raw);
  }

  /**
   * The export stream as NDJSON text, what importNdjson takes: the events
   * (of every session, or of sessionId), one per line, then the artifacts
   * they refer to (an artifact line and its chunk lines each).
   */
  exportNdjson(sessionId) {
    const sid = sessionId === undefined || sessionId === null
      ? null : check.string(sessionId, 'sessionId');
    const it = new EventIterator(this, call(() => this.#db.exportIter(sid)), true);
    let out = '';
    for (const line of it) out += `${line}\n`;
    return out;
  }

  /**
   * Forks a branch at eventId (any event of the session) by appending a
   * BranchCreated event; returns the new branch {id, session_id, kind,
   * name?, parent_branch_id, fork_event_id, fork_seq, first_seq,
   * leaf_event_id, leaf_seq, event_count}. options: {kind?: "fork"
   * (default) | "subagent" | "what_if", name?, id? (generated when absent),
   * actor?, ts?}.
   */
  fork(sessionId, eventId, options) {
    check.string(sessionId, 'sessionId');
    const opts = check.optObject(options, 'options');
    const spec = { event_id: check.string(eventId, 'eventId') };
    for (const key of ['kind', 'name', 'id', 'actor']) {
      const value = check.optString(opts[key], `options.${key}`);
      if (value !== undefined) spec[key] = value;
    }
    if (opts.ts !== undefined && opts.ts !== null) spec.ts = check.integer(opts.ts, 'options.ts', 0);
    const json = check.stringify(spec, 'options');
    return parse(call(() => this.#db.branchFork(sessionId, json)));
  }

  /** The session's branches, main first, then in the order they were opened. */
  branches(sessionId) {
    check.string(sessionId, 'sessionId');
    return parse(call(() => this.#db.branchList(sessionId)));
  }

  /**
   * A streaming iterator over the events on a branch's path, root to leaf.
   * options: {branch?: its id or a name unique in the session (default:
   * main), raw?}. An unknown session or branch throws NOT_FOUND here.
   * (`path` is the database file's path.)
   */
  branchPath(sessionId, options) {
    check.string(sessionId, 'sessionId');
    const opts = check.optObject(options, 'options');
    const branch = check.optString(opts.branch, 'options.branch') ?? null;
    const raw = opts.raw === undefined ? false : check.boolean(opts.raw, 'options.raw');
    const it = call(() => this.#db.branchPath(sessionId, branch));
    return new EventIterator(this, it, raw);
  }

  /**
   * What follows an event: {event_id, events: [the next event on its
   * branch, then the first event of each branch forked there], sessions:
   * [the child sessions it spawned]}.
   */
  children(eventId) {
    check.string(eventId, 'eventId');
    return parse(call(() => this.#db.eventChildren(eventId)));
  }

  // The views of a branch: each reads one branch's path root to leaf.
  // options: {branch?: its id or a name unique in the session (default: main)}.
  #view(method, sessionId, options) {
    check.string(sessionId, 'sessionId');
    const opts = check.optObject(options, 'options');
    const branch = check.optString(opts.branch, 'options.branch') ?? null;
    return parse(call(() => this.#db[method](sessionId, branch)));
  }

  /**
   * The messages of a branch: [{event_id, seq, ts, branch_id, role,
   * tokens, token_counter, blocks}], role "user" | "assistant" | "tool" |
   * "summary". options: {branch?}.
   */
  messages(sessionId, options) {
    return this.#view('messagesList', sessionId, options);
  }

  /**
   * The tool calls of a branch, in call order: [{call_id, name, args,
   * event_id, seq, branch_id, status: "pending" | "success" | "error",
   * result: null | {event_id, seq, branch_id, artifact_id, error,
   * duration_ms, exit_code}}], as seen from the branch. options: {branch?}.
   */
  toolCalls(sessionId, options) {
    return this.#view('toolCallsList', sessionId, options);
  }

  /**
   * The files a branch touched, by path: [{path, last_read, last_write,
   * reads, writes, changes: [{event_id, seq, op, change_summary,
   * artifact_id}]}]. options: {branch?}.
   */
  files(sessionId, options) {
    return this.#view('filesList', sessionId, options);
  }

  /**
   * The agent state: {session_id, branch_id, seq, event_id, state: {goal,
   * plan, constraints, facts, decisions, open_questions,
   * resolved_questions, files, tool_state, last_compaction_id}}.
   * options: {branch?: a branch id or a name unique in the session
   * (default: main), at?: an event id of the session, for the state right
   * after it on its own branch}; not both.
   */
  state(sessionId, options) {
    check.string(sessionId, 'sessionId');
    const opts = check.optObject(options, 'options');
    const query = {};
    const branch = check.optString(opts.branch, 'options.branch');
    if (branch !== undefined) query.branch_id = branch;
    const at = check.optString(opts.at, 'options.at');
    if (at !== undefined) query.at = at;
    const json = check.stringify(query, 'options');
    return parse(call(() => this.#db.stateGet(sessionId, json)));
  }

  /**
   * One session's stats, or (no sessionId) the totals of every session:
   * {session_id, sessions, events, messages, tokens, tools, latency_ms,
   * approvals, compactions, context, errors}.
   */
  stats(sessionId) {
    const sid = check.optString(sessionId, 'sessionId') ?? null;
    return parse(call(() => this.#db.statsGet(sid)));
  }

  /**
   * Stores bytes (a string is stored as UTF-8) as an artifact and returns
   * it: {id: 'art_<sha256>', raw_size, stored_size, chunk_size,
   * chunk_count, line_count, kind, mime, name, created_ts, refs}. options:
   * {kind?, mime?, name?, eventId?, role?}; the same bytes are stored once.
   */
  putArtifact(data, options) {
    if (typeof data === 'string') check.wellFormed(data, 'data');
    else if (!check.isBytes(data)) {
      throw new TypeError(`data must be a string, a Buffer or a Uint8Array, got ${check.describe(data)}`);
    }
    const json = artifactMeta(options);
    return parse(call(() => this.#db.artifactPut(data, json)));
  }

  // ---- the streaming put (ctxdb_artifact_writer_*) ----

  /**
   * A streaming put, for content too large to hold in memory: an
   * ArtifactWriter (write(), commit(), abort()). options as putArtifact's.
   * While it is open, other calls on this Database throw CTXDB_MISUSE.
   */
  artifactWriter(options) {
    const json = artifactMeta(options);
    const handle = call(() => this.#db.artifactWriterOpen(json));
    return new ArtifactWriter(this.#db, handle);
  }

  // ---- (end of the streaming put) ----

  /**
   * The bytes [offset, offset+length) of an artifact as a Buffer. options:
   * {offset? (default 0), length? (default -1: to the end)}.
   */
  readArtifact(id, options) {
    check.string(id, 'id');
    const opts = check.optObject(options, 'options');
    const offset = opts.offset === undefined ? 0 : check.integer(opts.offset, 'options.offset');
    const length = opts.length === undefined ? -1 : check.integer(opts.length, 'options.length');
    return call(() => this.#db.artifactRead(id, offset, length));
  }

  /** One artifact: sizes, kind, mime, name and references. */
  artifact(id) {
    check.string(id, 'id');
    return parse(call(() => this.#db.artifactInfo(id)));
  }

  /** Every artifact, or those the session's events refer to, oldest first. */
  artifacts(sessionId) {
    const sid = check.optString(sessionId, 'sessionId') ?? null;
    return parse(call(() => this.#db.artifactList(sid)));
  }

  /**
   * Lines first .. first+count-1 (1-based, each with its newline) as a
   * string. options: {first? (default 1), count? (default -1: to the end)}.
   */
  artifactLines(id, options) {
    check.string(id, 'id');
    const opts = check.optObject(options, 'options');
    const first = opts.first === undefined ? 1 : check.integer(opts.first, 'options.first');
    const count = opts.count === undefined ? -1 : check.integer(opts.count, 'options.count');
    return call(() => this.#db.artifactLines(id, first, count));
  }

  /**
   * A preview: {id, text, omitted_lines, omitted_bytes}. options: {mode?:
   * 'head' | 'tail' | 'head_tail' (default), lines?, bytes?}.
   */
  artifactPreview(id, options) {
    check.string(id, 'id');
    const opts = check.optObject(options, 'options');
    const spec = {};
    const mode = check.optString(opts.mode, 'options.mode');
    if (mode !== undefined) spec.mode = mode;
    if (opts.lines !== undefined) spec.lines = check.integer(opts.lines, 'options.lines');
    if (opts.bytes !== undefined) spec.bytes = check.integer(opts.bytes, 'options.bytes');
    return parse(call(() => this.#db.artifactPreview(id, check.stringify(spec, 'options'))));
  }

  /**
   * grep in an artifact (a PCRE2 pattern, line by line): {id, matches:
   * [{line, offset, column, length, text, before, after}], truncated}.
   * options: {before?, after?, maxMatches?, ignoreCase?}.
   */
  artifactSearch(id, pattern, options) {
    check.string(id, 'id');
    check.string(pattern, 'pattern');
    const opts = check.optObject(options, 'options');
    const o = {};
    if (opts.before !== undefined) o.before = check.integer(opts.before, 'options.before');
    if (opts.after !== undefined) o.after = check.integer(opts.after, 'options.after');
    if (opts.maxMatches !== undefined) {
      o.max_matches = check.integer(opts.maxMatches, 'options.maxMatches');
    }
    if (opts.ignoreCase !== undefined) {
      o.ignore_case = check.boolean(opts.ignoreCase, 'options.ignoreCase');
    }
    return parse(call(() => this.#db.artifactSearch(id, pattern, check.stringify(o, 'options'))));
  }

  // ---- Search ----

  /**
   * Searches every session's messages: {query, syntax, hits: [{session_id,
   * branch_id, event_id, seq, ts, type, role, match, rank, snippet}]}.
   * Whole words first, then substrings (paths, Chinese, Japanese); FTS5
   * syntax when the query has some and it parses, else plain words.
   * options: {sessionId?, branchId?, role?, type?, since?, until?, limit?,
   * allowSensitive? (an event whose visibility is sensitive, private or
   * secret is a hit only with it)}.
   */
  search(query, options) {
    check.string(query, 'query');
    const opts = check.optObject(options, 'options');
    const o = {};
    const sessionId = check.optString(opts.sessionId, 'options.sessionId');
    if (sessionId !== undefined) o.session_id = sessionId;
    const branchId = check.optString(opts.branchId, 'options.branchId');
    if (branchId !== undefined) o.branch_id = branchId;
    const role = check.optString(opts.role, 'options.role');
    if (role !== undefined) o.role = role;
    const type = check.optString(opts.type, 'options.type');
    if (type !== undefined) o.type = type;
    for (const key of ['since', 'until', 'limit']) {
      if (opts[key] !== undefined) o[key] = check.integer(opts[key], `options.${key}`);
    }
    if (opts.allowSensitive !== undefined) {
      o.allow_sensitive = check.boolean(opts.allowSensitive, 'options.allowSensitive');
    }
    return parse(call(() => this.#db.search(query, check.stringify(o, 'options'))));
  }

  // --- Memory (DESIGN §7) -------------------------------------------------------

  /**
   * Writes a memory as a MemoryWritten event in the session: {scope,
   * content, source_refs, scope_id?, kind?, confidence?, priority?,
   * keywords?, readers?, sensitive?, expires_at? | ttl_ms? |
   * update_policy?, memory_id?, actor?, ts?}. Returns the memory.
   */
  writeMemory(sessionId, memory) {
    check.string(sessionId, 'sessionId');
    check.object(memory, 'memory');
    return parse(call(() => this.#db.memoryWrite(sessionId, check.stringify(memory, 'memory'))));
  }

  /** Supersedes a memory: the fields that change, with source_refs. */
  updateMemory(memoryId, update) {
    check.string(memoryId, 'memoryId');
    check.object(update, 'update');
    return parse(call(() => this.#db.memoryUpdate(memoryId, check.stringify(update, 'update'))));
  }

  /**
   * Forgets a memory: a tombstone, or with {purge: true} its content
   * removed from the log too (verify stays green). options: {purge?,
   * reason?, sessionId?, actor?, ts? (ms)}: the MemoryDeleted event's.
   */
  forgetMemory(memoryId, options) {
    check.string(memoryId, 'memoryId');
    const opts = check.optObject(options, 'options');
    if (opts.mode !== undefined) { // the C ABI's name: it would be dropped, silently
      throw new TypeError('options.mode: say purge: true or purge: false');
    }
    const o = {};
    if (opts.purge !== undefined && check.boolean(opts.purge, 'options.purge')) o.mode = 'purge';
    for (const [key, name] of [['reason', 'reason'], ['sessionId', 'session_id'],
      ['actor', 'actor']]) {
      const v = check.optString(opts[key], `options.${key}`);
      if (v !== undefined) o[name] = v;
    }
    if (opts.ts !== undefined) o.ts = check.integer(opts.ts, 'options.ts', 0);
    return parse(call(() => this.#db.memoryForget(memoryId, check.stringify(o, 'options'))));
  }

  /** A memory: its current version, or its last one once forgotten. */
  memory(memoryId) {
    check.string(memoryId, 'memoryId');
    return parse(call(() => this.#db.memoryGet(memoryId)));
  }

  /**
   * The current memories. query: {scope?, scope_id?, kind?, all_versions?,
   * as_of? (ms: the versions valid then), limit?}.
   */
  memories(query) {
    const q = check.optObject(query, 'query');
    return parse(call(() => this.#db.memoryList(check.stringify(q, 'query'))));
  }

  /**
   * Retrieval: {query, scopes: [{scope, id?}], agent?, now?, budget?,
   * limit?, allow_sensitive?, match?, record_usage?} -> {memories (best
   * first, each with tokens, score and source_refs), excluded, ...}.
   */
  retrieveMemories(query) {
    check.object(query, 'query');
    return parse(call(() => this.#db.memoryRetrieve(check.stringify(query, 'query'))));
  }

  /** Writes memory candidates in one transaction: all of them, or none. */
  promoteMemories(sessionId, candidates) {
    check.string(sessionId, 'sessionId');
    if (!Array.isArray(candidates)) {
      throw new TypeError(`candidates must be an array, not ${typeof candidates}`);
    }
    return parse(
      call(() => this.#db.memoryPromote(sessionId, check.stringify(candidates, 'candidates'))),
    );
  }

  /**
   * Checks the hash chain of one session (or of all) and, for all, the
   * artifacts. options: {artifacts?: 'none' | 'quick' | 'full', anchor?}
   * -- quick (the default for all) re-hashes every stored chunk, full also
   * every artifact's whole content; anchor is what anchor() returned
   * earlier, and the report's `anchor` says whether the file still
   * extends it. Returns {ok, sessions, events, first_broken?, purged?,
   * artifacts?, anchor?}; ok is false when any check failed.
   */
  verify(sessionId, options) {
    const json = verifyOptions(sessionId, options);
    if (json === undefined) return parse(call(() => this.#db.verify(sessionId ?? undefined)));
    return parse(call(() => this.#db.verifyWith(json)));
  }

  /** verify, run off the main thread. */
  async verifyAsync(sessionId, options) {
    const json = verifyOptions(sessionId, options);
    const run =
      json === undefined
        ? () => this.#db.verifyAsync(sessionId ?? undefined)
        : () => this.#db.verifyWithAsync(json);
    const text = await call(run).catch(rejectAsCtxdbError);
    return parse(text);
  }

  /**
   * A small digest of the file's whole history, in the manner of a
   * transparency log's signed tree head: {format, events, root, sessions,
   * heads: [{session_id, seq, hash}]}, root an RFC 6962 Merkle root over
   * the events' hashes in append order. Keep it outside the file;
   * verify(null, {anchor}) later proves the file still extends it.
   */
  anchor() {
    return parse(call(() => this.#db.anchor()));
  }

  /**
   * Drops the rows of every derived table (sessions, ...) and replays every
   * event into them, in one transaction; the log is not touched. With
   * {check: true} a difference between the stored and the replayed tables
   * is a CtxdbError CHECK_FAILED and nothing changes. Returns {events,
   * identical, tables: [{table, rows, before, after}]} (SHA-256 of each
   * table's rows before and after).
   */
  rebuild(options) {
    const json = rebuildOptions(options);
    return parse(call(() => this.#db.rebuild(json)));
  }

  /** rebuild, run off the main thread. */
  async rebuildAsync(options) {
    const json = rebuildOptions(options);
    const text = await call(() => this.#db.rebuildAsync(json)).catch(rejectAsCtxdbError);
    return parse(text);
  }

  /**
   * Merges each full-text index (memories, session search) into one
   * segment, in one transaction. Queries read every segment of an index,
   * so after a bulk load of memories retrieval is faster merged; it
   * rewrites every page of the indexes, so run it after bulk loads or as
   * periodic maintenance. What the indexes hold does not change. Returns
   * {indexes: [{index, segments_before, segments_after, pages}]}.
   */
  optimize() {
    return parse(call(() => this.#db.optimize()));
  }

  /** optimize, run off the main thread. */
  async optimizeAsync() {
    const text = await call(() => this.#db.optimizeAsync()).catch(rejectAsCtxdbError);
    return parse(text);
  }

  /**
   * Imports NDJSON of stored events (the export stream; a string or a
   * Buffer, passed unchanged) in one transaction. Returns {imported, skipped}.
   */
  importNdjson(ndjson) {
    const text = check.textInput(ndjson, 'ndjson');
    return parse(call(() => this.#db.import(text)));
  }

  /** importNdjson, run off the main thread. */
  async importNdjsonAsync(ndjson) {
    const text = check.textInput(ndjson, 'ndjson');
    const out = await call(() => this.#db.importAsync(text)).catch(rejectAsCtxdbError);
    return parse(out);
  }

  /**
   * Imports another agent's session files (ctxdb_transcript_import): format
   * 'claude-code', 'codex' or 'pi'; path a session file or the agent's
   * folder (~/.claude, ~/.codex, ~/.pi/agent, or one below). Each file is
   * imported in one transaction and incrementally: a second call changes
   * nothing, a file that grew adds its new records. A file changed in its
   * middle is reported 'changed' and not merged; a malformed line fails
   * its file (the error names file and line) while the others go on.
   * options: {final?: boolean} (default true; false while an agent may
   * still be writing). Returns {format, sessions: [{file, session_id,
   * status, events, lines, unknown, error?, active_branch_id?}], imported,
   * unchanged, changed, failed}. An unknown format is INVALID_ARG, a
   * missing path NOT_FOUND, a read-only handle READONLY.
   */
  importTranscript(format, path, options) {
    const json = transcriptOptions(format, path, options);
    return parse(call(() => this.#db.transcriptImport(json)));
  }

  /** importTranscript, run off the main thread. */
  async importTranscriptAsync(format, path, options) {
    const json = transcriptOptions(format, path, options);
    const out = await call(() => this.#db.transcriptImportAsync(json)).catch(rejectAsCtxdbError);
    return parse(out);
  }

  // ---- the context compiler ----

  /**
   * Compiles the context for a model's next call (ctxdb_compile). request:
   * {session_id, max_tokens, reserved_output_tokens?, branch_id? |
   * leaf_event_id?, request?, instructions?, tools?, policy?, format?,
   * record?} (compile_request.schema.json), or its JSON text. Returns the
   * bundle (format "canonical") or the provider's request JSON, parsed;
   * options {raw: true} returns the JSON text. A CtxdbError BUDGET when
   * what is never dropped exceeds the budget, NOT_FOUND for an unknown
   * session, branch or leaf event.
   */
  compile(request, options) {
    const json = check.jsonInput(request, 'request');
    const raw = rawOption(options);
    const text = call(() => this.#db.compile(json));
    return raw ? text : parse(text);
  }

  /**
   * compile, run off the main thread. Refused (a CtxdbError MISUSE) while a
   * JS token counter is set: the counter could only be called from the
   * worker thread. Use compile() then.
   */
  async compileAsync(request, options) {
    const json = check.jsonInput(request, 'request');
    const raw = rawOption(options);
    const text = await call(() => this.#db.compileAsync(json)).catch(rejectAsCtxdbError);
    return raw ? text : parse(text);
  }

  /**
   * A canonical bundle (an object, or its JSON text) in a provider's
   * format: 'openai.chat', 'openai.responses', 'anthropic.messages',
   * 'gemini.generate_content', 'ai.sdk' (or 'canonical'). Images are read
   * from their artifacts; thinking goes back only to its own provider. options {raw: true} returns the JSON text.
   */
  bundleConvert(bundle, format, options) {
    const json = check.jsonInput(bundle, 'bundle');
    check.string(format, 'format');
    const raw = rawOption(options);
    const text = call(() => this.#db.bundleConvert(json, format));
    return raw ? text : parse(text);
  }

  /**
   * Makes fn(text) => number this database's token counter, in place of
   * the built-in estimator: for the counts cached at append (messages
   * record `name` as their token_counter) and for compiles. null restores
   * the built-in estimator. fn runs synchronously inside the call that
   * needs a count and must not use this database; a throw, or an answer
   * that is not a non-negative integer, fails that call with a CtxdbError
   * INTERNAL (the thrown error as its `cause`), nothing written. While it
   * is set, the async calls that may count (appendManyAsync,
   * importNdjsonAsync, rebuildAsync, compileAsync, compactAsync) reject
   * with MISUSE.
   */
  setTokenCounter(name, fn) {
    if (fn === null || fn === undefined) {
      call(() => this.#db.setTokenCounter(null, null));
      return;
    }
    check.string(name, 'name');
    if (typeof fn !== 'function') {
      throw new TypeError(`fn must be a function or null, got ${check.describe(fn)}`);
    }
    call(() => this.#db.setTokenCounter(name, fn));
  }

  // ---- Tokenizer

  /**
   * The exact number of tokens of `text`, with the rank files of this
   * database's tokenizer_data_dir (else $CTXDB_TOKENIZER_DATA); options as
   * the module's countTokens.
   */
  countTokens(text, options) {
    const args = tokens.tokenArgs(text, options);
    return call(() => this.#db.tokensCount(...args));
  }

  /** The token ids of `text` (a Uint32Array); see countTokens. */
  encodeTokens(text, options) {
    const args = tokens.tokenArgs(text, options);
    return call(() => this.#db.tokensEncode(...args));
  }

  /** The library's version string ("0.1.0"). */
  // ---- Compaction ----

  #policyCall(method, sessionId, policy) {
    check.string(sessionId, 'sessionId');
    const json = check.stringify(check.optObject(policy, 'policy'), 'policy');
    return parse(call(() => this.#db[method](sessionId, json)));
  }

  /**
   * Whether to compact: {context_tokens (anchored on provider usage),
   * estimated_tokens, anchor, context_window, reserve_tokens, soft_limit,
   * hard_limit, level, reclaimable_tokens, net_benefit_tokens,
   * summary_cost_tokens, cache_invalidated_tokens, should_compact, reason}.
   * policy (compaction_policy.schema.json): {branch_id?, keep_recent_tokens?,
   * context_window?, reserve_tokens?, ...}.
   */
  shouldCompact(sessionId, policy) {
    return this.#policyCall('compactShould', sessionId, policy);
  }

  /**
   * The plan: {cut, range, tokens, previous_compaction, obligations,
   * memory_candidates, pending_calls_kept, transcript, ...}. Writes nothing.
   */
  planCompaction(sessionId, policy) {
    return this.#policyCall('compactPlan', sessionId, policy);
  }

  /**
   * Checks a summary (an object, or JSON text) made for a plan (what
   * planCompaction returned) and commits it. A failed check throws a
   * CtxdbError CTXDB_CHECK_FAILED naming the checks, and a
   * CompactionFailed event records them.
   */
  commitCompaction(sessionId, plan, summary) {
    check.string(sessionId, 'sessionId');
    const planJson = typeof plan === 'string' ? plan : check.stringify(plan, 'plan');
    const summaryJson =
      typeof summary === 'string' ? summary : check.stringify(summary, 'summary');
    return parse(call(() => this.#db.compactCommit(sessionId, planJson, summaryJson)));
  }

  /**
   * plan -> summarize -> check -> commit. options: {policy?, summarizer?:
   * (plan) => summary object or JSON text}; without a summarizer, the
   * built-in extractive one. The summarizer runs synchronously and must
   * not call this Database. If it throws or returns something unusable,
   * nothing is committed, one CompactionFailed event records why, and a
   * CtxdbError CTXDB_CHECK_FAILED is thrown (its cause: what the
   * summarizer threw).
   */
  compact(sessionId, options) {
    check.string(sessionId, 'sessionId');
    const opts = check.optObject(options, 'options');
    const json = check.stringify(check.optObject(opts.policy, 'options.policy'), 'options.policy');
    const summarizer = opts.summarizer;
    if (summarizer === undefined || summarizer === null) {
      return parse(call(() => this.#db.compact(sessionId, json, null)));
    }
    if (typeof summarizer !== 'function') {
      throw new TypeError(`options.summarizer must be a function, got ${check.describe(summarizer)}`);
    }
    let thrown;
    const trampoline = (planText) => {
      try {
        const answer = summarizer(JSON.parse(planText));
        return typeof answer === 'string' ? answer : JSON.stringify(answer);
      } catch (err) {
        thrown = err;
        throw err;
      }
    };
    try {
      return parse(call(() => this.#db.compact(sessionId, json, trampoline)));
    } catch (err) {
      if (thrown !== undefined && err.cause === undefined) err.cause = thrown;
      throw err;
    }
  }

  /**
   * compact with the built-in summarizer, run off the main thread (at 100k
   * events a compaction takes seconds). options: {policy?}. A JS
   * summarizer could only run on the main thread: pass one to compact().
   * Refused (a CtxdbError MISUSE) while a JS token counter is set.
   */
  async compactAsync(sessionId, options) {
    check.string(sessionId, 'sessionId');
    const opts = check.optObject(options, 'options');
    if (opts.summarizer !== undefined && opts.summarizer !== null) {
      throw new TypeError('compactAsync runs the built-in summarizer; pass a summarizer to compact()');
    }
    const json = check.stringify(check.optObject(opts.policy, 'options.policy'), 'options.policy');
    const text = await call(() => this.#db.compactAsync(sessionId, json)).catch(rejectAsCtxdbError);
    return parse(text);
  }

  /**
   * Summarizes the path abandoned at fromLeaf since its common ancestor
   * with toEvent, and appends it at toEvent (a new fork when toEvent is not
   * a leaf) as a BranchSummarized event: {event_id, branch_id,
   * common_ancestor_event_id, range, summary, text}.
   */
  summarizeBranch(sessionId, fromLeaf, toEvent) {
    check.string(sessionId, 'sessionId');
    check.string(fromLeaf, 'fromLeaf');
    check.string(toEvent, 'toEvent');
    return parse(call(() => this.#db.branchSummarize(sessionId, fromLeaf, toEvent)));
  }

  /**
   * The compactions on a branch's path, oldest first: [{event_id, seq,
   * branch_id, first_kept_event_id, first_kept_seq, range, tokens_before,
   * tokens_after, ratio, checks: [{name, ok}], summarizer}]. options:
   * {branch?}.
   */
  compactions(sessionId, options) {
    return this.#view('compactionsList', sessionId, options);
  }

  version() {
    return native.version();
  }

  /** The library's ABI version (ctxdb_abi_version()). */
  abiVersion() {
    return native.abiVersion();
  }
}
if (typeof Symbol.dispose === 'symbol') {
  Database.prototype[Symbol.dispose] = function dispose() { this.close(); };
}

/** Opens (creating if needed) the database file at `path`. */
function open(path, config) {
  return new Database(path, config);
}

module.exports = { Database, EventIterator, open };
