/*
 * test_search.c — ctxdb_search through the C ABI: hits, filters, and every
 * kind of bad input (NULL handle, NULL out, NULL with a length, invalid
 * UTF-8, garbage and malformed options, unknown session and branch), each
 * a status code with the out-parameters cleared, never a crash.
 */
#include "util.h"

#include <ctxdb/ctxdb.h>

static ctxdb_db *g_db;

static void add(const char *session, const char *json) {
  char *out = NULL;
  size_t n = 0;
  CHECK_RC(ctxdb_append(g_db, session, strlen(session), json, strlen(json), &out, &n), CTXDB_OK);
  ctxdb_free(out);
}

/* The search's result (the caller frees it), or NULL when it failed. */
static char *search(const char *query, const char *options) {
  char *out = NULL;
  size_t n = 0;
  int rc =
      ctxdb_search(g_db, query, strlen(query), options, options ? strlen(options) : 0, &out, &n);
  CHECK_RC(rc, CTXDB_OK);
  CHECK(rc != CTXDB_OK || (out && n == strlen(out)));
  return rc == CTXDB_OK ? out : NULL;
}

/* ctxdb_search fails with `want`, and clears both out-parameters. */
static void fails_at(const char *file, int line, ctxdb_db *db, const char *q, size_t qlen,
                     const char *opt, size_t olen, int want) {
  char *out = (char *)"sentinel";
  size_t n = 99;
  int rc = ctxdb_search(db, q, qlen, opt, olen, &out, &n);
  check_rc_at(rc, want, file, line, q ? q : "(NULL query)");
  CHECK_AT(file, line, out == NULL && n == 0);
  if (want != CTXDB_MISUSE || db) CHECK_AT(file, line, ctxdb_errmsg(db) && *ctxdb_errmsg(db));
}
static size_t slen(const char *s) { return s ? strlen(s) : 0; }
#define FAILS(q, opt, want) fails_at(__FILE__, __LINE__, g_db, q, strlen(q), opt, slen(opt), want)

/* How many times `needle` occurs in `s`. */
static int count(const char *s, const char *needle) {
  int k = 0;
  for (; s && (s = strstr(s, needle)) != NULL; s += strlen(needle)) ++k;
  return k;
}

static void test_hits(void) {
  char *r;
  r = search("reconnect", NULL);
  CHECK(count(r, "\"event_id\"") == 2);
  CHECK(r && jstr_eq(r, "syntax", "plain"));
  CHECK(count(r, "\xC2\xAB"
                 "reconnect\xC2\xBB") == 2); /* «reconnect» */
  CHECK(count(r, Q("'match':'words'")) == 2);
  ctxdb_free(r);
  r = search("reconnect", Q("{'session_id':'t','role':'user','limit':5}"));
  CHECK(r && strstr(r, Q("'session_id':'t'")) && !strstr(r, Q("'session_id':'s'")));
  ctxdb_free(r);
  /* Chinese inside a sentence (each character a word), and a piece of a path. */
  r = search("\xE8\xBF\x9E\xE6\x8E\xA5\xE9\x94\x99\xE8\xAF\xAF", NULL); /* 连接错误 */
  CHECK(r && strstr(r, Q("'match':'words'")));
  ctxdb_free(r);
  r = search("net/sock", NULL);
  CHECK(r && strstr(r, Q("'match':'substring'")) &&
        strstr(r, "\xC2\xAB"
                  "net/sock"));
  ctxdb_free(r);
  /* Not FTS5 syntax: plain words, not an error. */
  r = search("\"unbalanced (", NULL);
  CHECK(r && jstr_eq(r, "syntax", "plain"));
  ctxdb_free(r);
  /* NULL options with length 0 are {}. */
  r = search("reconnect", NULL);
  CHECK(r != NULL);
  ctxdb_free(r);
}

static void test_bad_input(void) {
  char *out = NULL;
  size_t n = 0;
  /* Handles and out-parameters. */
  fails_at(__FILE__, __LINE__, NULL, "x", 1, NULL, 0, CTXDB_MISUSE);
  CHECK_RC(ctxdb_search(g_db, "x", 1, NULL, 0, NULL, &n), CTXDB_MISUSE);
  /* out_len is optional: the result is NUL-terminated. */
  CHECK_RC(ctxdb_search(g_db, "x", 1, NULL, 0, &out, NULL), CTXDB_OK);
  CHECK(out != NULL);
  ctxdb_free(out);
  fails_at(__FILE__, __LINE__, g_db, NULL, 3, NULL, 0, CTXDB_MISUSE);
  fails_at(__FILE__, __LINE__, g_db, "x", 1, NULL, 4, CTXDB_MISUSE);
  /* The query. */
  fails_at(__FILE__, __LINE__, g_db, NULL, 0, NULL, 0, CTXDB_INVALID_ARG);
  FAILS("", NULL, CTXDB_INVALID_ARG);
  FAILS("  \t ", NULL, CTXDB_INVALID_ARG);
  FAILS("bad \xC3\x28 utf8", NULL, CTXDB_INVALID_UTF8);
  FAILS("\xFF\xFE", NULL, CTXDB_INVALID_UTF8);
  /* The options. */
  FAILS("x", "{", CTXDB_INVALID_JSON);
  FAILS("x", "\x01garbage\x02", CTXDB_INVALID_JSON);
  FAILS("x", "[]", CTXDB_INVALID_ARG);
  FAILS("x", Q("{'limit':0}"), CTXDB_INVALID_ARG);
  FAILS("x", Q("{'limit':'ten'}"), CTXDB_INVALID_ARG);
  FAILS("x", Q("{'role':'robot'}"), CTXDB_INVALID_ARG);
  FAILS("x", Q("{'unknown':1}"), CTXDB_INVALID_ARG);
  FAILS("x", Q("{'session_id':'\xC3\x28'}"), CTXDB_INVALID_UTF8);
  /* Unknown ids. */
  FAILS("x", Q("{'session_id':'nope'}"), CTXDB_NOT_FOUND);
  FAILS("x", Q("{'session_id':'s','branch_id':'nope'}"), CTXDB_NOT_FOUND);
  FAILS("x", Q("{'branch_id':'evt_nope'}"), CTXDB_NOT_FOUND);
}

int main(void) {
  char *out = NULL;
  size_t n = 0;
  const char *path;
  scratch_init("search");
  path = scratch_path("search.ctxdb");
  CHECK_RC(ctxdb_open(path, NULL, 0, &g_db), CTXDB_OK);
  CHECK_RC(ctxdb_session_create(g_db, Q("{'id':'s','payload':{'agent_id':'a'}}"),
                                strlen(Q("{'id':'s','payload':{'agent_id':'a'}}")), &out, &n),
           CTXDB_OK);
  ctxdb_free(out);
  CHECK_RC(ctxdb_session_create(g_db, Q("{'id':'t','payload':{'agent_id':'a'}}"),
                                strlen(Q("{'id':'t','payload':{'agent_id':'a'}}")), &out, &n),
           CTXDB_OK);
  ctxdb_free(out);
  add("s", Q("{'type':'UserPromptSubmitted','actor':'user','payload':{'text':'fix the reconnect "
             "in src/net/socket.ts'}}"));
  add("s",
      Q("{'type':'UserPromptSubmitted','actor':'user','payload':{'text':'"
        "\xE6\x95\xB0\xE6\x8D\xAE\xE5\xBA\x93\xE8\xBF\x9E\xE6\x8E\xA5\xE9\x94\x99\xE8\xAF\xAF'}}"));
  add("t", Q("{'type':'UserPromptSubmitted','actor':'user','payload':{'text':'reconnect later'}}"));
  test_hits();
  test_bad_input();
  ctxdb_close(g_db);
  scratch_cleanup();
  return check_finish("test_search");
}
