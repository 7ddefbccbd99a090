/* libFuzzer target for the C ABI: the input is split into a few strings
 * that are fed, as they are, to the entry points that take host input.
 * Whatever the bytes, no call may crash, leak or trip a sanitizer, and the
 * database must still verify. Build: cmake -DCTXDB_FUZZ=ON with clang. */
#include <ctxdb/ctxdb.h>

#include <stdint.h>
#include <stdio.h>
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
  out = NULL;
  /* The streaming put: the piece in two halves gives the same id; meta
   * as the writer's meta, and an aborted writer stores nothing. */
  ctxdb_artifact_writer *w = NULL;
  if (ctxdb_artifact_writer_open(db, NULL, 0, &w) != CTXDB_OK ||
      ctxdb_artifact_writer_write(w, p, n / 2) != CTXDB_OK ||
      ctxdb_artifact_writer_write(w, p + n / 2, n - n / 2) != CTXDB_OK ||
      ctxdb_artifact_writer_commit(w, &out, &out_len) != CTXDB_OK || !strstr(out, art))
    abort();
  ctxdb_artifact_writer_free(w);
  drop(out);
  out = NULL;
  w = NULL;
  if (ctxdb_artifact_writer_open(db, meta, meta_len, &w) == CTXDB_OK) {
    ctxdb_artifact_writer_write(w, meta, meta_len);
    ctxdb_artifact_writer_free(w);
  }
}

/* ---- the context compiler ---- */

/* A host token counter: one token per 3 bytes, failing on a 0x01 byte or
 * always (user_data non-NULL). */
static int fuzz_count(void *user_data, const char *text, size_t len, int64_t *out_tokens) {
  if (user_data || memchr(text, 1, len)) return 99; /* not a status code: CTXDB_INTERNAL */
  *out_tokens = (int64_t)(len / 3);
  return 0;
}

/* The piece as a JSON string's contents (escaped; its bytes may still be
 * invalid UTF-8, which the engine must refuse cleanly). */
static size_t fuzz_quote(char *dst, const char *p, size_t n) {
  size_t k = 0;
  for (size_t i = 0; i < n && i < 512; ++i) {
    unsigned char c = (unsigned char)p[i];
    if (c == '"' || c == '\\') {
      dst[k++] = '\\';
      dst[k++] = (char)c;
    } else if (c < 0x20) {
      static const char hex[] = "0123456789abcdef";
      memcpy(dst + k, "\\u00", 4);
      dst[k + 4] = hex[c >> 4];
      dst[k + 5] = hex[c & 15];
      k += 6;
    } else {
      dst[k++] = (char)c;
    }
  }
  return k;
}

/* Random compile requests (the piece as a whole request, and as the
 * request text and instruction of a well-formed one whose budget and
 * format come from its first bytes) and conversions (the piece as a
 * bundle; a compiled bundle to every format, which must succeed). */
static void fuzz_compile(ctxdb_db *db, const char *p, size_t n, const char *other,
                         size_t other_len) {
  static const char *formats[] = {"canonical",
                                  "openai.chat",
                                  "openai.responses",
                                  "anthropic.messages",
                                  "gemini.generate_content",
                                  "ai.sdk"};
  enum { kFormats = sizeof formats / sizeof formats[0] };
  char *out = NULL, *again = NULL, *conv = NULL;
  size_t out_len = 0, again_len = 0, conv_len = 0;
  ctxdb_compile(db, p, n, &out, &out_len);
  drop(out);
  out = NULL;
  for (int f = 0; f < kFormats; ++f) {
    ctxdb_bundle_convert(db, p, n, formats[f], strlen(formats[f]), &out, &out_len);
    drop(out);
    out = NULL;
  }
  ctxdb_bundle_convert(db, "{}", 2, p, n, &out, &out_len);
  drop(out);
  out = NULL;

  char text[3200], req[7000];
  size_t t = fuzz_quote(text, p, n);
  text[t] = '\0';
  unsigned budget = n > 0 ? (unsigned char)p[0] * 8u + 1u : 100u;
  const char *format = formats[n > 1 ? (unsigned char)p[1] % kFormats : 0];
  snprintf(req, sizeof req,
           "{\"session_id\":\"s\",\"max_tokens\":%u,\"request\":\"%s\",\"instructions\":"
           "[{\"kind\":\"system\",\"text\":\"%s\"}],\"policy\":{\"redact\":[{\"name\":\"r\","
           "\"pattern\":\"[0-9]+\"}],\"prune\":{\"keep_recent_turns\":%u}},\"format\":\"%s\"}",
           budget, text, text, n > 2 ? (unsigned char)p[2] % 4 : 2u, format);
  if (ctxdb_compile(db, req, strlen(req), &out, &out_len) == CTXDB_OK) {
    /* The same inputs give byte-identical output. */
    if (ctxdb_compile(db, req, strlen(req), &again, &again_len) != CTXDB_OK ||
        again_len != out_len || memcmp(out, again, out_len) != 0)
      abort();
    if (strcmp(format, "canonical") == 0)
      for (int f = 0; f < kFormats; ++f) {
        if (ctxdb_bundle_convert(db, out, out_len, formats[f], strlen(formats[f]), &conv,
                                 &conv_len) != CTXDB_OK)
          abort();
        drop(conv);
        conv = NULL;
      }
  }
  drop(out);
  drop(again);
  out = NULL;

  /* Host counters: one that always fails (an append that counts must fail
   * and write nothing, so the rebuild check below still holds), then one
   * that fails on some inputs, for a compile (which recounts every row). */
  static int fail_always;
  if (ctxdb_token_counter_set(db, "fuzz-fail", 9, fuzz_count, &fail_always) != CTXDB_OK) abort();
  ctxdb_append(db, "s", 1, other, other_len, &out, &out_len);
  drop(out);
  out = NULL;
  if (ctxdb_token_counter_set(db, "fuzz-v1", 7, fuzz_count, NULL) != CTXDB_OK) abort();
  ctxdb_compile(db, req, strlen(req), &out, &out_len);
  drop(out);
  out = NULL;
  if (ctxdb_token_counter_set(db, NULL, 0, NULL, NULL) != CTXDB_OK) abort();
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
    case 3: {
      /* The piece as an export, then as the rest of an artifact record
       * (what the import takes for one), then an export with artifacts. */
      static const char rec[] = "{\"ctxdb_record\":";
      char *line = (char *)malloc(sizeof rec + len[i]);
      ctxdb_iter *it = NULL;
      ctxdb_import(db, piece[i], len[i], &out, &n);
      drop(out);
      out = NULL;
      memcpy(line, rec, sizeof rec - 1);
      memcpy(line + sizeof rec - 1, piece[i], len[i]);
      ctxdb_import(db, line, sizeof rec - 1 + len[i], &out, &n);
      free(line);
      if (ctxdb_export(db, NULL, 0, &it) == CTXDB_OK) {
        const char *row;
        size_t row_len;
        while (ctxdb_iter_next(it, &row, &row_len) == CTXDB_ROW) {
        }
      }
      ctxdb_iter_free(it);
      break;
    }
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
  if (k > 1) fuzz_compile(db, piece[1], len[1], piece[0], len[0]);
  /* A provider's response: the first piece read as each format, complete
   * and as a stream; the second as the options. */
  {
    static const char *const kRecord[] = {
        "{\"format\":\"openai.chat\"}",
        "{\"format\":\"openai.chat\",\"stream\":true}",
        "{\"format\":\"openai.responses\",\"stream\":true}",
        "{\"format\":\"anthropic.messages\"}",
        "{\"format\":\"anthropic.messages\",\"stream\":true}",
        "{\"format\":\"gemini.generate_content\"}",
        "{\"format\":\"gemini.generate_content\",\"stream\":true}"};
    for (size_t f = 0; f < sizeof kRecord / sizeof kRecord[0]; ++f) {
      ctxdb_response_record(db, "s", 1, kRecord[f], strlen(kRecord[f]), piece[0], len[0], &out, &n);
      drop(out);
      out = NULL;
    }
    if (k > 1) {
      ctxdb_response_record(db, "s", 1, piece[1], len[1], piece[0], len[0], &out, &n);
      drop(out);
      out = NULL;
    }
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
