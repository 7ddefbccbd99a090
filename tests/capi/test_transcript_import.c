/*
 * test_transcript_import.c — ctxdb_transcript_import through the C ABI: Pi's
 * session folder (tests/fixtures/transcripts/pi) imported, a malformed file
 * among it reported while the others import, a second import that changes
 * nothing, and every bad argument (NULL, garbage, invalid UTF-8, malformed
 * JSON, an unknown format, a missing path, a read-only handle) refused with
 * its code, the out-parameters cleared and the database left as it was.
 */
#include "util.h"

#include <ctxdb/ctxdb.h>

#include <stdio.h>
#include <string.h>

#ifndef CTXDB_FIXTURES
#error "CTXDB_FIXTURES must name tests/fixtures"
#endif

static ctxdb_db *g_db = NULL;

static char g_options[2048];

static const char *pi_options(const char *path) {
  snprintf(g_options, sizeof g_options, "{\"format\":\"pi\",\"path\":\"%s\"}", path);
  return g_options;
}

/* The number of events the database holds. */
static int64_t events(ctxdb_db *db) {
  char *out = NULL;
  size_t n = 0;
  int64_t count = -1;
  if (CHECK_RC(ctxdb_verify(db, NULL, 0, &out, &n), CTXDB_OK)) count = jnum(out, "events");
  ctxdb_free(out);
  return count;
}

/* A call that must fail with `want`, its message naming `mention`, clear
 * its out-parameters and import nothing. */
static void fails_at(int line, ctxdb_db *db, const char *opts, size_t len, int want,
                     const char *mention) {
  char *out = (char *)"not cleared";
  size_t n = 99;
  int64_t before = events(g_db);
  int rc = ctxdb_transcript_import(db, opts, len, &out, &n);
  if (!check_rc_at(rc, want, __FILE__, line, "ctxdb_transcript_import")) return;
  CHECK_AT(__FILE__, line, out == NULL && n == 0);
  if (mention) {
    const char *msg = ctxdb_errmsg(db);
    if (!CHECK_AT(__FILE__, line, strstr(msg, mention) != NULL))
      fprintf(stderr, "    message: %s (wanted it to name %s)\n", msg, mention);
  }
  CHECK_AT(__FILE__, line, events(g_db) == before);
}

#define FAILS(db, opts, len, want, mention) fails_at(__LINE__, db, opts, len, want, mention)

static void test_import(void) {
  const char *opts = pi_options(CTXDB_FIXTURES "/transcripts/pi");
  char *out = NULL;
  size_t n = 0;
  CHECK_RC(ctxdb_transcript_import(g_db, opts, strlen(opts), &out, &n), CTXDB_OK);
  CHECK(out && strlen(out) == n);
  CHECK(jstr_eq(out, "format", "pi"));
  CHECK(jnum(out, "imported") == 5);
  CHECK(jnum(out, "failed") == 1); /* --home-dev-broken--: a malformed line */
  CHECK(strstr(out, ".jsonl:4: ") != NULL);
  ctxdb_free(out);
  int64_t after_first = events(g_db);
  CHECK(after_first > 5);

  CHECK_RC(ctxdb_transcript_import(g_db, opts, strlen(opts), &out, &n), CTXDB_OK);
  CHECK(jnum(out, "imported") == 0);
  CHECK(jnum(out, "unchanged") == 5);
  ctxdb_free(out);
  CHECK(events(g_db) == after_first);
  CHECK_RC(ctxdb_rebuild(g_db, Q("{'check':true}"), 14, &out, &n), CTXDB_OK);
  ctxdb_free(out);
}

static void test_bad_arguments(void) {
  const char *missing = pi_options(CTXDB_FIXTURES "/transcripts/pi/nowhere");
  char *out = NULL;
  size_t n = 0;
  const char *ok = Q("{'format':'pi','path':'/'}");
  FAILS(NULL, ok, strlen(ok), CTXDB_MISUSE, NULL);
  FAILS(g_db, NULL, 3, CTXDB_MISUSE, "options_json");
  CHECK_RC(ctxdb_transcript_import(g_db, ok, strlen(ok), NULL, &n), CTXDB_MISUSE);
  FAILS(g_db, NULL, 0, CTXDB_INVALID_JSON, "transcript import options");
  FAILS(g_db, "\x01\x02garbage", 9, CTXDB_INVALID_JSON, "transcript import options");
  FAILS(g_db, "{\"format\":\"pi\",\"path\":\"\xff\"}", 26, CTXDB_INVALID_UTF8,
        "transcript import options");
  FAILS(g_db, "{\"format\":\"pi\",", 15, CTXDB_INVALID_JSON, "transcript import options");
  FAILS(g_db, Q("{'format':'aider','path':'/'}"), 29, CTXDB_INVALID_ARG, "unknown format 'aider'");
  FAILS(g_db, Q("{'format':'pi'}"), 15, CTXDB_INVALID_ARG, "path");
  FAILS(g_db, Q("{'format':'pi','path':'/','final':1}"), 36, CTXDB_INVALID_ARG, "final");
  FAILS(g_db, missing, strlen(missing), CTXDB_NOT_FOUND, "nowhere");
  (void)out;
}

static void test_read_only(void) {
  ctxdb_db *ro = NULL;
  const char *config = Q("{'read_only':true}");
  const char *opts = pi_options(CTXDB_FIXTURES "/transcripts/pi");
  CHECK_RC(ctxdb_open(scratch_path("import.ctxdb"), config, strlen(config), &ro), CTXDB_OK);
  FAILS(ro, opts, strlen(opts), CTXDB_READONLY, "read-only");
  ctxdb_close(ro);
}

int main(void) {
  scratch_init("transcript");
  CHECK_RC(ctxdb_open(scratch_path("import.ctxdb"), NULL, 0, &g_db), CTXDB_OK);
  test_bad_arguments();
  test_import();
  test_read_only();
  ctxdb_close(g_db);
  scratch_cleanup();
  return check_finish("test_transcript_import");
}
