/*
 * test_damaged.c — a file damaged behind ctxdb's back: stored bytes
 * rewritten with raw SQL, or pages of the file overwritten. Reading what
 * is damaged is CTXDB_CORRUPT with a message naming it (not
 * CTXDB_INTERNAL), and every JSON the library returns stays valid UTF-8
 * whatever bytes it copies from the file.
 */
#include "util.h"

#include <ctxdb/ctxdb.h>

#include <stdlib.h>

/* verify's report (checked to be UTF-8) of db's first broken event;
 * NULL when verify fails or finds nothing broken. The caller frees it. */
static char *first_broken(ctxdb_db *db) {
  char *out = NULL, *broken = NULL;
  size_t n = 0;
  if (!CHECK_RC(ctxdb_verify(db, NULL, 0, &out, &n), CTXDB_OK)) return NULL;
  CHECK(is_utf8(out, n));
  if (CHECK(jbool(out, "ok") == 0)) broken = jraw(out, "first_broken");
  ctxdb_free(out);
  return broken;
}

/* scratch/name holding session ses_d: SessionStarted and three prompts,
 * with the ids evt_d0 .. evt_d3, then changed by `sql` and opened. */
static ctxdb_db *damaged_file(const char *name, const char *sql) {
  const char *path = scratch_path(name);
  ctxdb_db *db = open_scratch(name);
  char *out = NULL;
  size_t n = 0;
  char ev[200];
  int i;
  if (!db) return NULL;
  const char *session = Q("{'id':'ses_d','event_id':'evt_d0','payload':{'agent_id':'a'}}");
  CHECK_RC(ctxdb_session_create(db, session, strlen(session), &out, &n), CTXDB_OK);
  ctxdb_free(out);
  for (i = 1; i <= 3; ++i) {
    snprintf(ev, sizeof ev,
             Q("{'id':'evt_d%d','type':'UserPromptSubmitted','actor':'user',"
               "'payload':{'text':'prompt %d'}}"),
             i, i);
    append_ok(db, "ses_d", ev);
  }
  CHECK_RC(ctxdb_close(db), CTXDB_OK);
  CHECK(sql_exec(path, sql));
  return open_scratch(name);
}

/* rc is CTXDB_CORRUPT and the message names `what`. */
static void corrupt_at(const char *file, int line, ctxdb_db *db, int rc, const char *what) {
  const char *m = ctxdb_errmsg(db);
  char desc[600];
  check_rc_at(rc, CTXDB_CORRUPT, file, line, "the call on the damaged file");
  snprintf(desc, sizeof desc, "the message names '%s' (message: %s)", what, m);
  check_at(strstr(m, what) != NULL, file, line, desc);
}
#define CORRUPT(db, rc, what) corrupt_at(__FILE__, __LINE__, db, rc, what)

/* An id byte that is not UTF-8 (a flipped bit on disk) is reported, and
 * every output that copies the id is still UTF-8: the byte comes out as
 * U+FFFD (EF BF BD). */
static void test_invalid_utf8_in_ids(void) {
  ctxdb_db *db = damaged_file(
      "utf8.ctxdb", "DROP TRIGGER IF EXISTS events_no_update;"
                    "UPDATE events SET id = CAST(id || X'FF' AS TEXT) WHERE id = 'evt_d2';");
  ctxdb_iter *it = NULL;
  char *broken, *rows;
  int count = 0;
  if (!db) return;
  broken = first_broken(db);
  CHECK(broken && jstr_eq(broken, "event_id", "evt_d2\xEF\xBF\xBD"));
  CHECK(broken && jnum(broken, "seq") == 3);
  free(broken);
  if (CHECK_RC(ctxdb_events_iter(db, "ses_d", 5, 1, -1, &it), CTXDB_OK)) {
    rows = iter_rows(it, &count);
    CHECK(count == 4);
    CHECK(rows && is_utf8(rows, strlen(rows)));
    CHECK(rows && strstr(rows, "\"id\":\"evt_d2\xEF\xBF\xBD\"") != NULL);
    free(rows);
  }
  CHECK_RC(ctxdb_close(db), CTXDB_OK);

  /* A session id as the chains table names it: "ses_" and a lone lead byte. */
  CHECK(sql_exec(scratch_path("utf8.ctxdb"),
                 "UPDATE chains SET session_id = CAST(X'7365735FC3' AS TEXT);"));
  db = open_scratch("utf8.ctxdb");
  if (!db) return;
  broken = first_broken(db);
  CHECK(broken && jstr_eq(broken, "session_id", "ses_\xEF\xBF\xBD"));
  free(broken);
  CHECK_RC(ctxdb_close(db), CTXDB_OK);
}

/* A payload that no longer parses: verify reports it; a rebuild, which
 * must read it, fails with CTXDB_CORRUPT naming the event. */
static void test_payload_not_json(void) {
  ctxdb_db *db = damaged_file("payload.ctxdb",
                              "DROP TRIGGER IF EXISTS events_no_update;"
                              "UPDATE events SET payload = '{\"text\":' WHERE id = 'evt_d2';");
  char *out = NULL, *broken;
  size_t n = 0;
  if (!db) return;
  broken = first_broken(db);
  CHECK(broken && jstr_eq(broken, "event_id", "evt_d2"));
  free(broken);
  CORRUPT(db, ctxdb_rebuild(db, NULL, 0, &out, &n), "evt_d2");
  CHECK(out == NULL && n == 0);
  CHECK_RC(ctxdb_close(db), CTXDB_OK);

  /* JSON still, but not what its type's schema allowed when it was
   * appended (SessionStarted's agent_id is a string). */
  db = damaged_file("shape.ctxdb", "DROP TRIGGER IF EXISTS events_no_update;"
                                   "UPDATE events SET payload = '{\"agent_id\":5}' "
                                   "WHERE id = 'evt_d0';");
  if (!db) return;
  CORRUPT(db, ctxdb_rebuild(db, NULL, 0, &out, &n), "evt_d0");
  CHECK_RC(ctxdb_close(db), CTXDB_OK);
}

/* A state snapshot (a zstd frame, schema 16) whose bytes were changed:
 * reading the state at an event after it is CTXDB_CORRUPT naming the
 * snapshot. */
static void test_state_snapshot_not_zstd(void) {
  const char *path = scratch_path("snapshot.ctxdb");
  ctxdb_db *db = open_scratch("snapshot.ctxdb");
  char *out = NULL, *nd;
  size_t n = 0, at = 0;
  int i;
  const char *session = Q("{'id':'ses_z','payload':{'agent_id':'a'}}");
  if (!db) return;
  CHECK_RC(ctxdb_session_create(db, session, strlen(session), &out, &n), CTXDB_OK);
  ctxdb_free(out);
  /* More state changes than a snapshot is taken every (256). */
  nd = (char *)malloc(300 * 160);
  for (i = 1; i <= 300; ++i)
    at += (size_t)snprintf(nd + at, 160,
                           Q("{'id':'st_%d','type':'StateUpdated','actor':'agent','payload':"
                             "{'ops':[{'op':'add_fact','content':'fact %d'}]}}\n"),
                           i, i);
  CHECK_RC(ctxdb_append_batch(db, "ses_z", 5, nd, at, &out, &n), CTXDB_OK);
  ctxdb_free(out);
  free(nd);
  CHECK_RC(ctxdb_close(db), CTXDB_OK);
  CHECK(sql_exec(path, "UPDATE state_snapshots SET state = X'28B52FFD0000DEADBEEF';"));
  db = open_scratch("snapshot.ctxdb");
  if (!db) return;
  CORRUPT(db, ctxdb_state_get(db, "ses_z", 5, "{\"at\":\"st_290\"}", 15, &out, &n),
          "state snapshot");
  CHECK_RC(ctxdb_close(db), CTXDB_OK);
}

/* Pages of the events table overwritten with garbage (a disk that lost
 * them): reading the log is CTXDB_CORRUPT, never an internal error. */
static void test_overwritten_pages(void) {
  const char *path = scratch_path("pages.ctxdb");
  ctxdb_db *db = open_scratch("pages.ctxdb");
  char *out = NULL, *bytes;
  size_t n = 0, size = 0, page = 4096;
  long long first = 0, last = 0;
  int i, rc;
  char ev[300];
  const char *session = Q("{'id':'ses_p','payload':{'agent_id':'a'}}");
  if (!db) return;
  CHECK_RC(ctxdb_session_create(db, session, strlen(session), &out, &n), CTXDB_OK);
  ctxdb_free(out);
  for (i = 0; i < 400; ++i) {
    snprintf(ev, sizeof ev,
             Q("{'type':'UserPromptSubmitted','actor':'user','payload':{'text':'prompt number %d "
               "with a few more words to fill the pages of the events table'}}"),
             i);
    append_ok(db, "ses_p", ev);
  }
  CHECK_RC(ctxdb_close(db), CTXDB_OK);
  {
    sqlite3 *s = NULL;
    sqlite3_stmt *st = NULL;
    if (sqlite3_open_v2(path, &s, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(s,
                           "SELECT min(pageno), max(pageno), (SELECT page_size FROM "
                           "pragma_page_size) FROM dbstat WHERE name = 'events' "
                           "AND pagetype = 'leaf'",
                           -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW) {
      first = sqlite3_column_int64(st, 0);
      last = sqlite3_column_int64(st, 1);
      page = (size_t)sqlite3_column_int64(st, 2);
    }
    sqlite3_finalize(st);
    sqlite3_close(s);
  }
  if (!CHECK(first > 1 && last > first)) return;
  bytes = file_read(path, &size);
  if (!CHECK(bytes && size >= (size_t)last * page)) {
    free(bytes);
    return;
  }
  /* Every leaf page of the log but the first, as garbage. */
  for (i = (int)first + 1; i <= (int)last; ++i) memset(bytes + (size_t)(i - 1) * page, 0x5A, page);
  CHECK(file_write(path, bytes, size));
  free(bytes);
  db = open_scratch("pages.ctxdb");
  if (!db) return;
  rc = ctxdb_verify(db, NULL, 0, &out, &n);
  CHECK_RC(rc, CTXDB_CORRUPT);
  CHECK(out == NULL && n == 0);
  CORRUPT(db, ctxdb_rebuild(db, NULL, 0, &out, &n), "malformed");
  CHECK_RC(ctxdb_close(db), CTXDB_OK);
}

int main(void) {
  scratch_init("damaged");
  test_invalid_utf8_in_ids();
  test_payload_not_json();
  test_state_snapshot_not_zstd();
  test_overwritten_pages();
  scratch_cleanup();
  return check_finish("test_damaged");
}
