/* libFuzzer target for the NDJSON import (ctxdb_import of ctxdb's own
 * export stream: events, artifact rows and their chunks). Whatever the
 * bytes: no crash, no sanitizer report, and the database still verifies;
 * and when the import is accepted, the database's whole export imports
 * again into it as nothing new (every event skipped as already there). */
#include "fuzz_harness.h"

/* The export of every session, as one NDJSON text (malloc'd). */
static char *fuzz_export(ctxdb_db *db, size_t *len) {
  ctxdb_iter *it = NULL;
  if (ctxdb_export(db, NULL, 0, &it) != CTXDB_OK) fuzz_die("export", db);
  size_t cap = 4096;
  char *text = malloc(cap);
  const char *row = NULL;
  size_t row_len = 0;
  int rc;
  *len = 0;
  while ((rc = ctxdb_iter_next(it, &row, &row_len)) == CTXDB_ROW) {
    while (*len + row_len + 1 > cap) text = realloc(text, cap *= 2);
    memcpy(text + *len, row, row_len);
    *len += row_len;
    text[(*len)++] = '\n';
  }
  if (rc != CTXDB_DONE) fuzz_die("export row", db);
  ctxdb_iter_free(it);
  return text;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ctxdb_db *db = fuzz_open();
  char *out = NULL;
  size_t n = 0;
  if (ctxdb_import(db, (const char *)data, size, &out, &n) == CTXDB_OK) {
    fuzz_drop(&out);
    size_t len = 0;
    char *all = fuzz_export(db, &len);
    if (ctxdb_import(db, all, len, &out, &n) != CTXDB_OK || !strstr(out, "\"imported\":0")) {
      fprintf(stderr, "re-import of the export: %s\n", out ? out : ctxdb_errmsg(db));
      abort();
    }
    free(all);
  }
  fuzz_drop(&out);
  fuzz_check_and_reset(data, size);
  return 0;
}
