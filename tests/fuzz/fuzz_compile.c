/* libFuzzer target for the context compiler's inputs: the first piece as
 * a whole compile request, as a bundle to convert to every format, and as
 * the text of a well-formed request; the second as an event appended under
 * a failing token counter. Whatever the bytes: no crash, no sanitizer
 * report, a successful compile is deterministic, a compiled bundle
 * converts to every format, and the database still verifies. */
#include "fuzz_harness.h"

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
  fuzz_drop(&out);
  for (int f = 0; f < kFormats; ++f) {
    ctxdb_bundle_convert(db, p, n, formats[f], strlen(formats[f]), &out, &out_len);
    fuzz_drop(&out);
  }
  ctxdb_bundle_convert(db, "{}", 2, p, n, &out, &out_len);
  fuzz_drop(&out);

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
        fuzz_drop(&conv);
      }
  }
  fuzz_drop(&out);
  fuzz_drop(&again);

  /* Host counters: one that always fails (an append that counts must fail
   * and write nothing, so the rebuild check below still holds), then one
   * that fails on some inputs, for a compile (which recounts every row). */
  static int fail_always;
  if (ctxdb_token_counter_set(db, "fuzz-fail", 9, fuzz_count, &fail_always) != CTXDB_OK) abort();
  ctxdb_append(db, "s", 1, other, other_len, &out, &out_len);
  fuzz_drop(&out);
  if (ctxdb_token_counter_set(db, "fuzz-v1", 7, fuzz_count, NULL) != CTXDB_OK) abort();
  ctxdb_compile(db, req, strlen(req), &out, &out_len);
  fuzz_drop(&out);
  if (ctxdb_token_counter_set(db, NULL, 0, NULL, NULL) != CTXDB_OK) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *piece[2] = {0};
  size_t len[2] = {0};
  size_t k = fuzz_split(data, size, piece, len, 2);
  ctxdb_db *db = fuzz_open();
  fuzz_compile(db, piece[0], len[0], k > 1 ? piece[1] : "", len[1]);
  fuzz_check_and_reset(data, size);
  return 0;
}
