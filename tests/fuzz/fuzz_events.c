/* libFuzzer target for the event parsers: the input's pieces (split at
 * 0xFF bytes) as an event appended to the session "s", as an NDJSON batch
 * for it, as a new session, and as an event appended to that session.
 * Whatever the bytes: no crash, no sanitizer report, an accepted event
 * reads back as the append returned it, and the log still verifies and
 * replays into the same projections. */
#include "fuzz_harness.h"

/* The "id" of a stored event or a session (their first member): its
 * length, or 0 when it holds an escape (then there is no id to look up). */
static size_t fuzz_id_of(const char *object, const char **id) {
  static const char kPrefix[] = "{\"id\":\"";
  if (strncmp(object, kPrefix, sizeof kPrefix - 1) != 0) abort();
  *id = object + sizeof kPrefix - 1;
  const char *end = strpbrk(*id, "\"\\");
  return end && *end == '"' ? (size_t)(end - *id) : 0;
}

/* Appends the event; when accepted, ctxdb_event_get of its id must give
 * the very bytes the append returned. */
static void fuzz_append(ctxdb_db *db, const char *session, size_t session_len, const char *event,
                        size_t event_len) {
  char *out = NULL, *got = NULL;
  size_t n = 0, got_len = 0;
  if (ctxdb_append(db, session, session_len, event, event_len, &out, &n) == CTXDB_OK) {
    const char *id = NULL;
    size_t id_len = fuzz_id_of(out, &id);
    if (id_len && (ctxdb_event_get(db, id, id_len, &got, &got_len) != CTXDB_OK || got_len != n ||
                   memcmp(got, out, n) != 0)) {
      fprintf(stderr, "appended: %s\nread back: %s\n", out, got ? got : ctxdb_errmsg(db));
      abort();
    }
    fuzz_drop(&got);
  }
  fuzz_drop(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *piece[4] = {0};
  size_t len[4] = {0};
  size_t k = fuzz_split(data, size, piece, len, 4);
  ctxdb_db *db = fuzz_open();
  char *out = NULL;
  size_t n = 0;
  /* The first append follows the template's five events, whatever the
   * inputs before this one appended (the harness resets the file). */
  if (ctxdb_append(db, "s", 1, piece[0], len[0], &out, &n) == CTXDB_OK &&
      !strstr(out, "\"session_id\":\"s\",\"seq\":6,")) {
    fprintf(stderr, "not the template's next event: %s\n", out);
    abort();
  }
  fuzz_drop(&out);
  fuzz_append(db, "s", 1, piece[0], len[0]);
  if (k > 1) {
    ctxdb_append_batch(db, "s", 1, piece[1], len[1], &out, &n);
    fuzz_drop(&out);
  }
  if (k > 2 && ctxdb_session_create(db, piece[2], len[2], &out, &n) == CTXDB_OK) {
    const char *id = NULL;
    size_t id_len = fuzz_id_of(out, &id);
    if (k > 3 && id_len) fuzz_append(db, id, id_len, piece[3], len[3]);
  }
  fuzz_drop(&out);
  fuzz_check_and_reset(data, size);
  return 0;
}
