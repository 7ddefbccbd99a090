/*
 * parity_c.c -- the parity scenario (tests/parity/scenario/) run through the
 * C ABI. usage: parity_c DB_PATH SCENARIO_DIR
 *
 * Creates the database at DB_PATH, creates the session of session.json,
 * appends single.ndjson one event per ctxdb_append call and batch.ndjson in
 * one ctxdb_append_batch call, reads the session back, verifies the chain,
 * and writes the export (every event, in append order) to stdout. A failed
 * call stops it; a failed check (event count, verify) is reported and the
 * export still written, so the driver can show its bytes. Either way the
 * reason goes to stderr and the exit status is 1.
 *
 * Plain C99 over include/ctxdb/ctxdb.h; the JSON is passed as it is read.
 */
#include <ctxdb/ctxdb.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static ctxdb_db *db;
static int problems; /* failed checks: reported, then the export still runs */

static void die(const char *what, int rc) {
  fprintf(stderr, "parity_c: %s failed: %s: %s\n", what, ctxdb_errstr(rc), ctxdb_errmsg(db));
  exit(1);
}

static void fail(const char *message) {
  fprintf(stderr, "parity_c: %s\n", message);
  exit(1);
}

/* The whole file at dir/name; its length goes to *len. */
static char *read_file(const char *dir, const char *name, size_t *len) {
  size_t cap = 4096, n = 0, got;
  char path[4096];
  char *buf;
  FILE *f;
  if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >= sizeof path)
    fail("scenario path too long");
  f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "parity_c: cannot open %s\n", path);
    exit(1);
  }
  buf = malloc(cap);
  if (!buf) fail("out of memory");
  while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
    n += got;
    if (n == cap) {
      cap *= 2;
      buf = realloc(buf, cap);
      if (!buf) fail("out of memory");
    }
  }
  if (ferror(f)) fail("cannot read a scenario file");
  fclose(f);
  *len = n;
  return buf;
}

/* Whether text[from, to) holds only whitespace (the engine skips such
 * lines in a batch; a single append would refuse them). */
static int is_blank(const char *text, size_t from, size_t to) {
  for (; from < to; ++from)
    if (text[from] != ' ' && text[from] != '\t' && text[from] != '\r') return 0;
  return 1;
}

/* The number of non-blank lines. */
static long count_lines(const char *text, size_t len) {
  long count = 0;
  size_t i = 0, end;
  for (; i < len; i = end + 1) {
    for (end = i; end < len && text[end] != '\n';) ++end;
    if (!is_blank(text, i, end)) ++count;
  }
  return count;
}

int main(int argc, char **argv) {
  char sid[256];
  char *session, *single, *batch, *out = NULL;
  size_t session_len, single_len, batch_len, out_len = 0, i;
  long expected, seen = 0;
  const char *row;
  size_t row_len;
  ctxdb_iter *it = NULL;
  int rc;

  if (argc != 3) {
    fprintf(stderr, "usage: parity_c DB_PATH SCENARIO_DIR\n");
    return 2;
  }
  session = read_file(argv[2], "session.json", &session_len);
  single = read_file(argv[2], "single.ndjson", &single_len);
  batch = read_file(argv[2], "batch.ndjson", &batch_len);
  expected = 1 + count_lines(single, single_len) + count_lines(batch, batch_len);

  rc = ctxdb_open(argv[1], NULL, 0, &db);
  if (rc != CTXDB_OK) die("ctxdb_open", rc);

  rc = ctxdb_session_create(db, session, session_len, &out, &out_len);
  if (rc != CTXDB_OK) die("ctxdb_session_create", rc);
  /* The session object starts with its id, {"id":"ses_...", which by its
   * pattern needs no escapes. */
  {
    static const char prefix[] = "{\"id\":\"";
    const char *start, *end;
    if (strncmp(out, prefix, strlen(prefix)) != 0)
      fail("ctxdb_session_create returned no session id");
    start = out + strlen(prefix);
    end = strchr(start, '"');
    if (!end || (size_t)(end - start) >= sizeof sid)
      fail("ctxdb_session_create returned no session id");
    memcpy(sid, start, (size_t)(end - start));
    sid[end - start] = '\0';
  }
  ctxdb_free(out);

  /* single.ndjson: one ctxdb_append per line. */
  for (i = 0; i < single_len;) {
    size_t end = i;
    while (end < single_len && single[end] != '\n') ++end;
    if (!is_blank(single, i, end)) {
      rc = ctxdb_append(db, sid, strlen(sid), single + i, end - i, &out, &out_len);
      if (rc != CTXDB_OK) die("ctxdb_append", rc);
      ctxdb_free(out);
    }
    i = end + 1;
  }

  /* batch.ndjson: one ctxdb_append_batch. */
  rc = ctxdb_append_batch(db, sid, strlen(sid), batch, batch_len, &out, &out_len);
  if (rc != CTXDB_OK) die("ctxdb_append_batch", rc);
  ctxdb_free(out);

  /* Read the session back. */
  rc = ctxdb_events_iter(db, sid, strlen(sid), 1, -1, &it);
  if (rc != CTXDB_OK) die("ctxdb_events_iter", rc);
  while ((rc = ctxdb_iter_next(it, &row, &row_len)) == CTXDB_ROW) ++seen;
  if (rc != CTXDB_DONE) die("ctxdb_iter_next", rc);
  ctxdb_iter_free(it);
  if (seen != expected) {
    fprintf(stderr, "parity_c: the session has %ld events, expected %ld\n", seen, expected);
    ++problems;
  }

  rc = ctxdb_verify(db, NULL, 0, &out, &out_len);
  if (rc != CTXDB_OK) die("ctxdb_verify", rc);
  if (strncmp(out, "{\"ok\":true,", 11) != 0) {
    fprintf(stderr, "parity_c: verify: %s\n", out);
    ++problems;
  }
  ctxdb_free(out);

  /* The context compiler: the bundle of compile.json, next to the DB. */
  {
    size_t request_len = 0;
    char *request = read_file(argv[2], "compile.json", &request_len), path[4096];
    FILE *f;
    rc = ctxdb_compile(db, request, request_len, &out, &out_len);
    if (rc != CTXDB_OK) die("ctxdb_compile", rc);
    snprintf(path, sizeof path, "%s.bundle.json", argv[1]);
    f = fopen(path, "wb");
    if (!f || fwrite(out, 1, out_len, f) != out_len || fputc('\n', f) == EOF || fclose(f) != 0)
      fail("cannot write the bundle");
    ctxdb_free(out);
    free(request);
  }

  /* The export: every event in append order, one per line. */
  rc = ctxdb_events_iter(db, NULL, 0, 0, -1, &it);
  if (rc != CTXDB_OK) die("ctxdb_events_iter (export)", rc);
  while ((rc = ctxdb_iter_next(it, &row, &row_len)) == CTXDB_ROW) {
    fwrite(row, 1, row_len, stdout);
    fputc('\n', stdout);
  }
  if (rc != CTXDB_DONE) die("ctxdb_iter_next (export)", rc);
  ctxdb_iter_free(it);

  rc = ctxdb_close(db);
  if (rc != CTXDB_OK) die("ctxdb_close", rc);
  free(session);
  free(single);
  free(batch);
  if (fflush(stdout) != 0) fail("cannot write the export");
  return problems ? 1 : 0;
}
