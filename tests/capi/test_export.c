/*
 * test_export.c — ctxdb_export and ctxdb_import carry artifacts: a session
 * whose tool output was spilled into an artifact, exported and imported
 * into a fresh database, reads back byte for byte and verifies; a
 * corrupted, truncated, reordered or newer-format artifact record fails
 * the whole import (no event, no artifact); bad arguments are codes.
 */
#include "util.h"

#include <ctxdb/ctxdb.h>

#include <stdlib.h>

/* The whole export stream of db (one session, or all) as NDJSON; *rows
 * gets the row count. The caller frees it. */
static char *export_text(ctxdb_db *db, const char *sid, int *rows) {
  ctxdb_iter *it = NULL;
  CHECK_RC(ctxdb_export(db, sid, sid ? strlen(sid) : 0, &it), CTXDB_OK);
  return iter_rows(it, rows);
}

static char *import_text(ctxdb_db *db, const char *ndjson, int want) {
  char *out = NULL;
  size_t n = 0;
  CHECK_RC(ctxdb_import(db, ndjson, strlen(ndjson), &out, &n), want);
  return out;
}

/* A tool output of n bytes, lines of build log: spilled at 16 KiB. */
static char *big_output(size_t n) {
  char *s = (char *)malloc(n + 1);
  size_t i;
  for (i = 0; i < n; ++i) s[i] = (i % 50 == 49) ? '\n' : (char)('a' + (i * 7 + i / 50) % 26);
  s[n] = '\0';
  return s;
}

static char *artifact_list(ctxdb_db *db) {
  char *out = NULL;
  size_t n = 0;
  CHECK_RC(ctxdb_artifact_list(db, NULL, 0, &out, &n), CTXDB_OK);
  return out;
}

/* A session with a spilled output of 600 KB (3 chunks) and a second
 * session with an artifact of its own. */
static void populate(ctxdb_db *db, const char *output) {
  char *out = NULL, *ev;
  size_t n = 0;
  const char *s = "{\"id\":\"ses_a\",\"event_id\":\"a0\",\"payload\":{\"agent_id\":\"x\"}}";
  CHECK_RC(ctxdb_session_create(db, s, strlen(s), &out, &n), CTXDB_OK);
  ctxdb_free(out);
  s = "{\"id\":\"ses_b\",\"event_id\":\"b0\",\"payload\":{\"agent_id\":\"y\"}}";
  CHECK_RC(ctxdb_session_create(db, s, strlen(s), &out, &n), CTXDB_OK);
  ctxdb_free(out);
  append_ok(db, "ses_a",
            "{\"type\":\"AssistantMessageCreated\",\"actor\":\"assistant\",\"payload\":"
            "{\"content\":[{\"type\":\"tool_call\",\"id\":\"c1\",\"name\":\"make\"}]}}");
  size_t len = strlen(output) + 200;
  ev = (char *)malloc(len);
  snprintf(ev, len,
           "{\"id\":\"a2\",\"type\":\"ToolCallFinished\",\"actor\":\"tool\",\"payload\":{"
           "\"tool_call_id\":\"c1\",\"output\":\"%s\"}}",
           output);
  /* The output's newlines as JSON escapes. */
  {
    char *esc = (char *)malloc(len * 2), *w = esc;
    const char *r;
    for (r = ev; *r; ++r) {
      if (*r == '\n') {
        *w++ = '\\';
        *w++ = 'n';
      } else {
        *w++ = *r;
      }
    }
    *w = '\0';
    append_ok(db, "ses_a", esc);
    free(esc);
  }
  free(ev);
  CHECK_RC(ctxdb_artifact_put(db, "b's own\n", 8, "{\"event_id\":\"b0\"}", 17, &out, &n), CTXDB_OK);
  ctxdb_free(out);
}

/* The id of the artifact event a2's payload names (caller frees). */
static char *spilled_id(ctxdb_db *db) {
  char *out = NULL, *payload, *id;
  size_t n = 0;
  CHECK_RC(ctxdb_event_get(db, "a2", 2, &out, &n), CTXDB_OK);
  payload = jraw(out, "payload");
  id = payload ? jstr(payload, "artifact_id") : NULL;
  free(payload);
  ctxdb_free(out);
  return id;
}

static void test_round_trip(const char *output) {
  ctxdb_db *src = open_scratch("src.ctxdb");
  populate(src, output);
  char *id = spilled_id(src);
  if (!CHECK(id != NULL)) return;

  int rows = 0;
  char *session = export_text(src, "ses_a", &rows);
  /* 3 events, the artifact record and its 3 chunks (600 KB / 256 KiB). */
  CHECK(rows == 3 + 1 + 3);
  CHECK(strstr(session, "{\"ctxdb_record\":\"artifact\",\"format\":1,\"id\":\"") != NULL);
  CHECK(strstr(session, "b's own") == NULL && strstr(session, "\"b0\"") == NULL);

  ctxdb_db *dst = open_scratch("dst.ctxdb");
  char *r = import_text(dst, session, CTXDB_OK);
  CHECK(r && jnum(r, "imported") == 3 && jnum(r, "skipped") == 0);
  ctxdb_free(r);
  void *bytes = NULL;
  size_t n = 0;
  CHECK_RC(ctxdb_artifact_read(dst, id, strlen(id), 0, -1, &bytes, &n), CTXDB_OK);
  CHECK(n == strlen(output) && bytes && memcmp(bytes, output, n) == 0);
  ctxdb_free(bytes);
  char *info = NULL;
  CHECK_RC(ctxdb_artifact_info(dst, id, strlen(id), &info, &n), CTXDB_OK);
  CHECK(info && strstr(info, "\"event_id\":\"a2\",\"role\":\"output\",\"session_id\":\"ses_a\""));
  ctxdb_free(info);
  CHECK_RC(ctxdb_verify(dst, NULL, 0, &r, &n), CTXDB_OK);
  CHECK(jbool(r, "ok") == 1);
  ctxdb_free(r);
  /* Again: the events are skipped, the artifact is there already. */
  r = import_text(dst, session, CTXDB_OK);
  CHECK(r && jnum(r, "imported") == 0 && jnum(r, "skipped") == 3);
  ctxdb_free(r);
  /* The destination exports what the source did. */
  int again_rows = 0;
  char *again = export_text(dst, "ses_a", &again_rows);
  char *a_art = strstr(again, "{\"ctxdb_record\""), *s_art = strstr(session, "{\"ctxdb_record\"");
  CHECK(again_rows == rows && a_art && s_art);
  /* The same record (created_ts included) and the same chunk bytes. */
  CHECK(a_art && s_art && strcmp(a_art, s_art) == 0);
  free(again);

  /* The whole export carries every artifact, with every reference. */
  char *all = export_text(src, NULL, &rows);
  CHECK(rows == 4 + (1 + 3) + (1 + 1));
  ctxdb_db *all_db = open_scratch("all.ctxdb");
  r = import_text(all_db, all, CTXDB_OK);
  CHECK(r && jnum(r, "imported") == 4);
  ctxdb_free(r);
  char *l1 = artifact_list(src), *l2 = artifact_list(all_db);
  CHECK(l1 && l2 && strlen(l1) == strlen(l2));
  ctxdb_free(l1);
  ctxdb_free(l2);
  free(all);

  CHECK_RC(ctxdb_close(all_db), CTXDB_OK);
  CHECK_RC(ctxdb_close(dst), CTXDB_OK);
  CHECK_RC(ctxdb_close(src), CTXDB_OK);
  free(session);
  free(id);
}

/* export text with the first occurrence of `from` replaced by `to`. */
static char *edited(const char *text, const char *from, const char *to) {
  const char *at = strstr(text, from);
  if (!at) return NULL;
  size_t head = (size_t)(at - text), n = strlen(text) - strlen(from) + strlen(to);
  char *out = (char *)malloc(n + 1);
  memcpy(out, text, head);
  strcpy(out + head, to);
  strcat(out, at + strlen(from));
  return out;
}

/* Each broken export fails with `want` and leaves dst empty. */
static void fails_empty_at(const char *file, int line, const char *text, int want,
                           const char *mention) {
  static int k = 0;
  char name[32];
  snprintf(name, sizeof name, "bad%d.ctxdb", k++);
  ctxdb_db *dst = open_scratch(name);
  char *out = (char *)"sentinel";
  size_t n = 9;
  int rc = text ? ctxdb_import(dst, text, strlen(text), &out, &n) : -1;
  check_rc_at(rc, want, file, line, mention);
  CHECK_AT(file, line, out == NULL && n == 0);
  CHECK_AT(file, line, strstr(ctxdb_errmsg(dst), mention) != NULL);
  if (strstr(ctxdb_errmsg(dst), mention) == NULL)
    fprintf(stderr, "    message: %s\n", ctxdb_errmsg(dst));
  char *list = artifact_list(dst);
  CHECK_AT(file, line, list && strcmp(list, "[]") == 0);
  ctxdb_free(list);
  CHECK_RC(ctxdb_session_list(dst, &out, &n), CTXDB_OK);
  CHECK_AT(file, line, strcmp(out, "[]") == 0);
  ctxdb_free(out);
  CHECK_RC(ctxdb_close(dst), CTXDB_OK);
}
#define FAILS_EMPTY(text, want, mention) fails_empty_at(__FILE__, __LINE__, text, want, mention)

static void test_broken_imports(const char *output) {
  ctxdb_db *src = open_scratch("src2.ctxdb");
  populate(src, output);
  int rows = 0;
  char *good = export_text(src, "ses_a", &rows);
  char *chunk1 = strstr(good, "\"idx\":1,");
  char *data = chunk1 ? strstr(chunk1, "\"data\":\"") : NULL;
  if (!CHECK(data != NULL)) return;
  data += 8 + 40; /* inside chunk 1's base64 */

  /* One base64 character of the stored frame changed. */
  char *bad = strdup(good);
  bad[data - good] = bad[data - good] == 'A' ? 'B' : 'A';
  FAILS_EMPTY(bad, CTXDB_CORRUPT, "chunk 1 of artifact art_");
  free(bad);

  /* Chunk 1 replaced by chunk 0 (the same raw size): every chunk checks
   * out on its own, but the content no longer hashes to the id. */
  {
    char *chunk0 = strstr(good, "\"idx\":0,");
    char *sha0 = strstr(chunk0, "\"sha256\":\""), *end0 = strchr(chunk0, '\n');
    char *sha1 = strstr(chunk1, "\"sha256\":\""), *end1 = strchr(chunk1, '\n');
    size_t head = (size_t)(sha1 - good);
    char *forged = (char *)malloc(strlen(good) + (size_t)(end0 - sha0) + 1);
    memcpy(forged, good, head);
    memcpy(forged + head, sha0, (size_t)(end0 - sha0));
    strcpy(forged + head + (size_t)(end0 - sha0), end1);
    FAILS_EMPTY(forged, CTXDB_CORRUPT, "hashes to art_");
    free(forged);
  }

  /* The last chunk missing: cut short. */
  bad = strdup(good);
  char *last = strstr(bad, "\"idx\":2,");
  while (last > bad && last[-1] != '\n') --last;
  *last = '\0';
  FAILS_EMPTY(bad, CTXDB_CORRUPT, "cut short");
  free(bad);

  /* Chunks out of order. */
  bad = edited(good, "\"idx\":1,", "\"idx\":2,");
  FAILS_EMPTY(bad, CTXDB_CORRUPT, "chunk 2 of artifact");
  free(bad);

  /* A newer format. */
  bad = edited(good, "\"ctxdb_record\":\"artifact\",\"format\":1",
               "\"ctxdb_record\":\"artifact\",\"format\":2");
  FAILS_EMPTY(bad, CTXDB_SCHEMA, "format 2");
  free(bad);

  /* A record that breaks its schema; an unknown record. */
  bad = edited(good, "\"codec\":\"zstd\"", "\"codec\":\"lz4\"");
  FAILS_EMPTY(bad, CTXDB_INVALID_ARG, "codec");
  free(bad);
  bad = edited(good, "\"ctxdb_record\":\"artifact\"", "\"ctxdb_record\":\"blob\"");
  FAILS_EMPTY(bad, CTXDB_INVALID_ARG, "blob");
  free(bad);
  bad = edited(good, "{\"ctxdb_record\":\"artifact\",", "{\"ctxdb_record\":\"artifact\",[");
  FAILS_EMPTY(bad, CTXDB_INVALID_JSON, "line 4");
  free(bad);
  bad = edited(good, "\"mime\":\"text/plain\",\"name\":\"make\"",
               "\"mime\":\"text/plain\",\"name\":\"\xc3\x28\"");
  FAILS_EMPTY(bad, CTXDB_INVALID_UTF8, "line 4");
  free(bad);

  free(good);
  CHECK_RC(ctxdb_close(src), CTXDB_OK);
}

static void test_bad_arguments(void) {
  ctxdb_db *db = open_scratch("args.ctxdb");
  ctxdb_iter *it = (ctxdb_iter *)1;
  CHECK_RC(ctxdb_export(NULL, NULL, 0, &it), CTXDB_MISUSE);
  CHECK(it == NULL);
  CHECK_RC(ctxdb_export(db, NULL, 0, NULL), CTXDB_MISUSE);
  CHECK_RC(ctxdb_export(db, NULL, 4, &it), CTXDB_MISUSE);
  CHECK_RC(ctxdb_export(db, "ses_nope", 8, &it), CTXDB_NOT_FOUND);
  CHECK(strstr(ctxdb_errmsg(db), "ses_nope") != NULL);
  CHECK_RC(ctxdb_export(db, "", 0, &it), CTXDB_INVALID_ARG);
  CHECK_RC(ctxdb_export(db, "\xff", 1, &it), CTXDB_INVALID_UTF8);
  CHECK(it == NULL);
  /* An empty database exports nothing. */
  int rows = -1;
  char *text = export_text(db, NULL, &rows);
  CHECK(rows == 0);
  free(text);
  CHECK_RC(ctxdb_close(db), CTXDB_OK);
}

int main(void) {
  scratch_init("export");
  char *output = big_output(600000);
  test_round_trip(output);
  test_broken_imports(output);
  test_bad_arguments();
  free(output);
  scratch_cleanup();
  return check_finish("export");
}
