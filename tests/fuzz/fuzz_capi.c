/* libFuzzer target for the rest of the C ABI that takes host input (the
 * parsers have targets of their own): artifacts, the session tree and its
 * views, compaction and rebuild options. The input is split at 0xFF bytes
 * into pieces, each fed, as it is, to some entry points. Whatever the
 * bytes: no crash, no leak, no sanitizer report, reads give back what was
 * stored, and the database still verifies. */
#include "fuzz_harness.h"

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
  fuzz_drop(&out);
  void *bytes = NULL;
  size_t got = 0;
  if (ctxdb_artifact_read(db, art, 68, 0, -1, &bytes, &got) != CTXDB_OK || got != n ||
      (n && memcmp(bytes, p, n) != 0))
    abort();
  ctxdb_free(bytes);
  ctxdb_artifact_put(db, p, n, meta, meta_len, &out, &out_len);
  fuzz_drop(&out);
  ctxdb_artifact_search(db, art, 68, p, n, NULL, 0, &out, &out_len);
  fuzz_drop(&out);
  ctxdb_artifact_preview(db, art, 68, p, n, &out, &out_len);
  fuzz_drop(&out);
  ctxdb_artifact_lines(db, art, 68, 2, 3, &out, &out_len);
  fuzz_drop(&out);
  ctxdb_artifact_info(db, p, n, &out, &out_len);
  fuzz_drop(&out);
  /* The streaming put: the piece in two halves gives the same id; meta
   * as the writer's meta, and an aborted writer stores nothing. */
  ctxdb_artifact_writer *w = NULL;
  if (ctxdb_artifact_writer_open(db, NULL, 0, &w) != CTXDB_OK ||
      ctxdb_artifact_writer_write(w, p, n / 2) != CTXDB_OK ||
      ctxdb_artifact_writer_write(w, p + n / 2, n - n / 2) != CTXDB_OK ||
      ctxdb_artifact_writer_commit(w, &out, &out_len) != CTXDB_OK || !strstr(out, art))
    abort();
  ctxdb_artifact_writer_free(w);
  fuzz_drop(&out);
  w = NULL;
  if (ctxdb_artifact_writer_open(db, meta, meta_len, &w) == CTXDB_OK) {
    ctxdb_artifact_writer_write(w, meta, meta_len);
    ctxdb_artifact_writer_free(w);
  }
}

/* The piece as an event id, a fork spec and a branch of the views. */
static void fuzz_tree(ctxdb_db *db, const char *p, size_t n) {
  char *out = NULL;
  size_t len = 0;
  ctxdb_event_get(db, p, n, &out, &len);
  fuzz_drop(&out);
  ctxdb_event_children(db, p, n, &out, &len);
  fuzz_drop(&out);
  ctxdb_branch_fork(db, "s", 1, p, n, &out, &len);
  fuzz_drop(&out);
  ctxdb_iter *it = NULL;
  const char *row = NULL;
  size_t row_len = 0;
  if (ctxdb_branch_path(db, "s", 1, p, n, &it) == CTXDB_OK)
    while (ctxdb_iter_next(it, &row, &row_len) == CTXDB_ROW) {
    }
  ctxdb_iter_free(it);
  ctxdb_messages_list(db, "s", 1, p, n, &out, &len);
  fuzz_drop(&out);
  ctxdb_tool_calls_list(db, "s", 1, p, n, &out, &len);
  fuzz_drop(&out);
  ctxdb_files_list(db, p, n, NULL, 0, &out, &len);
  fuzz_drop(&out);
  ctxdb_state_get(db, "s", 1, p, n, &out, &len);
  fuzz_drop(&out);
  ctxdb_stats_get(db, p, n, &out, &len);
  fuzz_drop(&out);
}

/* Compaction: the piece as a policy, another as a host's summary for the
 * plan; whatever they hold, errors, never a crash. */
static void fuzz_compaction(ctxdb_db *db, const char *policy, size_t policy_len,
                            const char *summary, size_t summary_len) {
  char *out = NULL, *plan = NULL;
  size_t len = 0, plan_len = 0;
  ctxdb_compact_should(db, "s", 1, policy, policy_len, &out, &len);
  fuzz_drop(&out);
  ctxdb_compact(db, "s", 1, policy, policy_len, NULL, NULL, &out, &len);
  fuzz_drop(&out);
  if (ctxdb_compact_plan(db, "s", 1, "{\"keep_recent_tokens\":0}", 24, &plan, &plan_len) ==
      CTXDB_OK)
    ctxdb_compact_commit(db, "s", 1, plan, plan_len, summary, summary_len, &out, &len);
  fuzz_drop(&plan);
  fuzz_drop(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *piece[5] = {0};
  size_t len[5] = {0};
  size_t k = fuzz_split(data, size, piece, len, 5);
  ctxdb_db *db = fuzz_open();
  fuzz_tree(db, piece[0], len[0]);
  if (k > 1) fuzz_artifacts(db, piece[1], len[1], piece[0], len[0]);
  if (k > 2) fuzz_compaction(db, piece[2], len[2], k > 3 ? piece[3] : "", len[3]);
  if (k > 4) { /* rebuild options: errors, never a crash */
    char *out = NULL;
    size_t n = 0;
    ctxdb_rebuild(db, piece[4], len[4], &out, &n);
    fuzz_drop(&out);
  }
  fuzz_check_and_reset(data, size);
  return 0;
}
