/*
 * test_artifact_writer.c — the streaming put (ctxdb_artifact_writer_*)
 * through the C ABI: content written in pieces of any size reads back
 * whole and has the id ctxdb_artifact_put gives it; other calls on the
 * handle are refused while a writer is open; an abort, a closed handle, a
 * failed write and a crashed process all leave no chunk, no artifact and
 * no reference; and every kind of bad input is a status code, never a
 * crash.
 */
#include "util.h"

#include <ctxdb/ctxdb.h>

#include <sqlite3.h>
#include <stdlib.h>
#include <sys/wait.h>

static const char *g_path;

/* Content of n bytes with lines, compressible but not trivial. */
static char *make_content(size_t n, unsigned seed) {
  char *b = (char *)malloc(n ? n : 1);
  size_t i;
  for (i = 0; i < n; ++i) {
    seed = seed * 1103515245u + 12345u;
    b[i] = (i % 61 == 60) ? '\n' : (char)('a' + (seed >> 16) % 26);
  }
  return b;
}

/* A count from the file through SQLite directly (-1 on failure). */
static long long count_rows(const char *sql) {
  sqlite3 *s = NULL;
  sqlite3_stmt *q = NULL;
  long long n = -1;
  if (sqlite3_open_v2(g_path, &s, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
      sqlite3_prepare_v2(s, sql, -1, &q, NULL) == SQLITE_OK && sqlite3_step(q) == SQLITE_ROW)
    n = sqlite3_column_int64(q, 0);
  sqlite3_finalize(q);
  sqlite3_close(s);
  return n;
}

static int exec_sql(const char *sql) {
  sqlite3 *s = NULL;
  int rc = sqlite3_open(g_path, &s);
  if (rc == SQLITE_OK) rc = sqlite3_exec(s, sql, NULL, NULL, NULL);
  sqlite3_close(s);
  return rc == SQLITE_OK;
}

/* Nothing of any put is stored: no chunk, no artifact, no reference. */
#define CHECK_STORE(chunks, artifacts, refs)                                                       \
  do {                                                                                             \
    CHECK(count_rows("SELECT count(*) FROM artifact_chunks") == (chunks));                         \
    CHECK(count_rows("SELECT count(*) FROM artifacts") == (artifacts));                            \
    CHECK(count_rows("SELECT count(*) FROM artifact_refs") == (refs));                             \
  } while (0)

static ctxdb_artifact_writer *open_writer(ctxdb_db *db, const char *meta) {
  ctxdb_artifact_writer *w = NULL;
  CHECK_RC(ctxdb_artifact_writer_open(db, meta, meta ? strlen(meta) : 0, &w), CTXDB_OK);
  CHECK(w != NULL);
  return w;
}

/* Writes data in pieces of the given sizes (cycled), then the rest. */
static void write_pieces(ctxdb_artifact_writer *w, const char *data, size_t n) {
  static const size_t sizes[] = {1, 4095, 262144, 300000, 7, 700000};
  size_t at = 0, k = 0;
  while (at < n) {
    size_t take = sizes[k++ % 6];
    if (take > n - at) take = n - at;
    CHECK_RC(ctxdb_artifact_writer_write(w, data + at, take), CTXDB_OK);
    at += take;
  }
}

static char *commit(ctxdb_artifact_writer *w) {
  char *out = NULL;
  size_t n = 0;
  CHECK_RC(ctxdb_artifact_writer_commit(w, &out, &n), CTXDB_OK);
  CHECK(out && n == strlen(out));
  return out;
}

static void test_streamed_equals_put(ctxdb_db *db) {
  size_t n = 3 * 262144 + 12345;
  char *data = make_content(n, 1);
  ctxdb_artifact_writer *w = open_writer(db, "{\"kind\":\"command_log\",\"name\":\"big.log\"}");
  write_pieces(w, data, n);
  CHECK_RC(ctxdb_artifact_writer_write(w, NULL, 0), CTXDB_OK); /* nothing */
  char *art = commit(w);
  ctxdb_artifact_writer_free(w);
  CHECK(jnum(art, "raw_size") == (int64_t)n);
  CHECK(jnum(art, "chunk_count") == 4);
  CHECK(jstr_eq(art, "kind", "command_log"));
  CHECK(jstr_eq(art, "name", "big.log"));
  char *id = jstr(art, "id");

  /* The same bytes put in one piece: the same id, stored once. */
  char *out = NULL;
  size_t len = 0;
  CHECK_RC(ctxdb_artifact_put(db, data, n, NULL, 0, &out, &len), CTXDB_OK);
  CHECK(out && jstr_eq(out, "id", id));
  ctxdb_free(out);
  CHECK_STORE(4, 1, 0);

  void *back = NULL;
  CHECK_RC(ctxdb_artifact_read(db, id, strlen(id), 0, -1, &back, &len), CTXDB_OK);
  CHECK(len == n && back && memcmp(back, data, n) == 0);
  ctxdb_free(back);

  /* Streaming bytes that are stored already adds only the reference. */
  w = open_writer(db, "{\"event_id\":\"evt_x\",\"role\":\"input\"}");
  write_pieces(w, data, n);
  out = commit(w);
  ctxdb_artifact_writer_free(w);
  CHECK(jstr_eq(out, "id", id));
  CHECK(jstr_eq(out, "kind", "command_log")); /* the first put's */
  ctxdb_free(out);
  CHECK_STORE(4, 1, 1);

  /* Empty content. */
  w = open_writer(db, NULL);
  out = commit(w);
  ctxdb_artifact_writer_free(w);
  CHECK(jstr_eq(out, "id", "art_e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"));
  CHECK(jnum(out, "raw_size") == 0);
  ctxdb_free(out);
  CHECK_STORE(4, 2, 1);
  free(id);
  ctxdb_free(art);
  free(data);
}

/* While a writer is open every other call on its handle is MISUSE, and
 * changes nothing; after the commit they work again. */
static void test_other_calls_refused(ctxdb_db *db) {
  ctxdb_iter *it = NULL;
  CHECK_RC(ctxdb_events_iter(db, NULL, 0, 0, -1, &it), CTXDB_OK);
  ctxdb_artifact_writer *w = open_writer(db, NULL);
  CHECK_RC(ctxdb_artifact_writer_write(w, "abc\n", 4), CTXDB_OK);

  char *out = (char *)"sentinel";
  size_t n = 9;
  CHECK_RC(ctxdb_artifact_list(db, NULL, 0, &out, &n), CTXDB_MISUSE);
  CHECK(out == NULL && n == 0);
  CHECK(strstr(ctxdb_errmsg(db), "artifact writer is open") != NULL);
  CHECK_RC(ctxdb_artifact_put(db, "x", 1, NULL, 0, &out, &n), CTXDB_MISUSE);
  CHECK_RC(ctxdb_session_create(db, "{\"payload\":{\"agent_id\":\"a\"}}", 28, &out, &n),
           CTXDB_MISUSE);
  const char *row = NULL;
  CHECK_RC(ctxdb_iter_next(it, &row, &n), CTXDB_MISUSE);
  ctxdb_artifact_writer *second = (ctxdb_artifact_writer *)1;
  CHECK_RC(ctxdb_artifact_writer_open(db, NULL, 0, &second), CTXDB_MISUSE);
  CHECK(second == NULL);

  /* The writer carries on past the refused calls. */
  CHECK_RC(ctxdb_artifact_writer_write(w, "def\n", 4), CTXDB_OK);
  out = commit(w);
  CHECK(jnum(out, "raw_size") == 8 && jnum(out, "line_count") == 2);
  ctxdb_free(out);
  /* Committed: the writer takes no more calls, the handle all of them. */
  CHECK_RC(ctxdb_artifact_writer_write(w, "x", 1), CTXDB_MISUSE);
  CHECK(strstr(ctxdb_errmsg(db), "committed") != NULL);
  CHECK_RC(ctxdb_artifact_writer_commit(w, &out, &n), CTXDB_MISUSE);
  ctxdb_artifact_writer_free(w);
  CHECK_RC(ctxdb_iter_next(it, &row, &n), CTXDB_DONE);
  ctxdb_iter_free(it);
  CHECK_RC(ctxdb_artifact_list(db, NULL, 0, &out, &n), CTXDB_OK);
  ctxdb_free(out);
}

/* An abort (free before commit) keeps nothing, and frees the handle. */
static void test_abort(ctxdb_db *db) {
  size_t n = 2 * 262144 + 5;
  char *data = make_content(n, 2);
  long long chunks = count_rows("SELECT count(*) FROM artifact_chunks");
  long long arts = count_rows("SELECT count(*) FROM artifacts");
  long long refs = count_rows("SELECT count(*) FROM artifact_refs");
  ctxdb_artifact_writer *w = open_writer(db, "{\"event_id\":\"evt_abort\"}");
  write_pieces(w, data, n);
  ctxdb_artifact_writer_free(w);
  ctxdb_artifact_writer_free(NULL);
  CHECK_STORE(chunks, arts, refs);
  char *out = NULL;
  size_t len = 0;
  CHECK_RC(ctxdb_artifact_list(db, NULL, 0, &out, &len), CTXDB_OK);
  ctxdb_free(out);
  free(data);
}

/* A write that fails in SQLite (a trigger standing in for a full disk)
 * rolls the put back; the writer then refuses calls, naming the failure. */
static void test_failed_write(ctxdb_db *db) {
  long long chunks = count_rows("SELECT count(*) FROM artifact_chunks");
  long long arts = count_rows("SELECT count(*) FROM artifacts");
  CHECK(exec_sql("CREATE TRIGGER test_full BEFORE INSERT ON artifact_chunks WHEN NEW.idx >= 2 "
                 "BEGIN SELECT RAISE(ABORT, 'disk full (test)'); END"));
  size_t n = 4 * 262144;
  char *data = make_content(n, 3);
  ctxdb_artifact_writer *w = open_writer(db, NULL);
  int rc = ctxdb_artifact_writer_write(w, data, n);
  CHECK(rc != CTXDB_OK && rc != CTXDB_MISUSE);
  CHECK(strstr(ctxdb_errmsg(db), "disk full (test)") != NULL);
  CHECK_RC(ctxdb_artifact_writer_write(w, data, 10), CTXDB_MISUSE);
  CHECK(strstr(ctxdb_errmsg(db), "disk full (test)") != NULL);
  char *out = (char *)"sentinel";
  size_t len = 9;
  CHECK_RC(ctxdb_artifact_writer_commit(w, &out, &len), CTXDB_MISUSE);
  CHECK(out == NULL && len == 0);
  /* The handle is usable at once, even before the writer is freed. */
  CHECK_RC(ctxdb_artifact_list(db, NULL, 0, &out, &len), CTXDB_OK);
  ctxdb_free(out);
  ctxdb_artifact_writer_free(w);
  CHECK(exec_sql("DROP TRIGGER test_full"));
  CHECK_STORE(chunks, arts, count_rows("SELECT count(*) FROM artifact_refs"));
  free(data);
}

static void test_bad_input(ctxdb_db *db) {
  ctxdb_artifact_writer *w = (ctxdb_artifact_writer *)1;
  CHECK_RC(ctxdb_artifact_writer_open(NULL, NULL, 0, &w), CTXDB_MISUSE);
  CHECK(w == NULL);
  CHECK_RC(ctxdb_artifact_writer_open(db, NULL, 0, NULL), CTXDB_MISUSE);
  CHECK_RC(ctxdb_artifact_writer_open(db, NULL, 3, &w), CTXDB_MISUSE);
  CHECK_RC(ctxdb_artifact_writer_open(db, "{\"kind\":", 8, &w), CTXDB_INVALID_JSON);
  CHECK(w == NULL);
  CHECK_RC(ctxdb_artifact_writer_open(db, "[1]", 3, &w), CTXDB_INVALID_ARG);
  CHECK_RC(ctxdb_artifact_writer_open(db, "{\"kind\":\"movie\"}", 16, &w), CTXDB_INVALID_ARG);
  CHECK(strstr(ctxdb_errmsg(db), "movie") != NULL);
  CHECK_RC(ctxdb_artifact_writer_open(db, "{\"bogus\":1}", 11, &w), CTXDB_INVALID_ARG);
  CHECK_RC(ctxdb_artifact_writer_open(db, "{\"name\":\"\xff\"}", 12, &w), CTXDB_INVALID_UTF8);
  CHECK(w == NULL);

  CHECK_RC(ctxdb_artifact_writer_write(NULL, "x", 1), CTXDB_MISUSE);
  CHECK_RC(ctxdb_artifact_writer_write((ctxdb_artifact_writer *)&w, "x", 1), CTXDB_MISUSE);
  char *out = NULL;
  size_t n = 0;
  CHECK_RC(ctxdb_artifact_writer_commit(NULL, &out, &n), CTXDB_MISUSE);
  ctxdb_artifact_writer_free((ctxdb_artifact_writer *)&w); /* not ours: ignored */

  /* A bad argument fails the call but not the put. */
  w = open_writer(db, NULL);
  CHECK_RC(ctxdb_artifact_writer_write(w, NULL, 5), CTXDB_MISUSE);
  CHECK(strstr(ctxdb_errmsg(db), "data is NULL") != NULL);
  CHECK_RC(ctxdb_artifact_writer_commit(w, NULL, &n), CTXDB_MISUSE);
  CHECK_RC(ctxdb_artifact_writer_write(w, "\xff\xfe binary is fine", 18), CTXDB_OK);
  out = commit(w);
  CHECK(jnum(out, "raw_size") == 18);
  ctxdb_free(out);
  ctxdb_artifact_writer_free(w);
  /* Used after free: not live. */
  CHECK_RC(ctxdb_artifact_writer_write(w, "x", 1), CTXDB_MISUSE);
  CHECK(strstr(ctxdb_errmsg(NULL), "not live") != NULL);
}

static void test_read_only(void) {
  ctxdb_db *ro = NULL;
  const char *cfg = "{\"read_only\":true}";
  CHECK_RC(ctxdb_open(g_path, cfg, strlen(cfg), &ro), CTXDB_OK);
  ctxdb_artifact_writer *w = NULL;
  CHECK_RC(ctxdb_artifact_writer_open(ro, NULL, 0, &w), CTXDB_READONLY);
  CHECK(w == NULL);
  CHECK_RC(ctxdb_close(ro), CTXDB_OK);
}

/* Closing the handle mid-write rolls the put back; the writer then only
 * reports that, and is still freed. */
static void test_close_mid_write(void) {
  long long chunks = count_rows("SELECT count(*) FROM artifact_chunks");
  long long arts = count_rows("SELECT count(*) FROM artifacts");
  ctxdb_db *db = NULL;
  CHECK_RC(ctxdb_open(g_path, NULL, 0, &db), CTXDB_OK);
  size_t n = 3 * 262144;
  char *data = make_content(n, 4);
  ctxdb_artifact_writer *w = open_writer(db, NULL);
  write_pieces(w, data, n);
  CHECK_RC(ctxdb_close(db), CTXDB_OK);
  CHECK_RC(ctxdb_artifact_writer_write(w, "x", 1), CTXDB_MISUSE);
  CHECK(strstr(ctxdb_errmsg(NULL), "closed") != NULL);
  ctxdb_artifact_writer_free(w);
  CHECK_STORE(chunks, arts, count_rows("SELECT count(*) FROM artifact_refs"));
  free(data);
}

/* A process that dies mid-write leaves nothing behind. */
static void test_crash_mid_write(void) {
  long long chunks = count_rows("SELECT count(*) FROM artifact_chunks");
  long long arts = count_rows("SELECT count(*) FROM artifacts");
  pid_t pid = fork();
  if (pid == 0) {
    ctxdb_db *db = NULL;
    ctxdb_artifact_writer *w = NULL;
    size_t n = 3 * 262144;
    char *data = make_content(n, 5);
    if (ctxdb_open(g_path, NULL, 0, &db) != CTXDB_OK) _exit(3);
    if (ctxdb_artifact_writer_open(db, "{\"event_id\":\"evt_crash\"}", 24, &w) != CTXDB_OK)
      _exit(4);
    if (ctxdb_artifact_writer_write(w, data, n) != CTXDB_OK) _exit(5);
    _exit(0); /* no commit, no close: as a crash */
  }
  int status = 0;
  CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
  ctxdb_db *db = NULL;
  CHECK_RC(ctxdb_open(g_path, NULL, 0, &db), CTXDB_OK);
  CHECK_STORE(chunks, arts, count_rows("SELECT count(*) FROM artifact_refs"));
  CHECK(count_rows("SELECT count(*) FROM artifact_refs WHERE event_id='evt_crash'") == 0);
  /* The lock went with the process: a new writer gets it. */
  ctxdb_artifact_writer *w = open_writer(db, NULL);
  ctxdb_artifact_writer_free(w);
  CHECK_RC(ctxdb_close(db), CTXDB_OK);
}

int main(void) {
  scratch_init("artifact-writer");
  g_path = scratch_path("w.ctxdb");
  ctxdb_db *db = NULL;
  if (!CHECK_RC(ctxdb_open(g_path, NULL, 0, &db), CTXDB_OK)) return check_finish("artifact_writer");
  test_streamed_equals_put(db);
  test_other_calls_refused(db);
  test_abort(db);
  test_failed_write(db);
  test_bad_input(db);
  CHECK_RC(ctxdb_close(db), CTXDB_OK);
  test_read_only();
  test_close_mid_write();
  test_crash_mid_write();
  scratch_cleanup();
  return check_finish("artifact_writer");
}
