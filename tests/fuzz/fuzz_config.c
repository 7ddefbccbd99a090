/* libFuzzer target for ctxdb_open's config JSON: the input is the config
 * a second handle on the template database is opened with. Whatever the
 * bytes: no crash, no sanitizer report; a config accepted gives a handle
 * that verifies and, unless read-only, takes an append, after which the
 * database still verifies and replays into the same projections. */
#include "fuzz_harness.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ctxdb_db *db = fuzz_open_with((const char *)data, size);
  if (!db) return 0;
  fuzz_verify(db);
  char *out = NULL;
  size_t n = 0;
  const char *e = kFuzzTemplateEvents[0];
  int rc = ctxdb_append(db, "s", 1, e, strlen(e), &out, &n);
  fuzz_drop(&out);
  if (rc != CTXDB_OK && rc != CTXDB_READONLY) fuzz_die("append", db);
  /* checked through this handle: its token counter counted the append */
  fuzz_check(db, data, size);
  if (ctxdb_close(db) != CTXDB_OK) fuzz_die("close", NULL);
  fuzz_reset();
  return 0;
}
