/* libFuzzer target for the provider response readers (ctxdb_response_record):
 * with a 0xFF byte, the bytes before it are the record options and those
 * after it the response; without one, the input is the response, recorded
 * under each format, complete and as a stream. Whatever the bytes: no
 * crash, no sanitizer report; a response recorded once records again as
 * the same stored event; the database still verifies. */
#include "fuzz_harness.h"

static void fuzz_record(ctxdb_db *db, const char *options, size_t options_len, const char *response,
                        size_t response_len) {
  char *out = NULL, *again = NULL;
  size_t n = 0, again_len = 0;
  if (ctxdb_response_record(db, "s", 1, options, options_len, response, response_len, &out, &n) ==
          CTXDB_OK &&
      (ctxdb_response_record(db, "s", 1, options, options_len, response, response_len, &again,
                             &again_len) != CTXDB_OK ||
       again_len != n || memcmp(again, out, n) != 0)) {
    fprintf(stderr, "recorded: %s\nagain: %s\n", out, again ? again : ctxdb_errmsg(db));
    abort();
  }
  fuzz_drop(&out);
  fuzz_drop(&again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const char *const kOptions[] = {
      "{\"format\":\"openai.chat\"}",
      "{\"format\":\"openai.chat\",\"stream\":true}",
      "{\"format\":\"openai.responses\"}",
      "{\"format\":\"openai.responses\",\"stream\":true}",
      "{\"format\":\"anthropic.messages\"}",
      "{\"format\":\"anthropic.messages\",\"stream\":true}",
      "{\"format\":\"gemini.generate_content\"}",
      "{\"format\":\"gemini.generate_content\",\"stream\":true}"};
  const char *piece[2] = {0};
  size_t len[2] = {0};
  size_t k = fuzz_split(data, size, piece, len, 2);
  ctxdb_db *db = fuzz_open();
  if (k == 2) {
    fuzz_record(db, piece[0], len[0], piece[1], len[1]);
  } else {
    for (size_t f = 0; f < sizeof kOptions / sizeof kOptions[0]; ++f)
      fuzz_record(db, kOptions[f], strlen(kOptions[f]), piece[0], len[0]);
  }
  fuzz_check_and_reset(data, size);
  return 0;
}
