/*
 * test_memory.c — the memory entry points of ctxdb.h (ctxdb_memory_*),
 * through the C ABI only: a happy path (write, update, retrieve, list,
 * promote, forget and purge, with verify green after it), then bad input
 * for each: NULL handles and pointers, invalid UTF-8, malformed JSON,
 * unknown ids. Every failure returns its code, clears the out-parameters,
 * leaves a message naming what was wrong, and leaves the file unchanged.
 */
#include "check.h"
#include "util.h"

#include <ctxdb/ctxdb.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define F __FILE__, __LINE__

static char sentinel_;
#define SENT ((char *)&sentinel_)
#define SENT_LEN ((size_t)0xdeadbeefu)

static size_t slen(const char *s) { return s ? strlen(s) : 0; }

/* Everything the memory calls could change: the log and the memories. */
static char *snapshot(ctxdb_db *db) {
  ctxdb_iter *it = NULL;
  const char *row;
  size_t n, cap = 1 << 16, len = 0;
  char *s = (char *)malloc(cap), *list = NULL;
  s[0] = '\0';
  if (ctxdb_events_iter(db, NULL, 0, 0, -1, &it) == CTXDB_OK) {
    while (ctxdb_iter_next(it, &row, &n) == CTXDB_ROW) {
      while (len + n + 2 > cap) s = (char *)realloc(s, cap *= 2);
      memcpy(s + len, row, n);
      len += n;
      s[len++] = '\n';
      s[len] = '\0';
    }
    ctxdb_iter_free(it);
  }
  if (ctxdb_memory_list(db, "{\"all_versions\":true}", 20, &list, &n) == CTXDB_OK) {
    while (len + n + 2 > cap) s = (char *)realloc(s, cap *= 2);
    memcpy(s + len, list, n + 1);
    ctxdb_free(list);
  }
  return s;
}

typedef int (*two_fn)(ctxdb_db *, const char *, size_t, const char *, size_t, char **, size_t *);
typedef int (*one_fn)(ctxdb_db *, const char *, size_t, char **, size_t *);

static void failed_at(const char *file, int line, const char *what, ctxdb_db *db, int rc, int want,
                      const char *mention, char *out, size_t n, char *before) {
  char desc[400];
  char *after;
  check_rc_at(rc, want, file, line, what);
  snprintf(desc, sizeof desc, "%s clears its out-parameters", what);
  check_at(out == NULL && n == 0, file, line, desc);
  if (rc == CTXDB_OK && out && out != SENT) ctxdb_free(out);
  if (mention && rc != CTXDB_OK) {
    snprintf(desc, sizeof desc, "%s: the message '%s' names '%s'", what, ctxdb_errmsg(NULL),
             mention);
    check_at(strstr(ctxdb_errmsg(NULL), mention) != NULL, file, line, desc);
  }
  if (!before) return;
  after = snapshot(db);
  snprintf(desc, sizeof desc, "a failed %s leaves the file unchanged", what);
  check_at(strcmp(before, after) == 0, file, line, desc);
  free(after);
  free(before);
}

static void two_fails_at(const char *file, int line, const char *what, two_fn fn, ctxdb_db *db,
                         const char *a, size_t al, const char *b, size_t bl, int want,
                         const char *mention) {
  char *before = db ? snapshot(db) : NULL, *out = SENT;
  size_t n = SENT_LEN;
  int rc = fn(db, a, al, b, bl, &out, &n);
  failed_at(file, line, what, db, rc, want, mention, out, n, before);
}
#define TWO_FAILS(fn, db, a, b, want, mention)                                                     \
  two_fails_at(F, #fn, fn, db, a, slen(a), b, slen(b), want, mention)

static void one_fails_at(const char *file, int line, const char *what, one_fn fn, ctxdb_db *db,
                         const char *a, size_t al, int want, const char *mention) {
  char *before = db ? snapshot(db) : NULL, *out = SENT;
  size_t n = SENT_LEN;
  int rc = fn(db, a, al, &out, &n);
  failed_at(file, line, what, db, rc, want, mention, out, n, before);
}
#define ONE_FAILS(fn, db, a, want, mention) one_fails_at(F, #fn, fn, db, a, slen(a), want, mention)

static char *ok_two_at(const char *file, int line, two_fn fn, ctxdb_db *db, const char *a,
                       const char *b) {
  char *out = NULL;
  size_t n = 0;
  int rc = fn(db, a, slen(a), b, slen(b), &out, &n);
  check_rc_at(rc, CTXDB_OK, file, line, ctxdb_errmsg(NULL));
  return rc == CTXDB_OK ? out : NULL;
}
#define OK2(fn, db, a, b) ok_two_at(F, fn, db, a, b)

static char *ok_one_at(const char *file, int line, one_fn fn, ctxdb_db *db, const char *a) {
  char *out = NULL;
  size_t n = 0;
  int rc = fn(db, a, slen(a), &out, &n);
  check_rc_at(rc, CTXDB_OK, file, line, ctxdb_errmsg(NULL));
  return rc == CTXDB_OK ? out : NULL;
}
#define OK1(fn, db, a) ok_one_at(F, fn, db, a)

static int forget(ctxdb_db *db, const char *id, size_t il, const char *o, size_t ol, char **out,
                  size_t *n) {
  return ctxdb_memory_forget(db, id, il, o, ol, out, n);
}

static const char *kWrite = "{'memory_id':'m1','scope':'project','scope_id':'p1','kind':'fact',"
                            "'content':'deploy with the blue pipeline','source_refs':['e1'],"
                            "'update_policy':'manual','ts':1700000000000}";
static const char *kQuery = "{'query':'pipeline','scopes':[{'scope':'project','id':'p1'}],"
                            "'now':1700000100000}";

static void test_happy(ctxdb_db *db) {
  char *s, *out = NULL;
  size_t n = 0;
  ctxdb_free(OK1(ctxdb_session_create, db, Q("{'id':'s','payload':{'agent_id':'a'}}")));
  ctxdb_free(
      OK2(ctxdb_append, db, "s",
          Q("{'id':'e1','type':'UserPromptSubmitted','actor':'user','payload':{'text':'x'}}")));
  s = OK2(ctxdb_memory_write, db, "s", Q(kWrite));
  CHECK(s && jstr_eq(s, "memory_id", "m1") && jnum(s, "version") == 1);
  ctxdb_free(s);
  s = OK2(ctxdb_memory_update, db, "m1",
          Q("{'content':'deploy with the green pipeline','source_refs':['e1'],"
            "'ts':1700000050000}"));
  CHECK(s && jnum(s, "version") == 2 && jstr_eq(s, "status", "current"));
  ctxdb_free(s);
  s = OK1(ctxdb_memory_get, db, "m1");
  CHECK(s && jstr_eq(s, "content", "deploy with the green pipeline") && jnum(s, "use_count") == 0);
  ctxdb_free(s);
  CHECK_RC(ctxdb_memory_retrieve(db, Q(kQuery), strlen(Q(kQuery)), &out, &n), CTXDB_OK);
  CHECK(out && strstr(out, Q("'memory_id':'m1'")) && strstr(out, Q("'source_refs':['e1']")));
  ctxdb_free(out);
  s = OK1(ctxdb_memory_get, db, "m1");
  CHECK(s && jnum(s, "use_count") == 1);
  ctxdb_free(s);
  CHECK_RC(ctxdb_memory_list(db, NULL, 0, &out, &n), CTXDB_OK);
  CHECK(out && strstr(out, "green") && !strstr(out, "blue"));
  ctxdb_free(out);
  CHECK_RC(ctxdb_memory_list(db, Q("{'as_of':1700000010000}"), strlen(Q("{'as_of':1700000010000}")),
                             &out, &n),
           CTXDB_OK);
  CHECK(out && strstr(out, "blue") && !strstr(out, "green"));
  ctxdb_free(out);
  s = OK2(ctxdb_memory_promote, db, "s",
          Q("[{'scope':'session','content':'a','source_refs':['e1']},"
            "{'memory_id':'m2','scope':'user','scope_id':'u','content':'b','source_refs':['e1'],"
            "'ttl_ms':86400000}]"));
  CHECK(s && strstr(s, Q("'memory_id':'m2'")) && strstr(s, Q("'scope_id':'s'")));
  ctxdb_free(s);
  s = OK2(forget, db, "m2", NULL);
  CHECK(s && jstr_eq(s, "mode", "tombstone"));
  ctxdb_free(s);
  s = OK2(forget, db, "m1", Q("{'mode':'purge','reason':'asked'}"));
  CHECK(s && jstr_eq(s, "mode", "purge") && strstr(s, "purged_event_ids"));
  ctxdb_free(s);
  CHECK_RC(ctxdb_verify(db, NULL, 0, &out, &n), CTXDB_OK);
  CHECK(out && jbool(out, "ok") == 1 && strstr(out, "purged_by"));
  ctxdb_free(out);
  s = snapshot(db);
  CHECK(s && !strstr(s, "pipeline"));
  free(s);
}

static void test_bad_input(ctxdb_db *db) {
  /* write */
  TWO_FAILS(ctxdb_memory_write, NULL, "s", Q(kWrite), CTXDB_MISUSE, NULL);
  two_fails_at(F, "ctxdb_memory_write", ctxdb_memory_write, db, NULL, 3, "{}", 2, CTXDB_MISUSE,
               "session_id");
  two_fails_at(F, "ctxdb_memory_write", ctxdb_memory_write, db, "s", 1, NULL, 3, CTXDB_MISUSE,
               "memory_json");
  {
    size_t n = SENT_LEN;
    CHECK_RC(ctxdb_memory_write(db, "s", 1, "{}", 2, NULL, &n), CTXDB_MISUSE);
  }
  TWO_FAILS(ctxdb_memory_write, db, "", Q(kWrite), CTXDB_INVALID_ARG, "session_id");
  TWO_FAILS(ctxdb_memory_write, db, "s\xff", Q(kWrite), CTXDB_INVALID_UTF8, "session_id");
  TWO_FAILS(ctxdb_memory_write, db, "nope", Q(kWrite), CTXDB_NOT_FOUND, "nope");
  TWO_FAILS(ctxdb_memory_write, db, "s", "{", CTXDB_INVALID_JSON, NULL);
  TWO_FAILS(ctxdb_memory_write, db, "s", "garbage", CTXDB_INVALID_JSON, NULL);
  TWO_FAILS(ctxdb_memory_write, db, "s", "{\"content\":\"\xff\"}", CTXDB_INVALID_UTF8, NULL);
  TWO_FAILS(ctxdb_memory_write, db, "s", "[]", CTXDB_INVALID_ARG, NULL);
  TWO_FAILS(ctxdb_memory_write, db, "s", Q("{'scope':'session','content':'x'}"), CTXDB_INVALID_ARG,
            "source_refs");
  TWO_FAILS(ctxdb_memory_write, db, "s", Q("{'scope':'session','content':'x','source_refs':[]}"),
            CTXDB_INVALID_ARG, "source_refs");
  TWO_FAILS(ctxdb_memory_write, db, "s", Q("{'content':'x','source_refs':['e1']}"),
            CTXDB_INVALID_ARG, "scope");
  TWO_FAILS(ctxdb_memory_write, db, "s",
            Q("{'scope':'galaxy','scope_id':'g','content':'x','source_refs':['e1']}"),
            CTXDB_INVALID_ARG, "scope");
  TWO_FAILS(ctxdb_memory_write, db, "s",
            Q("{'scope':'session','content':'x','source_refs':['e1'],'confidence':2}"),
            CTXDB_INVALID_ARG, "confidence");
  TWO_FAILS(ctxdb_memory_write, db, "s",
            Q("{'scope':'project','scope_id':'p','content':'x','source_refs':['e1'],"
              "'expires_at':1,'ts':5}"),
            CTXDB_INVALID_ARG, "expires_at");
  TWO_FAILS(ctxdb_memory_write, db, "s",
            Q("{'scope':'project','scope_id':'p','content':'x','source_refs':['e1']}"),
            CTXDB_INVALID_ARG, "update_policy");
  TWO_FAILS(ctxdb_memory_write, db, "s",
            Q("{'scope':'session','content':'x','source_refs':['nope']}"), CTXDB_NOT_FOUND, "nope");
  TWO_FAILS(ctxdb_memory_write, db, "s",
            Q("{'memory_id':'m2','scope':'session','content':'x','source_refs':['e1']}"),
            CTXDB_CONFLICT, "m2");
  /* update */
  TWO_FAILS(ctxdb_memory_update, NULL, "m2", Q("{'source_refs':['e1']}"), CTXDB_MISUSE, NULL);
  TWO_FAILS(ctxdb_memory_update, db, "", Q("{'source_refs':['e1']}"), CTXDB_INVALID_ARG,
            "memory_id");
  TWO_FAILS(ctxdb_memory_update, db, "m\xff", Q("{'source_refs':['e1']}"), CTXDB_INVALID_UTF8,
            "memory_id");
  TWO_FAILS(ctxdb_memory_update, db, "nope", Q("{'source_refs':['e1']}"), CTXDB_NOT_FOUND, "nope");
  TWO_FAILS(ctxdb_memory_update, db, "m2", "{", CTXDB_INVALID_JSON, NULL);
  TWO_FAILS(ctxdb_memory_update, db, "m2", Q("{'content':'x'}"), CTXDB_INVALID_ARG, "source_refs");
  TWO_FAILS(ctxdb_memory_update, db, "m2", Q("{'source_refs':['e1']}"), CTXDB_CONFLICT, "m2");
  /* forget */
  TWO_FAILS(forget, NULL, "m2", NULL, CTXDB_MISUSE, NULL);
  TWO_FAILS(forget, db, "", NULL, CTXDB_INVALID_ARG, "memory_id");
  TWO_FAILS(forget, db, "nope", NULL, CTXDB_NOT_FOUND, "nope");
  TWO_FAILS(forget, db, "m2", Q("{'mode':'shred'}"), CTXDB_INVALID_ARG, "mode");
  TWO_FAILS(forget, db, "m2", "{\"reason\":\"\xff\"}", CTXDB_INVALID_UTF8, NULL);
  TWO_FAILS(forget, db, "m2", NULL, CTXDB_CONFLICT, "m2");
  TWO_FAILS(forget, db, "m1", Q("{'mode':'purge'}"), CTXDB_CONFLICT, "m1");
  /* get */
  ONE_FAILS(ctxdb_memory_get, NULL, "m2", CTXDB_MISUSE, NULL);
  ONE_FAILS(ctxdb_memory_get, db, "", CTXDB_INVALID_ARG, "memory_id");
  ONE_FAILS(ctxdb_memory_get, db, "m\xff", CTXDB_INVALID_UTF8, "memory_id");
  ONE_FAILS(ctxdb_memory_get, db, "nope", CTXDB_NOT_FOUND, "nope");
  ONE_FAILS(ctxdb_memory_get, db, "m1", CTXDB_NOT_FOUND, "purged");
  /* list and retrieve */
  ONE_FAILS(ctxdb_memory_list, NULL, "{}", CTXDB_MISUSE, NULL);
  ONE_FAILS(ctxdb_memory_list, db, "{", CTXDB_INVALID_JSON, NULL);
  ONE_FAILS(ctxdb_memory_list, db, Q("{'scope':'galaxy'}"), CTXDB_INVALID_ARG, "scope");
  ONE_FAILS(ctxdb_memory_retrieve, NULL, Q(kQuery), CTXDB_MISUSE, NULL);
  ONE_FAILS(ctxdb_memory_retrieve, db, "garbage", CTXDB_INVALID_JSON, NULL);
  ONE_FAILS(ctxdb_memory_retrieve, db, "{\"query\":\"\xff\",\"scopes\":[]}", CTXDB_INVALID_UTF8,
            NULL);
  ONE_FAILS(ctxdb_memory_retrieve, db, Q("{'query':'x'}"), CTXDB_INVALID_ARG, "scopes");
  ONE_FAILS(ctxdb_memory_retrieve, db, Q("{'scopes':[{'scope':'project'}]}"), CTXDB_INVALID_ARG,
            "id");
  {
    /* Not FTS syntax: plain words, never an error. */
    char *out = NULL;
    size_t n = 0;
    const char *q = Q("{'query':'AND (\\\" NEAR','match':'fts','scopes':[{'scope':'global'}]}");
    CHECK_RC(ctxdb_memory_retrieve(db, q, strlen(q), &out, &n), CTXDB_OK);
    CHECK(out && jbool(out, "fell_back") == 1);
    ctxdb_free(out);
  }
  /* promote */
  TWO_FAILS(ctxdb_memory_promote, NULL, "s", "[]", CTXDB_MISUSE, NULL);
  TWO_FAILS(ctxdb_memory_promote, db, "nope",
            Q("[{'scope':'session','content':'x',"
              "'source_refs':['e1']}]"),
            CTXDB_NOT_FOUND, "nope");
  TWO_FAILS(ctxdb_memory_promote, db, "s", "{", CTXDB_INVALID_JSON, NULL);
  TWO_FAILS(ctxdb_memory_promote, db, "s", "{}", CTXDB_INVALID_ARG, "array");
  TWO_FAILS(ctxdb_memory_promote, db, "s",
            Q("[{'scope':'session','content':'x','source_refs':['e1']},{'content':'y'}]"),
            CTXDB_INVALID_ARG, "[1]");
}

/* The memory_fts entry of an optimize report, copied into buf ("" when
 * there is none): its objects hold no nested braces. */
static const char *memory_fts_entry(const char *report, char *buf, size_t cap) {
  const char *at = report ? strstr(report, "\"index\":\"memory_fts\"") : NULL, *open, *close;
  buf[0] = '\0';
  if (!at) return buf;
  for (open = at; open > report && *open != '{'; --open) {
  }
  close = strchr(at, '}');
  if (*open == '{' && close && (size_t)(close - open + 1) < cap) {
    memcpy(buf, open, (size_t)(close - open + 1));
    buf[close - open + 1] = '\0';
  }
  return buf;
}

/* ctxdb_optimize: memories written one transaction each leave memory_fts
 * in several segments; optimize merges them into one and retrieval
 * answers exactly as before. Bad options and handles fail and change
 * nothing; a read-only handle is refused. */
static void test_optimize(ctxdb_db *db, const char *path) {
  const char *query = "{\"query\":\"ledger audit\",\"scopes\":[{\"scope\":\"project\","
                      "\"id\":\"p9\"}],\"now\":1700000100000,\"record_usage\":false}";
  char write[400], entry[200], *before = NULL, *after = NULL, *out = NULL;
  const char *seg;
  size_t n = 0;
  int i;
  ctxdb_db *ro = NULL;
  for (i = 0; i < 12; ++i) {
    snprintf(write, sizeof write,
             Q("{'memory_id':'opt%d','scope':'project','scope_id':'p9','kind':'fact',"
               "'content':'the ledger audit runs on night %d','source_refs':['e1'],"
               "'priority':%d,'update_policy':'manual','ts':1700000000000}"),
             i, i, 9 * i);
    ctxdb_free(OK2(ctxdb_memory_write, db, "s", write));
  }
  CHECK_RC(ctxdb_memory_retrieve(db, query, strlen(query), &before, &n), CTXDB_OK);
  CHECK(before && strstr(before, "opt11"));

  CHECK_RC(ctxdb_optimize(db, NULL, 0, &out, &n), CTXDB_OK);
  CHECK(out && n == strlen(out));
  seg = memory_fts_entry(out, entry, sizeof entry);
  CHECK(jnum(seg, "segments_before") > 1 && jnum(seg, "segments_after") == 1);
  CHECK(out && strstr(out, "\"index\":\"search_words\"") && strstr(out, "search_grams"));
  ctxdb_free(out);
  CHECK_RC(ctxdb_memory_retrieve(db, query, strlen(query), &after, &n), CTXDB_OK);
  CHECK(before && after && strcmp(before, after) == 0);
  ctxdb_free(before);
  ctxdb_free(after);
  out = OK1(ctxdb_optimize, db, "{}"); /* merged already: one segment stays one */
  seg = memory_fts_entry(out, entry, sizeof entry);
  CHECK(jnum(seg, "segments_before") == 1 && jnum(seg, "segments_after") == 1);
  ctxdb_free(out);

  ONE_FAILS(ctxdb_optimize, NULL, NULL, CTXDB_MISUSE, NULL);
  one_fails_at(F, "ctxdb_optimize", ctxdb_optimize, db, NULL, 3, CTXDB_MISUSE, "options_json");
  ONE_FAILS(ctxdb_optimize, db, "{", CTXDB_INVALID_JSON, NULL);
  ONE_FAILS(ctxdb_optimize, db, "[]", CTXDB_INVALID_ARG, NULL);
  ONE_FAILS(ctxdb_optimize, db, Q("{'segments':1}"), CTXDB_INVALID_ARG, "segments");
  ONE_FAILS(ctxdb_optimize, db, "{\"\xff\":1}", CTXDB_INVALID_UTF8, NULL);
  CHECK_RC(ctxdb_optimize(db, NULL, 0, NULL, &n), CTXDB_MISUSE);
  CHECK_RC(ctxdb_open(path, Q("{'read_only':true}"), strlen(Q("{'read_only':true}")), &ro),
           CTXDB_OK);
  if (ro) {
    ONE_FAILS(ctxdb_optimize, ro, NULL, CTXDB_READONLY, "read-only");
    CHECK_RC(ctxdb_close(ro), CTXDB_OK);
  }
}

int main(void) {
  ctxdb_db *db = NULL;
  scratch_init("memory");
  CHECK_RC(ctxdb_open(scratch_path("m.ctxdb"), NULL, 0, &db), CTXDB_OK);
  if (db) {
    test_happy(db);
    test_optimize(db, scratch_path("m.ctxdb"));
    test_bad_input(db);
    CHECK_RC(ctxdb_close(db), CTXDB_OK);
  }
  scratch_cleanup();
  return check_finish("test_memory");
}
