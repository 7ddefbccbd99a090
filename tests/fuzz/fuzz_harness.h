/* The database every fuzz target runs its inputs against: one handle,
 * open for the whole run, on a file reset to a migrated template after
 * each input.
 *
 * Opening a database runs every migration, and opening any handle parses
 * the schema and prepares its statements anew: each costs far more than
 * an input. So the first call builds the template on SQLite's memdb VFS
 * ("file:/name?vfs=memdb": an in-memory file shared by the connections of
 * the process) holding the session "s" and a short conversation, keeps a
 * copy of its bytes and opens the handle through the C ABI as any file
 * is opened. After an input that changed the file, its checks run and the
 * template's bytes are written back into it (fuzz_check, fuzz_reset), as
 * another process might rewrite a file: nothing in the engine knows it is
 * being fuzzed. The engine keeps nothing of the file's content between
 * calls but what SQLite revalidates (its caches last one transaction, as
 * other processes may write the same file), so every input starts from
 * the same state. (It does remember the transcript files it read to the
 * end, by size and time: fuzz_transcript.c gives each write a time of its
 * own.) */
#ifndef CTXDB_FUZZ_HARNESS_H
#define CTXDB_FUZZ_HARNESS_H

#include <ctxdb/ctxdb.h>
#include <sqlite3.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_DB "file:/ctxdb-fuzz?vfs=memdb"
/* A memdb file has no WAL for the background checkpointer to copy. */
#define FUZZ_CONFIG "{\"checkpoint\":\"inline\"}"

static inline void fuzz_die(const char *what, ctxdb_db *db) {
  fprintf(stderr, "fuzz harness: %s: %s\n", what, db ? ctxdb_errmsg(db) : "");
  abort();
}

static inline void fuzz_drop(char **out) {
  ctxdb_free(*out);
  *out = NULL;
}

/* The template's conversation: a prompt, a tool call and its result, an
 * answer, so that compiles, views and compaction have turns to work on. */
static const char *const kFuzzTemplateEvents[] = {
    "{\"type\":\"UserPromptSubmitted\",\"actor\":\"user\",\"payload\":{\"text\":"
    "\"List the files and fix the failing test in src/cart.py\"}}",
    "{\"type\":\"AssistantMessageCreated\",\"actor\":\"assistant\",\"payload\":{\"content\":"
    "[{\"type\":\"text\",\"text\":\"Looking at the tree first.\"},{\"type\":\"tool_call\","
    "\"id\":\"call_1\",\"name\":\"ls\",\"args\":{\"path\":\"src\"}}],\"model\":\"m\"}}",
    "{\"type\":\"ToolCallFinished\",\"actor\":\"tool\",\"payload\":{\"tool_call_id\":"
    "\"call_1\",\"name\":\"ls\",\"output\":\"cart.py\\ntest_cart.py\\n\"}}",
    "{\"type\":\"AssistantMessageCreated\",\"actor\":\"assistant\",\"payload\":{\"content\":"
    "[{\"type\":\"text\",\"text\":\"The total ignores the discount; fixed in cart.py.\"}],"
    "\"model\":\"m\"}}",
};

/* The harness's own connection to the fuzz file, the template's image
 * and the handle every input runs on. */
static sqlite3 *fuzz_conn;
static unsigned char *fuzz_image;
static sqlite3_int64 fuzz_image_size;
static ctxdb_db *fuzz_handle;
/* Run the rebuild check on one input in this many of those that changed
 * the database (CTXDB_FUZZ_REBUILD_EVERY; replay_main.c makes it 1). */
static unsigned long fuzz_rebuild_every = 16;

/* Builds the template, keeps its image and opens the handle. SQLite reads
 * file: names as URIs only when told so, for every connection, before its
 * first use: the engine's own included. */
static inline void fuzz_start(void) {
  sqlite3_config(SQLITE_CONFIG_URI, 1); /* SQLITE_MISUSE if already in use: checked below */
  const int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_URI;
  if (sqlite3_open_v2(FUZZ_DB, &fuzz_conn, flags, NULL) != SQLITE_OK)
    fuzz_die("cannot open the memdb file", NULL);
  ctxdb_db *db = NULL;
  char *out = NULL;
  size_t n = 0;
  if (ctxdb_open(FUZZ_DB, FUZZ_CONFIG, strlen(FUZZ_CONFIG), &db) != CTXDB_OK)
    fuzz_die("cannot create the template", NULL);
  const char *s = "{\"id\":\"s\",\"payload\":{\"agent_id\":\"a\"}}";
  if (ctxdb_session_create(db, s, strlen(s), &out, &n) != CTXDB_OK) fuzz_die("session_create", db);
  fuzz_drop(&out);
  for (size_t i = 0; i < sizeof kFuzzTemplateEvents / sizeof kFuzzTemplateEvents[0]; ++i) {
    const char *e = kFuzzTemplateEvents[i];
    if (ctxdb_append(db, "s", 1, e, strlen(e), &out, &n) != CTXDB_OK) fuzz_die("append", db);
    fuzz_drop(&out);
  }
  ctxdb_close(db);
  /* Had SQLite not read the name as a URI, the engine would have made a
   * file of that name, and this connection would see no schema. */
  sqlite3_stmt *q = NULL;
  int app = 0;
  if (sqlite3_prepare_v2(fuzz_conn, "PRAGMA application_id", -1, &q, NULL) == SQLITE_OK &&
      sqlite3_step(q) == SQLITE_ROW)
    app = sqlite3_column_int(q, 0);
  sqlite3_finalize(q);
  if (app != 0x63747864) fuzz_die("the engine did not open the memdb file", NULL);
  fuzz_image = sqlite3_serialize(fuzz_conn, "main", &fuzz_image_size, 0);
  if (!fuzz_image) fuzz_die("cannot copy the template", NULL);
  if (ctxdb_open(FUZZ_DB, FUZZ_CONFIG, strlen(FUZZ_CONFIG), &fuzz_handle) != CTXDB_OK)
    fuzz_die("cannot open the fuzz file", NULL);
  const char *every = getenv("CTXDB_FUZZ_REBUILD_EVERY");
  if (every && strtoul(every, NULL, 10) > 0) fuzz_rebuild_every = strtoul(every, NULL, 10);
}

/* The handle for an input: the database as the template left it. */
static inline ctxdb_db *fuzz_open(void) {
  if (!fuzz_handle) fuzz_start();
  return fuzz_handle;
}

/* A handle of its own on the same file (the template as fuzz_open's),
 * opened with config: NULL when ctxdb_open refuses the config. */
static inline ctxdb_db *fuzz_open_with(const char *config, size_t config_len) {
  fuzz_open();
  ctxdb_db *db = NULL;
  if (ctxdb_open(FUZZ_DB, config, config_len, &db) != CTXDB_OK) return NULL;
  return db;
}

/* The log verifies: every event's hash and the chain. */
static inline void fuzz_verify(ctxdb_db *db) {
  char *out = NULL;
  size_t n = 0;
  if (ctxdb_verify(db, NULL, 0, &out, &n) != CTXDB_OK || !strstr(out, "\"ok\":true")) {
    fprintf(stderr, "verify: %s\n", out ? out : ctxdb_errmsg(db));
    abort();
  }
  fuzz_drop(&out);
}

/* The harness's connection locks the file exclusively and returns its
 * file, which it may then read and write directly; the lock also proves
 * that no call left a transaction or a read snapshot open. */
static inline sqlite3_file *fuzz_lock(void) {
  if (sqlite3_exec(fuzz_conn, "BEGIN EXCLUSIVE", NULL, NULL, NULL) != SQLITE_OK)
    fuzz_die("a call left a transaction open", NULL);
  sqlite3_file *f = NULL;
  if (sqlite3_file_control(fuzz_conn, "main", SQLITE_FCNTL_FILE_POINTER, &f) != SQLITE_OK)
    fuzz_die("no file", NULL);
  return f;
}

static inline void fuzz_unlock(void) { sqlite3_exec(fuzz_conn, "ROLLBACK", NULL, NULL, NULL); }

/* Whether a commit changed the file since it held the template: every
 * commit advances the header's change counter. */
static inline int fuzz_changed(void) {
  sqlite3_file *f = fuzz_lock();
  unsigned char counter[4];
  if (f->pMethods->xRead(f, counter, 4, 24) != SQLITE_OK) fuzz_die("cannot read the file", NULL);
  fuzz_unlock();
  return memcmp(counter, fuzz_image + 24, 4) != 0;
}

/* What holds after an input that changed the database, checked through
 * db: the log verifies, and, on one such input in fuzz_rebuild_every
 * (chosen by its bytes, so that a failure reproduces), the projections
 * replay to what they hold. */
static inline void fuzz_check(ctxdb_db *db, const uint8_t *data, size_t size) {
  if (!fuzz_changed()) return;
  fuzz_verify(db);
  uint32_t h = 2166136261u; /* FNV-1a */
  for (size_t i = 0; i < size; ++i) h = (h ^ data[i]) * 16777619u;
  if (h % fuzz_rebuild_every == 0) {
    char *out = NULL;
    size_t n = 0;
    if (ctxdb_rebuild(db, "{\"check\":true}", 14, &out, &n) != CTXDB_OK)
      fuzz_die("rebuild check", db);
    fuzz_drop(&out);
  }
}

/* Writes the template's bytes back into the file when it changed. The
 * engine's connection then sees another change counter, as after another
 * process's commit, and drops the pages it cached; its schema is the
 * template's. */
static inline void fuzz_reset(void) {
  if (!fuzz_changed()) return;
  sqlite3_file *f = fuzz_lock();
  if (f->pMethods->xWrite(f, fuzz_image, (int)fuzz_image_size, 0) != SQLITE_OK ||
      f->pMethods->xTruncate(f, fuzz_image_size) != SQLITE_OK)
    fuzz_die("cannot restore the template", NULL);
  fuzz_unlock();
}

/* After an input on fuzz_open's handle. */
static inline void fuzz_check_and_reset(const uint8_t *data, size_t size) {
  fuzz_check(fuzz_handle, data, size);
  fuzz_reset();
}

/* Splits data at 0xFF bytes (a byte valid UTF-8 never holds) into at most
 * max pieces; returns how many. */
static inline size_t fuzz_split(const uint8_t *data, size_t size, const char **piece, size_t *len,
                                size_t max) {
  size_t k = 0, start = 0;
  for (size_t i = 0; i <= size && k < max; ++i) {
    if (i == size || data[i] == 0xFF) {
      piece[k] = (const char *)data + start;
      len[k++] = i - start;
      start = i + 1;
    }
  }
  return k;
}

#endif
