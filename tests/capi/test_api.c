/*
 * test_api.c — every entry point of ctxdb.h, through the C ABI only.
 *
 * The happy path builds a small database (two sessions, single appends,
 * batches, retries), reads it back every way the header offers, verifies it
 * and copies it into a second file through export/import. Then every entry
 * point gets bad input: NULL handles and pointers, invalid UTF-8, malformed
 * or mistyped JSON, missing fields, unknown ids, closed handles, read-only
 * handles, files that are not ctxdb databases and a newer schema. Each
 * failure must return the documented code, clear the out-parameters, leave
 * a message, and leave the database exactly as it was.
 */
#include "check.h"
#include "util.h"

#include <ctxdb/ctxdb.h>

#include <limits.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define F __FILE__, __LINE__
#define ANY_ERROR (-1) /* a `want` that accepts any error code */
/* A `want` that accepts either of two codes (where the header allows both). */
#define OR_CODE(a, b) ((((b) + 1) << 8) | (a))

/* Out-parameters start as this garbage so a failing call must clear them. */
static char sentinel_;
#define SENT ((char *)&sentinel_)
#define SENT_DB ((ctxdb_db *)(void *)&sentinel_)
#define SENT_IT ((ctxdb_iter *)(void *)&sentinel_)
#define SENT_LEN ((size_t)0xdeadbeefu)

static size_t slen(const char *s) { return s ? strlen(s) : 0; }

/* The handle that was closed, which snapshots must never touch. */
static const ctxdb_db *g_closed = NULL;

/* ---- ids appended to the main database, in append order ------------------ */

static ctxdb_db *g_db1 = NULL;
static char *g_order[512];
static int g_norder = 0;

static void record_id(const ctxdb_db *db, const char *event_json) {
  char *id;
  if (db != g_db1 || g_norder >= 512) return;
  id = jstr(event_json, "id");
  if (id) g_order[g_norder++] = id;
}

/* ---- state snapshots ------------------------------------------------------ */

/* The export stream plus the session list: what "unchanged" compares. */
static char *snapshot(ctxdb_db *db) {
  int rows;
  char *exp, *list = NULL, *s;
  size_t n = 0;
  if (!db || db == g_closed) return NULL;
  exp = export_all(db, &rows);
  if (ctxdb_session_list(db, &list, &n) != CTXDB_OK) list = NULL;
  s = (char *)malloc(slen(exp) + slen(list) + 16);
  sprintf(s, "%s\n--\n%s", exp ? exp : "(export failed)", list ? list : "(list failed)");
  free(exp);
  ctxdb_free(list);
  return s;
}

static void unchanged_at(const char *file, int line, const char *what, ctxdb_db *db, char *before) {
  char *after;
  char desc[300];
  if (!before) return;
  after = snapshot(db);
  snprintf(desc, sizeof desc, "%s leaves the database unchanged", what);
  check_at(after && strcmp(before, after) == 0, file, line, desc);
  free(after);
  free(before);
}

/* ---- failure checks -------------------------------------------------------- */

/* rc is the wanted error (any error for ANY_ERROR); messages are set on the
 * thread and on the handle, equal, and name `mention` when given. */
static void failed_at(const char *file, int line, const char *what, const ctxdb_db *db, int rc,
                      int want, const char *mention) {
  const char *g, *m;
  char desc[600];
  if (want == ANY_ERROR) {
    snprintf(desc, sizeof desc, "%s fails (got %s)", what, ctxdb_errstr(rc));
    check_at(rc != CTXDB_OK, file, line, desc);
  } else if (want > 0xff) {
    int a = want & 0xff, b = (want >> 8) - 1;
    snprintf(desc, sizeof desc, "%s fails with %s or %s (got %s)", what, ctxdb_errstr(a),
             ctxdb_errstr(b), ctxdb_errstr(rc));
    check_at(rc == a || rc == b, file, line, desc);
  } else {
    check_rc_at(rc, want, file, line, what);
  }
  if (rc == CTXDB_OK) return;
  g = ctxdb_errmsg(NULL);
  snprintf(desc, sizeof desc, "%s: ctxdb_errmsg(NULL) is a non-empty message", what);
  check_at(g != NULL && g[0] != '\0', file, line, desc);
  m = g;
  if (db && db != g_closed) {
    m = ctxdb_errmsg(db);
    snprintf(desc, sizeof desc, "%s: ctxdb_errmsg(db) is a non-empty message", what);
    check_at(m != NULL && m[0] != '\0', file, line, desc);
    snprintf(desc, sizeof desc, "%s: ctxdb_errmsg(db) equals ctxdb_errmsg(NULL) ('%s' vs '%s')",
             what, check_msg_(m), check_msg_(g));
    check_at(m && g && strcmp(m, g) == 0, file, line, desc);
  }
  if (mention) {
    snprintf(desc, sizeof desc, "%s: the message names '%s' (message: %s)", what, mention,
             check_msg_(m));
    check_at(m && strstr(m, mention) != NULL, file, line, desc);
  }
}

static void cleared_at(const char *file, int line, const char *what, const void *out,
                       size_t out_len) {
  char desc[300];
  snprintf(desc, sizeof desc, "%s sets its out-parameters to NULL/0", what);
  check_at(out == NULL && out_len == 0, file, line, desc);
}

/* The name "line N" as a whole token (not "line 30" for N = 3). */
static int names_line(const char *msg, int n) {
  char pat[32];
  const char *p;
  size_t k;
  if (!msg) return 0;
  snprintf(pat, sizeof pat, "line %d", n);
  k = strlen(pat);
  for (p = strstr(msg, pat); p; p = strstr(p + 1, pat))
    if (!(p[k] >= '0' && p[k] <= '9')) return 1;
  return 0;
}

static void names_line_at(const char *file, int line, const char *what, const ctxdb_db *db, int n) {
  const char *m = ctxdb_errmsg(db);
  char desc[600];
  snprintf(desc, sizeof desc, "%s: the message names line %d (message: %s)", what, n,
           check_msg_(m));
  check_at(names_line(m, n), file, line, desc);
}

/* ---- successful calls ------------------------------------------------------ */

/* Checks a call that must succeed and returns its buffer (NULL on failure). */
static char *ok_buf_at(const char *file, int line, const char *what, int rc, char *out, size_t n) {
  char desc[300];
  if (!check_rc_at(rc, CTXDB_OK, file, line, what)) return NULL;
  snprintf(desc, sizeof desc, "%s returns a NUL-terminated buffer of out_len", what);
  if (!check_at(out != NULL && out != SENT && strlen(out) == n, file, line, desc)) return NULL;
  return out;
}

static char *ok_create_at(const char *file, int line, ctxdb_db *db, const char *json) {
  char *out = SENT, *ev;
  size_t n = SENT_LEN;
  int rc = ctxdb_session_create(db, json, slen(json), &out, &n);
  out = ok_buf_at(file, line, "ctxdb_session_create", rc, out, n);
  if (out && db == g_db1 && g_norder < 512) {
    ev = jstr(out, "started_event_id");
    if (ev) g_order[g_norder++] = ev;
  }
  return out;
}
#define OK_CREATE(db, json) ok_create_at(F, db, json)

static char *ok_append_at(const char *file, int line, ctxdb_db *db, const char *sid,
                          const char *json) {
  char *out = SENT;
  size_t n = SENT_LEN;
  int rc = ctxdb_append(db, sid, slen(sid), json, slen(json), &out, &n);
  out = ok_buf_at(file, line, "ctxdb_append", rc, out, n);
  if (out) record_id(db, out);
  return out;
}
#define OK_APPEND(db, sid, json) ok_append_at(F, db, sid, json)

static char *ok_get_at(const char *file, int line, ctxdb_db *db, const char *sid) {
  char *out = SENT;
  size_t n = SENT_LEN;
  int rc = ctxdb_session_get(db, sid, slen(sid), &out, &n);
  return ok_buf_at(file, line, "ctxdb_session_get", rc, out, n);
}
#define OK_GET(db, sid) ok_get_at(F, db, sid)

static char *ok_event_at(const char *file, int line, ctxdb_db *db, const char *eid) {
  char *out = SENT;
  size_t n = SENT_LEN;
  int rc = ctxdb_event_get(db, eid, slen(eid), &out, &n);
  return ok_buf_at(file, line, "ctxdb_event_get", rc, out, n);
}
#define OK_EVENT(db, eid) ok_event_at(F, db, eid)

static char *ok_list_at(const char *file, int line, ctxdb_db *db) {
  char *out = SENT;
  size_t n = SENT_LEN;
  int rc = ctxdb_session_list(db, &out, &n);
  return ok_buf_at(file, line, "ctxdb_session_list", rc, out, n);
}
#define OK_LIST(db) ok_list_at(F, db)

static char *ok_verify_at(const char *file, int line, ctxdb_db *db, const char *sid) {
  char *out = SENT;
  size_t n = SENT_LEN;
  int rc = ctxdb_verify(db, sid, slen(sid), &out, &n);
  return ok_buf_at(file, line, "ctxdb_verify", rc, out, n);
}
#define OK_VERIFY(db, sid) ok_verify_at(F, db, sid)

/* Appends a batch and records the ids it stored (read back by seq). */
static char *ok_batch_at(const char *file, int line, ctxdb_db *db, const char *sid,
                         const char *ndjson) {
  char *out = SENT;
  size_t n = SENT_LEN;
  int rc = ctxdb_append_batch(db, sid, slen(sid), ndjson, slen(ndjson), &out, &n);
  out = ok_buf_at(file, line, "ctxdb_append_batch", rc, out, n);
  if (out && db == g_db1) {
    int rows, i;
    char **lines;
    char *text = rows_of(db, sid, jnum(out, "first_seq"), jnum(out, "last_seq"), &rows);
    int nl = split_lines(text, &lines);
    for (i = 0; i < nl; ++i) {
      record_id(db, lines[i]);
      free(lines[i]);
    }
    free(lines);
    free(text);
  }
  return out;
}
#define OK_BATCH(db, sid, ndjson) ok_batch_at(F, db, sid, ndjson)

static ctxdb_db *ok_open_at(const char *file, int line, const char *path, const char *config) {
  ctxdb_db *db = SENT_DB;
  int rc = ctxdb_open(path, config, slen(config), &db);
  if (!check_rc_at(rc, CTXDB_OK, file, line, "ctxdb_open")) return NULL;
  check_at(db != NULL && db != SENT_DB, file, line, "ctxdb_open sets *out_db");
  return db == SENT_DB ? NULL : db;
}
#define OK_OPEN(path, config) ok_open_at(F, path, config)

/* ---- failing calls --------------------------------------------------------- */
/* Each runs one call that must fail with `want`, checks the message and the
 * cleared out-parameters, and (for a live handle) that nothing changed. */

static void create_fails_at(const char *file, int line, ctxdb_db *db, const char *json, size_t len,
                            int null_out, int want, const char *mention) {
  char *before = snapshot(db), *out = SENT;
  size_t n = SENT_LEN;
  int rc = ctxdb_session_create(db, json, len, null_out ? NULL : &out, null_out ? NULL : &n);
  failed_at(file, line, "ctxdb_session_create", db, rc, want, mention);
  if (!null_out) cleared_at(file, line, "ctxdb_session_create", out, n);
  if (rc == CTXDB_OK && !null_out) ctxdb_free(out);
  unchanged_at(file, line, "a failed ctxdb_session_create", db, before);
}
#define CREATE_FAILS(db, json, want, mention)                                                      \
  create_fails_at(F, db, json, slen(json), 0, want, mention)

/* Writes that take a session id and a JSON input: append, branch_fork. */
typedef int (*sid_json_fn)(ctxdb_db *, const char *, size_t, const char *, size_t, char **,
                           size_t *);

static void write_fails_at(const char *file, int line, const char *what, sid_json_fn fn,
                           ctxdb_db *db, const char *sid, size_t sid_len, const char *json,
                           size_t len, int null_out, int want, const char *mention) {
  char *before = snapshot(db), *out = SENT;
  char desc[300];
  size_t n = SENT_LEN;
  int rc = fn(db, sid, sid_len, json, len, null_out ? NULL : &out, null_out ? NULL : &n);
  failed_at(file, line, what, db, rc, want, mention);
  if (!null_out) cleared_at(file, line, what, out, n);
  if (rc == CTXDB_OK && !null_out) ctxdb_free(out);
  snprintf(desc, sizeof desc, "a failed %s", what);
  unchanged_at(file, line, desc, db, before);
}

static void append_fails_at(const char *file, int line, ctxdb_db *db, const char *sid,
                            size_t sid_len, const char *json, size_t len, int null_out, int want,
                            const char *mention) {
  write_fails_at(file, line, "ctxdb_append", ctxdb_append, db, sid, sid_len, json, len, null_out,
                 want, mention);
}
#define APPEND_FAILS(db, sid, json, want, mention)                                                 \
  append_fails_at(F, db, sid, slen(sid), json, slen(json), 0, want, mention)

static void batch_fails_at(const char *file, int line, ctxdb_db *db, const char *sid,
                           size_t sid_len, const char *nd, size_t len, int null_out, int want,
                           const char *mention, int line_no) {
  char *before = snapshot(db), *out = SENT;
  size_t n = SENT_LEN;
  int rc =
      ctxdb_append_batch(db, sid, sid_len, nd, len, null_out ? NULL : &out, null_out ? NULL : &n);
  failed_at(file, line, "ctxdb_append_batch", db, rc, want, mention);
  if (rc != CTXDB_OK && line_no > 0) names_line_at(file, line, "ctxdb_append_batch", db, line_no);
  if (!null_out) cleared_at(file, line, "ctxdb_append_batch", out, n);
  if (rc == CTXDB_OK && !null_out) ctxdb_free(out);
  unchanged_at(file, line, "a failed ctxdb_append_batch", db, before);
}
#define BATCH_FAILS(db, sid, nd, want, mention, line_no)                                           \
  batch_fails_at(F, db, sid, slen(sid), nd, slen(nd), 0, want, mention, line_no)

static void import_fails_at(const char *file, int line, ctxdb_db *db, const char *nd, size_t len,
                            int null_out, int want, const char *mention, int line_no) {
  char *before = snapshot(db), *out = SENT;
  size_t n = SENT_LEN;
  int rc = ctxdb_import(db, nd, len, null_out ? NULL : &out, null_out ? NULL : &n);
  failed_at(file, line, "ctxdb_import", db, rc, want, mention);
  if (rc != CTXDB_OK && line_no > 0) names_line_at(file, line, "ctxdb_import", db, line_no);
  if (!null_out) cleared_at(file, line, "ctxdb_import", out, n);
  if (rc == CTXDB_OK && !null_out) ctxdb_free(out);
  unchanged_at(file, line, "a failed ctxdb_import", db, before);
}
#define IMPORT_FAILS(db, nd, want, mention, line_no)                                               \
  import_fails_at(F, db, nd, slen(nd), 0, want, mention, line_no)

/* Read calls: session_get, event_get, verify (an id, then a buffer). */
typedef int (*id_read_fn)(ctxdb_db *, const char *, size_t, char **, size_t *);

static void read_fails_at(const char *file, int line, const char *what, id_read_fn fn, ctxdb_db *db,
                          const char *id, size_t id_len, int null_out, int want,
                          const char *mention) {
  char *out = SENT;
  size_t n = SENT_LEN;
  int rc = fn(db, id, id_len, null_out ? NULL : &out, null_out ? NULL : &n);
  failed_at(file, line, what, db, rc, want, mention);
  if (!null_out) cleared_at(file, line, what, out, n);
  if (rc == CTXDB_OK && !null_out) ctxdb_free(out);
}

static void list_fails_at(const char *file, int line, ctxdb_db *db, int null_out, int want) {
  char *out = SENT;
  size_t n = SENT_LEN;
  int rc = ctxdb_session_list(db, null_out ? NULL : &out, null_out ? NULL : &n);
  failed_at(file, line, "ctxdb_session_list", db, rc, want, NULL);
  if (!null_out) cleared_at(file, line, "ctxdb_session_list", out, n);
  if (rc == CTXDB_OK && !null_out) ctxdb_free(out);
}

/* rc and *out_iter of an iterator-opening call that must fail. */
static void iter_failed_at(const char *file, int line, const char *what, ctxdb_db *db, int rc,
                           int want, const char *mention, ctxdb_iter *it, int null_out) {
  char desc[300];
  failed_at(file, line, what, db, rc, want, mention);
  if (null_out) return;
  snprintf(desc, sizeof desc, "a failed %s sets *out_iter = NULL", what);
  check_at(it == NULL, file, line, desc);
  if (rc == CTXDB_OK && it != SENT_IT) ctxdb_iter_free(it);
}

static void iter_fails_at(const char *file, int line, ctxdb_db *db, const char *sid, size_t sid_len,
                          int null_out, int want) {
  ctxdb_iter *it = SENT_IT;
  int rc = ctxdb_events_iter(db, sid, sid_len, 1, -1, null_out ? NULL : &it);
  iter_failed_at(file, line, "ctxdb_events_iter", db, rc, want, NULL, it, null_out);
}

static void path_fails_at(const char *file, int line, ctxdb_db *db, const char *sid, size_t sid_len,
                          const char *branch, size_t branch_len, int null_out, int want,
                          const char *mention) {
  ctxdb_iter *it = SENT_IT;
  int rc = ctxdb_branch_path(db, sid, sid_len, branch, branch_len, null_out ? NULL : &it);
  iter_failed_at(file, line, "ctxdb_branch_path", db, rc, want, mention, it, null_out);
}

static void open_fails_at(const char *file, int line, const char *path, const char *config,
                          size_t len, int want, const char *mention) {
  ctxdb_db *db = SENT_DB;
  int rc = ctxdb_open(path, config, len, &db);
  failed_at(file, line, "ctxdb_open", NULL, rc, want, mention);
  check_at(db == NULL, file, line, "a failed ctxdb_open sets *out_db = NULL");
  if (rc == CTXDB_OK && db != SENT_DB) ctxdb_close(db);
}
#define OPEN_FAILS(path, config, want, mention)                                                    \
  open_fails_at(F, path, config, slen(config), want, mention)

/* ===========================================================================
 * versions and status names
 * ======================================================================== */

static void test_versions_and_errstr(void) {
  static const struct {
    int code;
    const char *name;
  } names[] = {
      {CTXDB_OK, "CTXDB_OK"},
      {CTXDB_MISUSE, "CTXDB_MISUSE"},
      {CTXDB_INVALID_ARG, "CTXDB_INVALID_ARG"},
      {CTXDB_INVALID_UTF8, "CTXDB_INVALID_UTF8"},
      {CTXDB_INVALID_JSON, "CTXDB_INVALID_JSON"},
      {CTXDB_NOT_FOUND, "CTXDB_NOT_FOUND"},
      {CTXDB_CONFLICT, "CTXDB_CONFLICT"},
      {CTXDB_BUSY, "CTXDB_BUSY"},
      {CTXDB_BUDGET, "CTXDB_BUDGET"},
      {CTXDB_CHECK_FAILED, "CTXDB_CHECK_FAILED"},
      {CTXDB_CORRUPT, "CTXDB_CORRUPT"},
      {CTXDB_IO, "CTXDB_IO"},
      {CTXDB_NOMEM, "CTXDB_NOMEM"},
      {CTXDB_SCHEMA, "CTXDB_SCHEMA"},
      {CTXDB_READONLY, "CTXDB_READONLY"},
      {CTXDB_INTERNAL, "CTXDB_INTERNAL"},
      {CTXDB_NOTADB, "CTXDB_NOTADB"},
      {CTXDB_ROW, "CTXDB_ROW"},
      {CTXDB_DONE, "CTXDB_DONE"},
  };
  static const int unknown[] = {-1, 17, 18, 99, 102, 1000, INT_MAX, INT_MIN};
  size_t i, j;
  char vbuf[64];

  /* The numbering is part of the ABI. */
  CHECK(CTXDB_OK == 0 && CTXDB_MISUSE == 1 && CTXDB_INVALID_ARG == 2);
  CHECK(CTXDB_INVALID_UTF8 == 3 && CTXDB_INVALID_JSON == 4);
  CHECK(CTXDB_NOT_FOUND == 5 && CTXDB_CONFLICT == 6 && CTXDB_BUSY == 7);
  CHECK(CTXDB_BUDGET == 8 && CTXDB_CHECK_FAILED == 9 && CTXDB_CORRUPT == 10);
  CHECK(CTXDB_IO == 11 && CTXDB_NOMEM == 12 && CTXDB_SCHEMA == 13);
  CHECK(CTXDB_READONLY == 14 && CTXDB_INTERNAL == 15 && CTXDB_NOTADB == 16);
  CHECK(CTXDB_ROW == 100 && CTXDB_DONE == 101);

  for (i = 0; i < sizeof names / sizeof names[0]; ++i) {
    const char *s = ctxdb_errstr(names[i].code);
    if (!CHECK(s != NULL)) continue;
    if (!CHECK(strcmp(s, names[i].name) == 0))
      fprintf(stderr, "    ctxdb_errstr(%d) = '%s', want '%s'\n", names[i].code, s, names[i].name);
  }
  for (i = 0; i < sizeof unknown / sizeof unknown[0]; ++i) {
    const char *s = ctxdb_errstr(unknown[i]);
    if (!CHECK(s != NULL && s[0] != '\0')) continue;
    for (j = 0; j < sizeof names / sizeof names[0]; ++j)
      if (!CHECK(strcmp(s, names[j].name) != 0))
        fprintf(stderr, "    ctxdb_errstr(%d) = '%s', a known code's name\n", unknown[i], s);
  }

  CHECK(ctxdb_version() != NULL);
  CHECK(ctxdb_version() && strcmp(ctxdb_version(), CTXDB_VERSION_STRING) == 0);
  snprintf(vbuf, sizeof vbuf, "%d.%d.%d", CTXDB_VERSION_MAJOR, CTXDB_VERSION_MINOR,
           CTXDB_VERSION_PATCH);
  CHECK(strcmp(vbuf, CTXDB_VERSION_STRING) == 0);
  CHECK(ctxdb_version_number() == CTXDB_VERSION_NUMBER);
  CHECK(CTXDB_VERSION_NUMBER ==
        CTXDB_VERSION_MAJOR * 1000000 + CTXDB_VERSION_MINOR * 1000 + CTXDB_VERSION_PATCH);
  CHECK(ctxdb_abi_version() == CTXDB_ABI_VERSION);

  /* Destructors accept NULL. */
  ctxdb_free(NULL);
  ctxdb_iter_free(NULL);
  CHECK_RC(ctxdb_close(NULL), CTXDB_OK);
}

/* ===========================================================================
 * the happy path
 * ======================================================================== */

static char *g_s1 = NULL;       /* generated session id */
static char *g_s2 = NULL;       /* host-given session id */
static char *g_started1 = NULL; /* s1's SessionStarted event */

static void test_happy_path(const char *path) {
  char *s1obj, *s2obj, *got, *list, *ev, *started, *payload, *b, *v;
  char *prev_hash, *prev_id, *last_id, *text, *meta;
  char **items, **lines;
  int64_t t0, t1;
  int n, i, rows, nl;
  const char *row;
  size_t rlen;
  ctxdb_iter *it;

  CHECK(!file_exists(path));
  t0 = now_ms();
  g_db1 = OK_OPEN(path, NULL);
  if (!g_db1) exit(check_finish("test_api (cannot open)"));
  CHECK(file_exists(path));

  /* -- sessions ------------------------------------------------------------ */
  s1obj = OK_CREATE(g_db1, Q("{'payload':{'agent_id':'a'}}"));
  t1 = now_ms();
  CHECK(s1obj != NULL);
  CHECK(jstr_prefix(s1obj, "id", "ses_"));
  CHECK(jstr_eq(s1obj, "agent_id", "a"));
  CHECK(jnum(s1obj, "event_count") == 1);
  CHECK(jnum(s1obj, "last_seq") == 1);
  CHECK(jstr_prefix(s1obj, "started_event_id", "evt_"));
  CHECK(jnum(s1obj, "created_ts") >= t0 - 1 && jnum(s1obj, "created_ts") <= t1 + 1);
  CHECK(jnum(s1obj, "last_ts") >= jnum(s1obj, "created_ts"));
  {
    const char *v_;
    size_t n_;
    CHECK(s1obj && jget(s1obj, strlen(s1obj), "meta", &v_, &n_));
  }
  g_s1 = jstr(s1obj, "id");
  g_started1 = jstr(s1obj, "started_event_id");
  if (!g_s1 || !g_started1) exit(check_finish("test_api (no session)"));
  sleep_ms(3); /* distinct created_ts, so "oldest first" is one order */

  s2obj = OK_CREATE(g_db1, Q("{'id':'ses_host_2','actor':'harness',"
                             "'payload':{'agent_id':'b','cwd':'/tmp/w'}}"));
  CHECK(jstr_eq(s2obj, "id", "ses_host_2"));
  CHECK(jstr_eq(s2obj, "agent_id", "b"));
  CHECK(jnum(s2obj, "event_count") == 1);
  meta = jraw(s2obj, "meta");
  CHECK(meta && strstr(meta, "\"cwd\"") && strstr(meta, "/tmp/w"));
  free(meta);
  g_s2 = jstr(s2obj, "id");
  if (!g_s2) exit(check_finish("test_api (no session 2)"));

  /* The create result is the session object, as session_get returns it. */
  got = OK_GET(g_db1, g_s1);
  CHECK(got && s1obj && strcmp(got, s1obj) == 0);
  ctxdb_free(got);
  got = OK_GET(g_db1, g_s2);
  CHECK(got && s2obj && strcmp(got, s2obj) == 0);
  ctxdb_free(got);
  /* Explicit lengths: bytes past id_len are not part of the id. */
  {
    char *out = SENT;
    size_t on = SENT_LEN;
    CHECK_RC(ctxdb_session_get(g_db1, "ses_host_2XYZ", 10, &out, &on), CTXDB_OK);
    CHECK(out != SENT && out && s2obj && strcmp(out, s2obj) == 0 && on == strlen(s2obj));
    if (out != SENT) ctxdb_free(out);
  }

  /* The SessionStarted event. */
  started = OK_EVENT(g_db1, g_started1);
  CHECK(jstr_eq(started, "type", "SessionStarted"));
  CHECK(jstr_eq(started, "session_id", g_s1));
  CHECK(jstr_eq(started, "id", g_started1));
  CHECK(jnum(started, "seq") == 1);
  CHECK(jstr_eq(started, "actor", "host")); /* the documented default */
  payload = jraw(started, "payload");
  CHECK(payload && jstr_eq(payload, "agent_id", "a"));
  free(payload);
  CHECK(jhex64(started, "hash") && jhex64(started, "payload_hash") && jhex64(started, "prev_hash"));
  CHECK(jstr_eq(started, "prev_hash",
                "0000000000000000000000000000000000000000000000000000000000000000"));
  {
    char *s2started = jstr(s2obj, "started_event_id");
    ev = OK_EVENT(g_db1, s2started);
    CHECK(jstr_eq(ev, "actor", "harness"));
    CHECK(jstr_eq(ev, "session_id", "ses_host_2"));
    ctxdb_free(ev);
    free(s2started);
  }

  /* An existing session id is a conflict. */
  CREATE_FAILS(g_db1, Q("{'id':'ses_host_2','payload':{'agent_id':'b','cwd':'/tmp/w'}}"),
               CTXDB_CONFLICT, NULL);
  /* Bytes past len are not part of the JSON. */
  sleep_ms(3);
  {
    const char *j = Q("{'payload':{'agent_id':'c'}}GARBAGE");
    char *out = SENT;
    size_t on = SENT_LEN;
    CHECK_RC(ctxdb_session_create(g_db1, j, strlen(j) - 7, &out, &on), CTXDB_OK);
    CHECK(out != SENT && jstr_eq(out, "agent_id", "c"));
    if (out != SENT) {
      char *ev0 = jstr(out, "started_event_id");
      if (ev0) g_order[g_norder++] = ev0;
      ctxdb_free(out);
    }
  }

  /* The list: every session, oldest first, each as session_get. */
  list = OK_LIST(g_db1);
  n = jarray(list, &items);
  CHECK(n == 3);
  if (n == 3) {
    CHECK(jstr_eq(items[0], "id", g_s1));
    CHECK(jstr_eq(items[1], "id", "ses_host_2"));
    CHECK(jstr_eq(items[2], "agent_id", "c"));
    for (i = 0; i < n; ++i) {
      char *id = jstr(items[i], "id");
      got = OK_GET(g_db1, id);
      CHECK(got && strcmp(got, items[i]) == 0);
      ctxdb_free(got);
      free(id);
    }
  }
  if (n > 0) jfree_items(items, n);
  ctxdb_free(list);
  {
    char *out = SENT;
    CHECK_RC(ctxdb_session_list(g_db1, &out, NULL), CTXDB_OK); /* out_len optional */
    CHECK(out != SENT && out && out[0] == '[');
    if (out != SENT) ctxdb_free(out);
  }

  /* -- single appends -------------------------------------------------------- */
  t0 = now_ms();
  ev = OK_APPEND(g_db1, g_s1,
                 Q("{'type':'UserPromptSubmitted','actor':'user',"
                   "'payload':{'text':'list the files'}}"));
  t1 = now_ms();
  CHECK(jstr_prefix(ev, "id", "evt_"));
  CHECK(jstr_eq(ev, "session_id", g_s1));
  CHECK(jnum(ev, "seq") == 2);
  CHECK(jstr_eq(ev, "type", "UserPromptSubmitted"));
  CHECK(jstr_eq(ev, "actor", "user"));
  CHECK(jnum(ev, "ts") >= t0 - 1 && jnum(ev, "ts") <= t1 + 1);
  payload = jraw(ev, "payload");
  CHECK(payload && strcmp(payload, "{\"text\":\"list the files\"}") == 0);
  free(payload);
  CHECK(jhex64(ev, "hash") && jhex64(ev, "payload_hash"));
  /* The chain: prev_hash is the hash of seq 1. */
  {
    char *h1 = jstr(started, "hash"), *p2 = jstr(ev, "prev_hash"), *h2 = jstr(ev, "hash");
    CHECK(h1 && p2 && strcmp(h1, p2) == 0);
    CHECK(h1 && h2 && strcmp(h1, h2) != 0);
    free(h1);
    free(p2);
    free(h2);
  }
  /* The result is the stored event, as event_get returns it. */
  {
    char *id = jstr(ev, "id");
    got = OK_EVENT(g_db1, id);
    CHECK(got && ev && strcmp(got, ev) == 0);
    ctxdb_free(got);
    free(id);
  }
  prev_id = jstr(ev, "id");
  ctxdb_free(ev);
  ctxdb_free(started);

  /* Every optional field, host-given. */
  {
    char json[1024];
    snprintf(json, sizeof json,
             Q("{'id':'evt_host_1','type':'FileRead','actor':'agent',"
               "'payload':{'bytes':12,'path':'src/a.c'},'parent_id':'%s',"
               "'run_id':'run_1','ts':1700000000000,"
               "'causality':{'caused_by':['x']},'visibility':'private'}"),
             prev_id);
    ev = OK_APPEND(g_db1, g_s1, json);
  }
  CHECK(jstr_eq(ev, "id", "evt_host_1"));
  CHECK(jnum(ev, "seq") == 3);
  CHECK(jnum(ev, "ts") == 1700000000000LL);
  CHECK(jstr_eq(ev, "parent_id", prev_id));
  CHECK(jstr_eq(ev, "run_id", "run_1"));
  v = jraw(ev, "causality");
  CHECK(v && strcmp(v, "{\"caused_by\":[\"x\"]}") == 0);
  free(v);
  v = jraw(ev, "visibility");
  CHECK(v && strcmp(v, "\"private\"") == 0);
  free(v);
  payload = jraw(ev, "payload");
  CHECK(payload && strcmp(payload, "{\"bytes\":12,\"path\":\"src/a.c\"}") == 0);
  free(payload);
  ctxdb_free(ev);
  free(prev_id);

  /* A tool call and its result. */
  ev = OK_APPEND(g_db1, g_s1,
                 Q("{'type':'AssistantMessageCreated','actor':'assistant',"
                   "'payload':{'content':[{'type':'text','text':'looking'},"
                   "{'type':'tool_call','id':'call_1','name':'ls',"
                   "'args':{'dir':'.'}}],'model':'m1'}}"));
  CHECK(jnum(ev, "seq") == 4);
  ctxdb_free(ev);
  ev = OK_APPEND(g_db1, g_s1,
                 Q("{'type':'ToolCallStarted','actor':'tool',"
                   "'payload':{'tool_call_id':'call_1','name':'ls'}}"));
  CHECK(jnum(ev, "seq") == 5);
  ctxdb_free(ev);
  ev = OK_APPEND(g_db1, g_s1,
                 Q("{'type':'ToolCallFinished','actor':'tool',"
                   "'payload':{'tool_call_id':'call_1','output':'a.c\\nb.c'}}"));
  CHECK(jnum(ev, "seq") == 6);
  payload = jraw(ev, "payload");
  CHECK(payload && strstr(payload, "a.c\\nb.c") != NULL);
  free(payload);
  ctxdb_free(ev);

  /* Multi-byte UTF-8 is stored as given. */
  ev = OK_APPEND(g_db1, g_s1,
                 "{\"type\":\"UserPromptSubmitted\",\"actor\":\"user\","
                 "\"payload\":{\"text\":\"h\xc3\xa9llo \xe2\x9c\x93 \xf0\x9f\x98\x80\"}}");
  CHECK(jnum(ev, "seq") == 7);
  CHECK(ev && strstr(ev, "h\xc3\xa9llo \xe2\x9c\x93 \xf0\x9f\x98\x80") != NULL);
  ctxdb_free(ev);

  /* Any other type is stored as is; the payload round-trips byte for byte. */
  ev = OK_APPEND(g_db1, g_s2,
                 Q("{'type':'my.custom:Event-1','actor':'host',"
                   "'payload':{'anything':[1,2,{'x':null}],'b':'two'}}"));
  CHECK(jstr_eq(ev, "session_id", "ses_host_2"));
  CHECK(jnum(ev, "seq") == 2);
  CHECK(jstr_eq(ev, "type", "my.custom:Event-1"));
  payload = jraw(ev, "payload");
  CHECK(payload && strcmp(payload, "{\"anything\":[1,2,{\"x\":null}],\"b\":\"two\"}") == 0);
  free(payload);
  ctxdb_free(ev);

  /* out_len is optional. */
  {
    const char *j = Q("{'type':'Note','actor':'host','payload':{'n':0}}");
    char *out = SENT;
    CHECK_RC(ctxdb_append(g_db1, g_s2, strlen(g_s2), j, strlen(j), &out, NULL), CTXDB_OK);
    CHECK(out != SENT && jnum(out, "seq") == 3);
    if (out != SENT) {
      record_id(g_db1, out);
      ctxdb_free(out);
    }
  }

  /* -- batches --------------------------------------------------------------- */
  b = OK_BATCH(g_db1, g_s1,
               Q("{'type':'UserPromptSubmitted','actor':'user','payload':{'text':'b1'}}\n"
                 "\n"
                 "{'type':'DecisionRecorded','actor':'agent','payload':{'decision':'use C'}}\n"
                 "{'type':'Note','actor':'agent','payload':{'n':3}}\n"));
  CHECK(jnum(b, "count") == 3);
  CHECK(jnum(b, "first_seq") == 8);
  CHECK(jnum(b, "last_seq") == 10);
  last_id = jstr(b, "last_id");
  ev = OK_EVENT(g_db1, last_id);
  CHECK(jnum(ev, "seq") == 10 && jstr_eq(ev, "type", "Note") && jstr_eq(ev, "session_id", g_s1));
  ctxdb_free(ev);
  free(last_id);
  ctxdb_free(b);

  /* No trailing newline; the batch chains onto the session's head. */
  b = OK_BATCH(g_db1, g_s2,
               Q("{'type':'Note','actor':'host','payload':{'n':1}}\n"
                 "{'id':'evt_batch_b','type':'Note','actor':'host','payload':{'n':2}}"));
  CHECK(jnum(b, "count") == 2);
  CHECK(jnum(b, "first_seq") == 4);
  CHECK(jnum(b, "last_seq") == 5);
  CHECK(jstr_eq(b, "last_id", "evt_batch_b"));
  ctxdb_free(b);

  /* -- reading back ------------------------------------------------------------ */
  got = OK_GET(g_db1, g_s1);
  CHECK(jnum(got, "event_count") == 10);
  CHECK(jnum(got, "last_seq") == 10);
  CHECK(jstr_eq(got, "started_event_id", g_started1));
  CHECK(jnum(got, "created_ts") == jnum(s1obj, "created_ts"));
  ctxdb_free(got);
  got = OK_GET(g_db1, g_s2);
  CHECK(jnum(got, "event_count") == 5);
  CHECK(jnum(got, "last_seq") == 5);
  ctxdb_free(got);
  ctxdb_free(s1obj);
  ctxdb_free(s2obj);

  /* A seq range. */
  text = rows_of(g_db1, g_s1, 2, 4, &rows);
  CHECK(text != NULL);
  CHECK(rows == 3);
  nl = split_lines(text, &lines);
  for (i = 0; i < nl; ++i) {
    CHECK(jnum(lines[i], "seq") == 2 + i);
    CHECK(jstr_eq(lines[i], "session_id", g_s1));
    CHECK(strstr(lines[i], "\"seq\":") != NULL);
    free(lines[i]);
  }
  free(lines);
  free(text);
  /* from_seq 0 starts at the beginning; to_seq < 0 has no upper bound. */
  text = rows_of(g_db1, g_s1, 0, 2, &rows);
  CHECK(rows == 2);
  free(text);
  text = rows_of(g_db1, g_s1, 9, -1, &rows);
  CHECK(rows == 2);
  free(text);
  text = rows_of(g_db1, g_s1, 11, -1, &rows);
  CHECK(text != NULL && rows == 0);
  free(text);

  /* The whole session: gapless seqs, a hash chain, rows as event_get. */
  text = rows_of(g_db1, g_s1, 1, -1, &rows);
  CHECK(rows == 10);
  nl = split_lines(text, &lines);
  prev_hash = NULL;
  for (i = 0; i < nl; ++i) {
    char *id = jstr(lines[i], "id"), *ph = jstr(lines[i], "prev_hash");
    CHECK(jnum(lines[i], "seq") == i + 1);
    if (prev_hash) CHECK(ph && strcmp(ph, prev_hash) == 0);
    free(prev_hash);
    prev_hash = jstr(lines[i], "hash");
    got = OK_EVENT(g_db1, id);
    CHECK(got && strcmp(got, lines[i]) == 0);
    ctxdb_free(got);
    free(id);
    free(ph);
    free(lines[i]);
  }
  free(prev_hash);
  free(lines);
  free(text);

  /* The iterator itself: DONE stays DONE; rows are NUL-terminated? Not
   * promised, so only lengths are used. */
  it = SENT_IT;
  CHECK_RC(ctxdb_events_iter(g_db1, g_s2, strlen(g_s2), 5, 5, &it), CTXDB_OK);
  if (it != SENT_IT && it) {
    row = NULL;
    rlen = 0;
    CHECK_RC(ctxdb_iter_next(it, &row, &rlen), CTXDB_ROW);
    CHECK(row != NULL && rlen > 0 && memchr(row, '{', rlen) == row);
    CHECK(row && rlen > 14 && strncmp(row, "{", 1) == 0);
    CHECK_RC(ctxdb_iter_next(it, &row, &rlen), CTXDB_DONE);
    CHECK_RC(ctxdb_iter_next(it, &row, &rlen), CTXDB_DONE);
    ctxdb_iter_free(it);
  }

  /* Everything, in append order: the export stream. */
  text = export_all(g_db1, &rows);
  CHECK(text != NULL);
  CHECK(rows == 16); /* 10 + 5 + 1 (the third session) */
  CHECK(rows == g_norder);
  nl = split_lines(text, &lines);
  for (i = 0; i < nl; ++i) {
    char *id = jstr(lines[i], "id");
    if (i < g_norder && !CHECK(id && strcmp(id, g_order[i]) == 0))
      fprintf(stderr, "    export row %d is %s, appended as %s\n", i + 1, id ? id : "?",
              g_order[i]);
    free(id);
    free(lines[i]);
  }
  free(lines);
  free(text);

  /* -- verify ---------------------------------------------------------------- */
  v = OK_VERIFY(g_db1, NULL);
  CHECK(jbool(v, "ok") == 1);
  CHECK(jnum(v, "sessions") == 3);
  CHECK(jnum(v, "events") == 16);
  ctxdb_free(v);
  v = OK_VERIFY(g_db1, g_s1);
  CHECK(jbool(v, "ok") == 1);
  CHECK(jnum(v, "events") == 10);
  ctxdb_free(v);
  {
    char *out = SENT;
    CHECK_RC(ctxdb_verify(g_db1, g_s2, strlen(g_s2), &out, NULL), CTXDB_OK);
    CHECK(out != SENT && jbool(out, "ok") == 1 && jnum(out, "events") == 5);
    if (out != SENT) ctxdb_free(out);
  }
}

/* ===========================================================================
 * safe retries and conflicts
 * ======================================================================== */

static void test_retries(ctxdb_db *db) {
  const char *j1 = Q("{'id':'evt_retry_1','type':'Note','actor':'host',"
                     "'payload':{'k':1},'ts':1700000000001}");
  char *first, *again, *before, *s;
  int64_t count_before;

  first = OK_APPEND(db, g_s2, j1);
  CHECK(jstr_eq(first, "id", "evt_retry_1"));
  s = OK_GET(db, g_s2);
  count_before = jnum(s, "event_count");
  ctxdb_free(s);

  /* The same id and content again: the stored event, nothing new. */
  before = snapshot(db);
  {
    char *out = SENT;
    size_t n = SENT_LEN;
    CHECK_RC(ctxdb_append(db, g_s2, strlen(g_s2), j1, strlen(j1), &out, &n), CTXDB_OK);
    again = out == SENT ? NULL : out;
  }
  CHECK(again && first && jnum(again, "seq") == jnum(first, "seq"));
  CHECK(again && first && strcmp(again, first) == 0);
  ctxdb_free(again);
  unchanged_at(F, "a retried ctxdb_append", db, before);
  s = OK_GET(db, g_s2);
  CHECK(jnum(s, "event_count") == count_before);
  ctxdb_free(s);

  /* The same id with other content: a conflict. */
  APPEND_FAILS(db, g_s2,
               Q("{'id':'evt_retry_1','type':'Note','actor':'host',"
                 "'payload':{'k':2},'ts':1700000000001}"),
               CTXDB_CONFLICT, NULL);
  APPEND_FAILS(db, g_s2,
               Q("{'id':'evt_retry_1','type':'Other','actor':'host',"
                 "'payload':{'k':1},'ts':1700000000001}"),
               CTXDB_CONFLICT, NULL);
  APPEND_FAILS(db, g_s2,
               Q("{'id':'evt_retry_1','type':'Note','actor':'host',"
                 "'payload':{'k':1},'ts':1700000000002}"),
               CTXDB_CONFLICT, NULL);
  /* The same event into another session is not the stored event. */
  APPEND_FAILS(db, g_s1, j1, CTXDB_CONFLICT, NULL);
  /* An event id used by an engine-made event (a SessionStarted). */
  {
    char json[512];
    snprintf(json, sizeof json, Q("{'id':'%s','type':'Note','actor':'host','payload':{}}"),
             g_started1);
    APPEND_FAILS(db, g_s1, json, CTXDB_CONFLICT, NULL);
  }
  ctxdb_free(first);

  /* A retry without ts (the engine assigned it the first time) is still the
   * same event: a host retries the request it sent. */
  {
    const char *j2 = Q("{'id':'evt_retry_2','type':'Note','actor':'host',"
                       "'payload':{'k':3}}");
    first = OK_APPEND(db, g_s2, j2);
    sleep_ms(3); /* a new ts would differ from the stored one */
    before = snapshot(db);
    {
      char *out = SENT;
      size_t n = SENT_LEN;
      int rc = ctxdb_append(db, g_s2, strlen(g_s2), j2, strlen(j2), &out, &n);
      if (!CHECK_RC(rc, CTXDB_OK))
        fprintf(stderr, "    a retry of an event without ts was refused: %s\n",
                check_msg_(ctxdb_errmsg(db)));
      again = (rc == CTXDB_OK && out != SENT) ? out : NULL;
    }
    CHECK(again && first && strcmp(again, first) == 0);
    ctxdb_free(again);
    ctxdb_free(first);
    unchanged_at(F, "a retried ctxdb_append (no ts)", db, before);
  }
}

/* ===========================================================================
 * bad input, per entry point
 * ======================================================================== */

static void test_open_config(void) {
  const char *p = scratch_path("cfg.ctxdb");
  static const struct {
    const char *config;
    int code;
    const char *mention;
  } bad[] = {
      {"\xff\xfe", CTXDB_INVALID_UTF8, NULL},
      {"{'durability':'\xff'}", CTXDB_INVALID_UTF8, NULL},
      {"{", CTXDB_INVALID_JSON, NULL},
      {"{'durability':}", CTXDB_INVALID_JSON, NULL},
      {"[]", CTXDB_INVALID_ARG, NULL},
      {"'normal'", CTXDB_INVALID_ARG, NULL},
      {"{'bogus':1}", CTXDB_INVALID_ARG, "bogus"},
      {"{'durability':'bogus'}", CTXDB_INVALID_ARG, "durability"},
      {"{'durability':1}", CTXDB_INVALID_ARG, "durability"},
      {"{'busy_timeout_ms':-1}", CTXDB_INVALID_ARG, "busy_timeout_ms"},
      {"{'busy_timeout_ms':'x'}", CTXDB_INVALID_ARG, "busy_timeout_ms"},
      {"{'busy_timeout_ms':1.5}", CTXDB_INVALID_ARG, "busy_timeout_ms"},
      {"{'busy_timeout_ms':3600001}", CTXDB_INVALID_ARG, "busy_timeout_ms"},
      {"{'read_only':'yes'}", CTXDB_INVALID_ARG, "read_only"},
      {"{'read_only':1}", CTXDB_INVALID_ARG, "read_only"},
      {"{'spill':{'threshold_bytes':-1}}", CTXDB_INVALID_ARG, "spill.threshold_bytes"},
      {"{'spill':{'tools':{'make':{'policy':'middle'}}}}", CTXDB_INVALID_ARG,
       "spill.tools.make.policy"},
      {"{'spill':{'tools':{'make':7}}}", CTXDB_INVALID_ARG, "spill.tools.make"},
  };
  size_t i;
  ctxdb_db *db;

  for (i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
    const char *c = Q(bad[i].config);
    char what[200];
    int failed_before = check_failed_;
    snprintf(what, sizeof what, "ctxdb_open config #%u", (unsigned)i);
    open_fails_at(__FILE__, __LINE__, p, c, strlen(c), bad[i].code, bad[i].mention);
    if (check_failed_ != failed_before) fprintf(stderr, "    (config: %s)\n", c);
    /* A refused config touches no file. */
    if (!check_at(!file_exists(p), __FILE__, __LINE__, what))
      fprintf(stderr, "    config %s created the file\n", c);
    unlink(p);
  }

  /* NULLs. */
  OPEN_FAILS(NULL, NULL, CTXDB_MISUSE, NULL);
  open_fails_at(F, p, NULL, 3, CTXDB_MISUSE, NULL);
  {
    int rc = ctxdb_open(p, NULL, 0, NULL);
    failed_at(F, "ctxdb_open(out_db NULL)", NULL, rc, CTXDB_MISUSE, NULL);
    CHECK(!file_exists(p));
    unlink(p);
  }
  /* Unusable paths. */
  OPEN_FAILS(scratch_path("no/such/dir/x.ctxdb"), NULL, CTXDB_IO, NULL);
  OPEN_FAILS(scratch_path(""), NULL, ANY_ERROR, NULL); /* the directory */
  /* read_only opens an existing file and never creates one. */
  OPEN_FAILS(p, Q("{'read_only':true}"), ANY_ERROR, NULL);
  CHECK(!file_exists(p));
  unlink(p);

  /* Valid configs. */
  db = OK_OPEN(p, Q("{}"));
  CHECK_RC(ctxdb_close(db), CTXDB_OK);
  db = OK_OPEN(p, Q("{'durability':'full','busy_timeout_ms':0,'read_only':false}"));
  CHECK_RC(ctxdb_close(db), CTXDB_OK);
  db = OK_OPEN(p, Q("{'durability':'normal','busy_timeout_ms':3600000}"));
  CHECK_RC(ctxdb_close(db), CTXDB_OK);
  {
    /* Bytes past config_len are not part of the config. */
    const char *c = Q("{'read_only':true}XX");
    ctxdb_db *d = SENT_DB;
    CHECK_RC(ctxdb_open(p, c, strlen(c) - 2, &d), CTXDB_OK);
    if (d != SENT_DB) ctxdb_close(d);
  }
}

static void test_bad_sessions(ctxdb_db *db) {
  static const struct {
    const char *json;
    int code;
    const char *mention;
  } bad[] = {
      {"\xff\xfe", CTXDB_INVALID_UTF8, NULL},
      {"{'payload':{'agent_id':'\xff\xfe'}}", CTXDB_INVALID_UTF8, NULL},
      {"{'payload':{'agent_id':'a\xc0\xaf'}}", CTXDB_INVALID_UTF8, NULL},
      {"{'payload':", CTXDB_INVALID_JSON, NULL},
      {"", CTXDB_INVALID_JSON, NULL},
      {"{'payload':{'agent_id':'a'}} x", CTXDB_INVALID_JSON, NULL},
      {"[]", CTXDB_INVALID_ARG, NULL},
      {"42", CTXDB_INVALID_ARG, NULL},
      {"null", CTXDB_INVALID_ARG, NULL},
      {"{}", CTXDB_INVALID_ARG, "payload"},
      {"{'payload':'x'}", CTXDB_INVALID_ARG, "payload"},
      {"{'payload':[]}", CTXDB_INVALID_ARG, "payload"},
      {"{'payload':{}}", CTXDB_INVALID_ARG, "agent_id"},
      {"{'payload':{'cwd':'/'}}", CTXDB_INVALID_ARG, "agent_id"},
      {"{'payload':{'agent_id':5}}", CTXDB_INVALID_ARG, "agent_id"},
      {"{'payload':{'agent_id':''}}", CTXDB_INVALID_ARG, "agent_id"},
      {"{'payload':{'agent_id':'a','cwd':5}}", CTXDB_INVALID_ARG, "cwd"},
      {"{'id':5,'payload':{'agent_id':'a'}}", CTXDB_INVALID_ARG, "id"},
      {"{'id':'bad id','payload':{'agent_id':'a'}}", CTXDB_INVALID_ARG, "id"},
      {"{'actor':'','payload':{'agent_id':'a'}}", CTXDB_INVALID_ARG, "actor"},
      {"{'actor':7,'payload':{'agent_id':'a'}}", CTXDB_INVALID_ARG, "actor"},
      {"{'ts':'now','payload':{'agent_id':'a'}}", CTXDB_INVALID_ARG, "ts"},
      {"{'bogus':1,'payload':{'agent_id':'a'}}", CTXDB_INVALID_ARG, "bogus"},
  };
  size_t i;
  char j[64];
  snprintf(j, sizeof j, "%s", Q("{'payload':{'agent_id':'z'}}"));

  for (i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
    const char *json = Q(bad[i].json);
    int failed_before = check_failed_;
    create_fails_at(__FILE__, __LINE__, db, json, strlen(json), 0, bad[i].code, bad[i].mention);
    if (check_failed_ != failed_before) fprintf(stderr, "    (input: %s)\n", json);
  }
  /* NULLs. */
  create_fails_at(F, NULL, j, strlen(j), 0, CTXDB_MISUSE, NULL);
  create_fails_at(F, db, NULL, 5, 0, CTXDB_MISUSE, NULL);
  /* (NULL, 0) is a NULL pointer, or an empty string that does not parse. */
  create_fails_at(F, db, NULL, 0, 0, OR_CODE(CTXDB_MISUSE, CTXDB_INVALID_JSON), NULL);
  create_fails_at(F, db, j, strlen(j), 1, CTXDB_MISUSE, NULL); /* out NULL */

  /* session_get */
  read_fails_at(F, "ctxdb_session_get", ctxdb_session_get, NULL, g_s1, strlen(g_s1), 0,
                CTXDB_MISUSE, NULL);
  read_fails_at(F, "ctxdb_session_get", ctxdb_session_get, db, NULL, 5, 0, CTXDB_MISUSE, NULL);
  read_fails_at(F, "ctxdb_session_get", ctxdb_session_get, db, g_s1, strlen(g_s1), 1, CTXDB_MISUSE,
                NULL);
  read_fails_at(F, "ctxdb_session_get", ctxdb_session_get, db, "ses_nope", 8, 0, CTXDB_NOT_FOUND,
                NULL);
  read_fails_at(F, "ctxdb_session_get", ctxdb_session_get, db, "ses_host_", 9, 0, CTXDB_NOT_FOUND,
                NULL); /* a prefix of a real id */
  read_fails_at(F, "ctxdb_session_get", ctxdb_session_get, db, "\xff\xfe", 2, 0, CTXDB_INVALID_UTF8,
                NULL);
  read_fails_at(F, "ctxdb_session_get", ctxdb_session_get, db, "", 0, 0, ANY_ERROR, NULL);
  /* An event id is not a session id. */
  read_fails_at(F, "ctxdb_session_get", ctxdb_session_get, db, g_started1, strlen(g_started1), 0,
                CTXDB_NOT_FOUND, NULL);

  /* session_list */
  list_fails_at(F, NULL, 0, CTXDB_MISUSE);
  list_fails_at(F, db, 1, CTXDB_MISUSE);
}

static void test_bad_appends(ctxdb_db *db) {
  static const struct {
    const char *json;
    int code;
    const char *mention;
  } bad[] = {
      /* encoding and syntax */
      {"\xff\xfe", CTXDB_INVALID_UTF8, NULL},
      {"{'type':'Note','actor':'a','payload':{'t':'\xff\xfe'}}", CTXDB_INVALID_UTF8, NULL},
      {"{'type':'Note','actor':'a','payload':{'t':'\xc0\xaf'}}", CTXDB_INVALID_UTF8, NULL},
      {"{'type':'Note','actor':'a','payload':{'t':'\xed\xa0\x80'}}", CTXDB_INVALID_UTF8, NULL},
      {"{'type':'Note','actor':'a','payload':{'t':'\xf4\x90\x80\x80'}}", CTXDB_INVALID_UTF8, NULL},
      {"{'type':'Note','actor':'a','payload':{'t':'x'}}\xe2\x82", CTXDB_INVALID_UTF8, NULL},
      {"{'type':'Note',", CTXDB_INVALID_JSON, NULL},
      {"", CTXDB_INVALID_JSON, NULL},
      {"   ", CTXDB_INVALID_JSON, NULL},
      {"{'type':'Note','actor':'a','payload':{}} trailing", CTXDB_INVALID_JSON, NULL},
      {"{'type':'Note','actor':'a','payload':{},}", CTXDB_INVALID_JSON, NULL},
      {"{type:'Note'}", CTXDB_INVALID_JSON, NULL},
      /* not an object */
      {"[1,2]", CTXDB_INVALID_ARG, NULL},
      {"42", CTXDB_INVALID_ARG, NULL},
      {"'str'", CTXDB_INVALID_ARG, NULL},
      {"null", CTXDB_INVALID_ARG, NULL},
      /* missing required fields */
      {"{'actor':'a','payload':{}}", CTXDB_INVALID_ARG, "type"},
      {"{'type':'Note','payload':{}}", CTXDB_INVALID_ARG, "actor"},
      {"{'type':'Note','actor':'a'}", CTXDB_INVALID_ARG, "payload"},
      {"{'type':'UserPromptSubmitted','actor':'user','payload':{}}", CTXDB_INVALID_ARG, "text"},
      {"{'type':'UserPromptSubmitted','actor':'user','payload':{'acceptance_criteria':[]}}",
       CTXDB_INVALID_ARG, "text"},
      {"{'type':'ToolCallFinished','actor':'tool','payload':{'output':'x'}}", CTXDB_INVALID_ARG,
       "tool_call_id"},
      {"{'type':'FileRead','actor':'agent','payload':{'bytes':3}}", CTXDB_INVALID_ARG, "path"},
      {"{'type':'AssistantMessageCreated','actor':'assistant','payload':{}}", CTXDB_INVALID_ARG,
       "content"},
      /* wrong types and out of range */
      {"{'type':5,'actor':'a','payload':{}}", CTXDB_INVALID_ARG, "type"},
      {"{'type':'','actor':'a','payload':{}}", CTXDB_INVALID_ARG, "type"},
      {"{'type':'1abc','actor':'a','payload':{}}", CTXDB_INVALID_ARG, "type"},
      {"{'type':'Note','actor':true,'payload':{}}", CTXDB_INVALID_ARG, "actor"},
      {"{'type':'Note','actor':'','payload':{}}", CTXDB_INVALID_ARG, "actor"},
      {"{'type':'Note','actor':'a','payload':'x'}", CTXDB_INVALID_ARG, "payload"},
      {"{'type':'Note','actor':'a','payload':[]}", CTXDB_INVALID_ARG, "payload"},
      {"{'type':'Note','actor':'a','payload':null}", CTXDB_INVALID_ARG, "payload"},
      {"{'type':'Note','actor':'a','payload':{},'ts':'now'}", CTXDB_INVALID_ARG, "ts"},
      {"{'type':'Note','actor':'a','payload':{},'ts':1.5}", CTXDB_INVALID_ARG, "ts"},
      {"{'type':'Note','actor':'a','payload':{},'ts':-1}", CTXDB_INVALID_ARG, "ts"},
      {"{'type':'Note','actor':'a','payload':{},'id':5}", CTXDB_INVALID_ARG, "id"},
      {"{'type':'Note','actor':'a','payload':{},'id':'has space'}", CTXDB_INVALID_ARG, "id"},
      {"{'type':'Note','actor':'a','payload':{},'id':''}", CTXDB_INVALID_ARG, "id"},
      {"{'type':'Note','actor':'a','payload':{},'parent_id':7}", CTXDB_INVALID_ARG, "parent_id"},
      {"{'type':'Note','actor':'a','payload':{},'run_id':[]}", CTXDB_INVALID_ARG, "run_id"},
      {"{'type':'Note','actor':'a','payload':{},'causality':3}", CTXDB_INVALID_ARG, "causality"},
      {"{'type':'Note','actor':'a','payload':{},'visibility':3}", CTXDB_INVALID_ARG, "visibility"},
      {"{'type':'Note','actor':'a','payload':{},'bogus':1}", CTXDB_INVALID_ARG, "bogus"},
      {"{'type':'Note','actor':'a','payload':{},'session_id':'ses_host_2'}", CTXDB_INVALID_ARG,
       "ses_host_2"},
      {"{'type':'UserPromptSubmitted','actor':'user','payload':{'text':5}}", CTXDB_INVALID_ARG,
       "text"},
      {"{'type':'ToolCallFinished','actor':'tool','payload':{'tool_call_id':1}}", CTXDB_INVALID_ARG,
       "tool_call_id"},
      {"{'type':'ToolCallFinished','actor':'tool','payload':{'tool_call_id':''}}",
       CTXDB_INVALID_ARG, "tool_call_id"},
      {"{'type':'FileRead','actor':'agent','payload':{'path':{}}}", CTXDB_INVALID_ARG, "path"},
      {"{'type':'FileRead','actor':'agent','payload':{'path':''}}", CTXDB_INVALID_ARG, "path"},
      {"{'type':'AssistantMessageCreated','actor':'assistant','payload':{'content':'hi'}}",
       CTXDB_INVALID_ARG, "content"},
      /* unknown ids */
      {"{'type':'Note','actor':'a','payload':{},'parent_id':'evt_nope'}", CTXDB_NOT_FOUND, NULL},
  };
  size_t i;
  char j[64];
  snprintf(j, sizeof j, "%s", Q("{'type':'Note','actor':'a','payload':{}}"));

  for (i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
    const char *json = Q(bad[i].json);
    int failed_before = check_failed_;
    append_fails_at(__FILE__, __LINE__, db, g_s1, strlen(g_s1), json, strlen(json), 0, bad[i].code,
                    bad[i].mention);
    if (check_failed_ != failed_before) fprintf(stderr, "    (input: %s)\n", json);
  }
  /* NULLs and ids. */
  append_fails_at(F, NULL, g_s1, strlen(g_s1), j, strlen(j), 0, CTXDB_MISUSE, NULL);
  append_fails_at(F, db, NULL, 5, j, strlen(j), 0, CTXDB_MISUSE, NULL);
  append_fails_at(F, db, g_s1, strlen(g_s1), NULL, 5, 0, CTXDB_MISUSE, NULL);
  append_fails_at(F, db, g_s1, strlen(g_s1), NULL, 0, 0, OR_CODE(CTXDB_MISUSE, CTXDB_INVALID_JSON),
                  NULL);
  append_fails_at(F, db, g_s1, strlen(g_s1), j, strlen(j), 1, CTXDB_MISUSE, NULL);
  append_fails_at(F, db, "ses_nope", 8, j, strlen(j), 0, CTXDB_NOT_FOUND, NULL);
  append_fails_at(F, db, "\xff\xfe", 2, j, strlen(j), 0, CTXDB_INVALID_UTF8, NULL);
  append_fails_at(F, db, "", 0, j, strlen(j), 0, ANY_ERROR, NULL);
  /* Only the first id_len bytes are the id: "ses_host_2" cut short. */
  append_fails_at(F, db, "ses_host_2", 9, j, strlen(j), 0, CTXDB_NOT_FOUND, NULL);
}

static void test_batches_all_or_nothing(ctxdb_db *db) {
  const char *good = "{'type':'Note','actor':'a','payload':{'n':1}}\n";
  char nd[4096];
  char *b;

  /* Line 3 of 5 malformed. */
  snprintf(nd, sizeof nd, "%s%s%s%s%s", Q(good), Q(good),
           Q("{'type':'Note','actor':'a','payload':\n"), Q(good), Q(good));
  BATCH_FAILS(db, g_s1, nd, CTXDB_INVALID_JSON, NULL, 3);
  /* Line 3 of 5 missing its type. */
  snprintf(nd, sizeof nd, "%s%s%s%s%s", Q(good), Q(good), Q("{'actor':'a','payload':{}}\n"),
           Q(good), Q(good));
  BATCH_FAILS(db, g_s1, nd, CTXDB_INVALID_ARG, "type", 3);
  /* Line 3 of 5 missing a core payload field. */
  snprintf(nd, sizeof nd, "%s%s%s%s%s", Q(good), Q(good),
           Q("{'type':'FileRead','actor':'a','payload':{}}\n"), Q(good), Q(good));
  BATCH_FAILS(db, g_s1, nd, CTXDB_INVALID_ARG, "path", 3);
  /* Line 4 of 5 not UTF-8. */
  snprintf(nd, sizeof nd, "%s%s%s%s%s", Q(good), Q(good), Q(good),
           Q("{'type':'Note','actor':'a','payload':{'t':'\xff'}}\n"), Q(good));
  BATCH_FAILS(db, g_s1, nd, CTXDB_INVALID_UTF8, NULL, 4);
  /* Not an object on line 2. */
  snprintf(nd, sizeof nd, "%s%s%s", Q(good), "[1]\n", Q(good));
  BATCH_FAILS(db, g_s1, nd, CTXDB_INVALID_ARG, NULL, 2);
  /* Blank lines still count: the bad line is physical line 4. */
  snprintf(nd, sizeof nd, "\n%s\n%s", Q(good), "{oops}\n");
  BATCH_FAILS(db, g_s1, nd, CTXDB_INVALID_JSON, NULL, 4);
  /* Line 5 reuses a stored id with other content. */
  snprintf(nd, sizeof nd, "%s%s%s%s%s", Q(good), Q(good), Q(good), Q(good),
           Q("{'id':'evt_host_1','type':'Note','actor':'a','payload':{}}\n"));
  BATCH_FAILS(db, g_s1, nd, CTXDB_CONFLICT, NULL, 5);
  /* Two lines of one batch with one id and different content. */
  snprintf(nd, sizeof nd, "%s%s",
           Q("{'id':'evt_twice','type':'Note','actor':'a','payload':{'n':1}}\n"),
           Q("{'id':'evt_twice','type':'Note','actor':'a','payload':{'n':2}}\n"));
  BATCH_FAILS(db, g_s1, nd, CTXDB_CONFLICT, NULL, 2);
  /* A line naming another session. */
  snprintf(nd, sizeof nd, "%s%s", Q(good),
           Q("{'type':'Note','actor':'a','payload':{},'session_id':'ses_host_2'}\n"));
  BATCH_FAILS(db, g_s1, nd, CTXDB_INVALID_ARG, "ses_host_2", 2);

  /* NULLs and ids. */
  snprintf(nd, sizeof nd, "%s", Q(good));
  batch_fails_at(F, NULL, g_s1, strlen(g_s1), nd, strlen(nd), 0, CTXDB_MISUSE, NULL, 0);
  batch_fails_at(F, db, NULL, 3, nd, strlen(nd), 0, CTXDB_MISUSE, NULL, 0);
  batch_fails_at(F, db, g_s1, strlen(g_s1), NULL, 4, 0, CTXDB_MISUSE, NULL, 0);
  batch_fails_at(F, db, g_s1, strlen(g_s1), nd, strlen(nd), 1, CTXDB_MISUSE, NULL, 0);
  batch_fails_at(F, db, "ses_nope", 8, nd, strlen(nd), 0, CTXDB_NOT_FOUND, NULL, 0);
  batch_fails_at(F, db, "\xff", 1, nd, strlen(nd), 0, CTXDB_INVALID_UTF8, NULL, 0);

  /* An empty batch stores nothing (refusing it is fine too). */
  {
    char *before = snapshot(db), *out = SENT;
    size_t n = SENT_LEN;
    int rc = ctxdb_append_batch(db, g_s1, strlen(g_s1), "\n\n", 2, &out, &n);
    CHECK(rc == CTXDB_OK || rc == CTXDB_INVALID_ARG || rc == CTXDB_INVALID_JSON);
    if (rc == CTXDB_OK) {
      CHECK(out != SENT && jnum(out, "count") == 0);
      if (out != SENT) ctxdb_free(out);
    } else {
      cleared_at(F, "an empty ctxdb_append_batch", out, n);
    }
    unchanged_at(F, "an empty ctxdb_append_batch", db, before);
  }
  /* ... but not to a session that does not exist. */
  batch_fails_at(F, db, "ses_nope", 8, "", 0, 0, CTXDB_NOT_FOUND, "ses_nope", 0);
  batch_fails_at(F, db, "ses_nope", 8, "\n \n", 3, 0, CTXDB_NOT_FOUND, "ses_nope", 0);

  /* After all that, a good batch still chains on. */
  {
    char *s = OK_GET(db, g_s1);
    int64_t last = jnum(s, "last_seq");
    ctxdb_free(s);
    snprintf(nd, sizeof nd, "%s%s", Q(good), Q(good));
    b = OK_BATCH(db, g_s1, nd);
    CHECK(jnum(b, "count") == 2 && jnum(b, "first_seq") == last + 1 &&
          jnum(b, "last_seq") == last + 2);
    ctxdb_free(b);
  }
}

static void test_bad_reads(ctxdb_db *db) {
  ctxdb_iter *it;
  const char *row;
  size_t rlen;

  /* event_get */
  read_fails_at(F, "ctxdb_event_get", ctxdb_event_get, NULL, g_started1, strlen(g_started1), 0,
                CTXDB_MISUSE, NULL);
  read_fails_at(F, "ctxdb_event_get", ctxdb_event_get, db, NULL, 4, 0, CTXDB_MISUSE, NULL);
  read_fails_at(F, "ctxdb_event_get", ctxdb_event_get, db, g_started1, strlen(g_started1), 1,
                CTXDB_MISUSE, NULL);
  read_fails_at(F, "ctxdb_event_get", ctxdb_event_get, db, "evt_nope", 8, 0, CTXDB_NOT_FOUND, NULL);
  read_fails_at(F, "ctxdb_event_get", ctxdb_event_get, db, g_started1, strlen(g_started1) - 1, 0,
                CTXDB_NOT_FOUND, NULL);
  read_fails_at(F, "ctxdb_event_get", ctxdb_event_get, db, "evt_\xff", 5, 0, CTXDB_INVALID_UTF8,
                NULL);
  read_fails_at(F, "ctxdb_event_get", ctxdb_event_get, db, g_s1, strlen(g_s1), 0, CTXDB_NOT_FOUND,
                NULL); /* a session id */

  /* events_iter */
  iter_fails_at(F, NULL, g_s1, strlen(g_s1), 0, CTXDB_MISUSE);
  iter_fails_at(F, NULL, NULL, 0, 0, CTXDB_MISUSE);
  iter_fails_at(F, db, g_s1, strlen(g_s1), 1, CTXDB_MISUSE);
  iter_fails_at(F, db, NULL, 0, 1, CTXDB_MISUSE);
  iter_fails_at(F, db, "ses_nope", 8, 0, CTXDB_NOT_FOUND);
  iter_fails_at(F, db, "\xff\xfe", 2, 0, CTXDB_INVALID_UTF8);

  /* iter_next */
  {
    const char *r = SENT;
    size_t n = SENT_LEN;
    int rc = ctxdb_iter_next(NULL, &r, &n);
    failed_at(F, "ctxdb_iter_next(NULL)", NULL, rc, CTXDB_MISUSE, NULL);
    cleared_at(F, "ctxdb_iter_next(NULL)", r, n);
  }
  it = NULL;
  CHECK_RC(ctxdb_events_iter(db, g_s1, strlen(g_s1), 1, -1, &it), CTXDB_OK);
  if (it) {
    int rc = ctxdb_iter_next(it, NULL, &rlen);
    failed_at(F, "ctxdb_iter_next(row NULL)", NULL, rc, CTXDB_MISUSE, NULL);
    /* A refused call does not advance it. */
    if (CHECK_RC(ctxdb_iter_next(it, &row, &rlen), CTXDB_ROW) && row) {
      char *copy = (char *)malloc(rlen + 1);
      memcpy(copy, row, rlen);
      copy[rlen] = '\0';
      CHECK(jnum(copy, "seq") == 1);
      free(copy);
    }
    ctxdb_iter_free(it);
  }

  /* verify */
  read_fails_at(F, "ctxdb_verify", ctxdb_verify, NULL, NULL, 0, 0, CTXDB_MISUSE, NULL);
  read_fails_at(F, "ctxdb_verify", ctxdb_verify, db, NULL, 0, 1, CTXDB_MISUSE, NULL);
  /* NULL names every session only with length 0, as for every optional id. */
  read_fails_at(F, "ctxdb_verify", ctxdb_verify, db, NULL, 5, 0, CTXDB_MISUSE, "session_id");
  read_fails_at(F, "ctxdb_verify", ctxdb_verify, db, "ses_nope", 8, 0, CTXDB_NOT_FOUND, NULL);
  read_fails_at(F, "ctxdb_verify", ctxdb_verify, db, "\xff", 1, 0, CTXDB_INVALID_UTF8, NULL);
}

/* Every (pointer, length) argument of the ABI: NULL with a length is
 * CTXDB_MISUSE naming the argument (ctxdb.h's rule), and the call's
 * out-parameters are cleared. */
#define NULL_LEN_FAILS(name, call)                                                                 \
  do {                                                                                             \
    out = SENT;                                                                                    \
    n = SENT_LEN;                                                                                  \
    failed_at(F, #call, db, (call), CTXDB_MISUSE, name);                                           \
    cleared_at(F, #call, out, n);                                                                  \
  } while (0)
#define NULL_LEN_ITER_FAILS(name, call)                                                            \
  do {                                                                                             \
    int rc_;                                                                                       \
    it = SENT_IT;                                                                                  \
    rc_ = (call);                                                                                  \
    iter_failed_at(F, #call, db, rc_, CTXDB_MISUSE, name, it, 0);                                  \
  } while (0)

/* An event nested `depth` levels deep in all (the envelope, the payload
 * object, then arrays), malloc'd. */
static char *nested_event(int depth) {
  const char *head = "{\"type\":\"Note\",\"actor\":\"a\",\"payload\":{\"a\":";
  size_t at = strlen(head);
  int arrays = depth - 2, i;
  char *s = (char *)malloc(at + 2 * (size_t)arrays + 4);
  memcpy(s, head, at);
  for (i = 0; i < arrays; ++i) s[at++] = '[';
  for (i = 0; i < arrays; ++i) s[at++] = ']';
  strcpy(s + at, "}}");
  return s;
}

/* JSON input nests at most 256 levels (what every binding's decoder
 * reads back): the limit is stored and read back, one level more is
 * CTXDB_INVALID_ARG naming the limit, and nothing is written. */
static void test_nesting_limit(void) {
  ctxdb_db *db = OK_OPEN(scratch_path("nesting.ctxdb"), NULL);
  char *deepest = nested_event(256), *deeper = nested_event(257), *out = NULL, *id, *row = NULL;
  char *payload, *want = strdup(strstr(deepest, "{\"a\""));
  size_t n = 0;
  if (!db) return;
  want[strlen(want) - 1] = '\0'; /* the envelope's '}' */
  ctxdb_free(OK_CREATE(db, Q("{'id':'ses_n','payload':{'agent_id':'a'}}")));
  if (CHECK_RC(ctxdb_append(db, "ses_n", 5, deepest, strlen(deepest), &out, &n), CTXDB_OK)) {
    id = jstr(out, "id");
    CHECK(id && ctxdb_event_get(db, id, strlen(id), &row, &n) == CTXDB_OK);
    payload = row ? jraw(row, "payload") : NULL;
    CHECK(payload && strcmp(payload, want) == 0);
    free(payload);
    ctxdb_free(row);
    free(id);
    ctxdb_free(out);
  }
  append_fails_at(F, db, "ses_n", 5, deeper, strlen(deeper), 0, CTXDB_INVALID_ARG, "256");
  batch_fails_at(F, db, "ses_n", 5, deeper, strlen(deeper), 0, CTXDB_INVALID_ARG, "256", 1);
  CHECK_RC(ctxdb_close(db), CTXDB_OK);
  free(want);
  free(deepest);
  free(deeper);
}

static void test_null_with_length(ctxdb_db *db) {
  const char *s = g_s1, *e = g_started1;
  size_t sl = strlen(g_s1), el = strlen(g_started1);
  char *out, *before = snapshot(db);
  size_t n;
  ctxdb_iter *it;
  ctxdb_artifact_writer *w = NULL;
  int64_t count = -1;
  uint32_t *ids = NULL;

  NULL_LEN_FAILS("session_json", ctxdb_session_create(db, NULL, 5, &out, &n));
  NULL_LEN_FAILS("session_id", ctxdb_session_get(db, NULL, 5, &out, &n));
  NULL_LEN_FAILS("session_id", ctxdb_append(db, NULL, 5, "{}", 2, &out, &n));
  NULL_LEN_FAILS("event_json", ctxdb_append(db, s, sl, NULL, 5, &out, &n));
  NULL_LEN_FAILS("session_id", ctxdb_append_batch(db, NULL, 5, "{}", 2, &out, &n));
  NULL_LEN_FAILS("ndjson", ctxdb_append_batch(db, s, sl, NULL, 5, &out, &n));
  NULL_LEN_FAILS("event_id", ctxdb_event_get(db, NULL, 5, &out, &n));
  NULL_LEN_ITER_FAILS("session_id", ctxdb_events_iter(db, NULL, 5, 1, -1, &it));
  NULL_LEN_FAILS("session_id", ctxdb_verify(db, NULL, 5, &out, &n));
  NULL_LEN_FAILS("options_json", ctxdb_rebuild(db, NULL, 5, &out, &n));
  NULL_LEN_FAILS("options_json", ctxdb_optimize(db, NULL, 5, &out, &n));
  NULL_LEN_ITER_FAILS("session_id", ctxdb_export(db, NULL, 5, &it));
  NULL_LEN_FAILS("ndjson", ctxdb_import(db, NULL, 5, &out, &n));
  NULL_LEN_FAILS("options_json", ctxdb_transcript_import(db, NULL, 5, &out, &n));
  NULL_LEN_FAILS("session_id", ctxdb_branch_fork(db, NULL, 5, "{}", 2, &out, &n));
  NULL_LEN_FAILS("spec_json", ctxdb_branch_fork(db, s, sl, NULL, 5, &out, &n));
  NULL_LEN_FAILS("session_id", ctxdb_branch_list(db, NULL, 5, &out, &n));
  NULL_LEN_ITER_FAILS("session_id", ctxdb_branch_path(db, NULL, 5, NULL, 0, &it));
  NULL_LEN_ITER_FAILS("branch", ctxdb_branch_path(db, s, sl, NULL, 5, &it));
  NULL_LEN_FAILS("event_id", ctxdb_event_children(db, NULL, 5, &out, &n));
  NULL_LEN_FAILS("session_id", ctxdb_messages_list(db, NULL, 5, NULL, 0, &out, &n));
  NULL_LEN_FAILS("branch", ctxdb_messages_list(db, s, sl, NULL, 5, &out, &n));
  NULL_LEN_FAILS("session_id", ctxdb_tool_calls_list(db, NULL, 5, NULL, 0, &out, &n));
  NULL_LEN_FAILS("branch", ctxdb_tool_calls_list(db, s, sl, NULL, 5, &out, &n));
  NULL_LEN_FAILS("session_id", ctxdb_files_list(db, NULL, 5, NULL, 0, &out, &n));
  NULL_LEN_FAILS("branch", ctxdb_files_list(db, s, sl, NULL, 5, &out, &n));
  NULL_LEN_FAILS("session_id", ctxdb_compactions_list(db, NULL, 5, NULL, 0, &out, &n));
  NULL_LEN_FAILS("branch", ctxdb_compactions_list(db, s, sl, NULL, 5, &out, &n));
  NULL_LEN_FAILS("session_id", ctxdb_state_get(db, NULL, 5, NULL, 0, &out, &n));
  NULL_LEN_FAILS("query_json", ctxdb_state_get(db, s, sl, NULL, 5, &out, &n));
  NULL_LEN_FAILS("session_id", ctxdb_stats_get(db, NULL, 5, &out, &n));
  NULL_LEN_FAILS("data", ctxdb_artifact_put(db, NULL, 5, NULL, 0, &out, &n));
  NULL_LEN_FAILS("meta_json", ctxdb_artifact_put(db, "x", 1, NULL, 5, &out, &n));
  failed_at(F, "ctxdb_artifact_writer_open", db, ctxdb_artifact_writer_open(db, NULL, 5, &w),
            CTXDB_MISUSE, "meta_json");
  CHECK(w == NULL);
  if (CHECK_RC(ctxdb_artifact_writer_open(db, NULL, 0, &w), CTXDB_OK)) {
    CHECK_RC(ctxdb_artifact_writer_write(w, NULL, 5), CTXDB_MISUSE);
    CHECK(strstr(ctxdb_errmsg(NULL), "data") != NULL);
    ctxdb_artifact_writer_free(w);
  }
  {
    void *bytes = SENT;
    n = SENT_LEN;
    failed_at(F, "ctxdb_artifact_read", db, ctxdb_artifact_read(db, NULL, 5, 0, -1, &bytes, &n),
              CTXDB_MISUSE, "id");
    cleared_at(F, "ctxdb_artifact_read", bytes, n);
  }
  NULL_LEN_FAILS("id", ctxdb_artifact_info(db, NULL, 5, &out, &n));
  NULL_LEN_FAILS("session_id", ctxdb_artifact_list(db, NULL, 5, &out, &n));
  NULL_LEN_FAILS("id", ctxdb_artifact_lines(db, NULL, 5, 1, -1, &out, &n));
  NULL_LEN_FAILS("id", ctxdb_artifact_preview(db, NULL, 5, NULL, 0, &out, &n));
  NULL_LEN_FAILS("spec_json", ctxdb_artifact_preview(db, "art_x", 5, NULL, 5, &out, &n));
  NULL_LEN_FAILS("id", ctxdb_artifact_search(db, NULL, 5, "x", 1, NULL, 0, &out, &n));
  NULL_LEN_FAILS("pattern", ctxdb_artifact_search(db, "art_x", 5, NULL, 5, NULL, 0, &out, &n));
  NULL_LEN_FAILS("options_json", ctxdb_artifact_search(db, "art_x", 5, "x", 1, NULL, 5, &out, &n));
  NULL_LEN_FAILS("request_json", ctxdb_compile(db, NULL, 5, &out, &n));
  NULL_LEN_FAILS("bundle_json", ctxdb_bundle_convert(db, NULL, 5, "openai", 6, &out, &n));
  NULL_LEN_FAILS("format", ctxdb_bundle_convert(db, "{}", 2, NULL, 5, &out, &n));
  /* With fn NULL the name is ignored, but not a NULL with a length. */
  failed_at(F, "ctxdb_token_counter_set", db, ctxdb_token_counter_set(db, NULL, 5, NULL, NULL),
            CTXDB_MISUSE, "name");
  NULL_LEN_FAILS("query", ctxdb_search(db, NULL, 5, NULL, 0, &out, &n));
  NULL_LEN_FAILS("options_json", ctxdb_search(db, "x", 1, NULL, 5, &out, &n));
  NULL_LEN_FAILS("session_id", ctxdb_memory_write(db, NULL, 5, "{}", 2, &out, &n));
  NULL_LEN_FAILS("memory_json", ctxdb_memory_write(db, s, sl, NULL, 5, &out, &n));
  NULL_LEN_FAILS("memory_id", ctxdb_memory_update(db, NULL, 5, "{}", 2, &out, &n));
  NULL_LEN_FAILS("update_json", ctxdb_memory_update(db, "mem_x", 5, NULL, 5, &out, &n));
  NULL_LEN_FAILS("memory_id", ctxdb_memory_forget(db, NULL, 5, NULL, 0, &out, &n));
  NULL_LEN_FAILS("options_json", ctxdb_memory_forget(db, "mem_x", 5, NULL, 5, &out, &n));
  NULL_LEN_FAILS("memory_id", ctxdb_memory_get(db, NULL, 5, &out, &n));
  NULL_LEN_FAILS("query_json", ctxdb_memory_list(db, NULL, 5, &out, &n));
  NULL_LEN_FAILS("query_json", ctxdb_memory_retrieve(db, NULL, 5, &out, &n));
  NULL_LEN_FAILS("session_id", ctxdb_memory_promote(db, NULL, 5, "[]", 2, &out, &n));
  NULL_LEN_FAILS("candidates_json", ctxdb_memory_promote(db, s, sl, NULL, 5, &out, &n));
  failed_at(F, "ctxdb_tokens_count", db,
            ctxdb_tokens_count(db, NULL, 5, "a", 1, CTXDB_SPECIALS_DISALLOW, &count), CTXDB_MISUSE,
            "encoding");
  failed_at(F, "ctxdb_tokens_count", db,
            ctxdb_tokens_count(db, NULL, 0, NULL, 5, CTXDB_SPECIALS_DISALLOW, &count), CTXDB_MISUSE,
            "text");
  n = SENT_LEN;
  failed_at(F, "ctxdb_tokens_encode", db,
            ctxdb_tokens_encode(db, NULL, 5, "a", 1, CTXDB_SPECIALS_DISALLOW, &ids, &n),
            CTXDB_MISUSE, "encoding");
  failed_at(F, "ctxdb_tokens_encode", db,
            ctxdb_tokens_encode(db, NULL, 0, NULL, 5, CTXDB_SPECIALS_DISALLOW, &ids, &n),
            CTXDB_MISUSE, "text");
  cleared_at(F, "ctxdb_tokens_encode", ids, n);
  NULL_LEN_FAILS("session_id", ctxdb_compact_should(db, NULL, 5, NULL, 0, &out, &n));
  NULL_LEN_FAILS("policy_json", ctxdb_compact_should(db, s, sl, NULL, 5, &out, &n));
  NULL_LEN_FAILS("session_id", ctxdb_compact_plan(db, NULL, 5, NULL, 0, &out, &n));
  NULL_LEN_FAILS("policy_json", ctxdb_compact_plan(db, s, sl, NULL, 5, &out, &n));
  NULL_LEN_FAILS("session_id", ctxdb_compact_commit(db, NULL, 5, "{}", 2, "{}", 2, &out, &n));
  NULL_LEN_FAILS("plan_json", ctxdb_compact_commit(db, s, sl, NULL, 5, "{}", 2, &out, &n));
  NULL_LEN_FAILS("summary_json", ctxdb_compact_commit(db, s, sl, "{}", 2, NULL, 5, &out, &n));
  NULL_LEN_FAILS("session_id", ctxdb_compact(db, NULL, 5, NULL, 0, NULL, NULL, &out, &n));
  NULL_LEN_FAILS("policy_json", ctxdb_compact(db, s, sl, NULL, 5, NULL, NULL, &out, &n));
  NULL_LEN_FAILS("session_id", ctxdb_branch_summarize(db, NULL, 5, e, el, e, el, &out, &n));
  NULL_LEN_FAILS("from_leaf", ctxdb_branch_summarize(db, s, sl, NULL, 5, e, el, &out, &n));
  NULL_LEN_FAILS("to_event", ctxdb_branch_summarize(db, s, sl, e, el, NULL, 5, &out, &n));
  NULL_LEN_FAILS("session_id", ctxdb_response_record(db, NULL, 5, "{}", 2, "{}", 2, &out, &n));
  NULL_LEN_FAILS("options_json", ctxdb_response_record(db, s, sl, NULL, 5, "{}", 2, &out, &n));
  NULL_LEN_FAILS("response", ctxdb_response_record(db, s, sl, "{}", 2, NULL, 5, &out, &n));
  unchanged_at(F, "calls with NULL and a length", db, before);
}

/* ===========================================================================
 * the session tree: fork, branch list, branch paths, children
 * ======================================================================== */

/* A Note event with this id; extra ("'branch_id':'b',") goes before the
 * payload. Single quotes as in Q(); the result is in a rotating buffer. */
static const char *note(const char *id, const char *extra) {
  static char bufs[4][256];
  static int next = 0;
  char *b = bufs[next++ % 4];
  snprintf(b, sizeof bufs[0], "{'type':'Note','actor':'a','id':'%s',%s'payload':{}}", id, extra);
  return Q(b);
}

/* The ids of rows (NDJSON text) joined with ','; malloc'd. */
static char *ids_of_rows(const char *text) {
  char **lines, *out = (char *)malloc(strlen(text) + 2);
  int n = split_lines(text, &lines), i;
  out[0] = '\0';
  for (i = 0; i < n; ++i) {
    char *id = jstr(lines[i], "id");
    if (i) strcat(out, ",");
    strcat(out, id ? id : "?");
    free(id);
    free(lines[i]);
  }
  free(lines);
  return out;
}

/* The ids of a JSON array of objects joined with ','; malloc'd. */
static char *ids_of_array(const char *array) {
  char **items, *text;
  int n = jarray(array, &items), i;
  size_t len = 1;
  if (n < 0) return NULL;
  for (i = 0; i < n; ++i) len += strlen(items[i]) + 1;
  text = (char *)malloc(len);
  text[0] = '\0';
  for (i = 0; i < n; ++i) {
    strcat(text, items[i]);
    strcat(text, "\n");
  }
  jfree_items(items, n);
  {
    char *ids = ids_of_rows(text);
    free(text);
    return ids;
  }
}

/* Checks that the path of `branch` (NULL: main) is exactly `want` (ids
 * joined with ','). */
static void path_is_at(const char *file, int line, ctxdb_db *db, const char *sid,
                       const char *branch, const char *want) {
  ctxdb_iter *it = SENT_IT;
  char desc[300], *text, *ids;
  int rows;
  int rc = ctxdb_branch_path(db, sid, slen(sid), branch, slen(branch), &it);
  if (!check_rc_at(rc, CTXDB_OK, file, line, "ctxdb_branch_path")) return;
  text = iter_rows(it, &rows);
  if (!check_at(text != NULL, file, line, "the path iterates to CTXDB_DONE")) return;
  ids = ids_of_rows(text);
  snprintf(desc, sizeof desc, "the path of %s is %s (got %s)", branch ? branch : "NULL", want, ids);
  check_at(strcmp(ids, want) == 0, file, line, desc);
  free(ids);
  free(text);
}
#define PATH_IS(db, sid, branch, want) path_is_at(F, db, sid, branch, want)

static char *ok_fork_at(const char *file, int line, ctxdb_db *db, const char *sid,
                        const char *spec) {
  char *out = SENT;
  size_t n = SENT_LEN;
  int rc = ctxdb_branch_fork(db, sid, slen(sid), spec, slen(spec), &out, &n);
  return ok_buf_at(file, line, "ctxdb_branch_fork", rc, out, n);
}
#define OK_FORK(db, sid, spec) ok_fork_at(F, db, sid, spec)

/* A call of the shape (db, id, id_len, &out, &out_len) that must succeed. */
static char *ok_read_at(const char *file, int line, const char *what, id_read_fn fn, ctxdb_db *db,
                        const char *id) {
  char *out = SENT;
  size_t n = SENT_LEN;
  int rc = fn(db, id, slen(id), &out, &n);
  return ok_buf_at(file, line, what, rc, out, n);
}

/* The ids of the events (or sessions) ctxdb_event_children gives. */
static char *children_at(const char *file, int line, ctxdb_db *db, const char *eid,
                         const char *key) {
  char *out = ok_read_at(file, line, "ctxdb_event_children", ctxdb_event_children, db, eid);
  char *arr = out ? jraw(out, key) : NULL, *ids;
  check_at(out && jstr_eq(out, "event_id", eid), file, line, "children name their event");
  ids = arr ? ids_of_array(arr) : NULL;
  free(arr);
  ctxdb_free(out);
  return ids;
}

static void fork_fails_at(const char *file, int line, ctxdb_db *db, const char *sid,
                          const char *spec, int want, const char *mention) {
  write_fails_at(file, line, "ctxdb_branch_fork", ctxdb_branch_fork, db, sid, slen(sid), spec,
                 slen(spec), 0, want, mention);
}
#define FORK_FAILS(db, sid, spec, want, mention) fork_fails_at(F, db, sid, spec, want, mention)

static void test_tree_happy(ctxdb_db *db) {
  const char *sid = "ses_tree";
  char *b, *ev, *list, *ids, *kids, *nd;
  int i, rows;
  size_t pos = 0;
  ctxdb_iter *it = NULL;

  ctxdb_free(OK_CREATE(db, Q("{'id':'ses_tree','event_id':'t0','payload':{'agent_id':'a'}}")));
  for (i = 1; i <= 3; ++i) {
    char id[8];
    snprintf(id, sizeof id, "t%d", i);
    ctxdb_free(OK_APPEND(db, sid, note(id, "")));
  }
  /* One branch: main, named by SessionStarted. */
  list = ok_read_at(F, "ctxdb_branch_list", ctxdb_branch_list, db, sid);
  ids = list ? ids_of_array(list) : NULL;
  CHECK(ids && strcmp(ids, "t0") == 0);
  CHECK(list && strstr(list, Q("'kind':'main'")) != NULL);
  free(ids);
  ctxdb_free(list);
  PATH_IS(db, sid, NULL, "t0,t1,t2,t3");

  /* An explicit fork at t1, continued by its name. */
  b = OK_FORK(db, sid, Q("{'event_id':'t1','kind':'what_if','name':'alt','id':'alt1'}"));
  CHECK(b && jstr_eq(b, "id", "alt1"));
  CHECK(b && jstr_eq(b, "session_id", sid));
  CHECK(b && jstr_eq(b, "kind", "what_if"));
  CHECK(b && jstr_eq(b, "name", "alt"));
  CHECK(b && jstr_eq(b, "parent_branch_id", "t0"));
  CHECK(b && jstr_eq(b, "fork_event_id", "t1"));
  CHECK(b && jnum(b, "fork_seq") == 2);
  CHECK(b && jstr_eq(b, "leaf_event_id", "alt1"));
  CHECK(b && jnum(b, "event_count") == 1);
  ctxdb_free(b);
  ev = OK_EVENT(db, "alt1");
  CHECK(ev && jstr_eq(ev, "type", "BranchCreated") && jstr_eq(ev, "actor", "host"));
  CHECK(ev && jstr_eq(ev, "parent_id", "t1") && jstr_eq(ev, "branch_id", "alt1"));
  ctxdb_free(ev);
  ctxdb_free(OK_APPEND(db, sid, note("a1", "'branch_id':'alt',")));
  /* An implicit fork at t2, and defaults: kind fork, a generated id. */
  ctxdb_free(OK_APPEND(db, sid, note("f1", "'parent_id':'t2',")));
  b = OK_FORK(db, sid, Q("{'event_id':'t3'}"));
  CHECK(b && jstr_eq(b, "kind", "fork") && jstr_eq(b, "fork_event_id", "t3"));
  CHECK(b && jstr(b, "name") == NULL);
  ctxdb_free(b);

  list = ok_read_at(F, "ctxdb_branch_list", ctxdb_branch_list, db, sid);
  ids = list ? ids_of_array(list) : NULL;
  CHECK(ids && strncmp(ids, "t0,alt1,f1,", 11) == 0 && strchr(ids + 11, ',') == NULL);
  free(ids);
  ctxdb_free(list);

  PATH_IS(db, sid, NULL, "t0,t1,t2,t3");
  PATH_IS(db, sid, "main", "t0,t1,t2,t3");
  PATH_IS(db, sid, "t0", "t0,t1,t2,t3");
  PATH_IS(db, sid, "alt", "t0,t1,alt1,a1");
  PATH_IS(db, sid, "alt1", "t0,t1,alt1,a1");
  PATH_IS(db, sid, "f1", "t0,t1,t2,f1");

  /* Children: the next event on the branch, then the forks there. */
  kids = children_at(F, db, "t1", "events");
  CHECK(kids && strcmp(kids, "t2,alt1") == 0);
  free(kids);
  kids = children_at(F, db, "t2", "events");
  CHECK(kids && strcmp(kids, "t3,f1") == 0);
  free(kids);
  kids = children_at(F, db, "a1", "events");
  CHECK(kids && strcmp(kids, "") == 0);
  free(kids);
  /* A child session spawned by t3. */
  ctxdb_free(OK_CREATE(db, Q("{'id':'ses_kid','payload':{'agent_id':'sub',"
                             "'parent_session_id':'ses_tree','spawned_by_event_id':'t3'}}")));
  kids = children_at(F, db, "t3", "sessions");
  CHECK(kids && strcmp(kids, "ses_kid") == 0);
  free(kids);
  kids = children_at(F, db, "t1", "sessions");
  CHECK(kids && strcmp(kids, "") == 0);
  free(kids);

  /* A path longer than one page of the iterator (256 rows). */
  nd = (char *)malloc(300 * 80);
  for (i = 0; i < 300; ++i)
    pos += (size_t)sprintf(nd + pos, "%s\n",
                           Q("{'type':'Note','actor':'a','branch_id':'alt1',"
                             "'payload':{}}"));
  ctxdb_free(OK_BATCH(db, sid, nd));
  free(nd);
  CHECK_RC(ctxdb_branch_path(db, sid, strlen(sid), "alt", 3, &it), CTXDB_OK);
  /* The name was resolved at open: a second branch named alt, made while
   * the first page is read, does not turn the later pages into errors. */
  ctxdb_free(OK_FORK(db, sid, Q("{'event_id':'t2','name':'alt'}")));
  if (it) {
    char *text = iter_rows(it, &rows), **lines;
    int n = text ? split_lines(text, &lines) : 0;
    CHECK(text && rows == 304 && n == 304);
    if (n == 304) {
      CHECK(jstr_eq(lines[0], "id", "t0") && jstr_eq(lines[3], "id", "a1"));
      for (i = 1; i < n; ++i) CHECK(jnum(lines[i], "seq") > jnum(lines[i - 1], "seq"));
      CHECK(jstr_eq(lines[303], "branch_id", "alt1"));
    }
    for (i = 0; i < n; ++i) free(lines[i]);
    if (text) free(lines);
    free(text);
  }
  PATH_IS(db, sid, NULL, "t0,t1,t2,t3"); /* main is untouched */
  path_fails_at(F, db, sid, strlen(sid), "alt", 3, 0, CTXDB_INVALID_ARG, "ambiguous");
}

static void test_tree_bad_input(ctxdb_db *db) {
  const char *sid = "ses_tree", *spec = Q("{'event_id':'t1'}");
  char *b;

  /* branch_fork */
  write_fails_at(F, "ctxdb_branch_fork", ctxdb_branch_fork, NULL, sid, 8, spec, strlen(spec), 0,
                 CTXDB_MISUSE, NULL);
  write_fails_at(F, "ctxdb_branch_fork", ctxdb_branch_fork, db, sid, 8, spec, strlen(spec), 1,
                 CTXDB_MISUSE, "out");
  write_fails_at(F, "ctxdb_branch_fork", ctxdb_branch_fork, db, NULL, 8, spec, strlen(spec), 0,
                 CTXDB_MISUSE, "session_id");
  write_fails_at(F, "ctxdb_branch_fork", ctxdb_branch_fork, db, sid, 8, NULL, 5, 0, CTXDB_MISUSE,
                 "spec_json");
  write_fails_at(F, "ctxdb_branch_fork", ctxdb_branch_fork, db, sid, 8, NULL, 0, 0,
                 CTXDB_INVALID_JSON, NULL);
  FORK_FAILS(db, "", spec, CTXDB_INVALID_ARG, "session_id");
  FORK_FAILS(db, "ses_\xff", spec, CTXDB_INVALID_UTF8, "session_id");
  FORK_FAILS(db, "ses_nope", spec, CTXDB_NOT_FOUND, "ses_nope");
  FORK_FAILS(db, sid, "{", CTXDB_INVALID_JSON, NULL);
  FORK_FAILS(db, sid, "[]", CTXDB_INVALID_ARG, NULL);
  FORK_FAILS(db, sid, "{\"event_id\":\"t\xff\"}", CTXDB_INVALID_UTF8, NULL);
  FORK_FAILS(db, sid, Q("{'name':'x'}"), CTXDB_INVALID_ARG, "event_id");
  FORK_FAILS(db, sid, Q("{'event_id':7}"), CTXDB_INVALID_ARG, "event_id");
  FORK_FAILS(db, sid, Q("{'event_id':'t1','kind':'sideways'}"), CTXDB_INVALID_ARG, "kind");
  FORK_FAILS(db, sid, Q("{'event_id':'t1','kind':'main'}"), CTXDB_INVALID_ARG, "kind");
  FORK_FAILS(db, sid, Q("{'event_id':'t1','name':''}"), CTXDB_INVALID_ARG, "name");
  FORK_FAILS(db, sid, Q("{'event_id':'t1','colour':'red'}"), CTXDB_INVALID_ARG, "colour");
  FORK_FAILS(db, sid, Q("{'event_id':'t1','ts':-1}"), CTXDB_INVALID_ARG, "ts");
  FORK_FAILS(db, sid, Q("{'event_id':'evt_nope'}"), CTXDB_NOT_FOUND, "evt_nope");
  FORK_FAILS(db, sid, Q("{'event_id':'o0'}"), CTXDB_NOT_FOUND, "o0"); /* another session's */
  FORK_FAILS(db, sid, Q("{'event_id':'t1','id':'t2'}"), CTXDB_CONFLICT, "t2");

  /* branch_list */
  read_fails_at(F, "ctxdb_branch_list", ctxdb_branch_list, NULL, sid, 8, 0, CTXDB_MISUSE, NULL);
  read_fails_at(F, "ctxdb_branch_list", ctxdb_branch_list, db, sid, 8, 1, CTXDB_MISUSE, "out");
  read_fails_at(F, "ctxdb_branch_list", ctxdb_branch_list, db, NULL, 4, 0, CTXDB_MISUSE,
                "session_id");
  read_fails_at(F, "ctxdb_branch_list", ctxdb_branch_list, db, NULL, 0, 0, CTXDB_INVALID_ARG,
                "session_id");
  read_fails_at(F, "ctxdb_branch_list", ctxdb_branch_list, db, "ses_\xff", 5, 0, CTXDB_INVALID_UTF8,
                "session_id");
  read_fails_at(F, "ctxdb_branch_list", ctxdb_branch_list, db, "ses_nope", 8, 0, CTXDB_NOT_FOUND,
                "ses_nope");
  read_fails_at(F, "ctxdb_branch_list", ctxdb_branch_list, db, sid, 7, 0, CTXDB_NOT_FOUND,
                "ses_tre"); /* the length counts, not the NUL */
  read_fails_at(F, "ctxdb_branch_list", ctxdb_branch_list, db, "t1", 2, 0, CTXDB_NOT_FOUND,
                NULL); /* an event id */

  /* event_children */
  read_fails_at(F, "ctxdb_event_children", ctxdb_event_children, NULL, "t1", 2, 0, CTXDB_MISUSE,
                NULL);
  read_fails_at(F, "ctxdb_event_children", ctxdb_event_children, db, "t1", 2, 1, CTXDB_MISUSE,
                "out");
  read_fails_at(F, "ctxdb_event_children", ctxdb_event_children, db, NULL, 2, 0, CTXDB_MISUSE,
                "event_id");
  read_fails_at(F, "ctxdb_event_children", ctxdb_event_children, db, NULL, 0, 0, CTXDB_INVALID_ARG,
                "event_id");
  read_fails_at(F, "ctxdb_event_children", ctxdb_event_children, db, "t\xff", 2, 0,
                CTXDB_INVALID_UTF8, "event_id");
  read_fails_at(F, "ctxdb_event_children", ctxdb_event_children, db, "evt_nope", 8, 0,
                CTXDB_NOT_FOUND, "evt_nope");
  read_fails_at(F, "ctxdb_event_children", ctxdb_event_children, db, sid, 8, 0, CTXDB_NOT_FOUND,
                sid); /* a session id */

  /* branch_path */
  path_fails_at(F, NULL, sid, 8, NULL, 0, 0, CTXDB_MISUSE, NULL);
  path_fails_at(F, db, sid, 8, NULL, 0, 1, CTXDB_MISUSE, "out_iter");
  path_fails_at(F, db, NULL, 8, NULL, 0, 0, CTXDB_MISUSE, "session_id");
  path_fails_at(F, db, NULL, 0, NULL, 0, 0, CTXDB_INVALID_ARG, "session_id");
  path_fails_at(F, db, "ses_\xff", 5, NULL, 0, 0, CTXDB_INVALID_UTF8, "session_id");
  path_fails_at(F, db, "ses_nope", 8, NULL, 0, 0, CTXDB_NOT_FOUND, "ses_nope");
  path_fails_at(F, db, "ses_nope", 8, "alt", 3, 0, CTXDB_NOT_FOUND, "ses_nope");
  path_fails_at(F, db, sid, 8, NULL, 3, 0, CTXDB_MISUSE, "branch");
  path_fails_at(F, db, sid, 8, "", 0, 0, CTXDB_INVALID_ARG, "branch");
  path_fails_at(F, db, sid, 8, "al\xff", 3, 0, CTXDB_INVALID_UTF8, "branch");
  path_fails_at(F, db, sid, 8, "nope", 4, 0, CTXDB_NOT_FOUND, "nope");
  path_fails_at(F, db, sid, 8, "o0", 2, 0, CTXDB_NOT_FOUND, "o0"); /* another session's main */
  path_fails_at(F, db, sid, 8, "t1", 2, 0, CTXDB_NOT_FOUND, "t1"); /* an event, not a branch */
  /* A name two branches share no longer picks one; their ids still do. */
  ctxdb_free(OK_FORK(db, sid, Q("{'event_id':'t2','name':'dup','id':'dup1'}")));
  ctxdb_free(OK_FORK(db, sid, Q("{'event_id':'t3','name':'dup','id':'dup2'}")));
  path_fails_at(F, db, sid, 8, "dup", 3, 0, CTXDB_INVALID_ARG, "dup");
  PATH_IS(db, sid, "dup2", "t0,t1,t2,t3,dup2");
  /* A session of its own is its own tree. */
  b = ok_read_at(F, "ctxdb_branch_list", ctxdb_branch_list, db, "ses_other");
  {
    char *ids = b ? ids_of_array(b) : NULL;
    CHECK(ids && strcmp(ids, "o0") == 0);
    free(ids);
  }
  ctxdb_free(b);
}

static void test_tree(void) {
  char path[600];
  ctxdb_db *db, *ro;
  char *s;
  snprintf(path, sizeof path, "%s", scratch_path("tree.ctxdb"));
  db = OK_OPEN(path, NULL);
  if (!db) return;
  test_tree_happy(db);
  ctxdb_free(OK_CREATE(db, Q("{'id':'ses_other','event_id':'o0','payload':{'agent_id':'a'}}")));
  test_tree_bad_input(db);

  /* Read-only: the reads work, a fork is refused. */
  ro = OK_OPEN(path, Q("{'read_only':true}"));
  if (ro) {
    FORK_FAILS(ro, "ses_tree", Q("{'event_id':'t1'}"), CTXDB_READONLY, NULL);
    PATH_IS(ro, "ses_tree", "f1", "t0,t1,t2,f1");
    s = ok_read_at(F, "ctxdb_branch_list", ctxdb_branch_list, ro, "ses_tree");
    ctxdb_free(s);
    CHECK_RC(ctxdb_close(ro), CTXDB_OK);
  }
  s = OK_VERIFY(db, NULL);
  CHECK(s && jbool(s, "ok") == 1);
  ctxdb_free(s);
  CHECK_RC(ctxdb_close(db), CTXDB_OK);
}

/* ===========================================================================
 * views of a branch: messages, tool calls, files
 * ======================================================================== */

typedef int (*view_fn)(ctxdb_db *, const char *, size_t, const char *, size_t, char **, size_t *);

static const struct {
  const char *name;
  view_fn fn;
} k_views[] = {{"ctxdb_messages_list", ctxdb_messages_list},
               {"ctxdb_tool_calls_list", ctxdb_tool_calls_list},
               {"ctxdb_files_list", ctxdb_files_list}};

/* A view of `branch` (NULL: main) that must succeed: its buffer. */
static char *ok_view_at(const char *file, int line, int v, ctxdb_db *db, const char *sid,
                        const char *branch) {
  char *out = SENT;
  size_t n = SENT_LEN;
  int rc = k_views[v].fn(db, sid, slen(sid), branch, slen(branch), &out, &n);
  return ok_buf_at(file, line, k_views[v].name, rc, out, n);
}

/* The string values of `key` in the objects of view v of `branch`, joined
 * with ','; malloc'd. */
static char *view_column_at(const char *file, int line, int v, ctxdb_db *db, const char *sid,
                            const char *branch, const char *key) {
  char *out = ok_view_at(file, line, v, db, sid, branch), **items, *col;
  int n = out ? jarray(out, &items) : -1, i;
  size_t len = 1;
  check_at(n >= 0, file, line, "the view is a JSON array");
  for (i = 0; i < n; ++i) len += strlen(items[i]) + 1;
  col = (char *)malloc(len);
  col[0] = '\0';
  for (i = 0; i < n; ++i) {
    char *value = jstr(items[i], key);
    if (i) strcat(col, ",");
    strcat(col, value ? value : "?");
    free(value);
  }
  if (n > 0) jfree_items(items, n);
  ctxdb_free(out);
  return col;
}

/* Checks that view v of `branch` has exactly `want` as its column `key`. */
static void view_column_is_at(const char *file, int line, int v, ctxdb_db *db, const char *sid,
                              const char *branch, const char *key, const char *want) {
  char desc[400], *got = view_column_at(file, line, v, db, sid, branch, key);
  snprintf(desc, sizeof desc, "%s of %s: %s is %s (got %s)", k_views[v].name,
           branch ? branch : "main", key, want, got);
  check_at(strcmp(got, want) == 0, file, line, desc);
  free(got);
}
#define VIEW_COLUMN_IS(v, db, sid, branch, key, want)                                              \
  view_column_is_at(F, v, db, sid, branch, key, want)

enum { V_MESSAGES, V_TOOL_CALLS, V_FILES };

/* The objects of view v of main, which must number `want`, as malloc'd
 * strings (free them with jfree_items(items, want)); NULL otherwise. */
static char **view_items_at(const char *file, int line, int v, ctxdb_db *db, const char *sid,
                            int want) {
  char *out = ok_view_at(file, line, v, db, sid, NULL), **items = NULL, desc[300];
  int n = out ? jarray(out, &items) : -1;
  ctxdb_free(out);
  snprintf(desc, sizeof desc, "%s has %d items (got %d)", k_views[v].name, want, n);
  if (check_at(n == want, file, line, desc) && n > 0) return items;
  if (n > 0) jfree_items(items, n);
  return NULL;
}
#define VIEW_ITEMS(v, db, sid, want) view_items_at(F, v, db, sid, want)

static void view_fails_at(const char *file, int line, int v, ctxdb_db *db, const char *sid,
                          size_t sid_len, const char *branch, size_t branch_len, int null_out,
                          int want, const char *mention) {
  char *before = snapshot(db), *out = SENT;
  size_t n = SENT_LEN;
  int rc = k_views[v].fn(db, sid, sid_len, branch, branch_len, null_out ? NULL : &out,
                         null_out ? NULL : &n);
  failed_at(file, line, k_views[v].name, db, rc, want, mention);
  if (!null_out) cleared_at(file, line, k_views[v].name, out, n);
  if (rc == CTXDB_OK && !null_out) ctxdb_free(out);
  unchanged_at(file, line, k_views[v].name, db, before);
}

static void test_views_happy(ctxdb_db *db) {
  const char *sid = "ses_v";
  char **items;

  ctxdb_free(OK_CREATE(db, Q("{'id':'ses_v','event_id':'v0','payload':{'agent_id':'a'}}")));
  ctxdb_free(OK_APPEND(db, sid,
                       Q("{'type':'UserPromptSubmitted','actor':'user','id':'v1',"
                         "'payload':{'text':'fix it'}}")));
  ctxdb_free(OK_APPEND(db, sid,
                       Q("{'type':'AssistantMessageCreated','actor':'assistant','id':'v2',"
                         "'payload':{'content':[{'type':'text','text':'Reading.'},"
                         "{'type':'tool_call','id':'c1','name':'read','args':{'path':'a.py'}},"
                         "{'type':'tool_call','id':'c2','name':'bash','args':{'cmd':'ls'}}]}}")));
  ctxdb_free(OK_APPEND(db, sid,
                       Q("{'type':'ToolCallFinished','actor':'tool','id':'v3','payload':"
                         "{'tool_call_id':'c1','output':'x = 1','duration_ms':7,'exit_code':0}}")));
  ctxdb_free(OK_APPEND(
      db, sid, Q("{'type':'FileRead','actor':'host','id':'v4','payload':{'path':'a.py'}}")));
  ctxdb_free(OK_APPEND(db, sid,
                       Q("{'type':'FileWritten','actor':'host','id':'v5',"
                         "'payload':{'path':'a.py','change_summary':'fix x'}}")));
  /* A what-if at v3 where c2 fails and another file is read. */
  ctxdb_free(OK_FORK(db, sid, Q("{'event_id':'v3','kind':'what_if','name':'alt','id':'alt1'}")));
  ctxdb_free(OK_APPEND(db, sid,
                       Q("{'type':'ToolCallFailed','actor':'tool','id':'a1','branch_id':'alt',"
                         "'payload':{'tool_call_id':'c2','error':'boom'}}")));
  ctxdb_free(OK_APPEND(db, sid,
                       Q("{'type':'FileRead','actor':'host','id':'a2','branch_id':'alt',"
                         "'payload':{'path':'b.py'}}")));

  /* main */
  VIEW_COLUMN_IS(V_MESSAGES, db, sid, NULL, "role", "user,assistant,tool");
  VIEW_COLUMN_IS(V_MESSAGES, db, sid, NULL, "event_id", "v1,v2,v3");
  VIEW_COLUMN_IS(V_MESSAGES, db, sid, "main", "event_id", "v1,v2,v3");
  VIEW_COLUMN_IS(V_TOOL_CALLS, db, sid, NULL, "call_id", "c1,c2");
  VIEW_COLUMN_IS(V_TOOL_CALLS, db, sid, NULL, "status", "success,pending");
  VIEW_COLUMN_IS(V_FILES, db, sid, NULL, "path", "a.py");
  /* the what-if, by name and by id */
  VIEW_COLUMN_IS(V_MESSAGES, db, sid, "alt", "event_id", "v1,v2,v3,a1");
  VIEW_COLUMN_IS(V_MESSAGES, db, sid, "alt1", "role", "user,assistant,tool,tool");
  VIEW_COLUMN_IS(V_TOOL_CALLS, db, sid, "alt", "status", "success,error");
  VIEW_COLUMN_IS(V_FILES, db, sid, "alt1", "path", "b.py");

  items = VIEW_ITEMS(V_MESSAGES, db, sid, 3);
  if (items) {
    char *blocks = jraw(items[1], "blocks");
    CHECK(jstr_eq(items[0], "branch_id", "v0") && jnum(items[0], "seq") == 2);
    CHECK(jnum(items[0], "tokens") > 0 && jstr_prefix(items[0], "token_counter", ""));
    CHECK(blocks && strstr(blocks, Q("{'type':'tool_call','id':'c1','name':'read',"
                                     "'args':{'path':'a.py'}}")) != NULL);
    free(blocks);
    jfree_items(items, 3);
  }
  items = VIEW_ITEMS(V_TOOL_CALLS, db, sid, 2);
  if (items) {
    char *result = jraw(items[0], "result"), *pending = jraw(items[1], "result");
    CHECK(jstr_eq(items[0], "name", "read") && jstr_eq(items[0], "event_id", "v2"));
    CHECK(result && jstr_eq(result, "event_id", "v3") && jnum(result, "duration_ms") == 7);
    CHECK(pending && strcmp(pending, "null") == 0);
    free(result);
    free(pending);
    jfree_items(items, 2);
  }
  items = VIEW_ITEMS(V_FILES, db, sid, 1);
  if (items) {
    char *changes = jraw(items[0], "changes");
    CHECK(jnum(items[0], "reads") == 1 && jnum(items[0], "writes") == 1);
    CHECK(changes && strstr(changes, Q("'change_summary':'fix x'")) != NULL);
    free(changes);
    jfree_items(items, 1);
  }

  /* A session with nothing to show gives empty arrays. */
  ctxdb_free(OK_CREATE(db, Q("{'id':'ses_o','event_id':'o0','payload':{'agent_id':'a'}}")));
  VIEW_COLUMN_IS(V_MESSAGES, db, "ses_o", NULL, "role", "");
  VIEW_COLUMN_IS(V_TOOL_CALLS, db, "ses_o", "main", "call_id", "");
  VIEW_COLUMN_IS(V_FILES, db, "ses_o", "o0", "path", "");
}

static void test_views_bad_input(ctxdb_db *db) {
  const char *sid = "ses_v";
  int v;
  ctxdb_free(OK_FORK(db, sid, Q("{'event_id':'v1','name':'dup','id':'dup1'}")));
  ctxdb_free(OK_FORK(db, sid, Q("{'event_id':'v2','name':'dup','id':'dup2'}")));
  for (v = 0; v < 3; ++v) {
    view_fails_at(F, v, NULL, sid, 5, NULL, 0, 0, CTXDB_MISUSE, NULL);
    view_fails_at(F, v, db, sid, 5, NULL, 0, 1, CTXDB_MISUSE, "out");
    view_fails_at(F, v, db, NULL, 5, NULL, 0, 0, CTXDB_MISUSE, "session_id");
    view_fails_at(F, v, db, NULL, 0, NULL, 0, 0, CTXDB_INVALID_ARG, "session_id");
    view_fails_at(F, v, db, "ses_\xff", 5, NULL, 0, 0, CTXDB_INVALID_UTF8, "session_id");
    view_fails_at(F, v, db, "ses_nope", 8, NULL, 0, 0, CTXDB_NOT_FOUND, "ses_nope");
    view_fails_at(F, v, db, "ses_nope", 8, "alt", 3, 0, CTXDB_NOT_FOUND, "ses_nope");
    view_fails_at(F, v, db, sid, 4, NULL, 0, 0, CTXDB_NOT_FOUND, "ses_"); /* the length counts */
    view_fails_at(F, v, db, "v1", 2, NULL, 0, 0, CTXDB_NOT_FOUND, "v1");  /* an event id */
    view_fails_at(F, v, db, sid, 5, NULL, 3, 0, CTXDB_MISUSE, "branch");
    view_fails_at(F, v, db, sid, 5, "", 0, 0, CTXDB_INVALID_ARG, "branch");
    view_fails_at(F, v, db, sid, 5, "al\xff", 3, 0, CTXDB_INVALID_UTF8, "branch");
    view_fails_at(F, v, db, sid, 5, "nope", 4, 0, CTXDB_NOT_FOUND, "nope");
    view_fails_at(F, v, db, sid, 5, "o0", 2, 0, CTXDB_NOT_FOUND, "o0"); /* another session's */
    view_fails_at(F, v, db, sid, 5, "v1", 2, 0, CTXDB_NOT_FOUND, "v1"); /* an event, not a branch */
    view_fails_at(F, v, db, sid, 5, "dup", 3, 0, CTXDB_INVALID_ARG, "dup"); /* ambiguous */
  }
  /* Their ids still name the two. */
  VIEW_COLUMN_IS(V_MESSAGES, db, sid, "dup2", "event_id", "v1,v2");
}

static void test_views(void) {
  char path[600];
  ctxdb_db *db, *ro;
  snprintf(path, sizeof path, "%s", scratch_path("views.ctxdb"));
  db = OK_OPEN(path, NULL);
  if (!db) return;
  test_views_happy(db);
  test_views_bad_input(db);
  /* Read-only handles read them too. */
  ro = OK_OPEN(path, Q("{'read_only':true}"));
  if (ro) {
    VIEW_COLUMN_IS(V_TOOL_CALLS, ro, "ses_v", "alt", "status", "success,error");
    VIEW_COLUMN_IS(V_FILES, ro, "ses_v", NULL, "path", "a.py");
    CHECK_RC(ctxdb_close(ro), CTXDB_OK);
  }
  CHECK_RC(ctxdb_close(db), CTXDB_OK);
}

/* ===========================================================================
 * state and stats
 * ======================================================================== */

/* The state a query (NULL: none) gives, which must succeed. */
static char *ok_state_at(const char *file, int line, ctxdb_db *db, const char *sid,
                         const char *query) {
  char *out = SENT;
  size_t n = SENT_LEN;
  int rc = ctxdb_state_get(db, sid, slen(sid), query, slen(query), &out, &n);
  return ok_buf_at(file, line, "ctxdb_state_get", rc, out, n);
}
#define OK_STATE(db, sid, query) ok_state_at(F, db, sid, query)

/* Checks where a state stands: its branch_id, event_id and seq. */
static void state_is_at(const char *file, int line, ctxdb_db *db, const char *sid,
                        const char *query, const char *branch_id, const char *event_id,
                        int64_t seq) {
  char desc[400], *st = ok_state_at(file, line, db, sid, query);
  snprintf(desc, sizeof desc, "the state of %s stands at %s/%s (seq %lld): %.200s",
           query ? query : "NULL", branch_id, event_id, (long long)seq, st ? st : "(failed)");
  check_at(st && jstr_eq(st, "session_id", sid) && jstr_eq(st, "branch_id", branch_id) &&
               jstr_eq(st, "event_id", event_id) && jnum(st, "seq") == seq,
           file, line, desc);
  ctxdb_free(st);
}
#define STATE_IS(db, sid, query, branch_id, event_id, seq)                                         \
  state_is_at(F, db, sid, query, branch_id, event_id, seq)

static void state_fails_at(const char *file, int line, ctxdb_db *db, const char *sid,
                           const char *query, int want, const char *mention) {
  write_fails_at(file, line, "ctxdb_state_get", ctxdb_state_get, db, sid, slen(sid), query,
                 slen(query), 0, want, mention);
}
#define STATE_FAILS(db, sid, query, want, mention) state_fails_at(F, db, sid, query, want, mention)

static void test_state_happy(ctxdb_db *db) {
  const char *sid = "ses_s";
  char *st, *state, *goal, *plan, *facts, *s2;
  ctxdb_free(OK_CREATE(db, Q("{'id':'ses_s','event_id':'s0','payload':{'agent_id':'a'}}")));
  ctxdb_free(OK_APPEND(db, sid,
                       Q("{'type':'UserPromptSubmitted','actor':'user','id':'s1',"
                         "'payload':{'text':'fix it'}}")));
  ctxdb_free(OK_APPEND(db, sid,
                       Q("{'type':'StateUpdated','actor':'agent','id':'s2','payload':{'ops':["
                         "{'op':'set_plan','steps':['look','fix']},"
                         "{'op':'add_fact','content':'flaky','confidence':0.5}]}}")));
  ctxdb_free(OK_APPEND(
      db, sid, Q("{'type':'FileWritten','actor':'host','id':'s3','payload':{'path':'a.c'}}")));
  ctxdb_free(OK_FORK(db, sid, Q("{'event_id':'s1','name':'alt','id':'alt1'}")));
  ctxdb_free(OK_APPEND(db, sid,
                       Q("{'type':'StateUpdated','actor':'agent','id':'a1','branch_id':'alt',"
                         "'payload':{'ops':[{'op':'set_task','text':'another way'}]}}")));

  /* main's current state: NULL, "" and {} all mean it. */
  STATE_IS(db, sid, NULL, "s0", "s3", 4);
  STATE_IS(db, sid, "{}", "s0", "s3", 4);
  STATE_IS(db, sid, Q("{'branch_id':'main'}"), "s0", "s3", 4);
  {
    char *out = SENT;
    size_t n = SENT_LEN;
    CHECK_RC(ctxdb_state_get(db, sid, 5, "", 0, &out, &n), CTXDB_OK);
    CHECK(out != SENT && jstr_eq(out, "event_id", "s3"));
    if (out != SENT) ctxdb_free(out);
  }
  st = OK_STATE(db, sid, NULL);
  state = st ? jraw(st, "state") : NULL;
  goal = state ? jraw(state, "goal") : NULL;
  plan = state ? jraw(state, "plan") : NULL;
  facts = state ? jraw(state, "facts") : NULL;
  CHECK(goal && strstr(goal, Q("'request':{'text':'fix it','event_id':'s1'}")) != NULL);
  CHECK(plan && strstr(plan, Q("{'text':'look','status':'in_progress'}")) != NULL);
  CHECK(facts && strstr(facts, Q("'content':'flaky','confidence':0.5")) != NULL);
  CHECK(state && strstr(state, Q("'modified':[{'path':'a.c'")) != NULL);
  free(goal);
  free(plan);
  free(facts);
  free(state);
  ctxdb_free(st);

  /* A branch by name or id; time travel to an event. */
  STATE_IS(db, sid, Q("{'branch_id':'alt'}"), "alt1", "a1", 6);
  STATE_IS(db, sid, Q("{'branch_id':'alt1'}"), "alt1", "a1", 6);
  st = OK_STATE(db, sid, Q("{'branch_id':'alt'}"));
  CHECK(st && strstr(st, Q("'current_task':{'text':'another way','event_id':'a1'}")) != NULL);
  CHECK(st && strstr(st, Q("'plan':{'steps':[]")) != NULL); /* the plan came after the fork */
  ctxdb_free(st);
  STATE_IS(db, sid, Q("{'at':'s2'}"), "s0", "s2", 3);
  STATE_IS(db, sid, Q("{'at':'s1'}"), "s0", "s1", 2);
  st = OK_STATE(db, sid, Q("{'at':'s2'}"));
  s2 = st ? jraw(st, "state") : NULL;
  CHECK(s2 && strstr(s2, Q("'modified':[]")) != NULL); /* s3 had not happened */
  free(s2);
  ctxdb_free(st);
}

static void test_stats_happy(ctxdb_db *db) {
  char *one, *all, *messages;
  one = ok_read_at(F, "ctxdb_stats_get", ctxdb_stats_get, db, "ses_s");
  CHECK(one && jstr_eq(one, "session_id", "ses_s") && jnum(one, "sessions") == 1);
  CHECK(one && jnum(one, "events") == 6);
  messages = one ? jraw(one, "messages") : NULL;
  CHECK(messages && jnum(messages, "user") == 1 && jnum(messages, "assistant") == 0);
  free(messages);
  ctxdb_free(one);
  ctxdb_free(OK_CREATE(db, Q("{'id':'ses_o','event_id':'o0','payload':{'agent_id':'a'}}")));
  all = ok_read_at(F, "ctxdb_stats_get", ctxdb_stats_get, db, NULL);
  CHECK(all && strstr(all, Q("'session_id':null")) != NULL);
  CHECK(all && jnum(all, "sessions") == 2 && jnum(all, "events") == 7);
  ctxdb_free(all);
}

static void test_state_stats_bad_input(ctxdb_db *db) {
  const char *sid = "ses_s", *q = "{}";
  ctxdb_free(OK_FORK(db, sid, Q("{'event_id':'s1','name':'dup','id':'dup1'}")));
  ctxdb_free(OK_FORK(db, sid, Q("{'event_id':'s2','name':'dup','id':'dup2'}")));

  /* state_get */
  write_fails_at(F, "ctxdb_state_get", ctxdb_state_get, NULL, sid, 5, q, 2, 0, CTXDB_MISUSE, NULL);
  write_fails_at(F, "ctxdb_state_get", ctxdb_state_get, db, sid, 5, q, 2, 1, CTXDB_MISUSE, "out");
  write_fails_at(F, "ctxdb_state_get", ctxdb_state_get, db, NULL, 5, q, 2, 0, CTXDB_MISUSE,
                 "session_id");
  write_fails_at(F, "ctxdb_state_get", ctxdb_state_get, db, sid, 5, NULL, 2, 0, CTXDB_MISUSE,
                 "query_json");
  STATE_FAILS(db, NULL, q, CTXDB_INVALID_ARG, "session_id");
  STATE_FAILS(db, "ses_\xff", q, CTXDB_INVALID_UTF8, "session_id");
  STATE_FAILS(db, "ses_nope", q, CTXDB_NOT_FOUND, "ses_nope");
  STATE_FAILS(db, "ses_nope", Q("{'branch_id':'alt'}"), CTXDB_NOT_FOUND, "ses_nope");
  STATE_FAILS(db, "s1", NULL, CTXDB_NOT_FOUND, "s1"); /* an event id */
  STATE_FAILS(db, sid, "{", CTXDB_INVALID_JSON, NULL);
  STATE_FAILS(db, sid, "[]", CTXDB_INVALID_ARG, NULL);
  STATE_FAILS(db, sid, "{\"at\":\"s\xff\"}", CTXDB_INVALID_UTF8, NULL);
  STATE_FAILS(db, sid, Q("{'colour':'red'}"), CTXDB_INVALID_ARG, "colour");
  STATE_FAILS(db, sid, Q("{'branch_id':7}"), CTXDB_INVALID_ARG, "branch_id");
  STATE_FAILS(db, sid, Q("{'branch_id':''}"), CTXDB_INVALID_ARG, "branch_id");
  STATE_FAILS(db, sid, Q("{'at':null}"), CTXDB_INVALID_ARG, "at");
  STATE_FAILS(db, sid, Q("{'branch_id':'alt','at':'s1'}"), CTXDB_INVALID_ARG, NULL);
  STATE_FAILS(db, sid, Q("{'branch_id':'nope'}"), CTXDB_NOT_FOUND, "nope");
  STATE_FAILS(db, sid, Q("{'branch_id':'o0'}"), CTXDB_NOT_FOUND, "o0"); /* another session's */
  STATE_FAILS(db, sid, Q("{'branch_id':'s2'}"), CTXDB_NOT_FOUND, "s2"); /* not a branch */
  STATE_FAILS(db, sid, Q("{'branch_id':'dup'}"), CTXDB_INVALID_ARG, "dup");
  STATE_FAILS(db, sid, Q("{'at':'evt_nope'}"), CTXDB_NOT_FOUND, "evt_nope");
  STATE_FAILS(db, sid, Q("{'at':'o0'}"), CTXDB_INVALID_ARG, "o0"); /* another session's event */
  STATE_IS(db, sid, Q("{'branch_id':'dup2'}"), "dup2", "dup2", 8);

  /* stats_get */
  read_fails_at(F, "ctxdb_stats_get", ctxdb_stats_get, NULL, sid, 5, 0, CTXDB_MISUSE, NULL);
  read_fails_at(F, "ctxdb_stats_get", ctxdb_stats_get, NULL, NULL, 0, 0, CTXDB_MISUSE, NULL);
  read_fails_at(F, "ctxdb_stats_get", ctxdb_stats_get, db, sid, 5, 1, CTXDB_MISUSE, "out");
  read_fails_at(F, "ctxdb_stats_get", ctxdb_stats_get, db, NULL, 5, 0, CTXDB_MISUSE, "session_id");
  read_fails_at(F, "ctxdb_stats_get", ctxdb_stats_get, db, "", 0, 0, CTXDB_INVALID_ARG,
                "session_id");
  read_fails_at(F, "ctxdb_stats_get", ctxdb_stats_get, db, "ses_\xff", 5, 0, CTXDB_INVALID_UTF8,
                "session_id");
  read_fails_at(F, "ctxdb_stats_get", ctxdb_stats_get, db, "ses_nope", 8, 0, CTXDB_NOT_FOUND,
                "ses_nope");
  read_fails_at(F, "ctxdb_stats_get", ctxdb_stats_get, db, sid, 4, 0, CTXDB_NOT_FOUND,
                "ses_"); /* the length counts, not the NUL */
}

static void test_state_stats(void) {
  char path[600], *s;
  ctxdb_db *db, *ro;
  snprintf(path, sizeof path, "%s", scratch_path("state.ctxdb"));
  db = OK_OPEN(path, NULL);
  if (!db) return;
  test_state_happy(db);
  test_stats_happy(db);
  test_state_stats_bad_input(db);
  /* Read-only handles read them too. */
  ro = OK_OPEN(path, Q("{'read_only':true}"));
  if (ro) {
    STATE_IS(ro, "ses_s", Q("{'branch_id':'alt'}"), "alt1", "a1", 6);
    s = ok_read_at(F, "ctxdb_stats_get", ctxdb_stats_get, ro, NULL);
    CHECK(s && jnum(s, "sessions") == 2);
    ctxdb_free(s);
    CHECK_RC(ctxdb_close(ro), CTXDB_OK);
  }
  CHECK_RC(ctxdb_close(db), CTXDB_OK);
}

/* ===========================================================================
 * artifacts
 * ======================================================================== */

#define ART_LOG "one\ntwo ERROR here\nthree\n"
#define ART_UNKNOWN "art_0000000000000000000000000000000000000000000000000000000000000000"

/* The artifact list: what a failed put must leave as it was. */
static char *art_snapshot(ctxdb_db *db) {
  char *out = NULL, *s;
  size_t n = 0;
  if (!db || ctxdb_artifact_list(db, NULL, 0, &out, &n) != CTXDB_OK) return NULL;
  s = (char *)malloc(n + 1);
  memcpy(s, out, n + 1);
  ctxdb_free(out);
  return s;
}

static void art_unchanged_at(const char *file, int line, const char *what, ctxdb_db *db,
                             char *before) {
  char *after = art_snapshot(db), desc[300];
  snprintf(desc, sizeof desc, "a failed %s leaves the artifacts as they were", what);
  if (before) check_at(after && strcmp(before, after) == 0, file, line, desc);
  free(before);
  free(after);
}

static char *ok_put_at(const char *file, int line, ctxdb_db *db, const void *data, size_t len,
                       const char *meta) {
  char *out = SENT;
  size_t n = SENT_LEN;
  int rc = ctxdb_artifact_put(db, data, len, meta, slen(meta), &out, &n);
  return ok_buf_at(file, line, "ctxdb_artifact_put", rc, out, n);
}
#define OK_PUT(db, data, len, meta) ok_put_at(F, db, data, len, meta)

static void put_fails_at(const char *file, int line, ctxdb_db *db, const void *data, size_t len,
                         const char *meta, size_t meta_len, int null_out, int want,
                         const char *mention) {
  char *before = art_snapshot(db), *out = SENT;
  size_t n = SENT_LEN;
  int rc = ctxdb_artifact_put(db, data, len, meta, meta_len, null_out ? NULL : &out,
                              null_out ? NULL : &n);
  failed_at(file, line, "ctxdb_artifact_put", db, rc, want, mention);
  if (!null_out) cleared_at(file, line, "ctxdb_artifact_put", out, n);
  if (rc == CTXDB_OK && !null_out) ctxdb_free(out);
  art_unchanged_at(file, line, "ctxdb_artifact_put", db, before);
}
#define PUT_FAILS(db, meta, want, mention)                                                         \
  put_fails_at(F, db, "x", 1, meta, slen(meta), 0, want, mention)

/* The bytes of a read that must succeed (NUL-terminated), or NULL. */
static char *ok_art_read_at(const char *file, int line, ctxdb_db *db, const char *id, int64_t off,
                            int64_t len, size_t *n) {
  void *out = SENT;
  char desc[200];
  *n = SENT_LEN;
  if (!check_rc_at(ctxdb_artifact_read(db, id, slen(id), off, len, &out, n), CTXDB_OK, file, line,
                   "ctxdb_artifact_read"))
    return NULL;
  snprintf(desc, sizeof desc, "ctxdb_artifact_read returns a NUL-terminated buffer");
  if (!check_at(out != NULL && out != SENT && ((char *)out)[*n] == '\0', file, line, desc))
    return NULL;
  return (char *)out;
}

static void art_read_fails_at(const char *file, int line, ctxdb_db *db, const char *id,
                              size_t id_len, int64_t off, int64_t len, int null_out, int want,
                              const char *mention) {
  void *out = SENT;
  size_t n = SENT_LEN;
  int rc =
      ctxdb_artifact_read(db, id, id_len, off, len, null_out ? NULL : &out, null_out ? NULL : &n);
  failed_at(file, line, "ctxdb_artifact_read", db, rc, want, mention);
  if (!null_out) cleared_at(file, line, "ctxdb_artifact_read", out, n);
  if (rc == CTXDB_OK && !null_out) ctxdb_free(out);
}
#define ART_READ_FAILS(db, id, off, len, want, mention)                                            \
  art_read_fails_at(F, db, id, slen(id), off, len, 0, want, mention)

static void lines_fails_at(const char *file, int line, ctxdb_db *db, const char *id, size_t id_len,
                           int64_t first, int64_t count, int null_out, int want,
                           const char *mention) {
  char *out = SENT;
  size_t n = SENT_LEN;
  int rc = ctxdb_artifact_lines(db, id, id_len, first, count, null_out ? NULL : &out,
                                null_out ? NULL : &n);
  failed_at(file, line, "ctxdb_artifact_lines", db, rc, want, mention);
  if (!null_out) cleared_at(file, line, "ctxdb_artifact_lines", out, n);
  if (rc == CTXDB_OK && !null_out) ctxdb_free(out);
}
#define LINES_FAILS(db, id, first, count, want, mention)                                           \
  lines_fails_at(F, db, id, slen(id), first, count, 0, want, mention)

static void search_fails_at(const char *file, int line, ctxdb_db *db, const char *id, size_t id_len,
                            const char *pat, size_t pat_len, const char *opts, size_t opts_len,
                            int null_out, int want, const char *mention) {
  char *out = SENT;
  size_t n = SENT_LEN;
  int rc = ctxdb_artifact_search(db, id, id_len, pat, pat_len, opts, opts_len,
                                 null_out ? NULL : &out, null_out ? NULL : &n);
  failed_at(file, line, "ctxdb_artifact_search", db, rc, want, mention);
  if (!null_out) cleared_at(file, line, "ctxdb_artifact_search", out, n);
  if (rc == CTXDB_OK && !null_out) ctxdb_free(out);
}
#define SEARCH_FAILS(db, id, pat, opts, want, mention)                                             \
  search_fails_at(F, db, id, slen(id), pat, slen(pat), opts, slen(opts), 0, want, mention)

static void test_artifacts_happy(ctxdb_db *db, char *id, char *empty_id) {
  char *a, *b, *s, *list;
  size_t n;
  ctxdb_free(OK_CREATE(db, Q("{'id':'ses_a','event_id':'a0','payload':{'agent_id':'a'}}")));
  ctxdb_free(OK_APPEND(db, "ses_a", Q("{'type':'Note','actor':'a','id':'a1','payload':{}}")));
  a = OK_PUT(db, ART_LOG, strlen(ART_LOG),
             Q("{'kind':'command_log','name':'b.log','mime':'text/plain','event_id':'a1'}"));
  CHECK(a && strncmp(a, Q("{'id':'art_"), strlen(Q("{'id':'art_"))) == 0);
  CHECK(a && jnum(a, "raw_size") == (int64_t)strlen(ART_LOG) && jnum(a, "line_count") == 3);
  CHECK(a && jstr_eq(a, "kind", "command_log") && jstr_eq(a, "name", "b.log"));
  CHECK(a && strstr(a, Q("'refs':[{'event_id':'a1','role':'output','session_id':'ses_a'}]")));
  s = a ? jstr(a, "id") : NULL;
  snprintf(id, 80, "%s", s ? s : "art_missing");
  free(s);
  /* The same bytes again: the same artifact, first put's kind kept. */
  b = OK_PUT(db, ART_LOG, strlen(ART_LOG), NULL);
  CHECK(b && jstr_eq(b, "id", id) && jstr_eq(b, "kind", "command_log"));
  ctxdb_free(b);
  ctxdb_free(a);
  /* NULL with length 0 is empty content. */
  b = OK_PUT(db, NULL, 0, "{}");
  CHECK(b && jnum(b, "raw_size") == 0 && jstr_eq(b, "kind", "other"));
  s = b ? jstr(b, "id") : NULL;
  snprintf(empty_id, 80, "%s", s ? s : "art_missing");
  CHECK(strcmp(empty_id, "art_e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855") ==
        0);
  free(s);
  ctxdb_free(b);

  s = ok_art_read_at(F, db, id, 0, -1, &n);
  CHECK(s && n == strlen(ART_LOG) && memcmp(s, ART_LOG, n) == 0);
  ctxdb_free(s);
  s = ok_art_read_at(F, db, id, 4, 3, &n);
  CHECK(s && n == 3 && memcmp(s, "two", 3) == 0);
  ctxdb_free(s);
  s = ok_art_read_at(F, db, id, 4, 1000, &n); /* clamped */
  CHECK(s && n == strlen(ART_LOG) - 4);
  ctxdb_free(s);
  s = ok_art_read_at(F, db, empty_id, 0, -1, &n);
  CHECK(s && n == 0);
  ctxdb_free(s);

  s = ok_read_at(F, "ctxdb_artifact_info", ctxdb_artifact_info, db, id);
  CHECK(s && jstr_eq(s, "id", id) && jstr_eq(s, "mime", "text/plain"));
  ctxdb_free(s);
  list = ok_read_at(F, "ctxdb_artifact_list", ctxdb_artifact_list, db, NULL);
  CHECK(list && strstr(list, id) && strstr(list, empty_id));
  ctxdb_free(list);
  list = ok_read_at(F, "ctxdb_artifact_list", ctxdb_artifact_list, db, "ses_a");
  CHECK(list && strstr(list, id) && !strstr(list, empty_id));
  ctxdb_free(list);

  {
    char *out = SENT;
    n = SENT_LEN;
    CHECK_RC(ctxdb_artifact_lines(db, id, strlen(id), 2, 1, &out, &n), CTXDB_OK);
    CHECK(out != SENT && n == 15 && strcmp(out, "two ERROR here\n") == 0);
    if (out != SENT) ctxdb_free(out);
    CHECK_RC(ctxdb_artifact_lines(db, id, strlen(id), 2, -1, &out, &n), CTXDB_OK);
    CHECK(strcmp(out, "two ERROR here\nthree\n") == 0);
    ctxdb_free(out);
    CHECK_RC(ctxdb_artifact_lines(db, id, strlen(id), 4, 1, &out, &n), CTXDB_OK);
    CHECK(n == 0 && out && out[0] == '\0');
    ctxdb_free(out);
    CHECK_RC(ctxdb_artifact_preview(db, id, strlen(id), Q("{'mode':'tail','lines':1}"),
                                    strlen(Q("{'mode':'tail','lines':1}")), &out, &n),
             CTXDB_OK);
    CHECK(jstr_eq(out, "text", "three\\n") && jnum(out, "omitted_lines") == 2);
    ctxdb_free(out);
    CHECK_RC(ctxdb_artifact_preview(db, id, strlen(id), NULL, 0, &out, &n), CTXDB_OK);
    CHECK(jnum(out, "omitted_lines") == 0);
    ctxdb_free(out);
    CHECK_RC(ctxdb_artifact_search(db, id, strlen(id), "error", 5,
                                   Q("{'ignore_case':true,'before':1}"),
                                   strlen(Q("{'ignore_case':true,'before':1}")), &out, &n),
             CTXDB_OK);
    CHECK(strstr(out, Q("'line':2,'offset':4,'column':4,'length':5,'text':'two ERROR here'")));
    CHECK(strstr(out, Q("'before':[{'line':1,'text':'one'}]")));
    CHECK(jbool(out, "truncated") == 0);
    ctxdb_free(out);
    CHECK_RC(ctxdb_artifact_search(db, id, strlen(id), "error", 5, NULL, 0, &out, &n), CTXDB_OK);
    CHECK(strstr(out, Q("'matches':[]")));
    ctxdb_free(out);
  }
}

static void test_artifacts_bad_input(ctxdb_db *db, const char *id) {
  size_t il = strlen(id);
  /* put */
  put_fails_at(F, NULL, "x", 1, NULL, 0, 0, CTXDB_MISUSE, NULL);
  put_fails_at(F, db, "x", 1, NULL, 0, 1, CTXDB_MISUSE, "out");
  put_fails_at(F, db, NULL, 3, NULL, 0, 0, CTXDB_MISUSE, "data");
  put_fails_at(F, db, "x", 1, NULL, 3, 0, CTXDB_MISUSE, "meta_json");
  PUT_FAILS(db, "{", CTXDB_INVALID_JSON, NULL);
  PUT_FAILS(db, "[]", CTXDB_INVALID_ARG, NULL);
  PUT_FAILS(db, Q("{'kind':'nope'}"), CTXDB_INVALID_ARG, "kind");
  PUT_FAILS(db, Q("{'colour':'red'}"), CTXDB_INVALID_ARG, "colour");
  PUT_FAILS(db, Q("{'name':7}"), CTXDB_INVALID_ARG, "name");
  PUT_FAILS(db, Q("{'event_id':''}"), CTXDB_INVALID_ARG, "event_id");
  PUT_FAILS(db, "{\"name\":\"b\xff\"}", CTXDB_INVALID_UTF8, NULL);

  /* read */
  art_read_fails_at(F, NULL, id, il, 0, -1, 0, CTXDB_MISUSE, NULL);
  art_read_fails_at(F, db, id, il, 0, -1, 1, CTXDB_MISUSE, "out");
  art_read_fails_at(F, db, NULL, 3, 0, -1, 0, CTXDB_MISUSE, "id");
  ART_READ_FAILS(db, NULL, 0, -1, CTXDB_INVALID_ARG, "id");
  ART_READ_FAILS(db, "art_\xff", 0, -1, CTXDB_INVALID_UTF8, "id");
  ART_READ_FAILS(db, "art_nope", 0, -1, CTXDB_INVALID_ARG, "art_nope");
  ART_READ_FAILS(db, ART_UNKNOWN, 0, -1, CTXDB_NOT_FOUND, ART_UNKNOWN);
  ART_READ_FAILS(db, id, -1, 2, CTXDB_INVALID_ARG, "range");
  ART_READ_FAILS(db, id, 1000, 2, CTXDB_INVALID_ARG, "range");
  ART_READ_FAILS(db, id, 0, -2, CTXDB_INVALID_ARG, "length");

  /* info */
  read_fails_at(F, "ctxdb_artifact_info", ctxdb_artifact_info, NULL, id, il, 0, CTXDB_MISUSE, NULL);
  read_fails_at(F, "ctxdb_artifact_info", ctxdb_artifact_info, db, id, il, 1, CTXDB_MISUSE, "out");
  read_fails_at(F, "ctxdb_artifact_info", ctxdb_artifact_info, db, NULL, 3, 0, CTXDB_MISUSE, "id");
  read_fails_at(F, "ctxdb_artifact_info", ctxdb_artifact_info, db, "", 0, 0, CTXDB_INVALID_ARG,
                "id");
  read_fails_at(F, "ctxdb_artifact_info", ctxdb_artifact_info, db, "art_\xff", 5, 0,
                CTXDB_INVALID_UTF8, "id");
  read_fails_at(F, "ctxdb_artifact_info", ctxdb_artifact_info, db, ART_UNKNOWN, strlen(ART_UNKNOWN),
                0, CTXDB_NOT_FOUND, ART_UNKNOWN);
  read_fails_at(F, "ctxdb_artifact_info", ctxdb_artifact_info, db, id, il - 1, 0, CTXDB_INVALID_ARG,
                "not an artifact id"); /* the length counts, not the NUL */

  /* list */
  read_fails_at(F, "ctxdb_artifact_list", ctxdb_artifact_list, NULL, NULL, 0, 0, CTXDB_MISUSE,
                NULL);
  read_fails_at(F, "ctxdb_artifact_list", ctxdb_artifact_list, db, NULL, 0, 1, CTXDB_MISUSE, "out");
  read_fails_at(F, "ctxdb_artifact_list", ctxdb_artifact_list, db, NULL, 5, 0, CTXDB_MISUSE,
                "session_id");
  read_fails_at(F, "ctxdb_artifact_list", ctxdb_artifact_list, db, "", 0, 0, CTXDB_INVALID_ARG,
                "session_id");
  read_fails_at(F, "ctxdb_artifact_list", ctxdb_artifact_list, db, "ses_\xff", 5, 0,
                CTXDB_INVALID_UTF8, "session_id");
  read_fails_at(F, "ctxdb_artifact_list", ctxdb_artifact_list, db, "ses_nope", 8, 0,
                CTXDB_NOT_FOUND, "ses_nope");

  /* lines */
  lines_fails_at(F, NULL, id, il, 1, 1, 0, CTXDB_MISUSE, NULL);
  lines_fails_at(F, db, id, il, 1, 1, 1, CTXDB_MISUSE, "out");
  lines_fails_at(F, db, NULL, 3, 1, 1, 0, CTXDB_MISUSE, "id");
  LINES_FAILS(db, NULL, 1, 1, CTXDB_INVALID_ARG, "id");
  LINES_FAILS(db, "art_\xff", 1, 1, CTXDB_INVALID_UTF8, "id");
  LINES_FAILS(db, ART_UNKNOWN, 1, 1, CTXDB_NOT_FOUND, ART_UNKNOWN);
  LINES_FAILS(db, id, 0, 1, CTXDB_INVALID_ARG, "line range");
  LINES_FAILS(db, id, 5, 1, CTXDB_INVALID_ARG, "line range");
  LINES_FAILS(db, id, 1, -2, CTXDB_INVALID_ARG, "count");

  /* preview */
  write_fails_at(F, "ctxdb_artifact_preview", ctxdb_artifact_preview, NULL, id, il, "{}", 2, 0,
                 CTXDB_MISUSE, NULL);
  write_fails_at(F, "ctxdb_artifact_preview", ctxdb_artifact_preview, db, id, il, "{}", 2, 1,
                 CTXDB_MISUSE, "out");
  write_fails_at(F, "ctxdb_artifact_preview", ctxdb_artifact_preview, db, NULL, 3, "{}", 2, 0,
                 CTXDB_MISUSE, "id");
  write_fails_at(F, "ctxdb_artifact_preview", ctxdb_artifact_preview, db, id, il, NULL, 2, 0,
                 CTXDB_MISUSE, "spec_json");
#define PREVIEW_FAILS(pid, spec, want, mention)                                                    \
  write_fails_at(F, "ctxdb_artifact_preview", ctxdb_artifact_preview, db, pid, slen(pid), spec,    \
                 slen(spec), 0, want, mention)
  PREVIEW_FAILS("", "{}", CTXDB_INVALID_ARG, "id");
  PREVIEW_FAILS("art_\xff", "{}", CTXDB_INVALID_UTF8, "id");
  PREVIEW_FAILS(ART_UNKNOWN, "{}", CTXDB_NOT_FOUND, ART_UNKNOWN);
  PREVIEW_FAILS(id, "{", CTXDB_INVALID_JSON, NULL);
  PREVIEW_FAILS(id, "{\"mode\":\"h\xff\"}", CTXDB_INVALID_UTF8, NULL);
  PREVIEW_FAILS(id, Q("{'mode':'middle'}"), CTXDB_INVALID_ARG, "mode");
  PREVIEW_FAILS(id, Q("{'lines':-5}"), CTXDB_INVALID_ARG, "lines");
  PREVIEW_FAILS(id, Q("{'bytes':'ten'}"), CTXDB_INVALID_ARG, "bytes");
  PREVIEW_FAILS(id, Q("{'colour':1}"), CTXDB_INVALID_ARG, "colour");
#undef PREVIEW_FAILS

  /* search */
  search_fails_at(F, NULL, id, il, "a", 1, NULL, 0, 0, CTXDB_MISUSE, NULL);
  search_fails_at(F, db, id, il, "a", 1, NULL, 0, 1, CTXDB_MISUSE, "out");
  search_fails_at(F, db, NULL, 3, "a", 1, NULL, 0, 0, CTXDB_MISUSE, "id");
  search_fails_at(F, db, id, il, NULL, 3, NULL, 0, 0, CTXDB_MISUSE, "pattern");
  search_fails_at(F, db, id, il, "a", 1, NULL, 3, 0, CTXDB_MISUSE, "options_json");
  SEARCH_FAILS(db, "", "a", "{}", CTXDB_INVALID_ARG, "id");
  SEARCH_FAILS(db, "art_\xff", "a", "{}", CTXDB_INVALID_UTF8, "id");
  SEARCH_FAILS(db, ART_UNKNOWN, "a", "{}", CTXDB_NOT_FOUND, ART_UNKNOWN);
  SEARCH_FAILS(db, id, "a\xff", "{}", CTXDB_INVALID_UTF8, "pattern");
  SEARCH_FAILS(db, id, "(unclosed", "{}", CTXDB_INVALID_ARG, "regular expression");
  SEARCH_FAILS(db, id, "a", "{", CTXDB_INVALID_JSON, NULL);
  SEARCH_FAILS(db, id, "a", "{\"x\":\"\xff\"}", CTXDB_INVALID_UTF8, NULL);
  SEARCH_FAILS(db, id, "a", Q("{'before':-1}"), CTXDB_INVALID_ARG, "before");
  SEARCH_FAILS(db, id, "a", Q("{'ignore_case':1}"), CTXDB_INVALID_ARG, "ignore_case");
  SEARCH_FAILS(db, id, "a", Q("{'colour':1}"), CTXDB_INVALID_ARG, "colour");
}

static void test_artifacts(void) {
  char path[600], id[80], empty_id[80], *s;
  ctxdb_db *db, *ro;
  snprintf(path, sizeof path, "%s", scratch_path("artifacts.ctxdb"));
  db = OK_OPEN(path, NULL);
  if (!db) return;
  test_artifacts_happy(db, id, empty_id);
  test_artifacts_bad_input(db, id);
  ro = OK_OPEN(path, Q("{'read_only':true}"));
  if (ro) {
    s = ok_read_at(F, "ctxdb_artifact_info", ctxdb_artifact_info, ro, id);
    CHECK(s && jstr_eq(s, "id", id));
    ctxdb_free(s);
    put_fails_at(F, ro, "new", 3, NULL, 0, 0, CTXDB_READONLY, NULL);
    CHECK_RC(ctxdb_close(ro), CTXDB_OK);
  }
  CHECK_RC(ctxdb_close(db), CTXDB_OK);
}

/* ===========================================================================
 * export → import
 * ======================================================================== */

static char *join_lines(char **lines, int from, int to, int skip) {
  size_t total = 1;
  int i;
  char *s;
  for (i = from; i < to; ++i) total += strlen(lines[i]) + 1;
  s = (char *)malloc(total);
  s[0] = '\0';
  for (i = from; i < to; ++i) {
    if (i == skip) continue;
    strcat(s, lines[i]);
    strcat(s, "\n");
  }
  return s;
}

static void test_import(ctxdb_db *db1) {
  int rows1, rows, nl, i;
  char *exp1 = export_all(db1, &rows1), *exp, *out, *list1, *list2, *v;
  char **lines;
  ctxdb_db *db2, *db3, *db4;
  size_t n;

  CHECK(exp1 != NULL && rows1 > 10);
  nl = split_lines(exp1, &lines);
  CHECK(nl == rows1);

  /* Into an empty file: identical rows, sessions and a valid chain. */
  db2 = OK_OPEN(scratch_path("import.ctxdb"), NULL);
  out = SENT;
  n = SENT_LEN;
  CHECK_RC(ctxdb_import(db2, exp1, strlen(exp1), &out, &n), CTXDB_OK);
  if (out == SENT) out = NULL;
  CHECK(out && strlen(out) == n);
  CHECK(jnum(out, "imported") == rows1);
  CHECK(jnum(out, "skipped") == 0);
  ctxdb_free(out);
  exp = export_all(db2, &rows);
  CHECK(rows == rows1);
  CHECK(exp && strcmp(exp, exp1) == 0);
  free(exp);
  list1 = OK_LIST(db1);
  list2 = OK_LIST(db2);
  CHECK(list1 && list2 && strcmp(list1, list2) == 0);
  ctxdb_free(list1);
  ctxdb_free(list2);
  v = OK_VERIFY(db2, NULL);
  CHECK(jbool(v, "ok") == 1 && jnum(v, "events") == rows1 && jnum(v, "sessions") == 3);
  ctxdb_free(v);
  for (i = 0; i < nl; ++i) { /* every row, by id */
    char *id = jstr(lines[i], "id");
    char *e = OK_EVENT(db2, id);
    CHECK(e && strcmp(e, lines[i]) == 0);
    ctxdb_free(e);
    free(id);
  }

  /* Again: everything is skipped, nothing changes. */
  {
    char *before = snapshot(db2);
    out = SENT;
    CHECK_RC(ctxdb_import(db2, exp1, strlen(exp1), &out, NULL), CTXDB_OK);
    if (out == SENT) out = NULL;
    CHECK(jnum(out, "imported") == 0 && jnum(out, "skipped") == rows1);
    ctxdb_free(out);
    unchanged_at(F, "a repeated ctxdb_import", db2, before);
  }
  /* Appending after an import chains onto the imported head. */
  {
    char *e = OK_APPEND(db2, g_s1, Q("{'type':'Note','actor':'a','payload':{}}"));
    char *s = OK_GET(db1, g_s1);
    CHECK(jnum(e, "seq") == jnum(s, "last_seq") + 1);
    ctxdb_free(e);
    ctxdb_free(s);
    v = OK_VERIFY(db2, NULL);
    CHECK(jbool(v, "ok") == 1);
    ctxdb_free(v);
  }
  ctxdb_close(db2);

  /* In two parts: the second skips what the first brought. */
  db3 = OK_OPEN(scratch_path("import3.ctxdb"), NULL);
  {
    char *half = join_lines(lines, 0, nl / 2, -1);
    out = SENT;
    CHECK_RC(ctxdb_import(db3, half, strlen(half), &out, &n), CTXDB_OK);
    if (out == SENT) out = NULL;
    CHECK(jnum(out, "imported") == nl / 2 && jnum(out, "skipped") == 0);
    ctxdb_free(out);
    out = SENT;
    CHECK_RC(ctxdb_import(db3, exp1, strlen(exp1), &out, &n), CTXDB_OK);
    if (out == SENT) out = NULL;
    CHECK(jnum(out, "imported") == nl - nl / 2 && jnum(out, "skipped") == nl / 2);
    ctxdb_free(out);
    exp = export_all(db3, &rows);
    CHECK(exp && strcmp(exp, exp1) == 0);
    free(exp);
    free(half);
  }
  ctxdb_close(db3);

  /* Bad streams change nothing. */
  db4 = OK_OPEN(scratch_path("import4.ctxdb"), NULL);
  if (nl >= 3) {
    char *bad = join_lines(lines, 0, nl, -1), *p;
    /* A payload that does not match its hash, on line 2. */
    p = strstr(bad, "/tmp/w"); /* in line 2: the SessionStarted of ses_host_2 */
    if (CHECK(p != NULL && strchr(bad, '\n') < p && strchr(strchr(bad, '\n') + 1, '\n') > p)) {
      p[5] = 'v';
      IMPORT_FAILS(db4, bad, CTXDB_CORRUPT, NULL, 2);
    }
    free(bad);
    /* A hash that is not the one this database computes, on line 3. */
    bad = join_lines(lines, 0, nl, -1);
    p = strstr(bad, "\n");
    p = p ? strstr(p + 1, "\n") : NULL;
    p = p ? strstr(p, "\"hash\":\"") : NULL;
    if (CHECK(p != NULL)) {
      p[8] = p[8] == '0' ? '1' : '0';
      IMPORT_FAILS(db4, bad, CTXDB_CORRUPT, NULL, 3);
    }
    free(bad);
    /* A missing first event: the next event of that session has the wrong
     * seq and prev_hash. */
    {
      char *s1id = jstr(lines[0], "session_id");
      int first_of_s1 = -1;
      for (i = 1; i < nl && first_of_s1 < 0; ++i)
        if (jstr_eq(lines[i], "session_id", s1id)) first_of_s1 = i;
      bad = join_lines(lines, 0, nl, 0);
      /* Its seq and prev_hash do not follow; its session is also unknown. */
      if (CHECK(first_of_s1 > 0))
        IMPORT_FAILS(db4, bad, OR_CODE(CTXDB_CORRUPT, CTXDB_NOT_FOUND), NULL, first_of_s1);
      free(bad);
      free(s1id);
    }
    /* A missing middle event (s1's seq 3): seq 4 does not follow seq 2. */
    {
      char *s1id = jstr(lines[0], "session_id");
      int idx3 = -1, idx4 = -1;
      for (i = 0; i < nl; ++i) {
        if (!jstr_eq(lines[i], "session_id", s1id)) continue;
        if (jnum(lines[i], "seq") == 3) idx3 = i;
        if (jnum(lines[i], "seq") == 4) idx4 = i;
      }
      if (CHECK(idx3 > 0 && idx4 > idx3)) {
        bad = join_lines(lines, 0, nl, idx3);
        /* idx4 is 0-based in the full stream; one line before it is gone. */
        IMPORT_FAILS(db4, bad, CTXDB_CORRUPT, NULL, idx4);
        free(bad);
      }
      free(s1id);
    }
    /* Malformed line 2. */
    {
      size_t k = strlen(lines[0]) + strlen(lines[1]) + strlen(lines[2]) + 64;
      bad = (char *)malloc(k);
      if (!bad) exit(2);
      snprintf(bad, k, "%s\n{\"id\":\n%s\n", lines[0], lines[1]);
      IMPORT_FAILS(db4, bad, CTXDB_INVALID_JSON, NULL, 2);
      /* A host-format event (no seq, no hashes) on line 1. */
      snprintf(bad, k, "%s\n", Q("{'type':'Note','actor':'a','payload':{}}"));
      IMPORT_FAILS(db4, bad, CTXDB_INVALID_ARG, NULL, 1);
      snprintf(bad, k, "%s\n\xff\n", lines[0]);
      IMPORT_FAILS(db4, bad, CTXDB_INVALID_UTF8, NULL, 2);
      free(bad);
    }
    exp = export_all(db4, &rows);
    CHECK(exp && rows == 0);
    free(exp);
  }
  /* NULLs. */
  import_fails_at(F, NULL, exp1, strlen(exp1), 0, CTXDB_MISUSE, NULL, 0);
  import_fails_at(F, db4, NULL, 10, 0, CTXDB_MISUSE, NULL, 0);
  import_fails_at(F, db4, exp1, strlen(exp1), 1, CTXDB_MISUSE, NULL, 0);
  ctxdb_close(db4);

  for (i = 0; i < nl; ++i) free(lines[i]);
  free(lines);
  free(exp1);
}

/* ===========================================================================
 * read-only and closed handles
 * ======================================================================== */

static void test_read_only(const char *path, ctxdb_db *rw) {
  ctxdb_db *ro = OK_OPEN(path, Q("{'read_only':true}"));
  char *a, *b, *v;
  int ra, rb;
  char ev[64];
  snprintf(ev, sizeof ev, "%s", Q("{'type':'Note','actor':'a','payload':{}}"));
  if (!ro) return;
  a = export_all(rw, &ra);
  b = export_all(ro, &rb);
  CHECK(a && b && ra == rb && strcmp(a, b) == 0);
  free(a);
  free(b);
  v = OK_VERIFY(ro, NULL);
  CHECK(jbool(v, "ok") == 1);
  ctxdb_free(v);
  /* An anchor of a read-only handle is the writer's. */
  {
    size_t n = 0;
    CHECK_RC(ctxdb_anchor(ro, NULL, 0, &a, &n), CTXDB_OK);
    CHECK_RC(ctxdb_anchor(rw, NULL, 0, &b, &n), CTXDB_OK);
    CHECK(a && b && strcmp(a, b) == 0);
    ctxdb_free(a);
    ctxdb_free(b);
  }
  CREATE_FAILS(ro, Q("{'payload':{'agent_id':'ro'}}"), CTXDB_READONLY, NULL);
  APPEND_FAILS(ro, g_s1, ev, CTXDB_READONLY, NULL);
  BATCH_FAILS(ro, g_s1, ev, CTXDB_READONLY, NULL, 0);
  /* An import that would add events. */
  {
    ctxdb_db *src = OK_OPEN(scratch_path("ro_src.ctxdb"), NULL);
    char *s = OK_CREATE(src, Q("{'payload':{'agent_id':'src'}}"));
    ctxdb_free(s);
    a = export_all(src, &ra);
    CHECK(a && ra == 1);
    if (a) IMPORT_FAILS(ro, a, CTXDB_READONLY, NULL, 0);
    free(a);
    ctxdb_close(src);
  }
  CHECK_RC(ctxdb_close(ro), CTXDB_OK);
}

static void test_closed_handle(const char *path) {
  ctxdb_db *h = OK_OPEN(path, NULL);
  ctxdb_iter *it = NULL;
  char ev[64], cr[64];
  snprintf(ev, sizeof ev, "%s", Q("{'type':'Note','actor':'a','payload':{}}"));
  snprintf(cr, sizeof cr, "%s", Q("{'payload':{'agent_id':'a'}}"));
  if (!h) return;
  /* An open iterator is freed by close (LeakSanitizer would notice). */
  CHECK_RC(ctxdb_events_iter(h, NULL, 0, 0, -1, &it), CTXDB_OK);
  CHECK_RC(ctxdb_close(h), CTXDB_OK);
  g_closed = h;

  /* No handle is opened below, so the address cannot be reused. */
  create_fails_at(F, h, cr, strlen(cr), 0, CTXDB_MISUSE, NULL);
  read_fails_at(F, "ctxdb_session_get", ctxdb_session_get, h, g_s1, strlen(g_s1), 0, CTXDB_MISUSE,
                NULL);
  list_fails_at(F, h, 0, CTXDB_MISUSE);
  append_fails_at(F, h, g_s1, strlen(g_s1), ev, strlen(ev), 0, CTXDB_MISUSE, NULL);
  batch_fails_at(F, h, g_s1, strlen(g_s1), ev, strlen(ev), 0, CTXDB_MISUSE, NULL, 0);
  read_fails_at(F, "ctxdb_event_get", ctxdb_event_get, h, g_started1, strlen(g_started1), 0,
                CTXDB_MISUSE, NULL);
  iter_fails_at(F, h, NULL, 0, 0, CTXDB_MISUSE);
  iter_fails_at(F, h, g_s1, strlen(g_s1), 0, CTXDB_MISUSE);
  read_fails_at(F, "ctxdb_verify", ctxdb_verify, h, NULL, 0, 0, CTXDB_MISUSE, NULL);
  read_fails_at(F, "ctxdb_rebuild", ctxdb_rebuild, h, NULL, 0, 0, CTXDB_MISUSE, NULL);
  read_fails_at(F, "ctxdb_verify_with", ctxdb_verify_with, h, NULL, 0, 0, CTXDB_MISUSE, NULL);
  read_fails_at(F, "ctxdb_anchor", ctxdb_anchor, h, NULL, 0, 0, CTXDB_MISUSE, NULL);
  read_fails_at(F, "ctxdb_optimize", ctxdb_optimize, h, NULL, 0, 0, CTXDB_MISUSE, NULL);
  write_fails_at(F, "ctxdb_branch_fork", ctxdb_branch_fork, h, g_s1, strlen(g_s1), ev, strlen(ev),
                 0, CTXDB_MISUSE, NULL);
  read_fails_at(F, "ctxdb_branch_list", ctxdb_branch_list, h, g_s1, strlen(g_s1), 0, CTXDB_MISUSE,
                NULL);
  read_fails_at(F, "ctxdb_event_children", ctxdb_event_children, h, g_started1, strlen(g_started1),
                0, CTXDB_MISUSE, NULL);
  path_fails_at(F, h, g_s1, strlen(g_s1), NULL, 0, 0, CTXDB_MISUSE, NULL);
  write_fails_at(F, "ctxdb_state_get", ctxdb_state_get, h, g_s1, strlen(g_s1), NULL, 0, 0,
                 CTXDB_MISUSE, NULL);
  read_fails_at(F, "ctxdb_stats_get", ctxdb_stats_get, h, g_s1, strlen(g_s1), 0, CTXDB_MISUSE,
                NULL);
  read_fails_at(F, "ctxdb_stats_get", ctxdb_stats_get, h, NULL, 0, 0, CTXDB_MISUSE, NULL);
  {
    int v;
    for (v = 0; v < 3; ++v) {
      view_fails_at(F, v, h, g_s1, strlen(g_s1), NULL, 0, 0, CTXDB_MISUSE, NULL);
      view_fails_at(F, v, h, g_s1, strlen(g_s1), "main", 4, 0, CTXDB_MISUSE, NULL);
    }
  }
  import_fails_at(F, h, ev, strlen(ev), 0, CTXDB_MISUSE, NULL, 0);
  {
    int rc = ctxdb_close(h);
    failed_at(F, "ctxdb_close (twice)", NULL, rc, CTXDB_MISUSE, NULL);
  }
  g_closed = NULL;
}

/* ctxdb_rebuild: a sound database replays identically; bad options and
 * handles fail and change nothing (the export is compared). */
static void test_rebuild(ctxdb_db *db) {
  const char *ro = Q("{'check':true}");
  int rows;
  char *out = NULL, *before = export_all(db, &rows), *after;
  size_t n = 0;
  CHECK_RC(ctxdb_rebuild(db, ro, strlen(ro), &out, &n), CTXDB_OK);
  CHECK(out && jbool(out, "identical") == 1);
  CHECK(out && strstr(out, "\"table\":\"sessions\"") != NULL);
  CHECK(out && n == strlen(out));
  ctxdb_free(out);
  CHECK_RC(ctxdb_rebuild(db, NULL, 0, &out, &n), CTXDB_OK); /* no options */
  ctxdb_free(out);

  read_fails_at(F, "ctxdb_rebuild", ctxdb_rebuild, NULL, ro, strlen(ro), 0, CTXDB_MISUSE, NULL);
  read_fails_at(F, "ctxdb_rebuild", ctxdb_rebuild, db, ro, strlen(ro), 1, CTXDB_MISUSE, NULL);
  read_fails_at(F, "ctxdb_rebuild", ctxdb_rebuild, db, NULL, 3, 0, CTXDB_MISUSE, NULL);
  read_fails_at(F, "ctxdb_rebuild", ctxdb_rebuild, db, "{", 1, 0, CTXDB_INVALID_JSON, NULL);
  read_fails_at(F, "ctxdb_rebuild", ctxdb_rebuild, db, "[]", 2, 0, CTXDB_INVALID_ARG, NULL);
  read_fails_at(F, "ctxdb_rebuild", ctxdb_rebuild, db, Q("{'chek':true}"), 13, 0, CTXDB_INVALID_ARG,
                "chek");
  read_fails_at(F, "ctxdb_rebuild", ctxdb_rebuild, db, Q("{'check':1}"), 11, 0, CTXDB_INVALID_ARG,
                "check");
  read_fails_at(F, "ctxdb_rebuild", ctxdb_rebuild, db, "{\"\xff\":1}", 7, 0, CTXDB_INVALID_UTF8,
                NULL);
  after = export_all(db, &rows);
  CHECK(before && after && strcmp(before, after) == 0);
  free(before);
  free(after);
}

/* ctxdb_verify_with and ctxdb_anchor: options and an anchor round-trip,
 * bad input fails naming it and changes nothing. */
static void test_verify_with_and_anchor(ctxdb_db *db) {
  const char *full = Q("{'artifacts':'full'}");
  char *out = NULL, *anchor = NULL, *opts, *before, *after, *a;
  size_t n = 0, len;
  int rows;
  before = export_all(db, &rows);
  CHECK_RC(ctxdb_verify_with(db, full, strlen(full), &out, &n), CTXDB_OK);
  CHECK(out && jbool(out, "ok") == 1 && n == strlen(out));
  a = out ? jraw(out, "artifacts") : NULL;
  CHECK(a && jstr_eq(a, "mode", "full"));
  free(a);
  ctxdb_free(out);
  CHECK_RC(ctxdb_verify_with(db, NULL, 0, &out, &n), CTXDB_OK); /* ctxdb_verify of all */
  a = out ? jraw(out, "artifacts") : NULL;
  CHECK(a && jstr_eq(a, "mode", "quick"));
  free(a);
  ctxdb_free(out);

  CHECK_RC(ctxdb_anchor(db, NULL, 0, &anchor, &n), CTXDB_OK);
  CHECK(anchor && jstr_eq(anchor, "format", "ctxdb.anchor.v1"));
  CHECK(anchor && jnum(anchor, "events") == rows);
  if (anchor) {
    len = strlen(anchor) + 16;
    opts = (char *)malloc(len);
    snprintf(opts, len, "{\"anchor\":%s}", anchor);
    CHECK_RC(ctxdb_verify_with(db, opts, strlen(opts), &out, &n), CTXDB_OK);
    a = out ? jraw(out, "anchor") : NULL;
    CHECK(a && jbool(a, "ok") == 1 && jnum(a, "events") == rows);
    free(a);
    ctxdb_free(out);
    /* A root that is not the file's: a failed check, not an error. */
    memcpy(strstr(opts, "\"root\":\"") + 8, "00000000", 8);
    CHECK_RC(ctxdb_verify_with(db, opts, strlen(opts), &out, &n), CTXDB_OK);
    CHECK(out && jbool(out, "ok") == 0);
    ctxdb_free(out);
    free(opts);
  }
  ctxdb_free(anchor);

  read_fails_at(F, "ctxdb_verify_with", ctxdb_verify_with, NULL, full, strlen(full), 0,
                CTXDB_MISUSE, NULL);
  read_fails_at(F, "ctxdb_verify_with", ctxdb_verify_with, db, full, strlen(full), 1, CTXDB_MISUSE,
                NULL);
  read_fails_at(F, "ctxdb_verify_with", ctxdb_verify_with, db, NULL, 3, 0, CTXDB_MISUSE, NULL);
  read_fails_at(F, "ctxdb_verify_with", ctxdb_verify_with, db, "{", 1, 0, CTXDB_INVALID_JSON, NULL);
  read_fails_at(F, "ctxdb_verify_with", ctxdb_verify_with, db, "\"x\"", 3, 0, CTXDB_INVALID_ARG,
                NULL);
  read_fails_at(F, "ctxdb_verify_with", ctxdb_verify_with, db, Q("{'artifacts':'all'}"), 19, 0,
                CTXDB_INVALID_ARG, "artifacts");
  read_fails_at(F, "ctxdb_verify_with", ctxdb_verify_with, db, Q("{'anchor':{}}"), 13, 0,
                CTXDB_INVALID_ARG, "anchor");
  read_fails_at(F, "ctxdb_verify_with", ctxdb_verify_with, db, Q("{'session_id':'ses_nope'}"), 25,
                0, CTXDB_NOT_FOUND, "ses_nope");
  read_fails_at(F, "ctxdb_verify_with", ctxdb_verify_with, db, "{\"\xff\":1}", 7, 0,
                CTXDB_INVALID_UTF8, NULL);
  read_fails_at(F, "ctxdb_anchor", ctxdb_anchor, NULL, NULL, 0, 0, CTXDB_MISUSE, NULL);
  read_fails_at(F, "ctxdb_anchor", ctxdb_anchor, db, NULL, 0, 1, CTXDB_MISUSE, NULL);
  read_fails_at(F, "ctxdb_anchor", ctxdb_anchor, db, NULL, 2, 0, CTXDB_MISUSE, NULL);
  read_fails_at(F, "ctxdb_anchor", ctxdb_anchor, db, "{", 1, 0, CTXDB_INVALID_JSON, NULL);
  read_fails_at(F, "ctxdb_anchor", ctxdb_anchor, db, Q("{'x':1}"), 7, 0, CTXDB_INVALID_ARG, "x");
  read_fails_at(F, "ctxdb_anchor", ctxdb_anchor, db, "{\"\xff\":1}", 7, 0, CTXDB_INVALID_UTF8,
                NULL);
  after = export_all(db, &rows);
  CHECK(before && after && strcmp(before, after) == 0);
  free(before);
  free(after);
}

/* ===========================================================================
 * files that are not ctxdb databases, and a newer schema
 * ======================================================================== */

static long long sql_int(const char *path, const char *sql) {
  sqlite3 *s = NULL;
  sqlite3_stmt *st = NULL;
  long long v = LLONG_MIN;
  if (sqlite3_open_v2(path, &s, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
      sqlite3_prepare_v2(s, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
    v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(s);
  return v;
}

/* Opens path (default and read-only) expecting `want`; the file's bytes
 * must not change. */
static void open_refused_at(const char *file, int line, const char *path, int want, const char *m1,
                            long long n1, long long n2) {
  size_t n0 = 0, n = 0;
  char *before = file_read(path, &n0), *after;
  const char *configs[2];
  int i;
  configs[0] = NULL;
  configs[1] = Q("{'read_only':true}");
  check_at(before != NULL, file, line, "the test file is readable");
  for (i = 0; i < 2; ++i) {
    ctxdb_db *db = SENT_DB;
    int rc = ctxdb_open(path, configs[i], slen(configs[i]), &db);
    failed_at(file, line, i ? "ctxdb_open (read_only)" : "ctxdb_open", NULL, rc, want, m1);
    check_at(db == NULL, file, line, "a failed ctxdb_open sets *out_db = NULL");
    if (rc == CTXDB_OK && db != SENT_DB) ctxdb_close(db);
    if (n1 >= 0) {
      const char *m = ctxdb_errmsg(NULL);
      char desc[600];
      snprintf(desc, sizeof desc, "the message names versions %lld and %lld: %s", n1, n2,
               check_msg_(m));
      check_at(mentions_number(m, n1) && mentions_number(m, n2), file, line, desc);
    }
    after = file_read(path, &n);
    check_at(before && after && n == n0 && memcmp(before, after, n) == 0, file, line,
             "the refused file's bytes are unchanged");
    free(after);
  }
  free(before);
}

static void test_not_a_db(void) {
  const char *p;
  unsigned char junk[8192];
  unsigned x = 12345u;
  size_t i;
  ctxdb_db *db;
  long long app_id, version;

  /* Random bytes. */
  p = scratch_path("random.bin");
  for (i = 0; i < sizeof junk; ++i) {
    x = x * 1103515245u + 12345u;
    junk[i] = (unsigned char)(x >> 16);
  }
  CHECK(file_write(p, junk, sizeof junk));
  open_refused_at(F, p, CTXDB_NOTADB, NULL, -1, -1);

  /* Text. */
  p = scratch_path("notes.txt");
  CHECK(file_write(p, "hello, world\n", 13));
  open_refused_at(F, p, CTXDB_NOTADB, NULL, -1, -1);

  /* Another application's SQLite database. */
  p = scratch_path("other.sqlite");
  CHECK(sql_exec(p, "CREATE TABLE t(x); INSERT INTO t VALUES (1), (2);"));
  open_refused_at(F, p, CTXDB_NOTADB, NULL, -1, -1);
  p = scratch_path("other2.sqlite");
  CHECK(sql_exec(p, "PRAGMA application_id = 1234567; PRAGMA user_version = 1;"
                    "CREATE TABLE events(x);"));
  open_refused_at(F, p, CTXDB_NOTADB, NULL, -1, -1);

  /* A ctxdb file from a newer ctxdb. */
  p = scratch_path("newer.ctxdb");
  db = OK_OPEN(p, NULL);
  {
    char *s = OK_CREATE(db, Q("{'payload':{'agent_id':'a'}}"));
    ctxdb_free(s);
  }
  CHECK_RC(ctxdb_close(db), CTXDB_OK);
  app_id = sql_int(p, "PRAGMA application_id");
  version = sql_int(p, "PRAGMA user_version");
  CHECK(app_id != 0 && app_id != LLONG_MIN);
  CHECK(version >= 1 && version != LLONG_MIN && version < 4242);
  CHECK(sql_exec(p, "PRAGMA user_version = 4242"));
  CHECK(sql_int(p, "PRAGMA user_version") == 4242);
  open_refused_at(F, p, CTXDB_SCHEMA, NULL, version, 4242);
  /* The same file with ctxdb's own version opens again. */
  {
    char sql[64];
    snprintf(sql, sizeof sql, "PRAGMA user_version = %lld", version);
    CHECK(sql_exec(p, sql));
    db = OK_OPEN(p, NULL);
    CHECK_RC(ctxdb_close(db), CTXDB_OK);
  }
}

/* ===========================================================================
 * verify can say no
 * ======================================================================== */

static void test_verify_detects_tampering(void) {
  const char *p = scratch_path("tamper.ctxdb");
  const char *p2 = scratch_path("truncate.ctxdb");
  ctxdb_db *db;
  char *s, *sid, *e2id = NULL, *v, *fb;
  int i;
  const char *paths[2];
  paths[0] = p;
  paths[1] = p2;

  for (i = 0; i < 2; ++i) {
    int k;
    db = OK_OPEN(paths[i], NULL);
    if (!db) return;
    s = OK_CREATE(db, Q("{'id':'ses_t','payload':{'agent_id':'a'}}"));
    ctxdb_free(s);
    for (k = 0; k < 3; ++k) {
      char *e = OK_APPEND(db, "ses_t",
                          Q("{'type':'UserPromptSubmitted','actor':'user',"
                            "'payload':{'text':'original'}}"));
      if (k == 0 && i == 0) e2id = jstr(e, "id");
      ctxdb_free(e);
    }
    v = OK_VERIFY(db, NULL);
    CHECK(jbool(v, "ok") == 1);
    ctxdb_free(v);
    CHECK_RC(ctxdb_close(db), CTXDB_OK);
  }

  /* A payload rewritten behind ctxdb's back. */
  CHECK(sql_exec(p, "DROP TRIGGER IF EXISTS events_no_update;"
                    "UPDATE events SET payload = '{\"text\":\"forged\"}' "
                    "WHERE session_no = (SELECT session_no FROM chains WHERE session_id = 'ses_t') "
                    "AND seq = 2;"));
  db = OK_OPEN(p, NULL);
  if (db) {
    v = OK_VERIFY(db, NULL);
    CHECK(jbool(v, "ok") == 0);
    fb = jraw(v, "first_broken");
    CHECK(fb != NULL);
    CHECK(jstr_eq(fb, "session_id", "ses_t"));
    CHECK(jnum(fb, "seq") == 2);
    CHECK(e2id && jstr_eq(fb, "event_id", e2id));
    sid = jstr(fb, "problem");
    CHECK(sid && sid[0]);
    free(sid);
    free(fb);
    ctxdb_free(v);
    v = OK_VERIFY(db, "ses_t");
    CHECK(jbool(v, "ok") == 0);
    ctxdb_free(v);
    ctxdb_close(db);
  }

  /* A deleted tail: the chain alone looks fine, the head does not. */
  CHECK(sql_exec(p2, "DROP TRIGGER IF EXISTS events_no_delete;"
                     "DELETE FROM events WHERE session_no = (SELECT session_no FROM chains WHERE "
                     "session_id = 'ses_t') AND seq = 4;"));
  db = OK_OPEN(p2, NULL);
  if (db) {
    v = OK_VERIFY(db, NULL);
    CHECK(jbool(v, "ok") == 0);
    fb = jraw(v, "first_broken");
    CHECK(fb && jstr_eq(fb, "session_id", "ses_t"));
    free(fb);
    ctxdb_free(v);
    ctxdb_close(db);
  }
  free(e2id);
}

/* ===========================================================================
 * the append-only triggers, seen from SQL
 * ======================================================================== */

static void test_log_is_append_only(const char *path) {
  sqlite3 *s = NULL;
  if (sqlite3_open(path, &s) != SQLITE_OK) {
    CHECK(!"sqlite3_open");
    return;
  }
  sqlite3_busy_timeout(s, 5000);
  CHECK(sqlite3_exec(s, "UPDATE events SET payload = '{}' WHERE seq = 1", NULL, NULL, NULL) !=
        SQLITE_OK);
  CHECK(sqlite3_exec(s, "DELETE FROM events WHERE seq = 1", NULL, NULL, NULL) != SQLITE_OK);
  sqlite3_close(s);
}

/* Spill at append (DESIGN §4), configured through ctxdb_open: a result
 * larger than the threshold is stored with a preview and the artifact's id,
 * and the artifact holds the whole output. */
static void test_spill(void) {
  const char *p = scratch_path("spill.ctxdb");
  char raw[400], escaped[600], line[800];
  char *ev, *payload, *spill, *art, *output, *bytes;
  size_t n = 0, i;
  ctxdb_db *db = OK_OPEN(p, Q("{'spill':{'threshold_bytes':64,'preview_bytes':16,"
                              "'tools':{'make':{'policy':'tail'}}}}"));
  raw[0] = escaped[0] = '\0';
  for (i = 1; i <= 20; ++i) {
    snprintf(raw + strlen(raw), sizeof raw - strlen(raw), "step %u\n", (unsigned)i);
    snprintf(escaped + strlen(escaped), sizeof escaped - strlen(escaped), "step %u\\n",
             (unsigned)i);
  }
  ctxdb_free(OK_CREATE(db, Q("{'id':'sp','payload':{'agent_id':'a'}}")));
  ctxdb_free(OK_APPEND(db, "sp",
                       Q("{'type':'AssistantMessageCreated','actor':'assistant','payload':"
                         "{'content':[{'type':'tool_call','id':'k1','name':'make'}]}}")));
  snprintf(line, sizeof line,
           "{\"type\":\"ToolCallFinished\",\"actor\":\"tool\",\"payload\":"
           "{\"tool_call_id\":\"k1\",\"output\":\"%s\"}}",
           escaped);
  ev = OK_APPEND(db, "sp", line);
  payload = jraw(ev, "payload");
  spill = jraw(payload, "spill");
  art = jstr(payload, "artifact_id");
  output = jstr(payload, "output");
  CHECK(jnum(payload, "output_bytes") == (int64_t)strlen(raw));
  CHECK(jnum(payload, "output_lines") == 20);
  CHECK(jstr_eq(spill, "policy", "tail") && jnum(spill, "omitted_lines") >= 18);
  CHECK(art && strncmp(art, "art_", 4) == 0 && strlen(art) == 68);
  /* The tail, after a marker naming the artifact. */
  CHECK(output && strstr(output, "step 20\\n") && !strstr(output, "step 1\\n"));
  CHECK(output && art && strstr(output, art));
  bytes = art ? ok_art_read_at(F, db, art, 0, -1, &n) : NULL;
  CHECK(bytes && n == strlen(raw) && memcmp(bytes, raw, n) == 0);
  ctxdb_free(bytes);
  {
    char *v = OK_VERIFY(db, "sp");
    CHECK(jbool(v, "ok") == 1);
    ctxdb_free(v);
  }
  free(output);
  free(art);
  free(spill);
  free(payload);
  ctxdb_free(ev);
  CHECK_RC(ctxdb_close(db), CTXDB_OK);
}

/* ===========================================================================
 * the context compiler
 * ======================================================================== */

#define CS "ses_c"
#define CREQ(extra) Q("{'session_id':'ses_c','max_tokens':4000" extra "}")

static char *ok_compile_at(const char *file, int line, ctxdb_db *db, const char *request) {
  char *out = SENT;
  size_t n = SENT_LEN;
  int rc = ctxdb_compile(db, request, slen(request), &out, &n);
  return ok_buf_at(file, line, "ctxdb_compile", rc, out, n);
}
#define OK_COMPILE(db, request) ok_compile_at(F, db, request)

static char *ok_convert_at(const char *file, int line, ctxdb_db *db, const char *bundle,
                           const char *format) {
  char *out = SENT;
  size_t n = SENT_LEN;
  int rc = ctxdb_bundle_convert(db, bundle, slen(bundle), format, slen(format), &out, &n);
  return ok_buf_at(file, line, "ctxdb_bundle_convert", rc, out, n);
}
#define OK_CONVERT(db, bundle, format) ok_convert_at(F, db, bundle, format)

/* ctxdb_compile with (request, len) that must fail with `want`, leaving the
 * database unchanged. */
static void compile_fails_at(const char *file, int line, ctxdb_db *db, const char *request,
                             size_t len, int null_out, int want, const char *mention) {
  char *before = snapshot(db), *out = SENT;
  size_t n = SENT_LEN;
  int rc = ctxdb_compile(db, request, len, null_out ? NULL : &out, null_out ? NULL : &n);
  failed_at(file, line, "ctxdb_compile", db, rc, want, mention);
  if (!null_out) cleared_at(file, line, "ctxdb_compile", out, n);
  if (rc == CTXDB_OK && !null_out) ctxdb_free(out);
  unchanged_at(file, line, "a failed ctxdb_compile", db, before);
}
#define COMPILE_FAILS(db, request, want, mention)                                                  \
  compile_fails_at(F, db, request, slen(request), 0, want, mention)

static void convert_fails_at(const char *file, int line, ctxdb_db *db, const char *bundle,
                             size_t len, const char *format, size_t format_len, int null_out,
                             int want, const char *mention) {
  char *out = SENT;
  size_t n = SENT_LEN;
  int rc = ctxdb_bundle_convert(db, bundle, len, format, format_len, null_out ? NULL : &out,
                                null_out ? NULL : &n);
  failed_at(file, line, "ctxdb_bundle_convert", db, rc, want, mention);
  if (!null_out) cleared_at(file, line, "ctxdb_bundle_convert", out, n);
  if (rc == CTXDB_OK && !null_out) ctxdb_free(out);
}
#define CONVERT_FAILS(db, bundle, format, want, mention)                                           \
  convert_fails_at(F, db, bundle, slen(bundle), format, slen(format), 0, want, mention)

/* A host token counter: one token per byte, or a failure on demand. */
struct host_counter {
  ctxdb_db *db;   /* the handle it serves, for the re-entrance check */
  int calls;      /* how often it was called */
  int fail_rc;    /* returned when nonzero */
  int negative;   /* reports -1 tokens */
  int reenter;    /* calls ctxdb_session_list on db once */
  int reenter_rc; /* what that call returned */
};

static int count_bytes(void *user_data, const char *text, size_t len, int64_t *out_tokens) {
  struct host_counter *c = (struct host_counter *)user_data;
  ++c->calls;
  if (!text) return CTXDB_MISUSE; /* never NULL, even for "" */
  if (c->reenter) {
    char *out = NULL;
    size_t n = 0;
    c->reenter = 0;
    c->reenter_rc = ctxdb_session_list(c->db, &out, &n);
    ctxdb_free(out);
  }
  if (c->fail_rc) return c->fail_rc;
  *out_tokens = c->negative ? -1 : (int64_t)len;
  return 0;
}

/* A bundle holding one image block of `artifact_id` (a JSON string). */
static char *image_bundle(const char *artifact_id) {
  static const char *fmt =
      "{'format':'canonical','session_id':'s','branch_id':'b','leaf_event_id':null,"
      "'token_counter':'approx-v2','budget':{'max_tokens':9,'reserved_output_tokens':0,"
      "'available':9,'used':0,'free':9},'tokens_by_kind':{},'stable_prefix_tokens':0,"
      "'segments':[{'id':'x','kind':'message','priority':1,'role':'user','content':"
      "[{'type':'text','text':'look'},{'type':'image','artifact_id':%s,'mime_type':'image/png'}],"
      "'tokens':9,'reason':'r','sources':[{'type':'event','id':'e'}],'hash':'h'}],"
      "'excluded':[],'redactions':[],'hash':'h'}";
  char *quoted = malloc(strlen(fmt) + 1), *out = malloc(strlen(fmt) + strlen(artifact_id) + 1);
  strcpy(quoted, Q(fmt));
  sprintf(out, quoted, artifact_id);
  free(quoted);
  return out;
}

/* ctxdb_bundle_convert reads an image's bytes from the database's artifacts
 * (base64 in the provider's own shape); an unknown artifact is NOT_FOUND
 * naming it, and a failed conversion writes nothing. */
static void test_convert_images(ctxdb_db *db) {
  static const char png[] = "\x89PNG\r\n\x1a\nabcd";
  char *art = OK_PUT(db, png, sizeof png - 1, NULL), *id = art ? jraw(art, "id") : NULL;
  char *bundle = id ? image_bundle(id) : NULL, *conv;
  char *missing = image_bundle(Q("'art_00000000000000000000000000000000000000000000000000000000"
                                 "00000000'"));
  if (bundle) {
    conv = OK_CONVERT(db, bundle, "anthropic.messages");
    CHECK(conv && strstr(conv, Q("'source':{'type':'base64','media_type':'image/png',"
                                 "'data':'iVBORw0KGgphYmNk'}")));
    ctxdb_free(conv);
    conv = OK_CONVERT(db, bundle, "openai.chat");
    CHECK(conv && strstr(conv, "data:image/png;base64,iVBORw0KGgphYmNk"));
    ctxdb_free(conv);
  }
  CONVERT_FAILS(db, missing, "gemini.generate_content", CTXDB_NOT_FOUND, "art_0000");
  free(missing);
  free(bundle);
  free(id);
  ctxdb_free(art);
}

/* The tokens and token_counter of the session's last message. */
static int64_t last_message_tokens(ctxdb_db *db, const char *sid, char **counter) {
  char *out = NULL, **items = NULL;
  size_t n = 0;
  int count;
  int64_t tokens = INT64_MIN;
  *counter = NULL;
  if (ctxdb_messages_list(db, sid, strlen(sid), NULL, 0, &out, &n) != CTXDB_OK) return tokens;
  count = jarray(out, &items);
  if (count > 0) {
    tokens = jnum(items[count - 1], "tokens");
    *counter = jstr(items[count - 1], "token_counter");
  }
  if (count > 0) jfree_items(items, count);
  ctxdb_free(out);
  return tokens;
}

static void test_compile_happy(ctxdb_db *db) {
  char *a, *b, *before, *chat, *conv, *same, *budget, *segments, *msgs;
  ctxdb_free(OK_CREATE(db, Q("{'id':'ses_c','event_id':'c0','payload':{'agent_id':'a'}}")));
  ctxdb_free(OK_APPEND(db, CS,
                       Q("{'type':'UserPromptSubmitted','actor':'user','id':'c1',"
                         "'payload':{'text':'fix the failing test'}}")));
  ctxdb_free(OK_APPEND(db, CS,
                       Q("{'type':'AssistantMessageCreated','actor':'assistant','id':'c2',"
                         "'payload':{'content':[{'type':'text','text':'running it'},"
                         "{'type':'tool_call','id':'k1','name':'bash','args':{'cmd':'make'}}]}}")));
  ctxdb_free(OK_APPEND(db, CS,
                       Q("{'type':'ToolCallFinished','actor':'tool','id':'c3',"
                         "'payload':{'tool_call_id':'k1','output':'1 failed'}}")));

  before = snapshot(db);
  a = OK_COMPILE(db, CREQ(",'instructions':[{'kind':'system','text':'be brief'}]"));
  b = OK_COMPILE(db, CREQ(",'instructions':[{'kind':'system','text':'be brief'}]"));
  CHECK(a && b && strcmp(a, b) == 0); /* deterministic */
  unchanged_at(F, "a compile without record", db, before);
  CHECK(jstr_eq(a, "format", "canonical") && jstr_eq(a, "session_id", CS));
  CHECK(jstr_eq(a, "branch_id", "c0") && jstr_eq(a, "leaf_event_id", "c3"));
  CHECK(jstr_eq(a, "token_counter", "approx-v2"));
  CHECK(jstr_prefix(a, "hash", "sha256:"));
  budget = jraw(a, "budget");
  CHECK(jnum(budget, "max_tokens") == 4000 && jnum(budget, "available") == 4000);
  CHECK(jnum(budget, "used") > 0 && jnum(budget, "used") + jnum(budget, "free") == 4000);
  segments = jraw(a, "segments");
  CHECK(segments && strstr(segments, Q("'id':'instructions:system-0'")) &&
        strstr(segments, Q("'id':'msg:c1'")) && strstr(segments, Q("'id':'msg:c3'")));
  free(segments);
  free(budget);

  /* A provider format, through the request or through a conversion. */
  chat = OK_COMPILE(db, CREQ(",'instructions':[{'kind':'system','text':'be brief'}],"
                             "'format':'openai.chat'"));
  conv = a ? OK_CONVERT(db, a, "openai.chat") : NULL;
  CHECK(chat && conv && strcmp(chat, conv) == 0);
  msgs = jraw(chat, "messages");
  CHECK(msgs && strstr(msgs, Q("'role':'system','content':'be brief'")) &&
        strstr(msgs, Q("'tool_call_id':'k1'")));
  free(msgs);
  ctxdb_free(conv);
  conv = a ? OK_CONVERT(db, a, "anthropic.messages") : NULL;
  CHECK(conv && strstr(conv, Q("'type':'tool_use'")) && strstr(conv, "cache_control"));
  ctxdb_free(conv);
  conv = a ? OK_CONVERT(db, a, "openai.responses") : NULL;
  CHECK(conv && strstr(conv, Q("'type':'function_call_output'")));
  ctxdb_free(conv);
  same = a ? OK_CONVERT(db, a, "canonical") : NULL;
  CHECK(same && a && strcmp(same, a) == 0);
  ctxdb_free(same);
  ctxdb_free(chat);

  /* Branches and the past. */
  ctxdb_free(OK_FORK(db, CS, Q("{'event_id':'c1','name':'alt','id':'calt'}")));
  ctxdb_free(b);
  b = OK_COMPILE(db, CREQ(",'branch_id':'alt'"));
  CHECK(jstr_eq(b, "branch_id", "calt") && b && !strstr(b, Q("'id':'msg:c3'")));
  ctxdb_free(b);
  /* As of c2, the call k1 is still running: refused, naming it, unless the
     request gives its result. */
  COMPILE_FAILS(db, CREQ(",'leaf_event_id':'c2'"), CTXDB_CONFLICT, "'k1' (bash)");
  b = OK_COMPILE(db, CREQ(",'leaf_event_id':'c2','tool_results':[{'tool_call_id':'k1',"
                          "'output':'ok'}]"));
  CHECK(jstr_eq(b, "leaf_event_id", "c2") && b && !strstr(b, Q("'id':'msg:c3'")) &&
        strstr(b, Q("'id':'result:k1'")));
  ctxdb_free(b);
  /* A result for no running call, a malformed one, a bad policy value. */
  COMPILE_FAILS(db, CREQ(",'tool_results':[{'tool_call_id':'k1'}]"), CTXDB_INVALID_ARG,
                "tool_results[0]");
  COMPILE_FAILS(db, CREQ(",'tool_results':[{'output':'x'}]"), CTXDB_INVALID_ARG, "tool_call_id");
  COMPILE_FAILS(db, CREQ(",'tool_results':{}"), CTXDB_INVALID_ARG, "tool_results");
  COMPILE_FAILS(db, CREQ(",'continuation':'yes'"), CTXDB_INVALID_ARG, "continuation");
  COMPILE_FAILS(db, CREQ(",'policy':{'interrupted_calls':'keep'}"), CTXDB_INVALID_ARG,
                "interrupted_calls");

  /* record appends one ContextBuilt event at main's leaf. */
  {
    int rows0, rows1;
    char *e0 = rows_of(db, CS, 1, -1, &rows0), *e1, *built;
    b = OK_COMPILE(db, CREQ(",'record':true"));
    e1 = rows_of(db, CS, 1, -1, &rows1);
    CHECK(rows1 == rows0 + 1);
    built = e1 ? strstr(e1, "ContextBuilt") : NULL;
    CHECK(built != NULL);
    free(e0);
    free(e1);
    ctxdb_free(b);
  }
  ctxdb_free(a);
}

static void test_compile_bad_input(ctxdb_db *db, const char *path) {
  char *a, *conv, long_text[6000], req[6200];
  size_t i;
  const char *ok = CREQ("");
  char ok_req[200];
  snprintf(ok_req, sizeof ok_req, "%s", ok);

  /* NULL handle, NULL out, NULL request with a length. */
  compile_fails_at(F, NULL, ok_req, strlen(ok_req), 0, CTXDB_MISUSE, NULL);
  compile_fails_at(F, db, ok_req, strlen(ok_req), 1, CTXDB_MISUSE, "out");
  compile_fails_at(F, db, NULL, 5, 0, CTXDB_MISUSE, "request_json");
  /* Garbage, malformed JSON, invalid UTF-8, the schema. */
  compile_fails_at(F, db, NULL, 0, 0, CTXDB_INVALID_JSON, NULL);
  COMPILE_FAILS(db, "", CTXDB_INVALID_JSON, NULL);
  COMPILE_FAILS(db, "garbage", CTXDB_INVALID_JSON, NULL);
  COMPILE_FAILS(db, "{", CTXDB_INVALID_JSON, NULL);
  compile_fails_at(F, db, "\x01\x02\xff\x00zz", 6, 0, ANY_ERROR, NULL);
  COMPILE_FAILS(db, "{\"session_id\":\"ses_\xff\",\"max_tokens\":10}", CTXDB_INVALID_UTF8, NULL);
  COMPILE_FAILS(db, "[]", CTXDB_INVALID_ARG, NULL);
  COMPILE_FAILS(db, Q("{'session_id':'ses_c'}"), CTXDB_INVALID_ARG, "max_tokens");
  COMPILE_FAILS(db, CREQ(",'colour':'red'"), CTXDB_INVALID_ARG, "colour");
  COMPILE_FAILS(db, Q("{'session_id':'ses_c','max_tokens':0}"), CTXDB_INVALID_ARG, "max_tokens");
  COMPILE_FAILS(db, Q("{'session_id':'ses_c','max_tokens':'9'}"), CTXDB_INVALID_ARG, "max_tokens");
  COMPILE_FAILS(db, CREQ(",'reserved_output_tokens':4000"), CTXDB_INVALID_ARG, NULL);
  COMPILE_FAILS(db, CREQ(",'format':'gopher'"), CTXDB_INVALID_ARG, "format");
  COMPILE_FAILS(db, CREQ(",'branch_id':'main','leaf_event_id':'c1'"), CTXDB_INVALID_ARG, NULL);
  COMPILE_FAILS(db, CREQ(",'leaf_event_id':'c1','record':true"), CTXDB_INVALID_ARG, NULL);
  COMPILE_FAILS(db, CREQ(",'policy':{'redact':[{'name':'x','pattern':'('}]}"), CTXDB_INVALID_ARG,
                NULL);
  /* Unknown ids. */
  COMPILE_FAILS(db, Q("{'session_id':'ses_nope','max_tokens':10}"), CTXDB_NOT_FOUND, "ses_nope");
  COMPILE_FAILS(db, CREQ(",'branch_id':'nope'"), CTXDB_NOT_FOUND, "nope");
  COMPILE_FAILS(db, CREQ(",'leaf_event_id':'evt_nope'"), CTXDB_NOT_FOUND, "evt_nope");
  COMPILE_FAILS(db, CREQ(",'leaf_event_id':'evt_nope','record':true"), CTXDB_INVALID_ARG, NULL);
  /* P0 over the budget: both sizes in the message. */
  for (i = 0; i + 1 < sizeof long_text; ++i) long_text[i] = (i % 5 == 0) ? ' ' : 'x';
  long_text[sizeof long_text - 1] = '\0';
  snprintf(req, sizeof req,
           "{\"session_id\":\"ses_c\",\"max_tokens\":100,\"instructions\":"
           "[{\"kind\":\"system\",\"text\":\"%s\"}],\"record\":true}",
           long_text);
  COMPILE_FAILS(db, req, CTXDB_BUDGET, "only 100 are available");
  CHECK(strstr(ctxdb_errmsg(db), "needs ") != NULL);
  /* record on a read-only handle; a plain compile reads fine there. */
  {
    ctxdb_db *ro = OK_OPEN(path, Q("{'read_only':true}"));
    if (ro) {
      COMPILE_FAILS(ro, CREQ(",'record':true"), CTXDB_READONLY, NULL);
      a = OK_COMPILE(ro, ok_req);
      CHECK(jstr_eq(a, "session_id", CS));
      ctxdb_free(a);
      CHECK_RC(ctxdb_close(ro), CTXDB_OK);
    }
  }

  /* ctxdb_bundle_convert */
  a = OK_COMPILE(db, ok_req);
  if (a) {
    convert_fails_at(F, NULL, a, strlen(a), "openai.chat", 11, 0, CTXDB_MISUSE, NULL);
    convert_fails_at(F, db, a, strlen(a), "openai.chat", 11, 1, CTXDB_MISUSE, "out");
    convert_fails_at(F, db, NULL, 4, "openai.chat", 11, 0, CTXDB_MISUSE, "bundle_json");
    convert_fails_at(F, db, a, strlen(a), NULL, 4, 0, CTXDB_MISUSE, "format");
    convert_fails_at(F, db, a, strlen(a), NULL, 0, 0, CTXDB_INVALID_ARG, NULL);
    CONVERT_FAILS(db, a, "gopher", CTXDB_INVALID_ARG, "gopher");
    CONVERT_FAILS(db, a, "openai.\xff", CTXDB_INVALID_UTF8, "format");
    CONVERT_FAILS(db, "", "openai.chat", CTXDB_INVALID_JSON, NULL);
    CONVERT_FAILS(db, "garbage", "openai.chat", CTXDB_INVALID_JSON, NULL);
    CONVERT_FAILS(db, "{\"format\":", "openai.chat", CTXDB_INVALID_JSON, NULL);
    CONVERT_FAILS(db, "{\"format\":\"canonical\xff\"}", "openai.chat", CTXDB_INVALID_UTF8, NULL);
    CONVERT_FAILS(db, "{}", "openai.chat", CTXDB_INVALID_ARG, NULL);
    CONVERT_FAILS(db, "[]", "anthropic.messages", CTXDB_INVALID_ARG, NULL);
    conv = OK_CONVERT(db, a, "gemini.generate_content");
    CHECK(conv && strstr(conv, Q("'role':'user','parts':[")));
    ctxdb_free(conv);
    conv = OK_CONVERT(db, a, "ai.sdk");
    CHECK(conv && strstr(conv, Q("{'messages':[")));
    ctxdb_free(conv);
    ctxdb_free(a);
  }
  test_convert_images(db);
}

/* ctxdb_token_counter_set: the host's counts are cached at append and used
 * by compiles; a failing counter fails the call and writes nothing. */
static void test_token_counter(ctxdb_db *db) {
  struct host_counter c;
  char *counter = NULL, *before, *bundle, name[120];
  const char *prompt = Q("{'type':'UserPromptSubmitted','actor':'user',"
                         "'payload':{'text':'hello world'}}");
  char ev[200];
  snprintf(ev, sizeof ev, "%s", prompt);
  memset(&c, 0, sizeof c);
  c.db = db;

  /* Bad arguments. */
  CHECK_RC(ctxdb_token_counter_set(NULL, "bytes", 5, count_bytes, &c), CTXDB_MISUSE);
  failed_at(F, "ctxdb_token_counter_set (empty name)", db,
            ctxdb_token_counter_set(db, "", 0, count_bytes, &c), CTXDB_INVALID_ARG, "name");
  failed_at(F, "ctxdb_token_counter_set (NULL name)", db,
            ctxdb_token_counter_set(db, NULL, 0, count_bytes, &c), CTXDB_INVALID_ARG, "name");
  failed_at(F, "ctxdb_token_counter_set (NULL name, a length)", db,
            ctxdb_token_counter_set(db, NULL, 3, count_bytes, &c), CTXDB_MISUSE, "name");
  failed_at(F, "ctxdb_token_counter_set (invalid UTF-8)", db,
            ctxdb_token_counter_set(db, "by\xfftes", 6, count_bytes, &c), CTXDB_INVALID_UTF8,
            "name");
  memset(name, 'n', sizeof name);
  failed_at(F, "ctxdb_token_counter_set (101 bytes)", db,
            ctxdb_token_counter_set(db, name, 101, count_bytes, &c), CTXDB_INVALID_ARG, "100");
  CHECK_RC(ctxdb_token_counter_set(db, name, 100, count_bytes, &c), CTXDB_OK);
  CHECK(c.calls == 0); /* setting counts nothing */

  /* Counts by the host's counter, at append and at compile. */
  CHECK_RC(ctxdb_token_counter_set(db, "bytes-v1", 8, count_bytes, &c), CTXDB_OK);
  ctxdb_free(OK_APPEND(db, CS, ev));
  CHECK(c.calls > 0);
  CHECK(last_message_tokens(db, CS, &counter) == 11); /* "hello world" */
  CHECK(counter && strcmp(counter, "bytes-v1") == 0);
  free(counter);
  bundle = OK_COMPILE(db, CREQ(""));
  CHECK(jstr_eq(bundle, "token_counter", "bytes-v1"));
  ctxdb_free(bundle);

  /* A failing callback fails the append with its code, writes nothing, and
   * the message names the counter. */
  c.fail_rc = CTXDB_NOMEM;
  APPEND_FAILS(db, CS, ev, CTXDB_NOMEM, "bytes-v1");
  COMPILE_FAILS(db, CREQ(""), CTXDB_NOMEM, "bytes-v1");
  c.fail_rc = 12345; /* not a status code */
  APPEND_FAILS(db, CS, ev, CTXDB_INTERNAL, "bytes-v1");
  BATCH_FAILS(db, CS, ev, CTXDB_INTERNAL, "bytes-v1", 1);
  c.fail_rc = 0;
  c.negative = 1;
  APPEND_FAILS(db, CS, ev, CTXDB_INTERNAL, "negative");
  c.negative = 0;

  /* The callback must not re-enter the handle: such a call is MISUSE. */
  c.reenter = 1;
  c.reenter_rc = CTXDB_OK;
  ctxdb_free(OK_APPEND(db, CS, ev));
  CHECK_RC(c.reenter_rc, CTXDB_MISUSE);

  /* NULL restores the built-in estimator. */
  before = snapshot(db);
  CHECK_RC(ctxdb_token_counter_set(db, NULL, 0, NULL, NULL), CTXDB_OK);
  unchanged_at(F, "ctxdb_token_counter_set", db, before);
  c.calls = 0;
  ctxdb_free(OK_APPEND(db, CS, ev));
  CHECK(c.calls == 0);
  CHECK(last_message_tokens(db, CS, &counter) != INT64_MIN);
  CHECK(counter && strcmp(counter, "approx-v2") == 0);
  free(counter);
  bundle = OK_COMPILE(db, CREQ(""));
  CHECK(jstr_eq(bundle, "token_counter", "approx-v2"));
  ctxdb_free(bundle);
}

static void test_compile(void) {
  char path[600];
  ctxdb_db *db;
  snprintf(path, sizeof path, "%s", scratch_path("compile.ctxdb"));
  db = OK_OPEN(path, NULL);
  if (!db) return;
  test_compile_happy(db);
  test_compile_bad_input(db, path);
  test_token_counter(db);
  CHECK_RC(ctxdb_close(db), CTXDB_OK);
  g_closed = db;
  compile_fails_at(F, db, "{}", 2, 0, CTXDB_MISUSE, NULL);
  convert_fails_at(F, db, "{}", 2, "canonical", 9, 0, CTXDB_MISUSE, NULL);
  CHECK_RC(ctxdb_token_counter_set(db, "x", 1, NULL, NULL), CTXDB_MISUSE);
  g_closed = NULL;
}

int main(void) {
  char p1[600]; /* a copy: scratch_path's buffers rotate */
  int i;

  scratch_init("api");
  snprintf(p1, sizeof p1, "%s", scratch_path("main.ctxdb"));

  test_versions_and_errstr();
  test_open_config();
  test_spill();
  test_happy_path(p1);
  test_retries(g_db1);
  test_bad_sessions(g_db1);
  test_bad_appends(g_db1);
  test_batches_all_or_nothing(g_db1);
  test_bad_reads(g_db1);
  test_null_with_length(g_db1);
  test_nesting_limit();
  test_tree();
  test_views();
  test_state_stats();
  test_artifacts();
  test_compile();
  test_read_only(p1, g_db1);
  test_import(g_db1);
  test_rebuild(g_db1);
  test_verify_with_and_anchor(g_db1);
  test_closed_handle(p1);
  test_not_a_db();
  test_verify_detects_tampering();

  {
    char *v = OK_VERIFY(g_db1, NULL);
    CHECK(jbool(v, "ok") == 1);
    ctxdb_free(v);
  }
  CHECK_RC(ctxdb_close(g_db1), CTXDB_OK);
  test_log_is_append_only(p1);

  for (i = 0; i < g_norder; ++i) free(g_order[i]);
  free(g_s1);
  free(g_s2);
  free(g_started1);
  scratch_cleanup();
  return check_finish("test_api");
}
