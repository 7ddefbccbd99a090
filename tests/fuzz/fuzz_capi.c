/* libFuzzer target for the C ABI: the input is split into a few strings
 * that are fed, as they are, to the entry points that take host input.
 * Whatever the bytes, no call may crash, leak or trip a sanitizer, and the
 * database must still verify. Build: cmake -DCTXDB_FUZZ=ON with clang. */
#include <ctxdb/ctxdb.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void drop(char *p) { ctxdb_free(p); }

/* The piece as artifact content, then as a regex, preview spec and search
 * options over it; another piece as meta. Reads must give back the bytes. */
static void fuzz_artifacts(ctxdb_db *db, const char *p, size_t n, const char *meta,
                           size_t meta_len) {
  char *out = NULL, *id = NULL;
  size_t out_len = 0;
  if (ctxdb_artifact_put(db, p, n, NULL, 0, &out, &out_len) != CTXDB_OK) abort();
  id = strstr(out, "\"art_");
  if (!id) abort();
  char art[80] = {0};
  memcpy(art, id + 1, 68);
  drop(out);
  void *bytes = NULL;
  size_t got = 0;
  if (ctxdb_artifact_read(db, art, 68, 0, -1, &bytes, &got) != CTXDB_OK || got != n ||
      (n && memcmp(bytes, p, n) != 0))
    abort();
  drop(bytes);
  ctxdb_artifact_put(db, p, n, meta, meta_len, &out, &out_len);
  drop(out);
  out = NULL;
  ctxdb_artifact_search(db, art, 68, p, n, NULL, 0, &out, &out_len);
  drop(out);
  out = NULL;
  ctxdb_artifact_preview(db, art, 68, p, n, &out, &out_len);
  drop(out);
  out = NULL;
  ctxdb_artifact_lines(db, art, 68, 2, 3, &out, &out_len);
  drop(out);
  out = NULL;
  ctxdb_artifact_info(db, p, n, &out, &out_len);
  drop(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ctxdb_db *db = NULL;
  if (ctxdb_open(":memory:", NULL, 0, &db) != CTXDB_OK) abort();
  char *out = NULL;
  size_t n = 0;
  const char *s = "{\"id\":\"s\",\"payload\":{\"agent_id\":\"a\"}}";
  if (ctxdb_session_create(db, s, strlen(s), &out, &n) != CTXDB_OK) abort();
  drop(out);

  /* Pieces separated by 0xFF bytes, each used as a different input. */
  const char *piece[9] = {0};
  size_t len[9] = {0};
  size_t k = 0, start = 0;
  for (size_t i = 0; i <= size && k < 9; ++i) {
    if (i == size || data[i] == 0xFF) {
      piece[k] = (const char *)data + start;
      len[k++] = i - start;
      start = i + 1;
    }
  }
  for (size_t i = 0; i < k; ++i) {
    switch (i) {
    case 0: ctxdb_append(db, "s", 1, piece[i], len[i], &out, &n); break;
    case 1: ctxdb_append_batch(db, "s", 1, piece[i], len[i], &out, &n); break;
    case 2: ctxdb_session_create(db, piece[i], len[i], &out, &n); break;
    case 3: ctxdb_import(db, piece[i], len[i], &out, &n); break;
    case 4: ctxdb_event_get(db, piece[i], len[i], &out, &n); break;
    case 5: ctxdb_append(db, piece[i], len[i], piece[0], len[0], &out, &n); break;
    case 6: ctxdb_branch_fork(db, "s", 1, piece[i], len[i], &out, &n); break;
    case 7: {
      ctxdb_iter *it = NULL;
      const char *row = NULL;
      size_t row_len = 0;
      if (ctxdb_branch_path(db, "s", 1, piece[i], len[i], &it) == CTXDB_OK)
        while (ctxdb_iter_next(it, &row, &row_len) == CTXDB_ROW) {
        }
      ctxdb_iter_free(it);
      ctxdb_event_children(db, piece[i], len[i], &out, &n);
      drop(out);
      out = NULL;
      /* the views of a branch: the piece as a branch, then as a session */
      ctxdb_messages_list(db, "s", 1, piece[i], len[i], &out, &n);
      drop(out);
      out = NULL;
      ctxdb_tool_calls_list(db, "s", 1, piece[i], len[i], &out, &n);
      drop(out);
      out = NULL;
      ctxdb_files_list(db, piece[i], len[i], NULL, 0, &out, &n);
      drop(out);
      out = NULL;
      /* a state query, and the piece as the session of stats */
      ctxdb_state_get(db, "s", 1, piece[i], len[i], &out, &n);
      drop(out);
      out = NULL;
      ctxdb_stats_get(db, piece[i], len[i], &out, &n);
      break;
    }
    case 8: fuzz_artifacts(db, piece[i], len[i], piece[0], len[0]); break;
    }
    drop(out);
    out = NULL;
  }
  /* Compaction: the second piece as a policy, the third as a host's
   * summary for the plan; whatever they hold, errors, never a crash, and
   * the log stays verifiable and replayable. */
  if (k > 2) {
    char *plan = NULL;
    size_t plan_len = 0;
    ctxdb_compact_should(db, "s", 1, piece[1], len[1], &out, &n);
    drop(out);
    out = NULL;
    ctxdb_compact(db, "s", 1, piece[1], len[1], NULL, NULL, &out, &n);
    drop(out);
    out = NULL;
    if (ctxdb_compact_plan(db, "s", 1, "{\"keep_recent_tokens\":0}", 24, &plan, &plan_len) ==
        CTXDB_OK)
      ctxdb_compact_commit(db, "s", 1, plan, plan_len, piece[2], len[2], &out, &n);
    drop(plan);
    drop(out);
    out = NULL;
  }
  if (ctxdb_verify(db, NULL, 0, &out, &n) != CTXDB_OK || !strstr(out, "\"ok\":true")) abort();
  drop(out);
  /* Whatever was accepted, the projections must replay identically. */
  if (ctxdb_rebuild(db, "{\"check\":true}", 14, &out, &n) != CTXDB_OK) abort();
  drop(out);
  if (k > 0) { /* the first piece as rebuild options: errors, never a crash */
    out = NULL;
    ctxdb_rebuild(db, piece[0], len[0], &out, &n);
    drop(out);
  }
  ctxdb_close(db);

  ctxdb_db *db2 = NULL; /* the config parser too */
  if (ctxdb_open(":memory:", (const char *)data, size, &db2) == CTXDB_OK) ctxdb_close(db2);
  return 0;
}
