/*
 * ctxdb.h -- the one public C interface of ctxdb, an embedded, single-file
 * context database for AI agents.
 *
 * A host appends what happened (events) to an append-only, hash-chained log
 * kept in one SQLite file; ctxdb derives state from it and answers reads.
 * Rich inputs and outputs are UTF-8 JSON whose shapes are described by the
 * JSON Schemas in schema/json/; no struct is part of the ABI.
 *
 * Conventions (after sqlite3.h, lmdb.h, libgit2 and LevelDB's c.h):
 *  - Every function returns an int status code (CTXDB_OK on success).
 *    Results go through out-parameters, which come last and are set to
 *    NULL/0 on failure. Callers test codes, never messages.
 *  - ctxdb_errmsg(db) is the message of the last failed call on that handle
 *    made by the calling thread; ctxdb_errmsg(NULL) is the message of the
 *    last failed call of any kind on this thread (a failed open, a NULL or
 *    closed handle, an iterator).
 *  - Strings are UTF-8 with an explicit length (const char*, size_t); only
 *    file paths are NUL-terminated. Invalid UTF-8 is CTXDB_INVALID_UTF8.
 *    A NULL pointer with length 0 is the empty string (so an empty JSON
 *    input is CTXDB_INVALID_JSON); NULL with a length is CTXDB_MISUSE.
 *    An id (of a session, event, branch, memory, artifact …) that is empty
 *    or holds a NUL byte is CTXDB_INVALID_ARG.
 *  - JSON input nests arrays and objects at most 256 levels deep (an
 *    event's envelope is one of them); deeper is CTXDB_INVALID_ARG naming
 *    the limit, so what is stored reads back in every binding.
 *  - JSON output is always UTF-8: a byte the file holds that is not (a
 *    damaged id or payload) comes out as U+FFFD, each maximal invalid
 *    sequence as one (what Python's and JavaScript's decoders do).
 *  - Stored data that is damaged (a payload that does not parse, or no
 *    longer has its type's shape; a state snapshot that does not
 *    decompress; pages SQLite finds malformed) is CTXDB_CORRUPT with a
 *    message naming what; ctxdb_verify reports a broken chain.
 *  - Buffers returned through `char** out` are allocated by ctxdb, are
 *    NUL-terminated, their length (without the NUL) goes to `size_t* out_len`
 *    when that is non-NULL, and they are released with ctxdb_free().
 *    Borrowed pointers (an iterator's current row) stay valid until the next
 *    call on that iterator.
 *  - Destructors (ctxdb_close, ctxdb_iter_free, ctxdb_free) accept NULL.
 *
 * Threads and processes:
 *  - A handle may be shared between threads; calls on one handle are
 *    serialized. An iterator belongs to its handle and must not be used by
 *    two threads at once.
 *  - Several handles and several processes may open the same file (SQLite
 *    WAL). A writer waits up to busy_timeout_ms for the write lock, then the
 *    call fails with CTXDB_BUSY and changes nothing.
 *  - Host callbacks run on the calling thread and must not re-enter the
 *    handle that called them.
 *  - An artifact put, read or search of 1 MiB or more runs one short-lived
 *    helper thread for the length of the call, which hashes while the
 *    caller compresses or decompresses; it never calls the host and
 *    never touches the database.
 *  - ctxdb_rebuild of a database file runs two threads for the length of
 *    the call, each on a read-only SQLite connection of its own: one
 *    checksums the tables as last committed, one reads the log ahead of
 *    the replay. Neither calls the host.
 *  - A writable handle opened with durability "normal" (or config
 *    "checkpoint": "background") runs one thread of its own, on a second
 *    SQLite connection, that copies the WAL into the database file when
 *    a commit has filled it; it never calls the host. ctxdb_close stops it.
 *  - Do not use a handle across fork(); open a new one in the child.
 *  - A failed call leaves the database exactly as it was before the call.
 */
#ifndef CTXDB_H
#define CTXDB_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32) && defined(CTXDB_BUILDING)
#define CTXDB_API __declspec(dllexport)
#elif defined(_WIN32)
#define CTXDB_API __declspec(dllimport)
#elif defined(__GNUC__)
#define CTXDB_API __attribute__((visibility("default")))
#else
#define CTXDB_API
#endif

/* ---- versions ---------------------------------------------------------- */

#define CTXDB_VERSION_MAJOR 0
#define CTXDB_VERSION_MINOR 1
#define CTXDB_VERSION_PATCH 0
/* MAJOR * 1000000 + MINOR * 1000 + PATCH */
#define CTXDB_VERSION_NUMBER 1000
#define CTXDB_VERSION_STRING "0.1.0"

/* Changes only when the ABI breaks; it is also the shared library's SONAME
 * (libctxdb.so.<ABI>). Bindings refuse a library whose ABI differs. */
#define CTXDB_ABI_VERSION 1

/* The library's version string, e.g. "0.1.0". Static; never freed. */
CTXDB_API const char *ctxdb_version(void);
/* The library's CTXDB_VERSION_NUMBER. */
CTXDB_API int ctxdb_version_number(void);
/* The library's CTXDB_ABI_VERSION. */
CTXDB_API int ctxdb_abi_version(void);

/* ---- status codes (explicitly numbered, append-only) ------------------- */

enum {
  CTXDB_OK = 0,
  CTXDB_MISUSE = 1,       /* NULL handle or pointer, closed handle, API misuse */
  CTXDB_INVALID_ARG = 2,  /* a value is missing, of the wrong type or out of range */
  CTXDB_INVALID_UTF8 = 3, /* a string is not valid UTF-8 */
  CTXDB_INVALID_JSON = 4, /* a JSON input does not parse */
  CTXDB_NOT_FOUND = 5,    /* an id names nothing */
  CTXDB_CONFLICT = 6,     /* the id exists with different content, or a rule forbids it */
  CTXDB_BUSY = 7,         /* the database stayed locked past busy_timeout_ms */
  CTXDB_BUDGET = 8,       /* a token budget cannot be met */
  CTXDB_CHECK_FAILED = 9, /* a structured result failed its checks */
  CTXDB_CORRUPT = 10,     /* stored data fails its hash or is malformed */
  CTXDB_IO = 11,          /* the file cannot be read or written */
  CTXDB_NOMEM = 12,       /* out of memory */
  CTXDB_SCHEMA = 13,      /* the file's schema is newer than this library */
  CTXDB_READONLY = 14,    /* a write on a read-only handle */
  CTXDB_INTERNAL = 15,    /* a bug in ctxdb; the message says where */
  CTXDB_NOTADB = 16,      /* the file is not a ctxdb database */

  /* Not errors: what ctxdb_iter_next returns. */
  CTXDB_ROW = 100,
  CTXDB_DONE = 101
};

/* A static name for a status code ("CTXDB_NOT_FOUND"); never NULL. */
CTXDB_API const char *ctxdb_errstr(int code);

/* ---- handles ----------------------------------------------------------- */

/* The connection handle is ctxdb_db, not `ctxdb`: a C struct named ctxdb
 * would collide with the C++ namespace ctxdb in any C++ host. */
typedef struct ctxdb_db ctxdb_db;     /* a connection to one database file */
typedef struct ctxdb_iter ctxdb_iter; /* a streaming cursor over rows */

/* The message of the last failed call (see the conventions above). Valid
 * until the next failing call on the same handle from the same thread. */
CTXDB_API const char *ctxdb_errmsg(const ctxdb_db *db);

/* Releases a buffer returned by ctxdb. NULL is a no-op. */
CTXDB_API void ctxdb_free(void *p);

/* ---- opening ----------------------------------------------------------- */

/* Opens (creating if needed) the database file at `path`.
 * config_json (may be NULL/0 for defaults) is an object:
 *   "durability":      "normal" (default; every acknowledged write survives
 *                      a crash of the process) or "full" (also survives
 *                      power loss; an fsync per commit),
 *   "busy_timeout_ms": how long a write waits for the lock (default 5000),
 *   "read_only":       true to open an existing file without writing
 *                      (also what a handle does by itself when the file
 *                      or its directory cannot be written: a read-only
 *                      mount, file modes; reads work, writes fail with
 *                      CTXDB_READONLY naming why; README "Read-only
 *                      storage"),
 *   "mmap":            false to read with pread instead of a memory map
 *                      (default true; with a map, an I/O error while
 *                      reading is SIGBUS rather than an error code),
 *   "checkpoint":      "background" (the default with "normal": a thread
 *                      of the handle's own copies a full WAL into the
 *                      file) or "inline" (the default with "full": the
 *                      commit that filled the WAL copies it),
 *   "vfs":             the name of a registered SQLite VFS
 *                      (sqlite3_vfs_register: an encrypting or custom
 *                      storage layer) that every connection of the handle
 *                      opens the file through, the checkpointer's and a
 *                      rebuild's readers too (default: SQLite's default
 *                      VFS; a name not registered is CTXDB_INVALID_ARG),
 *   and others (schema/json/config.schema.json).
 * Fails with CTXDB_NOTADB (file untouched) when the file is not a ctxdb
 * database and CTXDB_SCHEMA when it was written by a newer ctxdb; on
 * storage it cannot write, with CTXDB_READONLY naming why when the file
 * cannot be read either (a WAL holding commits without its -shm index, a
 * new file in a directory that cannot be written). */
CTXDB_API int ctxdb_open(const char *path, const char *config_json, size_t config_len,
                         ctxdb_db **out_db);

/* Closes the handle. NULL is a no-op; closing twice is CTXDB_MISUSE. A call
 * in flight on another thread finishes first; calls made after the close
 * are CTXDB_MISUSE.
 * Iterators opened on the handle must still be freed with ctxdb_iter_free;
 * ctxdb_iter_next on them returns CTXDB_MISUSE after the close. */
CTXDB_API int ctxdb_close(ctxdb_db *db);

/* ---- sessions ---------------------------------------------------------- */

/* Creates a session by appending its SessionStarted event.
 * session_json: {"id"?: "ses_...", "event_id"?: "evt_...", "actor"?: "host",
 * "ts"?: ms, "payload": {"agent_id": ..., ...}}; id (the session's) and
 * event_id (its SessionStarted event's) are generated when absent. *out is the session object
 * (as ctxdb_session_get). An existing id is CTXDB_CONFLICT. */
CTXDB_API int ctxdb_session_create(ctxdb_db *db, const char *session_json, size_t len, char **out,
                                   size_t *out_len);

/* The session object: {"id", "agent_id", "started_event_id", "created_ts",
 * "last_ts", "event_count", "last_seq", "meta"}. Unknown id: NOT_FOUND. */
CTXDB_API int ctxdb_session_get(ctxdb_db *db, const char *session_id, size_t id_len, char **out,
                                size_t *out_len);

/* A JSON array of every session object, oldest first. */
CTXDB_API int ctxdb_session_list(ctxdb_db *db, char **out, size_t *out_len);

/* ---- the event log ----------------------------------------------------- */

/* Appends one event to a session.
 * event_json: {"type", "actor", "payload": {...}, "id"?, "parent_id"?,
 * "run_id"?, "ts"? (integer ms since the Unix epoch), "causality"?,
 * "visibility"?}. The engine assigns seq, id (when absent), ts (when
 * absent) and the hash. A host-given id that already exists with identical
 * content returns the stored event (a safe retry); with different content
 * it is CTXDB_CONFLICT. *out is the stored event (as ctxdb_event_get). */
CTXDB_API int ctxdb_append(ctxdb_db *db, const char *session_id, size_t id_len,
                           const char *event_json, size_t len, char **out, size_t *out_len);

/* Appends NDJSON events (one per line; blank lines skipped) to a session in
 * one transaction: all or nothing. An error names the line number.
 * *out: {"count", "first_seq", "last_seq", "last_id"}. A batch without
 * events (empty, or blank lines only) stores nothing and has count 0; to
 * a session that does not exist it is CTXDB_NOT_FOUND, as any batch is. */
CTXDB_API int ctxdb_append_batch(ctxdb_db *db, const char *session_id, size_t id_len,
                                 const char *ndjson, size_t len, char **out, size_t *out_len);

/* A stored event: {"id", "session_id", "seq", "ts", "type", "actor",
 * "parent_id"?, "run_id"?, "causality"?, "visibility"?, "payload",
 * "payload_hash", "prev_hash", "hash"}. Unknown id: CTXDB_NOT_FOUND. */
CTXDB_API int ctxdb_event_get(ctxdb_db *db, const char *event_id, size_t id_len, char **out,
                              size_t *out_len);

/* Opens a streaming iterator over stored events (each row as
 * ctxdb_event_get). With a session id: that session's events with
 * from_seq <= seq <= to_seq (to_seq < 0: no upper bound), in seq order.
 * With session_id NULL: every event of every session in append order
 * (from_seq/to_seq ignored) -- the events of the export stream
 * (ctxdb_export adds the artifacts they refer to). */
CTXDB_API int ctxdb_events_iter(ctxdb_db *db, const char *session_id, size_t id_len,
                                int64_t from_seq, int64_t to_seq, ctxdb_iter **out_iter);

/* Advances the iterator: CTXDB_ROW with *row and *row_len set to a borrowed
 * row (valid until the next call on the iterator), CTXDB_DONE at the end,
 * or an error code. */
CTXDB_API int ctxdb_iter_next(ctxdb_iter *iter, const char **row, size_t *row_len);

/* Frees an iterator. NULL is a no-op. */
CTXDB_API void ctxdb_iter_free(ctxdb_iter *iter);

/* Checks the hash chain of one session (session_id) or of all (NULL with
 * id_len 0; NULL with a length is CTXDB_MISUSE), and with all, the
 * artifacts too ("quick", as ctxdb_verify_with describes).
 * Returns CTXDB_OK when the check ran; *out reports what it found
 * (verify_report.schema.json): {"ok": true, "sessions": N, "events": M,
 * "artifacts": {...}} or {"ok": false, ..., "first_broken": {"session_id",
 * "seq", "event_id", "problem"}}, and "purged": the payloads a purge
 * removed, each proven by a MemoryDeleted purge after it in its own chain
 * that names it with its payload hash; a missing payload without that
 * proof is a broken event. */
CTXDB_API int ctxdb_verify(ctxdb_db *db, const char *session_id, size_t id_len, char **out,
                           size_t *out_len);

/* Checks the file with options (verify_options.schema.json; NULL/0 is {}):
 * {"session_id"?: one session's chain instead of every chain,
 *  "artifacts"?: "none" | "quick" | "full" -- "quick" (the default for a
 *     whole-file check; "none" with a session_id) re-hashes every stored
 *     chunk's bytes; "full" also decompresses every chunk and re-hashes
 *     every artifact's whole content against its id,
 *  "anchor"?: an anchor object (as ctxdb_anchor returned it): proves the
 *     file still extends it}.
 * Returns CTXDB_OK when the check ran; *out is the ctxdb_verify report
 * with "artifacts": {"ok", "mode", "artifacts", "chunks", "bytes",
 * "first_broken"?} and "anchor": {"ok", "events", "problem"?} when
 * checked; "ok" is false when any part failed. ctxdb_verify(db, id, n) is
 * ctxdb_verify_with {"session_id": id}. */
CTXDB_API int ctxdb_verify_with(ctxdb_db *db, const char *options_json, size_t len, char **out,
                                size_t *out_len);

/* An anchor of the file's whole history (anchor_options.schema.json;
 * NULL/0 is {}): a small, stable digest a host stores elsewhere, in the
 * manner of a transparency log's signed tree head. *out:
 * {"format": "ctxdb.anchor.v1", "events": N (in append order),
 *  "root": hex SHA-256 Merkle root over the events' hashes in append
 *  order, "sessions": K, "heads": [{"session_id", "seq", "hash"}]}.
 * ctxdb_verify_with {"anchor": ...} later proves the file extends it:
 * a truncated log, a deleted session, a rewritten head, a reordered log
 * and a lost WAL each fail. Works on a read-only handle. */
CTXDB_API int ctxdb_anchor(ctxdb_db *db, const char *options_json, size_t len, char **out,
                           size_t *out_len);

/* Drops the rows of every derived table (the projections of the log:
 * sessions, ...) and replays every event into them in append order, in one
 * transaction; the log itself is not touched. options_json (may be NULL/0):
 * {"check": true} makes any difference between the stored and the replayed
 * tables CTXDB_CHECK_FAILED, with nothing changed; it also checks the
 * artifacts the tables describe ("quick", as ctxdb_verify_with), a
 * broken one CTXDB_CHECK_FAILED naming it. *out reports it:
 * {"events": N, "identical": bool, "tables": [{"table", "rows", "before",
 * "after"}]} with a SHA-256 of each table's rows before and after. */
CTXDB_API int ctxdb_rebuild(ctxdb_db *db, const char *options_json, size_t len, char **out,
                            size_t *out_len);

/* Merges each full-text index (the memories' memory_fts, the session
 * search's search_words and search_grams) into one segment, in one write
 * transaction. FTS5 splits an index into a segment per writing
 * transaction and merges them only partly as it goes; queries look up
 * every segment, so an index built by many writes (a bulk load of
 * memories) answers faster merged: at a million memories, a retrieval
 * costs ~20% less. It rewrites every page of the indexes: run it after
 * bulk loads or as periodic maintenance, not after every write. The
 * contents of the indexes do not change. options_json (may be NULL/0):
 * {} (optimize_options.schema.json). *out: {"indexes": [{"index",
 * "segments_before", "segments_after", "pages"}]}. A read-only handle
 * gets CTXDB_READONLY. */
CTXDB_API int ctxdb_optimize(ctxdb_db *db, const char *options_json, size_t len, char **out,
                             size_t *out_len);

/* The export stream: a streaming iterator over NDJSON rows that
 * ctxdb_import takes. First the stored events (as ctxdb_events_iter: of
 * the session, or with session_id NULL of every session in append
 * order), then the artifacts (format 1, schema/json/export_artifact.schema.json
 * and export_artifact_chunk.schema.json): for each artifact the events
 * refer to (with session_id NULL: every artifact), one row
 * {"ctxdb_record": "artifact", "format": 1, "id", "raw_size",
 * "chunk_count", "kind", "mime", "name", "refs": [{"event_id", "role"}],
 * ...} and then its chunks, one row each, in order: {"ctxdb_record":
 * "artifact_chunk", "format": 1, "artifact_id", "idx", "raw_size",
 * "codec", "sha256", "data"} with the chunk as stored (a zstd frame or the
 * raw bytes) in base64 and the SHA-256 of those bytes. A row stays below
 * ~350 KiB. Unknown session: CTXDB_NOT_FOUND. */
CTXDB_API int ctxdb_export(ctxdb_db *db, const char *session_id, size_t id_len,
                           ctxdb_iter **out_iter);

/* Imports NDJSON of stored events (the export stream) in one transaction.
 * Every event keeps its id, seq, ts and hash; an event already present
 * with identical content is skipped; a hash or seq that does not match
 * what this database computes is CTXDB_CORRUPT naming the line.
 * Artifact rows (see ctxdb_export; a row is one when it starts with
 * {"ctxdb_record":) are stored with their references, or only the
 * references when the bytes are there already; every chunk is checked
 * against its SHA-256 and the content against its id: a mismatch, a
 * chunk out of order or an artifact cut short is CTXDB_CORRUPT, a newer
 * format CTXDB_SCHEMA, and nothing (no event either) is imported.
 * *out: {"imported": N, "skipped": M} (events). */
CTXDB_API int ctxdb_import(ctxdb_db *db, const char *ndjson, size_t len, char **out,
                           size_t *out_len);

/* Imports another agent's session files: Claude Code, Codex or Pi JSONL,
 * read by the engine's own readers into ctxdb sessions and events (each
 * event's payload.provenance names its file and lines). options_json
 * (transcript_import_options.schema.json): {"format": "claude-code" |
 * "codex" | "pi", "path": a session file or a folder as the agent keeps it
 * (~/.claude, ~/.codex, ~/.pi/agent or one below), "final"?: true (false
 * while the agent may still be writing: a message whose next part is not
 * written yet waits)}. Each file is imported in one transaction, and
 * incrementally: event ids derive from the source's ids, and a file
 * imported before is read on from its last imported line, so a second
 * import changes nothing and a grown file adds only its new records; a
 * torn last line waits for the next call. A file that no longer begins
 * with the bytes imported from it is reported "changed" and not merged; a
 * malformed line fails its file (rolled back, the error naming file and
 * line) and the other files go on: both still return CTXDB_OK, the report
 * says which. *out (transcript_import_result.schema.json): {"format",
 * "sessions": [{"file", "session_id", "status": "imported" | "unchanged" |
 * "failed" | "changed", "events", "lines", "unknown": {record type: count},
 * "error"?, "active_branch_id"?}], "imported", "unchanged", "changed",
 * "failed"}. Bad options are CTXDB_INVALID_JSON / CTXDB_INVALID_UTF8 /
 * CTXDB_INVALID_ARG (an unknown format among them), a path that does not
 * exist CTXDB_NOT_FOUND, a read-only handle CTXDB_READONLY; then nothing
 * is imported. */
CTXDB_API int ctxdb_transcript_import(ctxdb_db *db, const char *options_json, size_t len,
                                      char **out, size_t *out_len);

/* ---- the session tree -------------------------------------------------- */

/* Every event of a session lies on one branch; the path of a branch is the
 * chain of events root -> leaf (its ancestors' events up to each fork point,
 * then its own). A branch is named by its id (the id of the event that
 * opened it: SessionStarted for main, else its first event) or by a name
 * that is unique in its session; "main" is the main branch. A stored event
 * carries its "branch_id". Shapes: schema/json/branch.schema.json. */

/* Forks a branch by appending a BranchCreated event whose parent is a
 * chosen event of the session. spec_json (branch_fork.schema.json):
 * {"event_id": the fork point, "kind"?: "fork" (default) | "subagent" |
 * "what_if", "name"?, "id"? (the new branch's id; generated when absent),
 * "actor"? (default "host"), "ts"?}. *out is the new branch: {"id",
 * "session_id", "kind", "name"?, "parent_branch_id", "fork_event_id",
 * "fork_seq", "first_seq", "leaf_event_id", "leaf_seq", "event_count"}.
 * An unknown session or event_id is CTXDB_NOT_FOUND; a bad kind or a
 * missing event_id CTXDB_INVALID_ARG; an existing id CTXDB_CONFLICT. */
CTXDB_API int ctxdb_branch_fork(ctxdb_db *db, const char *session_id, size_t id_len,
                                const char *spec_json, size_t len, char **out, size_t *out_len);

/* A JSON array of the session's branches (each as ctxdb_branch_fork
 * returns it), main first, then in the order they were opened. Unknown
 * session: CTXDB_NOT_FOUND. */
CTXDB_API int ctxdb_branch_list(ctxdb_db *db, const char *session_id, size_t id_len, char **out,
                                size_t *out_len);

/* Opens a streaming iterator over the stored events on the path of a branch,
 * root -> leaf (each row as ctxdb_event_get; seq ascends). branch is the
 * branch's id or unique name; NULL (with branch_len 0) is main. An unknown
 * session or branch is CTXDB_NOT_FOUND and a name shared by two branches
 * CTXDB_INVALID_ARG, both reported here rather than by ctxdb_iter_next.
 * Events appended to the branch while iterating may or may not be seen. */
CTXDB_API int ctxdb_branch_path(ctxdb_db *db, const char *session_id, size_t id_len,
                                const char *branch, size_t branch_len, ctxdb_iter **out_iter);

/* The children of an event (event_children.schema.json): {"event_id",
 * "events": [the next event on its branch, then the first event of each
 * branch forked at it, oldest first], "sessions": [the session objects of
 * the child sessions it spawned]}. Unknown id: CTXDB_NOT_FOUND. */
CTXDB_API int ctxdb_event_children(ctxdb_db *db, const char *event_id, size_t id_len, char **out,
                                   size_t *out_len);

/* ---- views of a branch ------------------------------------------------- */

/* What happened on one branch of a session, each a JSON array over the
 * branch's path root -> leaf. branch is the branch's id or a name unique in
 * the session; NULL (with branch_len 0) is main. An unknown session or
 * branch is CTXDB_NOT_FOUND; a name shared by two branches, or an empty
 * session id or branch, CTXDB_INVALID_ARG. */

/* The messages (messages.schema.json): one per message-bearing event, each
 * {"event_id", "seq", "ts", "branch_id", "role": "user" | "assistant" |
 * "tool" | "summary", "tokens", "token_counter", "blocks": [{"type": "text"
 * | "tool_call" | "tool_result" | "thinking" | "summary" | ..., ...}]}. */
CTXDB_API int ctxdb_messages_list(ctxdb_db *db, const char *session_id, size_t id_len,
                                  const char *branch, size_t branch_len, char **out,
                                  size_t *out_len);

/* The tool calls in call order (tool_calls.schema.json): {"call_id", "name",
 * "args", "event_id", "seq", "branch_id", "status": "pending" | "success" |
 * "error", "result": null while pending, else {"event_id", "seq",
 * "branch_id", "artifact_id", "error", "duration_ms", "exit_code"}}, as seen
 * from the branch: a result on another branch leaves the call pending. */
CTXDB_API int ctxdb_tool_calls_list(ctxdb_db *db, const char *session_id, size_t id_len,
                                    const char *branch, size_t branch_len, char **out,
                                    size_t *out_len);

/* The files touched, by path (files.schema.json): {"path", "last_read",
 * "last_write", "reads", "writes", "changes": [{"event_id", "seq", "op":
 * "write" | "diff", "change_summary", "artifact_id"}]}. */
CTXDB_API int ctxdb_files_list(ctxdb_db *db, const char *session_id, size_t id_len,
                               const char *branch, size_t branch_len, char **out, size_t *out_len);

/* ---- state and stats --------------------------------------------------- */

/* The agent state of a session (state.schema.json): {"session_id",
 * "branch_id", "seq", "event_id", "state": {"goal", "plan", "constraints",
 * "facts", "decisions", "open_questions", "resolved_questions", "files",
 * "tool_state", "last_compaction_id"}}, the state right after event_id (at
 * seq) on branch_id. query_json (state_query.schema.json; NULL/0 is {}:
 * main's current state): {"branch_id"?: a branch id or a name unique in the
 * session, "at"?: an event id of the session -- the state right after it,
 * on its own branch}. An unknown session, branch or event is
 * CTXDB_NOT_FOUND; branch_id and at together, a name two branches share, an
 * event of another session or an unknown field CTXDB_INVALID_ARG. */
CTXDB_API int ctxdb_state_get(ctxdb_db *db, const char *session_id, size_t id_len,
                              const char *query_json, size_t len, char **out, size_t *out_len);

/* The stats of one session (stats.schema.json): counts of events, messages,
 * tool calls, approvals, compactions and errors, tokens, latencies. With
 * session_id NULL (id_len 0), the totals of every session ("session_id":
 * null). Unknown session: CTXDB_NOT_FOUND. */
CTXDB_API int ctxdb_stats_get(ctxdb_db *db, const char *session_id, size_t id_len, char **out,
                              size_t *out_len);

/* ---- artifacts ---------------------------------------------------------- */

/* Large outputs (logs, diffs, files, images) kept whole in the database,
 * content-addressed: an artifact's id is "art_" + the hex SHA-256 of its
 * bytes, so the same bytes are stored once however often they are put.
 * Content is raw bytes (pointer + length), not JSON. An id that cannot be
 * an artifact's is CTXDB_INVALID_ARG; one that is not stored
 * CTXDB_NOT_FOUND. Stored content that fails its check is CTXDB_CORRUPT.
 * Artifact JSON (artifact.schema.json): {"id", "raw_size", "stored_size",
 * "chunk_size", "chunk_count", "line_count", "kind", "mime", "name",
 * "created_ts", "refs": [{"event_id", "role", "session_id"}]}. */

/* Stores len bytes at data (NULL with len 0: empty content); *out is the
 * artifact. meta_json (artifact_meta.schema.json; NULL/0 is {}): {"kind"?:
 * "file" | "diff" | "tool_output" | "command_log" | "image" | "dataset" |
 * "url_snapshot" | "other" (default), "mime"?, "name"?, "event_id"? (adds
 * a reference from that event), "role"? (default "output")}. kind, mime
 * and name are those of the first put of the same bytes. A bad kind or an
 * unknown field is CTXDB_INVALID_ARG. */
CTXDB_API int ctxdb_artifact_put(ctxdb_db *db, const void *data, size_t len, const char *meta_json,
                                 size_t meta_len, char **out, size_t *out_len);

/* A streaming put, for content too large to hold in memory (after
 * sqlite3_blob and libgit2's writestream): open a writer, write the bytes
 * in pieces of any size, commit. Chunks are compressed and stored as they
 * fill, so the writer holds one chunk (256 KiB) of the content at a time;
 * at commit the content's SHA-256 names it, and bytes stored already are
 * kept once (only the reference is added), as ctxdb_artifact_put does.
 *
 * A writer holds its handle's write transaction from open to commit:
 *  - Nothing of it is visible or durable before the commit. Freeing an
 *    uncommitted writer, a failed write or commit, closing the handle and
 *    a crash all roll the whole put back: no chunk, no artifact, no
 *    reference. After a failed write the writer takes no more calls
 *    (CTXDB_MISUSE naming the first failure); it must still be freed.
 *  - While it is open, every other call on the same handle (but
 *    ctxdb_close and ctxdb_errmsg) fails with CTXDB_MISUSE: it would run
 *    inside the writer's transaction. One writer per handle. Other
 *    handles (threads, processes) read meanwhile; their writes wait for
 *    the commit up to busy_timeout_ms, then fail with CTXDB_BUSY. */
typedef struct ctxdb_artifact_writer ctxdb_artifact_writer;

/* Opens a writer on db. meta_json is ctxdb_artifact_put's (NULL/0 is {}).
 * Waits for the write lock like any write (CTXDB_BUSY); a bad meta is
 * CTXDB_INVALID_ARG, as for ctxdb_artifact_put. */
CTXDB_API int ctxdb_artifact_writer_open(ctxdb_db *db, const char *meta_json, size_t meta_len,
                                         ctxdb_artifact_writer **out_writer);

/* Appends len bytes at data (NULL with len 0: nothing) to the content. */
CTXDB_API int ctxdb_artifact_writer_write(ctxdb_artifact_writer *w, const void *data, size_t len);

/* Stores what was written and ends the put; *out is the artifact (as
 * ctxdb_artifact_put's). The writer takes no more calls, and is still
 * released with ctxdb_artifact_writer_free. */
CTXDB_API int ctxdb_artifact_writer_commit(ctxdb_artifact_writer *w, char **out, size_t *out_len);

/* Releases the writer; a put not committed is rolled back (an abort).
 * NULL is a no-op; so is a writer freed already. Valid after its handle
 * was closed. */
CTXDB_API void ctxdb_artifact_writer_free(ctxdb_artifact_writer *w);

/* The bytes [offset, offset+length) of an artifact (length -1: to the end;
 * a length past the end is clamped to it). *out is released with
 * ctxdb_free and is NUL-terminated for convenience (the NUL is not counted
 * in *out_len). A negative offset, an offset past the end or a length
 * below -1 is CTXDB_INVALID_ARG. */
CTXDB_API int ctxdb_artifact_read(ctxdb_db *db, const char *id, size_t id_len, int64_t offset,
                                  int64_t length, void **out, size_t *out_len);

/* The artifact (artifact.schema.json). */
CTXDB_API int ctxdb_artifact_info(ctxdb_db *db, const char *id, size_t id_len, char **out,
                                  size_t *out_len);

/* A JSON array of artifacts, oldest first: every one, or (session_id not
 * NULL) those an event of that session refers to. */
CTXDB_API int ctxdb_artifact_list(ctxdb_db *db, const char *session_id, size_t id_len, char **out,
                                  size_t *out_len);

/* Lines first .. first+count-1 (1-based), each with its '\n', as text
 * (count -1: to the end; a count past the end is clamped). first may be
 * line_count+1 (empty); first < 1, beyond that, or count below -1 is
 * CTXDB_INVALID_ARG. */
CTXDB_API int ctxdb_artifact_lines(ctxdb_db *db, const char *id, size_t id_len, int64_t first,
                                   int64_t count, char **out, size_t *out_len);

/* A preview of an artifact for a prompt (artifact_preview.schema.json):
 * {"id", "text", "omitted_lines", "omitted_bytes"}. spec_json
 * (artifact_preview_spec.schema.json; NULL/0 is {}): {"mode"?: "head" |
 * "tail" | "head_tail" (default; a marker line says what was left out),
 * "lines"?, "bytes"? (limits; -1 or absent: none)}. Cuts never split a
 * UTF-8 character. A bad mode or limit is CTXDB_INVALID_ARG. */
CTXDB_API int ctxdb_artifact_preview(ctxdb_db *db, const char *id, size_t id_len,
                                     const char *spec_json, size_t len, char **out,
                                     size_t *out_len);

/* Searches an artifact line by line with a PCRE2 regular expression
 * (artifact_search.schema.json): {"id", "matches": [{"line", "offset",
 * "column", "length", "text", "before": [{"line", "text"}], "after"}],
 * "truncated"}. options_json (artifact_search_options.schema.json; NULL/0
 * is {}): {"before"?, "after"? (context lines), "max_matches"? (default
 * 100), "ignore_case"?}. The lines' texts pass through the context
 * compiler's built-in redaction (a secret shows as "[REDACTED:<rule>]");
 * offsets, columns and lengths are those of the stored bytes. An invalid
 * pattern is CTXDB_INVALID_ARG naming PCRE2's error; a pattern that is not
 * UTF-8 CTXDB_INVALID_UTF8. */
CTXDB_API int ctxdb_artifact_search(ctxdb_db *db, const char *id, size_t id_len,
                                    const char *pattern, size_t pattern_len,
                                    const char *options_json, size_t options_len, char **out,
                                    size_t *out_len);

/* ---- the context compiler ----------------------------------------------- */

/* The smallest sufficient input for a model's next call, within a token
 * budget, every part explained (DESIGN §5). A compile reads the log and its
 * projections and writes nothing unless the request says "record". */

/* Compiles a request (compile_request.schema.json): {"session_id",
 * "max_tokens", "reserved_output_tokens"?, "branch_id"? (an id or a name
 * unique in the session; default main) or "leaf_event_id"? (compile as of
 * that event), "request"? (the current request, when it is not yet in the
 * log), "tool_results"?: [{"tool_call_id", "output"?, "is_error"?,
 * "error"?, "name"?}] (results of calls of the last turn the host has and
 * has not appended; they enter after their call, source type "request"),
 * "continuation"?: true (the model continues its own finished answer),
 * "model"?: the model the bundle is for (when providers have reported, over
 * 3 or more responses to recorded compiles, more input tokens for it than
 * those compiles counted -- see ctxdb_stats' calibration -- the available
 * tokens shrink by that factor, and budget.calibration says so),
 * "instructions"?: [{"kind": "system" | "developer" | "project",
 * "text", "id"?}], "tools"?: [{"name", "description"?, "parameters"?}],
 * "policy"?: {"redact"?: [{"name", "pattern" (PCRE2), "replacement"?}],
 * "builtin_redaction"?, "allow_sensitive"?, "shares"?, "prune"?,
 * "interrupted_calls"?: "close" (default) | "drop"},
 * "format"?: "canonical" (default) | "openai.chat" | "openai.responses" |
 * "anthropic.messages" | "gemini.generate_content" | "ai.sdk", "record"?:
 * true to append a ContextBuilt event at the branch's leaf}.
 * *out is the bundle in the request's format: for "canonical" the bundle
 * JSON (bundle.schema.json: {"format", "session_id", "branch_id",
 * "leaf_event_id", "token_counter", "budget": {"max_tokens",
 * "reserved_output_tokens", "available", "used", "free"}, "tokens_by_kind",
 * "stable_prefix_tokens", "segments": [{"id", "kind", "priority", "role",
 * "content", "tokens", "reason", "sources", "hash", "turn"?}], "excluded":
 * [{"id", "kind", "priority", "tokens"?, "reason", "sources"}],
 * "redactions": [{"segment_id", "rule", "count"}], "hash"}), otherwise the
 * provider's request JSON (see ctxdb_bundle_convert). The same inputs give
 * byte-identical output.
 * Segments are in prompt order: instructions, tools, the standing context
 * (the summary: role "context"), the conversation oldest first ending on
 * what the model must answer (the request or tool results), then the latest
 * turn's context (goal, plan, open questions, files, decisions, facts,
 * memories: role "context"), so consecutive compiles share the prefix up to
 * the previous conversation. A goal that is a prompt's words is not repeated
 * (excluded says where it is). No tool call goes without its result: a call
 * the conversation moved on from (a later prompt or answer, no result) gets
 * a synthetic cancelled result (segment cancelled:<call id>), or with
 * interrupted_calls "drop" leaves with its call (excluded call:<call id>);
 * so does a call a ToolCallCancelled event closed.
 * Codes: CTXDB_INVALID_JSON (not JSON), CTXDB_INVALID_UTF8, CTXDB_INVALID_ARG
 * (the request breaks its schema -- the message names the field --, its
 * fields contradict each other, e.g. branch_id with leaf_event_id or record
 * with leaf_event_id, or a redaction pattern does not compile);
 * CTXDB_NOT_FOUND (an unknown session, branch or leaf event); CTXDB_BUDGET
 * (what is never dropped -- instructions, tools, the current request, goal,
 * open questions, pending tool calls -- alone exceeds max_tokens -
 * reserved_output_tokens; the message gives both sizes); CTXDB_CONFLICT
 * (a tool call of the last turn has no result and tool_results does not
 * give it -- the message names the call id and tool --; the branch ends on
 * the assistant's finished answer with no request, no tool_results and no
 * continuation -- the message names the event --; record, and another
 * writer moved the branch's leaf meanwhile: compile again); CTXDB_INVALID_ARG
 * also for a tool_results entry that answers no call waiting in the last
 * turn, or two entries for one call; CTXDB_READONLY (record on a read-only handle). A failing token
 * counter fails the call (see ctxdb_token_counter_set). */
CTXDB_API int ctxdb_compile(ctxdb_db *db, const char *request_json, size_t len, char **out,
                            size_t *out_len);

/* Converts a canonical bundle (bundle.schema.json, as ctxdb_compile returns
 * it) to the part of a provider's request body the bundle decides -- the
 * conversation and the tools; the host adds model, max_tokens and the like.
 * format (format_len bytes): "openai.chat" ({"messages", "tools"?}),
 * "openai.responses" ({"input", "tools"?}), "anthropic.messages"
 * ({"system"?, "messages", "tools"?}, with cache_control breakpoints),
 * "gemini.generate_content" ({"systemInstruction"?, "contents", "tools"?},
 * the REST body in the @google/genai SDK's field names), "ai.sdk"
 * ({"messages": the Vercel AI SDK's ModelMessage[], "tools"?: {name:
 * {"description"?, "inputSchema"}}}), or "canonical" (the bundle back, byte
 * for byte). Context segments before the conversation go with the
 * instructions (a developer message, system blocks, systemInstruction, a
 * system message); those after it are one "<context>...</context>" text
 * block, the last of the last user-side message. Thinking goes back only
 * to the model family that produced it (a block's "provider"): Anthropic
 * thinking with its signature and redacted thinking, Responses reasoning
 * items, Gemini thoughts and thoughtSignatures, AI SDK reasoning parts
 * with providerOptions; openai.chat gets none. Image blocks are read from
 * their artifacts in this database and emitted as base64 in each
 * provider's own shape. The same bundle gives byte-identical output.
 * Codes: CTXDB_INVALID_ARG (an unknown format, named with the known ones; a
 * bundle that breaks bundle.schema.json or its rules, e.g. a tool_result
 * outside a tool segment -- the message names the field),
 * CTXDB_INVALID_JSON, CTXDB_INVALID_UTF8, CTXDB_NOT_FOUND (an image's
 * artifact is not in the database; the message names it). */
CTXDB_API int ctxdb_bundle_convert(ctxdb_db *db, const char *bundle_json, size_t len,
                                   const char *format, size_t format_len, char **out,
                                   size_t *out_len);

/* A host's token counter: sets *out_tokens to the number of tokens of the
 * len bytes of UTF-8 at text (not NUL-terminated; valid during the call
 * only) and returns 0. It is called on the thread of the ctxdb call that
 * needs the count, while that call holds the handle: it must not call
 * ctxdb on the same handle (the call fails with CTXDB_MISUSE, or
 * deadlocks). A nonzero return or a negative count makes that call fail,
 * with nothing written and a message naming the counter: its code is the
 * returned value when that is a ctxdb status code (1..16, e.g.
 * CTXDB_NOMEM), else CTXDB_INTERNAL (also for a negative count). */
typedef int (*ctxdb_token_count_fn)(void *user_data, const char *text, size_t len,
                                    int64_t *out_tokens);

/* Makes fn (with user_data) this handle's token counter, in place of the
 * built-in estimator ("approx-v2"), for the counts the messages projection
 * caches at append (messages record it as "token_counter": name), for
 * compiles (a row counted by another counter is recounted; a bundle names
 * its counter in "token_counter"), for memory retrieval's budget and for
 * compaction's sizes and budgets. Also a rebuild recounts with it. name
 * (1..100 bytes of UTF-8) identifies the counter in the file: give a new
 * name to a counter that counts differently. fn NULL restores the counter
 * the config's "token_counter" names, by default the built-in estimator
 * (name and user_data are then ignored; name may be NULL/0). The
 * setting belongs to the handle, not the file, and lasts until it is set
 * again or the handle closes; user_data must stay valid until then.
 * Codes: CTXDB_INVALID_ARG (an empty name or one over 100 bytes),
 * CTXDB_INVALID_UTF8. */
CTXDB_API int ctxdb_token_counter_set(ctxdb_db *db, const char *name, size_t name_len,
                                      ctxdb_token_count_fn fn, void *user_data);
/* ---- Search ------------------------------------------------------------ */

/* Searches the text of every session's messages: prompts, assistant text
 * and tool calls (name, args), tool outputs and errors (a spilled output
 * as stored: its preview), compaction summaries. query (UTF-8) is words,
 * each required, found whole first and then as substrings (so pieces of
 * identifiers and paths, and Chinese or Japanese inside a sentence, are
 * found); FTS5 syntax (quotes, OR, NOT, prefix*) is used when the query
 * has some and it parses, and anything else is plain words, never a
 * syntax error. options_json (search_options.schema.json; NULL/0 is {}):
 * {"session_id"?, "branch_id"? (only that branch's path; a name needs
 * session_id), "role"?, "type"?, "since"?, "until"? (ts, ms), "limit"?
 * (1..1000, default 20), "allow_sensitive"? (default false: an event
 * whose visibility is "sensitive", "private" or "secret", or an object
 * saying so, is never a hit, as a compiled bundle withholds it)}. The
 * result (search_result.schema.json):
 * {"query", "syntax": "plain" | "fts", "hits": [{"session_id",
 * "branch_id", "event_id", "seq", "ts", "type", "role", "match": "words" |
 * "substring" | "scan", "rank", "snippet" (the match between « and »)}]}.
 * A snippet shows no secret the context compiler's built-in redaction
 * replaces (keys, tokens, passwords): it has the redaction marker
 * ("[REDACTED:<rule>]") instead, and is then cut from the redacted text.
 * An empty query is CTXDB_INVALID_ARG, one that is not UTF-8
 * CTXDB_INVALID_UTF8; an unknown session or branch CTXDB_NOT_FOUND. */
CTXDB_API int ctxdb_search(ctxdb_db *db, const char *query, size_t len, const char *options_json,
                           size_t opt_len, char **out, size_t *out_len);

/* ---- Memory (DESIGN §7) ------------------------------------------------
 *
 * Governed knowledge reused across sessions. A write, an update and a
 * deletion are MemoryWritten / MemoryUpdated / MemoryDeleted events; a
 * memory of any scope but "session" is readable from every session within
 * the retrieval filters. Each call is one transaction: a failed call
 * leaves the file unchanged. Outputs: memory.schema.json (one version),
 * memory_retrieval.schema.json, memory_forget_result.schema.json. */

/* Writes a memory (memory_write.schema.json) as a MemoryWritten event at
 * the leaf of the session's main branch; returns it. Required: "scope"
 * (global, user, org, workspace, project, session), "content" and
 * "source_refs" (at least one id of an event, a message or an artifact of
 * this database); "scope_id" for every scope but global (a session memory
 * defaults to session_id); one of "expires_at", "ttl_ms" or
 * "update_policy" for every scope but session. A missing or bad field is
 * CTXDB_INVALID_ARG and the message names it (confidence out of 0..1, an
 * expires_at before the event's ts, ...); a source ref that names nothing
 * CTXDB_NOT_FOUND; an existing memory_id CTXDB_CONFLICT. */
CTXDB_API int ctxdb_memory_write(ctxdb_db *db, const char *session_id, size_t id_len,
                                 const char *memory_json, size_t len, char **out, size_t *out_len);

/* Supersedes a memory with a new version (memory_update.schema.json: the
 * fields that change, with "source_refs"); the old version stays, no
 * longer valid. Appended to "session_id", or the session of the memory's
 * last event. Returns the new version. Unknown memory: CTXDB_NOT_FOUND;
 * a forgotten one: CTXDB_CONFLICT. */
CTXDB_API int ctxdb_memory_update(ctxdb_db *db, const char *memory_id, size_t id_len,
                                  const char *update_json, size_t len, char **out, size_t *out_len);

/* Forgets a memory (options: memory_forget.schema.json; NULL/0 is {}).
 * "mode": "tombstone" (default): its content leaves the projection and
 * the search index, the events stay. "purge": the payloads of the
 * memory's events are removed from the log as well; the hash chain stays
 * valid and ctxdb_verify lists each removed payload with the MemoryDeleted
 * event that removed it, which names it with its payload hash. A purge
 * proves only its own session's events: when the memory's events lie in
 * several sessions, one MemoryDeleted per session is appended in one
 * transaction ("event_id" is the first, in the forget's session).
 * Forgetting again (a purge after a tombstone excepted): CTXDB_CONFLICT. */
CTXDB_API int ctxdb_memory_forget(ctxdb_db *db, const char *memory_id, size_t id_len,
                                  const char *options_json, size_t len, char **out,
                                  size_t *out_len);

/* A memory: its current version, or its last one once forgotten (content
 * null, status "forgotten"), with its use count. Unknown or purged:
 * CTXDB_NOT_FOUND. */
CTXDB_API int ctxdb_memory_get(ctxdb_db *db, const char *memory_id, size_t id_len, char **out,
                               size_t *out_len);

/* A JSON array of memories (query: memory_list_query.schema.json; NULL/0
 * is {}): {"scope"?, "scope_id"?, "kind"?, "all_versions"?, "as_of"?
 * (ms: the versions valid then), "limit"?}. Default: the current version
 * of every memory not forgotten. */
CTXDB_API int ctxdb_memory_list(ctxdb_db *db, const char *query_json, size_t len, char **out,
                                size_t *out_len);

/* Retrieval (memory_query.schema.json): {"query"?, "scopes": [{"scope",
 * "id"?}], "agent"?, "now"?, "budget"?, "limit"?, "allow_sensitive"?,
 * "match"?: "any" | "all" | "fts", "record_usage"?}. FTS5 (bm25) over
 * content and keywords, filtered by scope, readers, sensitivity, validity
 * and expiry at "now", ranked by the blend of memory_retrieval.schema.json
 * and fitted to "budget" tokens, counted by the handle's token counter
 * (ctxdb_token_counter_set; the result names it in "counter"). A query that is not valid FTS syntax
 * is plain words, never an error. Counts each included memory as used unless "record_usage" is
 * false (or the handle is read-only). Each "content" passes through the context compiler's
 * built-in redaction, as in a compiled bundle (a secret shows as "[REDACTED:<rule>]"; "tokens"
 * counts the stored content); ctxdb_memory_get returns it as stored. */
CTXDB_API int ctxdb_memory_retrieve(ctxdb_db *db, const char *query_json, size_t len, char **out,
                                    size_t *out_len);

/* Accepts memory candidates (a JSON array of memory_write objects, e.g.
 * those a compaction plan proposes) in one transaction: all are written
 * with their source refs, or none. Returns the JSON array of memories. A
 * bad candidate's message names it ("[i]" for a field, "line i+1" for a
 * rule). */
CTXDB_API int ctxdb_memory_promote(ctxdb_db *db, const char *session_id, size_t id_len,
                                   const char *candidates_json, size_t len, char **out,
                                   size_t *out_len);
/* ---- Tokenizer ---------------------------------------------------------- */

/* Exact token counts with tiktoken's byte-pair encodings: identical ids to
 * tiktoken. encoding is "o200k_base" or "cl100k_base" (NULL/0: o200k_base);
 * an unknown name is CTXDB_INVALID_ARG. Its rank file, the standard
 * "<encoding>.tiktoken", is read from the data directory: the database's
 * config "tokenizer_data_dir", else the environment's CTXDB_TOKENIZER_DATA.
 * It is loaded once per process and checked against the standard file's
 * SHA-256 first: a missing file (or no data directory) is
 * CTXDB_NOT_FOUND, a different file CTXDB_CORRUPT; never a wrong count.
 * db may be NULL: then only CTXDB_TOKENIZER_DATA names the directory and
 * the message of a failure is ctxdb_errmsg(NULL). The text must be valid
 * UTF-8 (CTXDB_INVALID_UTF8 naming the byte): tiktoken encodes text, so
 * bytes that are not have no reference count. Counting does not take the
 * handle's lock; calls may run in parallel on any threads.
 * specials says what the text of a special token ("<|endoftext|>") is: */
enum {
  CTXDB_SPECIALS_DISALLOW = 0, /* CTXDB_INVALID_ARG naming those found (tiktoken's default) */
  CTXDB_SPECIALS_ALLOW = 1,    /* the special token's id */
  CTXDB_SPECIALS_TEXT = 2      /* ordinary text (tiktoken's encode_ordinary) */
};

/* The number of tokens of text; any other specials value is
 * CTXDB_INVALID_ARG. */
CTXDB_API int ctxdb_tokens_count(ctxdb_db *db, const char *encoding, size_t enc_len,
                                 const char *text, size_t len, int specials, int64_t *out_count);

/* The token ids of text: *out_ids (out_n of them; never NULL on success,
 * even for none) is released with ctxdb_free. */
CTXDB_API int ctxdb_tokens_encode(ctxdb_db *db, const char *encoding, size_t enc_len,
                                  const char *text, size_t len, int specials, uint32_t **out_ids,
                                  size_t *out_n);
/* ---- compaction (DESIGN §6) -------------------------------------------- */

/* A compaction replaces, in compiled contexts, the older part of a branch's
 * conversation by a checked, structured summary: plan (where to cut, what
 * the summary must cover) -> summarize (the host's summarizer, or the
 * built-in extractive one) -> check -> commit, as one CompactionCompleted
 * event appended at the branch's leaf in one transaction. The raw events
 * stay; a killed process leaves the whole compaction or none of it.
 *
 * policy_json (compaction_policy.schema.json; NULL/0 is {}): {"branch_id"?,
 * "context_window"? (128000), "reserve_tokens"? (16384), "soft_threshold"?
 * (0.8 of the hard limit), "keep_recent_tokens"? (20000),
 * "min_reclaim_tokens"? (4096), "summary_tokens"? (2000), "timeout_ms"? (0:
 * none), "preview_min_tokens"? (500), "preview_bytes"? (800)}. An unknown
 * field or a bad value is CTXDB_INVALID_ARG; an unknown session or branch
 * CTXDB_NOT_FOUND.
 *
 * A summary (compaction_summary.schema.json) is JSON: {"goal":
 * {"user_goal", "current_task", "acceptance_criteria"}, "constraints":
 * {"hard", "soft", "preferences"}, "progress": {"done", "in_progress",
 * "blocked"}, "split_turn"?, "decisions": [{"decision", "rationale",
 * "evidence_refs", "event_id"}], "facts": [{"content", "confidence",
 * "source_refs"}], "files": {"read": [{"path"}], "modified": [{"path",
 * "change_summary"}]}, "tool_results": [{"tool_call_id", "name", "summary",
 * "artifact_id"}], "errors": [{"tool_call_id", "error", "retried",
 * "resolved"}], "open_questions", "next_steps", "risks", "provenance":
 * {"source_event_ids", "range", "summarizer": {"name", "version"}}}.
 * Its hard checks, each reported by name: summary_json, summary_schema,
 * current_task, next_steps, files_modified (every file written in the
 * range), tool_errors (every tool error in the range, by tool_call_id),
 * tool_pair_split, pending_call, source_refs (an event of the range is
 * named), and summarizer (the host's summarizer failed). A summary that
 * fails is not committed: one CompactionFailed event records the checks,
 * and the call returns CTXDB_CHECK_FAILED, its message naming them. */

/* Whether to compact (compaction_advice.schema.json): {"context_tokens"
 * (anchored on the provider usage of the latest assistant message after
 * the latest compaction, plus the cached counts after it; else the
 * estimate), "estimated_tokens", "anchor", "context_window",
 * "reserve_tokens", "soft_limit", "hard_limit", "level": "ok" | "soft" |
 * "hard", "reclaimable_tokens", "net_benefit_tokens" (reclaimed less the
 * summary), "summary_cost_tokens", "cache_invalidated_tokens",
 * "should_compact", "reason"}. Reads cached counts only. */
CTXDB_API int ctxdb_compact_should(ctxdb_db *db, const char *session_id, size_t id_len,
                                   const char *policy_json, size_t len, char **out,
                                   size_t *out_len);

/* The plan (compaction_plan.schema.json): {"session_id", "branch_id",
 * "leaf_event_id", "status": "ready" | "nothing_to_compact", "policy",
 * "cut": {"first_kept_event_id", "first_kept_seq", "kind": "turn" |
 * "split_turn" | "all", "split_turn_request"?}, "range", "tokens",
 * "previous_compaction": null | {"event_id", "summary"}, "obligations":
 * {"current_task", "files_read", "files_modified", "tool_errors",
 * "decisions", "open_questions"}, "memory_candidates", "pending_calls_kept",
 * "transcript" (the range as text for a model's prompt, large tool outputs
 * as previews with artifact refs)}. Writes nothing. */
CTXDB_API int ctxdb_compact_plan(ctxdb_db *db, const char *session_id, size_t id_len,
                                 const char *policy_json, size_t len, char **out, size_t *out_len);

/* Checks summary_json against plan_json (what ctxdb_compact_plan returned;
 * its leaf_event_id and cut are used, the range is read again) and commits
 * it: *out is the result (compaction_result.schema.json): {"status":
 * "compacted", "event_id", "first_kept_event_id", "range",
 * "tokens_before", "tokens_after", "ratio", "checks", "summarizer",
 * "summary"}. CTXDB_CHECK_FAILED (plus one CompactionFailed event) when a
 * check fails; CTXDB_CONFLICT when the branch moved since the plan. */
CTXDB_API int ctxdb_compact_commit(ctxdb_db *db, const char *session_id, size_t id_len,
                                   const char *plan_json, size_t plan_len, const char *summary_json,
                                   size_t summary_len, char **out, size_t *out_len);

/* The context a host summarizer answers through; valid only during the
 * callback it was given to. */
typedef struct ctxdb_summary_ctx ctxdb_summary_ctx;

/* A host summarizer. It gets the plan JSON (borrowed for the call) and
 * answers with ctxdb_summary_set (which copies the summary: the host keeps
 * ownership of its buffer, as with sqlite3_result_text and
 * SQLITE_TRANSIENT), then returns CTXDB_OK. Any other return value fails
 * the compaction (ctxdb_summary_error may say why first). It runs on the
 * calling thread, and must not call the handle that called it (that call
 * returns CTXDB_MISUSE). It cannot be interrupted: a policy timeout_ms
 * means an answer that came later than that is not used. */
typedef int (*ctxdb_summarize_fn)(void *user_data, const char *plan_json, size_t plan_len,
                                  ctxdb_summary_ctx *ctx);

/* Sets the summary of the callback's answer (copied). CTXDB_MISUSE outside
 * the callback. */
CTXDB_API int ctxdb_summary_set(ctxdb_summary_ctx *ctx, const char *summary_json, size_t len);
/* Says why the summarizer failed (copied; recorded in CompactionFailed). */
CTXDB_API int ctxdb_summary_error(ctxdb_summary_ctx *ctx, const char *message, size_t len);

/* plan -> summarize -> check -> commit in one call: fn NULL uses the
 * built-in extractive summarizer (deterministic, no model; it inherits
 * the previous compaction's summary). *out as ctxdb_compact_commit, or
 * {"status": "nothing_to_compact", "reason"} when the recent turns hold
 * everything (nothing written). A summarizer that fails, returns garbage,
 * an empty summary or answers after timeout_ms, or a summary that fails a
 * check: CTXDB_CHECK_FAILED, and the database is as before plus one
 * CompactionFailed event. */
CTXDB_API int ctxdb_compact(ctxdb_db *db, const char *session_id, size_t id_len,
                            const char *policy_json, size_t len, ctxdb_summarize_fn fn,
                            void *user_data, char **out, size_t *out_len);

/* A structured summary (built-in extractive summarizer) of the path
 * abandoned at from_leaf since its common ancestor with to_event, appended
 * at to_event as a BranchSummarized event -- on a new fork when to_event is
 * not a leaf -- so the branch that continues there knows what was tried
 * (its text enters compiled contexts as a user message).
 * *out (branch_summary.schema.json): {"event_id", "branch_id",
 * "from_leaf_event_id", "common_ancestor_event_id", "range", "summary",
 * "text"}. Unknown events: CTXDB_NOT_FOUND; from_leaf on to_event's path
 * (nothing abandoned), or events of another session: CTXDB_INVALID_ARG. */
CTXDB_API int ctxdb_branch_summarize(ctxdb_db *db, const char *session_id, size_t id_len,
                                     const char *from_leaf, size_t from_len, const char *to_event,
                                     size_t to_len, char **out, size_t *out_len);

/* The compactions on a branch's path (main when branch is NULL), oldest
 * first (compactions.schema.json): [{"event_id", "seq", "branch_id",
 * "first_kept_event_id", "first_kept_seq", "range", "tokens_before",
 * "tokens_after", "ratio", "checks": [{"name", "ok"}], "summarizer"}]. */
CTXDB_API int ctxdb_compactions_list(ctxdb_db *db, const char *session_id, size_t id_len,
                                     const char *branch, size_t branch_len, char **out,
                                     size_t *out_len);

/* ---- provider responses ------------------------------------------------ */

/* Records a provider's answer: the response object (or its stream) is read
 * and appended as the AssistantMessageCreated it means, in one transaction.
 * options_json (response_record_options.schema.json): {"format":
 * "openai.chat" | "openai.responses" | "anthropic.messages" |
 * "gemini.generate_content", "stream"?: bool, "branch_id"?, "parent_id"?,
 * "actor"? ("assistant"), "run_id"?, "ts"?, "latency_ms"?}.
 * response: the complete response object (a ChatCompletion, a Responses
 * response, an Anthropic Message, a GenerateContentResponse) or, with
 * "stream": true, the stream's events as NDJSON, one JSON object a line
 * (openai.chat chunks, openai.responses events, anthropic.messages
 * events, gemini.generate_content streamGenerateContent chunks; "data: "
 * prefixes and "[DONE]" are tolerated), accumulated as the provider's SDK
 * does. The payload holds the blocks (text, tool_call
 * with its id, thinking with its signature or reasoning item, refusal,
 * image), model, stop_reason, usage (uncached input, cache read and
 * write, output, reasoning tokens, and the provider's usage object as
 * provider_usage), provider and response_id.
 * The event id is derived from the session and the response id: the same
 * response recorded again returns the stored event; other content under
 * it is CTXDB_CONFLICT. A missing required field is CTXDB_INVALID_ARG
 * naming its path (e.g. "choices[0].message"), as is a stream without its
 * terminal event; unknown fields are ignored. Nothing is stored on error.
 * Unknown session: CTXDB_NOT_FOUND. *out is the stored event. */
CTXDB_API int ctxdb_response_record(ctxdb_db *db, const char *session_id, size_t id_len,
                                    const char *options_json, size_t opt_len, const char *response,
                                    size_t resp_len, char **out, size_t *out_len);

#ifdef __cplusplus
}
#endif

#endif /* CTXDB_H */
